"""The model's graph over many samples at once: each formula compiled to numpy.

``capplan simulate`` evaluates the same graph as :mod:`capplan.engine.evaluate`
for 100,000 draws of the uncertain inputs. Calling the engine once per draw
would take a minute, so each formula of the graph (from ``model/``, never a
second copy of the model) is compiled once into a tree of numpy closures and
run in topological order on whole arrays: a scalar is a column of shape
``(samples, 1)`` and a table column a matrix ``(samples, rows)``, so scalars
broadcast over rows as they do in the engine, and table functions reduce the
last axis. A value no uncertain input reaches keeps its first dimension at 1
and is computed once.

The arithmetic mirrors :class:`capplan.engine.evaluate.Numeric` operation for
operation (the same fold order for sums and products, the same ceil/floor
snap), so a sample's results equal the engine's to the last bits, which the
tests check draw by draw. Where the engine would stop with an error (no sweep
row passes, a division by zero, a failed model check) a sample holds NaN and
counts as one the plan does not evaluate at.

Each function of the formula language has its numpy form in :data:`NUMPY`,
keyed by the sympy node's class name: a new function of
:data:`capplan.language.formula.FUNCTIONS` needs one entry here (the tests
check that every function has one).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import sympy

from capplan.engine import queueing
from capplan.engine.evaluate import _snap, compare
from capplan.engine.graph import Graph
from capplan.language.walker import RELATIONS
from capplan.errors import InternalError

Values = dict[str, np.ndarray]
Compiled = Callable[[Values, Values], np.ndarray]


def _rows(reduce):
    """A table function: reduce the rows (last axis) of a column, keeping a scalar's shape."""
    return lambda x: reduce(x, axis=-1, keepdims=True)


def _ordered(xs, oks):
    """Sweep rows in increasing x (rows are sorted once when no draw moves the rates)."""
    xs, oks = np.broadcast_arrays(np.asarray(xs, dtype=float), np.asarray(oks) != 0)
    order = np.argsort(xs, axis=-1, kind="stable")
    return np.take_along_axis(xs, order, -1), np.take_along_axis(oks, order, -1)


def _first_failure(oks):
    """Index of the first failing row, or the row count when every row passes."""
    failed = ~oks
    return np.where(failed.any(axis=-1, keepdims=True), np.argmax(failed, axis=-1)[..., None], oks.shape[-1])


def max_before_failure(xs, oks):
    """λ*: the x before the first failing row; NaN (the plan does not evaluate) when the first row fails."""
    xs, oks = _ordered(xs, oks)
    first = _first_failure(oks)
    best = np.take_along_axis(xs, np.maximum(first - 1, 0), -1)
    return np.where(first > 0, best, np.nan)


def min_failure(xs, oks):
    """The top of the knee bracket: the first failing x, or the highest x when none fails."""
    xs, oks = _ordered(xs, oks)
    first = np.minimum(_first_failure(oks), oks.shape[-1] - 1)
    return np.take_along_axis(xs, first, -1)


def _queueing(function, whole: bool):
    """A queueing function on arrays: NaN where the engine refuses the arguments
    (below 0, not finite, or for erlang_c servers that are not whole)."""
    def numpy_form(a, b):
        a, b = np.broadcast_arrays(_snap(np.asarray(a, dtype=float)), np.asarray(b, dtype=float))
        bad = (a < 0) | (b < 0) | ~np.isfinite(a) | ~np.isfinite(b)
        if whole:
            bad |= a != np.floor(a)
        result = function(np.where(bad, 0.0, a), np.where(bad, 0.0, b))
        return np.where(bad, np.nan, result)
    return numpy_form


def _fold(op):
    return lambda *args: functools.reduce(op, args)


# sympy node class name -> numpy form of the function, on the evaluated arguments.
NUMPY: dict[str, Callable] = {
    "ceiling": lambda x: np.ceil(_snap(x)),
    "floor": lambda x: np.floor(_snap(x)),
    "Abs": np.abs,
    "Max": _fold(np.maximum),
    "Min": _fold(np.minimum),
    "TableSum": _rows(np.sum),
    "TableMax": _rows(np.max),
    "TableMin": _rows(np.min),
    "MaxBeforeFailure": max_before_failure,
    "MinFailure": min_failure,
    "PerToken": lambda x: x,          # token and GPU are base units: the number stays
    "PerGpu": lambda x: x,
    "ErlangC": _queueing(queueing.erlang_c, whole=True),
    "PoissonExceeds": _queueing(queueing.poisson_exceeds, whole=False),
}

def compile_expr(expr) -> Compiled:
    """A formula's sympy tree as a function of (values, nominal values)."""
    if isinstance(expr, sympy.Number):
        constant = np.float64(float(expr))
        return lambda v, n: constant
    if isinstance(expr, sympy.logic.boolalg.BooleanTrue):
        return lambda v, n: np.float64(1.0)
    if isinstance(expr, sympy.Symbol):
        name = expr.name
        return lambda v, n: v[name]
    kind = type(expr).__name__
    if kind == "Nominal":
        name = expr.args[0].name
        return lambda v, n: n[name]
    if kind == "Piecewise":                      # if(c, a, b): Piecewise((a, c), (b, True))
        (then, cond), (otherwise, _) = ((compile_expr(a) for a in pair.args) for pair in expr.args)
        return lambda v, n: np.where(np.asarray(cond(v, n)) != 0, then(v, n), otherwise(v, n))
    parts = [compile_expr(a) for a in expr.args]
    if type(expr) in RELATIONS:
        op, (a, b) = RELATIONS[type(expr)], parts
        return lambda v, n: compare(op, a(v, n), b(v, n)).astype(float)
    if kind == "Add":
        return lambda v, n: functools.reduce(lambda total, p: total + p(v, n), parts[1:], parts[0](v, n))
    if kind == "Mul":
        return lambda v, n: functools.reduce(lambda product, p: product * p(v, n), parts, 1.0)
    if kind == "Pow":
        base, exponent = parts
        return lambda v, n: np.power(base(v, n), exponent(v, n))
    if kind in ("And", "Or"):
        op = np.logical_and if kind == "And" else np.logical_or
        return lambda v, n: functools.reduce(op, [np.asarray(p(v, n)) != 0 for p in parts]).astype(float)
    if kind == "Not":
        (inner,) = parts
        return lambda v, n: (np.asarray(inner(v, n)) == 0).astype(float)
    function = NUMPY.get(kind)
    if function is None:
        raise InternalError(f"formula element {kind} has no numpy form: add it to "
                            "capplan.engine.vectorised.NUMPY")
    if len(parts) == 1:
        (inner,) = parts
        return lambda v, n: function(inner(v, n))
    return lambda v, n: function(*(p(v, n) for p in parts))


_COMPILED: dict[int, tuple] = {}     # id(graph) -> (graph, formulas, checks); graphs are cached, so few


def compiled(graph: Graph, model) -> tuple[tuple[tuple[str, Compiled], ...], tuple[Compiled, ...]]:
    """Each formula node of a graph, compiled, in topological order; and the model's checks."""
    entry = _COMPILED.get(id(graph))
    if entry is None or entry[0] is not graph:
        formulas = tuple((name, compile_expr(graph.nodes[name].formula.expr)) for name in graph.order
                         if graph.nodes[name].formula is not None)
        entry = _COMPILED[id(graph)] = (graph, formulas, tuple(compile_expr(c.require.expr) for c in model.checks))
    return entry[1], entry[2]


def run(graph: Graph, model, inputs: Values, rows: dict[str, int],
        nominal: Values | None = None) -> tuple[Values, np.ndarray, list[np.ndarray]]:
    """Every node's values from the inputs (scalars ``(k, 1)``, columns ``(k, rows)``, k = 1
    or the number of draws; ``rows`` counts each table's rows); returns them, per draw
    whether every model check holds, and per check where it fails (each ``(k or 1, 1)``)."""
    values = dict(inputs)
    nominal = values if nominal is None else nominal
    with np.errstate(all="ignore"):
        formulas, checks = compiled(graph, model)
        for name, formula in formulas:
            result = np.asarray(formula(values, nominal), dtype=float)
            result = result.reshape((1, 1)) if result.ndim == 0 else result
            table = graph.nodes[name].quantity.table
            values[name] = np.broadcast_to(result, (result.shape[0], rows[table])) if table else result
        holds = np.ones((1, 1), dtype=bool)
        failed = []
        for check in checks:
            passes = np.asarray(check(values, nominal)) != 0
            holds = holds & passes
            failed.append(~(passes.reshape((1, 1)) if passes.ndim == 0 else passes))
    return values, holds, failed
