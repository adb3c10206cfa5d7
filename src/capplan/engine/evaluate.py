"""Evaluate a scenario: walk the graph in order and compute every node.

Values are floats in base units; a table column is a numpy array with one
entry per row, so one walker serves both scalar formulas and row-wise
computed columns (scalars broadcast over rows) and table functions reduce a
column to a scalar. The model's checks (weights sum to 1, the model fits in
memory) run as soon as the values they read exist.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import sympy

from capplan import formatting
from capplan.engine import units
from capplan.engine.graph import Graph, build
from capplan.engine.model import Model
from capplan.engine.walker import Walker
from capplan.errors import CapplanError
from capplan.loading.plan import Input, Plan, Scenario

# ceil/floor treat x within this relative distance of an integer as that integer,
# so float noise (60 / 7.000000000000001) cannot add a GPU; spreadsheets round
# to about 15 significant digits, so the tolerance stays near that.
_SNAP = 1e-14


@dataclass
class Evaluation:
    """One scenario's results, in base units, with where each input came from."""

    plan: Plan
    scenario: Scenario
    model: Model
    graph: Graph
    values: dict[str, object]            # name -> float | np.ndarray | list[str]
    inputs: dict[str, Input]             # scalar inputs and pins actually used
    provenance: dict[str, frozenset[str]]  # name -> scalar inputs and tables it rests on

    def display(self, name: str):
        """The value in its display unit (a list for a table column)."""
        q = self.model.quantities[name]
        value = self.values[name]
        if q.kind == "text":
            return list(value)
        if q.kind == "bool":
            return [bool(v) for v in value] if isinstance(value, np.ndarray) else bool(value)
        if isinstance(value, np.ndarray):
            return [units.to_display(float(v), q.unit) for v in value]
        return units.to_display(float(value), q.unit)

    def rows(self, table: str) -> list[dict]:
        cols = [c for c in self.model.tables[table].columns if c in self.values]
        shown = {c: self.display(c) for c in cols}
        count = len(self.scenario.tables[table].rows)
        return [{self.model.quantities[c].column: shown[c][i] for c in cols} for i in range(count)]

    def pending_inputs(self, name: str) -> list[str]:
        return sorted(n for n in self.provenance.get(name, ()) if n in self.inputs and self.inputs[n].pending)


def evaluate(plan: Plan, scenario: Scenario, model: Model, nominal: Evaluation | None = None) -> Evaluation:
    """Evaluate one scenario; every scenario but the nominal one needs the
    nominal evaluation, whose values ``nominal(...)`` reads."""
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned)
    try:
        graph = build(model, plan.switches, pinned, nominal=nominal is None)
    except CapplanError as err:
        raise err.located(file=plan.file) from None
    values: dict[str, object] = {}
    nominal_values = values if nominal is None else nominal.values
    provenance: dict[str, frozenset[str]] = {}
    used: dict[str, Input] = {}
    pending_checks = list(zip(model.checks, graph.check_deps))
    for name in graph.order:
        node = graph.nodes[name]
        q = node.quantity
        if q.table:
            rows = scenario.tables[q.table].rows
            if node.formula is None:
                column = [row[q.column] for row in rows]
                values[name] = column if q.kind == "text" else np.array(column, dtype=float)
                provenance[name] = frozenset([q.table])
            else:
                result = _compute(name, node, values, nominal_values, plan, scenario, model)
                values[name] = np.broadcast_to(np.asarray(result, dtype=float), (len(rows),)).copy()
        elif node.formula is None:
            item = scenario.inputs[name]
            used[name] = item
            values[name] = item.value
            provenance[name] = frozenset([name])
        else:
            values[name] = float(_compute(name, node, values, nominal_values, plan, scenario, model))
        if node.formula is not None:
            provenance[name] = frozenset().union(*(provenance[d] for d in node.deps)) if node.deps else frozenset()
        pending_checks = _run_checks(pending_checks, values, nominal_values, model, plan, scenario)
    return Evaluation(plan, scenario, model, graph, values, used, provenance)


def evaluate_all(plan: Plan, model: Model) -> list[Evaluation]:
    """Every scenario of a plan, nominal first (the others read it through nominal())."""
    nominal = evaluate(plan, plan.nominal, model)
    return [nominal] + [evaluate(plan, s, model, nominal) for s in plan.scenarios[1:]]


def _where(plan: Plan, scenario: Scenario) -> str:
    return "" if scenario.name == "nominal" else f"scenario {scenario.name}: "


def _compute(name, node, values, nominal_values, plan, scenario, model):
    try:
        with np.errstate(all="ignore"):
            return _numeric(values, nominal_values, model).visit(node.formula.expr)
    except CapplanError as err:
        # Point at the plan line of the culprit (the input that is 0) when the plan wrote it.
        culprit = err.key if err.key and plan.line(err.key) else None
        key = f"inputs.{culprit}" if culprit else name
        raise CapplanError(f"{_where(plan, scenario)}{name} = {node.formula.text}: {err.message}",
                           file=plan.file, key=key, line=plan.line(culprit or name)) from None


def _run_checks(pending, values, nominal_values, model, plan, scenario):
    left = []
    for check, deps in pending:
        if not all(d in values for d in deps):
            left.append((check, deps))
            continue
        if not _numeric(values, nominal_values, model).visit(check.require.expr):
            message = re.sub(r"\{(\w+)\}", lambda m: _show(m.group(1), values[m.group(1)], model), check.message)
            raise CapplanError(f"{_where(plan, scenario)}{message}", file=plan.file, key=check.key,
                               line=plan.line(check.key))
    return left


def _show(name, value, model) -> str:
    q = model.quantities[name]
    return formatting.quantity(units.to_display(float(value), q.unit), q.unit, q.kind)


def _numeric(values, nominal_values, model) -> "Numeric":
    return Numeric(values, nominal_values, lambda name, value: _show(name, value, model))


class Numeric(Walker):
    """Numbers for a formula tree: floats and numpy arrays in base units."""

    def __init__(self, values, nominal_values=None, show=None):
        self.values = values
        self.nominal_values = values if nominal_values is None else nominal_values
        self.show = show or (lambda name, value: f"{value:g}")
        self.guarded = 0      # > 0 inside an if() branch, where a division by zero may go unused

    def number(self, value):
        return value

    def Symbol(self, expr):
        return self.values[expr.name]

    def Add(self, expr):
        total = self.visit(expr.args[0])
        for term in expr.args[1:]:
            total = total + self.visit(term)
        return total

    def Mul(self, expr):
        product = 1.0
        for factor in expr.args:
            product = product * self.visit(factor)
        return product

    def Pow(self, expr):
        base, exponent = (self.visit(a) for a in expr.args)
        if not self.guarded and np.any(np.asarray(base) == 0) and np.any(np.asarray(exponent) < 0):
            culprit = expr.args[0].name if isinstance(expr.args[0], sympy.Symbol) else None
            raise CapplanError(f"division by zero: {expr.args[0]} is 0", key=culprit)
        return np.power(base, exponent)

    def ceiling(self, expr):
        x = self.visit(expr.args[0])
        return np.ceil(_snap(x))

    def floor(self, expr):
        return np.floor(_snap(self.visit(expr.args[0])))

    def Abs(self, expr):
        return np.abs(self.visit(expr.args[0]))

    def Max(self, expr):
        return self._reduce(np.maximum, expr.args)

    def Min(self, expr):
        return self._reduce(np.minimum, expr.args)

    def relation(self, expr, op):
        a, b = (np.asarray(self.visit(x), dtype=float) for x in expr.args)
        result = {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b, "==": a == b, "!=": a != b}[op]
        return result.astype(float) if result.ndim else float(result)

    def And(self, expr):
        return self._logical(np.logical_and, expr)

    def Or(self, expr):
        return self._logical(np.logical_or, expr)

    def _logical(self, op, expr):
        return self._reduce(op, [np.asarray(self.visit(a)) != 0 for a in expr.args], visited=True)

    def _reduce(self, op, args, visited=False):
        """An n-ary max/min/and/or over scalars and table columns alike (scalars broadcast over rows)."""
        parts = np.broadcast_arrays(*(a if visited else np.asarray(self.visit(a), dtype=float) for a in args))
        result = np.asarray(functools.reduce(op, parts), dtype=float)
        return result if result.ndim else float(result)

    def Not(self, expr):
        return (np.asarray(self.visit(expr.args[0])) == 0).astype(float)

    def Piecewise(self, expr):
        (then, cond), (otherwise, _) = expr.args
        chosen = np.asarray(self.visit(cond)) != 0
        self.guarded += 1
        try:
            a, b = self.visit(then), self.visit(otherwise)
        finally:
            self.guarded -= 1
        result = np.where(chosen, a, b)
        if not np.all(np.isfinite(result)):
            raise CapplanError("division by zero in the branch if() chose")
        return result if result.ndim else float(result)

    def Nominal(self, expr):
        return self.nominal_values[expr.args[0].name]

    def PerToken(self, expr):
        return self.visit(expr.args[0])       # token and GPU are base units: the number stays

    PerGpu = PerToken

    def TableSum(self, expr):
        return float(np.sum(self.visit(expr.args[0])))

    def TableMax(self, expr):
        return float(np.max(self.visit(expr.args[0])))

    def TableMin(self, expr):
        return float(np.min(self.visit(expr.args[0])))

    def MaxBeforeFailure(self, expr):
        xs, oks = self._pairs(expr)
        best = None
        for x, ok in zip(xs, oks):
            if not ok:
                break
            best = x
        if best is None:
            table, column = str(expr.args[0]).split(".", 1)
            raise CapplanError(f"no {table} row meets every SLO (the lowest {column}, "
                               f"{self.show(str(expr.args[0]), xs[0])}, already fails), so it is undefined; "
                               f"sweep lower rates or revisit the SLOs")
        return float(best)

    def MinFailure(self, expr):
        xs, oks = self._pairs(expr)
        for x, ok in zip(xs, oks):
            if not ok:
                return float(x)
        return float(xs[-1])

    def _pairs(self, expr):
        xs = np.asarray(self.visit(expr.args[0]), dtype=float)
        oks = np.asarray(self.visit(expr.args[1]), dtype=float)
        order = np.argsort(xs, kind="stable")
        return xs[order], oks[order] != 0


def _snap(x):
    nearest = np.round(x)
    close = np.abs(x - nearest) <= _SNAP * np.maximum(np.abs(x), 1.0)
    return np.where(close, nearest, x)
