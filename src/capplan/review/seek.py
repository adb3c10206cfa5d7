"""``capplan seek``: how far one input can move before a decision flips; goal seek.

``capplan seek PLAN INPUT`` prints the interval around the input's value in
which every decision of the scenario holds, then every flip point on each
side in order, each with what changes. ``--target QUANTITY=VALUE`` instead
finds the input values at which a quantity reaches a value — or another
quantity: ``--target deployments[aws-p4de.24xlarge].cost_per_million_tokens=
deployments[fractional-a100-80gb].cost_per_million_tokens`` is the breakeven
price. The numbers come from :mod:`capplan.analysis.flips`, the words from
:mod:`capplan.rendering.holds`, so the command, the record and the JSON agree.
"""

from __future__ import annotations

import json
from fractions import Fraction

from capplan import formatting
from capplan.language import domains, units
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import rational
from capplan.analysis.flips import MAX_FLIPS, base_range
from capplan.artifacts.answers import Holds, Solution, Target, Walk
from capplan.errors import CapplanError
from capplan.analysis.holds import PlanHolds
from capplan.rendering.holds import InputHolds, display, text, unit_label
from capplan.rendering.markdown import cell, code
from capplan.review.explain import resolve

DEFAULT_SPREAD = Fraction(2)          # without --range: today ÷ 2 … × 2, within the domain


def variable(e: Evaluation, reference: str) -> Target:
    """What INPUT names: an input, a derived scalar (pinned while it varies) or an input table cell."""
    name, index = resolve(e, reference)
    q = e.model.quantities[name]
    if q.kind in ("bool", "text"):
        raise CapplanError(f"'{reference}' is a {'pass/fail result' if q.kind == 'bool' else 'text'}; "
                           "seek varies a number", file=e.plan.file)
    if index is not None and not q.is_input:
        raise CapplanError(f"'{reference}' is a computed column; vary one of its inputs "
                           f"({', '.join(e.graph.nodes[name].deps)})", file=e.plan.file)
    if index is None and q.table:
        raise CapplanError(f"'{reference}' is a whole column; name one row: {q.table}[ROW].{q.column}",
                           file=e.plan.file)
    return Target(name, index)


def search_range(e: Evaluation, probe, given: list[str] | None) -> tuple[Fraction, Fraction]:
    """``--range LO HI`` in the input's display unit (or with a unit), inside its domain; else ÷2 … ×2."""
    q = probe.quantity
    if not given:
        return base_range(probe.today, q, DEFAULT_SPREAD)
    ends = []
    for raw in given:
        try:
            value = units.parse_value(raw, q.unit)
            domains.require(q, value, raw)
        except CapplanError as err:
            raise CapplanError(f"--range {raw}: {err.message}", file=e.plan.file) from None
        ends.append(rational(value, q.unit))
    lo, hi = ends
    if not lo < hi:
        raise CapplanError(f"--range {given[0]} {given[1]}: the first end must be below the second", file=e.plan.file)
    return lo, hi


def report(evaluations: list[Evaluation], scenario: str, reference: str, given_range: list[str] | None,
           fmt: str) -> str:
    """The interval around today's value and every flip point in the range, nearest
    first each way; or, when the range leaves today's value out, the flips across it
    from the end nearest today, and no interval claimed around today."""
    e = next(x for x in evaluations if x.scenario.name == scenario)
    holds = PlanHolds(evaluations)
    probe, decided, costs = holds.probe(e, variable(e, reference))
    lo, hi = search_range(e, probe, given_range)
    today = probe.today
    inside = lo <= today <= hi
    if inside:
        down, up = probe.walk(today, lo), probe.walk(today, hi)
    else:
        start, end = (lo, hi) if today < lo else (hi, lo)
        crossing = probe.walk(start, end)
        down, up = (Walk([], start), crossing) if today < lo else (crossing, Walk([], start))
    nearest = Holds(today, down.flips[0] if down.flips and inside else None,
                    up.flips[0] if up.flips and inside else None, down.reached, up.reached)
    view = InputHolds(e, probe, nearest, decided, costs)
    sides = [(view.side(f, "below"), "below") for f in down.flips]      # nearest first, each way
    sides += [(view.side(f, "above"), "above") for f in up.flips]
    now = probe.at(today, len(decided))
    stops = _stops(view, down, up, lo, hi)
    if fmt == "json":
        doc = {**_head(e, view, lo, hi), "today_in_range": inside,
               "holds": view.as_json()["holds"] if inside else None,
               "margin": view.as_json()["margin"] if inside else None,
               "decisions_today": {d.id: display(e, d.target.name, now[i]) for i, d in enumerate(decided)},
               "flips": [{"direction": direction, **view.flip_json(side)} for side, direction in sides],
               "searched_to": {"low": view.display(down.reached), "high": view.display(up.reached)},
               "stopped": stops}
        return _dumps(doc)
    today_text = "; ".join(f"{f'{d.row} ' if d.row else ''}{d.label} {text(e, d.target.name, now[i], False)}"
                           for i, d in enumerate(decided))
    head = (f"{view.name} in scenario {scenario}: today {view.value_text(today)}; searched "
            f"{view.value_text(lo)} … {view.value_text(hi)}")
    if inside:
        summary = f"Every decision holds on {view.interval()} ({view.margins()})."
        groups = [("Below today's value", [s for s, d in sides if d == "below"]),
                  ("Above today's value", [s for s, d in sides if d == "above"])]
    else:
        where = "below" if today < lo else "above"
        summary = (f"Today's value lies {where} the range searched: no interval around it is claimed; "
                   f"the flips across the range are listed from {view.value_text(start)}, the end nearest today.")
        groups = [(f"From {view.value_text(start)} {'up' if today < lo else 'down'} to {view.value_text(end)}",
                   [s for s, _ in sides])]
    notes = [f"{note}." for note in stops]
    if fmt == "markdown":
        lines = [f"#### {code(view.name)}: how far the decision holds", "", cell(head) + ".", "", summary, "",
                 f"Today: {cell(today_text)}."]
        for title, items in groups:
            lines += ["", f"**{title}:**", ""] + ([f"- {cell(view.sentence(s))}" for s in items] or ["- no flip"])
        lines += ["", *(cell(n) for n in notes)] if notes else []
        return "\n".join(lines) + "\n"
    lines = [head, summary, f"Today: {today_text}."]
    for title, items in groups:
        lines += ["", f"{title}:"] + ([f"  {view.sentence(s)}" for s in items] or ["  no flip"])
    lines += ["", *notes] if notes else []
    return "\n".join(lines) + "\n"


def _stops(view: InputHolds, down: Walk, up: Walk, lo: Fraction, hi: Fraction) -> list[str]:
    """Why a way was not searched to its end: the listing's length, or the work budget."""
    out = []
    for walk, end, way in ((down, lo, "down"), (up, hi, "up")):
        if len(walk.flips) >= MAX_FLIPS:
            out.append(f"Listing stops at {MAX_FLIPS} flips {way}, at {view.value_text(walk.reached)}; "
                       "narrow --range to see further")
        elif walk.reached != end:
            out.append(f"The search {way} stopped at {view.value_text(walk.reached)} (its work limit): "
                       "every flip before it is listed; beyond it is not searched")
    return out


def _head(e: Evaluation, view: InputHolds, lo: Fraction, hi: Fraction) -> dict:
    return {"plan": e.plan.name, "scenario": e.scenario.name, "input": view.name, "tag": view.tag,
            "unit": view.quantity.unit, "today": view.display(view.today),
            "range": {"low": view.display(lo), "high": view.display(hi)}}


def _dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# -- goal seek --------------------------------------------------------------------------------

def goal(evaluations: list[Evaluation], scenario: str, reference: str, given_range: list[str] | None,
         target: str, fmt: str) -> str:
    """Every value of the input in the range at which QUANTITY reaches VALUE (a number or a quantity)."""
    e = next(x for x in evaluations if x.scenario.name == scenario)
    if "=" not in target:
        raise CapplanError(f"--target {target}: write QUANTITY=VALUE (a number, or another quantity)",
                           file=e.plan.file)
    left_text, right_text = (part.strip() for part in target.split("=", 1))
    left = _quantity(e, left_text)
    right = _quantity(e, right_text) if _is_reference(e, right_text) else None
    holds = PlanHolds(evaluations)
    targets = [left] + ([right] if right else [])
    probe = holds.search.probe(scenario, variable(e, reference), targets, 0)
    lo, hi = search_range(e, probe, given_range)
    q = e.model.quantities[left.name]
    if right is None:
        try:
            number = rational(units.parse_value(right_text, q.unit), q.unit)
        except CapplanError as err:
            raise CapplanError(f"--target {target}: {err.message}", file=e.plan.file) from None
        solutions, goal_text = probe.solve(0, number, lo, hi), text(e, left.name, number)
    else:
        solutions = probe.solve(0, 1, lo, hi)
        goal_text = f"{right_text} ({text(e, right.name, probe.at(probe.today)[1])} today)"
    view = InputHolds(e, probe, Holds(probe.today, None, None, lo, hi), [], [])
    words = [_solution_text(view, s) for s in solutions]
    if fmt == "json":
        return _dumps({**_head(e, view, lo, hi), "target": left_text, "value": right_text,
                       "solutions": [{"low": view.display(s.low), "high": view.display(s.high), "exact": s.exact,
                                      "low_closed": s.low_closed, "high_closed": s.high_closed}
                                     for s in solutions]})
    found = (", ".join(words) if words else f"no value between {view.value_text(lo)} and {view.value_text(hi)}")
    line = (f"{left_text} reaches {goal_text} in scenario {scenario} at {view.name} = {found} "
            f"(today {view.value_text(probe.today)}).")
    return (cell(line) if fmt == "markdown" else line) + "\n"


def _solution_text(view: InputHolds, s: Solution) -> str:
    shown = view.value_text(s.low)
    if s.low != s.high:
        unit = unit_label(view.quantity)
        shown = (f"anything in {'[' if s.low_closed else '('}{formatting.number(view.display(s.low))}, "
                 f"{formatting.number(view.display(s.high))}{']' if s.high_closed else ')'} {unit}").strip()
    if s.low == s.high and s.low != view.today and view.today:
        change = float((s.low - view.today) / view.today)
        shown += f" ({'+' if change >= 0 else '−'}{formatting.number(abs(change) * 100, 3)} %)"
    return shown + ("" if s.exact else " (bracketed)")


def _is_reference(e: Evaluation, text_: str) -> bool:
    try:
        resolve(e, text_)
    except CapplanError:
        return False
    return True


def _quantity(e: Evaluation, reference: str) -> Target:
    name, index = resolve(e, reference)
    q = e.model.quantities[name]
    if q.table and index is None:
        raise CapplanError(f"'{reference}' is a whole column; name one row: {q.table}[ROW].{q.column}",
                           file=e.plan.file)
    if q.kind in ("bool", "text"):
        raise CapplanError(f"'{reference}' is not a number to reach", file=e.plan.file)
    return Target(name, index)
