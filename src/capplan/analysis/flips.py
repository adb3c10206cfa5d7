"""Flip points: the exact values of one input at which a plan's decisions change.

A sizing decision is a step function of each input: GPUs are a ``ceil``,
gates and the fixed-fleet check are comparisons. So "how wrong can the
forecast be before the answer changes?" has exact answers: with λ_safe =
10 × 0.7 = 7 req/s, a 10th GPU is needed *above* 63 req/s, and 63 itself
still needs 9. This module finds them.

For one scenario and one *variable* (an input, a pinned derived quantity such
as ``instance_max_rate``, or a table cell), every other value is held at the
plan's exact value (:mod:`capplan.engine.exact`), the scenario's nominal
fleet at the size today's nominal plan buys, and each target quantity becomes
a sympy expression of the variable. Then:

1. **Closed forms.** Where a target can change is where one of its step
   atoms does: a ``ceil``/``floor`` argument crossing an integer, the two
   sides of a comparison crossing, a ``max``/``if`` switching branch. Each
   atom is a rational function of the variable, so the crossings are roots
   of polynomials, found exactly. A comparison of a ``floor`` with a number
   is first *peeled* (``floor(u) >= 32`` ⟺ ``u >= 32``) so that the
   450,379-token floor under the memory gate does not become 450,379
   candidates.
2. **Bracketing**, where an atom has no closed form or too many crossings:
   a grid scan of the exact targets, each change bisected down to two
   adjacent floats. Where no target has a closed form, the float engine's
   grid is one pass of its batch backend (one member per grid point).
3. **Classification.** Each candidate is kept only if the targets differ
   just below and just above it (evaluated exactly between candidates); the
   value at the candidate itself says which side the boundary belongs to.

:func:`evaluate_at` evaluates the same change with the float engine, so
tests and users can check a flip point against the tool's own evaluation.

Scenarios of one plan share much: a :class:`Search` walks each scenario's
exact values again only where its changed inputs reach, and its probes share
closed forms (and the walks over them) with any other scenario's probe that
reads the same values.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import sympy
from sympy.polys.domains import QQ
from sympy.polys.polyclasses import DMP

from capplan.engine import unitcheck
from capplan.engine.evaluate import FLEET_LIMIT, Evaluation, evaluate, run_batch
from capplan.engine.graph import build
from capplan.language import units
from capplan.engine.exact import (
    Exact,
    NotClosedForm,
    Symbolic,
    Undefined,
    compile_exact,
    compile_shared,
    factor,
    rational,
)
from capplan.errors import CapplanError
from capplan.analysis.rational import derivative, plus, rational_form, shifted, value_at
from capplan.language.walker import Walker
from capplan.loading.plan import NOMINAL, Input

UNDEFINED = "undefined"      # a target's value where the plan does not evaluate
MAX_CROSSINGS = 64           # more integer crossings of one atom than this in a window: cut the window
GRID = 256                   # bracketing (no closed form at all): points of the first scan
MAX_FLIPS = 100              # flips listed from a start towards an end; the walk stops there
WORK = 200                   # windows one walk may cut or solve (a window costs 0.01–0.1 s)
GALLOP = 5                  # a walk's first window spans 1/2^GALLOP of its range (:meth:`Probe._outwards`)


@dataclass(frozen=True)
class Target:
    """A quantity, or one row of a table column."""

    name: str
    index: int | None = None


@dataclass(frozen=True)
class Flip:
    """A value of the variable (base units) at which the decisions change."""

    value: Fraction
    side: str               # 'below': the value itself still gives the decisions below it; 'above'
    exact: bool             # a closed form (else bracketed to two adjacent floats)
    below: tuple            # every target's value just below, in target order
    above: tuple            # … and just above


@dataclass(frozen=True)
class Solution:
    """Where a target reaches a value: one point, or an interval it stays on."""

    low: Fraction
    high: Fraction          # == low for a point
    exact: bool
    low_closed: bool = True
    high_closed: bool = True


@dataclass(frozen=True)
class Walk:
    """The flips from a start towards an end, nearest first, and how far the search
    reached (the end, unless it stopped at :data:`MAX_FLIPS` flips or :data:`WORK` windows)."""

    flips: list
    reached: Fraction


@dataclass(frozen=True)
class Holds:
    """The interval around today's value in which no decision changes."""

    today: Fraction
    low: Flip | None        # the nearest flip below (None: none down to ``lo``)
    high: Flip | None
    lo: Fraction            # how far the search reached: the range, unless the work ran out first
    hi: Fraction


class Search:
    """Every scenario of one plan in exact values, each computed once when first
    asked for; then one :class:`Probe` per scenario and variable."""

    def __init__(self, evaluations: list[Evaluation], wanted: frozenset[str] | None = None):
        """``wanted``: the only targets a probe will name (None: any node). Then only what
        they rest on is computed exactly: a traffic profile's thousands of rows, which no
        decision reads, are never walked in fractions."""
        self.evaluations = {e.scenario.name: e for e in evaluations}
        first = evaluations[0]
        self.nominal = first if first.scenario.name == NOMINAL else \
            evaluate(first.plan, first.plan.nominal, first.model)        # `eval --scenario S` passes S alone
        alike = all(e.graph.same_formulas(self.nominal.graph) for e in evaluations)
        self.keep = _kept(self.nominal.graph, wanted) if wanted is not None and alike else None
        self.nominal_values = exact_values(self.nominal, None, keep=self.keep)
        self._values = {NOMINAL: self.nominal_values} if first.scenario.name == NOMINAL else {}
        self._shared: dict = {}        # what probes of scenarios alike share: closed forms, walks

    def values(self, scenario: str) -> dict:
        """Every node of one scenario as exact numbers, each computed when first read
        (:class:`ScenarioValues`): a probe reads only what its closed forms do not recompute
        in the symbol, and most of what a changed input reaches (the queueing figures, the
        costs) is recomputed by every probe. Where the scenario's graph has the nominal
        scenario's formulas, a node none of whose dependencies differs keeps the nominal value."""
        if scenario not in self._values:
            e = self.evaluations[scenario]
            alike = e.graph.same_formulas(self.nominal.graph)
            self._values[scenario] = ScenarioValues(e, self.nominal_values,
                                                    base=self.nominal_values if alike else None)
        return self._values[scenario]

    def probe(self, scenario: str, variable: Target, targets: list[Target], decisions: int) -> Probe:
        """The first ``decisions`` targets decide; the others are carried along (costs to report)."""
        e = self.evaluations[scenario]
        return Probe(e, self.nominal, self.values(scenario), self.nominal_values, variable, targets, decisions,
                     self._shared)

    def exact_at(self, scenario: str, variable: Target, value: Fraction) -> dict:
        """Every node of a scenario in exact numbers with ``variable`` set to
        ``value``: the graph walked again in fractions, a check on the closed
        forms that shares nothing with them but the walker. Raises
        :class:`Undefined` where the plan does not evaluate."""
        e = self.evaluations[scenario]
        base = self.values(scenario)[variable.name]
        given = value if variable.index is None else tuple(
            value if i == variable.index else v for i, v in enumerate(base))
        return exact_values(e, self.nominal_values, {variable.name: given}, keep=self.keep)


def exact_values(e: Evaluation, nominal_values: dict | None, given: dict | None = None,
                 base: dict | None = None, keep: frozenset[str] | None = None) -> dict:
    """Every node of one scenario as exact numbers (a table column as a
    tuple); ``given`` sets some nodes (an input, or a derived quantity pinned).
    ``base``: another scenario's values under the same formulas; a formula none
    of whose dependencies differs from there keeps its value without a walk.
    ``keep``: the formulas to compute (None: all; see :func:`_kept`)."""
    values = ScenarioValues(e, nominal_values, given, base)
    for name in e.graph.order:
        if keep is None or name in keep:
            values[name]
    return dict(values)


class ScenarioValues(dict):
    """One scenario's nodes as exact numbers (:func:`exact_values`), each computed when
    first read, its dependencies before it (a missing key is computed, so ``get`` and ``in``
    see only what has been read). Equal, node by node, to the values computed all at once."""

    def __init__(self, e: Evaluation, nominal_values: dict | None, given: dict | None = None,
                 base: dict | None = None):
        super().__init__()
        self.e, self.given, self.base = e, given or {}, base
        self._walker = Exact(self, self if nominal_values is None else nominal_values)
        self._same: dict[str, bool] = {}        # with a base: whether a node's value is base's
        self._rank: dict[str, int] | None = None   # each node's place in the graph's order

    def __missing__(self, name: str):
        graph = self.e.graph
        if name not in graph.nodes:
            raise KeyError(name)
        todo, stack = {name}, [name]
        while stack:                            # every node not yet computed that ``name`` rests on
            for d in graph.nodes[stack.pop()].deps:
                if d not in todo and not dict.__contains__(self, d):
                    todo.add(d)
                    stack.append(d)
        if self._rank is None:
            self._rank = {n: i for i, n in enumerate(graph.order)}
        for n in sorted(todo, key=self._rank.__getitem__):
            self._compute(n)
        return dict.__getitem__(self, name)

    def _compute(self, name: str) -> None:
        e, base = self.e, self.base
        node = e.graph.nodes[name]
        q = node.quantity
        if name in self.given:
            value = self.given[name]
        elif node.formula is not None:
            if base is not None and name in base and all(self._same[d] for d in node.deps):
                self[name] = base[name]
                self._same[name] = True
                return
            value = _column(self._walker.visit(node.formula.expr), e, q)
        elif q.table:
            rows = e.scenario.tables[q.table].rows
            value = [r[q.column] for r in rows] if q.kind == "text" else \
                tuple(rational(r[q.column], q.unit) for r in rows)
        else:
            value = rational(e.inputs[name].value, q.unit)
        self[name] = value
        if base is not None:
            self._same[name] = _identical(value, base.get(name))


def _kept(graph, wanted: frozenset[str]) -> frozenset[str]:
    """Every input, and the formulas ``wanted`` rest on, what they read through nominal() included."""
    kept = {n for n in graph.order if graph.nodes[n].formula is None}
    stack = [n for n in wanted if n in graph.nodes]
    while stack:
        name = stack.pop()
        if name in kept and graph.nodes[name].formula is not None:
            continue
        kept.add(name)
        formula = graph.nodes[name].formula
        stack.extend(d for d in (formula.names if formula is not None else ()) if d in graph.nodes and d not in kept)
    return frozenset(kept)


def _identical(a, b) -> bool:
    """Equal exact values of the same types (1 and Fraction(1) print alike, but keep them apart)."""
    if isinstance(a, tuple | list):
        return isinstance(b, type(a)) and len(a) == len(b) and all(map(_identical, a, b))
    return type(a) is type(b) and a == b


def _column(value, e: Evaluation, q):
    """A table's computed column is a tuple even when its formula reads only scalars."""
    if q.table and not isinstance(value, tuple):
        return (value,) * len(e.scenario.tables[q.table].rows)
    return value


def _reach(graph, start: str, wanted: tuple[str, ...]) -> tuple[frozenset, frozenset, tuple[str, ...]]:
    """What a variable moves (``below``), what the targets rest on (``needed``), and the
    values the targets' closed forms read besides the variable: the inputs of the walk."""
    below = {start}
    for name in graph.order:
        if any(d in below for d in graph.nodes[name].deps):
            below.add(name)
    needed = set(wanted)
    for name in reversed(graph.order):
        if name in needed:
            needed.update(graph.nodes[name].deps)
    walked = [n for n in graph.order if n != start and n in below and n in needed]
    reads = {d for n in walked for d in graph.nodes[n].deps if d not in below}
    reads |= {n for n in wanted if n not in below} | {start}
    return frozenset(below), frozenset(needed), tuple(sorted(reads))


def _frozen(value):
    """A value as a key, each number with its type (1, True and Fraction(1) are equal keys
    otherwise), a column (a tuple, a text list) entry by entry."""
    if isinstance(value, tuple | list):
        return tuple(_frozen(v) for v in value)
    return type(value), value


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
            self.shared[reach] = _reach(graph, self.variable.name, wanted)
        below, needed, reads = self.shared[reach]
        scalar = self.variable.index is None          # its value is the symbol: today's value is not read
        key = ("forms", id(graph), self.variable, tuple(self.targets),
               tuple((n, _frozen(values[n])) for n in reads if not (scalar and n == self.variable.name)))
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
            out.append(_target_value(e.model.quantities[t.name], value))
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
                    _target_value(self.e.model.quantities[t.name], values[t.name][i if values[t.name].shape[0] > 1
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
                local[name] = _column(walker.visit(graph.nodes[name].formula.expr), self.e,
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
        enough integers, :func:`_points`), or shown to hold no flip — every
        decision is monotone in the variable on the whole range
        (:func:`_direction`) and the decisions at the window's two ends are
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
            points = set().union(*(_points(ex, self.symbol, a, b) for ex in self._varying))
            if len(points) <= 4 * MAX_CROSSINGS:
                yield from ((p, True) for p in sorted(points, reverse=not up))
                return
        except (NotClosedForm, _TooMany):
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
        return [ex for ex in self.expressions[:self.decisions] if _moves(ex, self.symbol)]

    @functools.cached_property
    def _unsettled(self) -> list:
        """The decisions :meth:`_constant_on` asks: those that depend on the variable, and any
        other whose enclosure cannot be given (it then answers no on every window)."""
        return [ex for ex in self.expressions[:self.decisions]
                if _moves(ex, self.symbol) or _bounds(ex, self.symbol, Fraction(0), Fraction(0)) is None]

    def _constant_on(self, a: Fraction, b: Fraction) -> bool:
        """Whether interval arithmetic shows every decision to take one value on [a, b]. The
        decision that moved on the last window is asked first: it most likely moves on this one."""
        decisions = self._unsettled
        first = self._moving
        for i in itertools.chain(range(first, len(decisions)), range(first)):
            bounds = _bounds(decisions[i], self.symbol, a, b)
            if bounds is None or (bounds != NOWHERE and bounds[0] != bounds[1]):
                self._moving = i
                return False
        return True

    def _directions(self, lo: Fraction, hi: Fraction) -> list:
        """The direction on [lo, hi] of each decision that depends on the variable (+1, -1;
        None: not known to be monotone)."""
        key = (lo, hi)
        if key not in self._direction_cache:
            self._direction_cache[key] = [_direction(ex, self.symbol, lo, hi)
                                          for ex in self._varying]
        return self._direction_cache[key]

    def _walk_bracketed(self, start: Fraction, end: Fraction, most: int) -> Walk:
        """The float engine's decisions (no closed form of them): a scan and bisection,
        every flip marked bracketed; two flips within one cell of the scan may go unseen."""
        lo, hi = sorted((start, end))
        self._engine_grid([lo, *_grid(lo, hi), hi])
        points = _bracket(self.decided, start, end, most + 1)
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
            self._engine_grid([lo, *_grid(lo, hi), hi])
            return _solve_bracketed(gap, lo, hi)
        other = self.expressions[right] if isinstance(right, int) else sympy.Rational(right.numerator,
                                                                                     right.denominator)
        g = self.expressions[left] - other
        monotone = _direction(g, self.symbol, lo, hi) is not None
        out: list[Solution] = []
        stack, work = [(lo, hi)], 0
        while stack:
            a, b = stack.pop()
            work += 1
            if work > WORK:
                raise CapplanError(f"goal seek gave up after {WORK:,} windows between {float(lo):g} and "
                                   f"{float(hi):g} (base units); narrow --range")
            bounds = _bounds(g, self.symbol, a, b)
            if bounds == NOWHERE or (bounds is not None and (bounds[0] > 0 or bounds[1] < 0)):
                continue                         # interval arithmetic: the gap keeps one sign here, or has none
            if bounds == (0, 0):
                out.append(Solution(a, b, True))
                continue
            try:
                out += _solve_exact(g, self.symbol, a, b, gap)
                continue
            except (NotClosedForm, _TooMany):
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
        solutions = _merge(out)
        return _whole(solutions) if self.integer else solutions


def evaluate_at(e: Evaluation, variable: Target, value: float, nominal: Evaluation) -> Evaluation:
    """Scenario ``e`` with ``variable`` set to ``value`` (base units; a derived
    quantity is pinned), evaluated by the float engine with today's nominal
    plan fixing the nominal fleet."""
    scenario = e.scenario
    q = e.model.quantities[variable.name]
    if variable.index is None:
        inputs = dict(scenario.inputs)
        given = inputs.get(variable.name)
        inputs[variable.name] = replace(given, value=value) if given else Input(
            variable.name, value, "assumption", scenario.name, pinned=True)
        scenario = replace(scenario, inputs=inputs)
    else:
        tables = dict(scenario.tables)
        table = tables[q.table]
        rows = [dict(r) for r in table.rows]
        rows[variable.index][q.column] = value
        tables[q.table] = replace(table, rows=rows)
        scenario = replace(scenario, tables=tables)
    return evaluate(e.plan, scenario, e.model, nominal)


def batch_at(e: Evaluation, variable: Target, points: list[float], nominal: Evaluation) -> tuple[dict, np.ndarray]:
    """:func:`evaluate_at` at many values of the variable in one pass of the float backend:
    every node ``(points or 1, rows or 1)``, and per point whether the plan certainly
    evaluates there as the scalar engine does (every model check holds, no formula
    failed, every number finite and within what :func:`evaluate` accepts)."""
    scenario, model = e.scenario, e.model
    q = model.quantities[variable.name]
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned) | (
        {variable.name} if variable.index is None and variable.name not in scenario.inputs else set())
    graph = build(model, e.plan.switches, pinned, nominal=False)
    unitcheck.check(model, graph)
    rows = {t: len(d.rows) for t, d in scenario.tables.items()}
    inputs = {}
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is not None or node.quantity.kind == "text":
            continue
        table = node.quantity.table
        inputs[name] = (np.array([[r[node.quantity.column] for r in scenario.tables[table].rows]], dtype=float)
                        if table else np.full((1, 1), scenario.inputs[name].value if name in scenario.inputs
                                              else math.nan))
    moved = np.array(points, dtype=float)[:, None]
    if variable.index is None:
        inputs[variable.name] = moved
    else:
        column = np.repeat(inputs[variable.name], len(points), axis=0)
        column[:, variable.index] = moved[:, 0]
        inputs[variable.name] = column
    decided = {n: np.asarray(v, dtype=float).reshape((1, -1)) for n, v in nominal.values.items()
               if model.quantities[n].kind != "text"}
    try:
        values, holds, _, failed = run_batch(graph, model, inputs, rows, decided)
    except (CapplanError, KeyError):
        return {}, np.zeros(len(points), dtype=bool)           # each point is left to the scalar engine
    ok = np.broadcast_to(holds & ~failed, (len(points), 1))[:, 0].copy()
    with np.errstate(all="ignore"):
        for name in graph.order:
            node = graph.nodes[name]
            kind, unit = node.quantity.kind, node.quantity.unit
            if node.formula is None or kind in ("bool", "text"):
                continue
            limit, value = FLEET_LIMIT if unit == "GPU" else units.LIMIT, values[name]
            fine = np.isfinite(value) & ((np.abs(value) <= limit * units.factor(unit))
                                         | (np.abs(value / units.factor(unit)) <= limit))
            ok &= np.broadcast_to(fine.all(axis=-1), (len(points),))
    return values, ok


def _target_value(q, value):
    """A float engine's value as a target's exact value (a truth value, or the float's fraction)."""
    return bool(value) if q.kind == "bool" else rational(float(value), "")


def base_range(today: Fraction, quantity, spread: Fraction) -> tuple[Fraction, Fraction]:
    """[today / spread, today × spread] within the quantity's domain (from 0 to
    ``spread`` display units when today is 0)."""
    unit = factor(quantity.unit)
    lo, hi = (today / spread, today * spread) if today > 0 else (Fraction(0), spread * unit)
    domain = quantity.domain
    if domain is not None:
        if math.isfinite(domain.low):
            lo = max(lo, Fraction(repr(domain.low)) * unit)
        if math.isfinite(domain.high):
            hi = min(hi, Fraction(repr(domain.high)) * unit)
    return lo, hi


# -- closed forms ------------------------------------------------------------------------------

CACHED = 65536      # entries of each search cache: a 1,000-scenario plan fills 16,384 and then recomputes what it evicted


class _TooMany(Exception):
    """An atom crosses more integers in the range than are worth listing one by one."""


_STEPS = (sympy.ceiling, sympy.floor)
_BRANCHES = (sympy.Max, sympy.Min, sympy.Abs, sympy.Piecewise, sympy.core.relational.Relational,
             sympy.And, sympy.Or, sympy.Not)


@functools.lru_cache(maxsize=CACHED)
def _points(expr, x, lo, hi) -> frozenset[Fraction]:
    """Every point in (lo, hi) where ``expr`` may jump or switch branch (cached:
    the decisions of a scenario share their atoms, ``ceil(x/7)`` under GPUs and nodes alike)."""
    return frozenset(_find_points(expr, x, lo, hi))


@functools.lru_cache(maxsize=CACHED)
def _moves(expr, x) -> bool:
    """Whether ``expr`` depends on ``x`` (cached: sympy walks the whole tree for
    ``free_symbols`` on every call, and the search asks of the same subtrees again and again)."""
    return isinstance(expr, sympy.Basic) and x in expr.free_symbols


@functools.lru_cache(maxsize=CACHED)
def _stepped(expr) -> bool:
    """Whether ``expr`` holds a step or a branch anywhere (cached, as :func:`_moves`)."""
    return any(isinstance(n, _STEPS + _BRANCHES) for n in sympy.preorder_traversal(expr))


def _find_points(expr, x, lo, hi) -> set[Fraction]:
    if not _moves(expr, x):
        return set()
    if isinstance(expr, sympy.core.relational.Relational):
        return _relation_points(expr, x, lo, hi)
    if isinstance(expr, (sympy.And, sympy.Or)) and _settled(expr, x, lo, hi):
        return set()
    try:
        inner = set().union(*(_points(a, x, lo, hi) for a in _parts(expr)))
    except _TooMany:
        if isinstance(expr, _STEPS) and (nested := _step_of_a_step(expr, x, lo, hi)) is not None:
            return nested
        raise
    if isinstance(expr, _STEPS):
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
    return any(_bounds(a, x, lo, hi) == settled for a in expr.args)


def _step_of_a_step(expr, x, lo, hi) -> set[Fraction] | None:
    """``ceil(g(floor(u)))`` where the inner step crosses too many integers to
    list (Little's law: ``ceil(210 / floor(throughput / 28.2))``): the outer
    step changes only where ``g`` of the inner step's value crosses an integer,
    which is found with the inner value ``k`` as the variable; each such ``k``
    is then where ``u`` crosses an integer next to it. None when ``expr`` is not
    of that form (x outside the one inner step, or a step inside ``u``)."""
    g = expr.args[0]
    steps = {n for n in sympy.preorder_traversal(g) if isinstance(n, _STEPS) and _moves(n, x)}
    if len(steps) != 1 or _smooth_in(g, x):
        return None
    (step,) = steps
    u = step.args[0]
    if _stepped(u):
        return None
    k = sympy.Dummy("k")
    outer = g.xreplace({step: k})
    if _moves(outer, x):
        return None
    ends = [v for v in (lo, hi, *_smooth_crossings(sympy.diff(u, x), x, lo, hi, False))]
    try:
        f = compile_exact(u, x)
        values = [f(v) for v in ends]
    except (Undefined, ZeroDivisionError):
        return None
    low, high = Fraction(math.floor(min(values)) - 1), Fraction(math.ceil(max(values)) + 1)
    turns = _smooth_crossings(outer, k, low, high, integers=True)   # may raise _TooMany itself
    levels = {m for t in turns for m in (math.floor(t) - 1, math.floor(t), math.floor(t) + 1, math.ceil(t))}
    return set().union(*(_smooth_crossings(u - m, x, lo, hi, False) for m in levels))


def _parts(expr):
    if isinstance(expr, sympy.Piecewise):
        return [part for pair in expr.args for part in pair]
    return expr.args


def _relation_points(rel, x, lo, hi) -> set[Fraction]:
    """Where a comparison may change: its sides cross (after peeling steps off a side)."""
    lhs, gap = _sides(rel, x)
    inner = _points(lhs, x, lo, hi)
    return inner | _crossings(gap, x, lo, hi, inner)


@functools.lru_cache(maxsize=CACHED)
def _sides(rel, x) -> tuple:
    """A comparison as (the side x moves, peeled; that side minus the other), the same for
    every window (cached: built once, and the same objects keep the caches under them warm)."""
    lhs, rhs, op = rel.lhs, rel.rhs, rel.rel_op
    if _moves(rhs, x) and not _moves(lhs, x):
        lhs, rhs, op = rhs, lhs, _MIRROR[op]
    if _moves(rhs, x):
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
            constant = sympy.Add(*(a for a in h.args if not _moves(a, x)))
            if constant == 0:
                return h, c
            h, c = h - constant, c - constant
        elif isinstance(h, sympy.Mul):
            constant = sympy.Mul(*(a for a in h.args if not _moves(a, x)))
            if constant == 1 or not constant.is_nonzero or not constant.is_real:
                return h, c
            h, c = h / constant, c / constant
            op = _MIRROR[op] if constant.is_negative else op
        elif isinstance(h, _STEPS) and op in _MIRROR and op not in ("==", "!="):
            # floor(u) >= c <=> u >= ceil(c); floor(u) > c <=> u >= floor(c) + 1; ceil(u) >= c <=> u > ceil(c) - 1 …
            lower = op in (">=", "<")
            if isinstance(h, sympy.floor):
                c = sympy.ceiling(c) if lower else sympy.floor(c) + 1
            else:
                c = sympy.ceiling(c) - 1 if lower else sympy.floor(c)
            h = h.args[0]
        else:
            return h, c


def _crossings(g, x, lo, hi, inner: set[Fraction], integers: bool = False) -> set[Fraction]:
    """Points in (lo, hi) where ``g`` crosses 0 (or, with ``integers``, any
    integer). Between the points where ``g``'s own steps change (``inner``),
    those steps are constants, so each piece is solved on its own."""
    if not _smooth_in(g, x):
        return set()            # x only inside g's own steps: g changes only where they do, at ``inner``
    if not _stepped(g):
        return _smooth_crossings(g, x, lo, hi, integers)
    if len(inner) > MAX_CROSSINGS:
        raise _TooMany()
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
            piece = _freeze(g, x, middle) if form is None else None
        except (Undefined, ZeroDivisionError):
            continue            # undefined on this piece: its ends are candidates already
        out |= _smooth_crossings(piece, x, a, b, integers) if form is None else _form_crossings(form, x, a, b)
    return out


@functools.lru_cache(maxsize=CACHED)
def _split(g, x) -> tuple | None:
    """A sum whose terms either hold no step (their sum's form :func:`rational.shifted`) or
    hold x only inside steps and conditions (a number on each piece), as (that form, those
    terms); None for any other ``g``, or when the form is None (each piece is then read in place)."""
    if not isinstance(g, sympy.Add):
        return None
    smooth = [a for a in g.args if not _stepped(a)]
    constant = [a for a in g.args if _stepped(a)]
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
    return _form_crossings(plus(form, shift), x, a, b)


_PICKS = (sympy.Max, sympy.Min, sympy.Piecewise)    # branches whose value is one of their arguments


def _smooth_in(g, x) -> bool:
    """Whether x appears in ``g`` outside every step and condition (a max, min or
    if() passes on its arguments' values: ``floor(1000 / max(250, 1/x))`` moves with x)."""
    if g == x:
        return True
    if not _moves(g, x):
        return False
    if isinstance(g, _PICKS):
        values = [v for v, _ in g.args] if isinstance(g, sympy.Piecewise) else g.args
        return any(_smooth_in(a, x) for a in values)
    if isinstance(g, _STEPS + _BRANCHES):
        return False
    return any(_smooth_in(a, x) for a in g.args)


def _freeze(g, x, v: Fraction):
    """``g`` with each step or condition replaced by its exact value at ``v``, and each
    max, min or if() by the argument it picks there (still a function of x)."""
    if not _moves(g, x) or g == x:
        return g
    if isinstance(g, sympy.Piecewise):
        return _freeze(next(e for e, c in g.args if c is sympy.true or compile_exact(c, x)(v)), x, v)
    if isinstance(g, (sympy.Max, sympy.Min)):
        pick = max if isinstance(g, sympy.Max) else min
        return _freeze(pick(g.args, key=lambda a: compile_exact(a, x)(v)), x, v)
    if isinstance(g, _STEPS + _BRANCHES):
        value = compile_exact(g, x)(v)
        return sympy.sympify(value) if isinstance(value, bool) else sympy.Rational(value.numerator,
                                                                                  value.denominator)
    return g.func(*(_freeze(a, x, v) for a in g.args))


def _frozen_part(x, v: Fraction, g):
    """What :func:`_freeze` puts in place of ``g`` at ``v``, for :func:`rational_form`'s
    ``resolve``: the node itself where it holds no step (its form is cached), the argument
    a branch picks, a step's or a condition's value; None: read its arguments. The
    steps are evaluated as :func:`_freeze` evaluates them, so they fail where it fails."""
    if not _moves(g, x) or g == x or not _stepped(g):
        return g
    if isinstance(g, sympy.Piecewise):
        return next(e for e, c in g.args if c is sympy.true or compile_exact(c, x)(v))
    if isinstance(g, (sympy.Max, sympy.Min)):
        pick = max if isinstance(g, sympy.Max) else min
        return pick(g.args, key=lambda a: compile_exact(a, x)(v))
    if isinstance(g, _STEPS + _BRANCHES):
        return compile_exact(g, x)(v)
    return None


def _smooth_crossings(g, x, lo, hi, integers: bool) -> set[Fraction]:
    """Crossings of a rational function of x: roots of polynomials, exact."""
    if not _moves(g, x):
        return set()
    form = _form_of(g, x)
    if form is not None and not integers:
        return _form_crossings(form, x, lo, hi)
    if form is not None and len(form[0]) <= 2 and len(form[1]) <= 2:
        return _linear_crossings(g, x, lo, hi, *_linear(form))
    fraction = _rational(g, x)
    if fraction is None:
        raise NotClosedForm(f"{g} is not a rational function of the variable")
    top, bottom = fraction
    poles = _roots(bottom, lo, hi)
    if not integers:
        return _roots(top, lo, hi) | poles
    if poles:
        raise _TooMany()
    turns = _roots(top.diff(x) * bottom - top * bottom.diff(x), lo, hi)
    f = compile_exact(g, x)
    try:
        values = [f(v) for v in (lo, hi, *turns)]
    except (Undefined, ZeroDivisionError):
        raise _TooMany() from None             # unbounded at an end of the range
    first, last = math.ceil(min(values)), math.floor(max(values))
    if last - first + 1 > MAX_CROSSINGS:
        raise _TooMany()
    out = set(turns)
    if top.degree() <= 1 and bottom.degree() <= 1:      # (a x + b) / (c x + d) = k, solved in fractions
        (a, b), (c, d) = (_coefficients(p) for p in (top, bottom))
        return out | _levels(a, b, c, d, first, last, lo, hi)
    for k in range(first, last + 1):
        out |= _roots(top - k * bottom, lo, hi)
    return out


@functools.lru_cache(maxsize=CACHED)
def _form_of(g, x):
    """:func:`rational_form` of ``g``, cached (the windows of a search ask again)."""
    return rational_form(g, x)


def _form_crossings(form, x, lo, hi) -> set[Fraction]:
    """The roots of a rational form's numerator and denominator in (lo, hi), as
    :func:`_smooth_crossings` finds them: in fractions when both are of degree 1 at
    most (every piece of the model's decisions), else by sympy's real roots."""
    return _coefficient_roots(form[0], x, lo, hi) | _coefficient_roots(form[1], x, lo, hi)


def _coefficient_roots(p, x, lo, hi) -> set[Fraction]:
    """:func:`_roots` of a polynomial given by its coefficients (lowest degree first):
    a root of degree 1 in fractions, as :func:`_real_roots` gives it, without sympy."""
    if len(p) == 2:
        root = -p[0] / p[1]
        return {root} if lo < root < hi else set()
    return _roots(_poly(p, x), lo, hi) if len(p) > 2 else set()


def _linear(form) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(a, b, c, d) of a form (a x + b) / (c x + d) (coefficients lowest degree first)."""
    (b, a), (d, c) = ((*p, Fraction(0), Fraction(0))[:2] for p in form)
    return a, b, c, d


def _linear_crossings(g, x, lo, hi, a, b, c, d) -> set[Fraction]:
    """Where (a x + b) / (c x + d), which is ``g``, crosses an integer in (lo, hi), as
    :func:`_smooth_crossings` finds it: its derivative (ad − bc) / (cx + d)² has no root,
    so it turns nowhere, and each integer it reaches is reached once."""
    if c and lo < -d / c < hi:
        raise _TooMany()                        # a pole inside
    f = compile_exact(g, x)
    try:
        values = [f(v) for v in (lo, hi)]
    except (Undefined, ZeroDivisionError):
        raise _TooMany() from None             # unbounded at an end of the range
    first, last = math.ceil(min(values)), math.floor(max(values))
    if last - first + 1 > MAX_CROSSINGS:
        raise _TooMany()
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


def _roots(poly: sympy.Poly, lo: Fraction, hi: Fraction) -> set[Fraction]:
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
def _rational(g, x) -> tuple | None:
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


def _solve_exact(g, x, lo, hi, gap) -> list[Solution]:
    """Where ``g`` = 0 in [lo, hi]: roots on each smooth piece, whole pieces where it is 0."""
    inner = _points(g, x, lo, hi)
    if len(inner) > MAX_CROSSINGS:
        raise _TooMany()
    edges = [lo, *sorted(inner), hi]
    out: list[Solution] = []
    for a, b in itertools.pairwise(edges):
        try:
            piece = _freeze(g, x, (a + b) / 2)
        except (Undefined, ZeroDivisionError):
            continue            # the plan does not evaluate on this piece: no value reaches the target there
        if sympy.expand(sympy.fraction(sympy.together(piece))[0]) == 0:
            out.append(Solution(a, b, True, False, False))
            continue
        out += [Solution(r, r, True) for r in sorted(_smooth_crossings(piece, x, a, b, False)) if gap(r) == 0]
    out += [Solution(p, p, True) for p in edges if gap(p) == 0]
    return _merge(out)


def _merge(solutions: list[Solution]) -> list[Solution]:
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


# -- windows -----------------------------------------------------------------------------------

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


@functools.lru_cache(maxsize=CACHED)
def _direction(expr, x, lo: Fraction, hi: Fraction) -> int | None:
    """+1 where ``expr`` never falls as x rises on [lo, hi], -1 where it never rises,
    0 where it does not depend on x; None where neither is shown.

    Built up the expression: a sum, a max or min, a step (``ceil``/``floor``)
    or a comparison keeps the direction its parts share; a constant factor
    keeps or turns it; a smooth part (a rational function of x) has the sign
    of its derivative when that has no root or pole inside the range. A
    boolean counts False < True."""
    if not _moves(expr, x):
        return 0
    if expr == x:
        return 1
    if not _stepped(expr):
        return _smooth_direction(expr, x, lo, hi)
    if isinstance(expr, _STEPS + (sympy.Max, sympy.Min, sympy.Add, sympy.And, sympy.Or)):
        return _shared([_direction(a, x, lo, hi) for a in expr.args])
    if isinstance(expr, sympy.Not):
        d = _direction(expr.args[0], x, lo, hi)
        return None if d is None else -d
    if isinstance(expr, sympy.Mul):
        constant = sympy.Mul(*(a for a in expr.args if not _moves(a, x)))
        varying = [a for a in expr.args if _moves(a, x)]
        if len(varying) != 1 or not constant.is_real or constant.is_zero is not False:
            return None
        d = _direction(varying[0], x, lo, hi)
        return None if d is None else d * (1 if constant.is_positive else -1)
    if isinstance(expr, sympy.core.relational.Relational) and expr.rel_op in ("<", "<=", ">", ">="):
        d = _direction(expr.lhs - expr.rhs, x, lo, hi)
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
    form = _form_of(g, x)
    if form is not None:
        top, bottom = derivative(form)
        if not top:
            return 0
        if _coefficient_roots(top, x, lo, hi) or _coefficient_roots(bottom, x, lo, hi):
            return None
        middle = (lo + hi) / 2
        sign = value_at(top, middle) * value_at(bottom, middle)
        return 1 if sign > 0 else -1 if sign < 0 else None
    fraction = _rational(sympy.diff(g, x), x)
    if fraction is None:
        return None
    top, bottom = fraction
    if top.is_zero:
        return 0
    if _roots(top, lo, hi) or _roots(bottom, lo, hi):
        return None
    middle = (lo + hi) / 2
    try:
        sign = compile_exact(top.as_expr() / bottom.as_expr(), x)(middle)
    except (Undefined, ZeroDivisionError):
        return None
    return 1 if sign > 0 else -1 if sign < 0 else None


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
    if not _moves(expr, x):
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
        if not (exponent.is_Integer and not _moves(exponent, self.x)):
            raise NotClosedForm("a power that is not a whole number")
        base, n = self.part(expr.args[0]), int(exponent)
        return lambda a, b: _power_of(base(a, b), n)

    def _print_Relational(self, expr):
        compare = RELATIONS_OPS[expr.rel_op]
        left, right = (self.part(arg) for arg in expr.args)
        return lambda a, b: compare(left(a, b), right(a, b))

    def _unsupported(self, expr):
        raise NotClosedForm(f"{type(expr).__name__} has no enclosure")


def _bounds(expr, x, a: Fraction, b: Fraction) -> tuple | None:
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


def _whole(solutions: list[Solution]) -> list[Solution]:
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


# -- bracketing --------------------------------------------------------------------------------

PER_CELL = 4        # changes narrowed per grid cell of the fallback scan


def _grid(lo: Fraction, hi: Fraction) -> list[Fraction]:
    return [Fraction(float(v)) for v in np.linspace(float(lo), float(hi), GRID + 1)[1:-1]]


def _bracket(decide, start: Fraction, end: Fraction, most: int) -> list[Fraction]:
    """Points where ``decide`` changes, from ``start`` towards ``end``, each narrowed to
    two adjacent floats (the lower one is returned): a scan of :data:`GRID` cells, the
    first and last reaching the ends, then bisection in every cell whose ends differ (a
    change and its undoing inside one cell go unseen: the only search that can miss a
    flip, used where the decisions have no closed form). The cells are walked from
    ``start`` and the walk stops after ``most`` changes: each step here is a full
    evaluation of the plan."""
    lo, hi = sorted((start, end))
    cells = list(itertools.pairwise([lo, *_grid(lo, hi), hi]))
    out: list[Fraction] = []
    for a, b in (cells if end > start else reversed(cells)):
        out += sorted(_narrow(decide, a, b), reverse=end < start)
        if len(out) >= most:
            break
    return out


def _narrow(decide, a: Fraction, b: Fraction) -> set[Fraction]:
    """The changes of ``decide`` inside one cell, at most :data:`PER_CELL`."""
    out: set[Fraction] = set()
    left, right = decide(a), decide(b)
    for _ in range(PER_CELL):
        if left == right:
            break
        a = _bisect(decide, a, b, left)
        out.add(a)
        a = Fraction(math.nextafter(float(a), math.inf))
        left = decide(a)
    return out


def _bisect(decide, a: Fraction, b: Fraction, left) -> Fraction:
    """The last float from ``a`` up to ``b`` at which ``decide`` still gives ``left``."""
    lo, hi = float(a), float(b)
    while math.nextafter(lo, math.inf) < hi:
        middle = lo + (hi - lo) / 2
        if middle in (lo, hi):
            break
        if decide(Fraction(middle)) == left:
            lo = middle
        else:
            hi = middle
    return Fraction(lo)


def _solve_bracketed(gap, lo: Fraction, hi: Fraction) -> list[Solution]:
    """Sign changes of ``gap`` on a grid, each bisected to adjacent floats."""
    grid = [lo, *_grid(lo, hi), hi]
    out = []
    for a, b in itertools.pairwise(grid):
        ga, gb = gap(a), gap(b)
        if ga is None or gb is None:
            continue
        if ga == 0:
            out.append(Solution(a, a, False))
        elif ga * gb < 0:
            root = _bisect(lambda v: (gap(v) or 0) < 0, a, b, ga < 0)
            out.append(Solution(root, root, False))
    if gap(hi) == 0:
        out.append(Solution(hi, hi, False))
    return _merge(out)
