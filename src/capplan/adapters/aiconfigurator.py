"""NVIDIA aiconfigurator (and its successor aisimulate) as an estimator of one configuration.

aiconfigurator 0.12 predicts, from a per-operation database of silicon
measurements bundled in ``aiconfigurator-core`` (systems h100_sxm, h200_sxm,
b200_sxm …; backends vllm 0.24.0, trtllm 1.3.0rc20, sglang 0.5.14 by default),
the TTFT, TPOT, request latency and throughput of an aggregated (in-flight
batching) replica at a given batch size, for a uniform ISL/OSL. Its Python
call ``aiconfigurator.cli.api.cli_estimate`` is run by
``aiconfigurator_worker.py`` in the interpreter that has the tool (``python``:
capplan's own by default; isolated, ``-I``, so that this module, beside the
worker, is not what ``import aiconfigurator`` finds), once per configuration, over the batch sizes
:data:`BATCH_SIZES` until the KV cache or memory runs out. The first call
loads the database (about 5 CPU-s, 220 MB); each further batch size costs
about 1 CPU-s.

Names differ between capplan's catalog and the tool's: :data:`SYSTEMS` maps
GPU ids to its systems, :data:`MODELS` model ids to the model configurations
it bundles (a model it lacks but whose architecture is one it has is mapped
to that one, and the file says so), :data:`WEIGHTS` and :data:`KV_CACHE` the
formats to its quantisation modes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from capplan.errors import CapplanError

WORKER = Path(__file__).with_name("aiconfigurator_worker.py")
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
BACKENDS = ("vllm", "trtllm", "sglang")
DATABASE_MODE = "SILICON"        # silicon-collected data only: the tool's reproducible mode
SYSTEMS = {"h100-sxm5-80gb": "h100_sxm", "h100-pcie-80gb": "h100_pcie", "h200-sxm-141gb": "h200_sxm",
           "b200-hgx": "b200_sxm", "a100-sxm4-80gb": "a100_sxm", "l40s": "l40s", "l4": "l4", "gb200": "gb200"}
MODELS = {"llama-3.1-8b": ("meta-llama/Meta-Llama-3.1-8B", ""),
          "llama-3.1-70b": ("meta-llama/Meta-Llama-3.1-70B", ""),
          "llama-3.1-405b": ("meta-llama/Meta-Llama-3.1-405B", ""),
          "llama-2-70b": ("meta-llama/Meta-Llama-3.1-70B", "the tool bundles no Llama-2-70B; Llama-3.1-70B has its "
                          "layers (80 layers, 8 KV heads of 128, hidden 8192, MLP 28672) but a vocabulary of 128256, "
                          "not 32000"),
          "llama-3.3-70b": ("meta-llama/Meta-Llama-3.1-70B", "the tool bundles no Llama-3.3-70B; Llama-3.1-70B has "
                            "its architecture (80 layers, 8 KV heads of 128, hidden 8192, MLP 28672, vocab 128256)"),
          "qwen3-8b": ("Qwen/Qwen3-8B", ""), "qwen3-32b": ("Qwen/Qwen3-32B", ""),
          "qwen3-30b-a3b": ("Qwen/Qwen3-30B-A3B", ""), "qwen3-235b-a22b": ("Qwen/Qwen3-235B-A22B", "")}
WEIGHTS = {"bf16": "bfloat16", "fp8": "fp8", "nvfp4": "nvfp4"}
KV_CACHE = {"bf16": "bfloat16", "fp8": "fp8"}
LATENCIES = ("the tool's predicted TTFT, TPOT and request latency of a steady in-flight batch of uniform "
             "requests at that concurrency: one value each, not a percentile of any distribution")
INSTALL = ("install capplan[estimate] (pip install 'capplan[estimate]': aiconfigurator 0.12.0 with its "
           "per-operation database, about 850 MB with pandas, pyarrow, scipy and matplotlib) or point "
           "--tool-python at an interpreter that has it; aisimulate, its successor, is published only on "
           "NVIDIA's index (pip install --extra-index-url https://pypi.nvidia.com aisimulate)")


def system(gpu_id: str) -> str:
    if gpu_id not in SYSTEMS:
        raise CapplanError(f"aiconfigurator has no system for GPU {gpu_id}; it models "
                           f"{', '.join(sorted(SYSTEMS))}", key="gpu")
    return SYSTEMS[gpu_id]


def model(model_id: str, hf_id: str | None, given: str | None = None) -> tuple[str, str]:
    """(the model path the tool is given, a note when it stands for another model)."""
    if given:
        return given, f"given with --tool-model for {model_id}"
    if model_id in MODELS:
        return MODELS[model_id]
    if hf_id:
        return hf_id, "the catalog's Hugging Face id (the tool fetches its config.json unless it bundles it)"
    raise CapplanError(f"no aiconfigurator model for {model_id}; give one with --tool-model", key="model")


def moe(entry, tp: int) -> dict[str, int]:
    """The expert-parallel arguments the tool requires for a MoE model (one whose catalog entry has
    ``experts_per_token``), none for a dense one: capplan has no expert-parallel input, so the experts
    are split like every other weight, by tensor parallelism (``moe_tp_size`` = TP, ``moe_ep_size`` = 1)."""
    return {"moe_tp": tp, "moe_ep": 1} if "experts_per_token" in entry.values else {}


# the tool's latency (ms) an SLO metric is judged by: the estimate file's columns (loading.sweeps.estimate)
SLO_FIELDS = {"ttft": ("ttft", "TTFT"), "tpot": ("tpot", "TPOT"), "itl": ("tpot", "TPOT"),
              "e2e": ("request_latency", "request latency")}


def pick(points: list[dict], limits: dict[str, tuple[str, float]], shown: str) -> dict:
    """The tool's pick: of the points it predicted, the highest rate whose latencies meet ``limits``
    (SLO input name -> (metric, ms)). The tool returns a point at any batch size whether it meets an SLO
    or not, so a configuration none of whose points meets them is refused here, not used: its best rate
    would be one the SLO forbids. The error's key is the first SLO missed."""
    meeting = [p for p in points if all(p[SLO_FIELDS[m][0]] <= ms for m, ms in limits.values())]
    if meeting:
        return max(meeting, key=lambda p: p["seq/s"])
    first = points[0]
    missed = {name: f"{SLO_FIELDS[m][1]} {first[SLO_FIELDS[m][0]]:.4g} ms over its {ms:g} ms SLO"
              for name, (m, ms) in limits.items() if first[SLO_FIELDS[m][0]] > ms}
    raise CapplanError(f"the tool's prediction for {shown} misses the SLO at every batch size it predicted, "
                       f"from batch size {first['batch_size']}: {'; '.join(missed.values())}",
                       key=next(iter(missed)))


def quant(table: dict, name: str, what: str) -> str:
    if name not in table:
        raise CapplanError(f"aiconfigurator has no {what} mode for {name}; known: {', '.join(table)}", key=what)
    return table[name]


def run(request: dict, tool: str, python: str | None = None, timeout: float = 1800) -> dict:
    """The worker's answer for one configuration: ``versions``, ``points`` (one per batch size
    the replica holds) and ``stopped`` (why the batch sweep ended early, or '')."""
    interpreter = python or sys.executable
    try:
        done = subprocess.run([interpreter, "-I", str(WORKER)], input=json.dumps({**request, "distribution": tool}),
                              capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise CapplanError(f"{tool} cannot run: no interpreter {interpreter}; {INSTALL}") from None
    except subprocess.TimeoutExpired:
        raise CapplanError(f"{tool} did not answer within {timeout:.0f} s for {_shown(request)}") from None
    if done.returncode == 4:
        raise CapplanError(f"{tool} is not installed for {interpreter}: {INSTALL}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise CapplanError(f"{tool} refused {_shown(request)}: {last}")
    return json.loads(done.stdout)


def _shown(request: dict) -> str:
    return (f"{request['model_path']} on {request['system']} ({request['backend']}, TP {request['tp']}, "
            f"ISL {request['isl']}, OSL {request['osl']})")


def call(request: dict) -> str:
    """The tool's API call an estimate file records, with the batch size left as B."""
    args = ", ".join(f"{name}={request[key]!r}" for name, key in (
        ("backend_name", "backend"), ("backend_version", "backend_version"), ("database_mode", "database_mode"),
        ("isl", "isl"), ("osl", "osl"), ("tp_size", "tp"), ("pp_size", "pp"),
        *((("moe_tp_size", "moe_tp"), ("moe_ep_size", "moe_ep")) if "moe_tp" in request else ()),
        ("gemm_quant_mode", "gemm_quant_mode"), ("kvcache_quant_mode", "kvcache_quant_mode")))
    return (f"aiconfigurator.cli.api.cli_estimate({request['model_path']!r}, {request['system']!r}, mode='agg', "
            f"{args}, batch_size=B) for B in {', '.join(map(str, request['batch_sizes']))}")
