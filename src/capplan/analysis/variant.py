"""A candidate as the plan it would be: the whole model evaluated for one ranked candidate.

The ranking evaluates every candidate in one batch of the model's formulas, cut to what a
ranking reads. The recommendation deserves the whole model: its sizing chain, the flips of its
decisions, its tornado. :func:`of_candidate` makes candidate ``i`` a scenario of the plan — the
scenario's inputs with the candidate's in their place (the GPU's catalog facts, GPUs per
replica, weight, KV and tensor formats, its overrides), its offer as the one deployment row,
and its λ* and compliant share pinned as the ranking has them — and evaluates it like any other
scenario. Every figure it gives is the model's, so it agrees with the ranking's to the bit, and
the flip search (:mod:`capplan.analysis.flips`) runs on it unchanged.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from capplan.analysis import candidates as batch
from capplan.artifacts import transfer
from capplan.artifacts.ranking import Evaluated
from capplan.engine.evaluate import Evaluation, evaluate
from capplan.engine.graph import build
from capplan.language import units
from capplan.loading.plan.data import NOMINAL, Input, Scenario, TableData
from capplan.loading.plan.entries import PREFILL_FACTS


def of_candidate(e: Evaluation, evaluated: Evaluated, i: int, estimated: bool = False) -> Evaluation:
    """Candidate ``i`` of ``evaluated`` in the scenario ``e`` evaluates (the nominal one: the
    plan's own numbers are the variant's nominal); ``estimated``: see :func:`scenario`."""
    return evaluate(e.plan, scenario(e, evaluated, i, estimated), e.model)


def scenario(e: Evaluation, evaluated: Evaluated, i: int, estimated: bool = False) -> Scenario:
    """The scenario of candidate ``i``: the plan's nominal one as it would be with the candidate (its
    own nominal, so that 'the nominal fleet' is the candidate's), titled as the ranking names it.

    ``estimated``: a λ* the ranking took from the built-in estimate of a plan sized by it is left to
    the model's formulas rather than pinned (the same number today), so that an input the estimate
    reads (a prompt length, a prefix hit rate) moves it as it would move the ranking's."""
    c = evaluated.candidates[i]
    graph = build(e.model, e.plan.switches, batch.pinned_names(e, (c,)), nominal=True)
    origin = f"candidate {c.name}"
    inputs = dict(e.scenario.inputs)
    changes = []
    for name, column in batch.candidate_inputs(e, graph, (c,)).items():
        q = e.model.quantities[name]
        value = float(np.asarray(column).reshape(-1)[0])
        given = inputs.get(name)
        if q.table or name in batch.PINS or name in batch.REFERENCE or (given is not None and given.value == value):
            continue
        fact = c.gpu.values.get(name)
        inputs[name] = (Input(name, value, given.tag if given else "fact", origin,
                              source=fact.get("source") if fact else given.source if given else None,
                              pinned=name in PREFILL_FACTS.values())     # a prefill GPU's fact replaces a formula
                        if given is None or given.pinned is False else dataclasses.replace(given, value=value))
        changes.append(name)
    j = evaluated.scenarios.index(e.scenario.name)
    measured = evaluated.tags[i] == transfer.MEASURED and not c.pooled     # a pooled tag is its pools' rates'
    for name in () if estimated and by_estimate(e, evaluated, i) else batch.PINS:
        inputs[name] = Input(name, float(evaluated.values[name][i, j]), "measurement" if measured else "assumption",
                             origin, source=evaluated.basis[i] if name == "instance_max_rate" else None,
                             pinned=True)
    for name in batch.REFERENCE:
        if name in e.values:
            inputs[name] = Input(name, float(e.values[name]), "measurement", e.scenario.name, pinned=True)
    tables = dict(e.scenario.tables, deployments=_offer_table(e, c.offer))
    return Scenario(name=NOMINAL, title=c.label, description=f"{c.label} on {c.offer.name}", inputs=inputs,
                    tables=tables, expect=[], changes=changes)


def by_estimate(e: Evaluation, evaluated: Evaluated, i: int) -> bool:
    """Whether candidate ``i``'s λ* is the model's own estimate: the built-in one (no file's), in a
    plan whose λ* is the estimate group's (``sizing: estimate``)."""
    return (e.plan.switches.get("sizing") == "estimate" and evaluated.tags[i] == transfer.ESTIMATED
            and evaluated.from_file(i) is None)


def _offer_table(e: Evaluation, offer) -> TableData:
    """The deployments table with the offer as its one row: the offer's GPUs per node and hourly
    price, every other column at the model's default (an offer is rented by the hour)."""
    plan_table = e.scenario.tables["deployments"]
    row = {"name": offer.name}
    for column in plan_table.rows[0]:
        q = e.model.quantities.get(f"deployments.{column}")
        if column != "name" and q is not None:
            row[column] = math.nan if q.default is None else units.parse_value(q.default, q.unit)
    row.update(gpus_per_node=offer.gpus_per_node, node_hourly_cost=offer.node_hourly_cost)
    return TableData("deployments", [row], [{"source": offer.source, "as_of": offer.as_of, "note": offer.note}],
                     source=offer.source, as_of=offer.as_of, lines=[offer.line] if offer.line else [])
