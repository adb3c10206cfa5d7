"""What the flip search hands the outputs: for each input of a scenario, today's value,
the interval in which no decision changes and the first flip on each side
(:class:`InputInterval`); each breakeven of the priced table (:class:`Breakeven`).
:mod:`capplan.analysis.holds` finds them (:class:`FlipPoints` is what it hands over, a
scenario searched when first asked for); :mod:`capplan.rendering.holds` words them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from capplan import formatting
from capplan.artifacts.answers import Flip, Holds, Solution, Target
from capplan.artifacts.declared import Decision, row_keys
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import factor

if TYPE_CHECKING:
    from capplan.language.model import Quantity


class Probe(Protocol):
    """What the outputs read of the flip search's probe of one variable
    (:class:`capplan.analysis.flips.Probe`, which the artifacts cannot name: it is the search)."""

    variable: Target
    quantity: Quantity
    today: Fraction


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


@functools.lru_cache(maxsize=65536)
def _displayed(v: Fraction, unit: str) -> float:
    """:meth:`InputInterval.display` (remembered: today's values and the ends of the ranges
    repeat across a plan's scenarios; equal values display alike)."""
    return formatting.plain(float(v / factor(unit)))


class FlipPoints(Protocol):
    """The flip points of a plan as the outputs read them (:class:`capplan.analysis.holds.PlanHolds`)."""

    evaluations: list[Evaluation]

    def of(self, scenario: str) -> list[InputInterval]: ...

    @property
    def breakevens(self) -> list[Breakeven]: ...

    def lowest_only(self) -> bool: ...
