"""The probe: one scenario's targets as functions of one variable, and the walk over them.

A :class:`Probe` turns each target into a closed form (a sympy expression of
the variable) and walks a range from a start outwards, window by window: a
window is shown to hold no flip (:mod:`capplan.analysis.flips.enclosures`,
:mod:`capplan.analysis.flips.monotone`), solved in closed form
(:mod:`capplan.analysis.flips.steps`), or cut in two; with no closed form at
all, it is bracketed (:mod:`capplan.analysis.flips.bracketing`). Each candidate
is then classified (step 3). Goal seek (:meth:`Probe.solve`) walks the same windows.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import sympy

from capplan.artifacts.answers import UNDEFINED, Flip, Holds, Solution, Target, Walk
from capplan.analysis.flips.atoms import MAX_CROSSINGS, TooMany, moves
from capplan.analysis.flips.bracketing import bracket, grid_points
from capplan.analysis.flips.enclosures import NOWHERE, bounds_on
from capplan.analysis.flips.floats import batch_at, evaluate_at, target_value
from capplan.analysis.flips.goalseek import merge, solve_bracketed, solve_exact, whole
from capplan.analysis.flips.monotone import direction
from capplan.analysis.flips.steps import step_points
from capplan.analysis.flips.values import as_column, as_key, reach_of
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import NotClosedForm, Symbolic, Undefined, compile_shared, factor
from capplan.errors import CapplanError


MAX_FLIPS = 100              # flips listed from a start towards an end; the walk stops there
WORK = 200                   # windows one walk may cut or solve (a window costs 0.01–0.1 s)
GALLOP = 5                  # a walk's first window spans 1/2^GALLOP of its range (:meth:`Probe._outwards`)


class Probe:
    """The targets of one scenario as functions of one variable."""

    def __init__(self, e: Evaluation, nominal: Evaluation, values: dict, nominal_values: dict,
                 variable: Target, targets: list[Target], decisions: int, shared: dict | None = None):
        self.e, self.nominal, self.variable = e, nominal, variable
        self.shared = {} if shared is None else shared
        self.targets, self.decisions = targets, decisions
        self.quantity = e.model.quantities[variable.name]
        base = values[variable.name]
        self.today = base if variable.index is None else base[variable.index]
        self.symbol = sympy.Symbol("x", real=True)
        self._direction_cache: dict = {}
        self._moving = 0                                     # see :meth:`_constant_on`
        self._engine_known: dict[Fraction, tuple] = {}      # the float engine's targets, by value
        self._seen: dict | None = None      # during a walk, the targets' values by point: a flip's
        #                                     two sides are points whose decisions the walk has computed
        self.expressions, self.functions = self._closed_forms(values, nominal_values)

    def _closed_forms(self, values: dict, nominal_values: dict) -> tuple:
        """The targets as expressions of the variable and as exact functions of it (None, None:
        no closed form, bracket with the float engine). Probes whose closed forms read the
        same values (another scenario that moves none of them, or only the variable itself) share them."""
        graph = self.e.graph
        wanted = tuple(t.name for t in self.targets)
        reach = ("reach", id(graph), self.variable.name, wanted)     # graphs live as long as their evaluations
        if reach not in self.shared:
            self.shared[reach] = reach_of(graph, self.variable.name, wanted)
        below, needed, reads = self.shared[reach]
        scalar = self.variable.index is None          # its value is the symbol: today's value is not read
        key = ("forms", id(graph), self.variable, tuple(self.targets),
               tuple((n, as_key(values[n])) for n in reads if not (scalar and n == self.variable.name)))
        found = self.shared.get(key)         # one look-up: hashing the key hashes every value read
        if found is None:
            try:
                expressions = self._symbolic(values, nominal_values, below, needed)
                found = (expressions, compile_shared(expressions, self.symbol))
            except NotClosedForm:
                found = (None, None)
            self.shared[key] = found
        return found

    # -- values ----------------------------------------------------------------------------
    def at(self, v: Fraction, count: int | None = None) -> tuple:
        """The first ``count`` targets' exact values at ``v`` (all by default;
        ``UNDEFINED`` where the plan does not evaluate); during a walk, each computed once."""
        if self.functions is None:
            return self._engine_at(v)[:count]
        n = len(self.functions) if count is None else min(count, len(self.functions))
        seen = self._seen if type(v) is Fraction else None
        known = () if seen is None else seen.get(v, ())
        if len(known) >= n:
            return known[:n]
        out = list(known)
        for f in self.functions[len(known):n]:
            try:
                out.append(f(v))
            except (Undefined, ZeroDivisionError):
                out.append(UNDEFINED)
        out = tuple(out)
        if seen is not None:
            seen[v] = out
        return out

    def _engine_at(self, v: Fraction) -> tuple:
        known = self._engine_known.get(v)
        if known is not None:
            return known
        try:
            e = evaluate_at(self.e, self.variable, float(v), self.nominal)
        except CapplanError:
            return (UNDEFINED,) * len(self.targets)
        out = []
        for t in self.targets:
            value = e.values[t.name]
            value = value if t.index is None else value[t.index]
            out.append(target_value(e.model.quantities[t.name], value))
        return tuple(out)

    def _engine_grid(self, points: list[Fraction]) -> None:
        """The float engine's targets at every point of a grid in one pass of the batch backend
        (one member per point), kept for :meth:`_engine_at`. A member where the scalar
        evaluation might stop (a formula's failure, a model check, a value no number holds)
        is left to :meth:`_engine_at`, which says why; the others equal it bit for bit."""
        points = [p for p in dict.fromkeys(points) if p not in self._engine_known]
        if not points:
            return
        values, ok = batch_at(self.e, self.variable, [float(p) for p in points], self.nominal)
        for i, p in enumerate(points):
            if ok[i]:
                self._engine_known[p] = tuple(
                    target_value(self.e.model.quantities[t.name], values[t.name][i if values[t.name].shape[0] > 1
                                                                                 else 0, t.index or 0])
                    for t in self.targets)

    def _symbolic(self, values: dict, nominal_values: dict, below: frozenset, needed: frozenset) -> list:
        graph = self.e.graph
        start = self.variable.name
        local = dict(values)
        column = values[start]
        local[start] = self.symbol if self.variable.index is None else tuple(
            self.symbol if i == self.variable.index else c for i, c in enumerate(column))
        walker = Symbolic(local, nominal_values)
        for name in graph.order:
            if name != start and name in below and name in needed:
                local[name] = as_column(walker.visit(graph.nodes[name].formula.expr), self.e,
                                        graph.nodes[name].quantity)
        return [sympy.sympify(local[t.name] if t.index is None else local[t.name][t.index]) for t in self.targets]

    # -- flips -----------------------------------------------------------------------------
    @property
    def integer(self) -> bool:
        """The variable is a count (GPUs, replicas): only whole numbers are values of it."""
        domain = self.quantity.domain
        return bool(domain and domain.integer) and factor(self.quantity.unit) == 1

    def flips(self, lo: Fraction, hi: Fraction) -> list[Flip]:
        """Every flip of the decisions strictly inside (lo, hi), in order (at most
        :data:`MAX_FLIPS`, and no further than the work budget reaches: see :meth:`walk`)."""
        return self.walk(lo, hi).flips

    def holds(self, lo: Fraction, hi: Fraction) -> Holds:
        """The nearest flip on each side of today's value within [lo, hi]."""
        up, down = self.walk(self.today, hi, 1), self.walk(self.today, lo, 1)
        return Holds(self.today, down.flips[0] if down.flips else None, up.flips[0] if up.flips else None,
                     down.reached, up.reached)

    def walk(self, start: Fraction, end: Fraction, most: int = MAX_FLIPS) -> Walk:
        """The flips from ``start`` towards ``end``, nearest first: a flip at ``start``
        itself (the decisions there differ from just beyond it) included, at most ``most``.

        Every flip is found: the range is cut into windows, and a window is
        either solved in closed form (each decision's step atoms crossing few
        enough integers, :func:`step_points`), or shown to hold no flip — every
        decision is monotone in the variable on the whole range
        (:func:`direction`) and the decisions at the window's two ends are
        equal — or cut in two. A count is cut down to a few whole numbers,
        each tried; a real input down to two adjacent floats (a flip found
        there is marked bracketed). The walk gives up only past
        :data:`WORK` windows, and says how far it got (``reached``): nothing
        between ``start`` and ``reached`` is missed."""
        if self.functions is None:
            return self._walk_bracketed(start, end, most)
        key = ("walk", tuple(self.expressions), self.integer, self.decisions, start, end, most)
        found = self.shared.get(key)
        if found is None:
            found = self.shared[key] = self._walk(start, end, most)
        return found

    def _walk(self, start: Fraction, end: Fraction, most: int) -> Walk:
        up = end > start
        walker = self._count_walk if self.integer else self._real_walk
        found, reached = [], end
        self._seen = {}
        try:
            for flip in walker(start, end, up):
                found.append(flip)
                if len(found) >= most:
                    reached = flip.value
                    break
        except _Budget as stop:
            reached = stop.at
        finally:
            self._seen = None
        return Walk(found, reached)

    def _real_walk(self, start: Fraction, end: Fraction, up: bool):
        """The flips of a real variable, nearest first: one exact evaluation between
        two neighbouring candidates says whether the first is a flip, one at it which
        side it belongs to."""
        near_at, near = start, self.decided(start)
        previous = None
        for point, exact in itertools.chain([(start, True)], self._candidates(start, end, up), [(None, True)]):
            if previous is not None:
                p, p_exact = previous
                far_at = (p + (end if point is None else point)) / 2
                far = self.decided(far_at)
                if far != near:
                    yield self._flip(p, p_exact, start, (near_at, near), far_at, up)
                near_at, near = far_at, far
            previous = (point, exact)

    def _flip(self, p: Fraction, exact: bool, start: Fraction, near: tuple, far_at: Fraction, up: bool) -> Flip:
        """The flip at ``p``: the side ``p`` belongs to, the targets on each side."""
        near_at, decided = near
        belongs_near = (decided if p == start else self.decided(p)) == decided
        below_at, above_at = (near_at, far_at) if up else (far_at, near_at)
        return Flip(p, "below" if belongs_near == up else "above", exact, self.at(below_at), self.at(above_at))

    def _count_walk(self, start: Fraction, end: Fraction, up: bool):
        """The flips of a count: steps between neighbouring whole numbers whose decisions
        differ, reported at the lower one ("above 1 GPU"). A change of the decisions at a
        real x (a candidate) is a step between the floor and the ceiling of x, so the
        steps next to each candidate are the only ones to try."""
        lo, hi = sorted((start, end))
        tried: set[int] = set()
        for point, _ in itertools.chain([(start, True)], self._candidates(start, end, up)):
            for n in sorted({math.ceil(point) - 1, math.floor(point)}, reverse=not up):
                if n in tried or not (lo <= n and n + 1 <= hi):
                    continue
                tried.add(n)
                low, high = self.at(Fraction(n)), self.at(Fraction(n + 1))
                if low[:self.decisions] != high[:self.decisions]:
                    yield Flip(Fraction(n), "below", True, low, high)

    def _candidates(self, start: Fraction, end: Fraction, up: bool):
        """Points strictly between start and end where the decisions may change, in walking
        order, each with whether it is exact; raises :class:`_Budget` past :data:`WORK` windows."""
        lo, hi = sorted((start, end))
        work = [0]
        emitted = None
        directions = functools.partial(self._directions, lo, hi)
        windows = self._windows(lo, hi, up, directions, work) if self.integer else \
            self._outwards(lo, hi, up, directions, work)
        for point, exact in windows:
            if point != emitted and lo < point < hi:
                emitted = point
                yield point, exact

    def _outwards(self, lo: Fraction, hi: Fraction, up: bool, directions, work):
        """:meth:`_windows` from the start outwards: the first 1/2^:data:`GALLOP` of the range, each
        next one twice as wide, their edges candidates as a cut's middle is. The nearest flip (all a
        record asks for) then costs the few crossings before it, not the up to 64 per step of the
        first halving of the range that :meth:`_windows` would solve whole."""
        if self._constant_on(lo, hi):
            return                                      # nothing flips on the whole range: one look
        width = (hi - lo) / 2 ** GALLOP
        near = lo if up else hi
        while True:
            far = min(near + width, hi) if up else max(near - width, lo)
            yield from self._windows(*sorted((near, far)), up, directions, work)
            if far == (hi if up else lo):
                return
            yield far, True
            near, width = far, width * 2

    def _windows(self, a: Fraction, b: Fraction, up: bool, directions, work):
        work[0] += 1
        if work[0] > WORK:
            raise _Budget(a if up else b)
        if self._constant_on(a, b):
            return
        try:
            points = set().union(*(step_points(ex, self.symbol, a, b) for ex in self._varying))
            if len(points) <= 4 * MAX_CROSSINGS:
                yield from ((p, True) for p in sorted(points, reverse=not up))
                return
        except (NotClosedForm, TooMany):
            pass
        if all(d is not None for d in directions()) and self.decided(a) == self.decided(b):
            return                                      # monotone decisions, equal at both ends: none inside
        if self.integer and b - a <= 4 * MAX_CROSSINGS // 8:
            first, last = math.ceil(a), math.floor(b)
            steps = range(first, last + 1) if up else range(last, first - 1, -1)
            yield from ((Fraction(n), True) for n in steps)
            return
        middle = Fraction(math.floor((a + b) / 2)) if self.integer else _middle(a, b)
        if middle is None or not a < middle < b:
            yield from (((a, False), (b, False)) if up else ((b, False), (a, False)))
            return
        halves = ((a, middle), (middle, b)) if up else ((middle, b), (a, middle))
        yield from self._windows(*halves[0], up, directions, work)
        yield middle, True
        yield from self._windows(*halves[1], up, directions, work)

    @functools.cached_property
    def _varying(self) -> list:
        """The decisions that depend on the variable: the others have no points, and go one way (0)."""
        return [ex for ex in self.expressions[:self.decisions] if moves(ex, self.symbol)]

    @functools.cached_property
    def _unsettled(self) -> list:
        """The decisions :meth:`_constant_on` asks: those that depend on the variable, and any
        other whose enclosure cannot be given (it then answers no on every window)."""
        return [ex for ex in self.expressions[:self.decisions]
                if moves(ex, self.symbol) or bounds_on(ex, self.symbol, Fraction(0), Fraction(0)) is None]

    def _constant_on(self, a: Fraction, b: Fraction) -> bool:
        """Whether interval arithmetic shows every decision to take one value on [a, b]. The
        decision that moved on the last window is asked first: it most likely moves on this one."""
        decisions = self._unsettled
        first = self._moving
        for i in itertools.chain(range(first, len(decisions)), range(first)):
            bounds = bounds_on(decisions[i], self.symbol, a, b)
            if bounds is None or (bounds != NOWHERE and bounds[0] != bounds[1]):
                self._moving = i
                return False
        return True

    def _directions(self, lo: Fraction, hi: Fraction) -> list:
        """The direction on [lo, hi] of each decision that depends on the variable (+1, -1;
        None: not known to be monotone)."""
        key = (lo, hi)
        if key not in self._direction_cache:
            self._direction_cache[key] = [direction(ex, self.symbol, lo, hi)
                                          for ex in self._varying]
        return self._direction_cache[key]

    def _walk_bracketed(self, start: Fraction, end: Fraction, most: int) -> Walk:
        """The float engine's decisions (no closed form of them): a scan and bisection,
        every flip marked bracketed; two flips within one cell of the scan may go unseen."""
        lo, hi = sorted((start, end))
        self._engine_grid([lo, *grid_points(lo, hi), hi])
        points = bracket(self.decided, start, end, most + 1)
        found = []
        near_at, near = start, self.decided(start)
        for i, p in enumerate(points):
            far_at = (p + (points[i + 1] if i + 1 < len(points) else end)) / 2
            far = self.decided(far_at)
            if far != near:
                found.append(self._flip(p, False, start, (near_at, near), far_at, end > start))
            near_at, near = far_at, far
        return Walk(found[:most], end)

    def decided(self, v: Fraction) -> tuple:
        """The decisions alone at ``v`` (what a flip is a change of)."""
        return self.at(v, self.decisions)

    # -- goal seek ---------------------------------------------------------------------------
    def solve(self, left: int, right: int | Fraction, lo: Fraction, hi: Fraction) -> list[Solution]:
        """Where target ``left`` equals target ``right`` (an index) or a number, in [lo, hi]:
        points and intervals (a count: whole numbers), found in windows as :meth:`walk` finds flips."""
        def gap(v):
            values = self.at(v)
            other = values[right] if isinstance(right, int) else right
            if UNDEFINED in (values[left], other):
                return None
            return values[left] - other

        if self.expressions is None:
            self._engine_grid([lo, *grid_points(lo, hi), hi])
            return solve_bracketed(gap, lo, hi)
        other = self.expressions[right] if isinstance(right, int) else sympy.Rational(right.numerator,
                                                                                     right.denominator)
        g = self.expressions[left] - other
        monotone = direction(g, self.symbol, lo, hi) is not None
        out: list[Solution] = []
        stack, work = [(lo, hi)], 0
        while stack:
            a, b = stack.pop()
            work += 1
            if work > WORK:
                raise CapplanError(f"goal seek gave up after {WORK:,} windows between {float(lo):g} and "
                                   f"{float(hi):g} (base units); narrow --range")
            bounds = bounds_on(g, self.symbol, a, b)
            if bounds == NOWHERE or (bounds is not None and (bounds[0] > 0 or bounds[1] < 0)):
                continue                         # interval arithmetic: the gap keeps one sign here, or has none
            if bounds == (0, 0):
                out.append(Solution(a, b, True))
                continue
            try:
                out += solve_exact(g, self.symbol, a, b, gap)
                continue
            except (NotClosedForm, TooMany):
                pass
            ga, gb = gap(a), gap(b)
            if monotone and None not in (ga, gb):
                if ga == gb == 0:
                    out.append(Solution(a, b, True))
                    continue
                if ga * gb > 0:
                    continue                     # monotone, the same sign at both ends: no root inside
            middle = Fraction(math.floor((a + b) / 2)) if self.integer else _middle(a, b)
            if middle is None or not a < middle < b:
                out += [Solution(v, v, False) for v in (a, b) if gap(v) == 0] or \
                    ([Solution(a, a, False)] if None not in (ga, gb) and ga * gb < 0 else [])
                continue
            stack += [(middle, b), (a, middle)]
        solutions = merge(out)
        return whole(solutions) if self.integer else solutions


class _Budget(Exception):
    """The walk used its :data:`WORK` windows; ``at``: how far it got."""

    def __init__(self, at: Fraction):
        super().__init__(at)
        self.at = at


def _middle(a: Fraction, b: Fraction) -> Fraction | None:
    """Where to cut a real window in two; None when its ends are neighbouring floats."""
    low, high = float(a), float(b)
    if math.nextafter(low, math.inf) >= high:
        return None
    return (a + b) / 2
