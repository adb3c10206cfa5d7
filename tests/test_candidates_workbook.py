"""The Candidates sheet recalculated in LibreOffice and Gnumeric: its formulas give capplan's
replicas, nodes and costs, and editing a price re-ranks (the three-candidate plan of
test_candidates.py: the h200 offer at $39.99/h instead of $50 takes rank 1)."""

from __future__ import annotations

import io

import pytest
import recalc
import yaml
from openpyxl import load_workbook
from test_candidates import three
from test_demand import STEPS

from capplan.build import compile_plan

SHEET = "Candidates"


def _columns(ws) -> dict[str, int]:
    return {str(c.value): c.column for c in ws[5] if c.value is not None}


def _rows(ws) -> dict[str, int]:
    return {ws.cell(r, 1).value: r for r in range(6, ws.max_row + 1) if ws.cell(r, 1).value}


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    from capplan.cli import main

    folder = tmp_path_factory.mktemp("candidates-workbook")
    (folder / "plans").mkdir()
    (folder / "plans" / "three.yaml").write_text(yaml.safe_dump(three(), sort_keys=False))
    import os
    here = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["build"]) == 0
    finally:
        os.chdir(here)
    built = folder / "out" / "three.xlsx"
    wb = load_workbook(built)
    ws = wb[SHEET]
    row = _rows(ws)["h200-sxm-141gb TP1"]
    ws.cell(row, _columns(ws)["Price a node (USD/h)"]).value = 39.99
    edited = folder / "edited.xlsx"
    wb.save(edited)
    return folder, built, edited


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_the_sheet_recalculates_and_a_price_edit_re_ranks(books, engine):
    folder, built, edited = books
    out = engine.recalc([built, edited], folder / engine.name)
    ws = recalc.values(out[built])[SHEET]
    cols, rows = _columns(ws), _rows(ws)
    assert not recalc.error_cells(recalc.values(out[built]))
    expected = {"h100-sxm5-80gb TP2": (1, 2, 58_560), "h200-sxm-141gb TP1": (2, 2, 73_200),
                "h100-sxm5-80gb TP1": (3, 3, 87_840)}
    for label, (rank, nodes, monthly) in expected.items():
        assert ws.cell(rows[label], cols["Rank"]).value == rank
        assert ws.cell(rows[label], cols["Nodes"]).value == nodes
        assert ws.cell(rows[label], cols["Monthly cost (USD)"]).value == pytest.approx(monthly)
    assert ws["B3"].value == "h100-sxm5-80gb TP2 on p5"
    ws = recalc.values(out[edited])[SHEET]
    assert ws.cell(rows["h200-sxm-141gb TP1"], cols["Rank"]).value == 1
    assert ws.cell(rows["h100-sxm5-80gb TP2"], cols["Rank"]).value == 2
    assert ws.cell(rows["h200-sxm-141gb TP1"], cols["Monthly cost (USD)"]).value == pytest.approx(2 * 39.99 * 732)
    assert ws["B3"].value == "h200-sxm-141gb TP1 on p5e"


def _summary_says(wb) -> list[str]:
    """The Summary's lines that recommend or pick (column A)."""
    ws = wb["Summary"]
    return [str(ws.cell(r, 1).value) for r in range(1, ws.max_row + 1)
            if str(ws.cell(r, 1).value).startswith(("Recommended:", "Cheapest that holds:", "Verdict:"))]


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_the_summary_recommends_the_candidate_ranked_first_and_follows_an_edit(books, engine):
    """The record recommends the candidate ranked first; so does the Summary's first block, read live
    from the Candidates sheet's ranks (the edited price re-ranks both). The plan's own deployment
    rows below it are 'the cheapest that holds', not a second recommendation."""
    folder, built, edited = books
    out = engine.recalc([built, edited], folder / f"summary-{engine.name}")
    for path, winner, cost in ((built, "h100-sxm5-80gb TP2 on p5", 58_560), (edited, "h200-sxm-141gb TP1 on p5e",
                                                                          2 * 39.99 * 732)):
        wb = recalc.values(out[path])
        said = _summary_says(wb)
        assert said[0] == f"Recommended: {winner}"
        assert not any(s.startswith("Recommended:") for s in said[1:])
        row = next(r for r in range(1, 60) if wb["Summary"].cell(r, 1).value == said[0])
        assert wb["Summary"].cell(row, 4).value == pytest.approx(cost)


def test_with_candidates_and_a_traffic_profile_the_candidates_make_the_one_recommendation(tmp_path):
    """The record answers with the candidates when a plan has both: the Summary opens with them,
    and the strategies through the profile below list their rows without a pick of their own
    (#41: one budget per Summary, no second 'Cheapest that holds')."""
    data = three()
    data["inputs"].pop("peak_to_average_ratio", None)
    data["traffic"] = {"profile": list(STEPS), "source": "hand-worked"}
    path = tmp_path / "both.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    wb = load_workbook(io.BytesIO(compile_plan(path).files["both.xlsx"]), data_only=True)   # the cached values
    said = _summary_says(wb)
    assert said[0] == "Recommended: h100-sxm5-80gb TP2 on p5"
    assert said == ["Recommended: h100-sxm5-80gb TP2 on p5"]
    assert "Strategy" in [wb["Summary"].cell(r, 1).value for r in range(1, wb["Summary"].max_row + 1)]


def test_the_candidates_sheets_stored_numbers_keep_15_significant_digits():
    """A pooled row's cost per 1M tokens is capplan's float, whose last bit numpy 1.24 and 2.x round
    differently (11.88606136768248 against 11.886061367682483): stored at 15 significant digits, the
    file is the same bytes under every library version the project allows (.ci/run checks them)."""
    from conftest import ROOT

    path = ROOT / "plans" / "llama3.3-70b-chat-disaggregated.yaml"
    book = load_workbook(io.BytesIO(compile_plan(path).files[f"{path.stem}.xlsx"]))
    stored = [c.value for row in book["Candidates"].iter_rows() for c in row
              if isinstance(c.value, float) and c.data_type == "n"]
    assert stored and all(v == float(f"{v:.15g}") for v in stored)
    assert 11.8860613676825 in stored                      # the TP2 pools' $ per 1M output tokens
