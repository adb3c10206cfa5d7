"""A flip point as a formula over the model's own names, where it has one.

:mod:`capplan.analysis.flips` finds a flip point as a number: every other input
held at its value. The workbook wants more where it can have it: the peak at
which another replica is needed *is* ``active_replicas × safe_rate_per_replica``,
so a cell holding that formula moves when a finance partner edits the peak,
λ* or ρ. Such a closed form exists when a formula that reads the input
directly is a ``ceil``/``floor`` of an expression linear in it, or a
comparison of two such expressions: solved for the input, with the step's own
value standing for the integer crossed, it is a formula of named quantities.
It is used only when, at today's values, it equals the flip the search found
— otherwise (the flip comes from deeper in the graph) the workbook writes the
number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy

from capplan.engine.evaluate import Evaluation
from capplan.language.walker import RELATIONS

_STEPS = {sympy.ceiling: 0, sympy.floor: 1}


@dataclass(frozen=True)
class Boundary:
    """``expr`` (base units, over quantity names) gives the flip; a row formula's names read ``row``."""

    expr: sympy.Expr
    table: str | None
    row: int | None


def closed_form(e: Evaluation, variable, value: float, direction: str) -> Boundary | None:
    """The first flip ``direction`` ('below' | 'above') of today's value of ``variable`` (a
    ``Target`` of the flip search, above the engine), at ``value`` (base units), as a formula
    of named quantities; None when no direct formula gives it."""
    if variable.index is not None:
        return None
    x = sympy.Symbol(variable.name)
    for name in e.graph.order:
        node = e.graph.nodes[name]
        if node.formula is None or variable.name not in node.deps:
            continue
        q = node.quantity
        rows = [None] if q.table is None else range(len(e.scenario.tables[q.table].rows))
        for row in rows:
            for expr in _solutions(node.formula.expr, sympy.Symbol(name), x, direction, e, row):
                if math.isclose(_number(expr, e, row), value, rel_tol=1e-9, abs_tol=1e-300):
                    return Boundary(expr, q.table, row)
    return None


def _solutions(formula, own, x, direction: str, e: Evaluation, row) -> list:
    """Closed forms of where this formula's step moves as x goes ``direction``."""
    if type(formula) in RELATIONS:
        return _solve(formula.lhs - formula.rhs, x)
    kind = next((k for k in _STEPS if isinstance(formula, k)), None)
    if kind is None:
        return []
    inside = formula.args[0]
    slope = sympy.diff(inside, x)
    if x in slope.free_symbols:
        return []
    rising = (_number(slope, e, row) > 0) == (direction == "above")
    # ceil(u) = n moves at u = n going up, at u = n - 1 going down; floor(u) = n at n + 1 and n
    crossed = own + (0 if rising else -1) if kind is sympy.ceiling else own + (1 if rising else 0)
    return _solve(inside - crossed, x)


def _solve(expr, x) -> list:
    """x from ``expr = 0`` when expr is linear in x."""
    slope = sympy.diff(expr, x)
    if slope == 0 or x in slope.free_symbols:
        return []
    return [sympy.factor(sympy.cancel(x - expr / slope))]


def _number(expr, e: Evaluation, row) -> float:
    """The expression at today's values (base units); a column reads the row's value."""
    values = {}
    for s in expr.free_symbols:
        v = e.values[s.name]
        values[s] = float(v[row] if isinstance(v, np.ndarray) and row is not None else v)
    return float(expr.xreplace(values))
