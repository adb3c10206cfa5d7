"""What capplan's estimate group predicts for a mapped row, against what was measured.

Rate rows (``offline``, ``mlperf-server``): the model's ``estimated_max_rate`` × replicas
(n_gpus / TP) against the measured req/s. The estimate is a prediction with a band on both
sides, so a measurement is *inside* when ``estimated × (1 − b) ≤ measured ≤ estimated × (1 + b)``,
``b = estimate_band``.

Open-loop rows (``vllm bench serve`` at a fixed rate): the model's engine step at the achieved
rate per replica, ``t(λ) = f·R₀ / (1 − λ·f·a)`` with ``f = engine_step_factor``
(:func:`capplan.analysis.validation.open_loop_step`, the step ``capplan validate`` predicts with), against the
measured median TPOT, inside when ``t(λ)·(1 − b) ≤ measured ≤ t(λ)·(1 + b)``. A rate at or past
the model's saturation (λ·f·a ≥ 1) predicts an unbounded step: never inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from calibration.rows import RATE_MODES, Mapped, plan

from capplan.analysis.pipeline import evaluate_plan
from capplan.analysis.validation import Off, estimate_values, open_loop_step


# the rates estimated_max_rate is the least of, as the limit column names them (a tie: the first)
LIMITS = {"estimate_kv_rate": "KV pool", "estimate_slo_rate": "SLO step", "estimate_budget_rate": "token budget",
          "estimate_ttft_rate": "TTFT"}


@dataclass
class Result(Off):
    """One row's comparison (rates in req/s, steps in ms)."""

    mapped: Mapped
    measured: float
    predicted: float
    low: float                   # the band's ends, in the measured quantity's unit
    high: float
    limit: str                   # what bounds the estimate (LIMITS), or the step at λ
    values: dict[str, float]     # the estimate group's values (base units) the prediction read

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high

    @property
    def unit(self) -> str:
        return "req/s" if self.mapped.row.mode in RATE_MODES else "ms TPOT p50"


def evaluated(m: Mapped, folder: Path, constants: dict | None = None):
    """The nominal evaluation of ``m``'s plan, written to ``folder``."""
    path = folder / f"row-{m.row.number:02d}.yaml"
    path.write_text(yaml.safe_dump(plan(m, constants), sort_keys=False, allow_unicode=True), encoding="utf-8")
    return evaluate_plan(path)[1][0]


def compare(m: Mapped, values: dict[str, float]) -> Result:
    """``m``'s measurement against what ``values`` (the estimate group) predict for it."""
    row = m.row
    band = values["estimate_band"]
    if row.mode in RATE_MODES:
        estimate = values["estimated_max_rate"] * m.replicas
        limit = LIMITS[min((n for n in LIMITS if n in values), key=lambda n: values[n])]
        return Result(m, row.req_per_s, estimate, estimate * (1 - band), estimate * (1 + band), limit, values)
    rate = row.req_per_s / m.replicas
    step = 1000 * open_loop_step(values, rate)
    return Result(m, row.tpot_p50_ms, step, step * (1 - band), step * (1 + band), f"step at {rate:.3g} req/s",
                  values)


def predict(m: Mapped, folder: Path, constants: dict | None = None) -> Result:
    """Write, evaluate and compare one mapped row."""
    return compare(m, estimate_values(evaluated(m, folder, constants)))
