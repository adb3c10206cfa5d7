"""Formulas: Excel names for the model's quantities, and each derived cell's formula text.

Every quantity gets one workbook-wide Excel name, defined per sheet, so the
same formula text reads the right cells on every scenario sheet; only row
formulas (this row's cell) and ``nominal(...)`` (a cell on the nominal sheet)
print references that depend on where the cell is.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import sympy

from capplan.language import units
from capplan.language.model import Model
from capplan.errors import CapplanError
from capplan.rendering.workbook.formulaprinter import ExcelPrinter
from capplan.rendering.workbook.lint import EXCEL_MAX_FORMULA, lint_formula
from capplan.rendering.workbook.names import excel_name
from capplan.rendering.workbook.unitfold import exact_factor, fold_units
from capplan.xlsx.sheetmodel import quote_sheet
from capplan.rendering.workbook.rowtemplate import RowSlot, Slots, RowTemplate

if TYPE_CHECKING:
    from capplan.rendering.workbook.layout import SheetLayout


@cache
def _factor(unit: str) -> sympy.Rational:
    return exact_factor(units.factor(unit))


class Formulas:
    """The Excel names of one workbook and the compiler of its formulas."""

    def __init__(self, model: Model, evaluations):
        self.model = model
        taken: set[str] = set()
        self.names: dict[str, str] = {}
        present: set[str] = set()
        for e in evaluations:
            present.update(e.graph.nodes)
        active = [n for n in model.quantities if n in present]
        for n in active:                       # scalars keep their names first
            if model.quantities[n].table is None:
                self.names[n] = excel_name(n, taken)
        for n in active:
            if model.quantities[n].table is not None:
                self.names[n] = excel_name(n, taken)
        self.name_set = {v.lower() for v in self.names.values()}
        self._folded: dict[tuple, sympy.Basic] = {}
        self._compiled: dict[tuple, str] = {}
        self._rows: dict[tuple, RowTemplate] = {}

    def factor_of(self, name: str) -> sympy.Rational:
        q = self.model.quantities[name]
        if q.kind in ("bool", "text"):
            return sympy.Integer(1)
        return _factor(q.unit)

    def folded(self, name: str, formula) -> sympy.Basic:
        key = (name, formula.text)
        if key not in self._folded:
            self._folded[key] = fold_units(formula.expr, self.factor_of, self.factor_of(name))
        return self._folded[key]

    def compile(self, name: str, formula, sheet: SheetLayout, nominal: SheetLayout) -> str:
        """The formula text of a scalar's cell on ``sheet``, printed and linted once for
        every sheet whose references read alike.

        Scenario sheets share one layout as a rule, so without this a plan of many
        scenarios would print and lint the same text once per sheet. Names are
        workbook-wide, so only nominal() (the nominal sheet, or nothing on the nominal
        sheet itself) makes texts differ."""
        key = (name, formula.text, sheet is nominal, sheet.table_layout())
        text = self._compiled.get(key)
        if text is None:
            text = ExcelPrinter(Refs(self, sheet, nominal)).doprint(self.folded(name, formula))
            self._compiled[key] = self._linted(name, formula, text)
        return text

    def column(self, name: str, formula, sheet: SheetLayout, nominal: SheetLayout, table: str,
               n_rows: int) -> list[str]:
        """The formula texts of a table column's rows, top to bottom. The printer runs once
        per column (and layout) with each row-dependent number left open (:mod:`.rowtemplate`);
        the rows are that text with their numbers filled in, so one row is linted for all
        (a row's numbers can only make it longer than Excel's limit)."""
        if not n_rows:
            return []
        key = (name, formula.text, sheet is nominal, sheet.table_layout(), table)
        template = self._rows.get(key)
        if template is None:
            slots = Slots()
            marked = ExcelPrinter(Refs(self, sheet, nominal, table, slots=slots)).doprint(self.folded(name, formula))
            template = RowTemplate(marked, slots)
            self._linted(name, formula, template.texts(1)[0])
            self._rows[key] = template
        texts = template.texts(n_rows)
        if max(map(len, texts)) > EXCEL_MAX_FORMULA:
            self._linted(name, formula, max(texts, key=len))
        return texts

    def _linted(self, name: str, formula, text: str) -> str:
        problems = lint_formula(text, self.name_set)
        if problems:
            raise CapplanError(f"internal error compiling {name} = {formula.text} to Excel: {'; '.join(problems)}")
        return text


class Refs:
    """What a formula on one sheet (and, for a row formula, one table row) reads.

    With ``slots`` (a row formula printed once for every row) the row is left open:
    each row-dependent number is a slot of the :class:`.rowtemplate.Slots`."""

    def __init__(self, formulas: Formulas, sheet: SheetLayout, nominal: SheetLayout,
                 table: str | None = None, row: int | None = None, slots: Slots | None = None):
        self.formulas = formulas
        self.model = formulas.model
        self.sheet = sheet
        self.nominal_sheet = nominal
        self.table = table
        self._row = row
        self._slots = slots

    @property
    def row(self):
        """This row's index, as the printer writes it (``MIN(k,row)``)."""
        return self._row if self._slots is None else RowSlot(self._slots)

    def _cell(self, sheet: SheetLayout, name: str, absolute: bool) -> str:
        if self._slots is None:
            return sheet.table_cell(name, self._row, absolute)
        letter, first = sheet.table_column(name)
        return f"${letter}${self._slots.slot(first)}" if absolute else f"{letter}{self._slots.slot(first)}"

    def scalar(self, name: str) -> str:
        return self.formulas.names[name]

    def column(self, name: str) -> str:
        return self.formulas.names[name]

    def cell(self, name: str):
        q = self.model.quantities[name]
        if self.table is None or q.table != self.table:
            return None
        return self._cell(self.sheet, name, False)

    def is_bool(self, name: str) -> bool:
        return self.model.quantities[name].kind == "bool"

    def nominal(self, name: str, array: bool):
        """nominal(x): a cell reference into the nominal sheet (None on the nominal sheet itself).

        Cell references, not 'nominal'!name: LibreOffice misreads a sheet-qualified
        name that starts like a cell address ('nominal'!bf16_peak_flops)."""
        nominal = self.nominal_sheet
        if self.sheet is nominal:
            return None
        qs = quote_sheet(nominal.ws.title)
        q = self.model.quantities[name]
        if q.table is None:
            return f"{qs}!{nominal.scalar_cell(name, absolute=True)}"
        if q.table not in nominal.tables:
            raise CapplanError(f"nominal({name}): the nominal scenario has no table {q.table}")
        if array or self.table != q.table:
            return f"{qs}!{nominal.column_range(name)}"
        if self._slots is not None:
            self._slots.within(nominal.tables[q.table].n_rows, name, q.table)
        elif self._row >= nominal.tables[q.table].n_rows:
            raise CapplanError(f"nominal({name}): the nominal {q.table} table has no row {self._row + 1}")
        return f"{qs}!{self._cell(nominal, name, True)}"
