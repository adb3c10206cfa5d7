"""How far the decision holds: which inputs to probe, and their flip points.

For every scenario, every input the layout says the decisions rest on
(:func:`capplan.analysis.declared.variables`) is probed with
:mod:`capplan.analysis.flips` for the nearest flip on each side of today's
value, within the layout's ``spread``; and every row of the priced table gets
the price at which it matches another row (its breakeven). These are the
artifacts; :mod:`capplan.rendering.holds` words them for the record, the
JSON document, ``capplan seek`` and ``capplan diff``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from capplan import formatting
from capplan.analysis import collector, flips
from capplan.analysis.declared import Decision, declared, decisions, holds_spec, layout, row_keys, variables
from capplan.analysis.flips import Flip, Holds, Probe, Search, Solution, Target
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import factor

ALL_PAIRS = 6          # rows of the priced table up to which every ordered pair gets its breakeven


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


def label(e: Evaluation, variable: Target) -> str:
    """A variable as a reader names it: 'peak_rate', 'deployments[aws].price'."""
    if variable.index is None:
        return variable.name
    q = e.model.quantities[variable.name]
    return f"{q.table}[{row_keys(e, q.table)[variable.index]}].{q.column}"


class InputInterval:
    """One input of one scenario: today's value, the interval in which nothing flips, its two first flips."""

    def __init__(self, e: Evaluation, probe: Probe, found: Holds, decided: list[Decision],
                 costs: list[Decision]):
        self.e, self.probe, self.found = e, probe, found
        self.decided, self.costs = decided, costs
        self.variable = probe.variable
        self.name = label(e, probe.variable)
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
        flipped = self.below.found or self.above.found
        return (not flipped, min(margins) if margins else math.inf)

    def display(self, v: Fraction) -> float:
        """A value of the input in its display unit, JSON-ready."""
        return _displayed(v, self.quantity.unit)

    def side(self, flip: Flip, direction: str) -> Side:
        """Any flip on one side of today's value (not only the first), as a side seen from today."""
        distance = abs(flip.value - self.today)
        return Side(flip, direction, flip.value, False, distance, float(distance / self.today) if self.today else None)


@dataclass(frozen=True)
class Breakeven:
    """The price of row ``key`` at which its compared quantity meets row ``other``'s."""

    e: Evaluation
    probe: Probe
    key: str
    other: str
    label: str              # the compared key result's label ('monthly cost per 1M tokens')
    compare: str            # the compared quantity ('deployments.cost_per_mtok')
    target: object          # the other row's value today (exact, base unit)
    solutions: tuple[Solution, ...]


class PlanHolds:
    """The flip points of every relevant input of every scenario of a plan, and the
    breakevens. A scenario is searched when first asked for (:meth:`of`), once: the
    record and the workbook read the nominal scenario's alone, the JSON every one."""

    def __init__(self, evaluations: list[Evaluation], decisions_only: bool = False):
        """``decisions_only``: probes name only the declared decisions, costs and the breakeven's
        columns (the outputs' flip search), so only what those rest on is computed exactly;
        a goal seek names any quantity, and leaves it False."""
        self.evaluations = evaluations
        self.search = Search(evaluations, _targeted() if decisions_only else None)
        self._found: dict[str, list[InputInterval]] = {}
        self._decisions: dict[str, tuple[list[Decision], list[Decision]]] = {}
        self._probed: dict[tuple, list[Target]] = {}

    def probe(self, e: Evaluation, variable: Target) -> tuple[Probe, list[Decision], list[Decision]]:
        if e.scenario.name not in self._decisions:          # the same for every variable of a scenario
            self._decisions[e.scenario.name] = decisions(e)
        decided, costs = self._decisions[e.scenario.name]
        targets = [d.target for d in decided + costs]
        return self.search.probe(e.scenario.name, variable, targets, len(decided)), decided, costs

    def inputs(self, e: Evaluation) -> list[InputInterval]:
        """Every relevant input, the most fragile first."""
        spread = Fraction(holds_spec()["spread"])
        out = []
        for variable in self._variables(e):
            probe, decided, costs = self.probe(e, variable)
            lo, hi = flips.base_range(probe.today, probe.quantity, spread)
            out.append(InputInterval(e, probe, probe.holds(lo, hi), decided, costs))
        return sorted(out, key=lambda h: (*h.fragility, h.name))

    def _variables(self, e: Evaluation) -> list[Target]:
        """:func:`variables`, once per graph and set of inputs' tags: the scenarios of a plan
        mostly share both (the graph object lives as long as the evaluations)."""
        key = (id(e.graph), tuple((n, i.tag, i.pending) for n, i in e.inputs.items()))
        if key not in self._probed:
            self._probed[key] = variables(e)
        return self._probed[key]

    def of(self, scenario: str) -> list[InputInterval]:
        """One scenario's inputs (:meth:`inputs`), searched once (full garbage collections
        deferred: :mod:`capplan.analysis.collector`)."""
        if scenario not in self._found:
            with collector.deferred():
                self._found[scenario] = self.inputs(self.search.evaluations[scenario])
        return self._found[scenario]

    @property
    def nominal(self) -> list[InputInterval]:
        return self.of(self.evaluations[0].scenario.name)

    @cached_property
    def breakevens(self) -> list[Breakeven]:
        """For every ordered pair of rows of the priced table (the nominal
        scenario): the price of the first at which it matches the second on the
        compared quantity. Past :data:`ALL_PAIRS` rows, each row against the
        other row lowest on the compared quantity today, the one it has to match
        (500 offers would be 249,500 pairs).

        One probe per row: the row's own price moves only its own value of the
        compared quantity, and the probe solves it against every other row's
        (a constant, or — should rows be coupled — its own expression)."""
        wanted = holds_spec()["breakeven"]
        e = self.evaluations[0]
        table = wanted["table"]
        if table not in e.scenario.tables:
            return []
        price, compare = f"{table}.{wanted['price']}", f"{table}.{wanted['compare']}"
        keys = row_keys(e, table)
        named = next((d["label"] for d in declared() if d["quantity"] == compare), e.model.quantities[compare].column)
        today = self.search.values(e.scenario.name)[compare]
        out = []
        for a, key in enumerate(keys):
            others = [b for b in range(len(keys)) if b != a]
            if len(keys) > ALL_PAIRS:
                others = [min(others, key=lambda b: (today[b], b))] if others else []
            variable = Target(price, a)
            probe = self.search.probe(e.scenario.name, variable, [Target(compare, a)] +
                                      [Target(compare, b) for b in others], 0)
            _lo, hi = flips.base_range(probe.today, probe.quantity, Fraction(holds_spec()["spread"]) ** 2)
            at_today = probe.at(probe.today)
            for j, b in enumerate(others, 1):
                solutions = tuple(probe.solve(0, j, Fraction(0), hi))
                out.append(Breakeven(e, probe, key, keys[b], named, compare, at_today[j], solutions))
        return out

    def lowest_only(self) -> bool:
        """Whether the priced table has too many rows for every pair (each row meets the lowest)."""
        table = self.evaluations[0].scenario.tables.get(holds_spec()["breakeven"]["table"])
        return table is not None and len(table.rows) > ALL_PAIRS


@functools.lru_cache(maxsize=65536)
def _displayed(v: Fraction, unit: str) -> float:
    """:meth:`InputInterval.display` (remembered: today's values and the ends of the ranges
    repeat across a plan's scenarios; equal values display alike)."""
    return formatting.plain(float(v / factor(unit)))


def _targeted() -> frozenset[str]:
    """Every quantity a decision, a cost or a breakeven may name (:func:`decisions`, :attr:`PlanHolds.breakevens`)."""
    gates = {part["gate"] for section in layout()["sections"] for part in section.get("parts", []) if part.get("gate")}
    wanted = holds_spec()["breakeven"]
    priced = {f"{wanted['table']}.{wanted['price']}", f"{wanted['table']}.{wanted['compare']}"}
    return frozenset({d["quantity"] for d in declared()} | gates | priced)
