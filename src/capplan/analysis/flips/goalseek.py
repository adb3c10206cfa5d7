"""Goal seek's pieces: where a target reaches a value, as points and intervals.

:meth:`capplan.analysis.flips.probe.Probe.solve` cuts its range into windows as
a walk does; on each, the gap between the target and the value it should reach
is solved in closed form (:func:`solve_exact`), or, with no closed form, on the
bracketing grid (:func:`solve_bracketed`). What is found is merged into
intervals (:func:`merge`), and for a count into runs of whole numbers (:func:`whole`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import sympy

from capplan.artifacts.answers import Solution
from capplan.analysis.flips.atoms import MAX_CROSSINGS, TooMany
from capplan.analysis.flips.bracketing import bisect, grid_points
from capplan.analysis.flips.roots import smooth_crossings
from capplan.analysis.flips.steps import freeze, step_points
from capplan.engine.exact import Undefined


def solve_exact(g, x, lo, hi, gap) -> list[Solution]:
    """Where ``g`` = 0 in [lo, hi]: roots on each smooth piece, whole pieces where it is 0."""
    inner = step_points(g, x, lo, hi)
    if len(inner) > MAX_CROSSINGS:
        raise TooMany()
    edges = [lo, *sorted(inner), hi]
    out: list[Solution] = []
    for a, b in itertools.pairwise(edges):
        try:
            piece = freeze(g, x, (a + b) / 2)
        except (Undefined, ZeroDivisionError):
            continue            # the plan does not evaluate on this piece: no value reaches the target there
        if sympy.expand(sympy.fraction(sympy.together(piece))[0]) == 0:
            out.append(Solution(a, b, True, False, False))
            continue
        out += [Solution(r, r, True) for r in sorted(smooth_crossings(piece, x, a, b, False)) if gap(r) == 0]
    out += [Solution(p, p, True) for p in edges if gap(p) == 0]
    return merge(out)


def merge(solutions: list[Solution]) -> list[Solution]:
    """Overlapping or touching intervals and points as one (an open end a point closes)."""
    out: list[Solution] = []
    for s in sorted(solutions, key=lambda s: (s.low, not s.low_closed)):
        last = out[-1] if out else None
        if last and (s.low < last.high or (s.low == last.high and (s.low_closed or last.high_closed))):
            high, closed = max((last.high, last.high_closed), (s.high, s.high_closed))
            out[-1] = Solution(last.low, high, last.exact and s.exact, last.low_closed, closed)
        else:
            out.append(s)
    return out


def whole(solutions: list[Solution]) -> list[Solution]:
    """Solutions over the reals as runs of whole numbers (a count has no other values)."""
    out: list[Solution] = []
    for s in solutions:
        first = math.ceil(s.low) if s.low_closed else math.floor(s.low) + 1
        last = math.floor(s.high) if s.high_closed else math.ceil(s.high) - 1
        if first > last:
            continue
        if out and out[-1].high + 1 >= first:
            out[-1] = Solution(out[-1].low, Fraction(max(last, out[-1].high)), out[-1].exact and s.exact)
        else:
            out.append(Solution(Fraction(first), Fraction(last), s.exact))
    return out


def solve_bracketed(gap, lo: Fraction, hi: Fraction) -> list[Solution]:
    """Sign changes of ``gap`` on a grid, each bisected to adjacent floats."""
    grid = [lo, *grid_points(lo, hi), hi]
    out = []
    for a, b in itertools.pairwise(grid):
        ga, gb = gap(a), gap(b)
        if ga is None or gb is None:
            continue
        if ga == 0:
            out.append(Solution(a, a, False))
        elif ga * gb < 0:
            root = bisect(lambda v: (gap(v) or 0) < 0, a, b, ga < 0)
            out.append(Solution(root, root, False))
    if gap(hi) == 0:
        out.append(Solution(hi, hi, False))
    return merge(out)
