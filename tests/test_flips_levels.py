"""Where (a x + b) / (c x + d) crosses each integer level inside a window (analysis/flips/roots.py
``_levels``), worked in integers: the same roots, as fractions, as the formula in fractions."""

from __future__ import annotations

import random
from fractions import Fraction

from capplan.analysis.flips import roots


def _in_fractions(a, b, c, d, first, last, lo, hi) -> set[Fraction]:
    out = set()
    for k in range(first, last + 1):
        if a != k * c:
            root = (k * d - b) / (a - k * c)
            if lo < root < hi:
                out.add(root)
    return out


def test_the_levels_in_integers_are_the_levels_in_fractions():
    draw = random.Random(27)

    def number():
        return Fraction(draw.randint(-50, 50), draw.randint(1, 30)) if draw.random() < 0.9 else Fraction(0)

    found = 0
    for _ in range(3000):
        a, b, c, d = number(), number(), number(), number()
        lo = number()
        hi = lo + abs(number()) + Fraction(1, 7)
        first = draw.randint(-20, 5)
        last = first + draw.randint(0, 30)
        expected = _in_fractions(a, b, c, d, first, last, lo, hi)
        got = roots._levels(a, b, c, d, first, last, lo, hi)
        assert got == expected and all(type(v) is Fraction for v in got)
        found += len(got)
    assert found > 1000                                  # the windows hold many roots, not none


def test_a_root_on_a_window_s_end_is_left_out_and_a_negative_denominator_turned():
    # x / 1 = k: roots 1, 2, 3 in (1, 3) is 2 alone; (-x + 0) / (−1·0 + 1) … with c = 0
    assert roots._levels(Fraction(1), Fraction(0), Fraction(0), Fraction(1), 0, 5, Fraction(1), Fraction(3)) == {2}
    # (−2x + 1) / 1 = k: x = (1 − k) / 2, from k = −5 to 5, inside (−1, 2): k = −2 … 2
    assert roots._levels(-2, 1, 0, 1, -5, 5, Fraction(-1), Fraction(2)) == {
        Fraction(1 - k, 2) for k in range(-2, 3)}
