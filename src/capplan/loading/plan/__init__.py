"""Load a plan file into inputs, tables, scenarios and expectations.

Everything a plan says is validated here against the model, so that a bad
plan fails with one message naming the file, the key and its line. Values are
converted to base units on the way in (``units.parse_value``).

Where a value comes from, in order of precedence: the scenario's ``set:``,
the plan's ``inputs:``, the catalog entry (``gpu:``, ``model:``, ``engine:``), the model's
default. An ``inputs:`` or ``set:`` entry that names a *derived* quantity pins
it: its formula is replaced by the given value, shown as an override.

Each section of a plan is read by the module of its name; :func:`load` reads
them in order:

- ``document``: the top-level keys, ``sizing:``/``memory_accounting:``/``topology:``, title, notes
- ``decision``: ``decision:``, what a reviewer signs (status, owner, approver, date, commitment, review trigger)
- ``entries``: ``gpu:`` and ``model:`` (catalog entries, a config.json), the model's defaults
- ``engine``: ``engine:``, the serving engine (its calibrated constants) and vLLM's release
- ``inputs``: ``inputs:`` and each quantity a scenario sets
- ``values``: one value with its unit and range, shared by inputs, cells and ``set:``
- ``tables``: ``tables:``, their rows and ``units:``; ``imports``: a table's ``import:``
- ``scenarios``: ``scenarios:`` and their ``set:``; ``expect``: ``expect:``
- ``candidates``: ``candidates:``, the hardware the plan weighs (GPU × TP × formats × offers)
- ``traffic``: ``traffic:``, the arrival rate over time (the ``profile`` table, its peak and PAR)
- ``context``: the plan being read and where its mistakes are reported; ``data``: what a plan is
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from capplan import bounded
from capplan.language import yamlfile
from capplan.resources import model_dir, templates_dir
from capplan.language.model import Model
from capplan.loading.plan import candidates, decision, document, engine, entries, expect, inputs, scenarios, tables, traffic
from capplan.loading.plan.context import Context
from capplan.loading.plan.data import NOMINAL, Expectation, Input, Plan, Scenario, TableData
from capplan.loading.plan.document import PLAN_KEYS, PLAN_SWITCHES
from capplan.loading.plan.inputs import INPUT_KEYS
from capplan.loading.plan.scenarios import SCENARIO_KEYS
from capplan.loading.plan.tables import ROW_META, TABLE_KEYS

Needs = Callable[[Model, dict], frozenset]    # the model with the plan's SLOs, its switches -> quantity names


def load(path: Path, model: Model, display: str | None = None, needs: Needs | None = None) -> Plan:
    """The plan at ``path``, with every file it read besides itself (:attr:`Plan.reads`) and
    the patterns it expanded in its folder (:attr:`Plan.patterns`). ``needs`` (the model and the
    plan's switches to the quantities the caller will evaluate) asks the plan for only the inputs
    and tables those read: ``capplan validate`` predicts a deployment, not the plan's sizing."""
    with bounded.witnessed() as seen:
        plan = _load(path, model, display, needs)
    plan.reads = files_read(path, seen.files)
    folder = os.path.realpath(path.parent)
    plan.patterns = tuple(sorted(pattern for where, pattern in seen.patterns if where == folder))
    return plan


def files_read(path: Path, seen: dict[str, str]) -> dict[str, str]:
    """The files a plan read besides itself and capplan's own data (the model, the catalog: the
    build records those as a whole), named from the plan's folder: imports, estimate files, a
    traffic CSV, a config.json, whatever a section reads. All lie in the plan's repository (each
    reader refuses any other), so each name is a path a later ``check`` can hash again."""
    folder, itself = os.path.realpath(path.parent), os.path.realpath(path)
    data = tuple(os.path.realpath(d) + os.sep for d in (model_dir(), templates_dir()))
    return {Path(os.path.relpath(real, folder)).as_posix(): digest for real, digest in sorted(seen.items())
            if real != itself and not real.startswith(data)}


def _load(path: Path, model: Model, display: str | None, needs: Needs | None) -> Plan:
    ctx = Context(yamlfile.read(path, display), model, path)
    document.check_keys(ctx)
    gpu = entries.entry(ctx, "gpu")
    model_entry = ctx.model_entry = entries.entry(ctx, "model")
    ctx.switches = document.switches(ctx, model_entry)
    traffic.switch(ctx)
    candidates.switch(ctx)
    document.topology(ctx)
    document.expert_parallel(ctx, model_entry)
    ctx.slos = document.slos(ctx)
    ctx.model = ctx.model.with_slos(ctx.slos)
    ctx.active = set(ctx.model.active(ctx.switches))
    ctx.needs = needs(ctx.model, ctx.switches) if needs else None
    ctx.active |= ctx.needs or set()          # what the caller evaluates, a plan may state (the estimate's scheduler)

    given = entries.defaults(ctx)
    given.update(entries.values(ctx, gpu))
    given.update(entries.prefill_values(ctx))
    given.update(entries.values(ctx, model_entry))
    serving = engine.entry(ctx)
    given.update(engine.constants(ctx, serving))
    given.update(inputs.read_all(ctx, ctx.data.get("inputs") or {}, ("inputs",), origin="plan"))
    given.update(engine.read(ctx, serving))
    profile_inputs, profile_tables = traffic.read(ctx, given)
    given.update(profile_inputs)
    entries.require_from_plan(ctx, model_entry, given)
    inputs.require_all(ctx, given)
    inputs.require_power(ctx, gpu.id, given)
    traffic.refuse_cold_wakeups(ctx, given)
    ctx.inputs = given
    nominal = Scenario(NOMINAL, "Nominal", "The plan as written.", given, tables.read_all(ctx) | profile_tables,
                       expect.read(ctx, ctx.data.get("expect") or {}, ("expect",)), [])
    traffic.refuse_unpowered_ownership(ctx, gpu.id, given, nominal.tables.get("deployments"))
    every = [nominal] + scenarios.read_all(ctx, nominal)
    traffic.refuse_oversized(ctx, every)
    for scenario in every:
        inputs.require_tensor_parallel(ctx, scenario)
    texts = document.texts(ctx)
    return Plan(path=path, file=ctx.doc.file, name=path.stem, **texts, gpu=gpu,
                model_entry=model_entry, engine=serving, switches=ctx.switches, scenarios=every, doc=ctx.doc, slos=ctx.slos,
                candidates=candidates.read(ctx, nominal.tables.get("classes")),
                decision=decision.read(ctx, texts["owner"]),
                prefill_gpu=entries.entry(ctx, "gpu", "prefill_gpu").id if "prefill_gpu" in ctx.data else "")


__all__ = ["INPUT_KEYS", "NOMINAL", "PLAN_KEYS", "PLAN_SWITCHES", "ROW_META", "SCENARIO_KEYS", "TABLE_KEYS",
           "Expectation", "Input", "Plan", "Scenario", "TableData", "load", "replace"]
