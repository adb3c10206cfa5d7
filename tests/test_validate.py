"""``capplan validate PLAN FILE...``: a team's own benchmark points against the estimate's predictions.

The hand-worked cases rebuild the estimate group's arithmetic in the test from the plan's
evaluated inputs (weights, bandwidth, KV bytes per token, FLOPs and their efficiencies) for
one synthetic vLLM result each: an open-loop point and a closed loop of four streams.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math

import pytest
from conftest import ROOT
from shared_examples import GUIDELLM_V03, VLLM_70B, example

from capplan.analysis import pipeline, validation
from capplan.loading import catalog

# the constants a vLLM plan takes from its engine (model/catalog/engines.yaml, fitted by benchmarks/bench_calibration.py)
_VLLM = catalog.lookup("engine", "vllm").values
ENGINE_FACTOR = float(_VLLM["engine_step_factor"]["value"])
BAND = float(_VLLM["estimate_band"]["value"])


def _result(tmp_path, name="run.json", **fields):
    """A small ``vllm bench serve --save-result`` file: 10 requests of 100 prompt and 50 output tokens."""
    doc = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B", "request_rate": 2.0, "burstiness": 1.0,
           "max_concurrency": None, "num_prompts": 10, "completed": 10, "failed": 0, "request_goodput": None,
           "total_input_tokens": 1000, "total_output_tokens": 500, "output_throughput": 90.0,
           "median_ttft_ms": 40.0, "median_tpot_ms": 12.0, "median_e2el_ms": 700.0, **fields}
    path = tmp_path / name
    path.write_text(json.dumps({k: v for k, v in doc.items() if v != "drop"}))
    return path


def _validated(run_main, plan, *files):
    code, out, err = run_main("validate", plan, *files, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _by_hand(plan_path, prompt: float, output: float, efficiency: float | None = None):
    """The estimate's R₀, a, n_dec and unqueued TTFT (s) for one class of these lengths, from the
    plan's evaluated inputs (llama-3-8b: every layer full attention, so the cache holds the context),
    at ``efficiency`` of the HBM bandwidth when given, else the plan's."""
    v = pipeline.evaluate_plan(plan_path)[1][0].values
    bandwidth = v["hbm_bandwidth"] * v["gpus_per_replica"] * (efficiency or v["hbm_efficiency"])
    per_token = v["flops_per_param_token"] * v["active_parameter_count"] / (
        v["tensor_peak_flops"] * v["gpus_per_replica"] * v["tensor_efficiency"])
    resident = (prompt + output / 2) / (prompt + output)
    request_kv = resident * (prompt + output) * v["kv_bytes_per_token"] / bandwidth
    growth = output * request_kv + (prompt + output) * per_token
    return v["weight_memory"] / bandwidth, growth, output, prompt * per_token + v["prefill_overhead"]


def test_an_open_loop_point_is_predicted_by_the_estimates_engine_step(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    found = _validated(run_main, plan, _result(tmp_path))
    r0, a, _, ttft = _by_hand(plan, 100, 50)
    step = ENGINE_FACTOR * r0 / (1 - 2.0 * ENGINE_FACTOR * a)          # t = f·R₀ / (1 − λ·f·a) at 2 req/s
    point, = found["points"]
    got = {c["quantity"]: c for c in point["compared"]}
    assert got["TPOT p50"]["predicted"] == pytest.approx(1000 * step)
    assert got["TPOT p50"]["measured"] == 12.0
    assert got["TPOT p50"]["ratio"] == pytest.approx(1000 * step / 12.0)
    assert got["output tok/s"]["predicted"] == pytest.approx(2.0 * 50)  # λ·O: the offered load is delivered
    assert 2.0 * ENGINE_FACTOR * a < 0.5          # the prefill shares under half the step: the median prompt waits not
    assert got["TTFT p50"]["predicted"] == pytest.approx(1000 * ttft)   # its unqueued prefill and the overhead
    assert point["load"] == "2 req/s open loop" and point["under_estimated_max_rate"] is True


def test_a_closed_loop_point_spends_part_of_each_cycle_waiting_for_its_first_token(tmp_path, base_plan, write_plan,
                                                                                      run_main):
    plan = write_plan(base_plan)
    found = _validated(run_main, plan, _result(tmp_path, request_rate="inf", max_concurrency=4))
    r0, a, n_dec, ttft = _by_hand(plan, 100, 50)
    point, = found["points"]
    got = {c["quantity"]: c["predicted"] for c in point["compared"]}
    assert 1000 * ENGINE_FACTOR * r0 < got["TPOT p50"] < 1000 * ENGINE_FACTOR * (r0 + 4 * a / n_dec)
    cycle = ttft + (n_dec - 1) * got["TPOT p50"] / 1000          # a cycle at least the unqueued TTFT and the decode
    assert got["output tok/s"] < 4 / cycle * 50                   # so 4 clients complete fewer than 4 / cycle a second
    assert got["output tok/s"] < 4 / (got["TPOT p50"] / 1000)     # (the old prediction: all 4 always decoding)
    assert point["load"] == "4 in flight (concurrent (4 streams))" and point["under_estimated_max_rate"] is None


STEADY = {"engine_step_factor": 1.0, "estimate_weights_time": 0.01, "estimate_step_growth": 0.0,
          "estimate_steps_per_request": 101.0, "estimate_decode_batch": 1024.0, "estimate_prompt_time": 1.0,
          "prefill_overhead": 0.0}


def test_two_clients_by_mean_value_analysis_by_hand():
    """A 1 s prefill each and a decode of 100 steps of 10 ms: the first client cycles in 2 s
    (X = 0.5, Q = 0.5 in prefill); the second finds R = 1·(1 + 0.5) = 1.5 s, X = 2 / (1.5 + 1) = 0.8."""
    loop = validation.closed_loop(STEADY, 2)
    assert (loop.rate, loop.step, loop.wait, loop.busy, loop.bound) == pytest.approx((0.8, 0.01, 0.5, 0.8, 1.0))
    # median: 1 s own prefill + (W̄/ρ)·ln(ρ / 0.5) = 0.625·ln 1.6; p99: the exponential tail past one
    # prompt ahead, so the bound: 1 s + 1 s
    assert loop.ttft(STEADY, 0.5) == pytest.approx(1 + 0.625 * math.log(1.6))
    assert loop.ttft(STEADY, 0.99) == pytest.approx(2.0)


def test_one_client_solves_its_cycle_with_the_step_its_own_rate_makes():
    """t(X) = R₀ / (1 − X·a) with a = 2 ms per req/s; X·(1 + 100·t(X)) = 1, the root of
    0.002·X² − 2.002·X + 1 = 0."""
    values = dict(STEADY, estimate_step_growth=0.002)
    loop = validation.closed_loop(values, 1)
    root = (2.002 - math.sqrt(2.002 ** 2 - 0.008)) / 0.004
    assert loop.rate == pytest.approx(root, rel=1e-9)
    assert loop.step == pytest.approx(0.01 / (1 - 0.002 * root), rel=1e-9)
    assert loop.wait == 0 and loop.ttft(values, 0.99) == pytest.approx(1.0)     # nobody ahead


def test_a_tpot_tail_counts_the_prompts_its_window_carries_over_the_mean_by_hand():
    """1 req/s, a 10 ms step, 100 steps after the first token: a window of 1 s, K ~ Poisson(1)
    prompts of 100 tokens at 1 ms a token (f = 1) each adding 0.1 s over the 100 steps. P(K ≤ k):
    0.368, 0.736, 0.920, 0.981, 0.996, so K_90 = 2 and K_99 = 4."""
    values = dict(STEADY, estimate_token_time=0.001)
    assert [validation.poisson_quantile(1.0, q) for q in (0.9, 0.99)] == [2, 4]
    assert validation.tpot_quantile(values, 0.01, 1.0, 100, 0.9) == pytest.approx(0.01 + (2 - 1) * 0.1 / 100)
    assert validation.tpot_quantile(values, 0.01, 1.0, 100, 0.99) == pytest.approx(0.01 + (4 - 1) * 0.1 / 100)
    assert validation.tpot_quantile(values, 0.01, 1.0, 100, 0.5) == 0.01          # the median: the step


def test_a_loop_of_a_billion_clients_saturates_the_prefill_queue_without_walking_them():
    """Past 1,024 clients Schweitzer's approximation: the queue serves a prompt a second, so X
    approaches 1 req/s and nearly every client waits in it, R ≈ N·s_pre."""
    loop = validation.closed_loop(STEADY, 10 ** 9)
    assert loop.rate == pytest.approx(1.0, rel=1e-6) and loop.wait == pytest.approx(1e9, rel=1e-6)
    near = validation.closed_loop(STEADY, 1025), validation.closed_loop(STEADY, 1024)
    assert near[0].rate == pytest.approx(near[1].rate, rel=1e-3)     # the two agree where they meet


def test_a_wait_tail_is_m_m_1s_by_hand():
    """Busy 0.8, mean wait 0.4 s: P(W > y) = 0.8·exp(−2y); the p95 solves 0.05 = 0.8·exp(−2y)."""
    assert validation.wait_quantile(0.4, 0.8, 0.95) == pytest.approx(math.log(16) / 2)
    assert validation.wait_quantile(0.4, 0.8, 0.1) == 0          # 20 % never wait: the 10th percentile does not
    assert validation.wait_quantile(0.4, 0.8, 0.99, bound=1.0) == 1.0


LOOSE = {"ttft_p95_slo": "60 s", "tpot_p95_slo": "10 s", "e2e_p99_slo": "600 s"}   # no SLO binds λ̂*


def test_the_schedulers_max_seqs_caps_the_decode_batch_and_lambda_star(tmp_path, base_plan, write_plan, run_main):
    base_plan["inputs"].update(LOOSE)
    plan = write_plan(base_plan)
    v = pipeline.evaluate_plan(plan)[1][0].values
    pool = math.floor(v["kv_token_capacity"] / (150 * (1 + v["paged_tail_waste"]))) / (125 / 150)
    assert pool > 3000                                                  # the KV pool holds ~3,500 such requests
    r0, a, n_dec, _ = _by_hand(plan, 100, 50)
    capped = 1024 / (ENGINE_FACTOR * (n_dec * r0 + 1024 * a))        # λ n_dec t = 1,024 (max_num_seqs), t = f·R₀ / (1 − λ·f·a)
    point, = _validated(run_main, plan, _result(tmp_path))["points"]
    assert point["estimated_max_rate"] == pytest.approx(capped)
    burst, = _validated(run_main, plan, _result(tmp_path, request_rate="inf", num_prompts=2000, completed=2000,
                                                  total_input_tokens=200_000, total_output_tokens=100_000))["points"]
    tpot = {c["quantity"]: c["predicted"] for c in burst["compared"]}["TPOT p50"]
    assert tpot == pytest.approx(1000 * ENGINE_FACTOR * (r0 + 1024 * a / n_dec))  # 2,000 in flight, 1,024 decode
    assert "hold 1024 of them" in burst["note"]


def test_a_burst_waits_for_the_prompts_ahead_of_it_in_the_token_budget(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    r0, _, _, ttft = _by_hand(plan, 100, 50)
    per_token = (ttft - 0.02) / 100
    found = _validated(run_main, plan, _result(tmp_path, request_rate="inf", num_prompts=100, completed=100,
                                                total_input_tokens=10_000, total_output_tokens=5_000))
    ahead = (100 + 1) / 2 * 100                                          # the median prompt and those before it
    steps = math.ceil(ahead / 8192)                                      # chunks of the 8,192-token budget
    expected = ENGINE_FACTOR * (steps * r0 + ahead * per_token) + 0.02
    got = {c["quantity"]: c["predicted"] for c in found["points"][0]["compared"]}
    assert got["TTFT p50"] == pytest.approx(1000 * expected)


def _fit_files(tmp_path, plan, efficiency):
    """Two open-loop runs whose median TPOTs are the estimate's step at ``efficiency`` of the bandwidth."""
    r0, a, _, _ = _by_hand(plan, 100, 50, efficiency)
    return [_result(tmp_path, f"r{rate:g}.json", request_rate=rate,
                    median_tpot_ms=1000 * ENGINE_FACTOR * r0 / (1 - rate * ENGINE_FACTOR * a)) for rate in (1.0, 3.0)]


def test_fit_recovers_the_hbm_efficiency_the_tpots_were_made_with(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    files = _fit_files(tmp_path, plan, 0.58)
    code, out, err = run_main("validate", plan, *files, "--fit")
    assert code == 0, err
    block = out[out.index("inputs:\n"):]
    assert "  hbm_efficiency:\n    value: 0.58\n    tag: measurement\n" in block
    for f in files:
        assert f"{f} (sha256 {hashlib.sha256(f.read_bytes()).hexdigest()})" in block
    assert "r1.json: 1 req/s" in out and "r3.json: 3 req/s" in out


def test_fit_recovers_the_prefill_a_closed_loop_sweep_was_made_with(tmp_path, write_plan, run_main):
    """Closed loops of 2, 8 and 32 clients (4,096-token prompts, MiniMax-M2.5 on 8×H200) whose output
    tok/s and median TTFT are the prediction at a prefill efficiency of 0.3 and an overhead of
    200 ms: --fit finds both (estimate_prefill_efficiency is the estimate group's: a plan with
    candidates states it)."""
    runs = {n: dict(request_rate="inf", max_concurrency=n, num_prompts=100, completed=100, total_input_tokens=409_600,
                    total_output_tokens=12_800) for n in (2, 8, 32)}
    made = _minimax_plan({"estimate_prefill_efficiency": 0.3, "prefill_overhead": "200 ms"})
    truth = _validated(run_main, write_plan(made), *(_result(tmp_path, f"c{n}.json", **r) for n, r in runs.items()))
    for n, point in zip(runs, truth["points"]):
        got = {c["quantity"]: c["predicted"] for c in point["compared"]}
        runs[n].update(output_throughput=got["output tok/s"], median_ttft_ms=got["TTFT p50"])
    files = [_result(tmp_path, f"c{n}.json", **r) for n, r in runs.items()]
    code, out, err = run_main("validate", write_plan(_minimax_plan({})), *files, "--fit")
    assert code == 0, err
    block = out[out.index("inputs:\n"):]
    assert "  estimate_prefill_efficiency:\n    value: 0.3\n    tag: measurement\n" in block
    assert "  prefill_overhead:\n    value: 200 ms\n    tag: measurement\n" in block
    assert "c32.json: 32 clients" in out and "hbm_efficiency" not in block     # no open-loop point to fit it


def test_fit_without_a_decode_bound_open_loop_point_names_the_files(tmp_path, base_plan, write_plan, run_main):
    burst = _result(tmp_path, request_rate="inf")
    code, out, err = run_main("validate", write_plan(base_plan), burst, "--fit")
    assert code == 1 and out == ""
    assert err.startswith(f"error: {burst}: --fit: no decode-bound open-loop point with a median TPOT")


def test_the_text_names_the_formulas_each_point_and_the_summary(tmp_path, base_plan, write_plan, run_main):
    code, out, _ = run_main("validate", write_plan(base_plan), _result(tmp_path))
    assert code == 0
    assert "t = f·R₀ / (1 − λ·f·a)" in out and "W̄ = t_pre·ρ / (1 − ρ)" in out
    assert "closed loop with N clients (mean value analysis)" in out
    assert "run.json: 2 req/s open loop" in out and "under λ̂*" in out
    assert "summary all: median factor off" in out and f"within ±{BAND:.0%}" in out


def test_the_shared_vllm_sweep_is_predicted_point_by_point(run_main):
    folder = example(*VLLM_70B)
    files = [folder / f"qps_{q}.json" for q in ("01", "04", "16", "inf")]
    found = _validated(run_main, ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml", *files)
    assert [p["load"] for p in found["points"]] == ["1 req/s open loop", "4 req/s open loop", "16 req/s open loop",
                                                     "200 in flight (burst)"]
    assert [f["sha256"][:8] for f in found["files"]] == ["f7e49863", "4c9ece53", "6d4a5f64", "ca48cb66"]
    tpot = {c["quantity"]: c for c in found["points"][1]["compared"]}["TPOT p50"]
    assert tpot["measured"] == pytest.approx(27.348463269617604) and tpot["inside_band"]
    assert [p["under_estimated_max_rate"] for p in found["points"]] == [True, True, False, None]
    assert found["summary"][-1]["quantity"] == "all" and found["summary"][-1]["count"] == 36   # 3 medians, 6 tails
    assert {s["quantity"] for s in found["summary"]} >= {"TTFT p90", "TTFT p95", "TTFT p99", "TPOT p99"}


def test_the_shared_guidellm_report_is_one_synchronous_stream(base_plan, write_plan, run_main):
    report = example(*GUIDELLM_V03) / "benchmarks_stripped.json"
    found = _validated(run_main, write_plan(base_plan), report)
    point, = found["points"]
    assert point["load"] == "1 in flight (synchronous)"
    assert point["prompt_tokens"] == pytest.approx(257.1086956521739)
    assert {c["quantity"] for c in point["compared"]} == {"output tok/s", *(f"{m} p{q}" for m in ("TPOT", "TTFT")
                                                                            for q in (50, 90, 95, 99))}
    assert all(math.isfinite(c["predicted"]) for c in point["compared"])


def test_a_file_that_is_no_benchmark_is_one_message_naming_it(tmp_path, base_plan, write_plan, run_main):
    other = tmp_path / "notes.json"
    other.write_text('{"hello": 1}')
    code, out, err = run_main("validate", write_plan(base_plan), other)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {other}: unknown sweep file format") and "Traceback" not in err


def test_a_point_without_token_counts_names_the_file_and_key(tmp_path, base_plan, write_plan, run_main):
    bare = _result(tmp_path, total_input_tokens="drop")
    code, _, err = run_main("validate", write_plan(base_plan), bare)
    assert code == 1
    assert err.startswith(f"error: {bare}: total_input_tokens: no token counts in run 1")


def test_a_plan_without_its_gpu_is_refused_by_name(tmp_path, base_plan, write_plan, run_main):
    del base_plan["gpu"]
    code, _, err = run_main("validate", write_plan(base_plan), _result(tmp_path))
    assert code == 1 and "gpu" in err and "Traceback" not in err


def test_a_missing_file_is_exit_1_and_no_file_is_a_usage_error(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    code, _, err = run_main("validate", plan, tmp_path / "absent.json")
    assert code == 1 and f"{tmp_path / 'absent.json'}: cannot read the file" in err
    with pytest.raises(SystemExit) as usage:
        run_main("validate", plan)
    assert usage.value.code == 2


MINIMAX = {"title": "MiniMax-M2.5 TEP8 on H200", "owner": "t", "gpu": "h200", "model": "minimax-m2.5",
           "sizing": "estimate", "memory_accounting": "engine", "expert_parallel": "split",
           "inputs": {"gpus_per_replica": "8 GPU", "expert_parallel_size": 1,
                      "peak_arrival_rate": "5 req/s", "peak_to_average_ratio": 2, "ttft_p95_slo": "2 s",
                      "tpot_p95_slo": "50 ms", "e2e_p99_slo": "60 s", "rho_target": 0.7},
           "tables": {"classes": {"rows": [{"name": "r", "weight": 1.0, "prompt_tokens": 4096, "output_tokens": 128}]},
                      "deployments": {"as_of": "2026-01-01", "rows": [{"name": "d", "gpus_per_node": 8,
                                                                        "node_hourly_cost": "30 USD/h"}]}},
           "candidates": {"gpus": ["h200"], "tp": [8], "offers": [
               {"name": "d", "gpu": "h200", "gpus_per_node": 8, "node_hourly_cost": "30 USD/h", "as_of": "2026-01-01"}]}}
FITTED = {"estimate_prefill_efficiency": 0.1, "prefill_overhead": "750 ms"}     # docs/calibration.md, "Closed loop"


def _minimax_plan(inputs: dict) -> dict:
    """A plan for MiniMax-M2.5 TP8 with expert parallelism on 8×H200, ``inputs`` added."""
    plan = copy.deepcopy(MINIMAX)
    plan["inputs"] = {k: _sourced(v) for k, v in {**MINIMAX["inputs"], **inputs}.items()}
    plan["tables"]["deployments"]["rows"][0]["source"] = "t"
    plan["candidates"]["offers"][0]["source"] = "t"
    return plan


def _minimax(run_main, write_plan, inputs):
    """The InferenceX MiniMax-M2.5 closed-loop files (4,096 in, 128 out, 4-64 clients) validated."""
    folder = example("inferencex", "minimax-m2.5-tep8-h200-isl4096")
    files = sorted(folder.glob("*.json"), key=lambda f: int(f.stem.rsplit("conc", 1)[1]))
    return {s["quantity"]: s for s in _validated(run_main, write_plan(_minimax_plan(inputs)), *files)["summary"]}


def _sourced(value):
    return {"value": value, "source": "test"}


def test_the_minimax_closed_loop_with_its_fitted_prefill_is_inside_the_band(write_plan, run_main):
    before = _minimax(run_main, write_plan, {})
    after = _minimax(run_main, write_plan, FITTED)
    assert before["TTFT p50"]["median_factor_off"] > 20                  # the compute bound: 0.01-0.07 of the measured
    assert after["TTFT p50"]["inside_band"] == 6 and after["TTFT p99"]["inside_band"] >= 5     # of 6, inside ±35 %
    assert after["output tok/s"]["median_factor_off"] < 1.25 and after["output tok/s"]["inside_band"] >= 5


def test_the_simplest_plan_a_team_has_is_validated_gpu_model_and_tp_only(tmp_path, write_plan, run_main):
    """No traffic, no SLOs, no tables, Little's-law sizing without its decode throughput: validate
    predicts the deployment, and says there is no λ̂* without SLOs instead of asking for them."""
    plan = write_plan({"title": "Our box", "gpu": "a100-sxm4-80gb", "model": "llama-3-8b", "sizing": "littles_law",
                       "inputs": {"gpus_per_replica": "1 GPU"}}, "simplest")
    found = _validated(run_main, plan, _result(tmp_path))
    point, = found["points"]
    assert point["under_estimated_max_rate"] is None and point["estimated_max_rate"] is None
    assert {c["quantity"] for c in point["compared"]} == {"output tok/s", "TPOT p50", "TTFT p50"}
    assert any("no λ̂*" in n and "ttft_p95_slo" in n for n in found["notes"])
    code, out, _ = run_main("validate", plan, _result(tmp_path))
    assert code == 0 and "λ̂*" in out


def test_the_simplest_plan_predicts_what_the_full_plan_does(tmp_path, base_plan, write_plan, run_main):
    full = _validated(run_main, write_plan(base_plan, "full"), _result(tmp_path))
    bare = _validated(run_main, write_plan({"title": "Our box", "gpu": base_plan["gpu"], "model": base_plan["model"],
                                            "inputs": {}}, "bare"), _result(tmp_path))
    assert [c["predicted"] for c in bare["points"][0]["compared"]] == \
        [c["predicted"] for c in full["points"][0]["compared"]]


def test_what_the_prediction_truly_needs_is_still_one_message(tmp_path, write_plan, run_main):
    """A model read from its config.json still needs its parameter count (the weights a step
    reads): named, with the file and key, no traceback."""
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "intermediate_size": 14336,
              "vocab_size": 128256}
    (tmp_path / "plans").mkdir(exist_ok=True)
    (tmp_path / "plans" / "config.json").write_text(json.dumps(config))
    plan = write_plan({"title": "Our box", "gpu": "a100-sxm4-80gb", "model": {"config": "config.json"}, "inputs": {}},
                      "needs")
    code, _, err = run_main("validate", plan, _result(tmp_path))
    assert code == 1 and "Traceback" not in err
    assert "config.json does not say parameter_count" in err and "needs.yaml" in err


def test_a_long_file_name_keeps_the_points_load_in_its_row(tmp_path, base_plan, write_plan, run_main):
    """InferenceX names files like minimax_m25_vllm_tep8_isl4096_osl128_conc16.json: the row still says
    which file and load it was (not the name cut at 40 characters, which left neither)."""
    run = _result(tmp_path, "minimax_m25_vllm_tep8_isl4096_osl128_conc16.json")
    code, out, _ = run_main("validate", write_plan(base_plan), run)
    assert code == 0
    row, = [line for line in out.splitlines() if "ISL 100 / OSL 50" in line]
    assert row.startswith("minimax_m25_vllm_tep8_isl4096_osl128_conc16.json: 2 req/s open loop ")


def test_a_plan_without_candidates_gives_the_engines_scheduler_limits(tmp_path, base_plan, write_plan, run_main):
    """The estimate's scheduler inputs (vLLM's --max-num-seqs and --max-num-batched-tokens) are the
    server's: a plan without candidates: states them for validate as a plan with candidates does."""
    r0, a, n_dec, _ = _by_hand(write_plan(base_plan, "built"), 100, 50)
    base_plan["inputs"].update(estimate_max_seqs=2, estimate_token_budget="4096 token")
    plan = write_plan(base_plan)
    point, = _validated(run_main, plan, _result(tmp_path, request_rate="inf", max_concurrency=4))["points"]
    tpot = {c["quantity"]: c["predicted"] for c in point["compared"]}["TPOT p50"]
    assert tpot == pytest.approx(1000 * ENGINE_FACTOR * (r0 + 2 * a / n_dec))      # 2 of the 4 streams decode
    assert "hold 2 of them" in point["note"]
