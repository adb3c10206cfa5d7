"""Rank a plan's candidates by the monthly cost of serving its forecast, and say how firmly.

The order is the nominal scenario's monthly cost (the model's ``monthly_cost``
of the candidate's offer), cheaper first, then $ per 1M output tokens, then
the GPUs rented (free offers tie on cost: the one that ties up fewer owned GPUs
wins), then the name; infeasible candidates follow with their reasons. Around the winner
and the runner-up:

- **flip points**, solved exactly on the model's cost formulas: ``monthly_cost
  = nodes · node_hourly_cost · hours_per_month`` is linear in the price at fixed
  nodes, so the runner-up wins below ``cost_winner / (nodes · hours)`` an hour
  (and the winner loses above the mirror figure); the λ* at which the runner-up
  would cost less is found by the flip search (:mod:`capplan.analysis.flips`)
  walking up the runner-up's λ* on the runner-up as the plan it would be
  (:mod:`capplan.analysis.variant`): the first flip after which its monthly
  cost is under the winner's;
- **near misses**: each other candidate with the price it would need, or its
  reason for being infeasible;
- **P(winner stays winner)**: a Monte Carlo over every candidate at once
  (each draw is one more block of the batch, in chunks of at most
  :data:`CHUNK_ROWS` rows; the formulas the draws do not move are evaluated
  once), drawing each transferred or estimated λ* inside its band (lognormal,
  the band as its 90 % interval) and the plan's uncertain scalar inputs as
  ``capplan simulate`` draws them. Only the contenders are drawn: the feasible
  candidates whose cost at the low end of their band (squared, for the
  whole-node steps) reaches the winner's at the high end of its own; the
  others cannot be cheapest in any draw.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from capplan.analysis import candidates as batch
from capplan.analysis import variant
from capplan.analysis.flips import Search
from capplan.artifacts.answers import Target
from capplan.artifacts import transfer
from capplan.artifacts.ranking import MONTH, PER_M, Evaluated, Flips, PeakFlip, Ranking, SameSource
from capplan.engine import sampling
from capplan.engine.evaluate import Evaluation

DRAWS = 1_000                 # Monte Carlo draws of the ranking
CHUNK_ROWS = 200_000          # contender-draws evaluated at once at most (each formula the draws move holds as many floats)
SEED = 20261111
PEAK_SPAN = 4                 # the peak flip is looked for from 0 to 4 × today's peak
MAX_EDGES = 10_000            # whole-replica steps of one candidate looked at, at most
PEAK_CONTENDERS = 20          # the cheapest feasible candidates today whose costs the peak flip follows
ROBUST = 0.01                 # a peak flip holds over at least this share of today's peak
LAMBDA_SPAN = 100             # the runner-up's λ* flip is looked for up to this many times its λ* today
_Z90 = 1.6448536269514722     # the standard normal's 95th percentile: a band is a 90 % interval


def rank(evaluations: list[Evaluation], evaluated: Evaluated, draws: int = DRAWS) -> Ranking:
    month = evaluated.values[MONTH][:, 0]
    per_m = evaluated.values[PER_M][:, 0]
    gpus = evaluated.values["deployments.deployed_gpus"][:, 0]       # equal costs (free offers): fewer GPUs first
    feasible = evaluated.feasible
    names = [c.name for c in evaluated.candidates]
    order = sorted(range(len(names)), key=lambda i: (not feasible[i], month[i] if feasible[i] else 0,
                                                     per_m[i] if feasible[i] else 0,
                                                     gpus[i] if feasible[i] else 0, names[i]))
    ranking = Ranking(evaluated, order, None, None)
    ranking.scenario_winners = [_cheapest(evaluated, j) for j in range(len(evaluated.scenarios))]
    if ranking.winner is not None:
        ranking.same_source = same_source(ranking, evaluations[0])
    if ranking.runner_up is not None:
        ranking.flips = flips(ranking, evaluations[0])
        ranking.stays, ranking.draws = _stays(evaluations, ranking, draws)
    return ranking


def same_source(ranking: Ranking, nominal: Evaluation) -> list[SameSource]:
    """The winner had every candidate's λ* come from one provenance: the transfer from the measured
    reference (when there is one), then the built-in estimate. The contenders rest on different
    provenances, whose errors differ (each its own band), so a ranking that changes when they are
    made alike is one a reviewer should see. The feasible candidates are sized again in one batch
    with those λ*, and the cheapest taken by the ranking's own order (cost, $ per 1M tokens, GPUs, name)."""
    ev = ranking.evaluated
    chosen = ranking.feasible
    out = []
    for provenance, lam in ((transfer.TRANSFERRED, ev.transferred), (transfer.ESTIMATED, ev.estimated)):
        if lam is None or not (lam[chosen] > 0).any():
            continue
        values, *_ = batch.run_candidates(nominal, tuple(ev.candidates[i] for i in chosen), lam[chosen],
                                          np.zeros(len(chosen)), None)
        columns = [np.broadcast_to(values[name], (len(chosen), 1))[:, 0] for name in (MONTH, PER_M,
                                                                                    "deployments.deployed_gpus")]
        served = [k for k in range(len(chosen)) if lam[chosen[k]] > 0 and np.isfinite(columns[0][k])]
        best = min(served, key=lambda k: (*(float(c[k]) for c in columns), ev.candidates[chosen[k]].name))
        out.append(SameSource(provenance, chosen[best], float(columns[0][best])))
    return out


def _cheapest(evaluated: Evaluated, scenario: int) -> int | None:
    """The cheapest feasible candidate in ``scenario``, every fleet re-sized for it; one ranked as prefill
    and decode pools only where its pools' gates pass there (:data:`~capplan.analysis.candidates.POOL_GATES`:
    not its fleet_holds, which holds the nominal pools against the scenario's peak)."""
    pooled = np.array([c.pooled for c in evaluated.candidates], dtype=bool)
    holds = np.logical_and.reduce([evaluated.values[g][:, scenario] != 0 for g in batch.POOL_GATES]) \
        if pooled.any() else pooled
    cost = np.where(evaluated.feasible & (~pooled | holds), evaluated.values[MONTH][:, scenario], np.inf)
    return int(np.argmin(cost)) if np.isfinite(cost).any() else None


def flips(ranking: Ranking, nominal: Evaluation) -> Flips:
    """The exact prices, λ* and peaks at which #1 and #2 swap (module docstring)."""
    w, r = ranking.winner, ranking.runner_up
    cost_w, cost_r = ranking.value(MONTH, w), ranking.value(MONTH, r)
    hours = ranking.value("hours_per_month", w)
    offers = ranking.evaluated.candidates[w].offer.name, ranking.evaluated.candidates[r].offer.name
    shared = offers[0] == offers[1]         # one price moves both costs alike: it cannot swap them
    runner_price = None if shared else cost_w / (ranking.value("deployments.nodes", r) * hours)
    winner_price = None if shared else cost_r / (ranking.value("deployments.nodes", w) * hours)
    lam = _lambda_flip(ranking, nominal, r, cost_w)
    rho = None if lam is None else lam * ranking.value("rho_target", r) / ranking.value("instance_max_rate", r)
    return Flips(runner_price, winner_price, lam, rho if rho is not None and rho <= 1 else None,
                 *_peak_flips(ranking, nominal))


def _peak_flips(ranking: Ranking, e: Evaluation) -> tuple[PeakFlip | None, PeakFlip | None]:
    """The nearest peaks above and below today's at which another candidate becomes the cheapest,
    and the candidate, each holding over at least :data:`ROBUST` of today's peak.

    A fleet's size changes only where the peak crosses a whole number of its λ_safe (``ceil(peak /
    λ_safe)``), so every cost is constant between those points: the model's formulas are evaluated
    once inside each interval (one batch over the :data:`PEAK_CONTENDERS` cheapest feasible
    candidates), from 0 to :data:`PEAK_SPAN` times today's peak, and the cheapest of each interval
    is taken by the ranking's own order (monthly cost, $ per 1M tokens, GPUs, name). An interval
    narrower than the robust share (the winner needs one more node a thousandth of a req/s before
    the next fleet steps down) is passed over: its cheapest is no decision a reviewer can act on."""
    ev, w = ranking.evaluated, ranking.winner
    chosen = ranking.feasible[:PEAK_CONTENDERS]
    peak = ranking.value("peak_arrival_rate", w)
    edges = {0.0, PEAK_SPAN * peak, peak}
    for i in chosen:
        for safe in _steps(ranking, i):
            count = min(int(PEAK_SPAN * peak / safe), MAX_EDGES)
            edges.update(k * safe for k in range(1, count + 1))
    edges = np.array(sorted(edges))
    mids = (edges[:-1] + edges[1:]) / 2
    n = len(chosen)
    lam = np.tile(ev.values["instance_max_rate"][chosen, 0], len(mids))
    out, *_ = batch.run_candidates(e, tuple(ev.candidates[i] for i in chosen), lam, np.zeros(n * len(mids)), None,
                                   tile=len(mids), drawn={"peak_arrival_rate": np.repeat(mids, n).reshape((-1, 1))})
    columns = [np.broadcast_to(out[name], (n * len(mids), 1)).reshape((len(mids), n))
               for name in (MONTH, PER_M, "deployments.deployed_gpus")]
    names = [ev.candidates[i].name for i in chosen]
    cheapest = [chosen[min(range(n), key=lambda k: (*(float(c[m, k]) for c in columns), names[k]))]
                for m in range(len(mids))]
    return (_first_change(edges, cheapest, w, peak, up=True), _first_change(edges, cheapest, w, peak, up=False))


def _steps(ranking: Ranking, i: int) -> tuple[float, ...]:
    """The rates per replica whose multiples the peak crosses where candidate ``i``'s fleet changes size:
    its λ_safe; a candidate ranked as prefill and decode pools, each pool's (ρ × derate × the pool's λ*)."""
    if not ranking.evaluated.candidates[i].pooled:
        return (ranking.value("safe_rate_per_replica", i),)
    rho = ranking.value("rho_target", i)
    return tuple(rho * ranking.value(f"{pool}_rate_derate", i) * ranking.value(f"{pool}_max_rate", i)
                 for pool in ("prefill", "decode"))


def _first_change(edges: np.ndarray, cheapest: list[int], winner: int, peak: float, up: bool) -> PeakFlip | None:
    """The first run of intervals away from today's peak whose cheapest is another candidate
    and which spans at least :data:`ROBUST` of the peak (consecutive intervals of one candidate join)."""
    order = [k for k in range(len(cheapest)) if (edges[k] >= peak if up else edges[k + 1] <= peak)]
    order = order if up else order[::-1]
    runs: list[list[int]] = []
    for k in order:
        if runs and cheapest[runs[-1][-1]] == cheapest[k]:
            runs[-1].append(k)
        else:
            runs.append([k])
    for run in runs:
        low, high = float(edges[min(run)]), float(edges[max(run) + 1])
        if cheapest[run[0]] != winner and high - low >= ROBUST * peak:
            return PeakFlip(low, high, cheapest[run[0]]) if up else PeakFlip(high, low, cheapest[run[0]])
    return None


def _lambda_flip(ranking: Ranking, nominal: Evaluation, r: int, cost_w: float) -> float | None:
    """The smallest λ* at which candidate ``r``'s fleet costs less than ``cost_w``: the flips of
    its monthly cost walked up from its λ* today to :data:`LAMBDA_SPAN` times it, on ``r`` as the
    plan it would be, each flip exact on the model's formulas (None for a runner-up ranked as prefill
    and decode pools: its pools' rates are the model's estimate, not its λ*)."""
    if ranking.evaluated.candidates[r].pooled:
        return None
    shown = variant.of_candidate(nominal, ranking.evaluated, r)
    probe = Search([shown]).probe(shown.scenario.name, Target("instance_max_rate"), [Target(MONTH, 0)], 1)
    today = Fraction(repr(float(shown.values["instance_max_rate"])))
    for flip in probe.walk(today, today * LAMBDA_SPAN).flips:
        if isinstance(flip.above[0], Fraction) and flip.above[0] < Fraction(repr(cost_w)):
            return float(flip.value)
    return None


def _stays(evaluations: list[Evaluation], ranking: Ranking, draws: int) -> tuple[float | None, int]:
    """P(the winner is the cheapest feasible candidate) over draws of the uncertain values."""
    ev = ranking.evaluated
    e = evaluations[0]
    uncertain = {n: i for n, i in e.scenario.inputs.items() if i.uncertain and not i.pinned}
    if not draws or not (ev.band > 0).any() and not uncertain:
        return None, 0
    month = ev.values[MONTH][:, 0]
    w = ranking.winner
    reach = month[w] / (1 - ev.band[w]) ** 2
    chosen = [i for i in ranking.feasible if month[i] * (1 - ev.band[i]) ** 2 <= reach or uncertain]
    lam = ev.values["instance_max_rate"][chosen, 0]
    band = ev.band[chosen]
    sigma = np.log((1 + band) / (1 - band).clip(1e-9)) / (2 * _Z90)
    drawn = {name: sampling.draw(i.uncertain, e.model.quantities[name], name, SEED, draws).values
             for name, i in uncertain.items()}
    compliant = np.where(np.array(ev.tags)[chosen] == transfer.MEASURED, 1.0, 0.0)
    cost_of = batch.drawn_values(e, tuple(ev.candidates[i] for i in chosen), compliant, MONTH,
                                 ("instance_max_rate", *uncertain))
    rng = sampling.stream(SEED, "candidates λ*")
    step = max(1, CHUNK_ROWS // len(chosen))
    wins = sum(_wins(cost_of, rng, lam, sigma, {name: v[start:start + step] for name, v in drawn.items()},
                     min(step, draws - start), chosen.index(w)) for start in range(0, draws, step))
    return wins / draws, draws


def _wins(cost_of, rng: np.random.Generator, lam: np.ndarray, sigma: np.ndarray, drawn: dict[str, np.ndarray],
          tile: int, winner: int) -> int:
    """In how many of ``tile`` draws contender ``winner`` is the cheapest: one chunk of the draws
    (``drawn``: the uncertain inputs' values in them). Each contender's λ* is drawn from the
    stream's next numbers, so chunks draw what one batch of every draw would."""
    n = len(lam)
    z = rng.standard_normal((tile, n))
    given = {name: np.repeat(values, n).reshape((-1, 1)) for name, values in drawn.items()}
    given["instance_max_rate"] = (lam[None, :] * np.exp(sigma[None, :] * z)).reshape((-1, 1))
    cost = np.broadcast_to(cost_of(tile, given), (tile * n, 1)).reshape((tile, n))
    cost = np.where(np.isfinite(cost), cost, np.inf)
    return int(np.count_nonzero(np.argmin(cost, axis=1) == winner))
