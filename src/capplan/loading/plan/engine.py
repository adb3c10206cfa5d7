"""The plan's ``engine:``: the serving engine a plan serves with (``engine: trt-llm``), and for
vLLM the release whose start-up memory accounting gate 1 follows, ``engine: {name: vllm,
version: "0.21", source: ...}``.

The engine's calibrated constants (``model/catalog/engines.yaml``: ``engine_step_factor`` and
``estimate_band``, each with its source) reach the throughput estimate of a plan with
``candidates:`` beneath the plan's ``inputs:``, so a plan's own measurement of either overrides
them; a plan without the key serves with :data:`DEFAULT`, and every prediction names the engine
it is for (engines differ most: docs/calibration.md).

vLLM's accounting changes between releases (from 0.21 it subtracts a CUDA-graph
estimate before sizing the KV cache; from 0.28 a GPU of 160 GiB gets larger batch
defaults), so the release is part of a plan with ``memory_accounting: engine``. The
version sets the model's input ``vllm_release`` (21 for 0.21), which the record shows
with this key as its source; writing the input under ``inputs:`` too would say one
thing twice, and is refused. A version is text: YAML reads ``0.10`` as the number 0.1.
"""

from __future__ import annotations

import re

from capplan.language import units
from capplan.loading import catalog
from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import Input
from capplan.names import nearest

ENGINE_KEYS = ("name", "version", "source")
DEFAULT = "vllm"               # the engine of a plan that names none: the one capplan's accounting models
_ACCOUNTED = ("vllm",)         # the engines whose start-up memory accounting gate 1 models
_RELEASE = "vllm_release"
_VERSION = re.compile(r"v?0\.(\d{1,3})(?:\.\d{1,3}){0,2}(?:\.post\d+)?")


def spec(ctx: Context) -> dict | None:
    """The plan's ``engine:`` as a mapping (a name alone is ``{name: ...}``), its keys checked."""
    given = ctx.data.get("engine")
    if given is None or isinstance(given, dict):
        written = given
    elif isinstance(given, str):
        written = {"name": given}
    else:
        raise ctx.err(f"expected an engine name ({', '.join(catalog.ids('engine'))}) or a mapping such as "
                      f"{{name: vllm, version: \"0.21\"}}, got {kind(given)}", "engine")
    for key in written or ():
        if key not in ENGINE_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), ENGINE_KEYS)} (engine keys: {', '.join(ENGINE_KEYS)})", "engine", key)
    return written


def entry(ctx: Context) -> catalog.Entry:
    """The engine the plan serves with (:data:`DEFAULT` when it names none), refused with the names
    it is close to when capplan has no constants for it. Any plan may name it: ``capplan validate``
    predicts with its constants whether or not the plan ranks candidates."""
    written = spec(ctx)
    if written is None:
        return catalog.lookup("engine", DEFAULT)
    where = ("engine", "name") if isinstance(ctx.data["engine"], dict) else ("engine",)
    name = written.get("name")
    found = catalog.resolve("engine", str(name)) if isinstance(name, str) else None
    if found is None:
        near = catalog.suggestions("engine", str(name)) if isinstance(name, str) else []
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise ctx.err(f"unknown engine {kind(name)}{hint} (engines capplan has constants for: "
                      f"{', '.join(catalog.ids('engine'))}; model/catalog/engines.yaml)", *where)
    return catalog.lookup("engine", found)


def constants(ctx: Context, engine: catalog.Entry) -> dict[str, Input]:
    """The engine's calibrated constants the plan's model uses, each cited to the engine's entry and
    to the plan's ``engine:``, or to capplan's default when the plan names no engine."""
    chose = (f"engine: {engine.id}" if ctx.data.get("engine") is not None
             else "capplan's default engine; name yours with engine:")
    out = {}
    for name, given in engine.values.items():
        if name not in ctx.active:
            continue
        q = ctx.model.quantities[name]
        out[name] = Input(name, units.parse_value(given["value"], q.unit), given.get("tag") or q.tag, "catalog",
                          source=f"{engine.name} ({chose}): {given['source']}", note=given.get("note"))
    return out


def read(ctx: Context, engine: catalog.Entry) -> dict[str, Input]:
    """``{'vllm_release': Input}`` from ``engine: {version: ...}``, or nothing when the plan gives no version."""
    written = spec(ctx) or {}
    if _RELEASE not in ctx.active:
        if "version" in written:
            raise ctx.err(f"engine: sets the release whose memory accounting gate 1 follows, which a plan with "
                          f"memory_accounting: {ctx.switches['memory_accounting']} does not use; set "
                          f"memory_accounting: engine, or leave engine: out", "engine")
        return {}
    if not written:
        return {}
    if engine.id not in _ACCOUNTED:
        raise ctx.err(f"the engine whose accounting capplan models is {' or '.join(_ACCOUNTED)}, got "
                      f"{kind(written.get('name'))}", *(("engine", "name") if isinstance(ctx.data["engine"], dict)
                                                         else ("engine",)))
    if "version" not in written:
        return {}
    version = written.get("version")
    if not isinstance(version, str):
        raise ctx.err(f"write the version as text, e.g. \"0.21\" or \"0.10.1\" (YAML reads 0.10 as the number "
                      f"0.1), got {kind(version)}", "engine", "version")
    match = _VERSION.fullmatch(version.strip())
    if match is None:
        raise ctx.err(f"'{version}' is not a vLLM release (0.N or 0.N.M, e.g. \"0.21\")", "engine", "version")
    if _RELEASE in (ctx.data.get("inputs") or {}):
        raise ctx.err(f"engine: and inputs: {_RELEASE} both give the vLLM release; keep one", "engine")
    release = int(match.group(1))
    why = ctx.text(written.get("source"), "engine", "source")
    source = f"engine: {written['name']} {version.strip()}" + (f"; {why}" if why else "")
    return {_RELEASE: Input(_RELEASE, float(release), tag="policy", origin="plan", source=source,
                            line=ctx.doc.line(("engine", "version")))}
