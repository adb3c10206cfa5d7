"""Scenario sheets that repeat an earlier sheet's shape (:mod:`capplan.rendering.workbook.sheetshape`)
read, byte for byte, as the sheets written cell by cell: two sheets share a shape only
when all they show but their values is alike, and what a reader asks of a repeating
sheet (its cells, the manifest) is what the sheet written whole holds."""

from __future__ import annotations

import copy

import pytest
import recalc
from conftest import MAIN_PLAN

import capplan
from capplan.language.model import standard_model
from capplan.rendering.workbook import render_workbook, sheetshape, to_bytes
from capplan.rendering.workbook.builder import Builder
from capplan.xlsx import sheetmodel, sheetxml
from plan_edits import full_view

SCENARIOS = """scenarios:
  rate_a:
    title: Rate 70
    set: {peak_arrival_rate: 70 req/s}
  rate_b:
    title: Rate 75, the same shape as rate_a
    set: {peak_arrival_rate: 75 req/s}
  slo:
    title: Another input overridden
    set: {ttft_p95_slo: 450 ms}
  pinned:
    title: A derived quantity pinned
    set:
      peak_arrival_rate: 80 req/s
      instance_max_rate: {value: 7.5 req/s, tag: assumption}
  pending:
    title: The override pending
    set:
      peak_arrival_rate: {value: 85 req/s, status: pending}
  renamed:
    title: A class renamed (below)
    set: {peak_arrival_rate: 90 req/s}
  rate_c:
    title: Rate 95, the same shape as rate_a
    set: {peak_arrival_rate: 95 req/s}
  prompts_a:
    title: A table cell overridden
    set: {"classes[summarization].prompt_tokens": 1024}
  prompts_b:
    title: Another value of it
    set: {"classes[summarization].prompt_tokens": 4096}
"""
SHARED = {"rate_b", "rate_c", "prompts_b"}       # each repeats the first sheet of its shape
RENAMED = "short chat (renamed)"


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    text = MAIN_PLAN.read_text()
    path = tmp_path_factory.mktemp("shapes") / MAIN_PLAN.name
    path.write_text(text[:text.index("scenarios:")] + SCENARIOS)
    loaded = capplan.load(path)
    renamed = next(s for s in loaded.scenarios if s.name == "renamed")
    renamed.tables = copy.deepcopy(renamed.tables)
    renamed.tables["classes"].rows[0]["name"] = RENAMED      # a text value of its own (no plan can set one)
    return loaded, capplan.evaluate(loaded)


def _book(plan, shapes: bool) -> Builder:
    loaded, evaluations = plan
    book = Builder(loaded, evaluations, standard_model(), full_view(loaded, evaluations))
    if not shapes:
        book.shapes = None
    return book


def test_sheets_share_a_shape_only_when_all_but_their_values_is_alike_and_read_as_written_whole(plan):
    shaped, whole = _book(plan, True).build(), _book(plan, False).build()
    repeating = {ws.title for ws in shaped.worksheets if isinstance(ws, sheetshape.ShapedSheet)}
    assert repeating == SHARED           # not slo, pinned, pending, renamed: each differs from rate_a but for values
    assert to_bytes(shaped) == to_bytes(whole)
    assert not any(ws.__dict__["cells"] for ws in shaped.worksheets if ws.title in SHARED)   # never written out
    assert RENAMED in {c.value for c in whole.worksheets[[ws.title for ws in whole.worksheets].index("renamed")]
                       .cells.values()}


def test_a_repeating_sheet_is_spelled_from_its_shape_not_from_cells(plan, monkeypatch):
    built = _book(plan, True).build()
    spelled = []
    cell_rows = sheetxml.CellXml.cell_rows
    monkeypatch.setattr(sheetxml.CellXml, "cell_rows", lambda self, sheet: spelled.append(sheet.title)
                        or cell_rows(self, sheet))
    to_bytes(built, release=True)
    assert spelled and not SHARED & set(spelled)
    assert not any(ws.cells for ws in built.worksheets)


def test_what_a_reader_asks_of_a_repeating_sheet_is_what_the_sheet_written_whole_holds(plan):
    shaped, whole = _book(plan, True).build(), _book(plan, False).build()

    def listed(built):
        return [(c.sheet, c.coordinate, c.quantity, c.scenario, c.row, c.role, repr(c.expected)) for c in built.cells]

    def cells(ws):
        return {k: (c.value, c.kind, c.cached, c.style, c.comment) for k, c in ws.all_cells().items()}

    assert listed(shaped) == listed(whole)
    assert shaped.formulas() == whole.formulas()
    for a, b in zip(shaped.worksheets, whole.worksheets):
        assert a.title == b.title and cells(a) == cells(b)
        assert [(c.row, c.column, c.comment) for c in a.comments()] == \
            [(c.row, c.column, c.comment) for c in b.comments()]
        assert (a.names, a.max_row, a.max_column, a.bottom) == (b.names, b.max_row, b.max_column, b.bottom)


def test_a_shape_whose_template_fills_in_otherwise_than_it_is_written_is_not_trusted(plan, monkeypatch):
    """A value source noted wrong shows on the template: its sheets are then spelled from their cells."""
    expected = to_bytes(_book(plan, False).build())
    spelled = sheetshape.Shape.spelled
    monkeypatch.setattr(sheetshape.Shape, "spelled", lambda self, cells, sheet: [
        *spelled(self, cells, sheet)[:-1], "<v>not a value</v>"])
    built = _book(plan, True).build()
    assert to_bytes(built) == expected
    assert all(ws.__dict__["cells"] for ws in built.worksheets if ws.title in SHARED)   # written out to be spelled


def test_a_template_whose_formula_has_no_noted_source_is_not_shared(plan, monkeypatch):
    book = _book(plan, True)
    slot = Builder.slot
    monkeypatch.setattr(Builder, "slot", lambda self, cell, source: None if source[0] == "formula" and
                        source[2] is None else slot(self, cell, source))
    built = book.build()
    assert not any(isinstance(ws, sheetshape.ShapedSheet) for ws in built.worksheets)
    assert book.shapes and not any(shape.usable for shape in book.shapes.values())
    assert to_bytes(built) == to_bytes(_book(plan, False).build())


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_spreadsheet_engines_recalculate_the_repeating_sheets_as_the_engine_computed_them(plan, engine, tmp_path):
    """The manifest of a workbook with repeating sheets, their entries written out when read, checked in
    LibreOffice and Gnumeric."""
    built = _book(plan, True).build()
    path = tmp_path / "shapes.xlsx"
    path.write_bytes(to_bytes(built))
    wb = recalc.values(engine.recalc([path], tmp_path / engine.name)[path])
    listed = built.cells
    assert {c.sheet for c in listed} >= SHARED
    assert not recalc.error_cells(wb)
    bad = recalc.mismatches(listed, wb, limit=0, engine=engine)
    assert not bad, f"{len(bad)} of {len(listed)} cells differ:\n" + "\n".join(bad[:20])


def _study(folder, count: int):
    """The main plan with ``count`` scenarios, each setting one of three inputs (a parameter study)."""
    text = MAIN_PLAN.read_text()
    sets = ["peak_arrival_rate: {} req/s", "ttft_p95_slo: {} ms", '"classes[summarization].prompt_tokens": {}']
    scenarios = "".join(f"  study_{i}:\n    set: {{{sets[i % 3].format(100 + i)}}}\n" for i in range(count))
    path = folder / f"study{count}.yaml"
    path.write_text(text[:text.index("scenarios:")] + "scenarios:\n" + scenarios)
    loaded = capplan.load(path)
    return loaded, capplan.evaluate(loaded)


def test_a_parameter_study_makes_cells_for_one_sheet_of_each_shape_only(tmp_path, monkeypatch):
    """Thirty scenarios in three shapes make about the cells of three: the others are filled in."""
    made = []
    init = sheetmodel.Cell.__init__

    def counted(self, row, column):
        made.append(1)
        init(self, row, column)

    monkeypatch.setattr(sheetmodel.Cell, "__init__", counted)
    cells = {}
    for count in (3, 30):
        loaded, evaluations = _study(tmp_path, count)
        made.clear()
        render_workbook(loaded, evaluations, standard_model(), full_view(loaded, evaluations))
        cells[count] = len(made)
    assert cells[30] < 1.5 * cells[3]          # written cell by cell, 30 sheets would be about 10 times 3
