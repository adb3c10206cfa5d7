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
from capplan.rendering.workbook.lint import lint_formula
from capplan.rendering.workbook.names import excel_name
from capplan.rendering.workbook.unitfold import exact_factor, fold_units
from capplan.rendering.workbook.plantext import quote_sheet

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

    def compile(self, name: str, formula, sheet: SheetLayout, nominal: SheetLayout,
                table: str | None = None, row: int | None = None) -> str:
        """The formula text of one cell (on ``sheet``; of ``row`` of ``table`` for a row
        formula), printed and linted once for every cell whose references read alike.

        Scenario sheets share one layout as a rule, so without this a plan of many
        scenarios would print and lint the same text once per sheet. Names are
        workbook-wide, so only row cells (this sheet's tables) and nominal() (the
        nominal sheet, or nothing on the nominal sheet itself) make texts differ."""
        key = (name, formula.text, sheet is nominal, sheet.table_layout(), table, row)
        text = self._compiled.get(key)
        if text is None:
            text = ExcelPrinter(Refs(self, sheet, nominal, table, row)).doprint(self.folded(name, formula))
            problems = lint_formula(text, self.name_set)
            if problems:
                raise CapplanError(f"internal error compiling {name} = {formula.text} to Excel: {'; '.join(problems)}")
            self._compiled[key] = text
        return text


class Refs:
    """What a formula on one sheet (and, for a row formula, one table row) reads."""

    def __init__(self, formulas: Formulas, sheet: SheetLayout, nominal: SheetLayout,
                 table: str | None = None, row: int | None = None):
        self.formulas = formulas
        self.model = formulas.model
        self.sheet = sheet
        self.nominal_sheet = nominal
        self.table = table
        self.row = row

    def scalar(self, name: str) -> str:
        return self.formulas.names[name]

    def column(self, name: str) -> str:
        return self.formulas.names[name]

    def cell(self, name: str):
        q = self.model.quantities[name]
        if self.table is None or q.table != self.table:
            return None
        return self.sheet.table_cell(name, self.row)

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
        if self.row >= nominal.tables[q.table].n_rows:
            raise CapplanError(f"nominal({name}): the nominal {q.table} table has no row {self.row + 1}")
        return f"{qs}!{nominal.table_cell(name, self.row, absolute=True)}"
