"""Evaluate a scenario: walk the graph in order and compute every node.

Values are floats in base units; a table column is a numpy array with one
entry per row, so one walker serves both scalar formulas and row-wise
computed columns (scalars broadcast over rows) and table functions reduce a
column to a scalar. The same walker, :class:`Numeric`, is the float backend
of every batch (Monte Carlo draws, the flip search's grids): one more leading
axis on the numbers. The units check (:func:`capplan.engine.unitcheck.check`)
runs first, as a stage of its own; the model's checks (weights sum to 1, the
model fits in memory) run as soon as the values they read exist.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np
import sympy

from capplan import formatting
from capplan.engine import queueing
from capplan.language import units
from capplan.engine import unitcheck
from capplan.engine.failing_row import why_row_fails
from capplan.engine.graph import Graph, build
from capplan.language.model import Model
from capplan.language.walker import Walker
from capplan.errors import CapplanError
from capplan.loading.plan import Input, Plan, Scenario

# ceil/floor treat x within this relative distance of an integer as that integer,
# so float noise (60 / 7.000000000000001) cannot add a GPU; spreadsheets round
# to about 15 significant digits, so the tolerance stays near that.
_SNAP = 1e-14

# The most GPUs a result may count (active, resilient, rented): several times the largest
# clusters built (a few hundred thousand GPUs), so a real plan never meets it, while an input
# chain that makes millions (rho_target 1e-7, 1e-6 req/s per replica) is refused with its cause.
FLEET_LIMIT = 1_000_000


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
            return (value != 0).tolist() if isinstance(value, np.ndarray) else bool(value)
        if isinstance(value, np.ndarray):      # the same division as to_display's, element by element
            return (np.asarray(value, dtype=float) / units.factor(q.unit)).tolist()
        return units.to_display(float(value), q.unit)

    def rows(self, table: str, convert=None) -> list[dict]:
        """A table's rows in display units, each ``{column: value}``; ``convert`` (if given)
        turns each column's list of values into the list shown (the JSON's 12 digits)."""
        cols = [c for c in self.model.tables[table].columns if c in self.values]
        names = [self.model.quantities[c].column for c in cols]
        count = len(self.scenario.tables[table].rows)
        shown = (self.display(c) for c in cols)
        columns = [convert(column) for column in shown] if convert else list(shown)
        return [dict(zip(names, row)) for row, _ in zip(zip(*columns) if cols else [()] * count, range(count))]

    def pending_inputs(self, name: str) -> list[str]:
        return sorted(n for n in self.provenance.get(name, ()) if n in self.inputs and self.inputs[n].pending)


def evaluate(plan: Plan, scenario: Scenario, model: Model, nominal: Evaluation | None = None) -> Evaluation:
    """Evaluate one scenario; every scenario but the nominal one needs the
    nominal evaluation, whose values ``nominal(...)`` reads."""
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned)
    try:
        graph = build(model, plan.switches, pinned, nominal=nominal is None)
        unitcheck.check(model, graph)
    except CapplanError as err:
        raise err.located(file=plan.file) from None
    values: dict[str, object] = {}
    nominal_values = values if nominal is None else nominal.values
    used: dict[str, Input] = {}
    checks_after = _checks_after(model, graph)
    # A scenario under the nominal formulas computes only what its changed values reach: a formula
    # whose dependencies all hold the nominal values gives the nominal value, bit for bit.
    base = nominal.values if nominal is not None and graph.same_formulas(nominal.graph) else None
    changed: set[str] = set()
    for name in graph.order:
        node = graph.nodes[name]
        q = node.quantity
        reused = base is not None and node.formula is not None and not any(d in changed for d in node.deps)
        if reused:
            values[name] = base[name].copy() if isinstance(base[name], np.ndarray) else base[name]
        elif q.table:
            rows = scenario.tables[q.table].rows
            if node.formula is None:
                column = [row[q.column] for row in rows]
                values[name] = column if q.kind == "text" else np.array(column, dtype=float)
            else:
                result = _compute(name, node, values, nominal_values, plan, scenario, model, graph)
                values[name] = np.broadcast_to(np.asarray(result, dtype=float), (len(rows),)).copy()
                _check_plausible(name, node, values, nominal_values, plan, scenario, model, graph)
        elif node.formula is None:
            item = scenario.inputs[name]
            used[name] = item
            values[name] = item.value
        else:
            values[name] = float(_compute(name, node, values, nominal_values, plan, scenario, model, graph))
            _check_plausible(name, node, values, nominal_values, plan, scenario, model, graph)
        if base is not None and not reused and not _identical(values[name], base[name]):
            changed.add(name)
        if name in checks_after:
            _run_checks(checks_after[name], values, nominal_values, model, plan, scenario)
    return Evaluation(plan, scenario, model, graph, values, used, _provenance(graph))


_PROVENANCES: dict[int, tuple[Graph, dict[str, frozenset[str]]]] = {}   # id(graph) -> (graph, its provenance)


def _provenance(graph: Graph) -> dict[str, frozenset[str]]:
    """Each node's scalar inputs and tables: a property of the graph, so found once per graph
    (every scenario under the same switches and pins shares it; nobody changes it)."""
    known = _PROVENANCES.get(id(graph))
    if known is not None and known[0] is graph:
        return known[1]
    provenance: dict[str, frozenset[str]] = {}
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is not None:
            provenance[name] = frozenset().union(*(provenance[d] for d in node.deps)) if node.deps else frozenset()
        else:
            provenance[name] = frozenset([node.quantity.table or name])
    if len(_PROVENANCES) >= 64:          # as many as graph.build keeps: a graph no longer built goes
        del _PROVENANCES[next(iter(_PROVENANCES))]
    _PROVENANCES[id(graph)] = (graph, provenance)
    return provenance


def _identical(a, b) -> bool:
    """The same value to the bit (a sign of zero included; NaN is never the same: it is computed again)."""
    if type(a) is float and type(b) is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list) or isinstance(b, list):
        return a == b
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype == np.float64 and a.shape == b.shape:
        # the same bits are the same value, a sign of zero included; NaN is never the same
        return a.tobytes() == b.tobytes() and not np.isnan(a).any()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(a == b)) and bool(np.all(np.signbit(a) == np.signbit(b)))


def evaluate_nominal(plan: Plan, model: Model) -> Evaluation:
    """The plan's nominal scenario alone, in the model of the plan's SLOs."""
    return evaluate(plan, plan.nominal, model.with_slos(plan.slos))


def evaluate_all(plan: Plan, model: Model) -> list[Evaluation]:
    """Every scenario of a plan, nominal first (the others read it through nominal()),
    in the model of the plan's SLOs."""
    nominal = evaluate_nominal(plan, model)
    model = nominal.model
    others = plan.scenarios[1:]
    batched = _batched(plan, others, model, nominal)
    return [nominal] + [batched.get(i) or evaluate(plan, s, model, nominal) for i, s in enumerate(others)]


# Scenarios under one graph from which they are evaluated as one batch: below, the batch's fixed
# cost (every node computed, where a scenario alone recomputes only what its changes reach) wins nothing.
BATCH_FROM = 16
BATCH_CELLS = 2_000_000     # table cells per column of a batch at most (16 MB): a batch beside the scenarios' own copies


def _batched(plan: Plan, scenarios: list[Scenario], model: Model, nominal: Evaluation) -> dict[int, Evaluation]:
    """The scenarios (by index) that a batch evaluates cleanly: those that share a graph (the
    same pins; the same rows per table) evaluated in one walk of it, each scenario a member of
    the batch. The float backend runs the same operations on a batch as on one scenario, so each
    member's values are the scalar evaluation's to the bit. A member the scalar evaluation might
    stop at — a formula that fails, a model check that fails, a value that is not finite or too
    large — is left out, for :func:`evaluate` to evaluate alone, with its message, in plan order."""
    groups: dict[tuple, tuple[Graph, list[int]]] = {}
    for i, scenario in enumerate(scenarios):
        pinned = frozenset(n for n, given in scenario.inputs.items() if given.pinned)
        try:
            graph = build(model, plan.switches, pinned, nominal=False)
        except CapplanError:
            continue                    # evaluate() reports it, at its turn
        shape = tuple(sorted((t, len(data.rows)) for t, data in scenario.tables.items()))
        groups.setdefault((id(graph), shape), (graph, []))[1].append(i)
    done: dict[int, Evaluation] = {}
    for graph, members in groups.values():
        if len(members) < BATCH_FROM:
            continue
        try:
            unitcheck.check(model, graph)
        except CapplanError:
            continue
        cells = sum(len(data.rows) for data in scenarios[members[0]].tables.values())
        step = max(BATCH_FROM, BATCH_CELLS // max(cells, 1))      # a year's profile: some hundred at a time
        for first in range(0, len(members), step):
            chunk = members[first:first + step]
            evaluated = _batch(plan, [scenarios[i] for i in chunk], graph, model, nominal)
            done.update((chunk[j], e) for j, e in evaluated.items())
    return done


def _batch(plan: Plan, scenarios: list[Scenario], graph: Graph, model: Model,
           nominal: Evaluation) -> dict[int, Evaluation]:
    """One graph's scenarios as one batch: member j's Evaluation, for each member that evaluates cleanly."""
    size = len(scenarios)
    inputs: dict[str, object] = {}
    for q in (graph.nodes[n].quantity for n in graph.order if graph.nodes[n].formula is None):
        if q.kind == "text":
            continue                    # no formula computes with text
        if q.table:
            inputs[q.name] = np.array([[row[q.column] for row in s.tables[q.table].rows] for s in scenarios],
                                      dtype=float)
        else:
            inputs[q.name] = np.array([[s.inputs[q.name].value] for s in scenarios], dtype=float)
    rows = {t: len(scenarios[0].tables[t].rows) for t in {graph.nodes[n].quantity.table for n in graph.order} - {None}}
    values = dict(inputs)
    walker = Numeric(values, nominal.values, batch=True)
    stops = np.zeros((size, 1), dtype=bool)
    try:
        with np.errstate(all="ignore"):
            for node in _walk_batch(graph, walker, values, rows):
                value = values[node.name]
                if value.ndim != 2 or value.shape[0] not in (1, size) or (not node.quantity.table and value.shape[1] != 1):
                    return {}
                if node.quantity.kind not in ("bool", "text"):
                    stops = stops | _implausible(value, node.quantity)
            for check, deps in zip(model.checks, graph.check_deps):
                if deps is not None and all(d in graph.nodes for d in deps):
                    stops = stops | _members(np.asarray(walker.visit(check.require.expr)) == 0)
    except (CapplanError, KeyError, TypeError, ValueError):
        return {}                       # something a batch does not take: each scenario alone
    stops = np.broadcast_to(stops | walker.failed, (size, 1))
    provenance = _provenance(graph)
    # a scalar formula's members as Python floats, all at once (tolist: float() of each, exactly)
    scalars = {n: values[n][:, 0].astype(float).tolist() for n in graph.order
               if graph.nodes[n].formula is not None and not graph.nodes[n].quantity.table}
    evaluated = {}
    for j, scenario in enumerate(scenarios):
        if stops[j, 0]:
            continue
        member: dict[str, object] = {}
        used: dict[str, Input] = {}
        for name in graph.order:
            node = graph.nodes[name]
            q = node.quantity
            if name in scalars:
                column = scalars[name]
                member[name] = column[j] if len(column) > 1 else column[0]
            elif node.formula is not None:
                value = values[name]
                member[name] = (value[j] if value.shape[0] > 1 else value[0]).copy()
            elif q.table:
                # the batch's input row: the same floats np.array(column, dtype=float) makes
                member[name] = [row[q.column] for row in scenario.tables[q.table].rows] if q.kind == "text" \
                    else inputs[name][j].copy()
            else:
                used[name] = scenario.inputs[name]
                member[name] = used[name].value
        evaluated[j] = Evaluation(plan, scenario, model, graph, member, used, provenance)
    return evaluated


def _implausible(value: np.ndarray, q) -> np.ndarray:
    """Per batch member, whether a value might be one :func:`_check_plausible` refuses (not
    finite, or near the largest a count or an amount may be): those are evaluated alone."""
    limit = (FLEET_LIMIT if q.unit == "GPU" else units.LIMIT) * units.factor(q.unit) * 0.999
    return _members(~np.isfinite(value) | (np.abs(value) > limit))


def run_batch(graph: Graph, model: Model, inputs: dict[str, np.ndarray], rows: dict[str, int],
              nominal: dict[str, np.ndarray] | None = None) -> tuple[dict, np.ndarray, list, np.ndarray]:
    """Every node of a graph over a batch: the inputs are ``(B, 1)`` for a scalar and
    ``(B, rows)`` for a column (B may be 1 for a value no member of the batch moves;
    ``rows`` counts each table's rows). Returns the values, per member whether every
    model check holds, per check where it fails, and the members where a formula met
    what stops a scalar evaluation (a division by zero, no sweep row passing; each
    ``(B or 1, 1)``). Such a member holds NaN where the scalar evaluation would stop,
    unless a later formula hides it (``min(1/x, 5)``), which the last mask tells."""
    values = dict(inputs)
    nominal = values if nominal is None else nominal
    walker = Numeric(values, nominal, batch=True)
    with np.errstate(all="ignore"):
        for _ in _walk_batch(graph, walker, values, rows):
            pass
        holds = np.ones((1, 1), dtype=bool)
        failed = []
        for check, deps in zip(model.checks, graph.check_deps):
            if deps is None:                    # not part of a plan with these switches: never fails
                failed.append(np.zeros((1, 1), dtype=bool))
                continue
            passes = np.asarray(walker.visit(check.require.expr)) != 0
            passes = passes.reshape((1, 1)) if passes.ndim == 0 else passes
            holds = holds & passes
            failed.append(~passes)
    return values, holds, failed, walker.failed


def over_draws(graph: Graph, inputs: dict[str, np.ndarray], rows: dict[str, int], name: str, sources):
    """``name`` over draws of the inputs ``sources``: what they do not move is evaluated here, once,
    over the batch ``inputs`` (``(B or 1, …)``); the function returned takes ``tile`` draws (each
    source ``(tile·B, …)``, member ``i`` of draw ``d`` in row ``d·B + i``) and evaluates only the
    formulas they move, no checks. Each row is the one :func:`run_batch` gives over the inputs
    tiled: the same operations on the same numbers."""
    fixed, moved = graph.split((name,), sources)
    values = _formulas(fixed, dict(inputs), rows)
    read = ({name, *(d for n in moved.order for d in graph.nodes[n].deps)} - set(moved.order)) - set(sources)
    once = {n: values[n] for n in read}

    def run(tile: int, drawn: dict[str, np.ndarray]) -> np.ndarray:
        given = {n: (np.tile(v, (tile, 1)) if v.shape[0] > 1 else v) for n, v in once.items()}
        return _formulas(moved, {**given, **drawn}, rows)[name]
    return run


def _formulas(graph: Graph, values: dict, rows: dict[str, int]) -> dict:
    """The formula nodes of a graph over a batch, put in ``values`` (the nominal values are these)."""
    with np.errstate(all="ignore"):
        for _ in _walk_batch(graph, Numeric(values, values, batch=True), values, rows):
            pass
    return values


def _walk_batch(graph: Graph, walker: Numeric, values: dict, rows: dict[str, int]):
    """Each formula node over a batch, in the graph's order, its value put in ``values``
    (``(B or 1, 1)``, or ``(B or 1, rows)`` in a table); yields each node once it is there."""
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is None:
            continue
        result = np.asarray(walker.visit(node.formula.expr), dtype=float)
        result = result.reshape((1, 1)) if result.ndim == 0 else result
        table = node.quantity.table
        values[name] = np.broadcast_to(result, (result.shape[0], rows[table])) if table else result
        yield node


def scenario_prefix(plan: Plan, scenario: Scenario) -> str:
    return "" if scenario.name == "nominal" else f"scenario {scenario.name}: "


def _compute(name, node, values, nominal_values, plan, scenario, model, graph):
    numeric = _numeric(values, nominal_values, model, graph)
    try:
        with np.errstate(all="ignore"):
            return numeric.visit(node.formula.expr)
    except DivisionByZero as err:
        # Follow the zero down through derived quantities to the input that is 0,
        # and point at the line where the plan (or the scenario) wrote it.
        chain = _zero_chain(err.symbol, err.row, numeric, graph)
        because = f", because {' is 0, because '.join(chain[1:])} is 0" if len(chain) > 1 else ""
        last = graph.nodes.get(chain[-1]) if chain else None
        if last is not None and last.formula is not None:      # a zero no single input makes (a floor, a sum)
            because += f" (= {last.formula.text})"
        key, line = _locate(chain[-1], err.row, plan, scenario)
        raise CapplanError(f"{scenario_prefix(plan, scenario)}{name} = {node.formula.text}: division by zero: "
                           f"{chain[0]} is 0{because}{_origin(chain[-1], scenario)}",
                           file=plan.file, key=key or name, line=line or plan.line(name)) from None
    except CapplanError as err:
        raise CapplanError(f"{scenario_prefix(plan, scenario)}{name} = {node.formula.text}: {err.message}",
                           file=plan.file, key=name, line=plan.line(name)) from None


def _zero_chain(symbol: str | None, row, numeric: Numeric, graph: Graph) -> list[str]:
    """The quantities a zero divisor flows through, from the divisor to the input that is 0.

    A zero ``hbm_efficiency`` makes the divisor ``hbm_bandwidth * gpus_per_replica
    * hbm_efficiency`` zero: the chain is ``[hbm_efficiency]``. A pinned
    ``avg_arrival_rate: 0`` makes ``monthly_output_tokens`` zero through
    ``monthly_requests``: a derived quantity that is 0 is followed into its
    formula while one factor of it is 0.
    """
    chain = [symbol] if symbol else []
    while chain and (node := graph.nodes.get(chain[-1])) is not None and node.formula is not None:
        factor = numeric.zero_factor(node.formula.expr, row)
        if factor is None:
            break
        chain.append(factor)
    return chain


def _locate(name: str, row, plan: Plan, scenario: Scenario) -> tuple[str | None, int | None]:
    """The key and line where the plan wrote an input (a scalar, or a table cell in ``row``)."""
    if "." in name:
        table, column = name.split(".", 1)
        data = scenario.tables.get(table)
        if data is None or row is None or row >= len(data.lines):
            return None, None
        return f"tables.{table}.rows[{row}].{column}", data.lines[row]
    given = scenario.inputs.get(name)
    if given is None or given.line is None:
        return None, None
    section = "inputs" if given.origin == "plan" else f"scenarios.{given.origin}.set"
    return f"{section}.{name}", given.line


def _origin(name: str, scenario: Scenario) -> str:
    """Where an input not written in the plan came from (the catalog, the model's default)."""
    given = scenario.inputs.get(name)
    if given is None or given.origin not in ("catalog", "default"):
        return ""
    return f" ({given.source})" if given.source else ""


def _check_plausible(name, node, values, nominal_values, plan, scenario, model, graph) -> None:
    """Refuse a result no number can hold: one that overflowed to infinity (or NaN)
    from finite inputs, or whose magnitude in its display unit passes 2**53, where a
    float no longer holds every whole number (a GPU count, cents); and a fleet of more
    than :data:`FLEET_LIMIT` GPUs, which no plan means (``rho_target: 1e-7`` makes 60
    million). The message names the input chain that caused it, following at each step
    the most extreme input."""
    q = node.quantity
    if q.kind in ("bool", "text"):
        return
    value = values[name]
    limit = FLEET_LIMIT if q.unit == "GPU" else units.LIMIT
    if isinstance(value, float) and abs(value) <= limit * units.factor(q.unit):
        return      # the common case, without numpy (NaN fails the comparison and is looked at below)
    shown = np.atleast_1d(np.asarray(value, dtype=float)) / units.factor(q.unit)
    finite = np.isfinite(shown)
    if finite.all() and np.abs(shown).max(initial=0) <= limit:
        return
    # NaN or infinity is this formula's doing only when everything it read was finite
    # (a missing optional sweep column is NaN, and stays so downstream).
    finite_deps = all(np.all(np.isfinite(np.asarray(values.get(d, nominal_values.get(d, 0.0)), dtype=float)))
                      for d in node.deps if model.quantities[d].kind != "text")
    overflow = ~finite if finite_deps else np.zeros(shown.shape, bool)
    huge = finite & (np.abs(np.where(finite, shown, 0)) > limit)
    bad = np.flatnonzero(overflow | huge)
    if not bad.size:
        return
    row = int(bad[0]) if q.table else None
    value = shown[bad[0]]
    key, line, cause = _cause(name, row, values, nominal_values, plan, scenario, model, graph)
    where = f" (row {scenario.tables[q.table].rows[row].get(model.tables[q.table].key)})" if q.table else ""
    if np.isfinite(value) and abs(value) <= units.LIMIT:
        raise CapplanError(f"{scenario_prefix(plan, scenario)}{name}{where} = {node.formula.text} is {value:.3g} GPUs, "
                           f"more than the {FLEET_LIMIT:,} GPUs of any fleet a plan sizes{cause}",
                           file=plan.file, key=key or name, line=line or plan.line(name))
    what = ("overflows (no number holds it)" if not np.isfinite(value) else
            f"is {value:.4g} {formatting.unit_label(q.unit)}".rstrip() + f", beyond ±2^53 ({units.LIMIT:,})")
    raise CapplanError(f"{scenario_prefix(plan, scenario)}{name}{where} = {node.formula.text} {what}: no count or "
                       f"amount can be held exactly{cause}", file=plan.file, key=key or name,
                       line=line or plan.line(name))


def _cause(name, row, values, nominal_values, plan, scenario, model, graph) -> tuple[str | None, int | None, str]:
    """Where the most extreme input behind ``name`` is written, and '; it comes from X through Y, Z'."""
    chain = _extreme_chain(name, row, values, nominal_values, model, graph)
    key, line = _locate(chain[-1], row, plan, scenario)
    steps = [f"{n} = {_brief(n, row, values, nominal_values, model)}" for n in chain[1:]]
    origin = (f"; it comes from {steps[-1]}{_origin(chain[-1], scenario)}"
              + (f" through {', '.join(reversed(steps[:-1]))}" if len(steps) > 1 else "")) if steps else ""
    return key, line, origin


def _extreme_chain(name, row, values, nominal_values, model, graph) -> list[str]:
    """From ``name`` down to an input, each step to the dependency furthest from 1 in
    order of magnitude (a rate of 1e-300 req/s, a price of 1e15 USD/h)."""
    chain = [name]
    while (node := graph.nodes.get(chain[-1])) is not None and node.deps:
        scored = [(_extremeness(d, row, values, nominal_values, model), d) for d in node.deps
                  if model.quantities[d].kind not in ("bool", "text") and d not in chain]
        if not scored:
            break
        chain.append(max(scored)[1])
    return chain


def _value_at(name, row, values, nominal_values, model) -> float:
    value = np.asarray(values.get(name, nominal_values.get(name, math.nan)), dtype=float)
    if value.ndim and row is not None and row < value.size:
        value = value[row]
    elif value.ndim:
        value = value.flat[0] if value.size else math.nan
    return float(value) / units.factor(model.quantities[name].unit)


def _extremeness(name, row, values, nominal_values, model) -> float:
    value = abs(_value_at(name, row, values, nominal_values, model))
    if math.isnan(value):
        return -1.0
    if math.isinf(value):
        return math.inf
    return abs(math.log10(value)) if value else -1.0


def _brief(name, row, values, nominal_values, model) -> str:
    q = model.quantities[name]
    return f"{_value_at(name, row, values, nominal_values, model):.4g} {formatting.unit_label(q.unit)}".rstrip()


def _checks_after(model: Model, graph: Graph) -> dict[str, list]:
    """Each model check under the node after which every value it reads exists: a check
    runs as soon as it can, in the model's order among those ready at once, and one
    reading a value the graph lacks never runs. Found once per scenario instead of
    asking every check after every node whether it can run yet."""
    position = {name: i for i, name in enumerate(graph.order)}
    after: dict[str, list] = {}
    for check, deps in zip(model.checks, graph.check_deps):
        if deps is not None and graph.order and all(d in position for d in deps):
            last = max((position[d] for d in deps), default=0)
            after.setdefault(graph.order[last], []).append(check)
    return after


def _run_checks(checks, values, nominal_values, model, plan, scenario) -> None:
    for check in checks:
        if not _numeric(values, nominal_values, model).visit(check.require.expr):
            message = re.sub(r"\{(\w+)\}", lambda m: _show(m.group(1), values[m.group(1)], model), check.message)
            key, line = check.key, plan.line(check.key)
            rows = _failing_rows(check, values, nominal_values, model) if check.by_row else []
            if rows:
                table = check.key.removeprefix("tables.")
                names = [str(scenario.tables[table].rows[r].get(model.tables[table].key)) for r in rows]
                key, line = f"{check.key}.rows[{rows[0]}]", plan.doc.line(("tables", table, "rows", rows[0])) or line
                message = f"{table} row{'s' if len(rows) > 1 else ''} {', '.join(names)}: {message}"
            raise CapplanError(f"{scenario_prefix(plan, scenario)}{message}", file=plan.file, key=key, line=line)


def _failing_rows(check, values, nominal_values, model) -> list[int]:
    """The rows of a ``by_row`` check's table (its key, ``tables.deployments``) on which it fails
    alone: each row's columns in place of the table's, the scalars as they are."""
    table = model.tables[check.key.removeprefix("tables.")]
    count = len(values[table.columns[0]]) if table.columns[0] in values else 0
    out = []
    for r in range(count):
        one = {n: (v[r:r + 1] if n in table.columns else v) for n, v in values.items()}
        if not _numeric(one, nominal_values, model).visit(check.require.expr):
            out.append(r)
    return out


def _show(name, value, model) -> str:
    q = model.quantities[name]
    return formatting.quantity(units.to_display(float(value), q.unit), q.unit, q.kind)


def _numeric(values, nominal_values, model, graph: Graph | None = None) -> Numeric:
    """The float backend over one scenario's values; with ``graph``, a sweep none of whose
    rows passes is explained from the model's formulas (which check failed, by how much)."""
    def show(name, value):
        return _show(name, value, model)

    if graph is None:
        return Numeric(values, nominal_values, show)

    def why(ok, row):          # only when the message is written: this runs for every formula node
        formulas = {n: node.formula for n, node in graph.nodes.items()}
        return why_row_fails(formulas, ok, row, values, show)

    return Numeric(values, nominal_values, show, why=why)


class DivisionByZero(CapplanError):
    """A formula divides by a value that is 0 (``symbol``, in table row ``row``)."""

    def __init__(self, symbol: str | None, row: int | None, expr):
        super().__init__(f"division by zero: {symbol or expr} is 0", key=symbol)
        self.symbol = symbol
        self.row = row


def _reduced(result):
    """A 0-d result as a float: a scalar evaluation keeps Python floats (cheap arithmetic)."""
    return result if np.ndim(result) else float(result)


def _fold(op):
    """An n-ary max/min over scalars and table columns alike (scalars broadcast over rows)."""
    def folded(*args):
        parts = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in args))
        return _reduced(np.asarray(functools.reduce(op, parts), dtype=float))
    return folded


def _rows(reduce):
    """A table function: reduce the rows (the last axis) of a column; a batch keeps its
    leading axis, ``(B, rows) -> (B, 1)``; a scalar evaluation's 1-D column gives a float."""
    def over_rows(x):
        x = np.asarray(x, dtype=float)
        return reduce(x, axis=-1, keepdims=True) if x.ndim > 1 else float(reduce(x))
    return over_rows


def _ordered(xs, oks):
    """Sweep rows in increasing x."""
    xs, oks = np.broadcast_arrays(np.atleast_1d(np.asarray(xs, dtype=float)), np.atleast_1d(np.asarray(oks) != 0))
    order = np.argsort(xs, axis=-1, kind="stable")
    return np.take_along_axis(xs, order, -1), np.take_along_axis(oks, order, -1)


def _first_failure(oks):
    """Index of the first failing row, or the row count when every row passes."""
    failed = ~oks
    return np.where(failed.any(axis=-1, keepdims=True), np.argmax(failed, axis=-1)[..., None], oks.shape[-1])


def _members(where):
    """Per batch member whether ``where`` holds in any of its rows."""
    where = np.asarray(where, dtype=bool)
    return where.any(axis=-1, keepdims=True) if where.ndim > 1 else where.any()


class Numeric(Walker):
    """The float backend: numbers for a formula tree in base units, over a leading batch axis.

    A scalar evaluation (:func:`evaluate`) holds a scalar as a float and a table
    column as a 1-D array, and stops at a value no number can hold with an error
    that says why (a division by zero, a sweep where no row passes). A batch
    (``batch=True``: Monte Carlo draws, a grid of one input) holds a scalar as
    ``(B, 1)`` and a column as ``(B, rows)``; table functions reduce the last axis,
    and a member of the batch the plan does not evaluate at is NaN. Both run the
    same operations in the same order (sums and products folded left to right,
    ``ceil``/``floor`` snapped), so a batch member equals the scalar evaluation
    to the last bit.
    """

    known_functions = {
        "ceiling": lambda x: np.ceil(_snap(x)),
        "floor": lambda x: np.floor(_snap(x)),
        "Abs": np.abs,
        "Max": _fold(np.maximum),
        "Min": _fold(np.minimum),
        "TableSum": _rows(np.sum),
        "TableMax": _rows(np.max),
        "TableMin": _rows(np.min),
        "PerUnit": lambda x: x,       # token and GPU are base units: the number stays
        "log": np.log,
    }

    def __init__(self, values, nominal_values=None, show=None, batch: bool = False, why=None):
        self.values = values
        self.nominal_values = values if nominal_values is None else nominal_values
        self.show = show or (lambda name, value: f"{value:g}")
        self.batch = batch
        self.why = why or (lambda ok, row: "")     # why sweep row ``row`` of column ``ok`` fails, in words
        self.guarded = 0      # > 0 inside an if() branch, where a division by zero may go unused
        self.failed = np.zeros((1, 1), dtype=bool)   # batch members where the scalar evaluation would stop

    def _fail(self, where) -> None:
        """Mark the batch members where ``where`` holds (any row) as ones the plan does not evaluate at."""
        self.failed = self.failed | _members(where)

    def number(self, value):
        return float(value)

    def _print_Symbol(self, expr):
        return self.values[expr.name]

    def _print_Add(self, expr):
        total = self.visit(expr.args[0])
        for term in expr.args[1:]:
            total = total + self.visit(term)
        return total

    def _print_Mul(self, expr):
        product = 1.0
        for factor in expr.args:
            product = product * self.visit(factor)
        return product

    def _print_Pow(self, expr):
        base, exponent = (self.visit(a) for a in expr.args)
        if self.batch and not self.guarded:
            self._fail(_members(np.asarray(base) == 0) & _members(np.asarray(exponent) < 0))
        elif not self.guarded and np.any(np.asarray(base) == 0) and np.any(np.asarray(exponent) < 0):
            zeros = np.flatnonzero(np.atleast_1d(np.asarray(base)) == 0)
            row = int(zeros[0]) if np.ndim(base) else None
            raise DivisionByZero(self.zero_factor(expr.args[0], row), row, expr.args[0])
        return np.power(base, exponent)

    def zero_factor(self, expr, row) -> str | None:
        """The name whose 0 makes ``expr`` 0: ``expr`` itself, one factor of a
        product, or the base of a positive power (in table row ``row``)."""
        while True:
            if isinstance(expr, sympy.Symbol):
                return expr.name if self._is_zero(expr, row) else None
            if isinstance(expr, sympy.Pow) and expr.args[1].is_positive:
                expr = expr.args[0]
            elif isinstance(expr, sympy.Mul):
                expr = next((f for f in expr.args if self._is_zero(f, row)), None)
                if expr is None:
                    return None
            else:
                return None

    def _is_zero(self, expr, row) -> bool:
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(self.visit(expr), dtype=float)
        except (CapplanError, KeyError):
            return False
        if value.ndim and row is not None:
            return bool(value[row] == 0)
        return bool(np.all(value == 0))

    def _print_Relational(self, expr):
        return _reduced(compare(expr.rel_op, *(self.visit(x) for x in expr.args)).astype(float))

    def _print_And(self, expr):
        return self._logical(np.logical_and, expr)

    def _print_Or(self, expr):
        return self._logical(np.logical_or, expr)

    def _logical(self, op, expr):
        parts = np.broadcast_arrays(*(np.asarray(self.visit(a)) != 0 for a in expr.args))
        return _reduced(np.asarray(functools.reduce(op, parts), dtype=float))

    def _print_Not(self, expr):
        return _reduced((np.asarray(self.visit(expr.args[0])) == 0).astype(float))

    def _print_Piecewise(self, expr):
        (then, cond), (otherwise, _) = expr.args
        chosen = np.asarray(self.visit(cond)) != 0
        self.guarded += 1
        try:
            a, b = self.visit(then), self.visit(otherwise)
        finally:
            self.guarded -= 1
        result = np.where(chosen, a, b)
        if self.batch:
            self._fail(~np.isfinite(result))
        elif not np.all(np.isfinite(result)):
            raise CapplanError("division by zero in the branch if() chose")
        return _reduced(result)

    def _print_Nominal(self, expr):
        return self.nominal_values[expr.args[0].name]

    def _print_ErlangC(self, expr):
        return self._queueing(expr, queueing.erlang_c, "a whole number of servers", whole=True)

    def _print_PoissonExceeds(self, expr):
        return self._queueing(expr, queueing.poisson_exceeds, "a count", whole=False)

    def _queueing(self, expr, function, first: str, whole: bool):
        """A queueing function on its two arguments, outside its domain (below 0, not a
        number; for erlang_c servers that are not whole) refused, or NaN in a batch."""
        a, b = np.broadcast_arrays(*(np.asarray(self.visit(x), dtype=float) for x in expr.args))
        a = _snap(a)
        if self.batch:
            bad = (a < 0) | (b < 0) | ~np.isfinite(a) | ~np.isfinite(b)
        else:
            bad = (a < 0) | (b < 0) | np.isnan(a) | np.isnan(b)
        if whole:
            bad = bad | (a != np.floor(a))
        if self.batch:
            self._fail(bad)
            return np.where(bad, np.nan, function(np.where(bad, 0.0, a), np.where(bad, 0.0, b)))
        if np.any(bad):
            i = np.flatnonzero(bad)[0]
            x, y = float(a.flat[i]), float(b.flat[i])
            raise CapplanError(f"{expr.call}() needs {first} and a value of at least 0, got {x:g} and {y:g}")
        return function(a, b) if a.ndim else function(float(a), float(b))

    def _rows_back(self, expr):
        """A row-window function's column (a scalar is a one-row column), its count of rows
        (whole and at least 0: refused, or NaN members in a batch, otherwise) and whether
        the argument was a column."""
        value = self.visit(expr.args[0])
        k = _snap(np.asarray(self.visit(expr.args[1]), dtype=float))
        bad = ~np.isfinite(k) | (k < 0) | (k != np.floor(k))
        if np.any(bad):
            if not self.batch:
                raise CapplanError(f"{expr.func.__name__}() counts whole rows of at least 0, got {float(np.max(k)):g}")
            self._fail(bad)
            k = np.where(bad, 0.0, k)
        x = np.atleast_1d(np.asarray(value, dtype=float))
        return x, k, np.ndim(value) > 0

    def _shaped(self, result, column: bool):
        return (result if self.batch else _reduced(result)) if column else float(result.flat[0])

    def _window(self, expr, op):
        """x over this row and the k before it, reduced by ``op`` (rows before the first are the
        first row's value, so a window is clipped at it). In O(n log n), whatever k: level j
        holds each row's window of 2^j rows, and a window of w rows is two overlapping windows
        of the largest 2^j ≤ w (max and min do not mind the overlap). Walking the k rows one
        by one took n·k steps: a plan's 100,000-row profile with a long lag would not finish."""
        x, k, column = self._rows_back(expr)
        x, k = np.broadcast_arrays(x, k)
        rows = np.arange(x.shape[-1])
        width = np.minimum(k.astype(np.int64), rows) + 1            # rows in each window, clipped at the first
        level = np.frexp(width)[1] - 1                              # the largest j with 2^j <= width
        levels = [x]
        while len(levels) <= int(np.max(level, initial=0)):
            levels.append(op(levels[-1], _shifted(levels[-1], 1 << (len(levels) - 1))))
        result = x
        for j, rows_j in enumerate(levels):
            start = rows - width + (1 << j)                         # the second window's last row
            pair = op(rows_j, np.take_along_axis(rows_j, np.clip(start, 0, len(rows) - 1), axis=-1))
            result = np.where(level == j, pair, result)
        return self._shaped(result, column)

    def _print_WindowMax(self, expr):
        return self._window(expr, np.maximum)

    def _print_WindowMin(self, expr):
        return self._window(expr, np.minimum)

    def _print_Lag(self, expr):
        x, k, column = self._rows_back(expr)
        x, k = np.broadcast_arrays(x, k)
        rows = np.maximum(np.arange(x.shape[-1]) - k.astype(np.int64), 0)
        return self._shaped(np.take_along_axis(x, rows, -1), column)

    def _print_KthLargest(self, expr):
        """The k-th largest row of a column (1: its maximum), for each k of a column of another
        table too; k outside 1..rows is refused, or NaN in a batch."""
        x, k, _ = self._rows_back(expr)
        n = x.shape[-1]
        bad = (k < 1) | (k > n)
        if np.any(bad) and not self.batch:
            raise CapplanError(f"kth_largest() needs k from 1 to the {n} rows, got {float(np.max(k)):g}")
        ordered = -np.sort(-x, axis=-1)
        index = np.clip(k, 1, n).astype(np.int64) - 1
        if not self.batch:
            return ordered[index] if np.ndim(index) else float(ordered[int(index)])
        self._fail(bad)
        index = np.atleast_2d(index)
        lead = np.broadcast_shapes(ordered.shape[:-1], index.shape[:-1])
        picked = np.take_along_axis(np.broadcast_to(ordered, lead + (n,)),
                                    np.broadcast_to(index, lead + index.shape[-1:]), -1)
        return np.where(bad, np.nan, picked)

    def _print_SumAbove(self, expr):
        """Σ_rows max(x − level, 0), one sum per level (a scalar, or each row of another table)."""
        x = np.atleast_1d(np.asarray(self.visit(expr.args[0]), dtype=float))
        level = np.asarray(self.visit(expr.args[1]), dtype=float)
        if not self.batch:
            excess = np.maximum(x - level[..., None], 0.0).sum(axis=-1)
            return excess if np.ndim(excess) else float(excess)
        return np.maximum(x[..., None, :] - np.atleast_2d(level)[..., None], 0.0).sum(axis=-1)

    def _print_MaxBeforeFailure(self, expr):
        """λ*: the x before the first failing row; undefined (NaN in a batch) when the first row fails."""
        xs, oks = self._sweep(expr)
        first = _first_failure(oks)
        best = np.where(first > 0, np.take_along_axis(xs, np.maximum(first - 1, 0), -1), np.nan)
        if self.batch:
            self._fail(first == 0)
            return best
        if not first[0]:
            table, column = str(expr.args[0]).split(".", 1)
            lowest = int(np.argmin(np.asarray(self.visit(expr.args[0]), dtype=float)))
            why = self.why(str(expr.args[1]), lowest)
            raise CapplanError(f"no {table} row meets every SLO (the lowest {column}, "
                               f"{self.show(str(expr.args[0]), xs[0])}, already fails"
                               f"{': ' + why if why else ''}), so it is undefined; "
                               f"sweep lower rates or revisit the SLOs")
        return float(best[0])

    def _print_MinFailure(self, expr):
        """The top of the knee bracket: the first failing x, or the highest x when none fails."""
        xs, oks = self._sweep(expr)
        top = np.take_along_axis(xs, np.minimum(_first_failure(oks), oks.shape[-1] - 1), -1)
        return top if self.batch else float(top[0])

    def _sweep(self, expr):
        return _ordered(self.visit(expr.args[0]), self.visit(expr.args[1]))


def compare(op: str, a, b) -> np.ndarray:
    """``a op b`` where two numbers within ``_SNAP`` of each other (relative) are equal:
    float noise must not decide a comparison any more than a ceil. 1998 replicas at
    400/1998 req/s each carry 399.99999999999994 req/s in floats, which must hold a peak
    of 400 (the exact walker and both spreadsheets, which compare to about 15 digits,
    say it does)."""
    if type(a) is float and type(b) is float:       # a scalar evaluation's common case, without numpy
        return np.bool_(_compare_floats(op, a, b))
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(invalid="ignore"):
        near = np.abs(a - b) <= _SNAP * np.maximum(np.abs(a), np.abs(b))
        tie = (a == b) | (near & np.isfinite(a) & np.isfinite(b))      # inf is near nothing finite
    return {"<=": (a <= b) | tie, "<": (a < b) & ~tie, ">=": (a >= b) | tie, ">": (a > b) & ~tie,
            "==": tie, "!=": ~tie}[op]


def _compare_floats(op: str, a: float, b: float) -> bool:
    """:func:`compare` on two Python floats: the same IEEE operations, NaN and infinities alike."""
    tie = a == b or (abs(a - b) <= _SNAP * max(abs(a), abs(b)) and math.isfinite(a) and math.isfinite(b))
    if op == "<=":
        return a <= b or tie
    if op == "<":
        return a < b and not tie
    if op == ">=":
        return a >= b or tie
    if op == ">":
        return a > b and not tie
    return tie if op == "==" else not tie


def _shifted(x, j: int):
    """x moved j rows down the last axis, the first row repeated above it (j ≥ 1)."""
    head = np.repeat(x[..., :1], min(j, x.shape[-1]), axis=-1)
    return np.concatenate([head, x[..., :-j]], axis=-1)[..., :x.shape[-1]]


def _snap(x):
    nearest = np.round(x)
    close = np.abs(x - nearest) <= _SNAP * np.maximum(np.abs(x), 1.0)
    return np.where(close, nearest, x)
