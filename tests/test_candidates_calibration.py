"""The estimated λ* against a real sweep: the model's mixed-batch step (its estimate group) on the
vLLM Llama-3.3-70B TP8 A100-40GB result files in ../shared/examples (skipped, saying why, when absent).

The measured mean TPOT is 1.27 to 1.45 times the roofline step (its all-reduces included) at 4 and
1 req/s; at the engine's
step factor (vLLM's, fitted on the calibration set) the predicted step lies within the estimate's
band of both; λ* predicted lies in the sweep's knee bracket (4 passes, 16 misses). The
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
            if name.startswith(("estimate", "estimated")) or name in ("tpot_p95_slo", "engine_step_factor")}


def step_time(values, rate: float, factor: float = 1.0) -> float:
    """The mixed-batch step at ``rate`` req/s, ``factor`` times the roofline's: t = f·R₀ / (1 − λ·f·a), seconds."""
    return factor * values["estimate_weights_time"] / (1 - rate * factor * values["estimate_step_growth"])


@pytest.mark.parametrize("rate, low, high", [(1, 1.4, 1.5), (4, 1.22, 1.32)])
def test_the_measured_tpot_is_the_roofline_step_times_a_stated_factor(values, rate, low, high):
    measured = json.loads(example(*VLLM_70B, f"qps_{rate:02d}.json").read_text())["mean_tpot_ms"] / 1000
    assert low < measured / step_time(values, rate) < high
    predicted = step_time(values, rate, values["engine_step_factor"])
    assert predicted * (1 - values["estimate_band"]) <= measured <= predicted * (1 + values["estimate_band"])


def test_the_predicted_lambda_lies_in_the_measured_knee_bracket(values):
    example(*VLLM_70B)
    predicted = values["estimated_max_rate"]
    assert 4 < predicted < 16
    assert predicted == pytest.approx(values["estimate_slo_rate"])


def test_without_the_prefill_share_the_estimate_would_be_far_off(values):
    """The bare decode roofline (no prefill tokens in the step) puts λ* an order of magnitude higher."""
    kv_only = values["estimate_steps_per_request"] * values["estimate_request_kv_time"]
    target, r0 = values["estimate_step_target"], values["estimate_weights_time"]
    bare = (target - r0) / (target * kv_only)
    assert bare > 10 * values["estimate_slo_rate"] * values["engine_step_factor"]
