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

import math
from dataclasses import dataclass
from pathlib import Path

from capplan.analysis import pipeline, validation
from capplan.engine.evaluate import evaluate_nominal
from capplan.errors import CapplanError
from capplan.language.model import standard_model
from capplan.loading.sweeps import evidence, files as sweep_files

MEDIANS = (("ttft", "p50"), ("tpot", "p50"), ("e2e", "p50"))     # the percentiles a point is compared at
FORMULAS = (
    "TPOT p50, open loop at λ req/s: the engine step t = f·R₀ / (1 − λ·f·a) (engine_step_factor, "
    "estimate_weights_time, estimate_step_growth), under the rate that fills the KV pool (estimate_kv_rate); "
    "above it, the closed loop of the run's requests",
    "TPOT p50, closed loop with N in flight: t = f·(R₀ + B·a / n_dec), B = min(N, estimate_kv_concurrency), "
    "n_dec = estimate_steps_per_request",
    "output tok/s: open loop λ·O (O the point's mean output tokens); closed loop B·n_step / t "
    "(n_step = decode_tokens_per_step)",
    "TTFT p50: ttft_bound = prefill_time_bound + prefill_overhead, the point's prompt unqueued",
    "λ̂*: estimated_max_rate under the plan's SLOs; band: estimate_band on both sides",
)


@dataclass(frozen=True)
class Validation:
    """The plan's deployment, every point predicted, and what the files say they measured."""

    plan: str
    deployment: str
    files: tuple[tuple[str, str, str], ...]     # (path as given, tool, SHA-256)
    notes: tuple[str, ...]
    predicted: tuple[validation.Predicted, ...]
    band: float

    @property
    def summaries(self) -> list[validation.Summary]:
        return validation.summaries(list(self.predicted))


def run(plan_path: Path, paths: list[Path]) -> Validation:
    """Read the plan and the files, and predict every point of them."""
    plan = pipeline.load_plan(plan_path)
    nominal = evaluate_nominal(plan, standard_model())
    read = sweep_files.read_named(paths, standard_model().with_slos(MEDIANS).slos)
    points = [(str(path), f, k, p) for path, f in zip(paths, read) for k, p in enumerate(f.points) if p.completed]
    for name, f, k, p in points:
        if p.tokens is None:
            raise CapplanError(f"no token counts in run {k + 1}: its prompt and output lengths are unknown, so "
                               "it cannot be predicted (a CSV table holds none; give the tool's own result "
                               "file)", file=name, key=_length_key(f.format, k))
    values = validation.estimates(nominal, [p.tokens for _, _, _, p in points]) if points else []
    predicted = tuple(validation.predict(p, v, name) for (name, _, _, p), v in zip(points, values))
    gpus = round(plan.nominal.inputs["gpus_per_replica"].value)
    notes = tuple(f"{path}: measured {m}" for path, f in zip(paths, read)
                  for m in evidence.mismatches(list(f.points), plan.model_entry, gpus))
    return Validation(plan.file, f"{plan.model_entry.id} on {plan.gpu.id}, {gpus} GPU(s) per replica, one replica",
                      tuple((str(p), " ".join(f.tool).strip(), f.sha256) for p, f in zip(paths, read)), notes,
                      predicted, float(validation.input_value(nominal, "estimate_band")))


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
        head = f"{Path(p.file).name}: {p.load}"[:40]
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
    return "\n".join(lines) + "\n"


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
                         "inside_band": s.inside} for s in v.summaries]}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _num(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:,.4g}"


def _ratio(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.2f}"


def _error(ratio: float) -> str:
    return "—" if not math.isfinite(ratio) else f"{ratio - 1:+.0%}"
