"""The float engine at chosen values of the variable: the search's check and its grid.

:func:`evaluate_at` evaluates one scenario with the variable set to a value, so
tests and users can check a flip point against the tool's own evaluation, and a
probe without closed forms reads its decisions there. :func:`batch_at` does the
same at many values in one pass of the batch backend: the bracketing's grid.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from capplan.artifacts.answers import Target
from capplan.engine import unitcheck
from capplan.engine.evaluate import FLEET_LIMIT, Evaluation, evaluate, run_batch
from capplan.engine.exact import rational
from capplan.engine.graph import build
from capplan.errors import CapplanError
from capplan.language import units
from capplan.loading.plan import Input


def evaluate_at(e: Evaluation, variable: Target, value: float, nominal: Evaluation) -> Evaluation:
    """Scenario ``e`` with ``variable`` set to ``value`` (base units; a derived
    quantity is pinned), evaluated by the float engine with today's nominal
    plan fixing the nominal fleet."""
    scenario = e.scenario
    q = e.model.quantities[variable.name]
    if variable.index is None:
        inputs = dict(scenario.inputs)
        given = inputs.get(variable.name)
        inputs[variable.name] = replace(given, value=value) if given else Input(
            variable.name, value, "assumption", scenario.name, pinned=True)
        scenario = replace(scenario, inputs=inputs)
    else:
        tables = dict(scenario.tables)
        table = tables[q.table]
        rows = [dict(r) for r in table.rows]
        rows[variable.index][q.column] = value
        tables[q.table] = replace(table, rows=rows)
        scenario = replace(scenario, tables=tables)
    return evaluate(e.plan, scenario, e.model, nominal)


def batch_at(e: Evaluation, variable: Target, points: list[float], nominal: Evaluation) -> tuple[dict, np.ndarray]:
    """:func:`evaluate_at` at many values of the variable in one pass of the float backend:
    every node ``(points or 1, rows or 1)``, and per point whether the plan certainly
    evaluates there as the scalar engine does (every model check holds, no formula
    failed, every number finite and within what :func:`evaluate` accepts)."""
    scenario, model = e.scenario, e.model
    q = model.quantities[variable.name]
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned) | (
        {variable.name} if variable.index is None and variable.name not in scenario.inputs else set())
    graph = build(model, e.plan.switches, pinned, nominal=False)
    unitcheck.check(model, graph)
    rows = {t: len(d.rows) for t, d in scenario.tables.items()}
    inputs = {}
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is not None or node.quantity.kind == "text":
            continue
        table = node.quantity.table
        inputs[name] = (np.array([[r[node.quantity.column] for r in scenario.tables[table].rows]], dtype=float)
                        if table else np.full((1, 1), scenario.inputs[name].value if name in scenario.inputs
                                              else math.nan))
    moved = np.array(points, dtype=float)[:, None]
    if variable.index is None:
        inputs[variable.name] = moved
    else:
        column = np.repeat(inputs[variable.name], len(points), axis=0)
        column[:, variable.index] = moved[:, 0]
        inputs[variable.name] = column
    decided = {n: np.asarray(v, dtype=float).reshape((1, -1)) for n, v in nominal.values.items()
               if model.quantities[n].kind != "text"}
    try:
        values, holds, _, failed = run_batch(graph, model, inputs, rows, decided)
    except (CapplanError, KeyError):
        return {}, np.zeros(len(points), dtype=bool)           # each point is left to the scalar engine
    ok = np.broadcast_to(holds & ~failed, (len(points), 1))[:, 0].copy()
    with np.errstate(all="ignore"):
        for name in graph.order:
            node = graph.nodes[name]
            kind, unit = node.quantity.kind, node.quantity.unit
            if node.formula is None or kind in ("bool", "text"):
                continue
            limit, value = FLEET_LIMIT if unit == "GPU" else units.LIMIT, values[name]
            fine = np.isfinite(value) & ((np.abs(value) <= limit * units.factor(unit))
                                         | (np.abs(value / units.factor(unit)) <= limit))
            ok &= np.broadcast_to(fine.all(axis=-1), (len(points),))
    return values, ok


def target_value(q, value):
    """A float engine's value as a target's exact value (a truth value, or the float's fraction)."""
    return bool(value) if q.kind == "bool" else rational(float(value), "")
