"""Leave-one-source-out cross-validation of three constants of the estimate, per engine.

For each plan the model's own formulas are run once over a grid of ``hbm_efficiency``,
``tensor_efficiency`` and ``estimate_slowdown`` (one batch of the plan's graph cut to the
estimate group: no second implementation of the estimate). Then, for each source group left
out in turn and each engine, the constants are chosen on the other groups' rows of that engine:
the efficiencies that minimise the mean |log(predicted / measured)| (the slowdown moves no
prediction, only the band), then the smallest slowdown whose band holds at least
:data:`COVER` of those rows (the one holding most when none does). The left-out rows are
predicted with them: that is the held-out error. The efficiencies stay in their domain (0, 1],
so a best value at the grid's edge says the model lacks something (formats' tensor rates, for
one), not that the constant is right.
"""

from __future__ import annotations

import math

import numpy as np
from calibration.predict import Result, compare
from calibration.report import figures

from capplan.engine.evaluate import run_batch

GRID = {"hbm_efficiency": np.round(np.arange(0.40, 1.0001, 0.05), 2),
        "tensor_efficiency": np.round(np.arange(0.20, 1.0001, 0.05), 2),
        "estimate_slowdown": np.round(np.arange(1.0, 4.0001, 0.1), 1)}
READ = ("estimated_max_rate", "estimate_band", "estimate_kv_rate", "estimate_slo_rate", "estimate_weights_time",
        "estimate_step_growth", "estimate_slowdown")
COVER = 0.75


def points() -> list[dict[str, float]]:
    """Every grid point, slowdown varying fastest."""
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


def choose(results: list[list[Result]]) -> int:
    """The grid point fitted on ``results`` (per row, per point): efficiencies first, then the slowdown."""
    n = len(results[0])
    loss = np.array([np.mean([abs(math.log(r[k].ratio)) if 0 < r[k].ratio < math.inf else 50.0 for r in results])
                     for k in range(n)])
    best = np.flatnonzero(loss <= loss.min() + 1e-12)
    cover = np.array([np.mean([r[k].inside for r in results]) for k in best])
    enough = best[cover >= COVER]
    return int(enough[0] if enough.size else best[int(np.argmax(cover))])


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
            point = choose([table[k] for k in train]) if train else None
            chosen = [table[k][point] for k in test] if train else [compare(mapped[k], table[k][0].values)
                                                                    for k in test]
            held.extend(chosen)
            folds.append({"out": out, "engine": engine, "train": len(train),
                          "constants": grid[point] if train else None, "held": chosen})
    fitted = {engine: grid[choose([table[k] for k, m in enumerate(mapped) if m.row.engine == engine])]
              for engine in engines}
    return {"folds": folds, "held": held, "fitted": fitted}


def _constants(c: dict | None) -> str:
    if c is None:
        return "no other source: not fitted | | "
    edge = lambda n: " (edge)" if c[n] in (GRID[n][0], GRID[n][-1]) else ""  # noqa: E731
    return " | ".join(f"{c[n]:g}{edge(n)}" for n in GRID)


def markdown(cv: dict) -> str:
    """The folds, the pooled held-out figures by source, and the constants fitted on every row."""
    lines = ["## Leave-one-source-out cross-validation (per engine)", "",
             f"Grid: {', '.join(f'{n} {v[0]:g}–{v[-1]:g}' for n, v in GRID.items())}; efficiencies by least mean "
             f"|log(p/m)|, then the smallest slowdown whose band holds ≥ {COVER:.0%} of the training rows.", "",
             "| held out | engine | training rows | hbm_efficiency | tensor_efficiency | estimate_slowdown "
             "| held-out rows | median factor off | p90 factor off | inside |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
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
        lines.append(f"  {engine}: {{{', '.join(f'{n}: {c[n]:g}' for n in GRID)}}}")
    return "\n".join(lines + ["```", ""])
