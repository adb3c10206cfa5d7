"""More of the formats teams have (issue 13, item 4): ``vllm bench sweep serve``
folders, several configurations in one JSON Lines file, GuideLLM's CSV export,
closed bursts without the plan's percentile, located JSON Lines errors, and a
glob YAML reads as an alias. Imported numbers are checked against the files'
own summaries, read here independently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from capplan.errors import CapplanError
from capplan.loading.sweeps import read_sweep


@pytest.fixture
def base_plan(base_plan):
    """The test plan on the model the Llama-3.1-8B-Instruct benchmark files measured."""
    return {**base_plan, "model": "llama-3.1-8b"}


DATA = Path(__file__).resolve().parent / "data"
SWEEP_SERVE = DATA / "vllm-sweep-serve"
EXPERIMENT = "20250601_120000"


def _plan(base_plan, write_plan, tmp_path, source: Path, pattern, **table):
    shutil.copytree(source, tmp_path / "plans" / "sweep", dirs_exist_ok=True)
    base_plan["tables"]["load_sweep"] = {"source": "test runs", "import": pattern, **table}
    return write_plan(base_plan)


def _eval(run_main, path):
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    return json.loads(out)["scenarios"]["nominal"]


def test_a_sweep_serve_tree_is_one_series_per_server_setting(base_plan, write_plan, tmp_path, run_main):
    base_plan["inputs"]["e2e_p99_slo"] = "30 s"
    path = _plan(base_plan, write_plan, tmp_path, SWEEP_SERVE, [f"sweep/{EXPERIMENT}/*/run=*.json"])
    code, _, err = run_main("eval", path)
    assert code == 1
    assert "the files hold 2 series of different configurations, which are never combined as replicates" in err
    assert "select: {max_num_seqs: 128}" in err

    path = _plan(base_plan, write_plan, tmp_path, SWEEP_SERVE, [f"sweep/{EXPERIMENT}/*/run=*.json"],
                 select={"max_num_seqs": 64})
    rows = _eval(run_main, path)["tables"]["load_sweep"]["rows"]
    assert [(r["arrival_rate"], r["runs"]) for r in rows] == [(2, 2), (4, 2)]
    for row in rows:                    # the median (and MAD) of the two runs' summary keys
        folder = SWEEP_SERVE / EXPERIMENT / f"SERVE-max_num_seqs=64-BENCH-request_rate={row['arrival_rate']:g}"
        runs = [json.loads((folder / f"run={i}.json").read_text()) for i in (0, 1)]
        ttft = [r["p95_ttft_ms"] for r in runs]
        assert row["ttft_p95"] == pytest.approx(np.median(ttft))
        assert row["ttft_p95_mad"] == pytest.approx(np.median(np.abs(np.array(ttft) - np.median(ttft))))
        assert row["e2e_p99"] == pytest.approx(np.median([r["p99_e2el_ms"] for r in runs]) / 1000)


def test_a_sweep_summary_repeats_the_runs_of_its_combination_and_neither_it_nor_warm_up_is_counted(tmp_path):
    folder = f"{EXPERIMENT}/SERVE-max_num_seqs=64-BENCH-request_rate=2"
    summary, run0, run1, warmup = _by_name(read_sweep(SWEEP_SERVE, [f"{folder}/*.json"]))
    assert summary.format.startswith("vllm-bench-sweep-serve summary (not counted")
    assert summary.points == () and len(run0.points) == len(run1.points) == 1
    assert run0.format == "vllm-bench-sweep-serve run"
    assert (warmup.format, warmup.points) == ("vllm-bench-sweep-serve warm-up run (not counted)", ())


def _by_name(files):
    named = {Path(f.path).name: f for f in files}
    return named["summary.json"], named["run=0.json"], named["run=1.json"], named["warmup.json"]


def _result(rate, model, ttft, **extra):
    return {"request_rate": rate, "model_id": model, "completed": 100, "failed": 0, "num_prompts": 100,
            "output_throughput": 500.0, "request_goodput": None, "max_concurrency": None,
            "p95_ttft_ms": ttft, "p95_tpot_ms": 20.0, "p99_e2el_ms": 4000.0, **extra}


def test_json_lines_with_two_models_are_two_series_and_select_picks_one(base_plan, write_plan, tmp_path, run_main):
    src = tmp_path / "src"
    src.mkdir()
    lines = [_result(r, m, t) for m, ts in (("llama-8b", (90.0, 120.0)), ("llama-70b", (300.0, 500.0)))
             for r, t in zip((2, 4), ts)]
    (src / "runs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    path = _plan(base_plan, write_plan, tmp_path, src, "sweep/runs.jsonl")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ('the files hold 2 series of different configurations, which are never combined as replicates: '
            '{model_id="llama-70b", max_concurrency=null}; {model_id="llama-8b", max_concurrency=null}') in err
    path = _plan(base_plan, write_plan, tmp_path, src, "sweep/runs.jsonl", select={"model_id": "llama-70b"},
                 transferred={"ratio": 1, "reason": "a test of select"})
    rows = _eval(run_main, path)["tables"]["load_sweep"]["rows"]
    assert [(r["arrival_rate"], r["ttft_p95"], r["runs"]) for r in rows] == [(2, 300, 1), (4, 500, 1)]
    path = _plan(base_plan, write_plan, tmp_path, src, "sweep/runs.jsonl", select={"model_id": "qwen"})
    code, _, err = run_main("eval", path)
    assert 'select: no imported run has model_id="qwen"' in err


def test_every_error_in_a_json_lines_file_names_its_object_and_line(tmp_path):
    docs = [_result(1, "m", 50.0), _result(2, "m", 60.0), dict(_result(3, "m", 70.0), completed="many")]
    text = "".join(json.dumps(d, indent=1) + "\n" for d in docs)
    (tmp_path / "runs.jsonl").write_text(text)
    third = text.splitlines().index("{", len(json.dumps(docs[0], indent=1).splitlines())
                                    + len(json.dumps(docs[1], indent=1).splitlines())) + 1
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["runs.jsonl"])
    assert (info.value.file, info.value.line, info.value.key) == ("runs.jsonl", third, "completed")
    assert info.value.message.endswith(f"(in the object 3 starting on line {third})")


def test_guidellm_csv_export_is_refused_with_a_pointer_to_benchmarks_json(tmp_path):
    header = ["Type", "Run Id", "Id", "Name", "Start Time", "End Time", "Duration", "Strategy",
              "Time To First Token Ms Successful Mean", "Inter Token Latency Ms Successful P95",
              "Request Latency Successful P99"]
    (tmp_path / "benchmarks.csv").write_text(",".join(header) + "\n" + ",".join("1" * len(header)) + "\n")
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["benchmarks.csv"])
    assert "this is GuideLLM's CSV export (benchmarks.csv): its 11 columns" in info.value.message
    assert info.value.message.endswith(
        "import its JSON report instead, which capplan reads with every percentile and request count: "
        "guidellm run ... --output kind=json,path=benchmarks.json (GuideLLM 0.8 and later; before 0.8: "
        "guidellm benchmark ... --output-path benchmarks.json, or --outputs json)")


def test_a_burst_without_the_plans_percentile_is_shown_not_fatal(base_plan, write_plan, tmp_path, run_main):
    src = tmp_path / "src"
    shutil.copytree(DATA / "vllm-legacy-p99", src)
    burst = json.loads((src / "qps_8.json").read_text())
    burst.update(request_rate="inf")
    for key in ("p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms"):     # only medians of TTFT and TPOT, E2E p99 kept
        del burst[key]
    (src / "qps_inf.json").write_text(json.dumps(burst))
    for name in ("ttft_p95_slo", "tpot_p95_slo"):
        base_plan["inputs"].pop(name)
    base_plan["inputs"].update(ttft_p99_slo="1 s", tpot_p99_slo="40 ms", e2e_p99_slo="30 s")
    path = _plan(base_plan, write_plan, tmp_path, src, "sweep/qps_*.json")
    assert _eval(run_main, path)["quantities"]["instance_max_rate"]["value"] == 4
    code, _, err = run_main("build", path, "--out", tmp_path / "o")
    assert code == 0, err
    text = (tmp_path / "o" / "test-plan.md").read_text()
    assert (f"sweep/qps_inf.json: closed burst (all requests at once), E2E p99 {burst['p99_e2el_ms'] / 1000:g} s, "
            "no TTFT p99, TPOT p99 in the file, ") in text


@pytest.mark.parametrize("written", ["[*.json]", "*json"])
def test_a_glob_yaml_reads_as_an_alias_gets_a_hint_to_quote_it(written, base_plan, write_plan, run_main):
    import yaml
    text = yaml.safe_dump(base_plan, sort_keys=False)
    text = text.replace("  load_sweep:\n", f"  load_sweep:\n    import: {written}\n", 1)
    code, _, err = run_main("eval", write_plan(text))
    assert code == 1
    assert "a value starting with * is a YAML alias: quote a file glob, e.g. import: ['*.json']" in err


def test_select_must_be_a_mapping_and_needs_import(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path, SWEEP_SERVE, [f"sweep/{EXPERIMENT}/*/run=*.json"],
                 select=["max_num_seqs", 64])
    code, _, err = run_main("eval", path)
    assert code == 1
    assert "tables.load_sweep.select: expected a mapping of configuration key: value" in err
    base_plan["tables"]["load_sweep"] = {"rows": [{"arrival_rate": 2, "ttft_p95": 85, "tpot_p95": 12.1,
                                                   "e2e_p99": 1.82}], "select": {"a": 1}}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1
    assert "tables.load_sweep.select: 'select:' picks one series of imported files; this table has no 'import:'" in err


def test_the_evidence_names_tool_version_strategy_and_where_each_percentile_came_from(
        base_plan, write_plan, tmp_path, run_main):
    base_plan["inputs"]["e2e_p99_slo"] = "30 s"
    path = _plan(base_plan, write_plan, tmp_path, SWEEP_SERVE, [f"sweep/{EXPERIMENT}/*/run=*.json"],
                 select={"max_num_seqs": 64})
    code, _, err = run_main("build", path, "--out", tmp_path / "o")
    assert code == 0, err
    text = (tmp_path / "o" / "test-plan.md").read_text()
    assert "| vllm bench sweep serve | run | open-loop Poisson | 4 req/s |" in text
    assert "; from the summary: ttft_p95, tpot_p95, e2e_p99; computed: —." in text


def test_guidellm_strategy_and_sources():
    from shared_examples import GUIDELLM_V03, example
    [f] = read_sweep(example(*GUIDELLM_V03), ["benchmarks_stripped.json"])
    [point] = f.points
    assert f.tool == ("GuideLLM", "v0.3")
    assert point.strategy == "synchronous"
    # one of 46 successful requests is kept: every percentile is GuideLLM's summary (TPOT from ITL)
    assert point.sources == {"ttft_p95": "summary", "tpot_p95": "summary", "e2e_p99": "summary"}
