"""Leave-one-source-out cross-validation of the estimate's engine factor and band, per engine.

For each plan the model's own formulas are run once over a grid of ``engine_step_factor`` (one
batch of the plan's graph cut to the estimate group: no second implementation of the estimate);
the efficiencies stay at the model's defaults (fitting them too on two dozen points overfits:
the held-out error grew). Then, for each source group left out in turn and each engine, the
factor is the one that minimises the mean |log(predicted / measured)| on the other groups'
rows of that engine, and the band is the smallest share ``b`` (in steps of 0.05) with
``|measured / predicted − 1| ≤ b`` on at least :data:`COVER` of those rows. The left-out rows
are predicted with both: that is the held-out error, and their share inside the band.

The band an engine's constants state (``model/catalog/engines.yaml``) is that held-out error, not
a fold's training band (which holds three quarters of the rows it was fitted on and far fewer of
the rows it was not): the smallest ``b`` holding :data:`COVER` of the engine's held-out
predictions, or of all engines' pooled where an engine has fewer than :data:`MIN_HELD`
(:func:`engine_bands`). Its factor is the one fitted on every row of the engine.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from calibration.predict import Result, compare
from calibration.report import figures
from calibration.rows import RATE_MODES

from capplan.artifacts.transfer import TRANSFER_BAND
from capplan.engine.evaluate import run_batch
from capplan.engine.graph import build

GRID = {"engine_step_factor": np.round(np.arange(0.50, 2.5001, 0.02), 2)}
BANDS = np.round(np.arange(0.05, 0.9501, 0.05), 2)
READ = ("estimated_max_rate", "estimate_band", "estimate_kv_rate", "estimate_slo_rate", "estimate_weights_time",
        "estimate_step_growth", "engine_step_factor")
COVER = 0.75
MIN_HELD = 10         # held-out predictions an engine needs for a band of its own (else the pooled band)


def points() -> list[dict[str, float]]:
    """Every grid point."""
    mesh = np.meshgrid(*GRID.values(), indexing="ij")
    return [dict(zip(GRID, (float(c.flat[k]) for c in mesh))) for k in range(mesh[0].size)]


def _batch(evaluation, graph, **given) -> dict[str, np.ndarray]:
    """``graph`` run on the evaluation's own inputs, ``given`` (name -> ``(B, 1)`` column) in their place."""
    rows = {t: len(d.rows) for t, d in evaluation.scenario.tables.items()}
    inputs = {n: np.asarray(evaluation.values[n], dtype=float).reshape((1, -1)) for n in graph.order
              if graph.nodes[n].formula is None and graph.nodes[n].quantity.kind != "text"}
    return run_batch(graph, evaluation.model, {**inputs, **given}, rows)[0]


def over_grid(evaluation) -> list[dict[str, float]]:
    """The estimate group's values at every grid point for one evaluated plan (one batch)."""
    grid = points()
    values = _batch(evaluation, evaluation.graph.cut(READ),
                    **{name: np.array([p[name] for p in grid]).reshape((-1, 1)) for name in GRID})
    columns = {n: np.broadcast_to(values[n], (len(grid), 1))[:, 0] for n in READ}
    return [{n: float(columns[n][k]) for n in READ} for k in range(len(grid))]


def choose(results: list[list[Result]]) -> tuple[int, float]:
    """The grid point fitted on ``results`` (per row, per point), and the band that holds
    :data:`COVER` of those rows at it."""
    n = len(results[0])
    loss = np.array([np.mean([abs(math.log(r[k].ratio)) if 0 < r[k].ratio < math.inf else 50.0 for r in results])
                     for k in range(n)])
    point = int(np.argmin(loss))
    return point, covering([r[point] for r in results])


def covering(results: list[Result]) -> float:
    """The smallest band of :data:`BANDS` with ``|measured / predicted − 1|`` within it on at least
    :data:`COVER` of ``results`` (the widest when none does)."""
    misses = [abs(1 / r.ratio - 1) if r.ratio > 0 else math.inf for r in results]
    return next((float(b) for b in BANDS if np.mean([x <= b + 1e-12 for x in misses]) >= COVER), float(BANDS[-1]))


def engine_bands(held: list[Result]) -> dict[str, tuple[float, str]]:
    """Per engine, the band its held-out predictions measure and what it was measured on: its own
    where it has :data:`MIN_HELD` of them, else every engine's pooled."""
    pooled = covering(held)
    out = {}
    for engine in sorted({r.mapped.row.engine for r in held}):
        own = [r for r in held if r.mapped.row.engine == engine]
        out[engine] = ((covering(own), f"{engine}'s {len(own)} held-out predictions") if len(own) >= MIN_HELD else
                       (pooled, f"pooled: {engine} has {len(own)} held-out predictions, fewer than {MIN_HELD}"))
    return out


def transfers(mapped, evaluations) -> list[Result]:
    """Every rate row predicted by a transfer from another row of the same model, engine, source,
    mode and lengths (another GPU, TP or format): the other's measured λ* per replica times the
    model's ``transfer_ratio`` (the decode-step bound's ratio where reading bounds the reference at
    that λ*, its ``transfer_decode_bound``; else the prefill bound's), times this row's replicas: what
    a plan's candidates do from its measured configuration. Each result's band is
    :data:`capplan.artifacts.transfer.TRANSFER_BAND`."""
    keys = [(m.model, m.row.engine, m.row.group, m.row.mode, m.row.isl, m.row.osl) for m in mapped]
    out = []
    for a, (ref, e_ref) in enumerate(zip(mapped, evaluations)):
        if ref.row.mode not in RATE_MODES:
            continue
        rate = ref.row.req_per_s / ref.replicas
        graph = build(e_ref.model, e_ref.plan.switches, frozenset({"instance_max_rate"})).cut(("transfer_decode_bound",))
        decode = bool(np.ravel(_batch(e_ref, graph, instance_max_rate=np.array([[rate]]))["transfer_decode_bound"])[0])
        bound = "decode_step_time_bound" if decode else "prefill_time_bound"
        for b, (m, e) in enumerate(zip(mapped, evaluations)):
            if b == a or keys[b] != keys[a]:
                continue
            predicted = rate * float(e_ref.values[bound]) / float(e.values[bound]) * m.replicas
            out.append(Result(m, m.row.req_per_s, predicted, predicted * (1 - TRANSFER_BAND),
                              predicted * (1 + TRANSFER_BAND), f"from row {ref.row.number} ({bound})", {}))
    return out


def _with_band(result: Result, band: float) -> Result:
    """The same prediction, its band ``band`` on both sides."""
    return replace(result, low=result.predicted * (1 - band), high=result.predicted * (1 + band))


def cross_validate(mapped, evaluations) -> dict:
    """Held-out results per (left-out group, engine), and the constants fitted on every row."""
    grid = points()
    table = [[compare(m, v) for v in over_grid(e)] for m, e in zip(mapped, evaluations)]
    groups, engines = sorted({m.row.group for m in mapped}), sorted({m.row.engine for m in mapped})
    folds, held = [], []
    for out in groups:
        for engine in engines:
            test = [k for k, m in enumerate(mapped) if m.row.engine == engine and m.row.group == out]
            train = [k for k, m in enumerate(mapped) if m.row.engine == engine and m.row.group != out]
            if not test:
                continue
            if train:
                point, band = choose([table[k] for k in train])
                chosen = [_with_band(table[k][point], band) for k in test]
            else:
                point, band = None, None
                chosen = [compare(mapped[k], table[k][0].values) for k in test]
            held.extend(chosen)
            folds.append({"out": out, "engine": engine, "train": len(train),
                          "constants": {**grid[point], "estimate_band": band} if train else None, "held": chosen})
    bands = engine_bands(held)
    fitted = {}
    for engine in engines:
        point, _ = choose([table[k] for k, m in enumerate(mapped) if m.row.engine == engine])
        fitted[engine] = {**grid[point], "estimate_band": bands[engine][0]}
    return {"folds": folds, "held": held, "fitted": fitted, "bands": bands, "transfers": transfers(mapped, evaluations)}


def _constants(c: dict | None) -> str:
    if c is None:
        return "no other source: not fitted | "
    edge = " (edge)" if c["engine_step_factor"] in (GRID["engine_step_factor"][0], GRID["engine_step_factor"][-1]) else ""
    return f"{c['engine_step_factor']:g}{edge} | ±{c['estimate_band']:g}"


def markdown(cv: dict) -> str:
    """The folds, the pooled held-out figures by source, and the constants fitted on every row."""
    lines = ["## Leave-one-source-out cross-validation (per engine)", "",
             f"Grid: engine_step_factor {GRID['engine_step_factor'][0]:g}–{GRID['engine_step_factor'][-1]:g} by least "
             f"mean |log(p/m)|, then the smallest band (±) that holds ≥ {COVER:.0%} of the training rows.", "",
             "| held out | engine | training rows | engine_step_factor | estimate_band "
             "| held-out rows | median factor off | p90 factor off | inside |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for f in cv["folds"]:
        s = figures(f["held"])
        lines.append(f"| {f['out']} | {f['engine']} | {f['train']} | {_constants(f['constants'])} | {s['rows']} "
                     f"| {s['median_factor_off']:.3g} | {s['p90_factor_off']:.3g} | {s['inside']} of {s['rows']} |")
    lines += ["", "Pooled held-out predictions:", "", "| rows | median factor off | p90 factor off | inside |",
              "| --- | ---: | ---: | ---: |"]
    for label, chosen in [("all", cv["held"])] + [(g, [r for r in cv["held"] if r.mapped.row.group == g])
                                                 for g in sorted({r.mapped.row.group for r in cv["held"]})]:
        s = figures(chosen)
        lines.append(f"| {label} ({s['rows']}) | {s['median_factor_off']:.3g} | {s['p90_factor_off']:.3g} "
                     f"| {s['inside']} of {s['rows']} ({s['share_inside']:.0%}) |")
    lines += ["", f"The band each engine states: the smallest holding {COVER:.0%} of its held-out predictions (its "
              f"own with {MIN_HELD} or more, else every engine's pooled), and the held-out predictions inside it:", "",
              "| engine | estimate_band | measured on | held out inside |", "| --- | ---: | --- | ---: |"]
    for engine, (band, on) in cv["bands"].items():
        own = [_with_band(r, band) for r in cv["held"] if r.mapped.row.engine == engine]
        s = figures(own)
        lines.append(f"| {engine} | ±{band:g} | {on} | {s['inside']} of {s['rows']} ({s['share_inside']:.0%}) |")
    moved = cv["transfers"]
    if moved:
        s = figures(moved)
        bounds = sorted({r.limit.split("(")[1].rstrip(")") for r in moved})
        lines += ["", f"Transfers (each rate row from another of the same model, engine, source, mode and lengths, by "
                  f"the model's transfer_ratio): {s['rows']} ordered pairs over {', '.join(bounds)}; median factor "
                  f"off {s['median_factor_off']:.3g}, p90 {s['p90_factor_off']:.3g}, {s['inside']} of {s['rows']} "
                  f"({s['share_inside']:.0%}) inside ±{TRANSFER_BAND:g}; the band holding {COVER:.0%} of them: "
                  f"±{covering(moved):g}."]
    lines += ["", "Fitted (engine_step_factor on every row of the engine, estimate_band held out; "
              "model/catalog/engines.yaml states them):", "", "```yaml", "engines:"]
    for engine, c in cv["fitted"].items():
        lines.append(f"  {engine}: {{{', '.join(f'{n}: {v:g}' for n, v in c.items())}}}")
    return "\n".join(lines + ["```", ""])
