"""``inputs:`` (and each quantity a scenario's ``set:`` gives): a value for an
input of the model, or a pin that replaces a derived quantity's formula, with
its source, tag, status and range; and the inputs a plan still lacks, all
named in one message."""

from __future__ import annotations

from capplan import names
from capplan.errors import CapplanError
from capplan.language import domains, units
from capplan.language.model import TAGS
from capplan.loading import parallel, uncertain, unitrule
from capplan.loading.plan import values
from capplan.loading.plan.context import Context
from capplan.loading.plan.data import Input
from capplan.names import nearest

INPUT_KEYS = ("value", "source", "status", "tag", "date", "note", *uncertain.FIELDS)


def read_all(ctx: Context, raw: dict, path: tuple, origin: str) -> dict[str, Input]:
    if not isinstance(raw, dict):
        raise ctx.err("expected a mapping of quantity names to values", *path)
    out = {}
    for name, spec in raw.items():
        out[name] = read(ctx, str(name), spec, path + (name,), origin)
    return out


def read(ctx: Context, name: str, spec, path: tuple, origin: str) -> Input:
    q = ctx.model.quantities.get(name)
    flag = names.engine_flag(name)
    if q is None or q.table is not None:
        hint = f": {flag}" if flag else nearest(name, ctx.model.scalars())
        raise ctx.err(f"unknown quantity '{name}'{hint}", *path)
    if name not in ctx.active:
        raise ctx.err(f"'{name}' is not part of a plan with {ctx.switch_text(q)}"
                      + (f"; {flag}" if flag else ""), *path)
    if q.kind == "bool":
        raise ctx.err(f"'{name}' is a pass/fail result and cannot be set", *path)
    fields = spec if isinstance(spec, dict) else {"value": spec}
    for key in fields:
        if key not in INPUT_KEYS:
            raise ctx.err(f"unknown field '{key}'{nearest(str(key), INPUT_KEYS)} (fields: {', '.join(INPUT_KEYS)})", *path, key)
    if "value" not in fields:
        raise ctx.err("missing 'value:'", *path)
    tag = fields.get("tag") or q.tag or "assumption"
    if tag not in TAGS:
        raise ctx.err(f"tag must be one of {', '.join(TAGS)}, got '{tag}'", *path, "tag")
    status = fields.get("status")
    if status not in (None, "pending", "measured"):
        raise ctx.err(f"status must be 'pending' or 'measured', got '{status}'", *path, "status")
    try:
        value = units.parse_value(fields["value"], q.unit)
        domains.require(q, value, fields["value"])
        unitrule.require(fields["value"], q.unit, ctx.known_units())
    except CapplanError as err:
        raise ctx.err(f"{err.message}", *path) from None
    date = fields.get("date")
    return Input(name, value, tag, origin, source=ctx.text(fields.get("source"), *path, "source"),
                 status=status if status == "pending" else None, date=ctx.text(date, *path, "date"),
                 note=ctx.text(fields.get("note"), *path, "note"), pinned=not q.is_input, line=ctx.doc.line(path),
                 uncertain=values.distribution(ctx, fields, q, value, path))


def require_all(ctx: Context, inputs: dict[str, Input]) -> None:
    """Every input the plan still lacks, in one message: a new plan learns them all in one run
    (of those the caller evaluates, when it says: :attr:`Context.needs`)."""
    missing = [ctx.model.quantities[name] for name in ctx.model.active(ctx.switches)
               if name not in inputs and ctx.model.quantities[name].is_input
               and ctx.model.quantities[name].table is None and (ctx.needs is None or name in ctx.needs)]
    if len(missing) == 1:
        q = missing[0]
        raise ctx.err(f"missing input '{q.name}' ({q.description} Unit: {q.unit or 'none'}); "
                      f"add it under inputs:", "inputs")
    if missing:
        listed = "; ".join(f"'{q.name}' ({q.description} Unit: {q.unit or 'none'})" for q in missing)
        raise ctx.err(f"missing {len(missing)} inputs, none of which has a default; add each under "
                      f"inputs: {listed}", "inputs")


def require_power(ctx: Context, gpu: str, inputs: dict[str, Input]) -> None:
    """A site's power budget or a rack's limit is held against the GPUs' power: with no TDP in the
    catalog and no cap in the plan the fleet would count as drawing nothing and fit any budget."""
    if inputs["gpu_tdp"].value > 0 or inputs["gpu_power_cap"].value > 0:
        return
    for name in ("site_power_budget", "rack_power_limit"):
        if inputs[name].value > 0:
            raise ctx.err(f"a power budget is held against the GPUs' power, but the catalog gives no TDP for {gpu}: "
                          f"state gpu_tdp or gpu_power_cap under inputs (W/GPU, from the GPU's datasheet or "
                          f"nvidia-smi)", "inputs", name)


def require_tensor_parallel(ctx: Context, scenario) -> None:
    """A scenario's ``gpus_per_replica`` is a tensor-parallel size the engine takes for the model
    (:mod:`capplan.loading.parallel`): capplan sizes a replica as one tensor-parallel group, and a
    size vLLM refuses sizes a fleet nobody can start. Under expert parallelism the replica is
    ``expert_parallel_size`` such groups, so the group is gpus_per_replica over that."""
    given, kv = scenario.inputs.get("gpus_per_replica"), scenario.inputs.get("kv_heads")
    if given is None or given.value != int(given.value):
        return
    path = (("inputs",) if given.origin == "plan" else ("scenarios", given.origin, "set")
            if given.origin == scenario.name else ("model",))
    ranks = int(scenario.inputs["expert_parallel_size"].value) if "expert_parallel_size" in scenario.inputs else 1
    if given.value % ranks:
        raise ctx.err(f"gpus_per_replica {given.value:g} GPU is not a multiple of expert_parallel_size {ranks}: "
                      f"each data-parallel rank runs on the same number of GPUs", *path, "gpus_per_replica")
    why = parallel.refusal(ctx.model_entry, int(given.value) // ranks, kv.value if kv is not None else None)
    if why:
        raise ctx.err(f"gpus_per_replica {given.value:g} GPU: {why}", *path, "gpus_per_replica")
