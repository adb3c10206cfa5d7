"""The estimated λ* against a real sweep: the model's mixed-batch step (its estimate group) on the
vLLM Llama-3.3-70B TP8 A100-40GB result files in ../shared/examples (skipped, saying why, when absent).

The measured mean TPOT is 1.40 to 1.56 times the mixed-batch step at 1 and 4 req/s, within the
``estimate_slowdown`` the estimate's band allows; λ* at the bound lies in the sweep's knee bracket
(4 passes, 16 misses), and the slow end of the band lies below the measured λ* of 4 req/s. The
estimate is the plan's own quantities, so the plan is given a ``candidates:`` section (which
brings the estimate group in) of its own configuration.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import ROOT
from shared_examples import VLLM_70B, example

from capplan.analysis.pipeline import evaluate_plan

PLAN = ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml"


@pytest.fixture(scope="module")
def values(tmp_path_factory):
    plan = yaml.safe_load(PLAN.read_text(encoding="utf-8"))
    plan["candidates"] = {"gpus": [plan["gpu"]], "tp": [8],
                          "offers": [{"name": "node", "gpu": plan["gpu"], "gpus_per_node": 8,
                                      "node_hourly_cost": "10 USD/h", "as_of": "2026-11-01"}]}
    path = tmp_path_factory.mktemp("calibration") / PLAN.name
    path.write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True), encoding="utf-8")
    _, evaluations = evaluate_plan(path)
    return {name: float(value) for name, value in evaluations[0].values.items()
            if name.startswith(("estimate", "estimated")) or name in ("tpot_p95_slo",)}


def step_time(values, rate: float) -> float:
    """The mixed-batch step at ``rate`` req/s: t = R₀ / (1 − λ·a), seconds."""
    return values["estimate_weights_time"] / (1 - rate * values["estimate_step_growth"])


@pytest.mark.parametrize("rate, low, high", [(1, 1.5, 1.6), (4, 1.35, 1.45)])
def test_the_measured_tpot_is_the_mixed_batch_step_times_a_stated_factor(values, rate, low, high):
    measured = json.loads(example(*VLLM_70B, f"qps_{rate:02d}.json").read_text())["mean_tpot_ms"] / 1000
    factor = measured / step_time(values, rate)
    assert low < factor < high <= values["estimate_slowdown"]


def test_the_estimated_lambda_lies_in_the_measured_knee_bracket(values):
    example(*VLLM_70B)
    bound = values["estimated_max_rate"]
    assert 4 < bound < 16
    assert bound == pytest.approx(10.136, abs=0.001)
    slow = bound * (1 - values["estimate_band"])
    assert slow == pytest.approx(values["estimate_low_rate"])
    assert slow < 4 < bound


def test_without_the_prefill_share_the_estimate_would_be_far_off(values):
    """The bare decode roofline (no prefill tokens in the step) puts λ* an order of magnitude higher."""
    kv_only = values["estimate_steps_per_request"] * values["estimate_request_kv_time"]
    target, r0 = values["estimate_step_target"], values["estimate_weights_time"]
    bare = (target - r0) / (target * kv_only)
    assert bare > 10 * values["estimated_max_rate"]
