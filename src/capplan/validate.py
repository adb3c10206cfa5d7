"""``capplan validate PLAN FILE...``: the estimate against a team's own benchmark files.

A ranking of candidates no file measures rests on the estimate group's
formulas (:mod:`capplan.analysis.validation`). Before a team trusts it, it
predicts what its own benchmark runs measured on its hardware: each file is
read by the sweep importers (vLLM ``bench serve`` and ``benchmark_serving.py``
results, GuideLLM reports, InferenceX results; the format recognised from the
content), each point predicted at its own load and lengths for the plan's
deployment (its GPU, model, formats, ``gpus_per_replica`` and engine factor),
and the table says per point what was measured, what was predicted and how far
apart they are. Nothing is written.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capplan.analysis import pipeline, validation
from capplan.errors import CapplanError
from capplan.language.model import standard_model
from capplan.loading.sweeps import evidence, files as sweep_files

MEDIANS = (("ttft", "p50"), ("tpot", "p50"), ("e2e", "p50"))     # the percentiles a point is compared at
# ... and the tails, where a file has them
TAILS = tuple((metric, key) for metric in ("ttft", "tpot") for key in ("p90", "p95", "p99"))
FORMULAS = (
    "TPOT p50, open loop at λ req/s: the engine step t = f·R₀ / (1 − λ·f·a) (engine_step_factor, "
    "estimate_weights_time, estimate_step_growth), under the rate that fills the KV pool (estimate_kv_rate); "
    "above it, the batch of the run's requests, t = f·(R₀ + B·a / n_dec), B = min(N, estimate_decode_batch)",
    "closed loop with N clients (mean value analysis): a cycle is c + R + (n_dec − 1)·t(X), X = N / cycle; "
    "R the prefill queue, one prompt at a time of s_pre = estimate_prompt_time (its chunks of "
    "estimate_token_budget, its compute at estimate_prefill_efficiency), R(m) = s_pre·(1 + X(m − 1)·R(m − 1)); "
    "t(X) the open-loop step at X, its batch at most N and the KV pool; c = prefill_overhead",
    "output tok/s: open loop λ·O (O the point's mean output tokens); closed loop X·O; a burst B·n_step / t "
    "(n_step = decode_tokens_per_step)",
    "TTFT pq: c + the prompt's own prefill + the q quantile of its wait, M/M/1's: none with probability 1 − ρ, "
    "else exponential of mean W̄ / ρ; open loop t_pre = prefill_time_bound, ρ = λ·f·a, "
    "W̄ = t_pre·ρ / (1 − ρ) (processor sharing's mean stretch); closed loop s_pre, ρ = X·s_pre, W̄ = R − s_pre, "
    "at most (N − 1)·s_pre; "
    "a burst of N: the q·(N − 1) + 1 prompts ahead in chunks of M, f·(⌈A / M⌉·R₀ + A·k / η) + c",
    "TPOT pq (q > 50): t + (K_q − λ·D)·f·P·k / (n_dec − 1), K ~ Poisson(λ·D) the prompts prefilled in the "
    "request's window D = (n_dec − 1)·t, λ the rate the point carries (X closed loop)",
    "λ̂*: estimated_max_rate under the plan's SLOs; band: estimate_band on both sides",
)


GRID = np.round(np.arange(0.20, 1.0 + 1e-9, 0.01), 2)     # hbm_efficiency values --fit tries
PREFILL_GRID = np.round(np.arange(0.02, 1.0 + 1e-9, 0.01), 2)    # estimate_prefill_efficiency values
OVERHEAD_GRID = np.round(np.arange(0.0, 2.0 + 1e-9, 0.05), 2)    # prefill_overhead values (s)


@dataclass(frozen=True)
class Fit:
    """``--fit``: the inputs whose values predict the chosen points best, and those points."""

    inputs: tuple[tuple[str, str], ...]    # (input, value as a plan writes it): ('prefill_overhead', '750 ms')
    plan_values: str             # the plan's: 'hbm_efficiency 0.76'
    measured: str                # what was fitted to: 'the median TPOT'
    points: tuple[str, ...]      # 'qps_01.json: 1 req/s'
    factor: float                # median factor off at the fitted values
    before: float                # ... at the plan's
    source: str


@dataclass(frozen=True)
class Validation:
    """The plan's deployment, every point predicted, and what the files say they measured."""

    plan: str
    deployment: str
    files: tuple[tuple[str, str, str], ...]     # (path as given, tool, SHA-256)
    notes: tuple[str, ...]
    predicted: tuple[validation.Predicted, ...]
    band: float
    fits: tuple[Fit, ...] = ()

    @property
    def summaries(self) -> list[validation.Summary]:
        return validation.summaries(list(self.predicted))


def run(plan_path: Path, paths: list[Path], fit: bool = False) -> Validation:
    """Read the plan and the files, and predict every point of them (and with ``fit``, fit
    hbm_efficiency to the decode-bound open-loop points and the prefill to the closed-loop ones)."""
    model = standard_model()
    plan = pipeline.load_plan(plan_path, model, needs=validation.needs)     # the deployment, not its sizing
    nominal = validation.Deployment(plan, model)
    estimated, lacking = validation.reads(nominal)
    read = _read(paths)
    points = [(str(path), f, k, p) for path, f in zip(paths, read) for k, p in enumerate(f.points) if p.completed]
    for name, f, k, p in points:
        if p.tokens is None:
            raise CapplanError(f"no token counts in run {k + 1}: its prompt and output lengths are unknown, so "
                               "it cannot be predicted (a CSV table holds none; give the tool's own result "
                               "file)", file=name, key=_length_key(f.format, k))
    values = validation.estimates(nominal, [p.tokens for _, _, _, p in points], read=estimated) if points else []
    predicted = tuple(validation.predict(p, v, name) for (name, _, _, p), v in zip(points, values))
    gpus = round(plan.nominal.inputs["gpus_per_replica"].value)
    notes = tuple(f"{path}: measured {m}" for path, f in zip(paths, read)
                  for m in evidence.mismatches(list(f.points), plan.model_entry, gpus))
    if lacking:
        notes += (f"no λ̂*: the plan states no SLO ({', '.join(lacking)}), so no open-loop point is held "
                  "against the estimate's rate; the predictions need none",)
    files = tuple((str(p), " ".join(f.tool).strip(), f.sha256) for p, f in zip(paths, read))
    fitted = _fit(nominal, [(name, p) for name, _, _, p in points], values, files, estimated) if fit else ()
    return Validation(plan.file, f"{plan.model_entry.id} on {plan.gpu.id}, {gpus} GPU(s) per replica, one replica",
                      files, notes, predicted, float(validation.input_value(nominal, "estimate_band")), fitted)


def _read(paths: list[Path]) -> list:
    """Each file read with the medians (its errors are the file's), and again with each tail of
    :data:`TAILS` it has: a file short of one (an open-loop run must hold every percentile it is
    read with) is compared without it."""
    model = standard_model()
    read = sweep_files.read_named(paths, model.with_slos(MEDIANS).slos)
    return [_with_tails(path, model, f) for path, f in zip(paths, read)]


def _with_tails(path: Path, model, medians):
    """``path`` read with the tails it has (one reading each to learn which), or ``medians``."""
    kept = tuple(tail for tail in TAILS if _has(path, model, tail))
    return sweep_files.read_named([path], model.with_slos(MEDIANS + kept).slos)[0] if kept else medians


def _has(path: Path, model, tail: tuple[str, str]) -> bool:
    """Whether every run of ``path`` holds the ``tail`` percentile, or the arrays to compute it."""
    try:
        sweep_files.read_named([path], model.with_slos(MEDIANS + (tail,)).slos)
    except CapplanError:
        return False
    return True


def _fit(nominal, points, values, files, estimated) -> tuple[Fit, ...]:
    """What the points can fit: hbm_efficiency from the decode-bound open-loop ones, the prefill
    from the closed-loop ones; refused, naming the files, when they hold neither."""
    fits = tuple(f for f in (_fit_reads(nominal, points, values, files, estimated),
                             _fit_prefill(nominal, points, values, files, estimated))
                 if f is not None)
    if not fits:
        raise CapplanError("--fit: no decode-bound open-loop point with a median TPOT (a rate under the one that "
                           "fills the KV pool, whose step reads more than it computes) to fit hbm_efficiency from, "
                           "nor a closed-loop point (N clients) with a median TTFT to fit the prefill from",
                           file=", ".join(path for path, _, _ in files))
    return fits


def _fit_reads(nominal, points, values, files, estimated) -> Fit | None:
    """hbm_efficiency over :data:`GRID` by the least mean |log(predicted / measured)| of the median TPOT
    of the open-loop points under the KV rate whose step mostly reads (where the efficiency of the
    reads sets the step; engine_step_factor held at the plan's, so the fit takes up what it leaves)."""
    chosen = [(name, p, v) for (name, p), v in zip(points, values)
              if math.isfinite(p.arrival_rate) and p.arrival_rate < v["estimate_kv_rate"]
              and validation.decode_bound(v, p.arrival_rate, p.tokens) and p.latency.get("tpot_p50", 0) > 0]
    if not chosen:
        return None
    lengths = [p.tokens for _, p, _ in chosen]
    grid = validation.estimates(nominal, lengths * len(GRID), {"hbm_efficiency": np.repeat(GRID, len(chosen))},
                                read=estimated)
    errors = [_log_errors(chosen, grid[g * len(chosen):(g + 1) * len(chosen)]) for g in range(len(GRID))]
    best = int(np.argmin([np.mean(e) for e in errors]))
    names = tuple(f"{Path(name).name}: {p.arrival_rate:g} req/s" for name, p, _ in chosen)
    source = (f"capplan validate --fit: the median TPOT of {len(chosen)} decode-bound open-loop point(s) "
              f"({'; '.join(names)}) of {_digests(files, chosen)}; least mean |log(predicted / measured)| over "
              f"{GRID[0]:.2f}-{GRID[-1]:.2f} by 0.01, engine_step_factor "
              f"{chosen[0][2]['engine_step_factor']:g}")
    plan_value = float(validation.input_value(nominal, "hbm_efficiency"))
    return Fit((("hbm_efficiency", f"{GRID[best]:g}"),), f"hbm_efficiency {plan_value:g}", "the median TPOT", names,
               math.exp(float(np.median(errors[best]))),
               math.exp(float(np.median(_log_errors(chosen, [v for _, _, v in chosen])))), source)


def _fit_prefill(nominal, points, values, files, estimated) -> Fit | None:
    """estimate_prefill_efficiency and prefill_overhead over :data:`PREFILL_GRID` ×
    :data:`OVERHEAD_GRID` by the least mean |log(predicted / measured)| of the output tok/s and the
    median TTFT of the closed-loop points, whose prefill queue sets both (the efficiency how long a
    prompt holds it, the overhead the time outside it): the two the measured TTFTs far above the
    compute bound ask for (docs/calibration.md, "Closed loop and TTFT percentiles")."""
    chosen = [(name, p, v) for (name, p), v in zip(points, values)
              if validation.clients(p) and p.latency.get("ttft_p50", 0) > 0 and p.output_throughput > 0]
    if not chosen:
        return None
    lengths = [p.tokens for _, p, _ in chosen]
    grid = validation.estimates(nominal, lengths * len(PREFILL_GRID),
                                {"estimate_prefill_efficiency": np.repeat(PREFILL_GRID, len(chosen))}, read=estimated)
    errors = {(g, c): _loop_errors(chosen, grid[g * len(chosen):(g + 1) * len(chosen)], overhead)
              for g in range(len(PREFILL_GRID)) for c, overhead in enumerate(OVERHEAD_GRID)}
    g, c = min(errors, key=lambda k: np.mean(errors[k]))
    names = tuple(f"{Path(name).name}: {validation.clients(p)} clients" for name, p, _ in chosen)
    source = (f"capplan validate --fit: the output tok/s and median TTFT of {len(chosen)} closed-loop point(s) "
              f"({'; '.join(names)}) of {_digests(files, chosen)}; least mean |log(predicted / measured)| over "
              f"estimate_prefill_efficiency {PREFILL_GRID[0]:.2f}-{PREFILL_GRID[-1]:.2f} by 0.01 and "
              f"prefill_overhead {OVERHEAD_GRID[0]:g}-{OVERHEAD_GRID[-1]:g} s by 0.05 s, engine_step_factor "
              f"{chosen[0][2]['engine_step_factor']:g}")
    plan = [v for _, _, v in chosen]
    return Fit((("estimate_prefill_efficiency", f"{PREFILL_GRID[g]:g}"),
                ("prefill_overhead", f"{1000 * OVERHEAD_GRID[c]:g} ms")),
               f"estimate_prefill_efficiency {plan[0]['estimate_prefill_efficiency']:g}, prefill_overhead "
               f"{1000 * plan[0]['prefill_overhead']:g} ms", "the output tok/s and median TTFT", names,
               math.exp(float(np.median(errors[g, c]))),
               math.exp(float(np.median(_loop_errors(chosen, plan, plan[0]["prefill_overhead"])))), source)


def _loop_errors(chosen, values, overhead: float) -> list[float]:
    """Each closed-loop point's mean |log(predicted / measured)| of its output tok/s and median TTFT
    at the prefill_overhead ``overhead`` (s)."""
    errors = []
    for (_, p, _), v in zip(chosen, values):
        at = dict(v, prefill_overhead=overhead)
        loop = validation.closed_loop(at, validation.clients(p))
        errors.append((abs(math.log(loop.rate * p.tokens[1] / p.output_throughput))
                       + abs(math.log(1000 * loop.ttft(at, 0.5) / p.latency["ttft_p50"]))) / 2)     # ms
    return errors


def _digests(files, chosen) -> str:
    """The files the chosen points come from, each with its SHA-256."""
    used = dict.fromkeys(name for name, _, _ in chosen)
    return "; ".join(f"{path} (sha256 {digest})" for path, _, digest in files if path in used)


def _log_errors(chosen, values) -> list[float]:
    """|log(predicted / measured)| of each chosen point's median TPOT (inf for an unbounded step)."""
    return [abs(math.log(1000 * validation.open_loop_step(v, p.arrival_rate) / p.latency["tpot_p50"]))     # ms
            for (_, p, _), v in zip(chosen, values)]


def _length_key(fmt: str, k: int) -> str:
    """Where a file of ``fmt`` keeps the lengths of its run ``k``."""
    if fmt.startswith("guidellm"):
        return f"benchmarks[{k}].metrics.prompt_token_count"
    return "prompt_tokens" if fmt == "csv" else "total_input_tokens"


def text(v: Validation) -> str:
    """The table a terminal shows: the formulas, a row per point and quantity, the summary."""
    lines = [f"capplan validate: {v.plan}: {v.deployment}; estimate band ±{v.band:.0%}",
             *(f"  file {path}: {tool}, sha256 {digest}" for path, tool, digest in v.files),
             *(f"  note: {n}" for n in v.notes), "predicted by the estimate group (model/quantities.yaml):",
             *(f"  {f}" for f in FORMULAS), "",
             f"{'point':<40} {'quantity':<13} {'measured':>11} {'predicted':>11} {'p÷m':>6} {'error':>8}  band"]
    for p in v.predicted:
        head = f"{Path(p.file).name}: {p.load}"      # whole: a sweep's files differ at their end (_conc16.json)
        lam = "" if p.under is None else f"; {'under' if p.under else 'over'} λ̂* {p.limit:.3g} req/s"
        lines.append(f"{head:<40} ISL {p.lengths[0]:.0f} / OSL {p.lengths[1]:.0f}{lam}"
                     + (f"; {p.note}" if p.note else ""))
        for c in p.compared:
            lines.append(f"{'':<40} {c.name:<13} {_num(c.measured):>11} {_num(c.predicted):>11} "
                         f"{_ratio(c.ratio):>6} {_error(c.ratio):>8}  {'inside' if c.inside else 'outside'}")
    lines.append("")
    for s in v.summaries:
        lines.append(f"summary {s.name}: median factor off {_ratio(s.median_factor)} over {s.count}; "
                     f"{s.inside} of {s.count} within ±{v.band:.0%}")
    return "\n".join(lines + _fit_text(v.fits)) + "\n"


def _fit_text(fits: tuple[Fit, ...]) -> list[str]:
    """Each fit's values and the ``inputs:`` block a plan pastes, each input's source the files and
    their hashes."""
    if not fits:
        return []
    lines = [""]
    for fit in fits:
        values = ", ".join(f"{name} {value}" for name, value in fit.inputs)
        lines.append(f"fit: {values} from {fit.measured} of {'; '.join(fit.points)}: median factor off "
                     f"{_ratio(fit.factor)} (at the plan's {fit.plan_values}: {_ratio(fit.before)})")
    lines += ["for the plan, as measurements:", "inputs:"]
    for fit in fits:
        for name, value in fit.inputs:
            lines += [f"  {name}:", f"    value: {value}", "    tag: measurement",
                      f"    source: {json.dumps(fit.source, ensure_ascii=False)}"]
    return lines


def as_json(v: Validation) -> dict:
    """The same as :func:`text`, for scripts (an unbounded prediction is null)."""
    return {"plan": v.plan, "deployment": v.deployment, "estimate_band": v.band, "formulas": list(FORMULAS),
            "files": [{"path": p, "tool": t, "sha256": d} for p, t, d in v.files], "notes": list(v.notes),
            "points": [{"file": p.file, "load": p.load, "prompt_tokens": p.lengths[0], "output_tokens": p.lengths[1],
                        "under_estimated_max_rate": p.under, "estimated_max_rate": p.limit, "note": p.note,
                        "compared": [{"quantity": c.name, "unit": c.unit, "measured": c.measured,
                                      "predicted": _finite(c.predicted), "ratio": _finite(c.ratio),
                                      "inside_band": c.inside} for c in p.compared]} for p in v.predicted],
            "summary": [{"quantity": s.name, "count": s.count, "median_factor_off": _finite(s.median_factor),
                         "inside_band": s.inside} for s in v.summaries],
            "fits": [{"inputs": dict(f.inputs), "points": list(f.points), "source": f.source,
                      "median_factor_off": _finite(f.factor)} for f in v.fits]}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _num(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:,.4g}"


def _ratio(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.2f}"


def _error(ratio: float) -> str:
    return "—" if not math.isfinite(ratio) else f"{ratio - 1:+.0%}"
