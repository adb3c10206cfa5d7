"""Issue 37's cases about the benchmark files a plan reads (items 6, 8 and 9): an estimate file of other
token lengths, messages that do not say where in a file a bad value is, and a closed loop whose
``max_concurrency`` is below one request in flight."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from . import common

REPO = Path(__file__).resolve().parents[2]
ESTIMATE = REPO / "tests" / "data" / "estimates" / "llama-3.1-8b-1024-256-h100-sxm5-80gb-tp1.estimate.yaml"
CANDIDATES = REPO / "plans" / "llama3.3-70b-candidates.yaml"
H100_TP4 = "llama-3.3-70b-sharegpt-h100-sxm5-80gb-tp4.estimate.yaml"
WARNING = "⚠ Token mix: the estimate's requests averaged 4,096 prompt tokens against the plan's class mix 213"


def _estimate(folder: Path, **header) -> Path:
    """The 8B H100 estimate file in the case's plans/, its header and points edited."""
    doc = yaml.safe_load(ESTIMATE.read_text(encoding="utf-8"))
    points = header.pop("points", {})
    doc.update(header)
    for (i, key), value in points.items():
        if value is None:
            del doc["points"][i][key]
        else:
            doc["points"][i][key] = value
    (folder / "plans").mkdir(exist_ok=True)
    path = folder / "plans" / "est.estimate.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _estimate_plan(folder: Path) -> None:
    """The red-team plan on the estimate's GPU and model, its class mix averaging 213 prompt tokens."""
    doc = common.plan(gpu="h100-sxm5-80gb", model="llama-3.1-8b")
    doc["tables"]["classes"] = {"rows": [{"name": "sharegpt", "weight": 1, "prompt_tokens": 213,
                                          "output_tokens": 256}]}
    doc["tables"]["load_sweep"] = {"import": "est.estimate.yaml"}
    common.write_plan(folder, doc)


def estimate_of_other_lengths(folder: Path) -> str:
    _estimate(folder, isl=4096)
    _estimate_plan(folder)
    done = common.capplan(folder, "build", "plans/p.yaml")
    common.expect(done.returncode == 0, done, "the plan does not build")
    record = (folder / "out" / "p.md").read_text(encoding="utf-8")
    common.expect(WARNING in record, None, "the record takes the 4,096-token estimate's λ* with no token-mix warning")
    return "the record warns: estimate's 4,096 prompt tokens against the class mix's 213 (+1,823%)"


def evidence_of_other_lengths(folder: Path) -> str:
    shutil.copytree(CANDIDATES.parent / "estimates", folder / "plans" / "estimates")
    shutil.copy(CANDIDATES, folder / "plans" / "p.yaml")
    edited = folder / "plans" / "estimates" / H100_TP4
    edited.write_text(edited.read_text(encoding="utf-8").replace("isl: 213", "isl: 4096"), encoding="utf-8")
    done = common.capplan(folder, "build", "plans/p.yaml")
    common.expect(done.returncode == 0, done, "the plan does not build")
    lines = [line for line in (folder / "out" / "p.md").read_text(encoding="utf-8").splitlines() if H100_TP4 in line]
    common.expect(any(WARNING in line for line in lines), None,
                  "the candidate's λ* comes from the 4,096-token estimate with no token-mix warning")
    return "the candidate's evidence line warns: 4,096 prompt tokens against the class mix's 213"


def estimate_points_located(folder: Path) -> str:
    _estimate_plan(folder)
    seen = []
    for value, where in ((-5, "points[1].ttft_ms: must not be negative, got -5"),
                         ("fast", "points[1].ttft_ms: expected a number, got 'fast'"),
                         (None, "points[1].ttft_ms: missing")):
        _estimate(folder, points={(1, "ttft_ms"): value})
        done = common.capplan(folder, "eval", "plans/p.yaml")
        common.expect(done.returncode == 1 and f"est.estimate.yaml: {where}" in done.stderr, done,
                      f"the message does not say {where!r}")
        seen.append(where.split(": ", 1)[1])
    return f"exit 1 naming est.estimate.yaml: points[1].ttft_ms ({'; '.join(seen)})"


def vllm_fields_located(folder: Path) -> str:
    run = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B", "num_prompts": 160, "request_rate": 16.0,
           "burstiness": 1.0, "max_concurrency": None, "duration": 10.0, "completed": 160, "failed": 0,
           "output_throughput": 900.0, "p95_ttft_ms": 80.0, "p95_tpot_ms": 20.0, "p99_e2el_ms": 2500.0}
    (folder / "plans" / "sweeps").mkdir(parents=True)
    doc = common.plan()
    doc["tables"]["load_sweep"] = {"import": "sweeps/conc16.json"}
    common.write_plan(folder, doc)
    seen = []
    for change, where in (({"output_throughput": -80}, "output_throughput: must not be negative, got -80"),
                          ({"completed": 160.5}, "completed: expected a whole number, got 160.5")):
        (folder / "plans" / "sweeps" / "conc16.json").write_text(json.dumps({**run, **change}), encoding="utf-8")
        done = common.capplan(folder, "eval", "plans/p.yaml")
        common.expect(done.returncode == 1 and f"sweeps/conc16.json: {where}" in done.stderr, done,
                      f"the message does not say {where!r}")
        seen.append(where)
    return f"exit 1 naming sweeps/conc16.json: {'; '.join(seen)}"


def max_concurrency_below_one(folder: Path) -> str:
    run = {"backend": "vllm", "num_prompts": 160, "burstiness": 1.0, "duration": 43.0, "completed": 160,
           "failed": 0, "request_throughput": 3.72, "request_goodput": None, "output_throughput": 476.0,
           "p95_ttft_ms": 150.0, "p95_tpot_ms": 20.0, "p99_e2el_ms": 3200.0}
    sweeps = folder / "plans" / "sweeps"
    sweeps.mkdir(parents=True)
    for rate in (2, 3):
        (sweeps / f"qps_{rate}.json").write_text(json.dumps({**run, "request_rate": float(rate),
                                                             "max_concurrency": None}), encoding="utf-8")
    seen = []
    for cap, pattern in ((-4, "sweeps/*.json"), (0, "sweeps/conc.json")):
        (sweeps / "conc.json").write_text(json.dumps({**run, "request_rate": "inf", "max_concurrency": cap}),
                                          encoding="utf-8")
        doc = common.plan()
        doc["tables"]["load_sweep"] = {"import": pattern}
        common.write_plan(folder, doc)
        done = common.capplan(folder, "eval", "plans/p.yaml")
        wanted = f"sweeps/conc.json: max_concurrency: must be at least 1, got {cap}"
        common.expect(done.returncode == 1 and wanted in done.stderr, done,
                      f"max_concurrency {cap} is not refused by name")
        seen.append(f"{cap} ({'beside open-loop runs' if '*' in pattern else 'alone'})")
    return f"exit 1 naming sweeps/conc.json: max_concurrency: must be at least 1, for {' and '.join(seen)}"


CASES = [
    (6, "an estimate file of 4,096-token prompts for a plan whose mix averages 213", estimate_of_other_lengths),
    (6, "the same estimate as a candidate's evidence", evidence_of_other_lengths),
    (8, "an estimate point's bad ttft_ms: negative, text, missing", estimate_points_located),
    (8, "a vLLM JSON's negative output_throughput and fractional completed", vllm_fields_located),
    (9, "closed-loop files with max_concurrency -4 (beside open-loop runs) and 0", max_concurrency_below_one),
]
