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
FORMULAS = (
    "TPOT p50, open loop at λ req/s: the engine step t = f·R₀ / (1 − λ·f·a) (engine_step_factor, "
    "estimate_weights_time, estimate_step_growth), under the rate that fills the KV pool (estimate_kv_rate); "
    "above it, the closed loop of the run's requests",
    "TPOT p50, closed loop with N in flight: t = f·(R₀ + B·a / n_dec), B = min(N, estimate_decode_batch) (the KV pool, estimate_max_seqs), "
    "n_dec = estimate_steps_per_request",
    "output tok/s: open loop λ·O (O the point's mean output tokens); closed loop B·n_step / t "
    "(n_step = decode_tokens_per_step)",
    "TTFT p50: the point's prefill t_pre = prefill_time_bound shares the step: t_pre / (1 − λ·f·a) + "
    "prefill_overhead (open loop; closed loop at λ = B / (n_dec·t)); a burst of N: the (N + 1)/2 prompts ahead "
    "in chunks of estimate_token_budget M, f·(⌈(N + 1)/2·P / M⌉·R₀ + (N + 1)/2·P·k) + prefill_overhead",
    "λ̂*: estimated_max_rate under the plan's SLOs; band: estimate_band on both sides",
)


GRID = np.round(np.arange(0.20, 1.0 + 1e-9, 0.01), 2)     # hbm_efficiency values --fit tries


@dataclass(frozen=True)
class Fit:
    """``--fit``: the HBM efficiency that predicts the decode-bound open-loop points' median TPOT best."""

    value: float
    points: tuple[str, ...]      # 'qps_01.json: 1 req/s'
    factor: float                # median factor off at the fitted value
    before: float                # ... at the plan's
    plan_value: float
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
    fit: Fit | None = None

    @property
    def summaries(self) -> list[validation.Summary]:
        return validation.summaries(list(self.predicted))


def run(plan_path: Path, paths: list[Path], fit: bool = False) -> Validation:
    """Read the plan and the files, and predict every point of them (and with ``fit``, fit
    hbm_efficiency to the decode-bound open-loop points)."""
    model = standard_model()
    plan = pipeline.load_plan(plan_path, model, needs=validation.needs)     # the deployment, not its sizing
    nominal = validation.Deployment(plan, model)
    estimated, lacking = validation.reads(nominal)
    read = sweep_files.read_named(paths, model.with_slos(MEDIANS).slos)
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
    fitted = _fit(nominal, [(name, p) for name, _, _, p in points], values, files, estimated) if fit else None
    return Validation(plan.file, f"{plan.model_entry.id} on {plan.gpu.id}, {gpus} GPU(s) per replica, one replica",
                      files, notes, predicted, float(validation.input_value(nominal, "estimate_band")), fitted)


def _fit(nominal, points, values, files, estimated) -> Fit:
    """hbm_efficiency over :data:`GRID` by the least mean |log(predicted / measured)| of the median TPOT
    of the open-loop points under the KV rate whose step mostly reads (where the efficiency of the
    reads sets the step; engine_step_factor held at the plan's, so the fit takes up what it leaves)."""
    chosen = [(name, p, v) for (name, p), v in zip(points, values)
              if math.isfinite(p.arrival_rate) and p.arrival_rate < v["estimate_kv_rate"]
              and validation.decode_bound(v, p.arrival_rate, p.tokens) and p.latency.get("tpot_p50", 0) > 0]
    if not chosen:
        raise CapplanError("--fit: no decode-bound open-loop point with a median TPOT (a rate under the one that "
                           "fills the KV pool, whose step reads more than it computes) to fit hbm_efficiency from",
                           file=", ".join(path for path, _, _ in files))
    lengths = [p.tokens for _, p, _ in chosen]
    grid = validation.estimates(nominal, lengths * len(GRID), {"hbm_efficiency": np.repeat(GRID, len(chosen))},
                                estimated)
    errors = [_log_errors(chosen, grid[g * len(chosen):(g + 1) * len(chosen)]) for g in range(len(GRID))]
    best = int(np.argmin([np.mean(e) for e in errors]))
    plan_value = float(validation.input_value(nominal, "hbm_efficiency"))
    names = tuple(f"{Path(name).name}: {p.arrival_rate:g} req/s" for name, p, _ in chosen)
    used = dict.fromkeys(name for name, _, _ in chosen)
    digests = "; ".join(f"{path} (sha256 {digest})" for path, _, digest in files if path in used)
    source = (f"capplan validate --fit: the median TPOT of {len(chosen)} decode-bound open-loop point(s) "
              f"({'; '.join(names)}) of {digests}; least mean |log(predicted / measured)| over "
              f"{GRID[0]:.2f}-{GRID[-1]:.2f} by 0.01, engine_step_factor "
              f"{chosen[0][2]['engine_step_factor']:g}")
    return Fit(float(GRID[best]), names, math.exp(float(np.median(errors[best]))),
               math.exp(float(np.median(_log_errors(chosen, [v for _, _, v in chosen])))), plan_value, source)


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
    return "\n".join(lines + _fit_text(v.fit)) + "\n"


def _fit_text(fit: Fit | None) -> list[str]:
    """The fitted value and the ``inputs:`` block a plan pastes, its source the files and their hashes."""
    if fit is None:
        return []
    return ["", f"fit: hbm_efficiency {fit.value:.2f} from the median TPOT of {'; '.join(fit.points)}: median "
                f"factor off {_ratio(fit.factor)} (at the plan's {fit.plan_value:g}: {_ratio(fit.before)}); for the plan, "
                "as a measurement:",
            "inputs:", "  hbm_efficiency:", f"    value: {fit.value:g}", "    tag: measurement",
            f"    source: {json.dumps(fit.source, ensure_ascii=False)}"]


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
            **({"fit": {"hbm_efficiency": v.fit.value, "points": list(v.fit.points), "source": v.fit.source,
                        "median_factor_off": _finite(v.fit.factor)}} if v.fit else {})}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _num(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:,.4g}"


def _ratio(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.2f}"


def _error(ratio: float) -> str:
    return "—" if not math.isfinite(ratio) else f"{ratio - 1:+.0%}"
