"""The JSON document of ``capplan eval --json``: the contract scripts read.

First the decision as the record's Decision line says it (the headline, the
scenarios in which today's fleet breaks per deployment, the pending
measurements under the decisions). Per scenario: the key results (as the record and the diff show them), then
every quantity's value in its display unit, unit, tag, formula and
provenance, every table's columns and rows, and how far the decision holds
(each relevant input's interval and first flip on each side); then the
breakeven prices between deployments. Keys follow the model's
order and numbers have 12 significant digits, so the text is stable.
``format_version`` changes when a key is renamed or removed (adding keys
does not change it).
"""

from __future__ import annotations

from capplan import formatting
from capplan.engine.evaluate import Evaluation
from capplan.rendering import jsontext
from capplan.rendering.present import replaced_formula
from capplan.rendering.view import PlanView, ScenarioView

FORMAT_VERSION = 2      # 2: key_results per scenario; formula_replaced under the plan's switches


def document(view: PlanView) -> dict:
    plan = view.plan
    return {
        "format_version": FORMAT_VERSION,
        "plan": plan.name,
        "file": plan.file,
        "title": plan.title,
        "gpu": plan.gpu.id,
        "model": plan.model_entry.id,
        "switches": dict(sorted(plan.switches.items())),
        "decision": {"headline": view.headline, **view.decision},
        "scenarios": {s.name: {**_scenario(e, s), "how_far_the_decision_holds": view.holds.as_json(s.name)}
                      for e, s in zip(view.evaluations, view.scenarios)},
        "breakeven": view.holds.breakeven,
        **({"simulation": view.simulation.as_json()} if view.simulation else {}),
        **({"candidates": view.candidates.as_json()} if view.candidates else {}),
    }


def dumps(doc: dict) -> str:
    return jsontext.dumps(doc) + "\n"


def _scenario(e: Evaluation, view: ScenarioView) -> dict:
    quantities = {}
    for name in e.graph.order:
        q = e.model.quantities[name]
        if q.table:
            continue
        node = e.graph.nodes[name]
        item = {"value": formatting.plain(e.display(name)), "unit": q.unit,
                "tag": "derived" if node.formula else e.inputs[name].tag}
        if node.formula:
            item["formula"] = node.formula.text
            item["depends_on"] = sorted(e.provenance[name])
            pending = e.pending_inputs(name)
            if pending:
                item["pending_inputs"] = pending
        else:
            given = e.inputs[name]
            item.update({k: v for k, v in (("source", given.source), ("date", given.date), ("origin", given.origin)) if v})
            if given.pinned:
                item["pinned"] = True
                item["formula_replaced"] = replaced_formula(e, name).text
            if given.pending:
                item["pending"] = True
        quantities[name] = item
    tables = {}
    for tname, table in e.model.tables.items():
        if tname not in e.scenario.tables:
            continue
        columns = {}
        for col in table.columns:
            if col not in e.graph.nodes:        # a column of other switches (traffic: profile)
                continue
            q = e.model.quantities[col]
            columns[q.column] = {"unit": q.unit, "kind": q.kind}
            if e.graph.nodes[col].formula:
                columns[q.column]["formula"] = e.graph.nodes[col].formula.text
        rows = [{k: formatting.plain(v) for k, v in row.items()} for row in e.rows(tname)]
        tables[tname] = {"columns": columns, "rows": rows}
    return {"title": e.scenario.title, "changes": e.scenario.changes,
            "key_results": [k.as_json() for k in view.key_results],
            "quantities": quantities, "tables": tables}
