"""Dimension check of every formula, before any number is computed.

The checker walks a formula with *dimensions* instead of numbers. Adding or
comparing operands of different dimensions is an error that names the
formula, the operator and both sides, the way numbat reports it::

    kv_pool = usable_vram - weight_memory - workspace_reserve:
    cannot subtract weight_memory ([token]) from usable_vram ([information])

Finally the formula's dimensions must match the quantity's declared unit.

:func:`check` is a stage of its own: the engine's entry points call it on a
scenario's graph before they compute anything (once per model and graph).
"""

from __future__ import annotations

from capplan.language import units
from capplan.language.units import DIMENSIONLESS, describe
from capplan.language.walker import Walker, is_negation
from capplan.language.model import Model
from capplan.errors import CapplanError

ANY = object()   # the literal 0, which fits any dimension (x > 0, max(x, 0))


class UnitChecker(Walker):
    """Dimensions for a formula tree: each node's ``_print_<Node>`` gives its dimensions."""

    def __init__(self, name: str, formula_text: str, dims_of):
        self.name = name
        self.text = formula_text
        self.dims_of = dims_of          # symbol name -> Dimensions

    def fail(self, message: str) -> CapplanError:
        return CapplanError(f"{self.name} = {self.text}: {message}")

    def number(self, value):
        return ANY if value == 0 else DIMENSIONLESS

    def _print_Symbol(self, expr):
        return self.dims_of(expr.name)

    def _print_Add(self, expr):
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

    def _print_Mul(self, expr):
        dims = DIMENSIONLESS
        for factor in expr.args:
            value = self.visit(factor)
            if value is ANY:
                return ANY
            dims = dims * value
        return dims

    def _print_Pow(self, expr):
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

    def _same_as_argument(self, expr):
        return self.visit(expr.args[0])

    _print_ceiling = _print_floor = _print_Abs = _print_TableSum = _print_TableMax = _print_TableMin = \
        _print_Nominal = _same_as_argument

    def _print_PerUnit(self, expr):
        dims = self.visit(expr.args[0])
        return ANY if dims is ANY else dims / units.dimensions(expr.unit)


    def _print_Max(self, expr):
        return self._same(expr.args, "max")

    def _print_Min(self, expr):
        return self._same(expr.args, "min")

    def _print_Relational(self, expr):
        self._same(expr.args, f"comparison '{expr.rel_op}'")
        return DIMENSIONLESS

    def _print_And(self, expr):
        for a in expr.args:
            self.visit(a)
        return DIMENSIONLESS

    _print_Or = _print_Not = _print_And

    def _print_Piecewise(self, expr):
        for _, cond in expr.args:
            self.visit(cond)
        return self._same([value for value, _ in expr.args], "if()")

    def _print_MaxBeforeFailure(self, expr):
        self.visit(expr.args[1])
        return self.visit(expr.args[0])

    _print_MinFailure = _print_MaxBeforeFailure

    def _print_ErlangC(self, expr):
        """Servers and a load in Erlangs (both dimensionless) give a probability."""
        for arg in expr.args:
            dims = self.visit(arg)
            if dims is not ANY and dims != DIMENSIONLESS:
                raise self.fail(f"erlang_c() needs dimensionless arguments (servers, Erlangs), "
                                f"got {_show(arg)} ({describe(dims)})")
        return DIMENSIONLESS

    def _print_RowWindow(self, expr):
        """A column read in other rows (lag, window_max, window_min, kth_largest): its own
        dimensions; the count of rows is a number."""
        dims = self.visit(expr.args[1])
        if dims is not ANY and dims != DIMENSIONLESS:
            raise self.fail(f"{expr.func.__name__}() counts rows with a dimensionless number, "
                            f"got {_show(expr.args[1])} ({describe(dims)})")
        return self.visit(expr.args[0])

    _print_KthLargest = _print_RowWindow

    def _print_SumAbove(self, expr):
        return self._same(expr.args, "sum_above()")

    def _print_log(self, expr):
        """ln of a dimensionless number (a share, a ratio)."""
        dims = self.visit(expr.args[0])
        if dims is not ANY and dims != DIMENSIONLESS:
            raise self.fail(f"ln() needs a dimensionless argument, got {_show(expr.args[0])} ({describe(dims)})")
        return DIMENSIONLESS

    def _print_PoissonExceeds(self, expr):
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


def check(model: Model, graph) -> None:
    """The units stage: every formula of a scenario's graph and every model check
    (raises, located in the model file, at the first that is inconsistent)."""
    key = (id(model), id(graph))
    seen = _CHECKED.get(key)
    if seen is not None and seen[0] is model and seen[1] is graph:
        return
    _check(model, graph)
    _CHECKED[key] = (model, graph)      # graphs are few (graph.build caches them), so this stays small


_CHECKED: dict[tuple[int, int], tuple] = {}


def _check(model: Model, graph) -> None:
    def dims_of(name):
        q = graph.nodes[name].quantity
        return DIMENSIONLESS if q.kind in ("bool", "text") else units.dimensions(q.unit)

    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is not None:
            try:
                check_formula(name, node.quantity.unit if node.quantity.kind != "bool" else "",
                              node.formula, dims_of)
            except CapplanError as err:
                raise err.located(file=model.source) from None
    for check_, deps in zip(model.checks, graph.check_deps):
        if deps is None:                    # not part of a plan with these switches
            continue
        check_formula(f"check '{check_.require.text}'", "", check_.require, dims_of)
