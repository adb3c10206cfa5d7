"""``gpu:`` and ``model:``: the catalog entries a plan names (or a model's own
config.json), the values they bring, and the model's defaults beneath them."""

from __future__ import annotations

from capplan.errors import CapplanError
from capplan.language import domains, units
from capplan.loading import catalog, hf_config
from capplan.loading.plan.context import Context
from capplan.loading.plan.data import Input
from capplan.names import nearest


# the prefill pool's quantities a ``prefill_gpu:`` fills from its catalog facts (each else the plan's GPU's)
PREFILL_FACTS = {"bf16_peak_flops": "prefill_bf16_peak_flops", "fp8_peak_flops": "prefill_fp8_peak_flops",
                 "fp4_peak_flops": "prefill_fp4_peak_flops", "gpu_memory_reported": "prefill_gpu_memory"}


def entry(ctx: Context, kind, key: str | None = None) -> catalog.Entry:
    """The catalog entry of ``kind`` the plan's ``key`` (``kind`` unless given) names."""
    key = key or kind
    spec = ctx.data[key]
    if kind == "model" and isinstance(spec, dict):
        return _config_entry(ctx, spec)
    try:
        return catalog.lookup(kind, str(spec))
    except CapplanError as err:
        raise ctx.err(err.message, key) from None


def prefill_values(ctx: Context) -> dict[str, Input]:
    """``prefill_gpu:``: the catalog facts of the prefill pool's GPU, each pinning the prefill pool's
    quantity that would else be the plan's GPU's (:data:`PREFILL_FACTS`), cited to the catalog; a fact
    the catalog lacks the plan states under ``inputs:``, since the plan's GPU's would be wrong for it."""
    if "prefill_gpu" not in ctx.data:
        return {}
    if ctx.switches.get("topology") != "disaggregated":
        raise ctx.err("names the prefill pool's GPU, which only topology: disaggregated has", "prefill_gpu")
    gpu = entry(ctx, "gpu", "prefill_gpu")
    stated = ctx.data.get("inputs") or {}
    if not {"prefill_node_hourly_cost", "prefill_gpus_per_node"} <= set(stated):
        raise ctx.err(f"the prefill pool runs on {gpu.id}'s nodes, not the deployments': state their price and "
                      "GPUs as prefill_node_hourly_cost and prefill_gpus_per_node under inputs:", "prefill_gpu")
    out = {}
    for fact, name in PREFILL_FACTS.items():
        spec = gpu.values.get(fact)
        if spec is None:
            if name in stated:
                continue
            raise ctx.err(f"the catalog gives no {fact} for {gpu.id}; state {name} under inputs:", "prefill_gpu")
        q = ctx.model.quantities[name]
        out[name] = Input(name, units.parse_value(spec.get("value"), q.unit), "fact", "catalog",
                          source=f"catalog {gpu.id}: {spec.get('source', '')}".strip(), note=spec.get("note"),
                          pinned=True)
    return out


def _config_entry(ctx: Context, spec: dict) -> catalog.Entry:
    """``model: {config: path, name: hf id}`` (a Hugging Face config.json, and the model's name, which
    benchmarks of it record) or ``{id: ..., weights: ...}`` (a checkpoint's format)."""
    if set(spec) in ({"id"}, {"id", "weights"}):
        try:
            return catalog.with_weights(catalog.lookup("model", str(spec["id"])), spec.get("weights"))
        except CapplanError as err:
            raise ctx.err(err.message, "model") from None
    if set(spec) not in ({"config"}, {"config", "name"}):
        raise ctx.err("expected a catalog id, {id: catalog id, weights: format} or {config: path/to/config.json, "
                      "name: its Hugging Face id}", "model")
    name = ctx.text(spec.get("name"), "model", "name")
    try:
        return hf_config.load(ctx.path.parent, spec["config"], name=name)
    except CapplanError as err:
        raise ctx.err(err.message, "model", "config") from None


def require_from_plan(ctx: Context, entry: catalog.Entry, inputs: dict[str, Input]) -> None:
    """What a config.json does not say (``entry.required``) the plan must give."""
    for name in entry.required:
        if name in ctx.active and (name not in inputs or inputs[name].origin == "default"):
            raise ctx.err(f"{entry.file} does not say {name} ({ctx.model.quantities[name].description}); "
                          f"give it under inputs:", "model", "config")


def defaults(ctx: Context) -> dict[str, Input]:
    out = {}
    for name in ctx.active:
        q = ctx.model.quantities[name]
        if q.is_input and q.table is None and q.default is not None:
            out[name] = Input(name, units.parse_value(q.default, q.unit), q.tag, "default",
                              source=q.source or "capplan standard model", status=q.status)
    return out


def values(ctx: Context, entry: catalog.Entry) -> dict[str, Input]:
    """The values a catalog entry gives, cited to it (a derived quantity it gives is pinned)."""
    out = {}
    for name, spec in entry.values.items():
        if name not in ctx.model.quantities:
            raise CapplanError(f"catalog value '{name}' is not a model quantity{nearest(name, ctx.model.quantities)}",
                               file=entry.file, key=f"{entry.id}.values.{name}")
        if name not in ctx.active:
            continue
        q = ctx.model.quantities[name]
        try:
            value = units.parse_value(spec.get("value"), q.unit)
            domains.require(q, value, spec.get("value"))
        except CapplanError as err:
            raise err.located(file=entry.file, key=f"{entry.id}.values.{name}") from None
        cited = spec.get("source", "") if entry.status == "config" else f"catalog {entry.id}: {spec.get('source', '')}"
        out[name] = Input(name, value, q.tag or "fact", "catalog", source=cited.strip(),
                          note=spec.get("note"), pinned=not q.is_input)
    return out
