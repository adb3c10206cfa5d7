"""Where the recommendation stops being the cheapest as one input moves: the ranking's flips of the
inputs a serving choice turns on.

The ranking's own flips (:mod:`capplan.analysis.ranking`) move a price, a λ* and the peak. Three
inputs decide more than that:

- **the prompt length** of the plan's heaviest class (its input:output ratio, the output held) and
  **the peak**, for a plan that ranks prefill and decode pools beside aggregated fleets: where the
  cheapest of the other topology overtakes the cheapest of the recommendation's (where
  disaggregation stops, or starts, paying). The prompt is searched only where every contender's λ*
  is the model's own estimate (``sizing: estimate``), which the prompt moves; a measured λ* holds at
  the prompt it was measured at;
- **each class's prefix hit rate** (one above 0): where another contender overtakes the winner;
- **the electricity price**, for a plan with a traffic profile and an owned offer
  (:func:`power_flips`): where the cheapest strategy that holds the SLO changes, an owned fleet
  paying its power and a rented one's price including it.

Each contender is the candidate as the plan it would be (:mod:`capplan.analysis.variant`), its λ*
left to the estimate's formulas where the ranking estimated it, and its monthly cost (a pooled one's
``disaggregated_monthly_cost``, with the hand-off and link gates without which it cannot serve) a
step function of the input. The first run on which a rival is strictly cheaper, at least
:data:`ROBUST` of today's value wide, is the flip: the float engine finds it on a grid of half that
spacing (one batch a contender: walking every step exactly to a flip a few thousand tokens away
costs a minute), and the flip search (:mod:`capplan.analysis.flips`) solves each of its ends
exactly inside its grid cell, where the contenders' flips are compared between neighbours.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from capplan.analysis import variant
from capplan.analysis.flips import Probe, Search, base_range, batch_at
from capplan.artifacts import demand
from capplan.artifacts.answers import UNDEFINED, Target
from capplan.artifacts.declared import holds_spec
from capplan.artifacts.ranking import MONTH, Overtaken, Ranking
from capplan.engine.evaluate import Evaluation

CONTENDERS = 3           # the cheapest feasible candidates of each side today whose costs are followed
ROBUST = 0.01            # a run holds over at least this share of today's value (a ranking's peak flip's)
GRID = 2_000             # the float engine's points on one side at most
POOL_COST = "deployments.disaggregated_monthly_cost"
POOL_GATES = ("handoff_gate", "link_gate")
PEAK, PROMPT, HIT = "peak_arrival_rate", "classes.prompt_tokens", "classes.prefix_hit_rate"
OWNED_COST, POWER_PRICE = "deployments.owned_monthly_cost", "electricity_price"


def of_ranking(nominal: Evaluation, ranking: Ranking) -> list[Overtaken]:
    """The nearest flip on each side of today's value of every input above that the plan has."""
    if ranking.winner is None:
        return []
    ev = ranking.evaluated
    w = ranking.winner
    own = [i for i in ranking.feasible if ev.candidates[i].pooled == ev.candidates[w].pooled]
    other = [i for i in ranking.feasible if ev.candidates[i].pooled != ev.candidates[w].pooled]
    contest = _Contest(nominal, ranking)
    out = []
    if other:
        sides = own[:CONTENDERS], other[:CONTENDERS]
        out += contest.nearest(Target(PEAK), *sides)
        if all(variant.by_estimate(nominal, ev, i) for i in sides[0] + sides[1]):
            out += contest.nearest(Target(PROMPT, _heaviest(nominal)), *sides)
    rivals = [i for i in ranking.feasible if i != w][:CONTENDERS]
    hits = nominal.values[HIT] if HIT in nominal.values else ()
    for row, h in enumerate(hits):
        if h > 0 and rivals:
            out += contest.nearest(Target(HIT, row), [w], rivals)
    return out


def _heaviest(e: Evaluation) -> int:
    """The class with the largest weight (the first of equals): the prompt the mix's ratio moves with."""
    weights = list(e.values["classes.weight"])
    return weights.index(max(weights))


class _Contest:
    """The contenders of one ranking as plans, each probed once per input."""

    def __init__(self, nominal: Evaluation, ranking: Ranking):
        self.nominal, self.ranking = nominal, ranking
        self._probes: dict[tuple, Probe] = {}

    def probe(self, i: int, variable: Target) -> Probe:
        """Candidate ``i`` as the plan it would be, its cost (and a pooled one's gates) as the decisions of
        ``variable``: exact only in what those rest on (the search's ``wanted``)."""
        key = (i, variable)
        if key not in self._probes:
            pooled = self.ranking.evaluated.candidates[i].pooled
            targets = [Target(POOL_COST, 0), *map(Target, POOL_GATES)] if pooled else [Target(MONTH, 0)]
            shown = variant.of_candidate(self.nominal, self.ranking.evaluated, i, estimated=True)
            search = Search([shown], frozenset(t.name for t in targets))
            self._probes[key] = search.probe(shown.scenario.name, variable, targets, len(targets))
        return self._probes[key]

    def cost(self, i: int, variable: Target, at: Fraction) -> Fraction | None:
        """Candidate ``i``'s monthly cost with the variable at ``at`` (None: it cannot serve there)."""
        values = self.probe(i, variable).at(at)
        if UNDEFINED in values or not all(values[1:]):
            return None
        return values[0]

    def nearest(self, variable: Target, own: list[int], rivals: list[int]) -> list[Overtaken]:
        """The nearest run on each side of today at which a rival is cheaper than every one of ``own``."""
        probe = self.probe(own[0], variable)
        lo, hi = base_range(probe.today, probe.quantity, Fraction(holds_spec()["spread"]))
        found = [self._side(variable, own, rivals, end) for end in (hi, lo) if end != probe.today]
        return [f for f in found if f is not None]

    def _side(self, variable: Target, own: list[int], rivals: list[int], end: Fraction) -> Overtaken | None:
        """The nearest run towards ``end``: found on a grid of the float engine fine enough that a run
        :data:`ROBUST` wide spans a few of its points, then each of its ends solved exactly by the flip
        search inside the grid's cell (the contenders' flips there, compared between neighbours)."""
        today = self.probe(own[0], variable).today
        step = ROBUST * abs(today) / 2 if today else abs(end) / GRID
        count = max(min(int(abs(end - today) / step), GRID), 1)
        grid = [today + (end - today) * k / count for k in range(count + 1)]
        floats = [float(x) for x in grid]
        costs = {i: self._grid(i, variable, floats) for i in own + rivals}
        mine = np.min([costs[i] for i in own], axis=0)
        theirs = np.min([costs[i] for i in rivals], axis=0)
        ahead = theirs < mine
        k = 1
        while k <= count:
            if not ahead[k]:
                k += 1
                continue
            far = k
            while far + 1 <= count and ahead[far + 1]:
                far += 1
            at = self._edge(variable, own, rivals, grid[k - 1], grid[k], entering=True)
            until = end if far == count else self._edge(variable, own, rivals, grid[far], grid[far + 1],
                                                        entering=False)
            found = self._found(variable, own, rivals, at, until)
            if found is not None:
                return found
            k = far + 1
        return None

    def _grid(self, i: int, variable: Target, points: list[float]) -> np.ndarray:
        """Candidate ``i``'s monthly cost at each point, by the float engine (∞ where it cannot serve)."""
        probe = self.probe(i, variable)
        values, ok = batch_at(probe.e, variable, points, probe.nominal)
        out = np.full(len(points), np.inf)
        for m in np.flatnonzero(ok):
            got = [values[t.name][m if values[t.name].shape[0] > 1 else 0, t.index or 0] for t in probe.targets]
            if all(got[1:]) and np.isfinite(got[0]):
                out[m] = got[0]
        return out

    def _edge(self, variable: Target, own: list[int], rivals: list[int], a: Fraction, b: Fraction,
              entering: bool) -> Fraction:
        """Where, between grid points ``a`` and ``b`` (walking from ``a``), a rival starts (``entering``) or
        stops being cheaper: the first flip of any contender there across which the comparison changes."""
        flips = sorted({f.value for i in own + rivals for f in self.probe(i, variable).walk(a, b).flips},
                       reverse=b < a)
        near = a
        for point in [*flips, b]:
            if self._ahead(variable, own, rivals, (near + point) / 2) == entering:
                return near
            near = point
        return b

    def _ahead(self, variable: Target, own: list[int], rivals: list[int], at: Fraction) -> bool:
        """Whether a rival is strictly cheaper than every one of ``own`` at ``at`` (exactly)."""
        theirs, mine = self._cheapest(rivals, variable, at), self._cheapest(own, variable, at)
        return theirs is not None and (mine is None or theirs[0] < mine[0])

    def _cheapest(self, among: list[int], variable: Target, at: Fraction) -> tuple | None:
        """(cost, candidate) of the cheapest of ``among`` that can serve at ``at`` (None: none can)."""
        costs = [(c, i) for i in among if (c := self.cost(i, variable, at)) is not None]
        return min(costs) if costs else None

    def _found(self, variable: Target, own: list[int], rivals: list[int], at: Fraction,
               until: Fraction) -> Overtaken | None:
        """The run from ``at`` to ``until`` as a flip, if it is wide enough to act on: ``at`` itself
        belongs to it when a rival is cheaper there too; the costs are those just past ``at``."""
        today = self.probe(own[0], variable).today
        if abs(until - at) < ROBUST * abs(today):
            return None
        inside = at + (until - at) / 2 ** 20
        cost, by = self._cheapest(rivals, variable, inside)
        rival = self._cheapest(own, variable, inside)
        return Overtaken(variable.name, variable.index, float(today), float(at), float(until),
                         self._ahead(variable, own, rivals, at), by, own[0] if rival is None else rival[1],
                         float(cost), float("inf") if rival is None else float(rival[0]))


def power_flips(e: Evaluation) -> list[demand.PowerFlip]:
    """The nearest electricity price on each side of today's (from 0 to today's × the holds' spread) at
    which the recommended strategy of a traffic profile changes; none without an owned offer that holds.

    Only an owned fleet's cost moves with the price, linearly: the flip search's goal seek solves each
    owned cost against the cheapest rented strategy that holds and against the other owned ones, and
    the strategies are compared between neighbouring solutions, as :func:`demand.recommended` does."""
    found = demand.strategies(e)
    best = demand.recommended(found)
    owned = [k for k, s in enumerate(found) if s.kind == demand.OWNED and s.holds]
    if best is None or not owned:
        return []
    names = list(e.display("deployments.name"))
    targets = [Target(OWNED_COST, names.index(found[k].deployment)) for k in owned]
    probe = Search([e], frozenset({OWNED_COST})).probe(e.scenario.name, Target(POWER_PRICE), targets, len(targets))
    rented = min(((Fraction(repr(s.monthly_cost)), k) for k, s in enumerate(found)
                  if s.holds and s.kind != demand.OWNED), default=None)
    end = base_range(probe.today, probe.quantity, Fraction(holds_spec()["spread"]))[1]
    points = set()
    for j in range(len(targets)):
        against = [Fraction(rented[0])] if rented else []
        for solution in [*(probe.solve(j, v, Fraction(0), end) for v in against),
                         *(probe.solve(j, k, Fraction(0), end) for k in range(j + 1, len(targets)))]:
            points.update(x for s in solution for x in (s.low, s.high))

    def choice(price: Fraction) -> tuple:
        costs = [(c, owned[i]) for i, c in enumerate(probe.at(price)) if c != UNDEFINED]
        return min(costs + ([rented] if rented else []))

    out = []
    for stop in (Fraction(0), end):
        up = stop > probe.today
        ahead = sorted((x for x in points if (probe.today < x < stop if up else stop < x < probe.today)),
                       reverse=not up)
        near, flip = probe.today, None
        for far in [*ahead, stop]:
            cost, k = choice((near + far) / 2)
            if k != found.index(best):
                s = found[k]
                rate = s.cost_per_million / s.monthly_cost if s.monthly_cost else 0.0     # per 1M tokens a USD
                after = dataclasses.replace(s, monthly_cost=float(cost), cost_per_million=rate * float(cost))
                flip = demand.PowerFlip(float(probe.today), float(stop), float(near), choice(near)[1] == k, best, after)
                break
            near = far
        out.append(flip or demand.PowerFlip(float(probe.today), float(stop), None, False, best, None))
    return out
