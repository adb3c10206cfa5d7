"""Estimate files: a performance model's predictions, imported like a sweep and tagged as estimates.

A GPU-free simulator (NVIDIA's aiconfigurator) predicts a configuration's
throughput and latencies in seconds to minutes of CPU and hundreds of MB, far
too heavy for every build. So ``capplan estimate`` runs it once per
configuration and writes its predictions to ``<plan>-<gpu>-tp<N>.estimate.yaml``
beside the plan; a plan imports that file under ``load_sweep: import:`` as it
would a benchmark's, and the build stays fast, deterministic and free of the
tool. Its SHA-256 reaches the record and the manifest like any import's.

The file (:func:`dump` writes it, :func:`parse` reads it) is a YAML mapping:
``capplan_estimate: 1`` (the format's version), a header naming what was
predicted — ``tool``, ``tool_version``, ``backend``, ``database_version``,
``database_mode``, ``system`` (the tool's name for the GPU), ``gpu`` and
``model`` (capplan catalog ids), ``tool_model``, ``tensor_parallel_size``,
``pipeline_parallel_size``, ``weight_dtype``, ``kv_cache_dtype``, ``isl``,
``osl``, ``workload`` (how the plan's class mix became one ISL/OSL),
``call`` (the tool's API call), ``latencies`` (what the tool's latencies
are) and optionally ``stopped`` (why the batch sweep ended) — and ``points``,
one per batch size the tool was asked about (keys carry their units):
``concurrency``, ``request_rate_req_s`` (the completed requests per second
the tool predicts a replica sustains at that concurrency), ``output_tok_s_per_replica``,
``output_tok_s_per_gpu``, ``ttft_ms``, ``tpot_ms``, ``e2e_s``.

The tool predicts one latency per metric for a steady batch of uniform
requests, not a distribution: on import its TTFT fills every TTFT SLO column
(``ttft_p95``, ``ttft_p99`` …), its TPOT every TPOT and ITL column, its
request latency every E2E column, each marked in the row's method as a
prediction standing in for the percentile, never as the percentile itself.
The points are no runs: no request was sent, so completed, sent and achieved
rate stay 0 ("not recorded"). A bad file is refused with the key and what is
wrong (the importer adds the file).
"""

from __future__ import annotations

import json
import math
from typing import Any

from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.sweeps.fields import finite, short, whole
from capplan.loading.sweeps.points import SweepPoint
from capplan.names import nearest

MARK = "capplan_estimate"      # the key that makes a YAML file an estimate file; its value is the format version
VERSION = 1
FORMAT = "capplan estimate"    # SweepFile.format of an imported estimate file
TEXT = ("tool", "tool_version", "backend", "database_version", "database_mode", "system", "gpu", "model",
        "tool_model", "weight_dtype", "kv_cache_dtype", "workload", "call", "latencies")
COUNTS = ("tensor_parallel_size", "pipeline_parallel_size", "isl", "osl")
OPTIONAL = ("stopped",)
HEADER = (MARK, *TEXT[:9], *COUNTS[:2], *TEXT[9:11], *COUNTS[2:], *TEXT[11:], *OPTIONAL)
POINT = ("concurrency", "request_rate_req_s", "output_tok_s_per_replica", "output_tok_s_per_gpu",
         "ttft_ms", "tpot_ms", "e2e_s")
_SECONDS = {"ttft": ("ttft_ms", 1e-3), "tpot": ("tpot_ms", 1e-3), "itl": ("tpot_ms", 1e-3), "e2e": ("e2e_s", 1.0)}
_PER_SECOND = {"ms": 1e3, "s": 1.0}


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and MARK in doc


def header(doc: dict) -> dict:
    """The checked header of an estimate file (every key but ``points``)."""
    if doc.get(MARK) != VERSION:
        raise CapplanError(f"expected {MARK}: {VERSION} (the estimate format this capplan reads), got "
                           f"{json.dumps(doc.get(MARK))}", key=MARK)
    for key in doc:
        if key not in HEADER and key != "points":
            raise CapplanError(f"unknown key{nearest(str(key), HEADER)}; an estimate file holds "
                               f"{', '.join(HEADER)} and points", key=str(key))
    out = {}
    for key in (*TEXT, *OPTIONAL):
        value = doc.get(key)
        if value is None and key in OPTIONAL:
            continue
        if not isinstance(value, str) or not value.strip():
            raise CapplanError(f"expected text, got {json.dumps(value)}" if key in doc else "missing", key=key)
        out[key] = value.strip()
    for key in COUNTS:
        if key not in doc:
            raise CapplanError("missing", key=key)
        out[key] = whole(doc[key], key, at_least=1)
    return out


def parse(doc: dict, rel: str, slos) -> list[SweepPoint]:
    """The points of an estimate file as sweep points in capplan's units, each SLO column
    filled with the tool's prediction of its metric (see the module's docstring)."""
    head = header(doc)
    points = doc.get("points")
    if not isinstance(points, list) or not points:
        raise CapplanError("expected a list of predicted points (concurrency, request_rate_req_s, ...)",
                           key="points")
    config = (("model_id", json.dumps(head["model"])), ("tensor_parallel_size", json.dumps(head["tensor_parallel_size"])),
              ("pipeline_parallel_size", json.dumps(head["pipeline_parallel_size"])), ("gpu", json.dumps(head["gpu"])),
              ("weight_dtype", json.dumps(head["weight_dtype"])), ("kv_cache_dtype", json.dumps(head["kv_cache_dtype"])),
              ("estimated_by", json.dumps(f"{head['tool']} {head['tool_version']}")))
    method = _method(head, slos)
    strategy = (f"predicted by {head['tool']} at fixed concurrency (a steady batch of uniform "
                f"{head['isl']}/{head['osl']}-token requests), not offered load")
    out = []
    for i, raw in enumerate(points):
        values = _point(raw, f"points[{i}]")
        latency = {}
        for slo in slos:                       # every metric the model knows: TTFT, TPOT, ITL, E2E
            key, seconds = _SECONDS[slo.metric]
            latency[slo.column] = values[key] * seconds * _PER_SECOND[slo.unit]
        out.append(SweepPoint(arrival_rate=values["request_rate_req_s"], latency=latency,
                              output_throughput=values["output_tok_s_per_replica"], completed=0, failed=0, sent=0,
                              achieved_rate=0.0, goodput=None, file=rel, methods=(method,), config=config,
                              strategy=strategy, tokens=(float(head["isl"]), float(head["osl"])),
                              sources={slo.column: "estimated" for slo in slos}))
    return out


def _point(raw: Any, where: str) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise CapplanError(f"expected a mapping of {', '.join(POINT)}", key=where)
    for key in raw:
        if key not in POINT:
            raise CapplanError(f"unknown key{nearest(str(key), POINT)}; a point holds {', '.join(POINT)}",
                               key=f"{where}.{key}")
    values = {}
    for key in POINT:
        if key not in raw:
            raise CapplanError("missing", key=f"{where}.{key}")
        values[key] = finite(raw[key], f"{where}.{key}")
    for key in ("concurrency", "request_rate_req_s", "ttft_ms", "tpot_ms", "e2e_s"):
        if values[key] <= 0:
            raise CapplanError(f"must be positive, got {short(values[key])}", key=f"{where}.{key}")
    whole(raw["concurrency"], f"{where}.concurrency")
    return values


def _method(head: dict, slos) -> str:
    filled = "; ".join(f"{slo.column} = its {'TPOT' if slo.metric == 'itl' else slo.label}" for slo in slos)
    stopped = f"; the tool's batch sweep stopped at {head['stopped']}" if "stopped" in head else ""
    return (f"estimated, not measured: {head['tool']} {head['tool_version']} ({head['backend']} "
            f"{head['database_version']} database, {head['database_mode']}; model {head['tool_model']}, system "
            f"{head['system']}) predicted each row at one concurrency for {head['isl']} prompt and {head['osl']} "
            f"output tokens ({head['workload']}); the row's rate is its predicted completed requests per second; "
            f"{filled}: {head['latencies']}{stopped}")


def release(doc: dict) -> str:
    """'aiconfigurator 0.12.0, vllm 0.24.0 database (SILICON)': the tool and database an estimate file names."""
    head = header(doc)
    return (f"{head['tool']} {head['tool_version']}, {head['backend']} {head['database_version']} database "
            f"({head['database_mode']})")


def tool_band(text: str) -> float | None:
    """The band of a λ* read from an estimate file whose :func:`release` is ``text``: the tool's error
    measured on the serving engine whose database it ran (``tool_band`` in model/catalog/engines.yaml),
    None where capplan has not measured that tool on that engine."""
    tool, _, rest = text.partition(" ")
    found = catalog.resolve("engine", rest.partition(", ")[2].partition(" ")[0])
    band = catalog.lookup("engine", found).tool_bands.get(tool) if found else None
    return float(band["value"]) if band else None


def evidence(points) -> tuple[str, ...]:
    """What an imported estimate file predicted, for the record's evidence: never 'measured'."""
    configs = list(dict.fromkeys(tuple(json.loads(v) for _, v in p.config) for p in points))
    return tuple(f"estimated, not measured: {by} predicted {model} on {gpu}, tensor parallel {tp} x pipeline "
                 f"parallel {pp}, weights {weights}, KV cache {kv}" + _tokens(points)
                 for model, tp, pp, gpu, weights, kv, by in configs)


def _tokens(points) -> str:
    tokens = sorted({p.tokens for p in points if p.tokens})
    return "".join(f", {i:.0f} prompt and {o:.0f} output tokens per request" for i, o in tokens)


def gpu_mismatch(files, gpu_id: str) -> str:
    """'' when every estimate file among ``files`` predicted the plan's GPU, else what it predicted."""
    found = sorted({json.loads(dict(p.config)["gpu"]) for f in files if f.format == FORMAT for p in f.points})
    wrong = [g for g in found if g != gpu_id]
    return f"the estimate predicted GPU {', '.join(wrong)}, not the plan's {gpu_id}" if wrong else ""


def dump(head: dict, points: list[dict]) -> str:
    """An estimate file's text: the header in :data:`HEADER` order, one point per line, numbers
    to 6 significant digits, so that the same predictions always give the same bytes."""
    lines = ["# Predictions of a performance model, not measurements: written by `capplan estimate`.",
             "# Import it like a sweep (tables: load_sweep: import: [this file]); its rows are tagged as estimates."]
    for key in HEADER:
        if key == MARK:
            lines.append(f"{MARK}: {VERSION}")
        elif key in head:
            lines.append(f"{key}: {_scalar(head[key])}")
    lines.append("points:")
    for point in points:
        lines.append("  - {" + ", ".join(f"{k}: {_scalar(point[k])}" for k in POINT) + "}")
    return "\n".join(lines) + "\n"


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not an estimate value: {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value!r}")
        rounded = float(f"{value:.6g}")
        return str(int(rounded)) if rounded.is_integer() and abs(rounded) < 1e15 else repr(rounded)
    return json.dumps(str(value), ensure_ascii=False)
