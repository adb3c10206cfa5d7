"""A performance model's prediction of each calibration row, made the way ``capplan estimate`` makes it.

Each mapped row (``calibration/rows.py``) becomes the adapter's request (``capplan.adapters.aiconfigurator``):
the row's GPU as the tool's system, its model, TP, weight format and KV cache (BF16 unless the row
states FP8, as capplan's own plan assumes), its mean lengths rounded, the engine's database
(TensorRT-LLM rows: ``trtllm``; vLLM rows: ``vllm``), every batch size of :data:`BATCH_SIZES
<capplan.adapters.aiconfigurator.BATCH_SIZES>`. What the tool predicts is then read like the
built-in estimate (``calibration/predict.py``):

- rate rows: the tool's pick (:func:`capplan.adapters.aiconfigurator.pick`), the highest predicted
  req/s whose TTFT and TPOT meet the row's SLOs, times the replicas; a row none of whose points
  meets them is refused, with the adapter's message, and not compared;
- open-loop rows: the predicted TPOT at the achieved rate per replica, interpolated linearly in the
  rate between the two batch sizes around it (the batch-1 TPOT below the first; above the last
  predicted rate the step is unbounded, as capplan's is past saturation).

A row whose GPU the tool has no system for (AMD's) is skipped with the adapter's reason. The
band of each result is set afterwards (:func:`banded`), as ``calibration/fit.py`` sets the built-in
estimate's from its held-out predictions: the tool is not fitted, so every row is held out.
"""

from __future__ import annotations

import math

from calibration.fit import _with_band, engine_bands
from calibration.predict import Result
from calibration.rows import RATE_MODES, SLOS, Mapped

from capplan.adapters import aiconfigurator as adapter
from capplan.errors import CapplanError
from capplan.language import units
from capplan.loading import catalog

BACKENDS = {"trt-llm": "trtllm", "vllm": "vllm", "sglang": "sglang"}
# a GPU the tool has no system of its own for, and the system that stands in for it (said per row)
STAND_INS = {"a100-sxm4-40gb": ("a100_sxm", "the tool has no A100 40 GB system: its a100_sxm (80 GiB, "
                                "2.039 TB/s, against the 40 GB part's 1.555 TB/s) stands in")}


def request(m: Mapped) -> tuple[dict, list[str]]:
    """The adapter's request for ``m`` and what it assumes beyond the row's own plan."""
    notes = []
    if m.gpu in STAND_INS:
        system, why = STAND_INS[m.gpu]
        notes.append(why)
    else:
        system = adapter.system(m.gpu)
    entry = catalog.lookup("model", m.model)
    path, note = adapter.model(m.model, entry.hf_id)
    if note:
        notes.append(note)
    return ({"model_path": path, "system": system, "backend": BACKENDS[m.row.engine], "backend_version": None,
             "database_mode": adapter.DATABASE_MODE, "isl": round(m.row.isl), "osl": round(m.row.osl),
             "tp": m.tp, "pp": 1, **adapter.moe(entry, m.tp),
             "gemm_quant_mode": adapter.quant(adapter.WEIGHTS, m.format, "weights"),
             "kvcache_quant_mode": adapter.KV_CACHE["fp8" if m.kv_bytes == 1 else "bf16"],
             "batch_sizes": list(adapter.BATCH_SIZES)}, notes)


def limits_ms(mode: str) -> dict[str, tuple[str, float]]:
    """The row's TTFT and TPOT SLOs (rows.SLOS) as the adapter's pick takes them: name -> (metric, ms)."""
    return {name: (name.split("_")[0], units.to_display(units.parse_value(SLOS[mode][name], "s"), "ms"))
            for name in ("ttft_p99_slo", "tpot_p99_slo")}


def predict(m: Mapped, python: str | None) -> tuple[Result | None, str]:
    """The tool's prediction of ``m`` (band 0 until :func:`banded`) and the assumptions it makes,
    or None and why the row was not predicted."""
    try:
        req, notes = request(m)
        answer = adapter.run(req, "aiconfigurator", python)
        points = answer["points"]
        if not points:
            return None, f"the tool predicted no point: {answer['stopped']}"
        row = m.row
        if row.mode in RATE_MODES:
            chosen = adapter.pick(points, limits_ms(row.mode), f"row {row.number} ({row.mode})")
            rate = chosen["seq/s"] * m.replicas
            limit = f"batch size {chosen['batch_size']}"
            return Result(m, row.req_per_s, rate, rate, rate, limit, {}), "; ".join(notes)
        rate = row.req_per_s / m.replicas
        step = tpot_at(points, rate)
        return Result(m, row.tpot_p50_ms, step, step, step, f"TPOT at {rate:.3g} req/s", {}), "; ".join(notes)
    except CapplanError as err:
        return None, err.message


def tpot_at(points: list[dict], rate: float) -> float:
    """The tool's TPOT (ms) at ``rate`` req/s per replica: linear in the rate between the batch sizes
    around it, the first point's below them, unbounded past the last."""
    if rate <= points[0]["seq/s"]:
        return points[0]["tpot"]
    for a, b in zip(points, points[1:]):
        if rate <= b["seq/s"]:
            share = (rate - a["seq/s"]) / (b["seq/s"] - a["seq/s"])
            return a["tpot"] + share * (b["tpot"] - a["tpot"])
    return math.inf


def banded(results: list[Result]) -> tuple[list[Result], dict[str, tuple[float, str]]]:
    """Each result with its engine's band on both sides, and the bands: the smallest holding 75 % of
    the engine's rows, or of all engines' pooled where it has fewer than ten (``fit.engine_bands``,
    the rule the built-in estimate's band follows)."""
    per = engine_bands(results)
    return [_with_band(r, per[r.mapped.row.engine][0]) for r in results], per
