"""What keeps a workbook of many scenarios fast, checked by counts of work (never by
the clock): the cycle collector paused while it is made, and each repeated cell
spelled once for all the sheets that hold it."""

from __future__ import annotations

import gc

import pytest
from conftest import MAIN_PLAN

import capplan
from capplan.language.model import standard_model
from capplan.rendering.workbook import render_workbook, to_bytes
from capplan.xlsx import sheetxml
from plan_edits import full_view, workbook_of


@pytest.fixture(scope="module")
def main_plan():
    model = standard_model()
    plan = capplan.load(MAIN_PLAN)
    return plan, capplan.evaluate(plan), model


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_is_paused_while_the_workbook_is_made_and_left_as_it_was(main_plan, monkeypatch,
                                                                                    enabled):
    plan, evs, model = main_plan
    seen = []
    monkeypatch.setattr(sheetxml, "sheet_xml", _spy(sheetxml.sheet_xml, lambda: seen.append(gc.isenabled())))
    monkeypatch.setattr("capplan.xlsx.packaging.sheet_xml", sheetxml.sheet_xml)
    (gc.enable if enabled else gc.disable)()
    try:
        render_workbook(plan, evs, model, full_view(plan, evs))
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert seen and not any(seen)


def test_a_cell_repeated_on_every_sheet_is_spelled_once(main_plan, monkeypatch):
    """Text cells (names, units, tags, descriptions) stand at the same place on every
    scenario sheet: their XML is made for the first sheet and looked up for the others."""
    plan, evs, model = main_plan
    built = workbook_of(plan, evs, model)
    spelled = []
    monkeypatch.setattr(sheetxml, "_text_cell", _spy(sheetxml._text_cell, lambda: spelled.append(1)))
    data = to_bytes(built)
    scenario_sheets = [ws for ws in built.worksheets if ws.title in built.sheets.values()]
    text_cells = sum(1 for ws in scenario_sheets for c in ws.cells.values() if c.kind == "s" and c.value)
    per_sheet = text_cells / len(scenario_sheets)
    assert len(scenario_sheets) >= 3
    assert len(spelled) < text_cells - per_sheet          # most sheets' text cells were looked up
    assert data == render_workbook(plan, evs, model, full_view(plan, evs))


def _spy(fn, note):
    def spied(*args, **kwargs):
        note()
        return fn(*args, **kwargs)
    return spied


def test_a_formula_cells_cached_value_is_spelled_once_for_every_cell_that_repeats_it(main_plan, monkeypatch):
    plan, evs, model = main_plan
    built = workbook_of(plan, evs, model)
    spelled = []
    monkeypatch.setattr(sheetxml, "_cached", _spy(sheetxml._cached, lambda: spelled.append(1)))
    data = to_bytes(built)
    formulas = sum(1 for ws in built.worksheets for c in ws.all_cells().values() if c.kind == "f")
    assert formulas > 1000
    assert len(spelled) < formulas / 2                     # scenarios repeat most values
    assert data == render_workbook(plan, evs, model, full_view(plan, evs))


def test_the_workbooks_last_writing_drops_its_cells_as_each_sheet_is_spelled(main_plan):
    """render_workbook writes a workbook once: each sheet's cells go once its XML is made,
    so a workbook of many sheets is not held twice (cells and XML); the bytes are the same."""
    plan, evs, model = main_plan
    kept, released = workbook_of(plan, evs, model), workbook_of(plan, evs, model)
    assert to_bytes(released, release=True) == to_bytes(kept)
    assert all(ws.cells for ws in kept.worksheets) and kept.cells
    assert not any(ws.cells for ws in released.worksheets) and not released.cells
