"""A table column's formula is printed once and spelled per row: every row's text is the
one the printer writes for that row alone, and the printer runs once per column."""

from __future__ import annotations

import pytest
from conftest import ROOT

import capplan
from capplan.errors import CapplanError
from capplan.language.model import standard_model
from capplan.rendering.workbook import formulaprinter
from capplan.rendering.workbook.builder import Builder
from capplan.rendering.workbook.formulaprinter import ExcelPrinter
from capplan.rendering.workbook.formulas import Refs
from capplan.rendering.workbook.rowtemplate import RowSlot, RowTemplate, Slots
from plan_edits import full_view

DIURNAL = ROOT / "plans" / "llama3-8b-a100-diurnal.yaml"     # lag() and windows over the profile's rows


def test_a_template_fills_each_slot_with_its_base_plus_the_row_and_keeps_braces():
    slots = Slots()
    marked = f"=OFFSET(D{slots.slot(12)},-MIN(k,{RowSlot(slots)}),0)+SUM({{1,2}})+'nominal'!$C${slots.slot(40)}"
    template = RowTemplate(marked, slots)
    texts = template.texts(4)
    assert texts[0] == "=OFFSET(D12,-MIN(k,0),0)+SUM({1,2})+'nominal'!$C$40"
    assert texts[3] == "=OFFSET(D15,-MIN(k,3),0)+SUM({1,2})+'nominal'!$C$43"
    assert template.texts(2) == texts[:2]
    assert template.texts(4)[3] is texts[3]               # sheets of one layout share the text


def test_a_row_the_nominal_table_lacks_is_refused_as_the_printer_refused_it():
    slots = Slots()
    slots.within(2, "t.x", "t")
    template = RowTemplate(f"='nominal'!$C${slots.slot(7)}", slots)
    assert template.texts(2)[1] == "='nominal'!$C$8"
    with pytest.raises(CapplanError, match=r"nominal\(t.x\): the nominal t table has no row 3"):
        template.texts(3)


@pytest.fixture(scope="module")
def diurnal():
    plan = capplan.load(DIURNAL)
    evs = capplan.evaluate(plan)
    return plan, evs, standard_model()


def test_every_row_formula_reads_as_printed_for_its_row_alone_and_is_printed_once_per_column(diurnal, monkeypatch):
    plan, evs, model = diurnal
    printed = []
    doprint = ExcelPrinter.doprint
    monkeypatch.setattr(formulaprinter.ExcelPrinter, "doprint",
                        lambda self, expr: printed.append(1) or doprint(self, expr))
    book = Builder(plan, evs, model, full_view(plan, evs))
    book.build()
    during_build = len(printed)
    rows = checked = 0
    nominal = book.sheets[0]
    for sheet in book.sheets:
        for tname, pos in sheet.tables.items():
            for col in pos.columns:
                node = sheet.ev.graph.nodes[col]
                if node.formula is None:
                    continue
                rows += pos.n_rows
                texts = book.formulas.column(col, node.formula, sheet, nominal, tname, pos.n_rows)
                assert len(texts) == pos.n_rows
                for i in range(pos.n_rows):
                    alone = ExcelPrinter(Refs(book.formulas, sheet, nominal, tname, i)).doprint(
                        book.formulas.folded(col, node.formula))
                    assert texts[i] == alone
                    checked += "OFFSET(" in alone
    assert checked >= 24                                   # the windows over the day's rows were among them
    assert during_build < rows / 4                         # not once per row
