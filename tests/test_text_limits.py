"""A plan's text fields have stated lengths, so every workbook text cell stays within Excel's
32,767 characters (a 1 MiB ``title:`` used to build a cell of 1,048,576).

Loading refuses a longer text by key and limit (the record and the JSON carry the text too, so
cutting it in the workbook alone would not do); the workbook writer refuses, as a bug, a text cell
that would still be longer.
"""

from __future__ import annotations

import openpyxl
import pytest

from capplan.loading.plan.context import TEXT_LIMIT, TEXT_LIMITS
from capplan.xlsx import sheetxml

EXCEL_CELL = 32_767


def _text(n: int, seed: str = "a") -> str:
    """``n`` characters of words (a title of one 1,000-letter word is not what a plan holds)."""
    return ((seed + "bcde fghij ") * (n // 11 + 1))[:n].strip().ljust(n, "x")


def _at_limits(plan: dict) -> dict:
    """Every text field a plan has, at its limit."""
    name, short = TEXT_LIMITS["name"], TEXT_LIMIT
    plan["title"] = _text(TEXT_LIMITS["title"], "t")
    plan["owner"] = _text(TEXT_LIMITS["owner"], "o")
    plan["description"] = _text(TEXT_LIMITS["description"], "d")
    plan["notes"] = _text(TEXT_LIMITS["notes"], "n")
    del plan["inputs"]["peak_to_average_ratio"]                   # the profile gives it
    plan["inputs"]["ttft_p95_slo"] = {"value": "1 s", "source": _text(short, "s"), "note": _text(short, "n"),
                                      "date": "2026-01-05"}
    tables = plan["tables"]
    for key, table in tables.items():
        table.update(source=_text(short, "s"), note=_text(short, "n"))
        for i, row in enumerate(table["rows"]):
            row.update(source=_text(short, "s"), note=_text(short, "n"))
            if "name" in row:
                row["name"] = _text(name - 1, key[0]) + str(i)
    tables["deployments"]["as_of"] = "2026-01-05"
    plan["scenarios"] = {_text(name, "z"): {"title": _text(TEXT_LIMITS["title"], "t"),
                                            "description": _text(TEXT_LIMITS["description"], "d"),
                                            "set": {"peak_arrival_rate": "90 req/s"}}}
    plan["traffic"] = {"profile": [0.4 + 0.6 * (h in range(9, 18)) for h in range(24)], "source": _text(short, "s")}
    plan["gpu"] = "h100"
    plan["candidates"] = {
        "gpus": ["h100"], "tp": [1, 2],
        "offers": [{"name": _text(name, "p"), "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h",
                    "as_of": "2026-01-05", "source": _text(short, "s"), "note": _text(short, "n")}],
        "overrides": [{"match": {"gpu": "h100"}, "set": {"instance_max_rate": "9 req/s"}}]}
    return plan


def test_every_text_at_its_limit_keeps_each_workbook_cell_within_excel(base_plan, write_plan, run_main, tmp_path):
    code, _, err = run_main("build", write_plan(_at_limits(base_plan)))
    assert code == 0, err
    book = openpyxl.load_workbook(tmp_path / "out" / "test-plan.xlsx")
    longest = max((len(c.value), ws.title, c.coordinate) for ws in book.worksheets for row in ws.iter_rows()
                  for c in row if isinstance(c.value, str))
    assert longest[0] <= EXCEL_CELL, longest
    assert longest[0] > TEXT_LIMITS["title"]           # a title, whole, in a longer cell ('Scenario: …')


@pytest.mark.parametrize("where", ["title", "owner", "description", "deployment name", "scenario name",
                                   "scenario title", "input source", "table note", "offer name"])
def test_a_text_over_its_limit_is_refused_by_key_and_limit(where, base_plan, write_plan, run_main):
    long = _text(2 ** 20)
    deployments = base_plan["tables"]["deployments"]
    edit, key, limit = {
        "title": (lambda: base_plan.update(title=long), "title", "1,000"),
        "owner": (lambda: base_plan.update(owner=long), "owner", "200"),
        "description": (lambda: base_plan.update(description=long), "description", "20,000"),
        "deployment name": (lambda: deployments["rows"][0].update(name=long),
                            "tables.deployments.rows[0].name", "200"),
        "scenario name": (lambda: base_plan.update(scenarios={long: {"set": {"peak_arrival_rate": "9 req/s"}}}),
                          "scenarios: a scenario name", "200"),
        "scenario title": (lambda: base_plan.update(scenarios={"s": {"title": long, "set": {
                           "peak_arrival_rate": "9 req/s"}}}), "scenarios.s.title", "1,000"),
        "input source": (lambda: base_plan["inputs"].update(peak_to_average_ratio={"value": 3, "source": long}),
                         "inputs.peak_to_average_ratio.source", "2,000"),
        "table note": (lambda: deployments.update(note=long), "tables.deployments.note", "2,000"),
        "offer name": (lambda: base_plan.update(candidates={"gpus": ["a100-sxm4-80gb"], "offers": [
                       {"name": long, "gpu": "a100-sxm4-80gb", "gpus_per_node": 8, "node_hourly_cost": "9 USD/h"}]}),
                       "candidates.offers[0].name", "200"),
    }[where]
    edit()
    code, out, err = run_main("eval", write_plan(base_plan))
    assert code == 1, err
    assert f"{key}" in err and f"at most {limit} characters" in err and "1,048,576" in err, err
    assert len(err) < 2_000                          # the message quotes none of the text


def test_the_workbook_writer_refuses_a_cell_over_excels_limit():
    assert sheetxml.constant_tail("s", "x" * EXCEL_CELL).count("x") == EXCEL_CELL
    with pytest.raises(ValueError, match="32,767"):
        sheetxml.constant_tail("s", "x" * (EXCEL_CELL + 1))
    with pytest.raises(ValueError, match="32,767"):
        sheetxml.CellXml(None).cached("x" * (EXCEL_CELL + 1))
