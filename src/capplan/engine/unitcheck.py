"""Dimension check of every formula, before any number is computed.

The checker walks a formula with *dimensions* instead of numbers. Adding or
comparing operands of different dimensions is an error that names the
formula, the operator and both sides, the way numbat reports it::

    kv_pool = usable_vram - weight_memory - workspace_reserve:
    cannot subtract weight_memory ([token]) from usable_vram ([information])

Finally the formula's dimensions must match the quantity's declared unit.
"""

from __future__ import annotations

import sympy

from capplan.language import units
from capplan.language.units import DIMENSIONLESS, Dimensions, describe
from capplan.language.walker import Walker, is_negation
from capplan.errors import CapplanError

ANY = object()   # the literal 0, which fits any dimension (x > 0, max(x, 0))


class UnitChecker(Walker):
    def __init__(self, name: str, formula_text: str, dims_of):
        self.name = name
        self.text = formula_text
        self.dims_of = dims_of          # symbol name -> Dimensions

    def fail(self, message: str) -> CapplanError:
        return CapplanError(f"{self.name} = {self.text}: {message}")

    def number(self, value):
        return ANY if value == 0 else DIMENSIONLESS

    def Symbol(self, expr):
        return self.dims_of(expr.name)

    def Add(self, expr):
        first, *rest = expr.args
        dims = self.visit(first)
        for term in rest:
            sub = is_negation(term)
            other = self.visit(term.args[1] if sub else term)
            if dims is ANY:
                dims = other
            elif other is not ANY and other != dims:
                if sub:
                    raise self.fail(f"cannot subtract {_show(term.args[1])} ({describe(other)}) "
                                    f"from {_show(first)} ({describe(dims)})")
                raise self.fail(f"cannot add {_show(first)} ({describe(dims)}) "
                                f"and {_show(term)} ({describe(other)})")
        return dims

    def Mul(self, expr):
        dims = DIMENSIONLESS
        for factor in expr.args:
            value = self.visit(factor)
            if value is ANY:
                return ANY
            dims = dims * value
        return dims

    def Pow(self, expr):
        base, exponent = expr.args
        base_dims = self.visit(base)
        if base_dims is ANY:
            return ANY
        if exponent.is_Number:
            return base_dims ** float(exponent)
        if base_dims != DIMENSIONLESS or self.visit(exponent) != DIMENSIONLESS:
            raise self.fail(f"a power with a variable exponent needs dimensionless operands, "
                            f"got {_show(base)} ({describe(base_dims)}) ** {_show(exponent)}")
        return DIMENSIONLESS

    def _same(self, args, what):
        known = [(a, d) for a, d in ((a, self.visit(a)) for a in args) if d is not ANY]
        for a, d in known[1:]:
            if d != known[0][1]:
                raise self.fail(f"{what} needs operands of one dimension: {_show(known[0][0])} "
                                f"({describe(known[0][1])}) vs {_show(a)} ({describe(d)})")
        return known[0][1] if known else ANY

    def ceiling(self, expr):
        return self.visit(expr.args[0])

    floor = Abs = TableSum = TableMax = TableMin = Nominal = ceiling

    def PerUnit(self, expr):
        dims = self.visit(expr.args[0])
        return ANY if dims is ANY else dims / units.dimensions(expr.unit)

    PerToken = PerGpu = PerUnit

    def Max(self, expr):
        return self._same(expr.args, "max")

    def Min(self, expr):
        return self._same(expr.args, "min")

    def relation(self, expr, op):
        self._same(expr.args, f"comparison '{op}'")
        return DIMENSIONLESS

    def And(self, expr):
        for a in expr.args:
            self.visit(a)
        return DIMENSIONLESS

    Or = Not = And

    def Piecewise(self, expr):
        for _, cond in expr.args:
            self.visit(cond)
        return self._same([value for value, _ in expr.args], "if()")

    def MaxBeforeFailure(self, expr):
        self.visit(expr.args[1])
        return self.visit(expr.args[0])

    MinFailure = MaxBeforeFailure

    def ErlangC(self, expr):
        """Servers and a load in Erlangs (both dimensionless) give a probability."""
        for arg in expr.args:
            dims = self.visit(arg)
            if dims is not ANY and dims != DIMENSIONLESS:
                raise self.fail(f"erlang_c() needs dimensionless arguments (servers, Erlangs), "
                                f"got {_show(arg)} ({describe(dims)})")
        return DIMENSIONLESS

    def PoissonExceeds(self, expr):
        """A count and the mean of that count (requests and requests) give a probability."""
        self._same(expr.args, "poisson_exceeds()")
        return DIMENSIONLESS


def _show(expr) -> str:
    text = str(expr)
    return text if len(text) < 60 else text[:57] + "..."


def check_formula(name: str, unit_text: str, formula, dims_of) -> None:
    """Raise if the formula is inconsistent or its result mismatches ``unit_text``."""
    got = UnitChecker(name, formula.text, dims_of).visit(formula.expr)
    want = units.dimensions(unit_text)
    if got is not ANY and got != want:
        raise CapplanError(f"{name} = {formula.text}: the formula gives {describe(got)}, "
                           f"but {name} is declared in '{unit_text or 'no unit'}' ({describe(want)})")


__all__ = ["check_formula", "UnitChecker", "Dimensions", "sympy"]
