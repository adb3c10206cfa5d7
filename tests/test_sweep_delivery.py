"""An overloaded benchmark point is not a pass, whatever its percentiles say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capplan.loading.sweeps import delivery_text, read_sweep

OVERLOADED_GUIDELLM = Path(__file__).parent / "data" / "guidellm-overloaded"


def _sweep_plan(base_plan, write_plan, tmp_path, folder: Path, pattern: str, **inputs):
    target = tmp_path / "plans" / "sweep"
    target.mkdir(parents=True, exist_ok=True)
    for f in folder.iterdir():
        (target / f.name).write_bytes(f.read_bytes())
    base_plan["inputs"].update(inputs)
    base_plan["tables"]["load_sweep"] = {"source": "test runs", "import": [f"sweep/{pattern}"]}
    return write_plan(base_plan)


def _nominal(run_main, path):
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    return json.loads(out)["scenarios"]["nominal"]


def test_guidellm_incomplete_requests_fail_the_point(base_plan, write_plan, tmp_path, run_main):
    [f] = read_sweep(OVERLOADED_GUIDELLM, ["benchmarks.json"])
    four = f.points[2]
    assert (four.completed, four.failed, four.sent, four.achieved_rate) == (1450, 1, 2400, 2.4)

    path = _sweep_plan(base_plan, write_plan, tmp_path, OVERLOADED_GUIDELLM, "*.json")
    doc = _nominal(run_main, path)
    rows = doc["tables"]["load_sweep"]["rows"]
    assert [r["arrival_rate"] for r in rows] == [1, 2, 4]
    last = rows[2]
    # every percentile and the error budget pass: only the delivered share fails
    assert [last[k] for k in ("ttft_p95_ok", "tpot_p95_ok", "e2e_p99_ok", "errors_ok")] == [True] * 4
    assert last["completed_share"] == pytest.approx(1450 / 2400)
    assert last["achieved_share"] == pytest.approx(0.6)
    assert (last["delivered_ok"], last["meets_slo"]) == (False, False)
    assert [r["delivered_ok"] for r in rows[:2]] == [True, True]   # 1.98 of 2 req/s is 99 %
    assert doc["quantities"]["instance_max_rate"]["value"] == 2

    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text()
    assert ("λ* = 2 req/s: every SLO holds up to it. The knee lies between 2 and 4 req/s (first failure: "
            "only 1450 of 2400 requests completed at 4 req/s (1 failed, 949 unfinished); 2.4 of 4 req/s "
            "achieved (60%): the replica was saturated); sweep finer there.") in record
    assert "| FAIL | 4 | ✗ delivered |" in record             # the verdict and rate first, then what it misses


def test_a_lower_policy_threshold_lets_the_point_pass(base_plan, write_plan, tmp_path, run_main):
    path = _sweep_plan(base_plan, write_plan, tmp_path, OVERLOADED_GUIDELLM, "*.json",
                       min_delivered_share=0.5)
    assert _nominal(run_main, path)["quantities"]["instance_max_rate"]["value"] == 4


def _vllm(rate, completed, num_prompts):
    return {"backend": "vllm", "num_prompts": num_prompts, "request_rate": rate, "burstiness": 1.0,
            "max_concurrency": None, "duration": 60.0, "completed": completed, "failed": 0,
            "request_throughput": completed / 60, "request_goodput": None, "output_throughput": 900.0,
            "p95_ttft_ms": 80.0, "p95_tpot_ms": 20.0, "p99_e2el_ms": 2500.0}


def test_vllm_run_that_completed_fewer_than_it_sent(base_plan, write_plan, tmp_path, run_main):
    runs = tmp_path / "runs"
    runs.mkdir()
    for rate, completed in ((1, 100), (2, 100), (5, 7)):
        (runs / f"qps_{rate}.json").write_text(json.dumps(_vllm(rate, completed, 100)))
    path = _sweep_plan(base_plan, write_plan, tmp_path, runs, "qps_*.json")
    doc = _nominal(run_main, path)
    rows = doc["tables"]["load_sweep"]["rows"]
    assert [(r["sent"], r["completed"], r["errors_ok"], r["delivered_ok"]) for r in rows] == [
        (100, 100, True, True), (100, 100, True, True), (100, 7, True, False)]
    # vLLM's request_throughput includes the drain after the last request: never compared
    assert [r["achieved_rate"] for r in rows] == [0, 0, 0]
    assert doc["quantities"]["instance_max_rate"]["value"] == 2
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    assert ("(first failure: only 7 of 100 requests completed at 5 req/s (93 unfinished): "
            "the replica was saturated)") in (tmp_path / "out" / "test-plan.md").read_text()


def test_typed_rows_without_delivery_columns_count_as_delivered(base_plan, write_plan, run_main):
    doc = _nominal(run_main, write_plan(base_plan))
    rows = doc["tables"]["load_sweep"]["rows"]
    assert {(r["sent"], r["achieved_rate"], r["completed_share"], r["achieved_share"], r["delivered_ok"])
            for r in rows} == {(0, 0, 1, 1, True)}


def test_typed_rows_may_record_what_was_delivered(base_plan, write_plan, run_main):
    rows = base_plan["tables"]["load_sweep"]["rows"]
    rows[0].update(sent=100, completed=100)
    rows[1].update(achieved_rate="3.2 req/s")            # 80 % of the 4 req/s offered
    doc = _nominal(run_main, write_plan(base_plan))
    got = doc["tables"]["load_sweep"]["rows"]
    assert [r["delivered_ok"] for r in got] == [True, False, True]
    assert doc["quantities"]["instance_max_rate"]["value"] == 2


def test_delivery_text():
    assert delivery_text({"arrival_rate": 5, "sent": 100, "completed": 7, "failed": 0}) == \
        "only 7 of 100 requests completed at 5 req/s (93 unfinished)"
    assert delivery_text({"arrival_rate": 4, "sent": 200, "completed": 200, "failed": 0}) == \
        "200 of 200 requests completed at 4 req/s"
    assert delivery_text({"arrival_rate": 4.0, "achieved_rate": 3.0}) == "3 of 4 req/s achieved (75%)"
    assert delivery_text({"arrival_rate": 4.0}) == ""
