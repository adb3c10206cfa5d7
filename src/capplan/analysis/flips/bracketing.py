"""Bracketing, where the decisions have no closed form (step 2 of the method).

The decisions are scanned over a grid of :data:`GRID` cells and each change is
bisected down to two adjacent floats. It is the only search that can miss a
flip (a change and its undoing inside one cell), so it serves only where no
closed form exists; each point is a full evaluation of the plan.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


GRID = 256                   # bracketing (no closed form at all): points of the first scan


PER_CELL = 4        # changes narrowed per grid cell of the fallback scan


def grid_points(lo: Fraction, hi: Fraction) -> list[Fraction]:
    return [Fraction(float(v)) for v in np.linspace(float(lo), float(hi), GRID + 1)[1:-1]]


def bracket(decide, start: Fraction, end: Fraction, most: int) -> list[Fraction]:
    """Points where ``decide`` changes, from ``start`` towards ``end``, each narrowed to
    two adjacent floats (the lower one is returned): a scan of :data:`GRID` cells, the
    first and last reaching the ends, then bisection in every cell whose ends differ (a
    change and its undoing inside one cell go unseen: the only search that can miss a
    flip, used where the decisions have no closed form). The cells are walked from
    ``start`` and the walk stops after ``most`` changes: each step here is a full
    evaluation of the plan."""
    lo, hi = sorted((start, end))
    cells = list(itertools.pairwise([lo, *grid_points(lo, hi), hi]))
    out: list[Fraction] = []
    for a, b in (cells if end > start else reversed(cells)):
        out += sorted(_narrow(decide, a, b), reverse=end < start)
        if len(out) >= most:
            break
    return out


def _narrow(decide, a: Fraction, b: Fraction) -> set[Fraction]:
    """The changes of ``decide`` inside one cell, at most :data:`PER_CELL`."""
    out: set[Fraction] = set()
    left, right = decide(a), decide(b)
    for _ in range(PER_CELL):
        if left == right:
            break
        a = bisect(decide, a, b, left)
        out.add(a)
        a = Fraction(math.nextafter(float(a), math.inf))
        left = decide(a)
    return out


def bisect(decide, a: Fraction, b: Fraction, left) -> Fraction:
    """The last float from ``a`` up to ``b`` at which ``decide`` still gives ``left``."""
    lo, hi = float(a), float(b)
    while math.nextafter(lo, math.inf) < hi:
        middle = lo + (hi - lo) / 2
        if middle in (lo, hi):
            break
        if decide(Fraction(middle)) == left:
            lo = middle
        else:
            hi = middle
    return Fraction(lo)
