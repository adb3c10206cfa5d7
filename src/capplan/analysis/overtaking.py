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
step function of the input. The flip search (:mod:`capplan.analysis.flips`) walks each contender
from today's value outwards, a few flips at a time, and the contenders are compared on each interval
between two neighbouring flips of any of them, nearest first: the first run of intervals on which a
rival is strictly cheaper, at least :data:`ROBUST` of today's value wide, is the flip.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from capplan.analysis import variant
from capplan.analysis.flips import Probe, Search, base_range
from capplan.artifacts import demand
from capplan.artifacts.answers import UNDEFINED, Target
from capplan.artifacts.declared import holds_spec
from capplan.artifacts.ranking import MONTH, Overtaken, Ranking
from capplan.engine.evaluate import Evaluation

CONTENDERS = 3           # the cheapest feasible candidates of each side today whose costs are followed
ROBUST = 0.01            # a run holds over at least this share of today's value (a ranking's peak flip's)
MAX_EVENTS = 400         # intervals compared on one side at most
CHUNK = 4                # flips one walk of a contender fetches
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


@dataclass
class _Path:
    """One contender's flips on one side of today, fetched a few at a time, each walk going on from
    the last flip found (the nearest cost least, and none is walked twice)."""

    probe: Probe
    end: Fraction
    flips: tuple = ()
    reached: Fraction | None = None      # how far the walk got, once it has every flip it can find

    def point(self, k: int) -> Fraction | None:
        """The ``k``-th flip from today (None: none before :attr:`reached`)."""
        while k >= len(self.flips) and self.reached is None:
            start = self.flips[-1] if self.flips else self.probe.today
            walk = self.probe.walk(start, self.end, CHUNK + 1)
            found = tuple(f.value for f in walk.flips if f.value != start)
            self.flips += found
            if len(walk.flips) < CHUNK + 1:
                self.reached = walk.reached          # the end, unless the walk's work ran out first
        return self.flips[k] if k < len(self.flips) else None


class _Contest:
    """The contenders of one ranking as plans, each probed once per input."""

    def __init__(self, nominal: Evaluation, ranking: Ranking):
        self.nominal, self.ranking = nominal, ranking
        self._probes: dict[tuple, Probe] = {}

    def probe(self, i: int, variable: Target) -> Probe:
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
        today = self.probe(own[0], variable).today
        up = end > today
        paths = {i: _Path(self.probe(i, variable), end) for i in own + rivals}
        taken = dict.fromkeys(paths, 0)
        near, run = today, None
        for _ in range(MAX_EVENTS):
            ahead = {i: p.point(taken[i]) for i, p in paths.items()}
            reach = [p.reached for p in paths.values() if p.reached is not None]
            points = [v for v in ahead.values() if v is not None] + reach + [end]
            far = (min if up else max)(points)
            for i, v in ahead.items():
                taken[i] += v == far
            middle = (near + far) / 2
            best = self._cheapest(rivals, variable, middle), self._cheapest(own, variable, middle)
            if best[0] is not None and (best[1] is None or best[0][0] < best[1][0]):
                run = run or (near, best[0], best[1])
            elif run is not None:
                found = self._found(variable, run, near, own)
                if found is not None:
                    return found
                run = None
            if far == end or far in reach:          # nothing is known past a walk that ran out of work
                return None if run is None else self._found(variable, run, far, own)
            near = far
        return None

    def _cheapest(self, among: list[int], variable: Target, at: Fraction) -> tuple | None:
        """(cost, candidate) of the cheapest of ``among`` that can serve at ``at`` (None: none can)."""
        costs = [(c, i) for i in among if (c := self.cost(i, variable, at)) is not None]
        return min(costs) if costs else None

    def _found(self, variable: Target, run: tuple, until: Fraction, own: list[int]) -> Overtaken | None:
        """A run from ``run[0]`` to ``until`` as a flip, if it is wide enough to act on: ``at`` itself
        belongs to it when the rival is cheaper there too."""
        at, (cost, by), rival = run
        today = self.probe(own[0], variable).today
        if abs(until - at) < ROBUST * abs(today):
            return None
        mine, theirs = self._cheapest(own, variable, at), self.cost(by, variable, at)
        closed = theirs is not None and (mine is None or theirs < mine[0])
        return Overtaken(variable.name, variable.index, float(today), float(at), float(until), closed, by,
                         rival[1] if rival else own[0], float(cost), float(rival[0]) if rival else float("inf"))


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
