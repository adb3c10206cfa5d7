"""Tests for capplan.loading.sweeps: vLLM, GuideLLM and CSV sweep files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from shared_examples import GUIDELLM_V03, VLLM_70B, example

from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading.sweeps import (
    SweepPoint,
    SweepRow,
    combine_replicates,
    read_sweep,
)

REAL_FILES = ("qps_01.json", "qps_04.json", "qps_16.json", "qps_inf.json")


def sig3(x: float) -> float:
    """Round to 3 significant digits."""
    return float(f"{x:.3g}")


# --------------------------------------------------------------------------- #
# The real vLLM sweep (legacy benchmark_serving.py layout)
# --------------------------------------------------------------------------- #

def independent_percentiles(raw: dict) -> tuple[float, float, float]:
    """p95 TTFT (ms), p95 TPOT (ms), p99 E2E (s) straight from the raw arrays."""
    ok = [i for i, err in enumerate(raw["errors"]) if not err]
    ttft = np.array([raw["ttfts"][i] for i in ok])
    e2e = np.array([raw["ttfts"][i] + sum(raw["itls"][i]) for i in ok])
    n = np.array([raw["output_lens"][i] for i in ok])
    tpot = (e2e - ttft)[n > 1] / (n[n > 1] - 1)
    return (np.percentile(ttft, 95) * 1000, np.percentile(tpot, 95) * 1000,
            np.percentile(e2e, 99))


# rate -> (p95 TTFT ms, p95 TPOT ms, p99 E2E s, output tok/s), 3 significant digits
PINNED = {
    1.0: (127.0, 26.1, 19.2, 208.0),
    4.0: (64.3, 27.7, 21.1, 674.0),
    16.0: (79.8, 35.4, 23.1, 1350.0),
    math.inf: (448.0, 55.0, 23.5, 1780.0),
}


@pytest.fixture(scope="module")
def data() -> Path:
    """The real vLLM files, read where they are in the shared folder."""
    return example(*VLLM_70B)


@pytest.fixture(scope="module")
def real_files(data):
    return read_sweep(data, ["*.json"])


def test_real_files_are_found_sorted_and_hashed(real_files, data):
    assert [f.path for f in real_files] == list(REAL_FILES)
    for f in real_files:
        assert f.format == "vllm-benchmark-serving"
        assert f.sha256 == hashlib.sha256((data / f.path).read_bytes()).hexdigest()
        assert len(f.points) == 1
        assert f.points[0].file == f.path


def test_real_files_percentiles_match_raw_arrays(real_files, data):
    for f in real_files:
        raw = json.loads((data / f.path).read_text())
        point = f.points[0]
        ttft, tpot, e2e = independent_percentiles(raw)
        assert point.latency["ttft_p95"] == pytest.approx(ttft, rel=1e-12)
        assert point.latency["tpot_p95"] == pytest.approx(tpot, rel=1e-12)
        assert point.latency["e2e_p99"] == pytest.approx(e2e, rel=1e-12)
        assert point.output_throughput == raw["output_throughput"]
        assert (point.completed, point.failed) == (200, 0)
        assert point.goodput is None          # "request_goodput:": null
        # Same arrays, same method, p99: reproduces vLLM's own summary, which
        # checks units (s -> ms), the success filter and the percentile method.
        ok = [i for i, err in enumerate(raw["errors"]) if not err]
        p99_ttft = np.percentile([raw["ttfts"][i] for i in ok], 99) * 1000
        assert p99_ttft == pytest.approx(raw["p99_ttft_ms"], rel=1e-12)


def test_real_files_pinned_values(real_files):
    got = {}
    for f in real_files:
        p = f.points[0]
        got[p.arrival_rate] = (sig3(p.latency["ttft_p95"]), sig3(p.latency["tpot_p95"]), sig3(p.latency["e2e_p99"]),
                               sig3(p.output_throughput))
    assert got == PINNED


def test_real_inf_rate_is_math_inf(real_files):
    point = real_files[-1].points[0]
    assert real_files[-1].path == "qps_inf.json"
    assert point.arrival_rate == math.inf
    assert any("closed burst" in m for m in point.methods)


def test_real_methods_say_how(real_files):
    methods = real_files[1].points[0].methods
    text = "\n".join(methods)
    assert "ttft_p95: np.percentile (method='linear'" in text
    assert "(E2E - TTFT) / (output_len - 1)" in text
    assert "ttfts + sum(itls)" in text
    assert "'request_goodput:'" in text
    for name in ("arrival_rate", "ttft_p95", "tpot_p95", "e2e_p99",
                 "output_throughput", "goodput"):
        assert any(m.startswith(name) for m in methods), name


def test_real_sweep_slo_knee(real_files):
    """TTFT p95 <= 1000 ms, TPOT p95 <= 35 ms, E2E p99 <= 30 s: 1 and 4 pass, 16 fails."""
    points = [p for f in real_files for p in f.points]
    rows = combine_replicates(points)
    assert [r.arrival_rate for r in rows] == [1.0, 4.0, 16.0]      # inf left out

    def meets(r):
        return r.latency["ttft_p95"] <= 1000 and r.latency["tpot_p95"] <= 35 and r.latency["e2e_p99"] <= 30

    assert {r.arrival_rate: meets(r) for r in rows} == {1.0: True, 4.0: True, 16.0: False}
    # lambda* = highest rate that passes with every lower rate passing too
    lam_star = None
    for r in rows:
        if not meets(r):
            break
        lam_star = r.arrival_rate
    assert lam_star == 4.0
    first_fail = next(r.arrival_rate for r in rows if not meets(r))
    assert first_fail == 16.0          # the knee lies between 4 and 16 req/s


def test_commands_show_the_files_were_saved_with_save_result(data):
    for name in REAL_FILES:
        commands = json.loads((data / name.replace(".json", ".commands")).read_text())
        assert "--save-result" in commands["client_command"]


# --------------------------------------------------------------------------- #
# vLLM: the current `vllm bench serve` layout, JSON Lines, fallbacks
# --------------------------------------------------------------------------- #

def current_result(**overrides) -> dict:
    """A small `vllm bench serve --save-result --save-detailed` object, one failure."""
    ttfts = [0.10, 0.20, 0.0, 0.15, 0.30, 0.12]
    itls = [[0.02] * 9, [0.03] * 19, [], [], [0.025] * 29, [0.021] * 14]
    output_lens = [10, 20, 0, 1, 30, 15]
    latencies = [t + sum(g) if n else 0.0 for t, g, n in zip(ttfts, itls, output_lens)]
    result = {
        "date": "20260722-041843", "endpoint_type": "openai", "backend": "openai",
        "label": None, "model_id": "m", "tokenizer_id": "m", "num_prompts": 6,
        "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": 3.0, "completed": 5, "failed": 1,
        "total_input_tokens": 600, "total_output_tokens": 76,
        "request_throughput": 1.67, "request_goodput": 1.25,
        "output_throughput": 25.3, "total_token_throughput": 225.3,
        "input_lens": [100] * 6, "output_lens": output_lens, "ttfts": ttfts,
        "itls": itls, "latencies": latencies, "start_times": [0.0] * 6,
        "errors": ["", "", "Traceback: boom", "", "", ""],
        "generated_texts": [""] * 6,
        "mean_ttft_ms": 174.0, "median_ttft_ms": 150.0, "p99_ttft_ms": 296.0,
        "mean_tpot_ms": 24.0, "median_tpot_ms": 25.0, "p99_tpot_ms": 29.9,
        "mean_itl_ms": 24.0, "median_itl_ms": 25.0, "p99_itl_ms": 30.0,
    }
    result.update(overrides)
    return result


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def test_current_layout_computes_from_successful_requests_only(tmp_path):
    raw = current_result()
    write_json(tmp_path / "sweep" / "r2.json", raw)
    [f] = read_sweep(tmp_path, ["sweep/*.json"])
    assert f.format == "vllm-bench-serve"
    assert f.path == "sweep/r2.json"
    p = f.points[0]
    ok = [0, 1, 3, 4, 5]
    ttft = np.array([raw["ttfts"][i] for i in ok])
    lat = np.array([raw["latencies"][i] for i in ok])
    n = np.array([raw["output_lens"][i] for i in ok])
    tpot = (lat - ttft)[n > 1] / (n[n > 1] - 1)
    assert p.latency["ttft_p95"] == pytest.approx(np.percentile(ttft, 95) * 1000)
    assert p.latency["e2e_p99"] == pytest.approx(np.percentile(lat, 99))
    assert p.latency["tpot_p95"] == pytest.approx(np.percentile(tpot, 95) * 1000)
    assert (p.completed, p.failed, p.goodput) == (5, 1, 1.25)
    assert p.arrival_rate == 2.0
    assert any("latencies (s)" in m for m in p.methods)
    assert p.file == "sweep/r2.json"


def test_summary_percentiles_are_preferred(tmp_path):
    write_json(tmp_path / "r.json", current_result(
        p95_ttft_ms=999.0, p95_tpot_ms=33.0, p99_e2el_ms=12500.0))
    p = read_sweep(tmp_path, ["r.json"])[0].points[0]
    assert (p.latency["ttft_p95"], p.latency["tpot_p95"], p.latency["e2e_p99"]) == (999.0, 33.0, 12.5)
    assert "ttft_p95: summary key p95_ttft_ms" in p.methods
    assert "tpot_p95: summary key p95_tpot_ms" in p.methods


def test_summary_only_without_arrays(tmp_path):
    raw = current_result(p95_ttft_ms=150.0, p95_tpot_ms=28.0, p99_e2el_ms=9000.0)
    for key in ("input_lens", "output_lens", "ttfts", "itls", "latencies",
                "start_times", "errors", "generated_texts"):
        del raw[key]
    write_json(tmp_path / "r.json", raw)
    p = read_sweep(tmp_path, ["r.json"])[0].points[0]
    assert (p.latency["ttft_p95"], p.latency["tpot_p95"], p.latency["e2e_p99"]) == (150.0, 28.0, 9.0)


def test_itl_fallback_is_said_in_methods(tmp_path):
    raw = current_result(p95_ttft_ms=150.0, p99_e2el_ms=9000.0, p95_itl_ms=31.5)
    for key in ("output_lens", "ttfts", "itls", "errors"):
        del raw[key]
    write_json(tmp_path / "r.json", raw)
    p = read_sweep(tmp_path, ["r.json"])[0].points[0]
    assert p.latency["tpot_p95"] == 31.5
    assert any(m.startswith("tpot_p95: taken from ITL") for m in p.methods)


def test_tpots_array_is_used_when_present(tmp_path):
    tpots = [0.02, 0.03, 0.0, 0.0, 0.025, 0.021]
    write_json(tmp_path / "r.json", current_result(tpots=tpots))
    p = read_sweep(tmp_path, ["r.json"])[0].points[0]
    assert p.latency["tpot_p95"] == pytest.approx(np.percentile([0.02, 0.03, 0.025, 0.021], 95) * 1000)


def test_missing_p95_without_arrays_is_a_clear_error(tmp_path):
    raw = current_result()
    for key in ("output_lens", "ttfts", "itls", "latencies", "errors"):
        del raw[key]
    write_json(tmp_path / "default.json", raw)
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["*.json"])
    assert info.value.file == "default.json"
    assert info.value.key == "p95_ttft_ms"
    assert "--percentile-metrics" in str(info.value)
    assert str(info.value).startswith("default.json")


def test_string_inf_and_legacy_goodput_with_value(tmp_path, data):
    raw = json.loads((data / "qps_16.json").read_text())
    raw["request_rate"] = "inf"
    raw["request_goodput:"] = 2.5
    write_json(tmp_path / "a.json", raw)
    # Older vLLM wrote the float itself: json.dumps gives the bare token Infinity
    raw2 = current_result(request_rate=float("inf"))
    (tmp_path / "b.json").write_text(json.dumps(raw2))
    assert "Infinity" in (tmp_path / "b.json").read_text()
    a, b = read_sweep(tmp_path, ["*.json"])
    assert a.format == "vllm-benchmark-serving"
    assert a.points[0].arrival_rate == math.inf and a.points[0].goodput == 2.5
    assert b.points[0].arrival_rate == math.inf


def test_zero_completed_means_infinite_latency(tmp_path):
    raw = current_result(completed=0, failed=6, errors=["x"] * 6)
    write_json(tmp_path / "r.json", raw)
    p = read_sweep(tmp_path, ["r.json"])[0].points[0]
    assert p.latency["ttft_p95"] == p.latency["tpot_p95"] == p.latency["e2e_p99"] == math.inf
    assert (p.completed, p.failed) == (0, 6)


def test_success_count_must_match_completed(tmp_path):
    write_json(tmp_path / "r.json", current_result(completed=6, failed=0))
    with pytest.raises(CapplanError, match="5 successful requests") as info:
        read_sweep(tmp_path, ["r.json"])
    assert info.value.file == "r.json"


def test_ramp_up_run_is_refused(tmp_path):
    write_json(tmp_path / "r.json", current_result(ramp_up_strategy="linear"))
    with pytest.raises(CapplanError, match="ramp-up"):
        read_sweep(tmp_path, ["r.json"])


def test_missing_output_throughput(tmp_path):
    raw = current_result()
    del raw["output_throughput"]
    write_json(tmp_path / "r.json", raw)
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["r.json"])
    assert (info.value.file, info.value.key) == ("r.json", "output_throughput")


def jsonl_text(*objects) -> str:
    # `--append-result` writes "\n" before every object after the first
    return "\n".join(json.dumps(o) for o in objects)


def test_json_lines(tmp_path):
    text = jsonl_text(current_result(request_rate=2.0),
                      current_result(request_rate=4.0, p95_ttft_ms=200.0),
                      current_result(request_rate=4.0, p95_ttft_ms=260.0))
    (tmp_path / "runs.jsonl").write_text(text + "\n")
    (tmp_path / "appended.json").write_text(text)      # same, without the .jsonl suffix
    files = read_sweep(tmp_path, ["runs.jsonl", "appended.json"])
    assert [f.path for f in files] == ["appended.json", "runs.jsonl"]
    for f in files:
        assert f.format == "vllm-bench-serve-jsonl"
        assert [p.arrival_rate for p in f.points] == [2.0, 4.0, 4.0]
        assert [p.latency["ttft_p95"] for p in f.points][1:] == [200.0, 260.0]
        assert "line 2" in f.points[1].methods[0]


def test_json_lines_truncated_last_line(tmp_path):
    text = jsonl_text(current_result(), current_result(), current_result())
    (tmp_path / "runs.jsonl").write_text(text[:-200])
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["runs.jsonl"])
    assert info.value.file == "runs.jsonl"
    assert info.value.line == 3
    assert "truncated" in str(info.value)


# --------------------------------------------------------------------------- #
# GuideLLM, every schema version
# --------------------------------------------------------------------------- #

def dist(mean: float, p95: float, p99: float) -> dict:
    summary = {"mean": mean, "median": mean, "std_dev": 0.0, "count": 10,
               "percentiles": {"p50": mean, "p90": p95, "p95": p95, "p99": p99}}
    return {"successful": summary, "errored": {}, "incomplete": {}, "total": summary}


def guidellm_benchmark(version: str, strategy: dict, ttft: float, itl: float,
                       latency_s: float, tok_s: float, totals: dict,
                       requests: list | None = None) -> dict:
    metrics = {
        "requests_per_second": dist(1.0, 1.1, 1.2),
        "time_to_first_token_ms": dist(ttft / 2, ttft, ttft * 1.2),
        "inter_token_latency_ms": dist(itl / 2, itl, itl * 1.2),
        "time_per_output_token_ms": dist(999.0, 999.0, 999.0),   # never used
        "request_latency": dist(latency_s / 2, latency_s * 0.9, latency_s),
        "output_tokens_per_second": dist(tok_s, tok_s, tok_s),
    }
    bench = {"type_": "generative_benchmark", "id_": "x", "run_id": "y",
             "metrics": metrics, "duration": 30.0}
    if version == "v0.3":
        bench["args"] = {"profile": {"type_": "sweep"}, "strategy_index": 0,
                         "strategy": strategy}
        bench["request_totals"] = totals
    else:
        bench["config"] = {"strategy": strategy, "run_index": 0}
        metrics["request_totals"] = totals
    if requests is not None:
        bench["requests"] = {"successful": requests, "errored": [], "incomplete": []}
    return bench


def guidellm_report(version: str) -> dict:
    totals = {"successful": 10, "errored": 1, "incomplete": 2, "total": 13}
    rows = [{"time_to_first_token_ms": 50.0 + i, "inter_token_latency_ms": 20.0 + i,
             "request_latency": 2.0, "output_tokens": 100 if i != 9 else 1,
             "prompt_tokens": 64}
            for i in range(10)]
    benches = [
        guidellm_benchmark(version, {"type_": "synchronous"}, 40, 15, 1.5, 60, totals),
        guidellm_benchmark(version, {"type_": "throughput", "max_concurrency": 512},
                           900, 45, 9.0, 2000, totals),
        guidellm_benchmark(version, {"type_": "constant", "rate": 2.5,
                                     "max_concurrency": 512}, 120, 22, 4.0, 500, totals,
                           requests=rows),
        guidellm_benchmark(version, {"type_": "poisson", "rate": 5.0, "random_seed": 42},
                           300, 30, 6.0, 900, totals),
    ]
    doc: dict = {"benchmarks": benches}
    if version == "v0.4":
        doc = {"args": {"profile": "sweep"}, **doc}
    elif version == "v0.5":
        doc = {"metadata": {"version": 1, "guidellm_version": "0.5.0"},
               "args": {"profile": "sweep"}, **doc}
    elif version == "v0.7":
        doc = {"metadata": {"version": 2, "guidellm_version": "0.7.3"},
               "config": {"spec": {"profile": {"kind": "sweep"}}}, **doc}
    return doc


GUIDELLM_FORMATS = {"v0.3": "guidellm-v0.3", "v0.4": "guidellm-v0.4",
                    "v0.5": "guidellm-v0.5-v0.6", "v0.7": "guidellm-v0.7+"}


@pytest.mark.parametrize("version", sorted(GUIDELLM_FORMATS))
def test_guidellm_versions(tmp_path, version):
    write_json(tmp_path / "benchmarks.json", guidellm_report(version))
    [f] = read_sweep(tmp_path, ["benchmarks.json"])
    assert f.format == GUIDELLM_FORMATS[version]
    sync, burst, const, poisson = f.points
    assert sync.arrival_rate == burst.arrival_rate == math.inf
    assert any("'synchronous' stage" in m for m in sync.methods)
    assert (const.arrival_rate, poisson.arrival_rate) == (2.5, 5.0)
    assert any("max_concurrency 512" in m for m in const.methods)
    # ms summaries as they are; request_latency is seconds already
    assert (poisson.latency["ttft_p95"], poisson.latency["e2e_p99"], poisson.output_throughput) == (300, 6.0, 900)
    assert (poisson.completed, poisson.failed, poisson.goodput) == (10, 1, None)
    # no per-request list: TPOT from the token-weighted ITL p95, and it says so
    assert poisson.latency["tpot_p95"] == 30
    assert any(m.startswith("tpot_p95: taken from ITL") for m in poisson.methods)
    # full per-request list: vLLM-style TPOT percentile over requests with >1 token
    assert const.latency["tpot_p95"] == pytest.approx(np.percentile([20.0 + i for i in range(9)], 95))
    assert any("per-request inter_token_latency_ms" in m for m in const.methods)


def test_real_guidellm_v03_report_json_and_yaml():
    """GuideLLM's own stripped test report: one synchronous (closed-loop) stage."""
    folder = example(*GUIDELLM_V03)
    as_json, as_yaml = read_sweep(folder, ["benchmarks_stripped.*"])
    assert (as_json.format, as_yaml.format) == ("guidellm-v0.3", "guidellm-v0.3")
    [point] = as_json.points
    assert as_yaml.points[0] == dataclasses.replace(point, file="benchmarks_stripped.yaml")
    bench = json.loads((folder / "benchmarks_stripped.json").read_text())["benchmarks"][0]
    metrics, totals = bench["metrics"], bench["request_totals"]
    assert point.arrival_rate == math.inf                 # synchronous: no open-loop point
    assert point.latency["ttft_p95"] == metrics["time_to_first_token_ms"]["successful"]["percentiles"]["p95"]
    assert point.latency["e2e_p99"] == metrics["request_latency"]["successful"]["percentiles"]["p99"]
    assert point.latency["tpot_p95"] == metrics["inter_token_latency_ms"]["successful"]["percentiles"]["p95"]
    assert (point.completed, point.failed) == (totals["successful"], totals["errored"])
    assert point.sent == totals["successful"] + totals["errored"] + totals["incomplete"]
    assert point.achieved_rate == metrics["requests_per_second"]["successful"]["mean"]
    assert combine_replicates(as_json.points) == []


def test_guidellm_yaml(tmp_path):
    (tmp_path / "benchmarks.yaml").write_text(yaml.safe_dump(guidellm_report("v0.7")))
    [f] = read_sweep(tmp_path, ["*.yaml"])
    assert f.format == "guidellm-v0.7+"
    assert [p.arrival_rate for p in f.points] == [math.inf, math.inf, 2.5, 5.0]


def test_guidellm_unknown_schema_version(tmp_path):
    doc = guidellm_report("v0.7")
    doc["metadata"]["version"] = 3
    write_json(tmp_path / "benchmarks.json", doc)
    with pytest.raises(CapplanError, match="schema version 3") as info:
        read_sweep(tmp_path, ["benchmarks.json"])
    assert info.value.file == "benchmarks.json"


def test_guidellm_missing_metric(tmp_path):
    doc = guidellm_report("v0.4")
    del doc["benchmarks"][3]["metrics"]["request_latency"]
    write_json(tmp_path / "benchmarks.json", doc)
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["benchmarks.json"])
    assert info.value.key == "benchmarks[3].metrics.request_latency.successful"


# --------------------------------------------------------------------------- #
# CSV
# --------------------------------------------------------------------------- #

def test_csv_display_units(tmp_path):
    (tmp_path / "sweep.csv").write_text(
        "# measured 2026-11-01, 3 runs\n"
        "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput,completed,failed,goodput,mean_batch\n"
        "1,120,25,18.5,200,100,0,,3\n"
        "4,300,30,20,700,100,2,3.8,12\n"
        "inf,900,50,25,1500,100,0,,40\n")
    [f] = read_sweep(tmp_path, ["*.csv"])
    assert f.format == "csv"
    a, b, c = f.points
    assert (a.arrival_rate, a.latency["ttft_p95"], a.latency["tpot_p95"], a.latency["e2e_p99"], a.output_throughput) == \
        (1.0, 120.0, 25.0, 18.5, 200.0)
    assert (b.completed, b.failed, b.goodput, a.goodput) == (100, 2, 3.8, None)
    assert c.arrival_rate == math.inf
    assert "ttft_p95: CSV column ttft_p95 (ms), line 4" in b.methods


def test_csv_unit_suffixes(tmp_path):
    (tmp_path / "s.csv").write_text(
        "Arrival_Rate,TTFT_P95_S,tpot_p95_s,e2e_p99_ms,output_throughput\n"
        "2,0.25,0.03,21000,650\n")
    p = read_sweep(tmp_path, ["s.csv"])[0].points[0]
    assert p.latency["ttft_p95"] == pytest.approx(250.0)
    assert p.latency["tpot_p95"] == pytest.approx(30.0)
    assert p.latency["e2e_p99"] == pytest.approx(21.0)
    assert (p.completed, p.failed) == (0, 0)


@pytest.mark.parametrize("text, key, line, words", [
    ("arrival_rate,ttft_p95,e2e_p99,output_throughput\n1,2,3,4\n",
     "tpot_p95", 1, "lacks column"),
    ("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n1,2,3,4,5\n2,x,3,4,5\n",
     "ttft_p95", 3, "expected a number"),
    ("arrival_rate,ttft_p95,ttft_p95_s,tpot_p95,e2e_p99,output_throughput\n1,2,3,4,5,6\n",
     "ttft_p95_s", 1, "given twice"),
    ("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n1,2,3,4\n",
     None, 2, "4 cells"),
    ("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n",
     None, None, "no data rows"),
])
def test_csv_errors(tmp_path, text, key, line, words):
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(CapplanError, match=words) as info:
        read_sweep(tmp_path, ["bad.csv"])
    assert (info.value.file, info.value.key, info.value.line) == ("bad.csv", key, line)


# --------------------------------------------------------------------------- #
# Replicates
# --------------------------------------------------------------------------- #

def point(rate, ttft, tpot=20.0, e2e=10.0, tok=100.0, file="f.json", completed=100,
          failed=0, sent=0, achieved=0.0) -> SweepPoint:
    return SweepPoint(arrival_rate=rate, latency={"ttft_p95": ttft, "tpot_p95": tpot, "e2e_p99": e2e},
                      output_throughput=tok, completed=completed, failed=failed, sent=sent,
                      achieved_rate=achieved, goodput=None, file=file, methods=())


def test_combine_replicates_median_and_mad():
    rows = combine_replicates([
        point(4.0, 100.0, tpot=30.0, e2e=20.0, tok=700.0, file="r1.json", sent=100, achieved=3.9),
        point(2.0, 80.0, file="r1.json"),
        point(math.inf, 900.0, file="burst.json"),
        point(4.0, 130.0, tpot=31.0, e2e=22.0, tok=720.0, file="r2.json", failed=1, sent=110),
        point(4.0, 110.0, tpot=35.0, e2e=21.0, tok=710.0, file="r3.json", sent=100, achieved=3.7),
    ])
    assert [r.arrival_rate for r in rows] == [2.0, 4.0]
    two, four = rows
    assert two == SweepRow(arrival_rate=2.0, latency={"ttft_p95": 80.0, "tpot_p95": 20.0, "e2e_p99": 10.0},
                           spread={"ttft_p95": 0.0, "tpot_p95": 0.0, "e2e_p99": 0.0},
                           output_throughput=100.0, runs=1, completed=100, failed=0, sent=0,
                           achieved_rate=0.0, files=("r1.json",))
    assert (four.latency["ttft_p95"], four.spread["ttft_p95"]) == (110.0, 10.0)
    assert (four.latency["tpot_p95"], four.spread["tpot_p95"]) == (31.0, 1.0)
    assert (four.latency["e2e_p99"], four.spread["e2e_p99"]) == (21.0, 1.0)
    assert four.output_throughput == 710.0
    assert (four.runs, four.completed, four.failed, four.sent) == (3, 300, 1, 310)
    assert four.achieved_rate == pytest.approx(3.8)     # the median of the runs that measured it
    assert four.files == ("r1.json", "r2.json", "r3.json")


def test_combine_replicates_even_count_and_runs_that_measured_no_latency():
    """A run that completed nothing measured no latency (inf): the medians are over the runs that did;
    where none did, the cells are 0 and the note says the point delivered nothing."""
    inf = math.inf
    nothing = {"tpot": inf, "e2e": inf, "completed": 0, "failed": 100, "sent": 100}
    rows = combine_replicates([point(1.0, 100.0), point(1.0, 120.0),
                               point(3.0, inf, **nothing), point(3.0, inf, **nothing), point(3.0, 50.0),
                               point(5.0, inf, **nothing)])
    assert (rows[0].latency["ttft_p95"], rows[0].spread["ttft_p95"]) == (110.0, 10.0)
    assert (rows[1].latency["ttft_p95"], rows[1].spread["ttft_p95"], rows[1].unmeasured) == (50.0, 0.0, False)
    assert rows[2].latency == {"ttft_p95": 0.0, "tpot_p95": 0.0, "e2e_p99": 0.0} and rows[2].unmeasured
    note = rows[2].table_row(standard_model().slos)["note"]
    assert note.startswith("only 0 of 100 requests completed at 5 req/s (100 failed); no request completed")
    assert combine_replicates([]) == []


def test_replicates_from_files(tmp_path):
    for i, ttft in enumerate((200.0, 260.0, 230.0)):
        write_json(tmp_path / f"run{i}" / "r4.json",
                   current_result(request_rate=4.0, p95_ttft_ms=ttft))
    rows = combine_replicates(p for f in read_sweep(tmp_path, ["run*/r4.json"])
                              for p in f.points)
    assert len(rows) == 1
    assert (rows[0].latency["ttft_p95"], rows[0].spread["ttft_p95"], rows[0].runs) == (230.0, 30.0, 3)
    assert rows[0].files == ("run0/r4.json", "run1/r4.json", "run2/r4.json")


# --------------------------------------------------------------------------- #
# Files and errors
# --------------------------------------------------------------------------- #

def test_truncated_json_names_the_file(tmp_path, data):
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "qps_04.json").write_bytes((data / "qps_04.json").read_bytes()[:5000])
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["sweep/*.json"])
    assert info.value.file == "sweep/qps_04.json"
    assert "truncated" in info.value.message
    assert str(info.value).startswith("sweep/qps_04.json:1: ")


def test_empty_glob(tmp_path):
    with pytest.raises(CapplanError, match="matches no file"):
        read_sweep(tmp_path, ["sweep/*.json"])
    with pytest.raises(CapplanError, match="does not exist"):
        read_sweep(tmp_path, ["qps_04.json"])
    with pytest.raises(CapplanError, match="empty"):
        read_sweep(tmp_path, [])


def test_unknown_format_and_unreadable(tmp_path):
    write_json(tmp_path / "other.json", {"foo": 1})
    with pytest.raises(CapplanError, match="unknown sweep file format") as info:
        read_sweep(tmp_path, ["other.json"])
    assert info.value.file == "other.json"
    (tmp_path / "binary.json").write_bytes(b"\xff\xd8\xff\xe0 not json")
    with pytest.raises(CapplanError, match="not UTF-8") as info:
        read_sweep(tmp_path, ["binary.json"])
    assert info.value.file == "binary.json"
    (tmp_path / "empty.json").write_text("  \n")
    with pytest.raises(CapplanError, match="empty"):
        read_sweep(tmp_path, ["empty.json"])


def test_pytorch_sidecars_are_skipped(tmp_path):
    write_json(tmp_path / "r.json", current_result())
    sidecar = [{"benchmark": {"name": "vLLM benchmark"}, "model": {"name": "m"},
                "metric": {"name": "median_ttft_ms", "benchmark_values": [1.0]}}]
    write_json(tmp_path / "r.pytorch.json", sidecar)
    assert [f.path for f in read_sweep(tmp_path, ["*.json"])] == ["r.json"]
    with pytest.raises(CapplanError, match="sidecar"):
        read_sweep(tmp_path, ["*.pytorch.json"])
    write_json(tmp_path / "renamed.json", sidecar)
    with pytest.raises(CapplanError, match="PyTorch-benchmark"):
        read_sweep(tmp_path, ["renamed.json"])


def test_deterministic_order_and_dedup(tmp_path, data):
    for name in REAL_FILES:
        shutil.copy(data / name, tmp_path / name)
    a = read_sweep(tmp_path, ["qps_inf.json", "qps_1*.json", "*.json"])
    b = read_sweep(tmp_path, ["*.json", "qps_0*.json"])
    assert a == b
    assert [f.path for f in a] == list(REAL_FILES)
