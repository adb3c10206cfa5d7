"""What the flip search is asked about, and what it answers.

A :class:`Target` names what a probe reads (a quantity, or one row of a table
column); a :class:`Flip`, a :class:`Walk` and a :class:`Holds` are a walk's
answers, a :class:`Solution` is goal seek's. They are plain frozen values, apart
from the machinery that finds them, so that the layout, the record's words and
``capplan seek`` read them without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


UNDEFINED = "undefined"      # a target's value where the plan does not evaluate


@dataclass(frozen=True)
class Target:
    """A quantity, or one row of a table column."""

    name: str
    index: int | None = None


@dataclass(frozen=True)
class Flip:
    """A value of the variable (base units) at which the decisions change."""

    value: Fraction
    side: str               # 'below': the value itself still gives the decisions below it; 'above'
    exact: bool             # a closed form (else bracketed to two adjacent floats)
    below: tuple            # every target's value just below, in target order
    above: tuple            # … and just above


@dataclass(frozen=True)
class Solution:
    """Where a target reaches a value: one point, or an interval it stays on."""

    low: Fraction
    high: Fraction          # == low for a point
    exact: bool
    low_closed: bool = True
    high_closed: bool = True


@dataclass(frozen=True)
class Walk:
    """The flips from a start towards an end, nearest first, and how far the search
    reached (the end, unless it stopped at :data:`MAX_FLIPS` flips or :data:`WORK` windows)."""

    flips: list
    reached: Fraction


@dataclass(frozen=True)
class Holds:
    """The interval around today's value in which no decision changes."""

    today: Fraction
    low: Flip | None        # the nearest flip below (None: none down to ``lo``)
    high: Flip | None
    lo: Fraction            # how far the search reached: the range, unless the work ran out first
    hi: Fraction
