"""The flip search's rational form built in fractions (analysis/rational.py): the
same roots as ``sympy.together``'s, or None where the two could differ."""

from fractions import Fraction

import sympy

from capplan.analysis import flips
from capplan.analysis.rational import rational_form

x = sympy.Symbol("x")


def _roots(coefficients) -> set:
    poly = sympy.Poly([sympy.Rational(c.numerator, c.denominator) for c in reversed(coefficients)] or [0], x)
    return set(poly.real_roots()) if poly.degree() > 0 else set()


def _together_roots(g) -> tuple[set, set]:
    num, den = sympy.fraction(sympy.together(g))
    top, bottom = sympy.Poly(num, x), sympy.Poly(den, x)
    return (set(top.real_roots()) if top.degree() > 0 else set(),
            set(bottom.real_roots()) if bottom.degree() > 0 else set())


def test_the_form_has_togethers_roots_and_value():
    cases = [
        sympy.Rational(3, 7) * x + 2,
        60 / (x * sympy.Rational(9, 10)) - 7,
        (x + 1) ** 2 / (3 * x - 2) + 1 / (x - 5) - sympy.Rational(1, 4),
        1 / (1 + 1 / x) - sympy.Rational(2, 3),
        (2 * x + 2) ** -2 * x ** 3 - 11,
        sympy.Integer(5),
    ]
    for g in cases:
        top, bottom = rational_form(g, x)
        want_top, want_bottom = _together_roots(g)
        assert _roots(bottom) == want_bottom, g
        assert _roots(top) | _roots(bottom) == want_top | want_bottom, g
        v = Fraction(13, 3)
        value = sum(c * v ** i for i, c in enumerate(top)) / sum(c * v ** i for i, c in enumerate(bottom))
        assert value == Fraction(str(g.subs(x, sympy.Rational(13, 3)))), g


def test_a_removable_point_a_float_or_another_symbol_is_left_to_together():
    y = sympy.Symbol("y")
    assert rational_form((x ** 2 - 1) / (x - 1), x) is None          # a root shared: together decides
    assert rational_form(x / (x - 1) - 1 / (x - 1) + 0 * x, x) is None
    assert rational_form(sympy.Float(0.5) * x, x) is None
    assert rational_form(x * y, x) is None
    assert rational_form(sympy.sqrt(x), x) is None
    assert rational_form(1 / (x - x), x) is None


def test_the_flip_search_takes_the_fraction_form_without_together(monkeypatch):
    calls = []
    monkeypatch.setattr(sympy, "together", lambda g: calls.append(g) or g)
    flips._rational.cache_clear()
    top, bottom = flips._rational(90 / (x * sympy.Rational(3, 4)) - 7, x)
    assert calls == []
    assert top.degree() == 1 and bottom.degree() == 1
    assert _roots(tuple(Fraction(int(c.p), int(c.q)) for c in reversed(top.all_coeffs()))) == {sympy.Rational(120, 7)}
