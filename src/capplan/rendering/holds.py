"""How far the decision holds, in words: the flip points of
:mod:`capplan.analysis.holds` as the record, the JSON document, ``capplan
seek`` and ``capplan diff`` say them.

An input's interval reads '(56, 63] req/s'; a flip 'above 63 req/s: active
GPUs 9 → 10'; a breakeven 'aws matches fractional on cost per 1M tokens at a
price of $12.45/h'. The numbers are the analysis's; this module only words them.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property

from capplan import formatting
from capplan import collector
from capplan.artifacts.declared import decisions, holds_spec
from capplan.artifacts.answers import UNDEFINED
from capplan.artifacts.holds import Breakeven, FlipPoints, InputInterval, Side
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import factor


# -- numbers and words ---------------------------------------------------------------------

_UNSEEN = object()

def display(e: Evaluation, name: str, value) -> float | bool | None:
    """An exact base-unit value in its display unit, JSON-ready."""
    q = e.model.quantities[name]
    if value == UNDEFINED:
        return None
    if q.kind == "bool":
        return bool(value)
    return formatting.plain(float(Fraction(value) / factor(q.unit)))


def text(e: Evaluation, name: str, value, unit: bool = True, shown=None) -> str:
    """A target's value for a reader ('9 GPUs', 'PASS'; '9' without its unit); ``shown``: its
    :func:`display`, where the caller has it."""
    q = e.model.quantities[name]
    if value == UNDEFINED:
        return "undefined (the plan does not evaluate)"
    return formatting.quantity(display(e, name, value) if shown is None else shown, q.unit if unit else "", q.kind)


def unit_label(q) -> str:
    """A quantity's unit as a reader writes it after a number ('req/s', '$/h', 'GPUs')."""
    return formatting.MONEY_UNITS.get(q.unit, q.unit) if q.kind == "money" else formatting.unit_label(q.unit)


class InputHolds(InputInterval):
    """One input's interval and first flips (:class:`capplan.artifacts.holds.InputInterval`), in words."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._shown: dict = {}          # :meth:`shown`'s values, this input's own

    @classmethod
    def of(cls, found: InputInterval, shown: dict | None = None) -> InputHolds:
        """The words of an interval the analysis found (its sides are not worked out again).
        ``shown``: :func:`display`'s values by (quantity, value), shared by a plan's inputs."""
        worded = cls.__new__(cls)
        worded.__dict__.update(vars(found))
        worded._shown = {} if shown is None else shown
        return worded

    def shown(self, name: str, value) -> float | bool | None:
        """:func:`display`, remembered: a plan's flips repeat the same few decision values
        thousands of times (equal values, 9 and Fraction(9), display alike)."""
        key = (name, value)
        out = self._shown.get(key, _UNSEEN)
        if out is _UNSEEN:
            out = self._shown[key] = display(self.e, name, value)
        return out

    def value_text(self, v: Fraction) -> str:
        return formatting.quantity(self.display(v), self.quantity.unit, self.quantity.kind)

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
        return " / ".join(self.margin(s) for s in (self.below, self.above))

    def margin(self, side: Side) -> str:
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
            change = f"{words}{colon} {self._text(name, before[i])} → {self._text(name, after[i])}"
            j = cost_of.get(d.row)
            if d.role == "size" and j is not None and UNDEFINED not in (before[j], after[j]):
                cost = self.costs[j - len(self.decided)]
                delta = self.shown(cost.target.name, after[j] - before[j])
                change += f" ({cost.label} {'+' if delta >= 0 else '−'}{formatting.money(abs(delta))})"
            out.append(change)
        return out

    def _text(self, name: str, value) -> str:
        """:func:`text` without the unit, from :meth:`shown`."""
        return text(self.e, name, value, False, self.shown(name, value))

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
                "decisions_before": {d.id: self.shown(d.target.name, before[i]) for i, d in enumerate(self.decided)},
                "decisions_after": {d.id: self.shown(d.target.name, after[i]) for i, d in enumerate(self.decided)}}


def _sides(side: Side) -> tuple[tuple, tuple]:
    """(today's side, the far side) of a flip."""
    flip = side.flip
    return (flip.below, flip.above) if side.direction == "above" else (flip.above, flip.below)


def _json_margin(side: Side):
    return None if side.margin is None else formatting.plain(side.margin)


# -- a plan --------------------------------------------------------------------------------

class HoldsView:
    """The flip points of a plan (:class:`capplan.artifacts.holds.FlipPoints`) as the outputs word them."""

    def __init__(self, found: FlipPoints):
        self.found = found
        self.evaluations = found.evaluations
        self._worded: dict[str, list[InputHolds]] = {}
        self._shown: dict = {}          # display() by (quantity, value): see InputHolds.shown
        self._json: dict[str, list[dict]] = {}

    def of(self, scenario: str) -> list[InputHolds]:
        """One scenario's inputs, the most fragile first."""
        if scenario not in self._worded:
            with collector.deferred():              # see capplan.collector
                self._worded[scenario] = [InputHolds.of(h, self._shown) for h in self.found.of(scenario)]
        return self._worded[scenario]

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
        return {"decisions": labels, "rows": rows, "breakeven": self.breakeven,
                "breakeven_lowest": self.found.lowest_only(), "chart": chart,
                "spread": holds_spec()["spread"], "title": self.evaluations[0].scenario.description}

    def as_json(self, scenario: str) -> list[dict]:
        if scenario not in self._json:
            with collector.deferred():              # see capplan.collector
                self._json[scenario] = [h.as_json() for h in self.of(scenario)]
        return self._json[scenario]

    @cached_property
    def breakeven(self) -> list[dict]:
        """Each breakeven ('aws matches fractional per 1M tokens at $12.45/h'), JSON-ready."""
        return [_breakeven(b) for b in self.found.breakevens]


def _breakeven(b: Breakeven) -> dict:
    e, probe, key, other, label, compare, target = b.e, b.probe, b.key, b.other, b.label, b.compare, b.target
    q = probe.quantity
    shown = [formatting.plain(float(s.low / factor(q.unit))) for s in b.solutions if s.low == s.high]
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
