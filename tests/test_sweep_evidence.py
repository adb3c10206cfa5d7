"""Evidence matches the plan (issue 23, item 1): the model and parallelism a sweep measured are the plan's,
or the sweep is declared transferred; a token mix far from the plan's is a warning with both numbers."""

from __future__ import annotations

import json

import pytest
from conftest import BASE_PLAN


def _run(rate: float, **changes) -> dict:
    """A `vllm bench serve --save-result` of 100 requests averaging 213 prompt and 212 output tokens."""
    return {"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 100,
            "request_rate": rate, "burstiness": 1.0, "max_concurrency": None, "duration": 60.0, "completed": 100,
            "failed": 0, "total_input_tokens": 21300, "total_output_tokens": 21200, "request_throughput": rate,
            "request_goodput": None, "output_throughput": 900.0, "p95_ttft_ms": 80.0, "p95_tpot_ms": 20.0,
            "p99_e2el_ms": 2500.0, **changes}


def _plan(base_plan, write_plan, tmp_path, runs, **table):
    folder = tmp_path / "plans" / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    for i, run in enumerate(runs):
        (folder / f"qps_{i}.json").write_text(json.dumps(run), encoding="utf-8")
    base_plan["tables"]["load_sweep"] = {"source": "test runs", "import": "runs/qps_*.json", **table}
    return write_plan(base_plan)


def _build(run_main, path, tmp_path):
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    return (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")


def test_a_sweep_of_another_model_is_refused_naming_both(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [_run(2), _run(4)])       # the plan is llama-3-8b
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("tables.load_sweep.import: the imported sweep measured model meta-llama/Llama-3.1-8B-Instruct, not the "
            "plan's llama-3-8b (meta-llama/Meta-Llama-3-8B): it is no evidence for this plan. Import runs of the "
            "plan's deployment, or declare the sweep transferred: {ratio: R, reason: ...} (the plan's deployment "
            "serves R times the benchmarked rate, and why)") in err


def test_the_same_model_by_its_hugging_face_id_and_parallelism_matches(base_plan, write_plan, tmp_path, run_main):
    base_plan.update(model="llama-3.1-8b")
    path = _plan(base_plan, write_plan, tmp_path, [_run(2, tensor_parallel_size=1), _run(4, tensor_parallel_size=1)])
    record = _build(run_main, path, tmp_path)
    assert ("measured: model meta-llama/Llama-3.1-8B-Instruct; tensor parallel 1; mean 213 prompt and 212 output "
            "tokens per request; GPU and engine version not recorded in the file") in record


def test_another_parallelism_is_refused(base_plan, write_plan, tmp_path, run_main):
    base_plan.update(model="llama-3.1-8b")
    path = _plan(base_plan, write_plan, tmp_path, [_run(2, tensor_parallel_size=8)])
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("the imported sweep measured 8 GPUs per replica (tensor_parallel_size 8 x pipeline_parallel_size 1), "
            "not the plan's gpus_per_replica 1: it is no evidence for this plan") in err


def test_a_transferred_sweep_is_accepted_scaled_and_shown(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [_run(2), _run(4)],
                 transferred={"ratio": 0.5, "reason": "Llama 3.1 on the same A100; half the rate for our longer prompts"})
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    rows = json.loads(out)["scenarios"]["nominal"]["tables"]["load_sweep"]["rows"]
    assert [r["arrival_rate"] for r in rows] == [1, 2]
    record = _build(run_main, path, tmp_path)
    assert ("Transferred evidence: model meta-llama/Llama-3.1-8B-Instruct, not the plan's llama-3-8b "
            "(meta-llama/Meta-Llama-3-8B); the benchmarked rates are scaled by 0.5 (Llama 3.1 on the same A100; "
            "half the rate for our longer prompts).") in record


@pytest.mark.parametrize("prompt, output, warning", [
    (4000, 1000, "⚠ Token mix: the benchmark's requests averaged 213 prompt tokens against the plan's class mix 4,000 "
                 "(-95%) and 212 output tokens against the plan's class mix 1,000 (-79%), more than ±25%: its "
                 "latencies measure other requests than the plan's."),
    (250, 180, None),                    # 213 is 15 % under 250, 212 is 18 % over 180: within a quarter
], ids=["far", "within a quarter"])
def test_a_token_mix_far_from_the_plans_is_a_warning_with_both_numbers(base_plan, write_plan, tmp_path, run_main,
                                                                      prompt, output, warning):
    base_plan.update(model="llama-3.1-8b")
    base_plan["tables"]["classes"]["rows"] = [{"name": "one", "weight": 1, "prompt_tokens": prompt,
                                               "output_tokens": output}]
    record = _build(run_main, _plan(base_plan, write_plan, tmp_path, [_run(2), _run(4)]), tmp_path)
    assert (warning in record) if warning else ("Token mix" not in record)


def test_a_malformed_or_misplaced_transferred_is_refused(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [_run(2)], transferred={"ratio": 0, "reason": "x"})
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("tables.load_sweep.transferred: expected transferred: {ratio: R, reason: ...}: R > 0, the rate the "
            "plan's deployment serves per benchmarked req/s, and the reason in words") in err
    base_plan["tables"]["load_sweep"] = {"rows": BASE_PLAN["tables"]["load_sweep"]["rows"],
                                         "transferred": {"ratio": 1, "reason": "x"}}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1
    assert ("tables.load_sweep.transferred: transferred: declares imported benchmark files as evidence from another "
            "deployment; this table has no import:") in err
