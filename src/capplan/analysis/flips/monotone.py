"""Which way a decision goes on a window of the variable, where that can be shown.

A window on which every decision is monotone, and the decisions at its two ends
are equal, holds no flip: the walk need not solve it, and goal seek need not
look for a root of a gap that keeps its sign. :func:`direction` builds the
direction up the expression; a smooth part's is the sign of its derivative.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import sympy

from capplan.analysis.flips.atoms import CACHED, STEPS, moves, stepped
from capplan.analysis.flips.roots import as_polynomials, coefficient_roots, form_of, roots_inside
from capplan.analysis.rational import derivative, value_at
from capplan.engine.exact import Undefined, compile_exact


@functools.lru_cache(maxsize=CACHED)
def direction(expr, x, lo: Fraction, hi: Fraction) -> int | None:
    """+1 where ``expr`` never falls as x rises on [lo, hi], -1 where it never rises,
    0 where it does not depend on x; None where neither is shown.

    Built up the expression: a sum, a max or min, a step (``ceil``/``floor``)
    or a comparison keeps the direction its parts share; a constant factor
    keeps or turns it; a smooth part (a rational function of x) has the sign
    of its derivative when that has no root or pole inside the range. A
    boolean counts False < True."""
    if not moves(expr, x):
        return 0
    if expr == x:
        return 1
    if not stepped(expr):
        return _smooth_direction(expr, x, lo, hi)
    if isinstance(expr, STEPS + (sympy.Max, sympy.Min, sympy.Add, sympy.And, sympy.Or)):
        return _shared([direction(a, x, lo, hi) for a in expr.args])
    if isinstance(expr, sympy.Not):
        d = direction(expr.args[0], x, lo, hi)
        return None if d is None else -d
    if isinstance(expr, sympy.Mul):
        constant = sympy.Mul(*(a for a in expr.args if not moves(a, x)))
        varying = [a for a in expr.args if moves(a, x)]
        if len(varying) != 1 or not constant.is_real or constant.is_zero is not False:
            return None
        d = direction(varying[0], x, lo, hi)
        return None if d is None else d * (1 if constant.is_positive else -1)
    if isinstance(expr, sympy.core.relational.Relational) and expr.rel_op in ("<", "<=", ">", ">="):
        d = direction(expr.lhs - expr.rhs, x, lo, hi)
        return None if d is None else d * (1 if expr.rel_op in (">", ">=") else -1)
    return None


def _shared(directions: list) -> int | None:
    moving = {d for d in directions if d != 0}
    if None in moving or len(moving) > 1:
        return None
    return moving.pop() if moving else 0


@functools.lru_cache(maxsize=CACHED)
def _smooth_direction(g, x, lo: Fraction, hi: Fraction) -> int | None:
    """The direction of a rational function of x: its derivative's sign, when that
    neither vanishes nor has a pole inside (lo, hi). From ``g``'s own rational form t / b where
    it has one: (t'b − tb') / b² is the derivative, with the same roots and poles as its
    reduced form (a common factor has its roots among b's, which are poles of both)."""
    form = form_of(g, x)
    if form is not None:
        top, bottom = derivative(form)
        if not top:
            return 0
        if coefficient_roots(top, x, lo, hi) or coefficient_roots(bottom, x, lo, hi):
            return None
        middle = (lo + hi) / 2
        sign = value_at(top, middle) * value_at(bottom, middle)
        return 1 if sign > 0 else -1 if sign < 0 else None
    fraction = as_polynomials(sympy.diff(g, x), x)
    if fraction is None:
        return None
    top, bottom = fraction
    if top.is_zero:
        return 0
    if roots_inside(top, lo, hi) or roots_inside(bottom, lo, hi):
        return None
    middle = (lo + hi) / 2
    try:
        sign = compile_exact(top.as_expr() / bottom.as_expr(), x)(middle)
    except (Undefined, ZeroDivisionError):
        return None
    return 1 if sign > 0 else -1 if sign < 0 else None
