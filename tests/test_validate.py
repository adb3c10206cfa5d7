"""``capplan validate PLAN FILE...``: a team's own benchmark points against the estimate's predictions.

The hand-worked cases rebuild the estimate group's arithmetic in the test from the plan's
evaluated inputs (weights, bandwidth, KV bytes per token, FLOPs and their efficiencies) for
one synthetic vLLM result each: an open-loop point and a closed loop of four streams.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from conftest import ROOT
from shared_examples import GUIDELLM_V03, VLLM_70B, example

from capplan.analysis import pipeline

ENGINE_FACTOR = 1.3          # engine_step_factor's default (model/quantities.yaml)


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
    overhead = 0.02                                                   # prefill_overhead's default
    queued = (ttft - overhead) / (1 - 2.0 * ENGINE_FACTOR * a) + overhead   # prefill shares the step: t_pre / (1 − λ·f·a)
    assert got["TTFT p50"]["predicted"] == pytest.approx(1000 * queued)
    assert point["load"] == "2 req/s open loop" and point["under_estimated_max_rate"] is True


def test_a_closed_loop_point_is_predicted_with_its_streams_as_the_batch(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    found = _validated(run_main, plan, _result(tmp_path, request_rate="inf", max_concurrency=4))
    r0, a, n_dec, _ = _by_hand(plan, 100, 50)
    step = ENGINE_FACTOR * (r0 + 4 * a / n_dec)                        # t = f·(R₀ + B·a / n_dec), B = 4
    point, = found["points"]
    got = {c["quantity"]: c["predicted"] for c in point["compared"]}
    assert got["TPOT p50"] == pytest.approx(1000 * step)
    assert got["output tok/s"] == pytest.approx(4 / step)              # B tokens a step
    assert point["load"] == "4 in flight (concurrent (4 streams))" and point["under_estimated_max_rate"] is None


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


def test_fit_without_a_decode_bound_open_loop_point_names_the_files(tmp_path, base_plan, write_plan, run_main):
    burst = _result(tmp_path, request_rate="inf")
    code, out, err = run_main("validate", write_plan(base_plan), burst, "--fit")
    assert code == 1 and out == ""
    assert err.startswith(f"error: {burst}: --fit: no decode-bound open-loop point with a median TPOT")


def test_the_text_names_the_formulas_each_point_and_the_summary(tmp_path, base_plan, write_plan, run_main):
    code, out, _ = run_main("validate", write_plan(base_plan), _result(tmp_path))
    assert code == 0
    assert "t = f·R₀ / (1 − λ·f·a)" in out and "t_pre / (1 − λ·f·a)" in out
    assert "run.json: 2 req/s open loop" in out and "under λ̂*" in out
    assert "summary all: median factor off" in out and "within ±40%" in out


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
    assert found["summary"][-1]["quantity"] == "all" and found["summary"][-1]["count"] == 12


def test_the_shared_guidellm_report_is_one_synchronous_stream(base_plan, write_plan, run_main):
    report = example(*GUIDELLM_V03) / "benchmarks_stripped.json"
    found = _validated(run_main, write_plan(base_plan), report)
    point, = found["points"]
    assert point["load"] == "1 in flight (synchronous)"
    assert point["prompt_tokens"] == pytest.approx(257.1086956521739)
    assert {c["quantity"] for c in point["compared"]} == {"output tok/s", "TPOT p50", "TTFT p50"}
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
