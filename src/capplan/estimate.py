"""``capplan estimate PLAN --with aiconfigurator``: a performance model's predictions as evidence files.

For each configuration (:func:`configurations`: the plan's own GPU and
parallelism, or those the command line gives), the chosen tool's adapter
(:mod:`capplan.adapters`) predicts a replica's throughput and latencies over
a range of batch sizes, and the predictions are written to
``<plan-dir>/estimates/<plan>-<gpu>-tp<N>.estimate.yaml`` in the format of
:mod:`capplan.loading.sweeps.estimate`, which a plan imports like a sweep.
The same tool, database and inputs write the same bytes (no date, numbers
to 6 digits), so a re-run shows in ``git diff`` only what changed.

The tool predicts for one prompt and one output length; the plan's class
mix is reduced to its weighted means (rounded to whole tokens), which the
file states, unless ``--isl``/``--osl`` are given.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

from capplan.adapters import TOOLS
from capplan.errors import CapplanError
from capplan.language import units
from capplan.loading import catalog
from capplan.loading.plan.candidates import ESTIMATE
from capplan.loading.sweeps import estimate as estimate_file
from capplan.loading.sweeps.evidence import mix_means


@dataclass(frozen=True)
class Config:
    """One deployment to predict: GPU (catalog id), GPUs per replica (tensor parallel), formats."""

    gpu: str
    tp: int
    weights: str
    kv_cache: str


@dataclass(frozen=True)
class Workload:
    isl: int
    osl: int
    text: str


def configurations(plan) -> list[Config]:
    """The configurations a plan asks to be estimated: its own (GPU, gpus_per_replica, weight
    format, KV cache format), then each distinct one of its ``candidates:`` (offers aside)."""
    own = Config(plan.gpu.id, round(plan.nominal.inputs["gpus_per_replica"].value), _weights(plan),
                 _kv_cache(plan))
    found = [own]
    for c in plan.candidates.candidates if plan.candidates else ():
        config = Config(c.gpu.id, c.tp, c.weights or own.weights,
                        own.kv_cache if c.kv_cache_dtype == "auto" else c.kv_cache_dtype)
        if config not in found:
            found.append(config)
    return found


def import_key(plan) -> str:
    """Where the plan imports an estimate file: its load sweep, or under ``sizing: estimate`` (no sweep:
    the plan's own λ* is the model's estimate) its candidates' evidence."""
    if plan.switches.get("sizing") == ESTIMATE:
        return "candidates: evidence:"
    return "tables: load_sweep: import:"


def _weights(plan) -> str:
    """The plan's weight format (bf16 for a model whose catalog entry lists none)."""
    return plan.model_entry.weight_format or "bf16"


def _kv_cache(plan) -> str:
    kv = plan.nominal.inputs["kv_bytes_per_element"]
    size = units.to_display(kv.value, "B")
    return {2.0: "bf16", 1.0: "fp8"}.get(size, f"{size:g} B")


def workload(plan, isl: int | None = None, osl: int | None = None) -> Workload:
    """One ISL/OSL for the tool: the class mix's weighted mean prompt and output tokens, or those given."""
    rows = plan.nominal.tables["classes"].rows
    means = mix_means(rows)
    given = [isl, osl]
    chosen = [g if g is not None else max(1, round(m)) for g, m in zip(given, means)]
    if given == [None, None]:
        text = (f"the plan's class mix ({len(rows)} class{'es' if len(rows) != 1 else ''}) reduced to its "
                f"weighted means, {means[0]:.1f} prompt and {means[1]:.1f} output tokens, rounded")
    else:
        text = (f"ISL/OSL given on the command line; the plan's class mix averages {means[0]:.1f} prompt and "
                f"{means[1]:.1f} output tokens")
    return Workload(chosen[0], chosen[1], text)


def chosen(plan, gpus: list[str] | None, tps: list[int] | None) -> list[Config]:
    """The plan's configurations, or the cross product of the GPUs and TPs the command line gives."""
    own = configurations(plan)
    if not gpus and not tps:
        return own
    ids = [catalog.lookup("gpu", g).id for g in gpus] if gpus else sorted({c.gpu for c in own})
    return [Config(g, t, own[0].weights, own[0].kv_cache) for g in ids for t in (tps or sorted({c.tp for c in own}))]


def run(plan, tool: str, *, configs: list[Config], load: Workload, backend: str, out_dir: Path,
        python: str | None = None, tool_model: str | None = None) -> list[Path]:
    """Predict each configuration with ``tool`` and write its estimate file; the files written
    and why each configuration the tool predicted nothing for was skipped (none are written when
    a call fails; with one configuration, predicting nothing is that failure)."""
    if tool not in TOOLS:
        raise CapplanError(f"unknown estimator '{tool}'; known: {', '.join(TOOLS)}")
    adapter = importlib.import_module(f"capplan.adapters.{TOOLS[tool]}")
    texts, skipped = {}, []
    for config in configs:
        try:
            texts[out_dir / f"{plan.name}-{config.gpu}-tp{config.tp}.estimate.yaml"] = document(
                plan, tool, adapter, config, load, backend, python, tool_model)
        except NoPoint as err:
            if len(configs) == 1:
                raise
            skipped.append(str(err))
    if not texts:
        raise CapplanError("no configuration could be predicted: " + "; ".join(skipped))
    try:                            # every configuration predicted before any file is written
        out_dir.mkdir(parents=True, exist_ok=True)
        for path, text in texts.items():
            path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise CapplanError(f"cannot write the estimate files to {out_dir}: {err.strerror or err}") from None
    return list(texts), skipped


class NoPoint(CapplanError):
    """The tool predicted nothing for a configuration (the model does not fit its memory at batch 1)."""


class MissesSlo(NoPoint):
    """The tool predicted a configuration only at latencies the plan's SLOs forbid: nothing usable."""


SLO_INPUT = re.compile(r"(ttft|tpot|itl|e2e)_p[0-9]+_slo")


def slo_limits(plan) -> dict[str, tuple[str, float]]:
    """The plan's latency SLOs as the adapter's pick takes them: input name -> (metric, ms)."""
    return {name: (name.split("_")[0], units.to_display(given.value, "ms"))
            for name, given in plan.nominal.inputs.items() if SLO_INPUT.fullmatch(name)}


def document(plan, tool: str, adapter, config: Config, load: Workload, backend: str,
             python: str | None, tool_model: str | None) -> str:
    """The estimate file of one configuration: the adapter's request, its answer, in the file's format."""
    model_path, model_note = adapter.model(plan.model_entry.id, plan.model_entry.hf_id, tool_model)
    request = {"model_path": model_path, "system": adapter.system(config.gpu), "backend": backend,
               "backend_version": None, "database_mode": adapter.DATABASE_MODE, "isl": load.isl, "osl": load.osl,
               "tp": config.tp, "pp": 1, **adapter.moe(plan.model_entry, config.tp), "gemm_quant_mode": adapter.quant(adapter.WEIGHTS, config.weights, "weights"),
               "kvcache_quant_mode": adapter.quant(adapter.KV_CACHE, config.kv_cache, "KV cache"),
               "batch_sizes": list(adapter.BATCH_SIZES)}
    answer = adapter.run(request, tool, python)
    shown = f"{plan.model_entry.id} on {config.gpu} TP {config.tp}"
    if not answer["points"]:
        raise NoPoint(f"{tool} predicted no point for {shown}: {answer['stopped']}")
    try:
        adapter.pick(answer["points"], slo_limits(plan), shown)
    except CapplanError as err:     # every point misses an SLO: located at the first SLO missed
        raise MissesSlo(err.message, file=plan.file, key=f"inputs.{err.key}", line=plan.line(err.key)) from None
    versions = {p["backend_version"] for p in answer["points"]}
    head = {"tool": tool, "tool_version": answer["versions"][tool],
            "backend": backend, "database_version": ", ".join(sorted(versions)),
            "database_mode": adapter.DATABASE_MODE, "system": request["system"], "gpu": config.gpu,
            "model": plan.model_entry.id, "tool_model": model_path + (f" ({model_note})" if model_note else ""),
            "tensor_parallel_size": config.tp, "pipeline_parallel_size": 1, "weight_dtype": config.weights,
            "kv_cache_dtype": config.kv_cache, "isl": load.isl, "osl": load.osl, "workload": load.text,
            "call": adapter.call(request), "latencies": adapter.LATENCIES}
    if answer["stopped"]:
        head["stopped"] = answer["stopped"]
    points = [{"concurrency": p["concurrency"], "request_rate_req_s": p["seq/s"],
               "output_tok_s_per_replica": p["tokens/s"], "output_tok_s_per_gpu": p["tokens/s/gpu"],
               "ttft_ms": p["ttft"], "tpot_ms": p["tpot"], "e2e_s": p["request_latency"] / 1000.0}
              for p in answer["points"]]
    return estimate_file.dump(head, points)
