"""Golden values of docs/reference-values.md, computed by capplan from the reference plans.

Every number comes from `capplan eval --json` (the tool's public contract);
the literals are the corrected reference values, never the lesson's slips
(each slip is numbered as in docs/reference-values.md).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan.cli import main


@pytest.fixture(scope="module")
def main_doc():
    return _eval(MAIN_PLAN)


@pytest.fixture(scope="module")
def retail_doc():
    return _eval(RETAIL_PLAN)


def _eval(path):
    """`capplan eval PLAN --json`, in-process (a module-scoped fixture cannot use capsys)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["eval", str(path), "--json"]) == 0
    return json.loads(out.getvalue())


def q(doc, name, scenario="nominal"):
    return doc["scenarios"][scenario]["quantities"][name]["value"]


def row(doc, name, scenario="nominal"):
    rows = doc["scenarios"][scenario]["tables"]["deployments"]["rows"]
    return next(r for r in rows if r["name"] == name)


AWS, FRACTIONAL = "aws-p4de.24xlarge", "fractional-a100-80gb"


def test_workload_averages(main_doc):
    assert q(main_doc, "avg_prompt_tokens") == pytest.approx(99.2)
    assert q(main_doc, "avg_output_tokens") == pytest.approx(121.6)
    assert q(main_doc, "avg_context_tokens") == pytest.approx(220.8)
    assert q(main_doc, "max_context_tokens") == 768


def test_memory_bound_uses_correct_weights(main_doc):
    # Slip 1: 8.03 B x 2 B = 16.06 GB = 14.96 GiB, not 14.90 GiB.
    assert q(main_doc, "usable_vram") == pytest.approx(71.685)
    assert round(q(main_doc, "weight_memory"), 2) == 14.96
    assert round(q(main_doc, "kv_pool"), 2) == 54.98
    assert q(main_doc, "kv_bytes_per_token") == 128
    assert q(main_doc, "kv_token_capacity") == 450_379
    assert q(main_doc, "max_concurrency_avg") == 1_968
    assert q(main_doc, "max_concurrency_worst") == 586


def test_roofline_bounds(main_doc):
    assert round(q(main_doc, "decode_step_time_bound"), 2) == 10.96
    assert round(q(main_doc, "prefill_time_bound"), 2) == 58.57
    assert round(q(main_doc, "prefill_flops"), 3) == 8.223
    assert q(main_doc, "bandwidth_gate") is True and q(main_doc, "compute_gate") is True


def test_sizing_and_cost(main_doc):
    assert q(main_doc, "instance_max_rate") == 10
    assert q(main_doc, "safe_rate_per_replica") == pytest.approx(7.0)
    assert q(main_doc, "active_gpus") == 9
    assert q(main_doc, "resilient_gpus") == 10
    assert q(main_doc, "monthly_requests") == 52_704_000
    assert q(main_doc, "monthly_output_tokens") == 6_408_806_400
    aws, frac = row(main_doc, AWS), row(main_doc, FRACTIONAL)
    assert (aws["nodes"], aws["deployed_gpus"], aws["safe_capacity"]) == (2, 16, 112)
    assert aws["monthly_cost"] == pytest.approx(59_965.44)
    assert round(aws["cost_per_million_tokens"], 2) == 9.36
    assert frac["deployed_gpus"] == 10
    assert frac["monthly_cost"] == pytest.approx(18_226.80)
    assert round(frac["cost_per_million_tokens"], 2) == 2.84


def test_scenarios(main_doc):
    assert list(main_doc["scenarios"]) == ["nominal", "surge_50", "context_x2", "fp8_kv", "ttft_400ms", "n_minus_1"]
    # +50 % surge: 13 active, 14 resilient, still 2 p4de nodes.
    assert (q(main_doc, "active_gpus", "surge_50"), q(main_doc, "resilient_gpus", "surge_50")) == (13, 14)
    assert row(main_doc, AWS, "surge_50")["nodes"] == 2
    assert row(main_doc, FRACTIONAL, "surge_50")["monthly_cost"] == pytest.approx(25_517.52)
    # Context x2: summarization prompt 2,048; lambda* pinned at 7.5.
    assert q(main_doc, "avg_prompt_tokens", "context_x2") == pytest.approx(252.8)
    assert q(main_doc, "safe_rate_per_replica", "context_x2") == pytest.approx(5.25)
    assert (q(main_doc, "active_gpus", "context_x2"), q(main_doc, "resilient_gpus", "context_x2")) == (12, 13)
    # FP8 KV: 64 KiB/token, twice the token capacity.
    assert q(main_doc, "kv_bytes_per_token", "fp8_kv") == 64
    assert q(main_doc, "kv_token_capacity", "fp8_kv") == 2 * q(main_doc, "kv_token_capacity")
    # Slip 5: TTFT 400 ms at lambda_safe 5.2 gives 12 active, 13 resilient (not 15).
    assert (q(main_doc, "active_gpus", "ttft_400ms"), q(main_doc, "resilient_gpus", "ttft_400ms")) == (12, 13)
    # Fixed-fleet check: the nominal fleet at the scenario's lambda_safe. AWS's 16 GPUs
    # absorb the surge (80 % loaded); the 10 fractional GPUs (70 req/s) do not.
    assert row(main_doc, AWS, "surge_50")["fleet_holds"] is True
    assert row(main_doc, FRACTIONAL, "surge_50")["fleet_safe_capacity"] == pytest.approx(70)
    assert row(main_doc, FRACTIONAL, "surge_50")["fleet_holds"] is False
    assert row(main_doc, FRACTIONAL, "ttft_400ms")["fleet_safe_capacity"] == pytest.approx(52)
    # Slip 6: N-1 on AWS is 15 GPUs x 7.0 = 105 req/s safe (not 70).
    assert row(main_doc, AWS, "n_minus_1")["fleet_safe_capacity"] == pytest.approx(105)
    assert row(main_doc, FRACTIONAL, "n_minus_1")["fleet_safe_capacity"] == pytest.approx(63)


def test_pins_are_reported_as_overrides(main_doc):
    pinned = main_doc["scenarios"]["context_x2"]["quantities"]["instance_max_rate"]
    assert pinned["pinned"] is True and pinned["tag"] == "assumption"
    assert pinned["formula_replaced"].startswith("max_before_failure(")
    assert pinned["value"] == 7.5


def test_retail_chatbot(retail_doc):
    assert q(retail_doc, "slo_batch_limit") == 4
    assert q(retail_doc, "in_flight_requests") == 100
    assert (q(retail_doc, "active_gpus"), q(retail_doc, "resilient_gpus")) == (25, 26)
    aws = row(retail_doc, AWS)
    assert aws["nodes"] == 4
    assert aws["hourly_cost"] == pytest.approx(163.84)
    # Slip 2: 21.96 B output tokens a month, so $5.46 per 1M (not $54.8).
    assert q(retail_doc, "monthly_output_tokens") == pytest.approx(21.96e9)
    assert round(aws["cost_per_million_tokens"], 2) == 5.46
    assert q(retail_doc, "kv_token_capacity") == 450_846   # 14.90 GiB pinned: the lesson's own figure


def test_lesson_exercise_1_kv_capacity(write_plan, base_plan, run_main):
    # Slip 3: A100-40GB (39.8 GiB), 14.90 GiB weights: 157,040 tokens, C_max 148.
    base_plan["gpu"] = "a100-sxm4-40gb"
    base_plan["inputs"].update({"gpu_memory_reported": "39.8 GiB/GPU", "weight_memory": "14.90 GiB"})
    base_plan["tables"]["classes"]["rows"] = [{"name": "all", "weight": 1.0, "prompt_tokens": 512, "output_tokens": 512}]
    code, out, err = run_main("eval", write_plan(base_plan), "--json")
    assert code == 0, err
    quantities = json.loads(out)["scenarios"]["nominal"]["quantities"]
    assert quantities["kv_token_capacity"]["value"] == 157_040
    assert quantities["max_concurrency_avg"]["value"] == 148


def test_lesson_exercise_3_fractional_cost(write_plan, base_plan, run_main):
    # Slip 4: 9 GPUs x $2.10 x 732 h = $13,834.80; 5.127 B tokens; $2.70 per 1M.
    base_plan["inputs"].update({"peak_arrival_rate": "40 req/s", "peak_to_average_ratio": 2.5,
                                "safe_rate_per_replica": "5.6 req/s"})
    base_plan["tables"]["classes"]["rows"] = [
        {"name": "a", "weight": 0.7, "prompt_tokens": 32, "output_tokens": 64},
        {"name": "b", "weight": 0.2, "prompt_tokens": 128, "output_tokens": 256},
        {"name": "c", "weight": 0.1, "prompt_tokens": 512, "output_tokens": 256}]
    base_plan["tables"]["deployments"]["rows"] = [{"name": "frac", "gpus_per_node": 1, "node_hourly_cost": "2.10 USD/h"}]
    code, out, err = run_main("eval", write_plan(base_plan), "--json")
    assert code == 0, err
    doc = json.loads(out)["scenarios"]["nominal"]
    assert doc["quantities"]["resilient_gpus"]["value"] == 9
    frac = doc["tables"]["deployments"]["rows"][0]
    assert frac["monthly_cost"] == pytest.approx(13_834.80)
    assert round(doc["quantities"]["monthly_output_tokens"]["value"] / 1e9, 3) == 5.127
    assert round(frac["cost_per_million_tokens"], 2) == 2.70
