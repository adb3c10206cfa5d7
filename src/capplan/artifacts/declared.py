"""What the plan's layout declares the analyses weigh: key results and decisions.

``templates/layout.yaml`` says which quantities are key results (``key_results:``)
and what counts as a *decision* for the flip search and the simulation
(``holds:``: the key results with the listed roles, every gate of the layout's
sections; the inputs with the listed tags that the decisions rest on, every
pending one, and the derived quantities listed as ``pins``). The analyses and
the outputs read the same declaration, so the record shows what was searched.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import yaml

from capplan import formatting
from capplan.artifacts.answers import Target
from capplan.engine.evaluate import Evaluation
from capplan.resources import templates_dir


@lru_cache(maxsize=None)
def layout() -> dict:
    return yaml.safe_load((templates_dir() / "layout.yaml").read_text(encoding="utf-8"))


def holds_spec() -> dict:
    """The ``holds:`` part of the layout: roles, tags, pins, spread, near, breakeven."""
    return layout()["holds"]


def declared() -> list[dict]:
    """The key results of ``layout.yaml``, flattened: one entry per quantity,
    ``{quantity, label, role}`` with ``table`` set for a table column."""
    out = []
    for item in layout()["key_results"]:
        if "table" in item:
            out += [{"quantity": f"{item['table']}.{c['column']}", "table": item["table"],
                     "label": c["label"], "role": c.get("role")} for c in item["columns"]]
        else:
            out.append({"quantity": item["quantity"], "table": None, "label": item["label"],
                        "role": item.get("role")})
    return out


def row_keys(e: Evaluation, table: str) -> list[str]:
    """Each row's key as text ('aws-p4de.24xlarge', '10' for a rate)."""
    key = f"{table}.{e.model.tables[table].key}"
    return [formatting.key_text(v) for v in e.display(key)]


@dataclass(frozen=True)
class Decision:
    """A decision of one scenario (or a value reported with it, such as a row's cost)."""

    target: Target
    id: str                 # 'active_gpus', 'deployments[aws-p4de.24xlarge].nodes', 'memory_gate'
    label: str              # 'active GPUs', 'nodes', 'Gate 1: memory capacity'
    row: str | None         # the table row's key
    role: str | None


def decisions(e: Evaluation) -> tuple[list[Decision], list[Decision]]:
    """The decisions of a scenario, then the costs a flip reports with them (role ``cost``)."""
    roles = set(holds_spec()["roles"])
    decided, costs = [], []
    for item in declared():
        name = item["quantity"]
        if name not in e.graph.nodes or item["role"] not in roles | {"cost"}:
            continue
        chosen = decided if item["role"] in roles else costs
        if item["table"] is None:
            chosen.append(Decision(Target(name), name, item["label"], None, item["role"]))
            continue
        column = e.model.quantities[name].column
        for index, key in enumerate(row_keys(e, item["table"])):
            chosen.append(Decision(Target(name, index), f"{item['table']}[{key}].{column}", item["label"], key,
                                   item["role"]))
    for section in layout()["sections"]:
        for part in section.get("parts", []):
            gate = part.get("gate")
            if gate in e.graph.nodes:
                decided.append(Decision(Target(gate), gate, part["title"], None, "gate"))
    return decided, costs


def variables(e: Evaluation) -> list[Target]:
    """The inputs the record weighs: by tag or pending, resting under a
    decision; and the declared pins that a decision reads."""
    wanted = holds_spec()
    names: set[str] = set()
    for d in decisions(e)[0]:
        names |= {n for n in e.graph.upstream(d.target.name)} | {d.target.name}
    out = [Target(n) for n in e.graph.order if n in e.inputs and n in names
           and (e.inputs[n].tag in wanted["tags"] or e.inputs[n].pending)]
    out += [Target(n) for n in wanted["pins"] if n in names and n not in e.inputs]
    return out


@dataclass(frozen=True)
class Slot:
    """Where one declared key result sits in one scenario (absent quantities are skipped)."""

    id: str                 # 'active_gpus' or 'deployments[aws-p4de.24xlarge].nodes'
    quantity: str           # the model's name: 'active_gpus', 'deployments.nodes'
    row: str | None         # the table row's key, for a table column
    index: int | None       # the row's position in this scenario's table
    label: str              # 'active GPUs', 'nodes'
    role: str | None        # cost | size | count | rate | verdict (see layout.yaml)


def key_slots(e: Evaluation) -> list[Slot]:
    """The declared key results of one scenario: scalars first, then per row."""
    scalars, per_row = [], []
    keys: dict[str, list[str]] = {}         # a table's row keys, once for its columns
    for item in declared():
        name = item["quantity"]
        if name not in e.values:
            continue
        if item["table"] is None:
            scalars.append(Slot(name, name, None, None, item["label"], item["role"]))
            continue
        column = e.model.quantities[name].column
        if item["table"] not in keys:
            keys[item["table"]] = row_keys(e, item["table"])
        for index, key in enumerate(keys[item["table"]]):
            per_row.append((index, Slot(f"{item['table']}[{key}].{column}", name, key, index, item["label"],
                                        item["role"])))
    per_row.sort(key=lambda pair: pair[0])             # stable: row by row, columns as declared
    return scalars + [s for _, s in per_row]
