"""The closed-form points where a decision's step atoms change (step 1 of the method).

A ``ceil``/``floor`` argument crossing an integer, the two sides of a comparison
crossing, a ``max``/``if`` switching branch: :func:`step_points` lists every such
point of a decision in a window of the variable. A comparison with a step on one
side is first peeled (:func:`_peel`: ``floor(u) >= 32`` ⟺ ``u >= 32``).
Between the points where its inner steps change, those steps are constants
(:func:`freeze`), and each piece is a rational function whose crossings
:mod:`capplan.analysis.flips.roots` solves.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import sympy

from capplan.analysis.flips.atoms import BRANCHES, CACHED, MAX_CROSSINGS, STEPS, TooMany, moves, stepped
from capplan.analysis.flips.enclosures import bounds_on
from capplan.analysis.flips.roots import form_crossings, smooth_crossings
from capplan.analysis.rational import plus, rational_form, shifted
from capplan.engine.exact import Undefined, compile_exact


@functools.lru_cache(maxsize=CACHED)
def step_points(expr, x, lo, hi) -> frozenset[Fraction]:
    """Every point in (lo, hi) where ``expr`` may jump or switch branch (cached:
    the decisions of a scenario share their atoms, ``ceil(x/7)`` under GPUs and nodes alike)."""
    return frozenset(_find_points(expr, x, lo, hi))


def _find_points(expr, x, lo, hi) -> set[Fraction]:
    if not moves(expr, x):
        return set()
    if isinstance(expr, sympy.core.relational.Relational):
        return _relation_points(expr, x, lo, hi)
    if isinstance(expr, (sympy.And, sympy.Or)) and _settled(expr, x, lo, hi):
        return set()
    try:
        inner = set().union(*(step_points(a, x, lo, hi) for a in _parts(expr)))
    except TooMany:
        if isinstance(expr, STEPS) and (nested := _step_of_a_step(expr, x, lo, hi)) is not None:
            return nested
        raise
    if isinstance(expr, STEPS):
        return inner | _crossings(expr.args[0], x, lo, hi, inner, integers=True)
    if isinstance(expr, sympy.Abs):
        return inner | _crossings(expr.args[0], x, lo, hi, inner)
    if isinstance(expr, (sympy.Max, sympy.Min)):
        args = expr.args
        for i, a in enumerate(args):
            for b in args[i + 1:]:
                inner |= _crossings(a - b, x, lo, hi, inner)
    return inner


def _settled(expr, x, lo, hi) -> bool:
    """Whether one argument settles an ``and`` (false) or an ``or`` (true) on the whole window,
    as interval arithmetic shows: it then keeps one value there whatever its other arguments do,
    and their crossings (the fleet check's ``rate < ceil(...)`` on every piece) are no flips."""
    settled = (False, False) if isinstance(expr, sympy.And) else (True, True)
    return any(bounds_on(a, x, lo, hi) == settled for a in expr.args)


def _step_of_a_step(expr, x, lo, hi) -> set[Fraction] | None:
    """``ceil(g(floor(u)))`` where the inner step crosses too many integers to
    list (Little's law: ``ceil(210 / floor(throughput / 28.2))``): the outer
    step changes only where ``g`` of the inner step's value crosses an integer,
    which is found with the inner value ``k`` as the variable; each such ``k``
    is then where ``u`` crosses an integer next to it. None when ``expr`` is not
    of that form (x outside the one inner step, or a step inside ``u``)."""
    g = expr.args[0]
    steps = {n for n in sympy.preorder_traversal(g) if isinstance(n, STEPS) and moves(n, x)}
    if len(steps) != 1 or _smooth_in(g, x):
        return None
    (step,) = steps
    u = step.args[0]
    if stepped(u):
        return None
    k = sympy.Dummy("k")
    outer = g.xreplace({step: k})
    if moves(outer, x):
        return None
    ends = [v for v in (lo, hi, *smooth_crossings(sympy.diff(u, x), x, lo, hi, False))]
    try:
        f = compile_exact(u, x)
        values = [f(v) for v in ends]
    except (Undefined, ZeroDivisionError):
        return None
    low, high = Fraction(math.floor(min(values)) - 1), Fraction(math.ceil(max(values)) + 1)
    turns = smooth_crossings(outer, k, low, high, integers=True)   # may raise TooMany itself
    levels = {m for t in turns for m in (math.floor(t) - 1, math.floor(t), math.floor(t) + 1, math.ceil(t))}
    return set().union(*(smooth_crossings(u - m, x, lo, hi, False) for m in levels))


def _parts(expr):
    if isinstance(expr, sympy.Piecewise):
        return [part for pair in expr.args for part in pair]
    return expr.args


def _relation_points(rel, x, lo, hi) -> set[Fraction]:
    """Where a comparison may change: its sides cross (after peeling steps off a side)."""
    lhs, gap = _sides(rel, x)
    inner = step_points(lhs, x, lo, hi)
    return inner | _crossings(gap, x, lo, hi, inner)


@functools.lru_cache(maxsize=CACHED)
def _sides(rel, x) -> tuple:
    """A comparison as (the side x moves, peeled; that side minus the other), the same for
    every window (cached: built once, and the same objects keep the caches under them warm)."""
    lhs, rhs, op = rel.lhs, rel.rhs, rel.rel_op
    if moves(rhs, x) and not moves(lhs, x):
        lhs, rhs, op = rhs, lhs, _MIRROR[op]
    if moves(rhs, x):
        lhs, rhs = lhs - rhs, sympy.Integer(0)
    lhs, rhs = _peel(lhs, rhs, op, x)
    return lhs, lhs - rhs


_MIRROR = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}


def _peel(h, c, op, x):
    """``h op c`` with c constant, rewritten as ``u op' c'`` where ``h`` is a
    linear function of a ``floor``/``ceil`` of ``u``: the same truth for every
    x, so the same boundary, without the step in between."""
    while True:
        if isinstance(h, sympy.Add):
            constant = sympy.Add(*(a for a in h.args if not moves(a, x)))
            if constant == 0:
                return h, c
            h, c = h - constant, c - constant
        elif isinstance(h, sympy.Mul):
            constant = sympy.Mul(*(a for a in h.args if not moves(a, x)))
            if constant == 1 or not constant.is_nonzero or not constant.is_real:
                return h, c
            h, c = _divided(h, constant), c / constant
            op = _MIRROR[op] if constant.is_negative else op
        elif isinstance(h, STEPS) and op in _MIRROR and op not in ("==", "!="):
            # floor(u) >= c <=> u >= ceil(c); floor(u) > c <=> u >= floor(c) + 1; ceil(u) >= c <=> u > ceil(c) - 1 …
            lower = op in (">=", "<")
            if isinstance(h, sympy.floor):
                c = sympy.ceiling(c) if lower else sympy.floor(c) + 1
            else:
                c = sympy.ceiling(c) - 1 if lower else sympy.floor(c)
            h = h.args[0]
        else:
            return h, c


def _divided(h, constant):
    """``h / constant``; a number coefficient taken off as sympy keeps it apart (``as_coeff_Mul``),
    which is that quotient without flattening the product again: the division was most of what
    peeling a comparison cost, and a scenario's every decision is peeled anew."""
    coefficient, rest = h.as_coeff_Mul()
    return rest if coefficient is constant else h / constant


def _crossings(g, x, lo, hi, inner: set[Fraction], integers: bool = False) -> set[Fraction]:
    """Points in (lo, hi) where ``g`` crosses 0 (or, with ``integers``, any
    integer). Between the points where ``g``'s own steps change (``inner``),
    those steps are constants, so each piece is solved on its own."""
    if not _smooth_in(g, x):
        return set()            # x only inside g's own steps: g changes only where they do, at ``inner``
    if not stepped(g):
        return smooth_crossings(g, x, lo, hi, integers)
    if len(inner) > MAX_CROSSINGS:
        raise TooMany()
    edges = [lo, *sorted(inner), hi]
    out: set[Fraction] = set()
    split = None if integers else _split(g, x)
    for a, b in itertools.pairwise(edges):
        middle = (a + b) / 2
        if split is not None and (found := _shifted_crossings(split, x, middle, a, b)) is not None:
            out |= found
            continue
        try:
            form = None if integers else rational_form(g, x, functools.partial(_frozen_part, x, middle))
            piece = freeze(g, x, middle) if form is None else None
        except (Undefined, ZeroDivisionError):
            continue            # undefined on this piece: its ends are candidates already
        out |= smooth_crossings(piece, x, a, b, integers) if form is None else form_crossings(form, x, a, b)
    return out


@functools.lru_cache(maxsize=CACHED)
def _split(g, x) -> tuple | None:
    """A sum whose terms either hold no step (their sum's form :func:`rational.shifted`) or
    hold x only inside steps and conditions (a number on each piece), as (that form, those
    terms); None for any other ``g``, or when the form is None (each piece is then read in place)."""
    if not isinstance(g, sympy.Add):
        return None
    smooth = [a for a in g.args if not stepped(a)]
    constant = [a for a in g.args if stepped(a)]
    if not constant or any(_smooth_in(a, x) for a in constant):
        return None
    form = shifted(smooth, x)
    return None if form is None else (form, tuple(constant))


def _shifted_crossings(split, x, middle: Fraction, a: Fraction, b: Fraction) -> set[Fraction] | None:
    """:func:`_crossings` on the piece (a, b) of a sum :func:`_split` splits: its stepped terms' value
    at ``middle`` shifts the smooth terms' form. None where a stepped term is no number there
    (undefined, a truth value): the piece is then read in place as before, which says what follows."""
    form, constant = split
    shift = 0
    for term in constant:
        try:
            value = compile_exact(term, x)(middle)
        except Exception:               # noqa: BLE001 — whatever it is, the general path meets it again
            return None
        if type(value) is not int and type(value) is not Fraction:
            return None
        shift += value
    return form_crossings(plus(form, shift), x, a, b)


_PICKS = (sympy.Max, sympy.Min, sympy.Piecewise)    # branches whose value is one of their arguments


def _smooth_in(g, x) -> bool:
    """Whether x appears in ``g`` outside every step and condition (a max, min or
    if() passes on its arguments' values: ``floor(1000 / max(250, 1/x))`` moves with x)."""
    if g == x:
        return True
    if not moves(g, x):
        return False
    if isinstance(g, _PICKS):
        values = [v for v, _ in g.args] if isinstance(g, sympy.Piecewise) else g.args
        return any(_smooth_in(a, x) for a in values)
    if isinstance(g, STEPS + BRANCHES):
        return False
    return any(_smooth_in(a, x) for a in g.args)


def freeze(g, x, v: Fraction):
    """``g`` with each step or condition replaced by its exact value at ``v``, and each
    max, min or if() by the argument it picks there (still a function of x)."""
    if not moves(g, x) or g == x:
        return g
    if isinstance(g, sympy.Piecewise):
        return freeze(next(e for e, c in g.args if c is sympy.true or compile_exact(c, x)(v)), x, v)
    if isinstance(g, (sympy.Max, sympy.Min)):
        pick = max if isinstance(g, sympy.Max) else min
        return freeze(pick(g.args, key=lambda a: compile_exact(a, x)(v)), x, v)
    if isinstance(g, STEPS + BRANCHES):
        value = compile_exact(g, x)(v)
        return sympy.sympify(value) if isinstance(value, bool) else sympy.Rational(value.numerator,
                                                                                  value.denominator)
    return g.func(*(freeze(a, x, v) for a in g.args))


def _frozen_part(x, v: Fraction, g):
    """What :func:`freeze` puts in place of ``g`` at ``v``, for :func:`rational_form`'s
    ``resolve``: the node itself where it holds no step (its form is cached), the argument
    a branch picks, a step's or a condition's value; None: read its arguments. The
    steps are evaluated as :func:`freeze` evaluates them, so they fail where it fails."""
    if not moves(g, x) or g == x or not stepped(g):
        return g
    if isinstance(g, sympy.Piecewise):
        return next(e for e, c in g.args if c is sympy.true or compile_exact(c, x)(v))
    if isinstance(g, (sympy.Max, sympy.Min)):
        pick = max if isinstance(g, sympy.Max) else min
        return pick(g.args, key=lambda a: compile_exact(a, x)(v))
    if isinstance(g, STEPS + BRANCHES):
        return compile_exact(g, x)(v)
    return None
