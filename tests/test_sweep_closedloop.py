"""Closed-loop sweeps (vLLM --max-concurrency, GuideLLM concurrent, InferenceX) import as what they are:
their rate is an outcome, so they give an optimistic bound on λ*, never λ* itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from capplan.errors import CapplanError
from capplan.loading.sweeps import read_sweep

INFERENCEX = ROOT.parent / "shared" / "examples" / "inferencex" / "minimax-m2.5-tep8-h200-isl4096"
GUIDELLM = Path(__file__).parent / "data" / "guidellm-0.8.1"
FIX = ("Measure open-loop rates up to it and import those: vllm bench serve --request-rate R without "
       "--max-concurrency, or guidellm run --profile kind=poisson (or kind=constant) --override profile.rate R1,R2,...")


def _plan(base_plan, write_plan, tmp_path, files, pattern, transferred=None, **inputs):
    folder = tmp_path / "plans" / "runs"
    folder.mkdir(parents=True)
    for f in files:
        shutil.copy(f, folder / f.name)
    base_plan["inputs"].update(inputs)
    base_plan["tables"]["load_sweep"] = {"source": "closed-loop runs", "import": f"runs/{pattern}",
                                         **({"transferred": transferred} if transferred else {})}
    return write_plan(base_plan)


@pytest.mark.skipif(not INFERENCEX.is_dir(), reason="the shared InferenceX examples are not on this machine")
def test_inferencex_files_read_in_seconds_as_closed_loops():
    files = read_sweep(INFERENCEX, ["*.json"])
    assert {f.tool for f in files} == {("InferenceX benchmark_serving (vLLM's result layout)", "summary in seconds")}
    conc16 = next(p for f in files for p in f.points if p.strategy == "concurrent (16 streams)")
    assert conc16.achieved_rate == pytest.approx(3.719412131150846)
    assert conc16.latency["e2e_p99"] == pytest.approx(6.219230377543718)          # p99_e2el in seconds
    assert "e2e_p99: summary key p99_e2el (s) x 1000 / 1000 (ms -> s)" in conc16.methods


@pytest.mark.skipif(not INFERENCEX.is_dir(), reason="the shared InferenceX examples are not on this machine")
def test_an_inferencex_concurrency_sweep_gives_a_bound_not_lambda_star(base_plan, write_plan, tmp_path, run_main):
    del base_plan["inputs"]["ttft_p95_slo"], base_plan["inputs"]["tpot_p95_slo"]
    path = _plan(base_plan, write_plan, tmp_path, sorted(INFERENCEX.glob("*.json")), "*.json",
                 ttft_p99_slo="2 s", tpot_p99_slo="50 ms", e2e_p99_slo="10 s")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("tables.load_sweep.import: the imported files hold no open-loop run (only closed-loop runs: "
            "concurrent (4 streams), concurrent (8 streams), concurrent (16 streams), concurrent (32 streams), "
            "concurrent (48 streams), concurrent (64 streams)): the request rate of a closed loop is an outcome (the "
            "throughput its clients reach), not an offered rate, and it has no Poisson queueing, so capplan derives "
            "no λ* from it. The highest throughput that meets the plan's SLOs is 3.71941 req/s "
            "(runs/minimax_m25_vllm_tep8_isl4096_osl128_conc16.json, concurrent (16 streams)): an optimistic upper "
            "bound on λ*, not λ* (an open-loop point at that rate queues). " + FIX) in err


def test_a_guidellm_concurrent_sweep_is_refused_with_its_bound(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [GUIDELLM / "concurrent.json"], "*.json", tpot_p95_slo="30 ms")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("(only closed-loop runs: concurrent (2 streams), concurrent (8 streams)): the request rate of a closed "
            "loop is an outcome") in err
    assert ("The highest throughput that meets the plan's SLOs is 1.4 req/s (runs/concurrent.json, concurrent "
            "(2 streams)): an optimistic upper bound on λ*") in err


def test_no_closed_loop_run_meets_the_slos(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [GUIDELLM / "concurrent.json"], "*.json", tpot_p95_slo="1 ms")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("so capplan derives no λ* from it. No run meets the plan's SLOs, so even the bound they give is below "
            "the lowest throughput, 1.4 req/s. " + FIX) in err


def test_vllm_max_concurrency_run_is_a_closed_loop_with_its_throughput(tmp_path):
    run = {"backend": "vllm", "num_prompts": 160, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 16,
           "duration": 43.0, "completed": 160, "failed": 0, "request_throughput": 3.72, "request_goodput": None,
           "output_throughput": 476.0, "p95_ttft_ms": 1500.0, "p95_tpot_ms": 30.0, "p99_e2el_ms": 6200.0}
    (tmp_path / "conc16.json").write_text(json.dumps(run), encoding="utf-8")
    [f] = read_sweep(tmp_path, ["conc16.json"])
    [p] = f.points
    assert (p.strategy, p.achieved_rate) == ("concurrent (16 streams)", 3.72)
    assert ("throughput: request_throughput 3.72 req/s, what this closed loop completed (an outcome of its "
            "concurrency, not an offered rate)") in p.methods


def test_closed_loops_beside_an_open_sweep_are_shown_with_their_throughput(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, [GUIDELLM / "benchmarks.json", GUIDELLM / "concurrent.json"],
                 "*.json", transferred={"ratio": 1, "reason": "a mock server"}, tpot_p95_slo="50 ms")
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert ("runs/concurrent.json: closed loop, concurrent (8 streams), 4 req/s completed (an outcome, not an offered "
            "rate)") in record


def _vllm_run(rate, cap) -> dict:
    return {"backend": "vllm", "num_prompts": 160, "request_rate": rate, "burstiness": 1.0, "max_concurrency": cap,
            "duration": 43.0, "completed": 160, "failed": 0, "request_throughput": 3.72, "request_goodput": None,
            "output_throughput": 476.0, "p95_ttft_ms": 150.0, "p95_tpot_ms": 20.0, "p99_e2el_ms": 3200.0}


@pytest.mark.parametrize("cap, said", [(0, "must be at least 1, got 0"), (-4, "must be at least 1, got -4"),
                                       (2.5, "expected a whole number, got 2.5")])
@pytest.mark.parametrize("rate", ["inf", 4.0], ids=["closed loop", "open loop"])
def test_a_max_concurrency_below_one_is_refused_by_name(base_plan, write_plan, tmp_path, run_main, cap, said, rate):
    """Issue 37, item 9: a client cap of 0 or -4 requests in flight is no run; alone or beside open-loop runs it
    is refused naming the field, the file and the value (it was 'concurrent (-4 streams)', a series of its own)."""
    folder = tmp_path / "plans" / "runs"
    folder.mkdir(parents=True)
    for name, run in (("qps_2.json", _vllm_run(2.0, None)), ("qps_3.json", _vllm_run(3.0, None)),
                      ("conc.json", _vllm_run(rate, cap))):
        (folder / name).write_text(json.dumps(run), encoding="utf-8")
    for pattern in ("runs/conc.json", "runs/*.json"):
        base_plan["tables"]["load_sweep"] = {"import": pattern}
        code, _, err = run_main("eval", write_plan(base_plan))
        assert code == 1
        assert f"tables.load_sweep.import: runs/conc.json: max_concurrency: {said}" in err, err


@pytest.mark.parametrize("key", ["max_concurrency", "streams"])
def test_a_guidellm_stage_with_fewer_than_one_stream_is_refused_by_name(tmp_path, key):
    doc = json.loads((GUIDELLM / "concurrent.json").read_text(encoding="utf-8"))
    doc["benchmarks"][1]["config"]["strategy"][key] = 0
    (tmp_path / "concurrent.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CapplanError) as caught:
        read_sweep(tmp_path, ["concurrent.json"])
    assert str(caught.value) == f"concurrent.json: benchmarks[1].config.strategy.{key}: must be at least 1, got 0"
