"""Which flip points a change to a plan crosses, and which it comes near.

For every input weighed in both plans (:mod:`capplan.analysis.holds`) whose
value moved — a forecast, a measurement, λ* after new sweep rows — the old
plan's flip points between the old and the new value are *crossed*. And every
such input that the new plan leaves within ``holds.near`` (5 %) of a flip,
where the old plan did not, is *near* one: the next small change will flip a
decision. ``capplan diff`` words both (:mod:`capplan.review.crossings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from capplan.artifacts.declared import holds_spec
from capplan.artifacts.holds import InputInterval, Side


@dataclass(frozen=True)
class Crossed:
    """A flip point of the old plan that the input's move from ``old.today`` to ``new.today`` passed."""

    old: InputInterval
    new: InputInterval
    side: Side


@dataclass(frozen=True)
class Near:
    """A flip the new plan's value is within ``holds.near`` of, where the old plan's was not."""

    new: InputInterval
    side: Side


def crossings(before: list[InputInterval], after: list[InputInterval]) -> tuple[list[Crossed], list[Near]]:
    """The flips crossed (nearest first per input) and the flips come near, in the order of ``before``/``after``."""
    old = {h.name: h for h in before}
    new = {h.name: h for h in after}
    crossed = []
    for name, h in old.items():
        moved = new.get(name)
        if moved is None or moved.today == h.today:
            continue
        crossed += [Crossed(h, moved, side) for side in _crossed(h, moved.today)]
    near = []
    limit = holds_spec()["near"]
    for name, h in new.items():
        was = old.get(name)
        for side in (h.below, h.above):
            if not side.found or side.margin is None or side.margin >= limit:
                continue
            if was is not None and was.fragility[1] < limit:
                continue                  # already this close before the change
            near.append(Near(h, side))
    return crossed, near


def _crossed(h: InputInterval, value: Fraction) -> list[Side]:
    """The old plan's flips passed on the way from today's value to ``value``, nearest first."""
    today = h.today
    up = value > today
    step = abs(value - today)
    lo, hi = (today, value + step / 2) if up else (max(value - step / 2, 0), today)
    out = []
    for flip in h.probe.flips(lo, hi):
        passed = (today <= flip.value < value or (flip.value == value and flip.side == "above")) if up else \
            (value < flip.value <= today or (flip.value == value and flip.side == "below"))
        if passed and not (flip.value == today and (flip.side == "below") != up):
            out.append(h.side(flip, "above" if up else "below"))
    return out if up else out[::-1]
