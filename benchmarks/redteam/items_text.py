"""Issue 37's cases about text: control characters on the terminal (13), a title too long for a
workbook cell (14), a model declared by its ``config.json`` and named (19)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl

from . import common
from .common import Wrong, capplan, expect, plan, said, write_plan

RED = "runpod\x1b[31mRED\x1b[0m"
UNSHOWN = ("\x1b", "\x7f", "\x9b", "\u202e")


def terminal(folder: Path) -> str:
    """13: a deployment named with an escape sequence; eval, eval --json, build, check, explain."""
    doc = plan()
    doc["tables"]["deployments"]["rows"][0]["name"] = RED
    write_plan(folder, doc)
    for args in (("eval", "plans/p.yaml"), ("eval", "--json", "plans/p.yaml"), ("build",), ("check",),
                 ("explain", "plans/p.yaml", f"deployments[{RED}].monthly_cost")):
        done = capplan(folder, *args)
        expect(done.returncode == 0, done, f"`capplan {' '.join(args[:2])}` failed")
        raw = [c for c in UNSHOWN if c in done.stdout + done.stderr]
        expect(not raw, done, f"`capplan {' '.join(args[:2])}` printed {raw[0]!r} raw" if raw else "")
        if "--json" in args:
            names = json.dumps(json.loads(done.stdout))
            expect(RED.replace("\x1b", "\\u001b") in names, done, "eval --json lost the name")
    records = [p.name for p in (folder / "out").glob("*.md") if "\x1b" in p.read_text(encoding="utf-8")]
    expect(not records, None, f"out/{records[0] if records else ''} holds the escape byte raw")
    return "every command prints ESC as \\u001b; the record shows <U+001B>; eval --json reads back the name"


def long_title(folder: Path) -> str:
    """14: a 1 MiB ``title:``; every workbook text cell must stay within Excel's 32,767 characters."""
    write_plan(folder, plan(title="T" * 2 ** 20))
    done = capplan(folder, "build")
    if done.returncode == 0:
        book = openpyxl.load_workbook(folder / "out" / "p.xlsx")
        longest = max(len(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row
                      if isinstance(c.value, str))
        expect(longest <= 32_767, done, f"the workbook holds a text cell of {longest:,} characters")
    expect(done.returncode == 1 and "title" in done.stderr and "1,000" in done.stderr, done,
           "a 1 MiB title is not refused by key and limit")
    return said(done)


# DeepSeek-V2.5's config.json as Hugging Face ships it (no _name_or_path): MLA, 6 of 160 experts and 2 shared
DEEPSEEK_V25 = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "num_hidden_layers": 60,
                "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_size": 5120, "vocab_size": 102400,
                "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                "v_head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 2, "num_experts_per_tok": 6,
                "moe_intermediate_size": 1536, "intermediate_size": 12288, "torch_dtype": "bfloat16"}


def _vllm_result(rate: float) -> dict:
    """A ``vllm bench serve --save-result`` of DeepSeek-V2.5 at ``rate`` req/s (the fields capplan reads)."""
    return {"date": "20250414-141621", "backend": "vllm", "model_id": "deepseek-ai/DeepSeek-V2.5",
            "tokenizer_id": "deepseek-ai/DeepSeek-V2.5", "num_prompts": 200, "request_rate": rate, "burstiness": 1.0,
            "max_concurrency": None, "duration": 60.0, "completed": 200, "total_input_tokens": 12000,
            "total_output_tokens": 24000, "request_throughput": rate, "output_throughput": 120.0 * rate,
            "mean_ttft_ms": 150.0 * rate, "p99_ttft_ms": 300.0 * rate, "mean_tpot_ms": 18.0,
            "p99_tpot_ms": 22.0, "mean_itl_ms": 18.0, "p99_itl_ms": 30.0, "mean_e2el_ms": 2500.0,
            "p99_e2el_ms": 4000.0}


def config_named(folder: Path) -> str:
    """19: a DeepSeek-V2.5 plan declared by its config.json, named by its Hugging Face id, importing its
    own vLLM results: the plan's own evidence, not another model's (nor 'transferred')."""
    (folder / "plans" / "runs").mkdir(parents=True)
    (folder / "plans" / "deepseek-v2.5-config.json").write_text(json.dumps(DEEPSEEK_V25))
    for rate in (1, 2, 4):
        (folder / "plans" / "runs" / f"qps_{rate}.json").write_text(json.dumps(_vllm_result(rate)))
    doc = plan(gpu="h200", model={"config": "deepseek-v2.5-config.json", "name": "deepseek-ai/DeepSeek-V2.5"})
    doc["inputs"] = {"peak_arrival_rate": "20 req/s", "peak_to_average_ratio": 3.0, "parameter_count": 235_741_434_880,
                     "gpus_per_replica": 8, "ttft_p99_slo": "1 s", "tpot_p99_slo": "25 ms", "e2e_p99_slo": "20 s"}
    doc["tables"]["load_sweep"] = {"source": "vllm bench serve", "import": "runs/qps_*.json"}
    write_plan(folder, doc)
    done = capplan(folder, "build")
    expect(done.returncode == 0, done, "the plan naming its config.json's model does not build")
    record = (folder / "out" / "p.md").read_text(encoding="utf-8")
    expect("deepseek-ai/DeepSeek-V2.5 (`deepseek-v2.5-config.json`)" in record, None,
           "the record does not name the model by its Hugging Face id")
    expect("Transferred evidence" not in record, None, "the record reports the model's own benchmark as transferred")
    return "builds; the record names deepseek-ai/DeepSeek-V2.5 and takes its runs as the plan's own evidence"


CASES = [
    (13, "control characters reach the terminal", terminal),
    (14, "a 1 MiB title: in a workbook cell", long_title),
    (19, "a model declared from its config.json cannot be named", config_named),
]
