"""The flip search's rational form built in fractions (analysis/rational.py): the
same roots as ``sympy.together``'s, or None where the two could differ."""

from fractions import Fraction

import sympy

from capplan.analysis.flips import roots, steps
from capplan.analysis.rational import rational_form
from capplan.engine.exact import Undefined

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
    roots.as_polynomials.cache_clear()
    top, bottom = roots.as_polynomials(90 / (x * sympy.Rational(3, 4)) - 7, x)
    assert calls == []
    assert top.degree() == 1 and bottom.degree() == 1
    assert _roots(tuple(Fraction(int(c.p), int(c.q)) for c in reversed(top.all_coeffs()))) == {sympy.Rational(120, 7)}


def test_a_piece_frozen_in_place_has_the_form_of_the_frozen_expression():
    """The flip search reads each piece between a decision's steps with the steps and
    branches standing as their values there, without building the frozen expression."""
    from functools import partial

    r = sympy.Symbol("x", real=True)
    cases = [
        r / 10 - sympy.ceiling(r / 7),
        sympy.ceiling(r / 7) / 8 + sympy.Rational(1, 8) - r / (3 * sympy.floor(r / 5) + 1),
        sympy.Max(r / 4, 12 - r) * (sympy.floor(r) - 2) - 30,
        sympy.Piecewise((r - 3, sympy.Gt(r, 6, evaluate=False)), (2 * r, True)) - sympy.ceiling(r / 2),
        sympy.Min(60 / r, sympy.Rational(5, 2)) - 1 / (sympy.floor(r / 3) - 2),
    ]
    for g in cases:
        for v in (Fraction(1, 3), Fraction(5, 2), Fraction(13), Fraction(71, 7)):
            try:
                frozen = steps.freeze(g, r, v)
            except ZeroDivisionError:
                continue
            assert rational_form(g, r, partial(steps._frozen_part, r, v)) == rational_form(frozen, r), (g, v)


def test_a_truth_value_or_an_undefined_step_in_a_piece():
    from functools import partial

    r = sympy.Symbol("x", real=True)
    inside = sympy.Gt(r, 2, evaluate=False)
    assert rational_form(sympy.Piecewise((r, inside), (1, True)) + r, r, lambda n: True if n == inside else None) \
        is None                                  # a truth value where a number was read: left to sympy
    divided = r - 1 / sympy.floor(r / 10)           # floor(3/10) = 0 under a division: left to sympy
    assert rational_form(divided, r, partial(steps._frozen_part, r, Fraction(3))) is None
    undefined = r - sympy.floor(1 / (r - 3))        # the step itself has no value at 3: both fail alike
    for freeze in (lambda: steps.freeze(undefined, r, Fraction(3)),
                   lambda: rational_form(undefined, r, partial(steps._frozen_part, r, Fraction(3)))):
        try:
            freeze()
        except (ZeroDivisionError, Undefined):
            continue
        raise AssertionError("floor(1/0) has no value")


def test_the_derivative_form_has_the_derivatives_roots_poles_and_values():
    from capplan.analysis.rational import derivative, value_at

    for g in (60 / (x * sympy.Rational(9, 10)) - 7, (x + 1) ** 2 / (3 * x - 2) + 1 / (x - 5), x ** 3 / 4 - x,
              sympy.Integer(5)):
        top, bottom = derivative(rational_form(g, x))
        want_top, want_bottom = _together_roots(sympy.diff(g, x)) if g.has(x) else (set(), set())
        assert _roots(top) | _roots(bottom) == want_top | want_bottom, g
        v = Fraction(7, 2)
        if bottom:
            assert value_at(top, v) / value_at(bottom, v) == Fraction(str(sympy.diff(g, x).subs(x, sympy.Rational(7, 2)))), g
        else:
            assert top == () and not g.has(x)


def _piecewise_crossings(g, r, lo, hi):
    """Every piece of ``g`` between its steps' points, read in place (the general path)."""
    inner = sorted(steps.step_points(g, r, lo, hi))
    out = set()
    for a, b in zip([lo, *inner], [*inner, hi]):
        middle = (a + b) / 2
        try:
            form = rational_form(g, r, lambda n, m=middle: steps._frozen_part(r, m, n))
            piece = steps.freeze(g, r, middle) if form is None else None
        except (ZeroDivisionError, Undefined):
            continue
        out |= roots.smooth_crossings(piece, r, a, b, False) if form is None else roots.form_crossings(form, r, a, b)
    return out


def test_a_sum_of_a_smooth_part_and_steps_is_solved_by_shifting_one_form():
    """A piece of smooth terms plus steps (a fleet check's ``rate/x − ceil(…)``) is solved from the
    smooth terms' one form shifted by the steps' value: the same crossings as each piece read in place."""
    r = sympy.Symbol("x", real=True)
    cases = [
        r / 10 - sympy.ceiling(r / 7),
        -sympy.ceiling(60 / (7 * r)) + 6 / r,
        r - 3 * sympy.floor(r / 4) - 1,                                  # a root on (0, 4)
        r * r / 8 - sympy.floor(r),                                      # √48 and √56: degree 2
        (r + 1) ** 2 / (3 * r - 2) + 2 * sympy.floor(r / 3) - sympy.ceiling(r / 5) / 4,
        1 / (r - 9) + sympy.Max(sympy.floor(r / 4), 2),                  # a pole at 9
    ]
    found = set()
    for g in cases:
        assert steps._split(g, r) is not None, g
        for lo, hi in ((Fraction(1, 2), Fraction(40)), (Fraction(10), Fraction(31, 3))):
            inner = steps.step_points(g, r, lo, hi)
            crossings = steps._crossings(g, r, lo, hi, inner)
            assert crossings == _piecewise_crossings(g, r, lo, hi), (g, lo, hi)
            found |= crossings
    assert {Fraction(1), Fraction(9)} <= found and any(6 < v < 7 for v in found) and any(7 < v < 8 for v in found)


def test_a_sum_the_shift_cannot_serve_is_read_piece_by_piece():
    r = sympy.Symbol("x", real=True)
    assert steps._split(r * sympy.ceiling(r / 7) - 3, r) is None           # a step times x: no constant shift
    assert steps._split((r ** 2 - 1) / (r - 1) + sympy.floor(r), r) is None  # the smooth terms' form is not reduced
    divided = r - 12 / sympy.floor(r / 10)          # floor(r/10) = 0 on (0, 10): that piece takes the general path
    split = steps._split(divided, r)
    assert steps._shifted_crossings(split, r, Fraction(3), Fraction(0), Fraction(10)) is None
    assert steps._shifted_crossings(split, r, Fraction(15), Fraction(10), Fraction(20)) == {Fraction(12)}


def test_a_conjunct_false_on_the_whole_window_leaves_the_and_no_points():
    """``x >= 92 & 60/x < ceil(600/(7x))`` is false all over [10, 15]: the ceiling's 30 crossings are no
    flips of it (and the window costs no piece); on [80, 100] both sides count."""
    r = sympy.Symbol("x", real=True)
    rate = sympy.ceiling(600 / (7 * r))
    check = sympy.And(sympy.Ge(r, 92, evaluate=False), sympy.Lt(60 / r, rate, evaluate=False))
    assert steps.step_points(check, r, Fraction(10), Fraction(15)) == frozenset()
    assert steps.step_points(rate, r, Fraction(10), Fraction(15))
    assert Fraction(92) in steps.step_points(check, r, Fraction(80), Fraction(100))
    either = sympy.Or(sympy.Le(r, 92, evaluate=False), sympy.Lt(60 / r, rate, evaluate=False))
    assert steps.step_points(either, r, Fraction(10), Fraction(15)) == frozenset()
