"""What the workbook makes once and reuses reads, byte for byte, as if made each time: a
table's formula column written as one run (a cell written inside a run is refused), and
the rows and table frames stamped on every scenario sheet that shows them alike."""

from __future__ import annotations

import pytest
from conftest import MAIN_PLAN

import capplan
from capplan.language.model import standard_model
from capplan.rendering.workbook.builder import Builder
from capplan.rendering.workbook.manifest import RunInfo, to_bytes
from capplan.xlsx.sheetmodel import Font, Run, Sheet, Style
from capplan.xlsx.sheetxml import CellXml
from capplan.xlsx.stylesxml import StyleSheet
from plan_edits import full_view

BOLD = Style(font=Font(bold=True))
DERIVED = Style(font=Font(color="1F4E79"), number_format="0.00")
LABEL = Style(font=Font(italic=True))

FORMULAS = ["=IF(B5>0,B5*k,0)", "=IF(B6>0,B6*k,0)", "=IF(B7>0,B7*k,0)"]
CACHED = [1.5, float("nan"), 7.000000000000001]


def _table(sheet: Sheet, run: bool) -> Sheet:
    """Rows 5-7: a key (A), an input (B), a formula column (C), a label after it (D, row 6 only),
    with a header (row 4) in the run's look and a look first seen in the run's first row."""
    sheet.cell(4, 3).text("header")
    sheet.cell(4, 3).style = LABEL
    for i, r in enumerate(range(5, 8)):
        sheet.cell(r, 1).text(f"row {i}")
        sheet.cell(r, 1).style = BOLD
        sheet.cell(r, 2).number(i + 0.5)
    sheet.cell(6, 4).text("note")
    if run:
        sheet.add_run(Run(3, 5, DERIVED, FORMULAS, CACHED))
    else:
        for r, (formula, cached) in enumerate(zip(FORMULAS, CACHED), start=5):
            sheet.cell(r, 3).formula(formula, cached)
            sheet.cell(r, 3).style = DERIVED
    return sheet


def _xml(sheet: Sheet) -> tuple[str, str]:
    """The sheet's rows and the style sheet they numbered their styles in."""
    styles = StyleSheet()
    rows = CellXml(styles).rows(sheet)
    return rows, styles.xml()


def test_a_run_spells_as_its_cells_one_by_one_and_numbers_styles_in_the_same_order():
    as_cells, as_run = _table(Sheet("s"), run=False), _table(Sheet("s"), run=True)
    assert _xml(as_run) == _xml(as_cells)
    assert "<f>IF(B5&gt;0,B5*k,0)</f><v>1.5</v>" in _xml(as_run)[0]       # escaped, cached value kept
    assert '<c r="C6" s="' in _xml(as_run)[0] and "<f>IF(B6&gt;0,B6*k,0)</f></c>" in _xml(as_run)[0]   # NaN: no value
    assert (as_run.max_row, as_run.max_column) == (as_cells.max_row, as_cells.max_column)
    assert {k: (c.value, c.cached) for k, c in as_run.all_cells().items()} == \
        {k: (c.value, c.cached) for k, c in as_cells.cells.items()}


def test_a_cell_inside_a_run_is_refused_when_written_before_or_after_the_run():
    before = Sheet("s")
    before.cell(6, 3).number(1)
    with pytest.raises(ValueError, match="covers cells already written"):
        before.add_run(Run(3, 5, DERIVED, FORMULAS, CACHED))
    overlapping = Sheet("s")
    overlapping.add_run(Run(3, 5, DERIVED, FORMULAS, CACHED))
    with pytest.raises(ValueError, match="covers cells already written"):
        overlapping.add_run(Run(3, 7, DERIVED, ["=1"], [1]))
    after = Sheet("s")
    after.add_run(Run(3, 5, DERIVED, FORMULAS, CACHED))
    after.cell(7, 3).number(2)
    with pytest.raises(ValueError, match="row 7 has a cell inside a run"):
        _xml(after)


def test_a_run_needs_one_value_per_formula():
    with pytest.raises(ValueError, match="one cached value per formula"):
        Run(3, 5, DERIVED, FORMULAS, CACHED[:2])


def test_a_runs_manifest_entry_lists_each_cell_with_its_row_and_the_engines_value():
    info = RunInfo("nominal", Run(3, 5, DERIVED, FORMULAS, CACHED), "profile.demand", "nominal", "derived",
                   [1.5, None, 7.0])
    cells = info.cells()
    assert [(c.ref, c.row, c.role, c.expected) for c in cells] == [
        ("nominal!C5", 0, "derived", 1.5), ("nominal!C6", 1, "derived", None), ("nominal!C7", 2, "derived", 7.0)]


class _Forgetful(dict):
    """A stamp cache that keeps nothing: every row and frame made anew, as before stamps."""

    def __setitem__(self, key, value):
        pass


def test_stamped_rows_and_frames_read_as_the_rows_made_for_each_sheet():
    """The main plan's scenarios pin a derived quantity (context_x2), override inputs and
    rest on pending measurements: a stamp keyed too loosely would show one sheet's tag or
    note on another."""
    plan = capplan.load(MAIN_PLAN)
    evaluations = capplan.evaluate(plan)
    shown = full_view(plan, evaluations)
    kept = Builder(plan, evaluations, standard_model(), shown)
    built = kept.build()
    made_once = to_bytes(built)
    texts = {ws.title: {c.value for c in ws.cells.values() if c.kind == "s"} for ws in built.worksheets}
    assert "derived (pending)" in texts["nominal"]                       # rests on a pending measurement
    assert any(t.startswith("instance_max_rate pinned; replaces") for t in texts["context_x2"])
    assert not any(t.startswith("instance_max_rate pinned") for t in texts["nominal"])
    forgetful = Builder(plan, evaluations, standard_model(), shown)
    forgetful.stamps = _Forgetful()
    assert to_bytes(forgetful.build()) == made_once
    rows = sum(len(sheet.scalar_row) for sheet in kept.sheets)
    assert len(kept.sheets) >= 5 and len(kept.stamps) < rows / 3          # most rows were put, not made
