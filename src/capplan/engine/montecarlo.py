"""Monte Carlo through the plan's graph: draw every uncertain value, evaluate all draws at once.

The plan says which values are uncertain (:mod:`capplan.loading.uncertain`);
this module draws them (:mod:`capplan.engine.sampling`), lays them out as the
inputs of the scenario's graph and runs the compiled graph
(:mod:`capplan.engine.vectorised`). A decision is made on the point plan and
then meets an uncertain world: ``nominal(...)`` reads the deterministic
nominal evaluation (the fleet the plan rents), so each draw asks whether
that fleet carries the draw's peak. A value drawn for a label is the same
draw in every scenario and every run with the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capplan import formatting
from capplan.engine import sampling, units, vectorised
from capplan.engine.graph import build
from capplan.engine.model import Model
from capplan.loading.plan import Plan, Scenario, TableData
from capplan.loading.uncertain import Distribution

DEFAULT_SAMPLES = 100_000
DEFAULT_SEED = 20261111          # fixed, so out/ stays byte-stable; --seed picks another


@dataclass(frozen=True)
class Uncertain:
    """One uncertain value of a scenario and its draws."""

    label: str               # 'peak_arrival_rate', 'deployments[aws-p4de.24xlarge].node_hourly_cost'
    quantity: str            # the model's name: 'peak_arrival_rate', 'deployments.node_hourly_cost'
    row: int | None
    dist: Distribution
    drawn: sampling.Drawn


@dataclass
class Simulation:
    """A scenario's values over ``samples`` draws (base units; see :func:`simulate`)."""

    plan: Plan
    scenario: Scenario
    samples: int
    seed: int
    values: dict[str, np.ndarray]
    evaluates: np.ndarray           # per draw: every model check holds and the results are defined
    uncertain: list[Uncertain]

    def column(self, name: str, row: int | None = None) -> np.ndarray:
        """One quantity (one row of a table column) over every draw, shape ``(samples,)``."""
        value = self.values[name]
        value = value[:, row if row is not None else 0]
        return np.broadcast_to(value, (self.samples,))


def uncertain_in(plan: Plan) -> bool:
    """Whether any scenario of the plan has an uncertain value: a range, or a sweep rate
    measured by several runs (which :func:`_bootstrap` resamples)."""
    return any(i.uncertain for s in plan.scenarios for i in s.inputs.values()) or any(
        t.uncertain for s in plan.scenarios for t in s.tables.values()) or any(
        len(group) > 1 for t in plan.nominal.tables.values() for group in _runs(t.imported).values())


def _runs(imported) -> dict[float, list]:
    """The open-loop runs of imported sweep files, by offered rate (display unit, req/s)."""
    runs: dict[float, list] = {}
    for point in (p for f in imported for p in f.points):
        if np.isfinite(point.arrival_rate):
            runs.setdefault(float(point.arrival_rate), []).append(point)
    return runs


def simulate(plan: Plan, model: Model, decided: dict, scenario: Scenario | None = None,
             samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> Simulation:
    """Evaluate one scenario (default: nominal) for ``samples`` draws of its uncertain values.

    ``decided`` is the deterministic nominal evaluation's values: the plan as
    decided. ``nominal(x)`` reads them in every scenario, the nominal one too,
    so "the nominal fleet holds" asks whether the fleet the plan rents
    carries each draw's peak, and a draw's GPU count is compared with the
    count decided on.
    """
    scenario = scenario or plan.nominal
    fixed = {name: np.asarray(value, dtype=float).reshape((1, -1)) for name, value in decided.items()
             if model.quantities[name].kind != "text"}
    uncertain: list[Uncertain] = []
    values, ok = _run(plan, scenario, model, samples, seed, fixed, uncertain)
    return Simulation(plan, scenario, samples, seed, values, np.broadcast_to(ok[:, 0], (samples,)).copy(), uncertain)


def _draw(uncertain: list[Uncertain], model: Model, dist: Distribution, label: str, quantity: str,
          row: int | None, samples: int, seed: int) -> np.ndarray:
    drawn = sampling.draw(dist, model.quantities[quantity], label, seed, samples)
    uncertain.append(Uncertain(label, quantity, row, dist, drawn))
    return drawn.values


def _run(plan: Plan, scenario: Scenario, model: Model, samples: int, seed: int, decided: dict,
         uncertain: list[Uncertain]):
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned)
    graph = build(model, plan.switches, pinned, nominal=False)
    inputs: dict[str, np.ndarray] = {}
    resampled: dict[str, dict] = {}
    for name in graph.order:
        node = graph.nodes[name]
        q = node.quantity
        if node.formula is not None or q.kind == "text":
            continue
        if q.table:
            data = scenario.tables[q.table]
            column = np.array([[row[q.column] for row in data.rows]], dtype=float)
            cells = [(i, d) for (i, col), d in sorted(data.uncertain.items()) if col == q.column]
            if q.table not in resampled:
                resampled[q.table] = _bootstrap(data, plan.nominal.tables[q.table].imported, model, samples, seed)
            replicated = resampled[q.table]
            rows = sorted(i for i in replicated.get(q.column, {}) if (i, q.column) not in data.uncertain)
            if cells or rows:
                column = np.repeat(column, samples, axis=0)
                keys = _row_keys(scenario, model, q.table)
                for i, dist in cells:
                    column[:, i] = _draw(uncertain, model, dist, f"{q.table}[{keys[i]}].{q.column}", name, i,
                                         samples, seed)
                for i in rows:
                    dist, values = replicated[q.column][i]
                    column[:, i] = values
                    uncertain.append(Uncertain(f"{q.table}[{keys[i]}].{q.column}", name, i, dist,
                                               sampling.Drawn(f"{q.table}[{keys[i]}].{q.column}", values, 0)))
            inputs[name] = column
        else:
            given = scenario.inputs[name]
            inputs[name] = (_draw(uncertain, model, given.uncertain, name, name, None, samples, seed)[:, None]
                            if given.uncertain else np.full((1, 1), given.value))
    rows = {t: len(d.rows) for t, d in scenario.tables.items()}
    values, holds = vectorised.run(graph, model, inputs, rows, decided)
    # A draw where a value is NaN or infinite is one where the engine stops with an error (no sweep
    # row passes, a division by zero); a value that is NaN in every draw is a blank optional column.
    defined = np.ones((1, 1), dtype=bool)
    for value in values.values():
        bad = ~np.isfinite(value).all(axis=-1, keepdims=True)
        if bad.any() and not bad.all():
            defined = defined & ~bad
    return values, np.broadcast_to(holds & defined, (samples, 1))


def _bootstrap(data: TableData, imported, model: Model, samples: int, seed: int) -> dict[str, dict[int, tuple]]:
    """A measured sweep's own spread: for each row that combines replicated runs (imported
    files, several runs at one rate), each draw resamples the runs with replacement and
    takes the medians, as :func:`capplan.loading.sweeps.combine_replicates` does for the
    row itself; the same resampled runs give every column of that draw, so a draw that
    picks the outlier twice sees it in TTFT, TPOT and E2E at once. A cell the scenario
    changed (no longer the runs' median) keeps its value. ``{column: {row: (dist, draws)}}``.
    """
    runs = _runs(imported)
    out: dict[str, dict[int, tuple]] = {}
    rate = model.quantities[f"{data.name}.arrival_rate"] if runs else None
    for i, row in enumerate(data.rows):
        group = runs.get(units.to_display(row["arrival_rate"], rate.unit)) if rate else None
        if not group or len(group) < 2:
            continue
        picks = sampling.stream(seed, f"{data.name}[{formatting.key_text(float(group[0].arrival_rate))}].runs") \
            .integers(0, len(group), size=(samples, len(group)))
        for column in (*group[0].latency, "output_throughput"):     # the plan's SLO columns, and throughput
            if f"{data.name}.{column}" not in model.quantities:
                continue
            unit = model.quantities[f"{data.name}.{column}"].unit
            measured = np.array([p.output_throughput if column == "output_throughput" else p.latency[column]
                                 for p in group], dtype=float)
            if not np.isclose(units.from_display(float(np.median(measured)), unit), row[column], rtol=1e-12):
                continue
            values = units.from_display(np.median(measured[picks], axis=1), unit)
            low, high = units.from_display(measured.min(), unit), units.from_display(measured.max(), unit)
            dist = Distribution("bootstrap", low, high, row[column],
                                f"bootstrap: median of {len(group)} runs resampled")
            out.setdefault(column, {})[i] = (dist, values)
    return out


def _row_keys(scenario: Scenario, model: Model, table: str) -> list[str]:
    key = model.quantities[f"{table}.{model.tables[table].key}"]
    return [formatting.key_text(row[key.column] if key.kind == "text" else units.to_display(row[key.column], key.unit))
            for row in scenario.tables[table].rows]
