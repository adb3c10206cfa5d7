"""Interval enclosures: the windows of the variable on which a decision cannot change.

Interval arithmetic in fractions over a decision's expression gives an interval
that holds every value the decision takes on a window (:func:`bounds_on`). Where
each decision's interval is one value the window holds no flip, whether or not
the decisions are monotone, and the walk solves nothing there: it asks this of
every window first.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import sympy

from capplan.analysis.flips.atoms import CACHED, moves
from capplan.engine.exact import NotClosedForm, Undefined, compile_exact
from capplan.language.walker import Walker


class _Unbounded(Exception):
    """An enclosure cannot be given (a division by an interval holding 0)."""


class _Nowhere(_Unbounded):
    """A division by exactly 0 on the whole window: the plan evaluates nowhere on it."""


NOWHERE = ()                # the enclosure of an expression undefined on the whole window


@functools.lru_cache(maxsize=CACHED)
def _enclosure(expr, x):
    """``expr`` as a function of a window [a, b] of x giving an interval (low, high)
    that holds every value ``expr`` takes on it (interval arithmetic in fractions;
    a truth value as (False, True) when it may be either). A window on which every
    decision's interval is one value holds no flip, whether or not the decision is
    monotone: 8 × ceil(30x / floor(37.56x)) is 8 on [100, 120] though it saws."""
    if not moves(expr, x):
        value = compile_exact(expr, x)(Fraction(0)) if isinstance(expr, sympy.Basic) else expr
        if isinstance(value, float):
            raise NotClosedForm("a float constant")
        return lambda a, b: (value, value)
    return _window_remembered(_Intervals(x).visit(expr))


def _window_remembered(f):
    """``f`` keeping its last window's enclosure: the decisions share their atoms, and
    :meth:`Probe._constant_on` asks each of them on one window (the same two objects)."""
    last = [None, None, None]

    def remembered(a, b):
        if last[0] is not a or last[1] is not b:
            out = f(a, b)
            last[:] = a, b, out
        return last[2]
    return remembered


class _Intervals(Walker):
    """The interval backend of the formula walker: each node a function of a window of x
    (each part's enclosure cached on its own: the decisions share their atoms)."""

    known_functions = {
        "ceiling": lambda p: (math.ceil(p[0]), math.ceil(p[1])),
        "floor": lambda p: (math.floor(p[0]), math.floor(p[1])),
        "Abs": lambda p: _absolute(p),
        "Not": lambda p: tuple(not v for v in reversed(p)),
        "Max": lambda *ps: tuple(max(values) for values in zip(*ps)),
        "Or": lambda *ps: tuple(max(values) for values in zip(*ps)),
        "Min": lambda *ps: tuple(min(values) for values in zip(*ps)),
        "And": lambda *ps: tuple(min(values) for values in zip(*ps)),
    }

    def __init__(self, x):
        self.x = x

    def part(self, expr):
        return _enclosure(expr, self.x)

    def apply(self, function, expr):
        parts = [self.part(arg) for arg in expr.args]
        return lambda a, b: function(*(f(a, b) for f in parts))

    def _print_Symbol(self, expr):                 # the variable: every other name is a constant
        return lambda a, b: (a, b)

    def _print_Piecewise(self, expr):
        pairs = [(self.part(v), self.part(c)) for v, c in expr.args]
        return lambda a, b: _choose(pairs, a, b)

    def _print_Add(self, expr):
        parts = [self.part(arg) for arg in expr.args]
        return lambda a, b: _fold_intervals(lambda p, q: (p[0] + q[0], p[1] + q[1]), [f(a, b) for f in parts])

    def _print_Mul(self, expr):
        parts = [self.part(arg) for arg in expr.args]
        return lambda a, b: _fold_intervals(_times, [f(a, b) for f in parts])

    def _print_Pow(self, expr):
        exponent = expr.args[1]
        if not (exponent.is_Integer and not moves(exponent, self.x)):
            raise NotClosedForm("a power that is not a whole number")
        base, n = self.part(expr.args[0]), int(exponent)
        return lambda a, b: _power_of(base(a, b), n)

    def _print_Relational(self, expr):
        compare = RELATIONS_OPS[expr.rel_op]
        left, right = (self.part(arg) for arg in expr.args)
        return lambda a, b: compare(left(a, b), right(a, b))

    def _unsupported(self, expr):
        raise NotClosedForm(f"{type(expr).__name__} has no enclosure")


def bounds_on(expr, x, a: Fraction, b: Fraction) -> tuple | None:
    """The enclosure of ``expr`` on [a, b] (:func:`_enclosure`); :data:`NOWHERE` where it is
    undefined on the whole window; None where no enclosure can be given."""
    try:
        return _enclosure(expr, x)(a, b)
    except _Nowhere:
        return NOWHERE
    except (NotClosedForm, _Unbounded, Undefined, ZeroDivisionError, TypeError):
        return None


def _fold_intervals(f, intervals):
    out = intervals[0]
    for i in intervals[1:]:
        out = f(out, i)
    return out


def _times(p, q):
    products = [p[0] * q[0], p[0] * q[1], p[1] * q[0], p[1] * q[1]]
    return min(products), max(products)


def _power_of(p, n: int):
    if n < 0:
        if p[0] == p[1] == 0:
            raise _Nowhere()
        if p[0] <= 0 <= p[1]:
            raise _Unbounded()
        low, high = _power_of(p, -n)
        return Fraction(1) / high, Fraction(1) / low
    values = [p[0] ** n, p[1] ** n]
    if n % 2 == 0 and p[0] < 0 < p[1]:
        return 0, max(values)
    return min(values), max(values)


def _absolute(p):
    if p[0] >= 0:
        return p
    if p[1] <= 0:
        return -p[1], -p[0]
    return 0, max(-p[0], p[1])


def _choose(pairs, a, b):
    out = None
    for value, cond in pairs:
        maybe = cond(a, b)
        if maybe == (False, False):
            continue
        try:
            v = value(a, b)
        except _Nowhere:
            raise _Unbounded() from None       # this branch may not be the one taken
        out = v if out is None else (min(out[0], v[0]), max(out[1], v[1]))
        if maybe == (True, True):
            return out
    if out is None:
        raise _Unbounded()
    return out


def _at_least(p, q, strict: bool):
    """Whether p >= q (p > q with ``strict``) for every pair of values of the two intervals."""
    sure = p[0] > q[1] if strict else p[0] >= q[1]
    never = p[1] <= q[0] if strict else p[1] < q[0]
    return (True, True) if sure else (False, False) if never else (False, True)


def _equal(p, q):
    if p[0] == p[1] == q[0] == q[1]:
        return True, True
    return (False, False) if p[1] < q[0] or q[1] < p[0] else (False, True)


RELATIONS_OPS = {
    ">=": lambda p, q: _at_least(p, q, False), ">": lambda p, q: _at_least(p, q, True),
    "<=": lambda p, q: _at_least(q, p, False), "<": lambda p, q: _at_least(q, p, True),
    "==": _equal, "!=": lambda p, q: tuple(not v for v in reversed(_equal(p, q))),
}
