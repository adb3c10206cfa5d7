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

import numpy as np

from capplan import formatting
from capplan.engine.evaluate import Evaluation
from capplan.rendering import demand as demandview
from capplan.rendering import jsontext
from capplan.rendering.present import replaced_formula
from capplan.rendering.keyresults import ScenarioView
from capplan.rendering.view import PlanView

FORMAT_VERSION = 2      # 2: key_results per scenario; formula_replaced under the plan's switches


def document(view: PlanView) -> dict:
    return Document(view).as_dict()


def dumps(doc: dict) -> str:
    return jsontext.dumps(doc) + "\n"


class Document:
    """The document of one plan's view, which can be written a scenario at a time: a build writes
    the scenarios each of its processes searched (:meth:`scenario_part`, in each) and writes the
    document around them (:meth:`encoded`). The text is that of :func:`dumps` of :func:`document` either way."""

    def __init__(self, view: PlanView):
        self.view = view
        self.shared = _Shared()
        self.writer = jsontext.Writer()

    def as_dict(self, scenarios: dict | None = None) -> dict:
        """The document; ``scenarios``: each scenario's entry by name, when made already."""
        view, plan = self.view, self.view.plan
        if scenarios is None:
            scenarios = {s.name: self.scenario(i) for i, s in enumerate(view.scenarios)}
        return {
            "format_version": FORMAT_VERSION,
            "plan": plan.name,
            "file": plan.file,
            "title": plan.title,
            "gpu": plan.gpu.id,
            "model": plan.model_entry.id,
            "switches": dict(sorted(plan.switches.items())),
            "decision": {"headline": view.headline, **view.decision},
            "scenarios": scenarios,
            "breakeven": view.holds.breakeven,
            **({"simulation": view.simulation.as_json()} if view.simulation else {}),
            **({"candidates": view.candidates.as_json()} if view.candidates else {}),
            **({"electricity_price_flips": demandview.power_json(view.nominal, view.artifacts.power_flips)}
               if view.artifacts.power_flips else {}),
        }

    def scenario(self, i: int) -> dict:
        """The ``i``-th scenario's entry, its flip search included."""
        e, s = self.view.evaluations[i], self.view.scenarios[i]
        return {**_scenario(e, s, self.shared), "how_far_the_decision_holds": self.view.holds.as_json(s.name)}

    def scenario_part(self, i: int) -> jsontext.Written | None:
        """The ``i``-th scenario's entry as the document holds it, in UTF-8 (None: left to ``json``)."""
        return self.writer.part(self.scenario(i), 2)

    def encoded(self, written: dict[str, jsontext.Written | None]) -> bytes:
        """The document's text in UTF-8, each scenario's from ``written`` (by name) where there, else written now."""
        parts = {}
        for i, s in enumerate(self.view.scenarios):
            part = written.get(s.name) or self.scenario_part(i)
            if part is None:
                return dumps(self.as_dict()).encode("utf-8")
            parts[s.name] = part
        data = self.writer.encoded(self.as_dict(parts), "\n")
        return dumps(self.as_dict()).encode("utf-8") if data is None else data


class _Shared:
    """What many scenarios of one document have in common, made once and shared: a quantity's
    entry with the same value, a table's columns under the same graph, rows with the same values.
    Each is keyed by everything it is made from, so sharing cannot change a byte; the JSON
    writer then writes a shared object once (:mod:`capplan.rendering.jsontext`)."""

    def __init__(self):
        self.entries: dict[tuple, dict] = {}
        self.sorted: dict[frozenset, list[str]] = {}
        self.numbers: dict[float, object] = {}
        self.columns: dict[tuple, dict] = {}
        self.rows: dict[tuple, list[dict]] = {}

    def plain(self, value):
        """``formatting.plain(value)``, found once per float (equal floats print alike; NaN is never
        found, and a bool, equal to 1.0 or 0.0, is never looked up)."""
        if type(value) is not float:
            return formatting.plain(value)
        known = self.numbers.get(value)
        if known is None:
            known = self.numbers[value] = formatting.plain(value)
        return known

    def names(self, names: frozenset[str]) -> list[str]:
        known = self.sorted.get(names)
        if known is None:
            known = self.sorted[names] = sorted(names)
        return known

    def entry(self, key: tuple, make) -> dict:
        """The entry made from ``key`` (``make(key)`` the first time); a key holding a
        value no dict can hold (a list) is made every time."""
        try:
            known = self.entries.get(key)
        except TypeError:
            return make(key)
        if known is None:
            known = self.entries[key] = make(key)
        return known


def _scenario(e: Evaluation, view: ScenarioView, shared: _Shared) -> dict:
    pending_inputs = frozenset(n for n, given in e.inputs.items() if given.pending)
    quantities = {}
    for name in e.graph.order:
        q = e.model.quantities[name]
        if q.table:
            continue
        node = e.graph.nodes[name]
        value = shared.plain(e.display(name))
        if node.formula:
            under = e.provenance[name]
            key = (name, type(value), value, q.unit, node.formula.text, under, under & pending_inputs)
            quantities[name] = shared.entry(key, lambda key: _derived(key, shared))
        else:
            given = e.inputs[name]
            replaced = replaced_formula(e, name).text if given.pinned else None
            key = (name, type(value), value, q.unit, given.tag, given.source, given.date, given.origin, replaced,
                   given.pending)
            quantities[name] = shared.entry(key, _given)
    tables = {}
    for tname, table in e.model.tables.items():
        if tname not in e.scenario.tables:
            continue
        tables[tname] = {"columns": _columns(e, tname, table.columns, shared), "rows": _rows(e, tname, shared)}
    return {"title": e.scenario.title, "changes": e.scenario.changes,
            "key_results": [k.as_json() for k in view.key_results],
            "quantities": quantities, "tables": tables}


def _derived(key: tuple, shared: _Shared) -> dict:
    _, _, value, unit, formula, under, pending = key
    item = {"value": value, "unit": unit, "tag": "derived", "formula": formula, "depends_on": shared.names(under)}
    if pending:
        item["pending_inputs"] = shared.names(pending)
    return item


def _given(key: tuple) -> dict:
    _, _, value, unit, tag, source, date, origin, replaced, pending = key
    item = {"value": value, "unit": unit, "tag": tag}
    item.update({k: v for k, v in (("source", source), ("date", date), ("origin", origin)) if v})
    if replaced is not None:
        item["pinned"] = True
        item["formula_replaced"] = replaced
    if pending:
        item["pending"] = True
    return item


def _columns(e: Evaluation, tname: str, names: tuple[str, ...], shared: _Shared) -> dict:
    """A table's columns (unit, kind, formula): the same under the same graph."""
    key = (tname, id(e.graph), id(e.model))        # both live as long as the document's evaluations
    known = shared.columns.get(key)
    if known is None:
        known = shared.columns[key] = {}
        for col in names:
            if col not in e.graph.nodes:        # a column of other switches (traffic: profile)
                continue
            q = e.model.quantities[col]
            known[q.column] = {"unit": q.unit, "kind": q.kind}
            if e.graph.nodes[col].formula:
                known[q.column]["formula"] = e.graph.nodes[col].formula.text
    return known


def _rows(e: Evaluation, tname: str, shared: _Shared) -> list[dict]:
    """A table's rows in display units, 12 significant digits: the same for the same values."""
    cols = [c for c in e.model.tables[tname].columns if c in e.values]
    key = (tname, len(e.scenario.tables[tname].rows), *((c, _exactly(e.values[c])) for c in cols))
    known = shared.rows.get(key)
    if known is None:
        known = shared.rows[key] = e.rows(tname, _plain_column)
    return known


def _exactly(column) -> tuple:
    """A column's values as a key: the bits of numbers, the text of text."""
    if isinstance(column, np.ndarray):
        return column.dtype.str, column.shape, column.tobytes()
    return type(column), tuple(column)


def _plain_column(values: list) -> list:
    """``formatting.plain`` of each value; in a column of floats a whole one below 10^12 (which
    12 digits print exactly) is an int without the round trip through text, all at once."""
    if not values or set(map(type, values)) != {float}:
        return [formatting.plain(v) for v in values]
    column = np.array(values)
    whole = (column == np.trunc(column)) & (np.abs(column) < 1e12)
    plain = np.where(whole, column, 0.0).astype(np.int64).tolist()
    for i in np.flatnonzero(~whole).tolist():
        plain[i] = formatting.plain(values[i])
    return plain
