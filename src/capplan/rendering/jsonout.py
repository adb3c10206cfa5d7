"""The JSON document of ``capplan eval --json``: the contract scripts read.

Per scenario: every quantity's value in its display unit, unit, tag, formula
and provenance; every table's columns and rows. Keys follow the model's
order, floats are Python's shortest round-trip repr, so the text is stable.
"""

from __future__ import annotations

import json
import math

from capplan.engine.evaluate import Evaluation
from capplan.loading.plan import Plan


def document(plan: Plan, evaluations: list[Evaluation]) -> dict:
    return {
        "plan": plan.name,
        "file": plan.file,
        "title": plan.title,
        "gpu": plan.gpu.id,
        "model": plan.model_entry.id,
        "switches": dict(sorted(plan.switches.items())),
        "scenarios": {e.scenario.name: _scenario(e) for e in evaluations},
    }


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _scenario(e: Evaluation) -> dict:
    quantities = {}
    for name in e.graph.order:
        q = e.model.quantities[name]
        if q.table:
            continue
        node = e.graph.nodes[name]
        item = {"value": plain(e.display(name)), "unit": q.unit, "tag": "derived" if node.formula else e.inputs[name].tag}
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
                item["formula_replaced"] = next(f for _, f in q.formulas).text
            if given.pending:
                item["pending"] = True
        quantities[name] = item
    tables = {}
    for tname, table in e.model.tables.items():
        if tname not in e.scenario.tables:
            continue
        columns = {}
        for col in table.columns:
            q = e.model.quantities[col]
            columns[q.column] = {"unit": q.unit, "kind": q.kind}
            if e.graph.nodes[col].formula:
                columns[q.column]["formula"] = e.graph.nodes[col].formula.text
        rows = [{k: plain(v) for k, v in row.items()} for row in e.rows(tname)]
        tables[tname] = {"columns": columns, "rows": rows}
    return {"title": e.scenario.title, "changes": e.scenario.changes, "quantities": quantities, "tables": tables}


def plain(value):
    """JSON-ready: 12 significant digits (no float noise such as
    7.000000000000001 in a diff), whole numbers as ints, NaN as null."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        value = float(f"{value:.12g}")
        if value.is_integer() and abs(value) < 2 ** 53:
            return int(value)
    return value
