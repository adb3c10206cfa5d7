"""SLO percentiles are the plan's choice (issue 13, items 1 and 2).

A plan names each SLO's metric and percentile as an input (``ttft_p99_slo``);
the sweep table's columns, the checks and λ* follow, and the importer reads
that percentile from each file's summary or computes it from per-request
arrays. The legacy fixture holds p99 (and the median) only, like every real
multi-rate file saved with vLLM's default ``--metric-percentiles 99``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from capplan.language.model import standard_model
from capplan.loading.sweeps import read_sweep


@pytest.fixture
def base_plan(base_plan):
    """The test plan on the model the Llama-3.1-8B-Instruct benchmark files measured."""
    return {**base_plan, "model": "llama-3.1-8b"}


LEGACY_P99 = Path(__file__).resolve().parent / "data" / "vllm-legacy-p99"
P99_SLOS = {"ttft_p99_slo": "1 s", "tpot_p99_slo": "40 ms", "e2e_p99_slo": "30 s"}
P99_PLAN_SLOS = standard_model().with_slos([("ttft", "p99"), ("tpot", "p99")]).slos


def _plan(base_plan, write_plan, tmp_path, inputs: dict, folder: Path = LEGACY_P99, pattern="qps_*.json"):
    target = tmp_path / "plans" / "sweep"
    target.mkdir(parents=True, exist_ok=True)
    for f in folder.glob("*.json"):
        (target / f.name).write_bytes(f.read_bytes())
    for name in ("ttft_p95_slo", "tpot_p95_slo", "e2e_p99_slo"):
        base_plan["inputs"].pop(name)
    base_plan["inputs"].update(inputs)
    base_plan["tables"]["load_sweep"] = {"source": "test runs", "import": [f"sweep/{pattern}"]}
    return write_plan(base_plan)


def _eval(run_main, path):
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    return json.loads(out)["scenarios"]["nominal"]


def _summaries() -> dict[float, dict]:
    docs = [json.loads(p.read_text()) for p in sorted(LEGACY_P99.glob("qps_*.json"))]
    return {d["request_rate"]: d for d in docs}


def test_a_p99_plan_imports_p99_only_legacy_files_and_finds_lambda_star(base_plan, write_plan, tmp_path, run_main):
    doc = _eval(run_main, _plan(base_plan, write_plan, tmp_path, P99_SLOS))
    rows = doc["tables"]["load_sweep"]["rows"]
    summaries = _summaries()
    assert [r["arrival_rate"] for r in rows] == sorted(summaries) == [1, 2, 4, 8]
    for row in rows:                   # each value is the file's own summary key
        s = summaries[row["arrival_rate"]]
        assert row["ttft_p99"] == pytest.approx(s["p99_ttft_ms"])
        assert row["tpot_p99"] == pytest.approx(s["p99_tpot_ms"])
        assert row["e2e_p99"] == pytest.approx(s["p99_e2el_ms"] / 1000)
        assert "ttft_p95" not in row and "tpot_p95" not in row
    # 8 req/s: TTFT p99 2.4 s > 1 s and TPOT p99 55.2 ms > 40 ms; every lower rate holds
    assert [r["ttft_p99_ok"] for r in rows] == [True, True, True, False]
    assert [r["tpot_p99_ok"] for r in rows] == [True, True, True, False]
    assert [r["meets_slo"] for r in rows] == [True, True, True, False]
    assert doc["quantities"]["instance_max_rate"]["value"] == 4
    assert doc["quantities"]["knee_upper_rate"]["value"] == 8


def test_the_record_and_the_gates_show_the_chosen_percentiles(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, P99_SLOS)
    code, _, err = run_main("build", path, "--out", tmp_path / "o")
    assert code == 0, err
    text = (tmp_path / "o" / "test-plan.md").read_text()
    assert "`ttft_p99_slo` | **1,000 ms** | Time to first token, 99th percentile" in text
    # no per-request data and no goodput SLO: neither the goodput column nor its check is shown
    assert "| SLO | arrival_rate [req/s] | misses | ttft_p99 [ms] | tpot_p99 [ms] | e2e_p99 [s] |" in text
    assert "| **PASS** | 2 | — |" in text
    assert "(first failure: TTFT p99 2,400 ms > 1,000 ms; TPOT p99 55.2 ms > 40 ms; " in text
    assert "ttft_p95" not in text


def test_several_percentiles_of_one_metric_are_each_a_column_and_a_check(base_plan, write_plan, tmp_path, run_main):
    inputs = dict(P99_SLOS, ttft_p50_slo="100 ms")
    doc = _eval(run_main, _plan(base_plan, write_plan, tmp_path, inputs))
    rows = doc["tables"]["load_sweep"]["rows"]
    summaries = _summaries()
    # p50 is the summary's median_ttft_ms (vLLM writes the median beside the chosen percentiles)
    assert [r["ttft_p50"] for r in rows] == [pytest.approx(summaries[r["arrival_rate"]]["median_ttft_ms"])
                                             for r in rows]
    # medians 72.08, 84.28, 128.2 ms: 4 req/s fails the p50 TTFT SLO of 100 ms, so λ* drops to 2
    assert [r["ttft_p50_ok"] for r in rows] == [True, True, False, False]
    assert doc["quantities"]["instance_max_rate"]["value"] == 2
    gate = standard_model().with_slos([("ttft", "p50"), ("ttft", "p99")]).quantities["compute_gate"]
    assert gate.written == ((None, "ttft_bound <= min(ttft_p50_slo, ttft_p99_slo)"),)


def test_a_default_plan_on_p99_only_files_names_what_the_file_has_and_the_plan_line(
        base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, {"ttft_p95_slo": "1 s", "tpot_p95_slo": "40 ms",
                                                   "e2e_p99_slo": "30 s"})
    code, _, err = run_main("eval", path)
    assert code == 1
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "ttft_p95_slo" in text)
    assert "sweep/qps_1.json: no TTFT p95: the summary has no p95_ttft_ms" in err
    assert "the summary holds TTFT p50/p99, TPOT p50/p99, ITL p50/p99, E2E p50/p99" in err
    assert f"The plan's SLO ttft_p95_slo (line {line}, inputs: ttft_p95_slo) asks for TTFT p95" in err


def test_percentiles_computed_from_per_request_arrays(tmp_path):
    """p50, p90 and p99.9 of TTFT, ITL and E2E from the arrays, as numpy computes them."""
    rng = np.random.default_rng(7)
    ttfts = rng.uniform(0.05, 0.9, 300).tolist()
    itls = [rng.uniform(0.01, 0.05, int(n)).tolist() for n in rng.integers(2, 40, 300)]
    lat = [t + sum(g) for t, g in zip(ttfts, itls)]
    doc = {"request_rate": 3.0, "completed": 300, "failed": 0, "num_prompts": 300, "output_throughput": 500.0,
           "ttfts": ttfts, "itls": itls, "latencies": lat, "errors": [""] * 300,
           "output_lens": [len(g) + 1 for g in itls], "p99_ttft_ms": 1.0, "request_goodput": None}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    model = standard_model().with_slos([("ttft", "p50"), ("itl", "p90"), ("e2e", "p999"), ("tpot", "p90")])
    [point] = read_sweep(tmp_path, ["r.json"], model.slos)[0].points
    assert point.latency["ttft_p50"] == pytest.approx(np.percentile(ttfts, 50) * 1000, rel=1e-12)
    assert point.latency["itl_p90"] == pytest.approx(np.percentile([g for r in itls for g in r], 90) * 1000,
                                                     rel=1e-12)
    assert point.latency["e2e_p999"] == pytest.approx(np.percentile(lat, 99.9), rel=1e-12)
    tpot = [(e - t) / (len(g)) for e, t, g in zip(lat, ttfts, itls)]
    assert point.latency["tpot_p90"] == pytest.approx(np.percentile(tpot, 90) * 1000, rel=1e-12)


def test_the_schema_accepts_any_slo_percentile_but_needs_one_per_metric():
    from capplan.review.schema import generate, validate
    schema = generate()
    plan = {"gpu": "a100-sxm4-80gb", "model": "llama-3-8b", "sizing": "littles_law",
            "inputs": {"peak_arrival_rate": 1, "peak_to_average_ratio": 1, "decode_throughput": 100,
                       "ttft_p99_slo": "1 s", "tpot_p50_slo": "20 ms", "e2e_p999_slo": 9},
            "tables": {"classes": [{"name": "a", "weight": 1, "prompt_tokens": 1, "output_tokens": 1}],
                       "deployments": [{"name": "n", "gpus_per_node": 1, "node_hourly_cost": 1}]}}
    assert validate(plan, schema) == []
    del plan["inputs"]["tpot_p50_slo"]
    assert validate(plan, schema) != []


def test_a_guidellm_report_without_the_percentile_names_what_it_has(tmp_path):
    shared = Path("/work/shared/examples/guidellm/v0.3-stripped/benchmarks_stripped.json")
    if not shared.exists():
        pytest.skip("the shared GuideLLM example is not on this machine")
    doc = json.loads(shared.read_text())
    [bench] = doc["benchmarks"]
    bench["args"]["strategy"] = {"type_": "constant", "rate": 1.5}    # an open-loop stage aborts
    del bench["metrics"]["time_to_first_token_ms"]["successful"]["percentiles"]["p99"]
    bench["requests"]["successful"] = bench["requests"]["successful"][:1]   # not every request: no arrays
    (tmp_path / "b.json").write_text(json.dumps(doc))
    slos = standard_model().with_slos([("ttft", "p99")]).slos
    with pytest.raises(Exception) as info:
        read_sweep(tmp_path, ["b.json"], slos)
    assert "no TTFT p99: benchmarks[0].metrics.time_to_first_token_ms.successful.percentiles.p99 is missing" \
        in info.value.message
    assert "the summary holds p001, p01, p05, p10, p25, p75, p90, p95, p999" in info.value.message


def test_the_workbook_charts_the_plans_percentiles(base_plan, write_plan, tmp_path, run_main):
    import zipfile
    path = _plan(base_plan, write_plan, tmp_path, P99_SLOS)
    code, _, err = run_main("build", path, "--out", tmp_path / "o")
    assert code == 0, err
    with zipfile.ZipFile(tmp_path / "o" / "test-plan.xlsx") as z:
        charts = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/charts/"))
        sheets = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert b"p99 latency vs arrival rate (nominal)" in charts
    assert b"p99 TTFT (ms)" in charts and b"p99 TPOT (ms)" in charts
    assert b"p95" not in charts
    assert b"ttft_p99_slo" in sheets and b"ttft_p95" not in sheets


def test_diff_between_plans_of_different_slo_percentiles(base_plan, write_plan, tmp_path, run_main):
    import copy
    old = write_plan(copy.deepcopy(base_plan), name="old")
    new = _plan(base_plan, write_plan, tmp_path, P99_SLOS)
    code, out, err = run_main("diff", old, new)
    assert code == 0, err
    assert "- `ttft_p99_slo`: — → **1,000 ms** (policy; added)" in out
    assert "- `ttft_p95_slo`: 1,000 ms → **—** (policy; removed)" in out
    assert "`load_sweep[4].ttft_p99`: – → **320.5 ms**" in out
