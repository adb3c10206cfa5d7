"""Little's-law sizing honours every SLO (issue #23, item 2): the per-request decode
rate is the tightest the E2E and TPOT SLOs require, the batch per replica and the
residence time follow from it, and gate 2 checks the decode step at that batch.

Each case is worked by hand in its comments from the retail plan's contract:
Ō = 500 output tokens, E2E p99 2 s, λ_peak 50 req/s, decode_throughput 1,000 tok/s
per replica (one GPU), weights pinned at 14.90 GiB, 128 KiB of KV cache per token.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import RETAIL_PLAN


def _evaluate(run_main, write_plan, **inputs) -> dict:
    """The retail plan with some inputs changed, as `capplan eval --json` reports its nominal scenario."""
    plan = yaml.safe_load(RETAIL_PLAN.read_text())
    plan.pop("expect")
    plan["inputs"].update(inputs)
    code, out, err = run_main("eval", write_plan(plan, "retail"), "--json")
    assert code == 0, err
    values = json.loads(out)["scenarios"]["nominal"]["quantities"]
    return {name: item["value"] for name, item in values.items()}


def test_retail_example_is_e2e_bound_and_keeps_the_lessons_values(run_main, write_plan):
    v = _evaluate(run_main, write_plan)
    # E2E: 500 tokens / 2 s = 250 tok/s; TPOT: 1 token / 4 ms = 250 tok/s: r = max = 250
    assert v["required_token_rate"] == pytest.approx(250)
    # B = floor(1,000 / 250) = 4 requests per replica; W = 500 / 250 = 2 s (the E2E SLO itself)
    assert v["slo_batch_limit"] == 4
    assert v["request_residence_time"] == pytest.approx(2)
    # L = 50 req/s × 2 s = 100 in flight; ceil(100 / 4) = 25 replicas = 25 GPUs, 26 with N+1
    assert v["in_flight_requests"] == pytest.approx(100)
    assert v["active_gpus"] == 25 and v["resilient_gpus"] == 26
    # λ_safe = B / W = 4 / 2 s = 2 req/s per replica
    assert v["safe_rate_per_replica"] == pytest.approx(2)
    # gate 2 at B = 4: (16.0 GB + 4 × 1,000 tokens × 128 KiB) / (2,039 GB/s × 0.76) = 10.66 ms > 4 ms
    assert v["decode_step_batch"] == 4
    assert v["decode_step_time_bound"] == pytest.approx(10.66, abs=0.005)
    assert v["bandwidth_gate"] is False


def test_tpot_bound_plan_shrinks_the_batch_not_the_fleet(run_main, write_plan):
    # decode_batch 32: gate 2 must not read it under Little's-law sizing
    v = _evaluate(run_main, write_plan, tpot_p95_slo="2 ms", decode_batch=32)
    # E2E: 500 / 2 s = 250 tok/s; TPOT: 1 token / 2 ms = 500 tok/s: the TPOT SLO binds, r = 500
    assert v["required_token_rate"] == pytest.approx(500)
    # B = floor(1,000 / 500) = 2 requests per replica; W = 500 tokens / 500 tok/s = 1 s
    assert v["slo_batch_limit"] == 2
    assert v["request_residence_time"] == pytest.approx(1)
    # L = 50 × 1 s = 50; ceil(50 / 2) = 25 replicas: λ·Ō / X = 50 × 500 / 1,000 = 25 whichever SLO binds
    assert v["in_flight_requests"] == pytest.approx(50)
    assert v["active_gpus"] == 25
    assert v["safe_rate_per_replica"] == pytest.approx(2)       # 2 requests / 1 s
    # gate 2 at B = 2, not 32: 14.90 GiB = 16.0 GB + 2 × 1,000 × 131,072 B = 16.26 GB;
    # / (2,039 GB/s × 0.76) = 10.49 ms, against the 2 ms TPOT SLO
    assert v["decode_step_batch"] == 2
    assert v["decode_bytes_per_step"] == pytest.approx(16.26, abs=0.005)
    assert v["decode_step_time_bound"] == pytest.approx(10.49, abs=0.005)
    assert v["bandwidth_gate"] is False


def test_issue_example_tpot_caps_the_batch(run_main, write_plan):
    # the issue's numbers: 2,500 tok/s at 20 tok/s per request under E2E (Ō 500 in 25 s) gave
    # 125 requests, 50 ms per token; the 40 ms TPOT SLO asks 25 tok/s: B = floor(2,500 / 25) = 100
    v = _evaluate(run_main, write_plan, decode_throughput="2500 tok/s", e2e_p99_slo="25 s", tpot_p95_slo="40 ms")
    assert v["required_token_rate"] == pytest.approx(25)
    assert v["slo_batch_limit"] == 100
    # W = 500 / 25 = 20 s; L = 50 × 20 = 1,000; ceil(1,000 / 100) = 10 replicas = 50 × 500 / 2,500
    assert v["request_residence_time"] == pytest.approx(20)
    assert v["active_gpus"] == 10
    assert v["decode_step_batch"] == 100
    # gate 2 passes at B = 100: 16.00 GB + 100 × 1,000 × 131,072 B = 29.11 GB; / 1,549.6 GB/s = 18.78 ms ≤ 40 ms
    assert v["decode_step_time_bound"] == pytest.approx(18.78, abs=0.005)
    assert v["bandwidth_gate"] is True


def test_seek_finds_where_a_tighter_tpot_slo_moves_the_fleet(run_main):
    # just below 4 ms the TPOT SLO binds: B = floor(1,000 tok/s × 3.99 ms) = 3 requests, W = 500 × 3.99 ms
    # = 1.995 s, L = 50 × 1.995 = 99.75, ceil(99.75 / 3) = 34 replicas: the batch loses a whole request at
    # once while the residence time shrinks smoothly; at 3.96 ms L = 99 = 33 × 3
    code, out, err = run_main("seek", RETAIL_PLAN, "tpot_p95_slo")
    assert code == 0, err
    assert "below 4 ms: active GPUs 25 → 34;" in out
    assert "at or below 3.96 ms: active GPUs 34 → 33;" in out
