"""A sympy expression as a numerator and denominator polynomial in x, without ``sympy.together``.

The flip search asks for the rational form of tens of thousands of expressions
(each scenario's carry its own constants, so no cache shares them), and
``together`` spent most of a 1,000-scenario build in ``gcd_terms``. Here the
form is built straight from the Add/Mul/Pow tree in fractions: the numerator
one polynomial, the denominator a product of monic factors (a sum takes the
highest power of each factor, as a common denominator does).

Only a form whose numerator and denominator share no root is returned. Such a
form is the reduced one, and ``together``'s has the same roots: its denominator
comes from the same divisions, so any factor it keeps beyond the reduced form
has roots among the reduced denominator's. A form with a common root (a
removable point ``together`` may or may not keep) is answered with None, and the
caller asks ``together``.
"""

from __future__ import annotations

import functools
from collections import Counter
from fractions import Fraction

import sympy

Poly = tuple[Fraction, ...]          # coefficients, lowest degree first; () is 0

_ONE: Poly = (Fraction(1),)
_X: Poly = (Fraction(0), Fraction(1))


class _Unsupported(Exception):
    """A node that is not a rational function of x with rational constants."""


def rational_form(g, x, resolve=None) -> tuple[Poly, Poly] | None:
    """(numerator, denominator) coefficients of ``g`` in ``x``, lowest degree first,
    sharing no root; None when ``g`` is not built of x, rationals, +, × and
    whole powers, or when the two share a root.

    ``resolve`` (optional) stands in for the nodes it knows — the flip search's
    steps and branches, frozen at one value of x: given a node it returns a
    :class:`~fractions.Fraction` (or int) to read in its place, a subtree to read
    instead (the argument a max picks), or None for a node it leaves alone. The
    form is then the one of the expression so rewritten, without building it."""
    try:
        top, factors = _form(g, x) if resolve is None else _resolved(g, x, resolve)
    except _Unsupported:
        return None
    bottom = _expand(factors)
    if len(bottom) > 1 and len(_gcd(top, bottom)) > 1:
        return None
    return top, bottom


@functools.lru_cache(maxsize=65536)
def _form(g, x) -> tuple[Poly, Counter]:
    """(numerator, denominator factors) of ``g`` (cached: the pieces of one expression
    that the search solves window by window share most of their parts; the counters
    returned are never changed)."""
    return _combine(g, x, lambda a: _form(a, x))


def _resolved(g, x, resolve) -> tuple[Poly, Counter]:
    """:func:`_form` of ``g`` with the nodes ``resolve`` knows read as it says; a subtree
    holding none of them is :func:`_form`'s own (cached)."""
    stands = resolve(g)
    if stands is None:
        return _combine(g, x, lambda a: _resolved(a, x, resolve))
    if type(stands) is Fraction or type(stands) is int:
        return _trim((Fraction(stands),)), Counter()
    if isinstance(stands, sympy.Basic):
        return _form(stands, x) if stands is g else _resolved(stands, x, resolve)
    raise _Unsupported()                            # a truth value in arithmetic: left to sympy


def _combine(g, x, part) -> tuple[Poly, Counter]:
    """One node's (numerator, denominator factors) from its arguments' (``part``)."""
    if not isinstance(g, sympy.Basic):
        raise _Unsupported()
    if g.is_Rational:                               # sympy's class flags: cheaper than isinstance
        return _trim((Fraction(int(g.p), int(g.q)),)), Counter()
    if g.is_Symbol and g == x:
        return _X, Counter()
    if g.is_Add:
        return _sum([part(a) for a in g.args])
    if g.is_Mul:
        top, common = _ONE, Counter()
        for a in g.args:
            numerator, factors = part(a)
            top, common = _mul(top, numerator), common + factors
        return top, common
    if g.is_Pow and g.exp.is_Integer:
        numerator, factors = part(g.base)
        n = int(g.exp)
        if n >= 0:
            return _power(numerator, n), Counter({f: p * n for f, p in factors.items()})
        if not numerator:
            raise _Unsupported()                    # a division by 0
        lead, monic = _monic(numerator)
        top = _scale(_power(_expand(factors), -n), 1 / lead ** -n)
        return top, (Counter({monic: -n}) if len(monic) > 1 else Counter())
    raise _Unsupported()


def _sum(parts: list[tuple[Poly, Counter]]) -> tuple[Poly, Counter]:
    """A sum's (numerator, denominator factors) from its terms': over their common denominator."""
    common = Counter()
    for _, factors in parts:
        common |= factors
    top: Poly = ()
    for numerator, factors in parts:
        top = _add(top, _mul(numerator, _expand(common - factors)))
    return top, common


def shifted(terms, x) -> tuple[Poly, Poly] | None:
    """The reduced form t / b of the sum of ``terms`` (as :func:`rational_form`, None where it
    gives None), for a sum ``terms`` + k whose k is a number that changes piece by piece (the
    flip search's steps, frozen): the sum's form is then (t + k·b) / b, and still reduced
    (a root shared by t + k·b and b is one of t's), so each piece costs one scaled addition
    (:func:`plus`) instead of a walk of the tree and a gcd."""
    try:
        top, factors = _sum([_form(a, x) for a in terms])
    except _Unsupported:
        return None
    bottom = _expand(factors)
    if len(top) < 2 and len(bottom) < 2 or len(bottom) > 1 and len(_gcd(top, bottom)) > 1:
        return None                                 # a constant sum, or one not reduced
    return top, bottom


def plus(form: tuple[Poly, Poly], k: Fraction | int) -> tuple[Poly, Poly]:
    """t / b + k as (t + k·b, b): the form :func:`rational_form` gives the sum (see :func:`shifted`)."""
    top, bottom = form
    return _add(top, _scale(bottom, Fraction(k))), bottom


def derivative(form: tuple[Poly, Poly]) -> tuple[Poly, Poly]:
    """The derivative of top / bottom as (top' bottom − top bottom', bottom²), not reduced."""
    top, bottom = form
    return _add(_mul(_differentiate(top), bottom), _scale(_mul(top, _differentiate(bottom)), Fraction(-1))), \
        _mul(bottom, bottom)


def value_at(p: Poly, v: Fraction) -> Fraction:
    """A polynomial's value at ``v`` (Horner)."""
    out = Fraction(0)
    for c in reversed(p):
        out = out * v + c
    return out


def _differentiate(p: Poly) -> Poly:
    return tuple(i * c for i, c in enumerate(p))[1:]


def _expand(factors: Counter) -> Poly:
    out = _ONE
    for factor, power in factors.items():
        out = _mul(out, _power(factor, power))
    return out


def _trim(p) -> Poly:
    p = list(p)
    while p and p[-1] == 0:
        p.pop()
    return tuple(p)


def _add(a: Poly, b: Poly) -> Poly:
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return a                                    # + 0 (a sum's first term)
    return _trim(u + (b[i] if i < len(b) else 0) for i, u in enumerate(a))


def _mul(a: Poly, b: Poly) -> Poly:
    if not a or not b:
        return ()
    if len(a) == 1 or len(b) == 1:                 # a constant factor (most are): no sums to form
        (c,), p = (a, b) if len(a) == 1 else (b, a)
        return p if c == 1 else tuple(c * u for u in p)
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, u in enumerate(a):
        if u:
            for j, v in enumerate(b):
                out[i + j] += u * v
    return _trim(out)


def _power(p: Poly, n: int) -> Poly:
    out = _ONE
    for _ in range(n):
        out = _mul(out, p)
    return out


def _scale(p: Poly, c: Fraction) -> Poly:
    return _trim(u * c for u in p)


def _monic(p: Poly) -> tuple[Fraction, Poly]:
    lead = p[-1]
    return lead, tuple(u / lead for u in p)


def _gcd(a: Poly, b: Poly) -> Poly:
    """The greatest common divisor (Euclid in fractions); its length is its degree + 1."""
    while b:
        a, b = b, _remainder(a, b)
    return a


def _remainder(a: Poly, b: Poly) -> Poly:
    a = list(a)
    while len(a) >= len(b):
        q = a[-1] / b[-1]
        shift = len(a) - len(b)
        for i, v in enumerate(b):
            a[shift + i] -= q * v
        a = list(_trim(a))
    return tuple(a)
