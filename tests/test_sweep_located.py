"""A bad value in any benchmark file a plan imports is named where it is (issue 37, item 8): the plan's
message names the file and the value's key path (``points[1].ttft_ms``, ``p95_ttft_ms``) or its line,
for every kind of file capplan reads: vLLM JSON, GuideLLM, CSV, JSON Lines, InferenceX closed loops and
estimate YAML. The real files are the shared examples where they are needed (skipped when absent)."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from conftest import ROOT
from shared_examples import VLLM_70B, example

ESTIMATE = ROOT / "tests" / "data" / "estimates" / "llama-3.1-8b-1024-256-h100-sxm5-80gb-tp1.estimate.yaml"
GUIDELLM = ROOT / "tests" / "data" / "guidellm-0.8.1" / "benchmarks.json"
INFERENCEX = ("inferencex", "minimax-m2.5-tep8-h200-isl4096")
CONC16 = "minimax_m25_vllm_tep8_isl4096_osl128_conc16.json"


def _json(source, edit):
    doc = json.loads(source.read_text(encoding="utf-8"))
    edit(doc)
    return json.dumps(doc, indent=1)


def _vllm():
    return _json(example(*VLLM_70B) / "qps_16.json", lambda d: d.update(output_throughput=-80))


def _vllm_count():
    return _json(example(*VLLM_70B) / "qps_16.json", lambda d: d.update(completed=160.5))


def _inferencex():
    return _json(example(*INFERENCEX) / CONC16, lambda d: d.update(total_output_tokens="fast"))


def _guidellm():
    return _json(GUIDELLM, lambda d: d["benchmarks"][1]["metrics"]["output_tokens_per_second"]["successful"]
                 .update(mean=-3))


def _jsonl():
    run = {"backend": "vllm", "num_prompts": 100, "request_rate": 2.0, "completed": 100, "failed": 0,
           "output_throughput": 900.0, "p95_ttft_ms": 80.0, "p95_tpot_ms": 20.0, "p99_e2el_ms": 2500.0}
    return "\n".join(json.dumps(r) for r in (run, {**run, "request_rate": 4.0, "p95_tpot_ms": -5})) + "\n"


def _csv():
    return "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n2,85,12,1.8,900\n4,110,fast,2.1,1700\n"


def _estimate():
    doc = yaml.safe_load(ESTIMATE.read_text(encoding="utf-8"))
    doc["points"][1]["ttft_ms"] = -5
    return yaml.safe_dump(doc, sort_keys=False)


# kind -> (file name, its text, where the message must say the value is, what it says)
KINDS = {
    "vllm json": ("conc16.json", _vllm, "runs/conc16.json: output_throughput: ", "must not be negative, got -80"),
    "vllm json count": ("conc16.json", _vllm_count, "runs/conc16.json: completed: ",
                        "expected a whole number, got 160.5"),
    "inferencex": (CONC16, _inferencex, f"runs/{CONC16}: total_output_tokens: ", "expected a number, got 'fast'"),
    "guidellm": ("benchmarks.json", _guidellm,
                 "runs/benchmarks.json: benchmarks[1].metrics.output_tokens_per_second.successful.mean: ",
                 "must not be negative, got -3"),
    "json lines": ("runs.jsonl", _jsonl, "runs/runs.jsonl:2: p95_tpot_ms: ", "must not be negative, got -5"),
    "csv": ("sweep.csv", _csv, "runs/sweep.csv:3: tpot_p95: ", "expected a number, got 'fast'"),
    "estimate": ("est.estimate.yaml", _estimate, "runs/est.estimate.yaml: points[1].ttft_ms: ",
                 "must not be negative, got -5"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_bad_value_is_named_by_file_and_key_or_line(kind, base_plan, write_plan, tmp_path, run_main):
    name, text, where, what = KINDS[kind]
    folder = tmp_path / "plans" / "runs"
    folder.mkdir(parents=True)
    (folder / name).write_text(text(), encoding="utf-8")
    base_plan["tables"]["load_sweep"] = {"import": f"runs/{name}"}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1, err
    assert "tables.load_sweep.import: " + where in err and what in err, err


def test_the_shared_examples_read_unchanged(tmp_path):
    """The edits above break one value of a file that reads: each original is a valid import."""
    from capplan.loading.sweeps import read_sweep
    for source in (example(*VLLM_70B) / "qps_16.json", example(*INFERENCEX) / CONC16, GUIDELLM, ESTIMATE):
        shutil.copy(source, tmp_path / source.name)
        assert read_sweep(tmp_path, [source.name])[0].points
