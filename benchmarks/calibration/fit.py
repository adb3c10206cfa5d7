"""Leave-one-source-out cross-validation of the estimate's engine factor and band, per engine.

For each plan the model's own formulas are run once over a grid of ``engine_step_factor`` (one
batch of the plan's graph cut to the estimate group: no second implementation of the estimate);
the efficiencies stay at the model's defaults (fitting them too on two dozen points overfits:
the held-out error grew). Then, for each source group left out in turn and each engine, the
factor is the one that minimises the mean |log(predicted / measured)| on the other groups'
rows of that engine, and the band is the smallest share ``b`` (in steps of 0.05) with
``|measured / predicted − 1| ≤ b`` on at least :data:`COVER` of those rows. The left-out rows
are predicted with both: that is the held-out error, and their share inside the band.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from calibration.predict import Result, compare
from calibration.report import figures

from capplan.engine.evaluate import run_batch

GRID = {"engine_step_factor": np.round(np.arange(0.50, 2.5001, 0.02), 2)}
BANDS = np.round(np.arange(0.05, 0.9501, 0.05), 2)
READ = ("estimated_max_rate", "estimate_band", "estimate_kv_rate", "estimate_slo_rate", "estimate_weights_time",
        "estimate_step_growth", "engine_step_factor")
COVER = 0.75


def points() -> list[dict[str, float]]:
    """Every grid point."""
    mesh = np.meshgrid(*GRID.values(), indexing="ij")
    return [dict(zip(GRID, (float(c.flat[k]) for c in mesh))) for k in range(mesh[0].size)]


def over_grid(evaluation) -> list[dict[str, float]]:
    """The estimate group's values at every grid point for one evaluated plan (one batch)."""
    graph = evaluation.graph.cut(READ)
    rows = {t: len(d.rows) for t, d in evaluation.scenario.tables.items()}
    inputs = {n: np.asarray(evaluation.values[n], dtype=float).reshape((1, -1)) for n in graph.order
              if graph.nodes[n].formula is None and graph.nodes[n].quantity.kind != "text"}
    grid = points()
    for name in GRID:
        inputs[name] = np.array([p[name] for p in grid]).reshape((-1, 1))
    values = run_batch(graph, evaluation.model, inputs, rows)[0]
    columns = {n: np.broadcast_to(values[n], (len(grid), 1))[:, 0] for n in READ}
    return [{n: float(columns[n][k]) for n in READ} for k in range(len(grid))]


def choose(results: list[list[Result]]) -> tuple[int, float]:
    """The grid point fitted on ``results`` (per row, per point), and the band that holds
    :data:`COVER` of those rows at it."""
    n = len(results[0])
    loss = np.array([np.mean([abs(math.log(r[k].ratio)) if 0 < r[k].ratio < math.inf else 50.0 for r in results])
                     for k in range(n)])
    point = int(np.argmin(loss))
    misses = [abs(1 / r[point].ratio - 1) if r[point].ratio > 0 else math.inf for r in results]
    band = next((float(b) for b in BANDS if np.mean([x <= b + 1e-12 for x in misses]) >= COVER), float(BANDS[-1]))
    return point, band


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
    fitted = {}
    for engine in engines:
        point, band = choose([table[k] for k, m in enumerate(mapped) if m.row.engine == engine])
        fitted[engine] = {**grid[point], "estimate_band": band}
    return {"folds": folds, "held": held, "fitted": fitted}


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
    lines += ["", "Fitted on every row (a `--constants` file):", "", "```yaml", "engines:"]
    for engine, c in cv["fitted"].items():
        lines.append(f"  {engine}: {{{', '.join(f'{n}: {v:g}' for n, v in c.items())}}}")
    return "\n".join(lines + ["```", ""])
