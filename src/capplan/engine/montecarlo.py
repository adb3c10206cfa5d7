"""Monte Carlo through the plan's graph: draw every uncertain value, evaluate the draws as arrays.

The plan says which values are uncertain (:mod:`capplan.loading.uncertain`);
this module draws them (:mod:`capplan.engine.sampling`), lays them out as the
inputs of the scenario's graph and runs the graph over them as one batch of the
float backend (:func:`capplan.engine.evaluate.run_batch`): a scalar is a column
of shape ``(draws, 1)``, a table column a matrix ``(draws, rows)``, and each
draw's results equal the scalar evaluation's to the last bit. A decision is made on the point plan and
then meets an uncertain world: ``nominal(...)`` reads the deterministic
nominal evaluation (the fleet the plan rents), so each draw asks whether
that fleet carries the draw's peak. A value drawn for a label is the same
draw in every scenario and every run with the same seed.

Work and memory are bounded whatever the plan holds. The graph runs over the
draws in chunks of at most :data:`CHUNK_BYTES` of values, so a table of 500
ranged rows costs what its results need, not 500 × 100,000 × every column;
only the quantities asked for (``keep``: the key results and decisions) are
kept over all draws, with the draws themselves. What that keeps is counted
before anything is drawn: more than :data:`MEMORY_BYTES` is refused with the
largest number of draws that fits. A column of shares (class weights) with a
ranged cell is divided by its sum in every draw, so the weights of a draw sum
to 1 as the plan's must. A draw the plan does not evaluate at is counted by
its cause (a failed model check, or the first quantity that is not a number);
when fewer than :data:`MIN_EVALUATED` of the draws evaluate, percentiles would
describe a few survivors, and the simulation is refused with those counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from capplan import formatting
from capplan.engine import sampling, unitcheck
from capplan.language import units
from capplan.engine.evaluate import run_batch, scenario_prefix
from capplan.engine.graph import Graph, build
from capplan.language.model import Model
from capplan.errors import CapplanError
from capplan.loading.plan import Plan, Scenario, TableData
from capplan.loading.uncertain import Distribution

DEFAULT_SAMPLES = 100_000
DEFAULT_SEED = 20261111          # fixed, so out/ stays byte-stable; --seed picks another
CHUNK_BYTES = 32 * 2 ** 20       # the graph's values for one chunk of draws (numpy's temporaries add a few times this)
MEMORY_BYTES = 512 * 2 ** 20     # the draws and the kept results over all draws, ranks included
SHARES = ("classes.weight",)     # columns whose rows are shares of one whole (the model checks they sum to 1)
MIN_EVALUATED = 0.5              # the share of draws the plan must evaluate at for percentiles to mean anything


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
    values: dict[str, np.ndarray]   # the kept quantities: (samples or 1, rows or 1)
    evaluates: np.ndarray           # per draw: every model check holds and the results are defined
    uncertain: list[Uncertain]
    causes: dict[str, int] = field(default_factory=dict)   # why draws do not evaluate: cause -> draws

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
             samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED, keep=None) -> Simulation:
    """Evaluate one scenario (default: nominal) for ``samples`` draws of its uncertain values.

    ``decided`` is the deterministic nominal evaluation's values: the plan as
    decided. ``nominal(x)`` reads them in every scenario, the nominal one too,
    so "the nominal fleet holds" asks whether the fleet the plan rents
    carries each draw's peak, and a draw's GPU count is compared with the
    count decided on. ``keep`` names the quantities kept over every draw
    (default: all of them, for a few draws); only they, the model's checks and
    what those are computed from are evaluated (:meth:`.graph.Graph.cut`), so a
    draw is void where one of them is not a number, not where a result nothing
    keeps is.
    """
    scenario = scenario or plan.nominal
    fixed = {name: np.asarray(value, dtype=float).reshape((1, -1)) for name, value in decided.items()
             if model.quantities[name].kind != "text"}
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned)
    graph = build(model, plan.switches, pinned, nominal=False)
    unitcheck.check(model, graph)
    rows = {t: len(d.rows) for t, d in scenario.tables.items()}
    if keep is None:
        keep = frozenset(n for n in graph.order if model.quantities[n].kind != "text")
    else:
        graph = graph.cut(keep)
    _fits(plan, scenario, model, graph, rows, keep, samples)
    uncertain: list[Uncertain] = []
    base, drawn = _inputs(plan, scenario, model, graph, samples, seed, uncertain)
    values, ok, causes = _run(graph, model, base, drawn, rows, keep, samples, fixed)
    evaluated = int(np.count_nonzero(ok))
    if evaluated < MIN_EVALUATED * samples:
        why = "; ".join(f"{count:,} draws: {cause}" for cause, count in causes.items())
        raise CapplanError(f"{scenario_prefix(plan, scenario)}the plan evaluates at {evaluated:,} of {samples:,} draws "
                           f"({100 * evaluated / samples:.3g} %), fewer than the {MIN_EVALUATED:.0%} a simulation "
                           f"needs for its percentiles to describe the plan: {why}", file=plan.file)
    return Simulation(plan, scenario, samples, seed, values, ok, uncertain, causes)


def _fits(plan: Plan, scenario: Scenario, model: Model, graph: Graph, rows: dict, keep, samples: int) -> None:
    """Refuse a simulation whose draws and kept results would pass :data:`MEMORY_BYTES`: a
    draw keeps each uncertain value, and each kept result a draw moves three times over
    (its values, and while it is summarised, its values in display units and their ranks;
    a result no draw moves is kept once)."""
    replicated = {name for name, t in plan.nominal.tables.items()
                  if any(len(group) > 1 for group in _runs(t.imported).values())}
    moved = {n for n, i in scenario.inputs.items() if i.uncertain}
    moved |= {f"{name}.{column}" for name, t in scenario.tables.items() for _, column in t.uncertain}
    for name in graph.order:
        node = graph.nodes[name]
        if node.quantity.table in replicated or any(d in moved for d in node.deps):
            moved.add(name)
    width = sum(rows[model.quantities[n].table] if model.quantities[n].table else 1 for n in keep if n in moved)
    ranged = sum(1 for i in scenario.inputs.values() if i.uncertain) + sum(
        len(t.uncertain) for t in scenario.tables.values())
    ranged += 6 * sum(rows[name] for name in replicated)    # a replicated rate resamples up to 6 columns
    each = 8 * (ranged + 3 * width + 4)
    most = MEMORY_BYTES // each
    if samples > most:
        raise CapplanError(f"{samples:,} draws would keep {each:,} bytes each ({ranged:,} uncertain values, "
                           f"{width:,} results), {each * samples / 2 ** 30:.3g} GiB, more than the "
                           f"{MEMORY_BYTES // 2 ** 20} MiB a simulation may use: at most {most:,} draws "
                           f"(--samples {most})", file=plan.file, key="--samples")


def _inputs(plan: Plan, scenario: Scenario, model: Model, graph: Graph, samples: int, seed: int,
            uncertain: list[Uncertain]) -> tuple[dict[str, np.ndarray], dict[str, list]]:
    """The graph's inputs as the plan has them, ``(1, rows)``, and per input its drawn cells,
    ``{name: [(row or None, draws)]}``; each uncertain value is added to ``uncertain``."""
    base: dict[str, np.ndarray] = {}
    drawn: dict[str, list] = {}
    resampled: dict[str, dict] = {}
    for name in graph.order:
        node = graph.nodes[name]
        q = node.quantity
        if node.formula is not None or q.kind == "text":
            continue
        if not q.table:
            given = scenario.inputs[name]
            base[name] = np.full((1, 1), given.value)
            if given.uncertain:
                u = Uncertain(name, name, None, given.uncertain, sampling.draw(given.uncertain, q, name, seed, samples))
                uncertain.append(u)
                drawn[name] = [(None, u.drawn.values)]
            continue
        data = scenario.tables[q.table]
        base[name] = np.array([[row[q.column] for row in data.rows]], dtype=float)
        cells = [(i, d) for (i, col), d in sorted(data.uncertain.items()) if col == q.column]
        if q.table not in resampled:
            resampled[q.table] = _bootstrap(data, plan.nominal.tables[q.table].imported, model, samples, seed)
        replicated = resampled[q.table]
        rows = sorted(i for i in replicated.get(q.column, {}) if (i, q.column) not in data.uncertain)
        keys = _row_keys(scenario, model, q.table) if cells or rows else []
        column = []
        for i, dist in cells:
            label = f"{q.table}[{keys[i]}].{q.column}"
            column.append(Uncertain(label, name, i, dist, sampling.draw(dist, q, label, seed, samples)))
        for i in rows:
            dist, values = replicated[q.column][i]
            label = f"{q.table}[{keys[i]}].{q.column}"
            column.append(Uncertain(label, name, i, dist, sampling.Drawn(label, values, 0)))
        others = _shares(base[name], column) if column and name in SHARES else []
        uncertain += column
        if column:
            drawn[name] = [(u.row, u.drawn.values) for u in column] + others
    return base, drawn


def _shares(base: np.ndarray, column: list[Uncertain]) -> list:
    """Divide a share column's draws by each draw's sum (in place: 500 ranged rows need no
    second copy), so the shares of a draw sum to 1; returns the rows no range moves,
    ``(row, draws)``: the plan's share over the same sum."""
    ranged = {u.row for u in column}
    fixed = [i for i in range(base.shape[1]) if i not in ranged]
    total = sum((u.drawn.values for u in column), np.zeros(column[0].drawn.values.shape))
    total = total + sum(float(base[0, i]) for i in fixed)
    for u in column:
        u.drawn.values[:] /= total
    return [(i, float(base[0, i]) / total) for i in fixed]


def _run(graph: Graph, model: Model, base: dict, drawn: dict, rows: dict, keep, samples: int, decided: dict):
    """The graph over the draws as batches of the float backend, chunk by chunk: the kept values, whether each draw
    evaluates, and the draws that do not by cause."""
    width = sum(rows[graph.nodes[n].quantity.table] if graph.nodes[n].quantity.table else 1 for n in graph.order)
    step = max(1, min(samples, CHUNK_BYTES // (8 * width))) if drawn else samples
    kept: dict[str, np.ndarray] = {}
    ok = np.empty(samples, dtype=bool)
    bad: dict[str, np.ndarray] = {}             # per quantity moved by the draws: which draws are not numbers
    checks = np.zeros(len(model.checks), dtype=np.int64)
    for start in range(0, samples, step):
        stop = min(samples, start + step)
        inputs = dict(base)
        for name, cells in drawn.items():
            column = np.repeat(base[name], stop - start, axis=0)
            for row, values in cells:
                column[:, row or 0] = values[start:stop]
            inputs[name] = column
        values, holds, failed, _ = run_batch(graph, model, inputs, rows, decided)
        for name in keep:
            value = values[name]
            if name not in kept:
                kept[name] = np.empty((samples, value.shape[1])) if value.shape[0] > 1 or step == 1 else value
            if kept[name].shape[0] == samples:
                kept[name][start:stop] = value
        ok[start:stop] = np.broadcast_to(holds[:, 0], (stop - start,))
        checks += [np.count_nonzero(np.broadcast_to(f[:, 0], (stop - start,))) for f in failed]
        for name, value in values.items():
            if value.shape[0] > 1 or step == 1:
                wrong = ~np.isfinite(value).all(axis=-1)
                if wrong.any():
                    bad.setdefault(name, np.zeros(samples, dtype=bool))[start:stop] = wrong
    # A draw where a value is NaN or infinite is one where the engine stops with an error (no sweep
    # row passes, a division by zero); a value that is NaN in every draw is a blank optional column.
    causes: dict[str, int] = {}
    undefined = np.zeros(samples, dtype=bool)
    for name in graph.order:                        # the first quantity that is not a number: the cause
        wrong = bad.get(name)
        if wrong is not None and not wrong.all():
            first = int(np.count_nonzero(wrong & ~undefined))
            if first:
                formula = graph.nodes[name].formula
                causes[f"{name}{f' = {formula.text}' if formula else ''} is not a number"] = first
            undefined |= wrong
    for check, count in zip(model.checks, checks.tolist()):
        if count:
            causes[f"{check.key}: {check.written} fails"] = count
    return kept, ok & ~undefined, causes


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
