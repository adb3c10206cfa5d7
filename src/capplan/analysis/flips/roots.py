"""Where a rational function of the variable crosses 0 or an integer: roots of polynomials, exact.

Between the points where its own steps change, each piece of a decision is a
rational function of the variable (:mod:`capplan.analysis.rational`), so its
crossings are the roots of a numerator and a denominator. The pieces of the
model's decisions are of degree 1 at most and are solved in fractions
(:func:`_levels`, :func:`coefficient_roots`); anything else by sympy's real roots.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import sympy
from sympy.polys.domains import QQ
from sympy.polys.polyclasses import DMP

from capplan.analysis.flips.atoms import CACHED, MAX_CROSSINGS, TooMany, moves
from capplan.analysis.rational import rational_form
from capplan.engine.exact import NotClosedForm, Undefined, compile_exact


def smooth_crossings(g, x, lo, hi, integers: bool) -> set[Fraction]:
    """Crossings of a rational function of x: roots of polynomials, exact."""
    if not moves(g, x):
        return set()
    form = form_of(g, x)
    if form is not None and not integers:
        return form_crossings(form, x, lo, hi)
    if form is not None and len(form[0]) <= 2 and len(form[1]) <= 2:
        return _linear_crossings(g, x, lo, hi, *_linear(form))
    fraction = as_polynomials(g, x)
    if fraction is None:
        raise NotClosedForm(f"{g} is not a rational function of the variable")
    top, bottom = fraction
    poles = roots_inside(bottom, lo, hi)
    if not integers:
        return roots_inside(top, lo, hi) | poles
    if poles:
        raise TooMany()
    turns = roots_inside(top.diff(x) * bottom - top * bottom.diff(x), lo, hi)
    f = compile_exact(g, x)
    try:
        values = [f(v) for v in (lo, hi, *turns)]
    except (Undefined, ZeroDivisionError):
        raise TooMany() from None             # unbounded at an end of the range
    first, last = math.ceil(min(values)), math.floor(max(values))
    if last - first + 1 > MAX_CROSSINGS:
        raise TooMany()
    out = set(turns)
    if top.degree() <= 1 and bottom.degree() <= 1:      # (a x + b) / (c x + d) = k, solved in fractions
        (a, b), (c, d) = (_coefficients(p) for p in (top, bottom))
        return out | _levels(a, b, c, d, first, last, lo, hi)
    for k in range(first, last + 1):
        out |= roots_inside(top - k * bottom, lo, hi)
    return out


@functools.lru_cache(maxsize=CACHED)
def form_of(g, x):
    """:func:`rational_form` of ``g``, cached (the windows of a search ask again)."""
    return rational_form(g, x)


def form_crossings(form, x, lo, hi) -> set[Fraction]:
    """The roots of a rational form's numerator and denominator in (lo, hi), as
    :func:`smooth_crossings` finds them: in fractions when both are of degree 1 at
    most (every piece of the model's decisions), else by sympy's real roots."""
    return coefficient_roots(form[0], x, lo, hi) | coefficient_roots(form[1], x, lo, hi)


def coefficient_roots(p, x, lo, hi) -> set[Fraction]:
    """:func:`roots_inside` of a polynomial given by its coefficients (lowest degree first):
    a root of degree 1 in fractions, as :func:`_real_roots` gives it, without sympy."""
    if len(p) == 2:
        root = -p[0] / p[1]
        return {root} if lo < root < hi else set()
    return roots_inside(_poly(p, x), lo, hi) if len(p) > 2 else set()


def _linear(form) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(a, b, c, d) of a form (a x + b) / (c x + d) (coefficients lowest degree first)."""
    (b, a), (d, c) = ((*p, Fraction(0), Fraction(0))[:2] for p in form)
    return a, b, c, d


def _linear_crossings(g, x, lo, hi, a, b, c, d) -> set[Fraction]:
    """Where (a x + b) / (c x + d), which is ``g``, crosses an integer in (lo, hi), as
    :func:`smooth_crossings` finds it: its derivative (ad − bc) / (cx + d)² has no root,
    so it turns nowhere, and each integer it reaches is reached once."""
    if c and lo < -d / c < hi:
        raise TooMany()                        # a pole inside
    f = compile_exact(g, x)
    try:
        values = [f(v) for v in (lo, hi)]
    except (Undefined, ZeroDivisionError):
        raise TooMany() from None             # unbounded at an end of the range
    first, last = math.ceil(min(values)), math.floor(max(values))
    if last - first + 1 > MAX_CROSSINGS:
        raise TooMany()
    return _levels(a, b, c, d, first, last, lo, hi)


def _levels(a, b, c, d, first: int, last: int, lo, hi) -> set[Fraction]:
    """Where (a x + b) / (c x + d) = k in (lo, hi), for each integer k from ``first`` to ``last``:
    in integers (the four over their common denominator, each root's numerator and denominator
    compared with the window's ends), a fraction made only for a root inside (up to 64 levels
    a window, and most fall outside it)."""
    a, b, c, d, lo, hi = (Fraction(v) for v in (a, b, c, d, lo, hi))
    q = math.lcm(a.denominator, b.denominator, c.denominator, d.denominator)
    big_a, big_b, big_c, big_d = (v.numerator * (q // v.denominator) for v in (a, b, c, d))
    low_n, low_d, high_n, high_d = lo.numerator, lo.denominator, hi.numerator, hi.denominator
    out = set()
    for k in range(first, last + 1):
        m = big_a - k * big_c
        if m:
            n = k * big_d - big_b
            if m < 0:
                n, m = -n, -m
            if low_n * m < n * low_d and n * high_d < high_n * m:
                out.add(Fraction(n, m))
    return out


def _coefficients(poly: sympy.Poly) -> tuple[Fraction, Fraction]:
    """(slope, intercept) of a polynomial of degree at most 1."""
    coefficients = [_fraction(c) for c in poly.all_coeffs()]
    return tuple([Fraction(0)] * (2 - len(coefficients)) + coefficients)


def roots_inside(poly: sympy.Poly, lo: Fraction, hi: Fraction) -> set[Fraction]:
    """The real roots of a polynomial strictly inside (lo, hi): exact when
    rational, else to 40 significant digits."""
    return {r for r in _real_roots(poly) if lo < r < hi}


@functools.lru_cache(maxsize=CACHED)
def _real_roots(poly: sympy.Poly) -> tuple[Fraction, ...]:
    """Every real root of a polynomial (cached: the windows of a search ask again)."""
    if poly.degree() < 1:
        return ()
    if poly.degree() == 1:
        a, b = poly.all_coeffs()
        return (Fraction(int((-b / a).p), int((-b / a).q)),)
    return tuple(_fraction(r) for r in poly.real_roots())


@functools.lru_cache(maxsize=CACHED)
def as_polynomials(g, x) -> tuple | None:
    """``g`` as numerator and denominator polynomials in x; None when it is
    not a rational function of x (cached: each window of a search asks again). Built in
    fractions where :func:`rational_form` can, else by ``sympy.together``."""
    if (form := rational_form(g, x)) is not None:
        return tuple(_poly(p, x) for p in form)
    try:
        num, den = sympy.fraction(sympy.together(g))
        return sympy.Poly(num, x), sympy.Poly(den, x)
    except sympy.PolynomialError:
        return None


def _poly(coefficients: tuple[Fraction, ...], x) -> sympy.Poly:
    """A polynomial over the rationals, its coefficients given lowest degree first (built from
    its dense form directly: ``sympy.Poly(list, x)`` spends three times as long guessing the domain)."""
    rep = [QQ(c.numerator, c.denominator) for c in reversed(coefficients)]
    return sympy.Poly.new(DMP.from_list(rep, 0, QQ), x)


def _fraction(number) -> Fraction:
    if not number.is_Rational:
        number = sympy.Rational(number.evalf(40))
    return Fraction(int(number.p), int(number.q))
