"""The plan's top level: which keys it may have, the switches it chooses
(``sizing:``, ``memory_accounting:``, ``routing:``, ``topology:``, ``speculation:``, ``expert_parallel:``), the SLOs
its inputs name, and its
free text (``title:``, ``owner:``, ``description:``, ``notes:``)."""

from __future__ import annotations

from capplan.loading import catalog
from capplan.loading.plan.context import Context
from capplan.names import nearest

PLAN_KEYS = ("title", "owner", "decision", "description", "gpu", "model", "sizing", "memory_accounting", "routing",
             "engine", "inputs", "tables", "scenarios", "expect", "notes", "candidates", "traffic", "topology", "speculation",
             "expert_parallel", "prefill_gpu")
PLAN_SWITCHES = ("sizing", "memory_accounting", "routing", "topology", "speculation",
                 "expert_parallel")   # the model's switches a plan chooses by key
TOPOLOGY = "topology"
EXPERT_PARALLEL = "expert_parallel"


def check_keys(ctx: Context) -> None:
    """A mapping of known keys, with the two catalog ids every plan needs."""
    if not isinstance(ctx.data, dict):
        raise ctx.err("a plan must be a YAML mapping (title:, gpu:, model:, inputs:, tables:, …)")
    for key in ctx.data:
        if key not in PLAN_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), PLAN_KEYS)} (plan keys: {', '.join(PLAN_KEYS)})", key)
    for key in ("gpu", "model"):
        if key not in ctx.data:
            raise ctx.err(f"missing '{key}:' (a catalog id such as {catalog.ids(key)[0]})")


def switches(ctx: Context, model_entry: catalog.Entry) -> dict[str, str]:
    """The model's switches: the plan's choice of each, the model's attention from its catalog entry."""
    chosen_all = ctx.model.default_switches()
    for key in PLAN_SWITCHES:
        chosen = ctx.data.get(key, chosen_all[key])
        if not isinstance(chosen, str) or chosen not in ctx.model.switches[key]["cases"]:
            raise ctx.err(f"{key} must be one of {', '.join(ctx.model.switches[key]['cases'])}, got '{chosen}'", key)
        chosen_all[key] = chosen
    chosen_all["attention"] = model_entry.attention or chosen_all["attention"]
    return chosen_all


def topology(ctx: Context) -> None:
    """No ``topology`` switch for a plan without ``topology:``, so such a plan is the same plan
    (and the same outputs) as before; a disaggregated plan needs ``candidates:``, whose
    throughput estimate its pools' rates are computed from (the model's disaggregation group)."""
    if TOPOLOGY not in ctx.data:
        ctx.switches.pop(TOPOLOGY, None)
    elif ctx.switches[TOPOLOGY] == "disaggregated" and "candidates" not in ctx.switches:
        raise ctx.err("topology: disaggregated sizes its prefill and decode pools from the candidates' throughput "
                      "estimate, and the plan has no candidates: (list its own GPU and an offer there)", TOPOLOGY)


def expert_parallel(ctx: Context, model_entry: catalog.Entry) -> None:
    """No ``expert_parallel`` switch for a plan without ``expert_parallel:`` or a candidates ``ep:`` list, so
    such a plan is the same plan (and the same outputs) as before; ``split`` for one with either. Expert
    parallelism splits a mixture-of-experts model's experts, so a dense model is refused by name; its
    all-to-all reads the hidden width and experts per token that memory_accounting: engine brings."""
    listed = isinstance(ctx.data.get("candidates"), dict) and "ep" in ctx.data["candidates"]
    if EXPERT_PARALLEL not in ctx.data and not listed:
        ctx.switches.pop(EXPERT_PARALLEL, None)
        return
    where = (EXPERT_PARALLEL,) if EXPERT_PARALLEL in ctx.data else ("candidates", "ep")
    if listed and ctx.data.get(EXPERT_PARALLEL, "split") != "split":
        raise ctx.err("candidates: ep: lists expert-parallel sizes, which need expert_parallel: split "
                      "(or leave expert_parallel: out)", EXPERT_PARALLEL)
    if listed:
        ctx.switches[EXPERT_PARALLEL] = "split"
    if ctx.switches[EXPERT_PARALLEL] != "split":
        return
    experts = (model_entry.values.get("experts_per_token") or {}).get("value") or 0
    if not experts:
        raise ctx.err(f"model '{model_entry.id}' is dense (no routed experts in the catalog): expert "
                      f"parallelism splits a mixture-of-experts model's experts; leave it out", *where)
    if ctx.switches["memory_accounting"] != "engine":
        raise ctx.err("expert parallelism needs memory_accounting: engine, which brings the hidden width and "
                      "experts per token its all-to-all is reckoned from", *where)


def slos(ctx: Context) -> tuple[tuple[str, str], ...]:
    """The SLOs the plan's inputs name (``ttft_p99_slo`` -> ('ttft', 'p99'));
    a metric it names none of keeps the model's default."""
    given = ctx.data.get("inputs")
    names = ctx.model.slo_inputs()
    return tuple(names[n] for n in given if n in names) if isinstance(given, dict) else ()


def texts(ctx: Context) -> dict[str, str]:
    """title (the file's stem if none), owner, description and notes, stripped."""
    return {"title": ctx.text(ctx.data.get("title"), "title") or ctx.path.stem,
            "owner": ctx.text(ctx.data.get("owner"), "owner") or "",
            "description": (ctx.text(ctx.data.get("description"), "description") or "").strip(),
            "notes": (ctx.text(ctx.data.get("notes"), "notes") or "").strip()}
