"""``capplan pools PLAN FILE...``: the pools' λ*_P and λ*_D from a disaggregated benchmark's sweep.

A sweep of x prefill and y decode replicas behind one proxy (vLLM's benchmarks/disagg_benchmarks:
``benchmark_serving.py`` at several request rates, one ``--save-result`` file each) measures each
pool where its own SLO gives way: the highest rate whose TTFT percentile meets the TTFT SLO bounds
the prefill pool (λ*_P = that rate / x), the highest whose TPOT percentile meets the TPOT SLO the
decode pool (λ*_D = that rate / y). The files here are written by the test, with per-request
arrays and no summary percentiles, so each p95 is computed from the requests (numpy's linear
interpolation, as vLLM does); the base plan's SLOs are TTFT p95 1 s and TPOT p95 25 ms.
"""

from __future__ import annotations

import hashlib
import json

import yaml
from test_disaggregated import disaggregated
from test_demand import evaluated

N = 20          # requests a run
OUT = 11        # output tokens a request: 10 inter-token gaps


def _run(folder, rate: float, ttfts: list[float], tpot: float, name: str | None = None, **fields):
    """A ``vllm bench serve --save-result --save-detailed`` file at ``rate`` req/s: N requests of 100
    prompt and OUT output tokens, each request's first token after its ``ttfts`` entry (s) and each
    of its gaps ``tpot`` s, so its TPOT is exactly ``tpot``."""
    doc = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B", "request_rate": rate, "burstiness": 1.0,
           "max_concurrency": None, "num_prompts": N, "completed": N, "failed": 0, "request_goodput": None,
           "total_input_tokens": 100 * N, "total_output_tokens": OUT * N, "output_throughput": 5.0 * OUT,
           "input_lens": [100] * N, "output_lens": [OUT] * N, "ttfts": ttfts,
           "itls": [[tpot] * (OUT - 1)] * N, "errors": [""] * N, **fields}
    path = folder / (name or f"qps-{rate:g}.json")
    path.write_text(json.dumps(doc))
    return path


def _sweep(folder, tpot_at_6: float = 0.027, tpot_at_8: float = 0.031, **fields):
    """The sweep at 2, 4, 6 and 8 req/s. TTFT p95: 0.2, 0.5, 0.95 and 1.4 s (at 6 req/s 18 requests at
    0.5 s, then 0.9 and 1.9 s: index 0.95 × 19 = 18.05, 0.9 + 0.05 × 1.0 = 0.95 s, under the 1 s SLO
    though its slowest request is not); TPOT 10, 15, then ``tpot_at_6`` and ``tpot_at_8`` s."""
    return [_run(folder, 2.0, [0.2] * N, 0.010, **fields), _run(folder, 4.0, [0.5] * N, 0.015, **fields),
            _run(folder, 6.0, [0.5] * 18 + [0.9, 1.9], tpot_at_6, **fields),
            _run(folder, 8.0, [1.4] * N, tpot_at_8, **fields)]


def _pools(run_main, plan, files, *options):
    code, out, err = run_main("pools", plan, *files, *options, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_each_pool_is_measured_where_its_own_slo_gives_way(tmp_path, base_plan, write_plan, run_main):
    """2 prefill and 1 decode replicas: TTFT p95 meets 1 s up to 6 req/s (0.95 s) and misses at 8 (1.4 s),
    so λ*_P = 6 / 2 = 3 req/s; TPOT p95 meets 25 ms up to 4 req/s (15 ms) and misses at 6 (27 ms), so
    λ*_D = 4 / 1 = 4 req/s. Each input is a measurement whose source names the files and their SHA-256."""
    plan = write_plan(base_plan)
    files = _sweep(tmp_path)
    found = _pools(run_main, plan, files, "--prefill-replicas", "2", "--decode-replicas", "1")
    prefill, decode = found["pools"]
    assert (prefill["input"], prefill["sweep_rate"], prefill["replicas"], prefill["rate"]) == \
        ("prefill_measured_rate", 6, 2, 3)
    assert (prefill["first_missed"], prefill["lower_bound"]) == (8, False)
    assert (decode["input"], decode["sweep_rate"], decode["replicas"], decode["rate"]) == \
        ("decode_measured_rate", 4, 1, 4)
    assert (decode["first_missed"], decode["lower_bound"]) == (6, False)
    digest = hashlib.sha256(files[2].read_bytes()).hexdigest()
    assert f"qps-6.json (sha256 {digest})" in prefill["source"]
    code, out, _ = run_main("pools", plan, *files, "--prefill-replicas", "2", "--decode-replicas", "1")
    assert code == 0
    assert ("prefill pool (2 replicas): TTFT p95 ≤ 1000 ms met up to 6 req/s, missed at 8 req/s: "
            "λ*_P = 6 / 2 = 3 req/s") in out
    assert "inputs:\n  prefill_measured_rate:\n    value: 3 req/s\n    tag: measurement\n    source: " in out
    assert "  decode_measured_rate:\n    value: 4 req/s\n    tag: measurement\n" in out


def test_a_pool_that_never_misses_its_slo_gives_only_a_lower_bound(tmp_path, base_plan, write_plan, run_main):
    """TPOT 20 and 22 ms at 6 and 8 req/s: the decode pool meets 25 ms at the sweep's highest rate, so
    8 / 1 = 8 req/s is a lower bound on λ*_D, not its knee, and the output says so."""
    plan = write_plan(base_plan)
    files = _sweep(tmp_path, tpot_at_6=0.020, tpot_at_8=0.022)
    found = _pools(run_main, plan, files, "--prefill-replicas", "2", "--decode-replicas", "1")
    decode = found["pools"][1]
    assert (decode["rate"], decode["first_missed"], decode["lower_bound"]) == (8, None, True)
    assert "a lower bound" in decode["source"]
    out = run_main("pools", plan, *files, "--prefill-replicas", "2", "--decode-replicas", "1")[1]
    assert ("decode pool (1 replica): TPOT p95 ≤ 25 ms met at every rate up to the sweep's highest, 8 req/s: "
            "λ*_D ≥ 8 / 1 = 8 req/s, a lower bound (the pool never missed its SLO: sweep higher rates to "
            "measure its knee)") in out


def test_the_printed_block_pasted_into_a_disaggregated_plan_sizes_its_pools(tmp_path, base_plan, write_plan,
                                                                          run_main):
    """The block pasted under the plan's inputs: λ*_P 3 and λ*_D 4 req/s rest on the sweep, tagged
    measurement, and the output says which pools they hold for (TP1 prefill and decode on the A100)."""
    plan = disaggregated(base_plan)
    files = _sweep(tmp_path)
    code, out, _ = run_main("pools", write_plan(plan), *files, "--prefill-replicas", "2", "--decode-replicas", "1")
    assert code == 0
    assert ("they hold for the plan's pools as the sweep must have run them: prefill on a100-sxm4-80gb, "
            "prefill_gpus_per_replica 1; decode on a100-sxm4-80gb, gpus_per_replica 1") in out
    plan["inputs"].update(yaml.safe_load(out[out.index("\ninputs:\n"):])["inputs"])
    _, e = evaluated(tmp_path, plan)
    assert (e.display("prefill_max_rate"), e.display("decode_max_rate")) == (3, 4)
    assert e.scenario.inputs["decode_measured_rate"].tag == "measurement"


def test_an_aggregated_plan_and_a_file_of_another_model_are_noted(tmp_path, base_plan, write_plan, run_main):
    """The base plan is aggregated: the inputs take effect under topology: disaggregated, and a file of
    another model is named, as validate names it (noted, not refused)."""
    files = _sweep(tmp_path)
    _run(tmp_path, 8.0, [1.4] * N, 0.031, model_id="Qwen/Qwen3-8B")
    code, out, _ = run_main("pools", write_plan(base_plan), *files, "--prefill-replicas", "2",
                            "--decode-replicas", "1")
    assert code == 0
    assert "note: the plan is aggregated: these inputs take effect under topology: disaggregated" in out
    assert f"note: {files[3]}: measured model Qwen/Qwen3-8B, not the plan's llama-3-8b" in out


def test_a_point_that_did_not_deliver_its_load_bounds_both_pools(tmp_path, base_plan, write_plan, run_main):
    """At 6 req/s only 20 of 40 requests completed (50 % < the 95 % min_delivered_share): the replicas
    were saturated, and the files cannot say which pool, so both rates stop at 4 req/s though the
    percentiles of the requests that finished meet the TTFT SLO: λ*_P = 4 / 2 = 2, λ*_D = 4 / 1 = 4."""
    files = _sweep(tmp_path, tpot_at_6=0.020, tpot_at_8=0.022)
    _run(tmp_path, 6.0, [0.5] * 18 + [0.9, 1.9], 0.020, num_prompts=2 * N)
    found = _pools(run_main, write_plan(base_plan), files, "--prefill-replicas", "2", "--decode-replicas", "1")
    assert [(p["rate"], p["first_missed"]) for p in found["pools"]] == [(2, 6), (4, 6)]


def test_pool_sizes_recorded_in_the_files_need_no_options(tmp_path, base_plan, write_plan, run_main):
    """vLLM's --metadata prefill_replicas=2 decode_replicas=1 keeps the pool sizes in each result file."""
    plan = write_plan(base_plan)
    files = _sweep(tmp_path, prefill_replicas="2", decode_replicas="1")
    found = _pools(run_main, plan, files)
    assert [p["rate"] for p in found["pools"]] == [3, 4]


def test_missing_pool_sizes_are_one_message_naming_the_file_and_key(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    files = _sweep(tmp_path)
    code, out, err = run_main("pools", plan, *files, "--decode-replicas", "1")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{files[0]}: prefill_replicas: the sweep records no prefill pool size" in err
    assert "--prefill-replicas" in err


def test_files_that_disagree_on_a_pool_size_are_refused(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    files = _sweep(tmp_path, prefill_replicas="2", decode_replicas="1")
    _run(tmp_path, 8.0, [1.4] * N, 0.031, prefill_replicas="3", decode_replicas="1")
    code, _, err = run_main("pools", plan, *files)
    assert code == 1 and err.count("\n") == 1
    assert "prefill_replicas: the files record 2 and 3 prefill replicas" in err


def test_a_recorded_pool_size_that_is_no_whole_number_is_refused(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    files = _sweep(tmp_path, prefill_replicas="two", decode_replicas="1")
    code, _, err = run_main("pools", plan, *files)
    assert code == 1 and err.count("\n") == 1
    assert f"{files[0]}: prefill_replicas: a pool size is a whole number of replicas, at least 1, got \"two\"" in err


def test_a_file_that_is_not_a_sweep_is_one_message_naming_it(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    other = tmp_path / "notes.json"
    other.write_text(json.dumps({"hello": 1}))
    code, out, err = run_main("pools", plan, *_sweep(tmp_path), other, "--prefill-replicas", "2",
                              "--decode-replicas", "1")
    assert (code, out) == (1, "") and err.count("\n") == 1
    assert f"{other}: unknown sweep file format" in err


def test_a_sweep_whose_lowest_rate_misses_an_slo_measures_no_rate(tmp_path, base_plan, write_plan, run_main):
    """TTFT 1.2 s at the lowest rate: the prefill pool misses the 1 s SLO everywhere, so no λ*_P."""
    plan = write_plan(base_plan)
    files = [_run(tmp_path, 2.0, [1.2] * N, 0.010), _run(tmp_path, 4.0, [1.4] * N, 0.015)]
    code, _, err = run_main("pools", plan, *files, "--prefill-replicas", "2", "--decode-replicas", "1")
    assert code == 1 and err.count("\n") == 1
    assert "the prefill pool misses TTFT p95 ≤ 1000 ms already at the sweep's lowest rate, 2 req/s" in err


def test_a_sweep_without_an_open_loop_run_is_refused(tmp_path, base_plan, write_plan, run_main):
    plan = write_plan(base_plan)
    burst = _run(tmp_path, "inf", [0.2] * N, 0.010, name="burst.json")
    code, _, err = run_main("pools", plan, burst, "--prefill-replicas", "2", "--decode-replicas", "1")
    assert code == 1 and err.count("\n") == 1
    assert "no open-loop run (a request rate)" in err
