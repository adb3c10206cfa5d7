"""A far tail probability (a burst of 3e-250) never shows as 0: below ``formatting.TINY`` a
non-zero number shows as a power of ten in the record, the charts, the terminal and the
workbook's cells; JSON keeps the number itself."""

from __future__ import annotations

from conftest import MAIN_PLAN

from capplan import formatting
from capplan.analysis.pipeline import run
from capplan.rendering import jsonout, record, view
from capplan.rendering.workbook.cellstyles import number_format


def test_a_tiny_number_shows_as_a_power_of_ten_whatever_the_digits():
    assert formatting.number(3e-250) == "3e-250"
    assert formatting.number(3.3174e-250) == "3.317e-250"
    assert formatting.quantity(3e-250, "ms/request") == "3e-250 ms/request"
    assert formatting.number(5e-7, 8) == "5e-7"                 # 8 digits once wrote 0.0000005
    assert formatting.number(-4.25e-9, 8) == "-4.25e-9"
    assert formatting.number(2e-6, 8) == "0.000002"             # at or above TINY: decimals as before
    assert formatting.number(0.0005347) == "0.0005347" and formatting.number(0.0) == "0"


def test_json_keeps_the_number():
    assert formatting.plain(3.31741234567891e-250) == 3.31741234568e-250


def test_a_workbook_column_with_a_tiny_value_shows_it_as_a_power_of_ten():
    # The fleet burst probabilities of the main plan's deployments: once "0.000000" for both.
    assert number_format("", "number", [3.317e-250, 1.391e-50]) == "[=0]#,##0;[<0.000001]0.00E+00;#,##0"
    # A tiny value beside ordinary ones: they keep their decimals (the tiny one no longer asks for 6).
    assert number_format("ms", "number", [0.5347, 3e-250, 0, None]) == \
        '[=0]#,##0.0000" ms";[<0.000001]0.00E+00" ms";#,##0.0000" ms"'
    # With negative values a condition cannot tell them from tiny ones: the whole column in powers of ten.
    assert number_format("", "number", [-2.5, 3e-250]) == "0.00E+00"
    assert number_format("ms", "number", [0.0005347, 0.1013]) == '#,##0.000000" ms"'    # nothing tiny: as before


def test_the_main_plans_burst_probability_in_the_record_and_json():
    analysed = run(MAIN_PLAN)
    shown = view.build(analysed.plan, analysed.evaluations, analysed.artifacts)
    assert "| 45.71 | 3.317e-250 |" in record.render(shown)
    assert '"fleet_burst_probability": 3.31738201242e-250,' in jsonout.dumps(jsonout.document(shown))   # data: the number
