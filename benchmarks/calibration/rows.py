"""The calibration set's rows as the plans capplan would write for them.

``../shared/calibration/measurements.csv`` holds published measurements (MLPerf, TensorRT-LLM's
performance tables, ``vllm bench serve`` files), each with its source; ``published.csv`` beside
this module adds the project's own finds in the same columns (MoE above all). A row capplan can state
becomes one plan: the catalog GPU and model (the row's weight format where the catalog has it,
else the format's bytes per parameter as an input, said so), ``gpus_per_replica`` = the row's TP,
one traffic class of the row's mean lengths, the SLOs of the row's mode, a ``candidates:``
section of just that configuration (so the model's estimate group is evaluated) and a load sweep
the plan needs but nobody compares. A row it cannot state is skipped with the reason.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from capplan.loading import catalog

# the groups of the set's README and of published.csv, by the repository (or the site, for a URL)
# that publishes them
SOURCES = {"mlcommons/inference_results_v4.1": "mlperf-v4.1",
           "NVIDIA/TensorRT-LLM": "trtllm-perf",
           "surajssd/llm-k8s": "vllm-llm-k8s",
           "ntuhpc/mlperf_inference_results_v5.0": "mlperf-v5.0",
           "https://buildkite.com/vllm/performance-benchmark/": "vllm-nightly"}
PUBLISHED = Path(__file__).resolve().parent / "published.csv"
# bytes per parameter of a format the catalog lacks for a model (models.yaml's header: FP8 1 B,
# NVFP4 4-bit values and one 8-bit scale per 16 = 0.5625 B; unconverted layers left out)
FORMAT_BYTES = {"bf16": 2.0, "fp8": 1.0, "nvfp4": 0.5625}
FORMAT_BITS = {"bf16": 16, "fp8": 8, "nvfp4": 4}      # the width its products run in
# precision a row leaves blank, as the set's README and the row's notes suggest
ASSUMED_FORMAT = {("mlperf-v4.1", "b200-hgx"): ("nvfp4", "NVIDIA's B200 preview was publicised as FP4 (row notes)"),
                  ("mlperf-v4.1", None): ("fp8", "NVIDIA's Hopper llama2 submissions are usually FP8 (README)")}
MLPERF_SERVER = {"ttft_p99_slo": "2 s", "tpot_p99_slo": "200 ms", "e2e_p99_slo": "1 h"}
# no latency limit: loose SLOs, so the KV pool or the compute the step takes limits the estimate
LOOSE = {"ttft_p99_slo": "1 h", "tpot_p99_slo": "10 s", "e2e_p99_slo": "1 h"}
# TP the submitter's own code states for a result that does not: (start of the row's source path, TP,
# where it is stated). NVIDIA's MLPerf configs name the system class a result ran (H200_SXM_141GBx8
# inherits tensor_parallelism = 1 from H200_SXM_141GBx1; the H100x8 llama2-70b system is
# H100_SXM_80GB_TP2x4), AMD's harness runs one vLLM engine per tensor_parallel_size GPUs, 1 unless set
_V41 = "mlcommons/inference_results_v4.1@198fc46799b3328b36ee4bcbdebfa2db5a8e6183:closed/NVIDIA/configs/"
STATED_TP = (
    ("closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b", 1, _V41 + "llama2-70b/{Server,Offline}/__init__.py (H200_SXM_141GBx8)"),
    ("closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b", 2,
     _V41 + "llama2-70b/{Server,Offline}/__init__.py (H100_SXM_80GB_TP2x4)"),
    ("closed/NVIDIA/results/H200-SXM-141GBx8_TRT/mixtral-8x7b", 1, _V41 + "mixtral-8x7b/{Server,Offline}/__init__.py (H200_SXM_141GBx8)"),
    ("closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/mixtral-8x7b", 1,
     _V41 + "mixtral-8x7b/{Server,Offline}/__init__.py (H100_SXM_80GBx8)"),
    ("closed/AMD/results/8xMI300X", 1, "mlcommons/inference_results_v4.1@198fc46799b3328b36ee4bcbdebfa2db5a8e6183:"
     "closed/AMD/code/llama2-70b-99.9/test_VllmFp8/test_VllmFp8_{Server,Offline}_perf.sh (TP=1, DP=8)"),
    ("closed/AMD/results/8xMI325X", 1, "ntuhpc/mlperf_inference_results_v5.0@cf354115915ea369f05db424b051da8c5bf957dc:"
     "closed/AMD/code/llama2-70b-99.9/harness_llm/backends/vllm/sut_offline.py (tensor_parallel_size 1 unless set, "
     "data_parallel_size 8)"),
)
# where nothing states the TP: the smallest TP whose replica's weights take at most this share of its
# memory, leaving the rest for the KV cache; the share the stated configurations above sit on either
# side of (H100 80 GB: Llama-2-70B FP8 takes 0.81 of one GPU, run at TP2; Mixtral-8x7B FP8 0.55,
# run at TP1; H200 and MI300X hold Llama-2-70B FP8 at 0.46 and 0.36, run at TP1)
WEIGHT_SHARE = 0.6
SLOS = {"mlperf-server": MLPERF_SERVER, "offline": LOOSE, "open-loop rate": LOOSE}
RATE_MODES = ("mlperf-server", "offline")


@dataclass
class Row:
    """One measurement as the CSV states it (lengths and rates as numbers; blank: None)."""

    number: int                    # 1-based, in file order
    source: str
    group: str                     # short name of the source (SOURCES)
    model: str
    gpu: str
    n_gpus: int
    tp: int | None
    precision: str
    engine: str                    # trt-llm or vllm
    isl: float
    osl: float
    mode: str
    req_per_s: float | None        # measured (offline TensorRT-LLM rows: output tok/s over osl)
    tpot_p50_ms: float | None
    derived_rate: bool = False     # req/s computed from output tok/s


@dataclass
class Mapped:
    """A row stated as capplan would plan it, with every assumption the statement makes."""

    row: Row
    gpu: str                       # catalog id
    model: str                     # catalog id
    tp: int
    format: str                    # bf16, fp8, nvfp4
    in_catalog: bool               # the model's catalog lists the format
    kv_bytes: float | None         # 1 for a stated FP8 KV cache
    assumptions: list[str] = field(default_factory=list)

    @property
    def replicas(self) -> float:
        return self.row.n_gpus / self.tp


def number(text: str) -> float | None:
    """The leading number of a cell (``222.33 (mean …)`` -> 222.33; ``inf`` -> inf); None when blank."""
    found = re.match(r"\s*(inf|[0-9]+(?:\.[0-9]*)?)", text or "")
    return None if found is None else float(found.group(1))


def group(source: str) -> str:
    """The short name of a row's source: its group (:data:`SOURCES`, by repository or by a URL's
    start), else its repository's name."""
    repo = source.partition("@")[0]
    site = next((name for start, name in SOURCES.items() if "://" in start and source.startswith(start)), None)
    return site or SOURCES.get(repo, repo.rpartition("/")[2])


def read(path: Path, first: int = 1) -> list[Row]:
    """Every row of the CSV, numbered from ``first``."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [_row(k, cells) for k, cells in enumerate(csv.DictReader(handle), first)]


def read_all(paths: list[Path]) -> list[Row]:
    """Every row of the CSVs in order, numbered on from one file to the next (so the shared set's
    row numbers stay those of its own file)."""
    out: list[Row] = []
    for path in paths:
        out += read(path, len(out) + 1)
    return out


def _row(k: int, cells: dict[str, str]) -> Row:
    rate, osl = number(cells["req_per_s"]), number(cells["osl"])
    tokens = number(cells["output_tok_per_s"])
    derived = rate is None and tokens is not None and osl
    tp = number(cells["tp"])
    return Row(number=k, source=cells["source"], group=group(cells["source"]), model=cells["model"],
               gpu=cells["gpu"], n_gpus=int(number(cells["n_gpus"])), tp=None if tp is None else int(tp),
               precision=cells["precision"], engine=cells["engine"].split()[0].lower(),
               isl=number(cells["isl"]), osl=osl, mode=cells["mode"],
               req_per_s=tokens / osl if derived else rate, tpot_p50_ms=number(cells["tpot_p50_ms"]),
               derived_rate=bool(derived))


def catalog_id(kind: str, name: str) -> str | None:
    """The catalog id a published name means: the name, else the longest leading part of it the
    catalog knows (``B200-SXM-180GB`` -> b200-hgx, ``Llama-3.1-8B-Instruct-FP8`` -> llama-3.1-8b,
    ``Llama-2-70b-chat-hf`` -> llama-2-70b; a part must be a whole name the catalog lists, so
    ``Llama`` alone means none); None when no part is known."""
    words = catalog.normal(name.split("(")[0]).split("-")
    for end in range(len(words), 0, -1):
        found = catalog.resolve(kind, "-".join(words[:end]))
        if found is not None:
            return found
    return None


def weight_format(row: Row, gpu: str) -> tuple[str, str | None]:
    """The row's weight format and, when the row does not state it, the assumption made."""
    text = row.precision.lower()
    for fmt, marks in (("nvfp4", ("fp4",)), ("fp8", ("fp8",)), ("bf16", ("bf16", "bfloat16"))):
        if any(m in text for m in marks):
            return fmt, None
    fmt, why = ASSUMED_FORMAT.get((row.group, gpu)) or ASSUMED_FORMAT.get((row.group, None)) or ("bf16", None)
    return fmt, f"precision not stated: {fmt} assumed ({why or 'capplan default'})"


def map_row(row: Row) -> Mapped | str:
    """The row as capplan would plan it, or why it cannot be stated (a string)."""
    gpu, model = catalog_id("gpu", row.gpu), catalog_id("model", row.model)
    if gpu is None:
        return f"GPU '{row.gpu}' is not in capplan's catalog"
    if model is None:
        return f"model '{row.model}' is not in capplan's catalog"
    if row.mode not in SLOS:
        return f"mode '{row.mode}' has no mapping to a plan"
    measured = row.tpot_p50_ms if row.mode == "open-loop rate" else row.req_per_s
    if measured is None:
        return "the row states no " + ("tpot_p50_ms" if row.mode == "open-loop rate" else "req_per_s or output tok/s")
    assumptions = []
    if catalog.normal(row.gpu.split("(")[0]) != catalog.normal(gpu):
        assumptions.append(f"GPU {row.gpu.split('(')[0].strip()} read as catalog {gpu}")
    fmt, assumed = weight_format(row, gpu)
    if assumed:
        assumptions.append(assumed)
    tp = row.tp
    if tp is None:
        tp, why = unstated_tp(row, gpu, model, fmt)
        assumptions.append(why)
    in_catalog = fmt in catalog.lookup("model", model).weights or (fmt == "bf16" and not
                                                                      catalog.lookup("model", model).weights)
    if not in_catalog:
        assumptions.append(f"{model} has no {fmt} format in the catalog: weight_bytes_per_param "
                           f"{FORMAT_BYTES[fmt]:g} B and tensor_format_bits {FORMAT_BITS[fmt]} given as inputs")
    kv = 1.0 if "fp8 kv" in row.precision.lower() else None
    if kv:
        assumptions.append("FP8 KV cache (stated): kv_bytes_per_element 1 B")
    if row.derived_rate:
        assumptions.append("req/s = output tok/s ÷ osl")
    return Mapped(row=row, gpu=gpu, model=model, tp=tp, format=fmt, in_catalog=in_catalog, kv_bytes=kv,
                  assumptions=assumptions)


def unstated_tp(row: Row, gpu: str, model: str, fmt: str) -> tuple[int, str]:
    """The TP of a row that does not state it, and where that comes from: the submitter's code
    (:data:`STATED_TP`), else the smallest power of two dividing the row's GPUs whose replica's
    weights take at most :data:`WEIGHT_SHARE` of its memory (submitters run as many replicas as
    the KV cache allows: tensor parallelism adds an all-reduce to every layer)."""
    path = row.source.partition(":")[2]
    for start, tp, where in STATED_TP:
        if path.startswith(start):
            return tp, f"TP not stated in the result: TP{tp} as the submitter's code states ({where})"
    entry = catalog.lookup("model", model)
    per_param = entry.weights.get(fmt, {}).get("value", f"{FORMAT_BYTES[fmt]} B")
    weights = entry.values["parameter_count"]["value"] * float(str(per_param).split()[0]) / 2 ** 30
    memory = float(str(catalog.lookup("gpu", gpu).values["gpu_memory_reported"]["value"]).split()[0])
    tp = 1
    while tp < row.n_gpus and weights > WEIGHT_SHARE * tp * memory:
        tp *= 2
    tp = tp if row.n_gpus % tp == 0 else row.n_gpus
    return tp, (f"TP not stated: TP{tp} assumed, the smallest whose weights ({weights:.0f} GiB) take at most "
                f"{WEIGHT_SHARE:.0%} of the replica's memory")


def plan(m: Mapped, constants: dict | None = None) -> dict:
    """The plan stating ``m``'s measured point, serving with the row's engine (whose constants capplan
    ships in model/catalog/engines.yaml): ``constants`` (input name -> value) set on it last."""
    row = m.row
    model = {"id": m.model, "weights": m.format} if m.in_catalog and catalog.lookup("model", m.model).weights \
        else m.model
    per_node = max(8, m.tp)
    inputs = {"gpus_per_replica": f"{m.tp} GPU",
              "peak_arrival_rate": f"{_rate(row):g} req/s",
              "peak_to_average_ratio": 1.0, **SLOS[row.mode]}
    if not m.in_catalog:
        inputs["weight_bytes_per_param"] = {"value": f"{FORMAT_BYTES[m.format]} B",
                                            "source": f"{m.format} (not a catalog format of {m.model})"}
        inputs["tensor_format_bits"] = {"value": f"{FORMAT_BITS[m.format]} bit",
                                        "source": f"{m.format} (not a catalog format of {m.model})"}
    if m.kv_bytes:
        inputs["kv_bytes_per_element"] = f"{m.kv_bytes:g} B"
    for name, value in (constants or {}).items():
        inputs[name] = {"value": value, "source": "bench_calibration.py --constants"}
    offer = {"name": "bench", "gpu": m.gpu, "gpus_per_node": per_node, "node_hourly_cost": "1 USD/h",
             "as_of": "2026-01-01", "source": "a dummy offer: the harness compares λ*, not prices"}
    return {
        "title": f"calibration row {row.number}: {row.model} on {row.gpu} x{row.n_gpus} ({row.mode})",
        "gpu": m.gpu, "model": model, "engine": row.engine, "inputs": inputs,
        "tables": {
            "classes": {"rows": [{"name": "bench", "weight": 1.0, "prompt_tokens": row.isl,
                                  "output_tokens": row.osl}]},
            "load_sweep": {"note": "a passing row the plan needs; not what the harness compares",
                           "rows": [{"arrival_rate": "0.01 req/s", "ttft_p99": "1 ms", "tpot_p99": "1 ms",
                                     "e2e_p99": "1 s"}]},
            "deployments": {"rows": [{"name": "bench", "gpus_per_node": per_node,
                                      "node_hourly_cost": "1 USD/h"}]}},
        "candidates": {"gpus": [m.gpu], "tp": [m.tp], "offers": [offer]},
    }


def _rate(row: Row) -> float:
    """A peak for the plan: the measured rate where it is finite, else 1 req/s (not compared)."""
    rate = row.req_per_s
    return rate if rate is not None and math.isfinite(rate) and rate > 0 else 1.0
