"""A table's ``import:`` and ``select:``: benchmark result files read into
sweep rows (:mod:`capplan.loading.sweeps`), one series of runs, replicated
runs combined; and the goodput each scenario counts at its own SLO limits."""

from __future__ import annotations

import json
import math

from capplan.errors import CapplanError
from capplan.language import units
from capplan.language.model import Model
from capplan.loading import catalog
from capplan.loading import sweeps as sweep_import
from capplan.loading.sweeps import estimate
from capplan.loading.plan.context import Context

IMPORTABLE = ("load_sweep",)     # tables that can be read from benchmark result files


def read(ctx: Context, patterns, path, select=None) -> tuple[tuple, tuple, list[dict]]:
    """Read benchmark files (globs relative to the plan, inside its repository) into sweep rows.

    Replicated runs at one rate become one row (median, with the MAD in
    the *_mad columns); closed-burst runs (rate infinity) stay with the
    file for the record but are no open-loop point. A refused pattern is
    named at its own line.
    """
    listed = isinstance(patterns, list)
    if not listed:
        patterns = [patterns]
    if not all(isinstance(p, str) for p in patterns):
        raise ctx.err("expected a file pattern or a list of them (relative to the plan)", *path)
    try:
        files = sweep_import.read_sweep(ctx.path.parent, patterns, ctx.model.slos)
    except sweep_import.PatternError as err:
        raise ctx.err(err.message, *path, *([err.index] if listed else [])) from None
    except sweep_import.MissingPercentile as err:
        slo = err.slo
        line = ctx.doc.line(("inputs", slo.limit))
        where = f"line {line}, " if line else ""
        raise ctx.err(f"{err.file}: {err.message}. The plan's SLO {slo.limit} ({where}"
                      f"inputs: {slo.limit}) asks for {slo.text}; name another percentile "
                      f"of {slo.label} there (inputs: {slo.metric}_<p50|p90|p95|p99|p999>_slo)",
                      *path) from None
    except CapplanError as err:          # 'runs/x.json: p95_ttft_ms: ...', 'runs/x.csv:3: ...': where in the file
        raise ctx.err(str(err), *path) from None
    wrong_gpu = estimate.gpu_mismatch(files, catalog.resolve("gpu", str(ctx.data.get("gpu"))))
    if wrong_gpu:
        raise ctx.err(f"{wrong_gpu}: it is no evidence for this plan (run capplan estimate for the plan's GPU)", *path)
    points = [p for f in files for p in f.points]
    if select is not None or any(math.isfinite(p.arrival_rate) for p in points):    # closed loops: no series
        points = _series(ctx, points, select, path[:-1])
    rows = [r.table_row(ctx.model.slos)
            for r in sweep_import.combine_replicates(points, goodput_limits(ctx.model, ctx.inputs))]
    if not rows:
        raise ctx.err(sweep_import.closed_loop_refusal(points, ctx.model.slos, goodput_limits(ctx.model, ctx.inputs)), *path)
    return tuple(files), tuple(points), rows


def goodput_limits(model: Model, inputs: dict) -> dict[str, float]:
    """Per metric, the tightest of the plan's SLOs (display unit): what a request must meet to count."""
    limits: dict[str, float] = {}
    for slo in model.slos:
        value = units.to_display(inputs[slo.limit].value, slo.unit)
        limits[slo.metric] = min(limits.get(slo.metric, value), value)
    return limits


def recount_goodput(ctx: Context, nominal, inputs: dict, tables: dict, set_tables: set[str]) -> None:
    """An imported sweep's goodput at the scenario's own SLO limits: a scenario that tightens
    the TTFT SLO counts the requests that meet the tighter one (where the files keep each
    request). A table whose goodput cells the scenario sets itself keeps them."""
    limits = goodput_limits(ctx.model, inputs)
    if limits == goodput_limits(ctx.model, nominal.inputs):
        return
    for name, data in tables.items():
        runs = nominal.tables[name].runs
        if runs and name not in set_tables:
            recount_rows(ctx.model, runs, data.rows, limits)


def recount_rows(model: Model, runs, rows: list[dict], limits: dict[str, float]) -> None:
    """Each row's goodput share counted again from the runs it combines, at ``limits``."""
    for row, combined in zip(rows, sweep_import.combine_replicates(runs, limits)):
        if "goodput_share" in row:
            row["goodput_share"] = combined.table_row(model.slos).get("goodput_share", 0.0)


def _series(ctx: Context, points: list, select, path: tuple) -> list:
    """The runs of one configuration (model, TP, concurrency cap, server
    settings): runs of different ones are separate series, never replicates.
    Several in the files: ``select: {max_concurrency: 16}`` picks one."""
    if select is not None:
        if not isinstance(select, dict) or not select:
            raise ctx.err("expected a mapping of configuration key: value (select: {max_concurrency: 16})",
                          *path, "select")
        wanted = {str(k): json.dumps(v) for k, v in select.items()}
        points = [p for p in points if wanted.items() <= dict(p.config).items()]
        if not points:
            raise ctx.err(f"no imported run has {', '.join(f'{k}={v}' for k, v in wanted.items())}",
                          *path, "select")
    series = sorted({p.series for p in points})
    if len(series) > 1:
        listed = "; ".join(f"{{{s}}}" for s in series)
        raise ctx.err(f"the files hold {len(series)} series of different configurations, which are never "
                      f"combined as replicates: {listed}; pick one with select: (e.g. select: "
                      f"{{{_differing(points)}}}) under this table", *path)
    return points


def _differing(points) -> str:
    """'max_concurrency: 16': a key whose value differs between the series, with the first value."""
    configs = [dict(p.config) for p in points]
    for key in configs[0]:
        if len({c.get(key) for c in configs}) > 1:
            return f"{key}: {configs[0][key]}"
    return "..."
