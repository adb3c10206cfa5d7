"""The plan's ``engine:``: the serving engine and release whose start-up memory
accounting gate 1 follows, ``engine: {name: vllm, version: "0.21", source: ...}``.

vLLM's accounting changes between releases (from 0.21 it subtracts a CUDA-graph
estimate before sizing the KV cache; from 0.28 a GPU of 160 GiB gets larger batch
defaults), so the release is part of the plan. The key sets the model's input
``vllm_release`` (21 for 0.21), which the record shows with this key as its
source; writing the input under ``inputs:`` too would say one thing twice, and
is refused. A version is text: YAML reads ``0.10`` as the number 0.1.
"""

from __future__ import annotations

import re

from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import Input
from capplan.names import nearest

ENGINE_KEYS = ("name", "version", "source")
ENGINES = ("vllm",)
_RELEASE = "vllm_release"
_VERSION = re.compile(r"v?0\.(\d{1,3})(?:\.\d{1,3}){0,2}(?:\.post\d+)?")


def read(ctx: Context) -> dict[str, Input]:
    """``{'vllm_release': Input}`` from ``engine:``, or nothing when the plan has no such key."""
    spec = ctx.data.get("engine")
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise ctx.err(f"expected a mapping such as {{name: vllm, version: \"0.21\"}}, got {kind(spec)}", "engine")
    for key in spec:
        if key not in ENGINE_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), ENGINE_KEYS)} (engine keys: {', '.join(ENGINE_KEYS)})", "engine", key)
    name = spec.get("name")
    if name not in ENGINES:
        raise ctx.err(f"the engine whose accounting capplan models is {' or '.join(ENGINES)}, got {kind(name)}",
                      "engine", "name")
    version = spec.get("version")
    if not isinstance(version, str):
        raise ctx.err(f"write the version as text, e.g. \"0.21\" or \"0.10.1\" (YAML reads 0.10 as the number "
                      f"0.1), got {kind(version)}", "engine", "version")
    match = _VERSION.fullmatch(version.strip())
    if match is None:
        raise ctx.err(f"'{version}' is not a vLLM release (0.N or 0.N.M, e.g. \"0.21\")", "engine", "version")
    if _RELEASE not in ctx.active:
        raise ctx.err(f"engine: sets the release whose memory accounting gate 1 follows, which a plan with "
                      f"memory_accounting: {ctx.switches['memory_accounting']} does not use; set "
                      f"memory_accounting: engine, or leave engine: out", "engine")
    if _RELEASE in (ctx.data.get("inputs") or {}):
        raise ctx.err(f"engine: and inputs: {_RELEASE} both give the vLLM release; keep one", "engine")
    release = int(match.group(1))
    why = ctx.text(spec.get("source"), "engine", "source")
    source = f"engine: {name} {version.strip()}" + (f"; {why}" if why else "")
    return {_RELEASE: Input(_RELEASE, float(release), tag="policy", origin="plan", source=source,
                            line=ctx.doc.line(("engine", "version")))}
