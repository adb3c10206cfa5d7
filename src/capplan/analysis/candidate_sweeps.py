"""λ* of the candidates a ``candidates: evidence:`` file covers, through the plan's own sweep formulas.

A file's rows stand in for the ``load_sweep`` table, and the model's formulas
(``meets_slo``: every SLO column against the scenario's limit, goodput, errors,
delivery; ``instance_max_rate = max_before_failure(...)``; ``compliant_share``)
are evaluated on them with each scenario's inputs, as one small batch per
file and scenario: the knee is the plan's, never a second implementation. A
scenario that tightens an SLO tightens it for every file, the goodput of files
that keep each request recounted at its limits as the plan's own import is
(:func:`capplan.loading.plan.imports.recount_goodput`).

An estimate file predicts one latency per metric for a steady batch, no
distribution over requests, so a goodput SLO (a share of requests meeting
every SLO, request by request) cannot be checked on it: its rows are held to
the latency SLOs, errors and delivery only (:data:`UNCHECKED`), which the
record says with its λ*.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from capplan.engine.evaluate import Evaluation, run_batch
from capplan.engine.graph import build
from capplan.loading.plan import imports
from capplan.language import units
from capplan.loading.plan.candidate_sweeps import ESTIMATED, sweep_switches

SWEEP = ("instance_max_rate", "compliant_share")
UNCHECKED = {"goodput_slo": 0.0}        # what an estimate's rows are not held to (0: no goodput SLO)


def rates(evaluations: list[Evaluation], cands) -> tuple[np.ndarray, np.ndarray]:
    """``(λ*, compliant share)``, each ``(C, S)`` in base units: NaN for a candidate no file covers,
    λ* 0 where no swept rate of its file meets every SLO."""
    n, s = len(cands), len(evaluations)
    lam, share = np.full((n, s), np.nan), np.full((n, s), np.nan)
    items = {id(c.evidence): c.evidence for c in cands if c.evidence is not None}
    if not items:
        return lam, share
    e0 = evaluations[0]
    graph = _graph(e0)
    model = copy.copy(e0.model)
    model.checks = ()                       # the plan's checks read quantities a sweep does not reach
    for j, e in enumerate(evaluations):
        for key, ev in items.items():
            rows = _recounted(e, e0, ev.table) if j else ev.table.rows
            value, compliant = _evaluate(graph, model, e, rows, UNCHECKED if ev.kind == ESTIMATED else {})
            rows = [i for i, c in enumerate(cands) if id(c.evidence) == key]
            lam[rows, j], share[rows, j] = value, compliant
    return lam, share


def _graph(e: Evaluation):
    """The sweep's formulas alone (no scenario pin: a pinned λ* is the plan's configuration's)."""
    graph = build(e.model, sweep_switches(e.plan.switches), frozenset(), nominal=True)
    wanted = set(SWEEP)
    for name in SWEEP:
        wanted.update(graph.upstream(name))
    return replace(graph, order=tuple(n for n in graph.order if n in wanted))


def _recounted(e: Evaluation, nominal: Evaluation, table) -> list[dict]:
    """The file's rows with their goodput counted at scenario ``e``'s SLO limits."""
    rows = [dict(row) for row in table.rows]
    limits = imports.goodput_limits(e.model, e.scenario.inputs)
    if table.runs and limits != imports.goodput_limits(e.model, nominal.scenario.inputs):
        imports.recount_rows(e.model, table.runs, rows, limits)
    return rows


def _evaluate(graph, model, e: Evaluation, rows: list[dict], unchecked: dict) -> tuple[float, float]:
    inputs = {}
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is not None:
            continue
        q = node.quantity
        if q.table == "load_sweep":
            inputs[name] = np.array([[row[q.column] for row in rows]], dtype=float)
        else:
            value = unchecked.get(name, e.values[name] if name in e.values else _sweep_input(e, name))
            inputs[name] = np.asarray(value, dtype=float).reshape((1, -1))
    out, _, _, broken = run_batch(graph, model, inputs, {"load_sweep": len(rows)})
    lam = float(np.asarray(out["instance_max_rate"]).reshape(-1)[0])
    compliant = float(np.asarray(out["compliant_share"]).reshape(-1)[0])
    if bool(np.asarray(broken).any()) or not np.isfinite(lam):
        return 0.0, 0.0
    return lam, compliant if np.isfinite(compliant) else 0.0


def _sweep_input(e: Evaluation, name: str) -> float:
    """An input of the sweep's checks as the scenario gives it, or the model's default where the plan's
    sizing has no such input (``goodput_slo`` under ``sizing: estimate``: a plan without a sweep sets none)."""
    given = e.scenario.inputs.get(name)
    if given is not None:
        return given.value
    q = e.model.quantities[name]
    return units.parse_value(q.default, q.unit)
