"""How far the decision holds: the view's flip points, in words and numbers.

What counts as a *decision* and which inputs a reader wants to see are
declared in ``templates/layout.yaml`` (``holds:``): the key results with the
listed roles (GPU counts, nodes, the fixed-fleet verdicts) plus every gate of
the layout's sections; the inputs with the listed tags that the decisions
rest on, every pending one, and the derived quantities listed as ``pins``
(varied as a pinned value, as a scenario pins λ*). This module asks
:mod:`capplan.analysis.flips` for the nearest flip on each side of each such
input, in every scenario, and words them — the record, the JSON document,
``capplan seek`` and ``capplan diff`` all read them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from capplan import formatting
from capplan.analysis import flips
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import factor
from capplan.analysis.flips import UNDEFINED, Flip, Holds, Probe, Search, Target
from capplan.rendering.layout import layout
from capplan.rendering.view import declared, row_keys


ALL_PAIRS = 6          # rows of the priced table up to which every ordered pair gets its breakeven


def spec() -> dict:
    return layout()["holds"]


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
    roles = set(spec()["roles"])
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
    wanted = spec()
    names: set[str] = set()
    for d in decisions(e)[0]:
        names |= {n for n in e.graph.upstream(d.target.name)} | {d.target.name}
    out = [Target(n) for n in e.graph.order if n in e.inputs and n in names
           and (e.inputs[n].tag in wanted["tags"] or e.inputs[n].pending)]
    out += [Target(n) for n in wanted["pins"] if n in names and n not in e.inputs]
    return out


# -- numbers and words ---------------------------------------------------------------------

def display(e: Evaluation, name: str, value) -> float | bool | None:
    """An exact base-unit value in its display unit, JSON-ready."""
    q = e.model.quantities[name]
    if value == UNDEFINED:
        return None
    if q.kind == "bool":
        return bool(value)
    return formatting.plain(float(Fraction(value) / factor(q.unit)))


def text(e: Evaluation, name: str, value, unit: bool = True) -> str:
    """A target's value for a reader ('9 GPUs', 'PASS'; '9' without its unit)."""
    q = e.model.quantities[name]
    if value == UNDEFINED:
        return "undefined (the plan does not evaluate)"
    return formatting.quantity(display(e, name, value), q.unit if unit else "", q.kind)


def unit_label(q) -> str:
    """A quantity's unit as a reader writes it after a number ('req/s', '$/h', 'GPUs')."""
    return formatting.MONEY_UNITS.get(q.unit, q.unit) if q.kind == "money" else formatting.unit_label(q.unit)


def _label(e: Evaluation, variable: Target) -> str:
    if variable.index is None:
        return variable.name
    q = e.model.quantities[variable.name]
    return f"{q.table}[{row_keys(e, q.table)[variable.index]}].{q.column}"


@dataclass
class Side:
    """The first flip on one side of today's value, for one input."""

    flip: Flip | None
    direction: str          # 'below' | 'above'
    end: Fraction           # where the search stopped
    domain_end: bool        # … because the input's domain ends there
    distance: Fraction      # from today to the flip (or to the end), base units, ≥ 0
    margin: float | None    # the distance relative to today (None when today is 0)

    @property
    def found(self) -> bool:
        return self.flip is not None


class InputHolds:
    """One input of one scenario: today's value, the interval in which nothing flips, its two first flips."""

    def __init__(self, e: Evaluation, probe: Probe, found: Holds, decided: list[Decision],
                 costs: list[Decision]):
        self.e, self.probe, self.found = e, probe, found
        self.decided, self.costs = decided, costs
        self.variable = probe.variable
        self.name = _label(e, probe.variable)
        self.quantity = probe.quantity
        given = e.inputs.get(probe.variable.name)
        self.tag = given.tag if given else "derived"
        self.pending = bool(given and given.pending)
        self.pinned = given is None or given.pinned
        self.below = self._side(found.low, "below", found.lo)
        self.above = self._side(found.high, "above", found.hi)

    def _side(self, flip: Flip | None, direction: str, end: Fraction) -> Side:
        today = self.today
        distance = abs((flip.value if flip else end) - today)
        domain = self.quantity.domain
        bound = None if domain is None else domain.low if direction == "below" else domain.high
        domain_end = bound is not None and math.isfinite(bound) and Fraction(repr(bound)) * factor(
            self.quantity.unit) == end
        return Side(flip, direction, end, domain_end, distance, float(distance / today) if today else None)

    @property
    def today(self) -> Fraction:
        return self.found.today

    @cached_property
    def fragility(self) -> tuple:
        """The sort key: inputs with a flip before those without, then by the smallest relative margin."""
        margins = [s.margin for s in (self.below, self.above) if s.found and s.margin is not None]
        flips = self.below.found or self.above.found
        return (not flips, min(margins) if margins else math.inf)

    def value_text(self, v: Fraction) -> str:
        return formatting.quantity(self.display(v), self.quantity.unit, self.quantity.kind)

    def display(self, v: Fraction) -> float:
        return formatting.plain(float(v / factor(self.quantity.unit)))

    def interval(self) -> str:
        """'(56, 63] req/s'; an end without a flip is the domain's end, or '≤6' / '≥600' where the search stopped."""
        ends = []
        for side, opening, closing in ((self.below, "(", "["), (self.above, ")", "]")):
            if side.found:
                closed = (side.flip.side == "above") == (side.direction == "below")
                value, bracket = formatting.number(self.display(side.flip.value)), closing if closed else opening
            else:
                value = formatting.number(self.display(side.end))
                bracket = closing
                if side.domain_end:
                    domain = self.quantity.domain
                    bracket = opening if (domain.low_open if side.direction == "below" else domain.high_open) \
                        else closing
                else:
                    value = ("≤" if side.direction == "below" else "≥") + value
            ends.append((bracket, value))
        (left_bracket, left), (right_bracket, right) = ends
        return f"{left_bracket}{left}, {right}{right_bracket} {unit_label(self.quantity)}".strip()

    def margins(self) -> str:
        """'−6.67 % / +5 %' (absolute distances when today's value is 0)."""
        return " / ".join(self._margin(s) for s in (self.below, self.above))

    def _margin(self, side: Side) -> str:
        sign = "−" if side.direction == "below" else "+"
        if side.margin is None:
            amount = formatting.quantity(self.display(side.distance), self.quantity.unit, self.quantity.kind)
        else:
            amount = f"{formatting.number(side.margin * 100, 3)} %"
        if side.distance == 0 and not side.found:
            return "—"
        if side.found:
            return f"{sign}{amount}"
        return f"{sign}{amount} (domain end)" if side.domain_end else f"beyond {sign}{amount}"

    def side(self, flip: Flip, direction: str) -> Side:
        """Any flip on one side of today's value (not only the first), worded from the interval before it."""
        distance = abs(flip.value - self.today)
        return Side(flip, direction, flip.value, False, distance, float(distance / self.today) if self.today else None)

    def where(self, side: Side) -> str:
        """'above 63 req/s', 'from 10.71 req/s', 'below 9.524 req/s', 'at or below 56 req/s'."""
        flip = side.flip
        value = self.value_text(flip.value)
        if side.direction == "above":
            return f"above {value}" if flip.side == "below" else f"from {value}"
        return f"below {value}" if flip.side == "above" else f"at or below {value}"

    def changes(self, side: Side) -> list[str]:
        """What changes across the flip, from today's side: 'active GPUs 9 → 10',
        'fractional-a100-80gb nodes 10 → 11 (monthly cost +$1,822.68)', 'Gate 2: …: PASS → FAIL'."""
        before, after = _sides(side)
        cost_of = {c.row: j for j, c in enumerate(self.costs, len(self.decided)) if c.row}
        out = []
        for i, d in enumerate(self.decided):
            if before[i] == after[i]:
                continue
            name = d.target.name
            words = f"{d.row} {d.label}" if d.row else d.label
            colon = ":" if self.e.model.quantities[name].kind == "bool" else ""
            change = f"{words}{colon} {text(self.e, name, before[i], False)} → {text(self.e, name, after[i], False)}"
            j = cost_of.get(d.row)
            if d.role == "size" and j is not None and UNDEFINED not in (before[j], after[j]):
                cost = self.costs[j - len(self.decided)]
                delta = display(self.e, cost.target.name, after[j] - before[j])
                change += f" ({cost.label} {'+' if delta >= 0 else '−'}{formatting.money(abs(delta))})"
            out.append(change)
        return out

    def sentence(self, side: Side) -> str:
        """'above 63 req/s: active GPUs 9 → 10; …', 'none up to the domain's end, 1', 'none down to 6 req/s'."""
        if side.found:
            return f"{self.where(side)}: {'; '.join(self.changes(side))}"
        end = self.value_text(side.end)
        if side.domain_end:
            return f"none up to the domain's end, {end}" if side.direction == "above" else \
                f"none down to the domain's end, {end}"
        return f"none {'down' if side.direction == 'below' else 'up'} to {end}"

    def as_json(self) -> dict:
        return {"input": self.name, "tag": self.tag, "pending": self.pending, "pinned": self.pinned,
                "unit": self.quantity.unit, "today": self.display(self.today),
                "holds": {"low": self._end(self.below), "high": self._end(self.above), "text": self.interval()},
                "margin": {"below": _json_margin(self.below), "above": _json_margin(self.above)},
                "first_flip": {"below": self.flip_json(self.below), "above": self.flip_json(self.above)}}

    def _end(self, side: Side) -> dict:
        if not side.found:
            return {"value": self.display(side.end), "flip": False, "domain_end": side.domain_end}
        closed = (side.flip.side == "above") == (side.direction == "below")
        return {"value": self.display(side.flip.value), "flip": True, "closed": closed}

    def flip_json(self, side: Side) -> dict | None:
        """The flip as a number in the input's display unit, the side the value
        belongs to, and every decision on today's side (before) and beyond (after)."""
        if not side.found:
            return None
        before, after = _sides(side)
        flip = side.flip
        return {"value": self.display(flip.value), "unit": self.quantity.unit, "belongs_to": flip.side,
                "exact": flip.exact, "text": self.sentence(side),
                "decisions_before": {d.id: display(self.e, d.target.name, before[i]) for i, d in enumerate(self.decided)},
                "decisions_after": {d.id: display(self.e, d.target.name, after[i]) for i, d in enumerate(self.decided)}}


def _sides(side: Side) -> tuple[tuple, tuple]:
    """(today's side, the far side) of a flip."""
    flip = side.flip
    return (flip.below, flip.above) if side.direction == "above" else (flip.above, flip.below)


def _json_margin(side: Side):
    return None if side.margin is None else formatting.plain(side.margin)


# -- a plan --------------------------------------------------------------------------------

class PlanHolds:
    """The flip points of every relevant input of every scenario of a plan (searched lazily)."""

    def __init__(self, evaluations: list[Evaluation]):
        self.evaluations = evaluations
        self.search = Search(evaluations)
        self._found: dict[str, list[InputHolds]] = {}

    def probe(self, e: Evaluation, variable: Target) -> tuple[Probe, list[Decision], list[Decision]]:
        decided, costs = decisions(e)
        targets = [d.target for d in decided + costs]
        return self.search.probe(e.scenario.name, variable, targets, len(decided)), decided, costs

    def inputs(self, e: Evaluation) -> list[InputHolds]:
        """Every relevant input, the most fragile first."""
        spread = Fraction(spec()["spread"])
        out = []
        for variable in variables(e):
            probe, decided, costs = self.probe(e, variable)
            lo, hi = flips.base_range(probe.today, probe.quantity, spread)
            out.append(InputHolds(e, probe, probe.holds(lo, hi), decided, costs))
        return sorted(out, key=lambda h: (*h.fragility, h.name))

    def of(self, scenario: str) -> list[InputHolds]:
        """One scenario's inputs (:meth:`inputs`), searched when first asked for: the record
        and the workbook show the nominal scenario's alone, the JSON every scenario's."""
        if scenario not in self._found:
            self._found[scenario] = self.inputs(self.search.evaluations[scenario])
        return self._found[scenario]

    @property
    def nominal(self) -> list[InputHolds]:
        return self.of(self.evaluations[0].scenario.name)

    def section(self, chart: str) -> dict:
        """The record's section: the decisions weighed, one row per input of the
        nominal scenario, the breakevens, and the chart's file name."""
        decided, _ = decisions(self.evaluations[0])
        labels = list(dict.fromkeys(d.label for d in decided))
        rows = [{"name": h.name, "tag": h.tag + (", pinned" if h.tag == "derived" else ""), "pending": h.pending, "today": h.value_text(h.today),
                 "interval": h.interval(), "margins": h.margins(), "below": h.sentence(h.below),
                 "above": h.sentence(h.above)} for h in self.nominal]
        table = self.evaluations[0].scenario.tables.get(spec()["breakeven"]["table"])
        lowest = table is not None and len(table.rows) > ALL_PAIRS
        return {"decisions": labels, "rows": rows, "breakeven": self.breakeven, "breakeven_lowest": lowest,
                "chart": chart,
                "spread": spec()["spread"]}

    def as_json(self, scenario: str) -> list[dict]:
        return [h.as_json() for h in self.of(scenario)]

    @cached_property
    def breakeven(self) -> list[dict]:
        """For every ordered pair of rows of the priced table (the nominal
        scenario): the price of the first at which it matches the second on the
        compared quantity ('aws matches fractional per 1M tokens at $12.45/h').
        Past :data:`ALL_PAIRS` rows, each row against the other row lowest on the
        compared quantity today, the one it has to match (500 offers would be
        249,500 sentences).

        One probe per row: the row's own price moves only its own value of the
        compared quantity, and the probe solves it against every other row's
        (a constant, or — should rows be coupled — its own expression)."""
        wanted = spec()["breakeven"]
        e = self.evaluations[0]
        table = wanted["table"]
        if table not in e.scenario.tables:
            return []
        price, compare = f"{table}.{wanted['price']}", f"{table}.{wanted['compare']}"
        keys = row_keys(e, table)
        label = next((d["label"] for d in declared() if d["quantity"] == compare), e.model.quantities[compare].column)
        today = self.search.values(e.scenario.name)[compare]
        out = []
        for a, key in enumerate(keys):
            others = [b for b in range(len(keys)) if b != a]
            if len(keys) > ALL_PAIRS:
                others = [min(others, key=lambda b: (today[b], b))] if others else []
            variable = Target(price, a)
            probe = self.search.probe(e.scenario.name, variable, [Target(compare, a)] +
                                      [Target(compare, b) for b in others], 0)
            _lo, hi = flips.base_range(probe.today, probe.quantity, Fraction(spec()["spread"]) ** 2)
            at_today = probe.at(probe.today)
            for j, b in enumerate(others, 1):
                solutions = probe.solve(0, j, Fraction(0), hi)
                out.append(_breakeven(e, probe, key, keys[b], label, compare, at_today[j], solutions))
        return out


def _breakeven(e, probe: Probe, key: str, other: str, label: str, compare: str, target, solutions) -> dict:
    q = probe.quantity
    shown = [formatting.plain(float(s.low / factor(q.unit))) for s in solutions if s.low == s.high]
    item = {"row": key, "other": other, "price": q.column, "unit": q.unit,
            "today": formatting.plain(float(probe.today / factor(q.unit))), "compare": e.model.quantities[compare].column,
            "target": display(e, compare, target), "breakeven": shown[0] if shown else None}
    target_text = text(e, compare, target)
    if not shown:
        item["text"] = f"{key} does not match {other} on {label} ({target_text}) at any {q.column}"
        return item
    change = (shown[0] - item["today"]) / item["today"] if item["today"] else None
    item["change"] = formatting.plain(change) if change is not None else None
    pct = f", {'+' if change >= 0 else '−'}{formatting.number(abs(change) * 100, 3)} %" if change is not None else ""
    item["text"] = (f"{key} matches {other} on {label} ({target_text}) at a {q.column} of "
                    f"{formatting.quantity(shown[0], q.unit, q.kind)} (today {formatting.quantity(item['today'], q.unit, q.kind)}{pct})")
    return item
