"""The largest imports a plan may name: benchmark files and a model's ``config.json``.

Each case is the main plan with its load sweep imported (or its model read from a
config.json) and ``capplan eval`` run on it, as a user would. The limits they meet
are stated in docs/limits.md ("Imports").
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from benchmarks.worst.harness import Case

ROOT = Path(__file__).resolve().parents[2]
RUN = {"date": "20250601-120500", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
       "num_prompts": 400, "request_rate": 4, "burstiness": 1.0, "max_concurrency": None, "duration": 108.5,
       "completed": 400, "failed": 0, "request_throughput": 3.88, "request_goodput": None,
       "output_throughput": 790.0, "p95_ttft_ms": 260.0, "p99_ttft_ms": 338.0, "p95_tpot_ms": 21.5,
       "p99_tpot_ms": 30.25, "p95_e2el_ms": 1620.0, "p99_e2el_ms": 1800.0}


def _plan(folder: Path, table: dict | None = None, model=None) -> list[str]:
    plan = yaml.safe_load((ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml").read_text(encoding="utf-8"))
    if table is not None:
        plan["tables"]["load_sweep"] = {"source": "benchmark files", **table}
    plan["model"] = "llama-3.1-8b"          # the model the vLLM results (RUN) measured
    if model is not None:
        plan["model"] = model
        plan["inputs"]["parameter_count"] = 8.03e9
    (folder / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    return ["eval", "plan.yaml"]


def _json_lines(objects: int, rates: int, files: int = 1):
    """``objects`` vLLM results at ``rates`` rates, in ``files`` JSON Lines files."""
    def setup(folder: Path) -> list[str]:
        for f in range(files):
            with (folder / f"runs{f}.jsonl").open("w", encoding="utf-8") as out:
                for i in range(f, objects, files):
                    out.write(json.dumps({**RUN, "request_rate": 1 + i % rates, "p95_ttft_ms": 200.0 + i % 7}) + "\n")
        return _plan(folder, {"import": "runs*.jsonl"})
    return setup


def _csv(rows: int, rates: int):
    def setup(folder: Path) -> list[str]:
        with (folder / "sweep.csv").open("w", encoding="utf-8") as out:
            out.write("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput,completed,sent\n")
            for i in range(rows):
                out.write(f"{1 + i % rates},{200 + i % 7},21.5,1.8,790,400,400\n")
        return _plan(folder, {"import": "sweep.csv"})
    return setup


CONFIG = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
          "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
          "torch_dtype": "bfloat16"}


def _large_config(folder: Path) -> list[str]:
    (folder / "config.json").write_text(json.dumps({**CONFIG, "padding": "x" * 100 * 10 ** 6}), encoding="utf-8")
    return _plan(folder, model={"config": "config.json"})


def _deep_config(folder: Path) -> list[str]:
    """A config.json just under its size limit, every byte a level of nesting."""
    depth = 1_900_000
    (folder / "config.json").write_text('{"hidden_size": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    return _plan(folder, model={"config": "config.json"})


def _detailed_run(folder: Path) -> list[str]:
    """One `vllm bench serve --save-detailed` result of the most requests a run may hold (1,000,000)
    and 7 gaps each, ~60 MB, without summary percentiles: TTFT, TPOT and E2E computed from the
    arrays (E2E from TTFT + the gaps), and every request kept for goodput."""
    n = 1_000_000
    run = {k: v for k, v in RUN.items() if not k.startswith("p9")}
    run.update(num_prompts=n, completed=n, ttfts=[round(0.2 + i % 97 / 1000, 3) for i in range(n)],
               itls=[[0.021, 0.022, 0.023, 0.021, 0.025, 0.021, 0.02]] * n, output_lens=[8] * n, errors=[""] * n)
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return _plan(folder, {"import": "run.json"})


def _dense_gaps(folder: Path) -> list[str]:
    """The most floats 64 MiB of JSON holds: 16 million gaps ("0.5," each) of 1,000 requests, refused
    after parsing (a run may hold 10,000,000 gaps)."""
    n, gaps = 1_000, 16_000
    run = {k: v for k, v in RUN.items() if not k.startswith("p9")}
    run.update(num_prompts=n, completed=n, ttfts=[0.2] * n, output_lens=[gaps + 1] * n, errors=[""] * n)
    row = "[" + "0.5," * (gaps - 1) + "0.5]"
    (folder / "run.json").write_text(json.dumps(run)[:-1] + ', "itls": [' + ",".join([row] * n) + "]}",
                                     encoding="utf-8")
    return _plan(folder, {"import": "run.json"})


def _guidellm_requests(folder: Path) -> list[str]:
    """A GuideLLM report under 64 MiB that keeps each of its 500,000 successful requests (TPOT and
    goodput computed from them)."""
    n = 500_000
    doc = json.loads((ROOT / "tests" / "data" / "guidellm-overloaded" / "benchmarks.json").read_text(encoding="utf-8"))
    bench = doc["benchmarks"][0]
    bench["metrics"]["request_totals"] = {"successful": n, "errored": 0, "incomplete": 0}
    rows = ",".join('{"time_to_first_token_ms": %d, "inter_token_latency_ms": 21.5, "request_latency": 1.8, '
                    '"output_tokens": 30}' % (200 + i % 50) for i in range(n))
    doc["benchmarks"] = [bench]
    text = json.dumps(doc)
    text = text[:-3] + ', "requests": {"successful": [' + rows + "]}}]}"
    (folder / "benchmarks.json").write_text(text, encoding="utf-8")
    return _plan(folder, {"import": "benchmarks.json"})


REAL_GUIDELLM = ROOT / "tests" / "data" / "guidellm-0.8.1" / "benchmarks.json"


def _guidellm_report(suffix: str):
    """The real GuideLLM 0.8.1 report (three 20 s windows, 260 requests kept, 1.4 MB) as JSON, or the same
    data as block-style YAML (1.6 MB, as ``guidellm run --output kind=yaml`` writes it): the YAML import
    should cost about what the JSON one does."""
    def setup(folder: Path) -> list[str]:
        doc = json.loads(REAL_GUIDELLM.read_text(encoding="utf-8"))
        text = json.dumps(doc) if suffix == "json" else yaml.safe_dump(doc, sort_keys=False)
        (folder / f"benchmarks.{suffix}").write_text(text, encoding="utf-8")
        return _plan(folder, {"import": f"benchmarks.{suffix}",
                              "transferred": {"ratio": 1, "reason": "GuideLLM's mock server, timings only"}})
    return setup


def _yaml_report(folder: Path) -> list[str]:
    """A GuideLLM YAML report just under the 4 MiB a YAML report may hold, a million list items."""
    (folder / "benchmarks.yaml").write_text("benchmarks:\n" + "- 1\n" * 1_000_000, encoding="utf-8")
    return _plan(folder, {"import": "benchmarks.yaml"})


CASES = [
    Case("imports: JSON Lines, 30,000 vLLM results at 30 rates", _json_lines(30_000, 30), budget_s=20, budget_mib=600),
    Case("imports: JSON Lines, 100,000 vLLM results at 10,000 rates in 4 files (the most an import reads)",
         _json_lines(100_000, 10_000, files=4), budget_s=30, budget_mib=1024),
    Case("imports: JSON Lines, 30,000 vLLM results at 30,000 rates (refused: over 10,000 rates)",
         _json_lines(30_000, 30_000), budget_s=30, budget_mib=800),
    Case("imports: CSV of 100,000 rows at 10,000 rates (the most an import reads)", _csv(100_000, 10_000),
         budget_s=30, budget_mib=600),
    Case("imports: CSV of 1,000,000 rows (refused at row 100,001)", _csv(1_000_000, 100), budget_s=20,
         budget_mib=600),
    Case("imports: a 60 MB vLLM --save-detailed result of 1,000,000 requests", _detailed_run, budget_s=30,
         budget_mib=1024),
    Case("imports: a 64 MB vLLM result of 16 million gaps (refused)", _dense_gaps, budget_s=20,
         budget_mib=1024),
    Case("imports: a 60 MB GuideLLM report keeping 500,000 requests", _guidellm_requests, budget_s=30,
         budget_mib=1024),
    Case("imports: a 4 MB GuideLLM YAML report of a million items", _yaml_report, budget_s=30, budget_mib=1024),
    Case("imports: the real GuideLLM 0.8.1 report as JSON (1.4 MB)", _guidellm_report("json"), budget_s=10,
         budget_mib=300),
    Case("imports: the same GuideLLM 0.8.1 report as YAML (block style)", _guidellm_report("yaml"), budget_s=10,
         budget_mib=300),
    Case("imports: config.json of 100 MB (refused before reading)", _large_config, budget_s=10, budget_mib=500),
    Case("imports: config.json nested 1,900,000 deep (refused)", _deep_config, budget_s=10, budget_mib=500),
]
