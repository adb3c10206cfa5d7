"""The xlsx writer on its own (:mod:`capplan.xlsx`): a small two-sheet workbook, no plan.

A formula across sheets, a style, a comment, a validation, a defined name, a
chart and a page setup, read back by openpyxl and, where LibreOffice is
installed, recalculated; the same sheets give the same bytes.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime

import openpyxl
import pytest
import recalc

from capplan.xlsx import Chart, Comment, Fill, Font, Properties, Rule, Sheet, Style, Validation, print_setup, \
    quote_sheet, to_bytes
from capplan.xlsx import chartxml

MONEY = '"$"#,##0.00'
BOLD_MONEY = Style(font=Font(bold=True, color="1F4E79"), fill=Fill("FFF2CC"), number_format=MONEY)


def _sheets() -> list[Sheet]:
    """Prices (inputs, a named cell, a comment, a validation) and Cost (formulas over Prices, a chart)."""
    prices = Sheet("Price's inputs")          # a quote in the title: every reference must quote it
    for row, (label, hourly) in enumerate((("small", 2.5), ("large", 9.0)), start=1):
        prices.cell(row, 1).text(label)
        prices.cell(row, 2).number(hourly)
    prices.cell(3, 1).text("hours a month")
    prices.cell(3, 2).number(730)
    prices.names["hours"] = f"{quote_sheet(prices.title)}!$B$3"
    prices.cell(1, 2).comment = Comment("what a node costs an hour, list price", 200, 60)
    prices.validations["a price is positive"] = Validation(
        {"type": "decimal", "operator": "greaterThan", "formula1": "0", "showErrorMessage": 1,
         "error": "a price is positive"}, ["B1", "B2"])
    prices.widths[1] = 18
    prices.freeze = "A2"

    cost = Sheet("Cost")
    qs = quote_sheet(prices.title)
    for row in (1, 2):
        cost.cell(row, 1).formula(f"={qs}!A{row}", "small" if row == 1 else "large")
        monthly = cost.cell(row, 2)
        monthly.formula(f"={qs}!B{row}*{qs}!$B$3", (2.5, 9.0)[row - 1] * 730)
        monthly.style = BOLD_MONEY
    cost.conditional_format("B1:B2", Rule("cellIs", "5000", Style(fill=Fill("F4CCCC")), "greaterThan"))
    line = chartxml.Line("monthly", "Cost!$A$1:$A$2", "Cost!$B$1:$B$2", "1F77B4", 19050)
    cost.charts.append(Chart(chartxml.scatter("Monthly cost", "size", ("$", [line]), None, None, 2), 3, 0, 12, 6))
    print_setup(cost, paper=9, orientation="landscape", margins={"left": 0.5, "right": 0.5, "top": 0.75,
                "bottom": 0.75, "header": 0.3, "footer": 0.3}, title_rows=(1, 1))
    return [prices, cost]


def _open(data: bytes, **kw) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(data), **kw)


def test_a_two_sheet_workbook_reads_back_in_openpyxl():
    data = to_bytes(_sheets())
    book = _open(data)
    assert book.sheetnames == ["Price's inputs", "Cost"]
    prices, cost = book["Price's inputs"], book["Cost"]
    assert (prices["A1"].value, prices["B1"].value, prices["B3"].value) == ("small", 2.5, 730)
    assert cost["B2"].value == "='Price''s inputs'!B2*'Price''s inputs'!$B$3"
    assert (cost["B2"].font.b, cost["B2"].fill.fgColor.rgb, cost["B2"].number_format) == (True, "00FFF2CC", MONEY)
    assert prices["B1"].comment.text == "what a node costs an hour, list price"
    assert [(v.type, str(v.sqref)) for v in prices.data_validations.dataValidation] == [("decimal", "B1 B2")]
    assert prices.freeze_panes == "A2"
    assert prices.defined_names["hours"].attr_text == "'Price''s inputs'!$B$3"
    assert len(cost._charts) == 1
    assert (cost.page_setup.orientation, cost.page_setup.paperSize, cost.print_title_rows) == ("landscape", 9, "$1:$1")
    cached = _open(data, data_only=True)["Cost"]
    assert (cached["A1"].value, cached["B1"].value, cached["B2"].value) == ("small", 1825, 6570)


def test_the_same_sheets_give_the_same_bytes_and_no_clock_leaks_in():
    first, second = to_bytes(_sheets()), to_bytes(_sheets())
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
        assert z.namelist()[0] == "[Content_Types].xml"
        assert "2000-01-01T00:00:00Z" in z.read("docProps/core.xml").decode()


def test_the_callers_properties_and_compression_are_what_the_file_says():
    dated = Properties("planner", "Someone's tool", datetime(2024, 5, 6, 7, 8, 9))
    data = to_bytes(_sheets(), dated, deflate=True)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}
        core, app = z.read("docProps/core.xml").decode(), z.read("docProps/app.xml").decode()
        assert "<dc:creator>planner</dc:creator>" in core and "2024-05-06T07:08:09Z" in core
        assert "<Application>Someone's tool</Application>" in app
        assert "<author>planner</author>" in z.read("xl/comments/comment1.xml").decode()


def test_text_longer_than_a_cell_holds_is_refused():
    sheet = Sheet("Long")
    sheet.cell(1, 1).text("x" * 32_768)
    with pytest.raises(ValueError, match="32,767"):
        to_bytes([sheet])


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_libreoffice_recalculates_the_formulas_to_their_cached_values(tmp_path):
    source = tmp_path / "src" / "two.xlsx"
    source.parent.mkdir()
    sheets = _sheets()
    sheets[0].cell(2, 2).number(10.0)         # the cached value says 6570; a recalculation says 7300
    source.write_bytes(to_bytes(sheets))
    done = _open(recalc.recalc([source], tmp_path)[source].read_bytes(), data_only=True)["Cost"]
    assert (done["A2"].value, done["B1"].value, done["B2"].value) == ("large", 1825, 7300)
