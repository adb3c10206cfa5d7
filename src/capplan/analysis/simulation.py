"""What a simulation finds: percentiles of the key results, the probability each
decision holds, and which uncertain inputs drive the spread.

Computed from a :class:`capplan.engine.montecarlo.Simulation` and the scenario's
deterministic evaluation (which says what the key results and the decisions
are, :mod:`capplan.artifacts.declared`, and what the plan decided).
:mod:`capplan.rendering.simulation` words the result for ``capplan simulate``,
the record, the JSON document and the workbook. A decision is the point
plan's: a count or size *suffices* in a draw when the draw needs no more than
the plan decided (``P(active GPUs ≤ 9 GPUs)``); a pass/fail holds when it
passes. A draw the plan does not evaluate at (no sweep row passes) counts as
not holding.

Percentiles are of the draws themselves (numpy's ``inverted_cdf``: a GPU
count's P95 is a whole number of GPUs); drivers are Spearman rank
correlations (average ranks for ties, as a GPU count has many).
"""

from __future__ import annotations

import numpy as np

from capplan import formatting
from capplan.artifacts.declared import Slot, decisions, key_slots
from capplan.artifacts.simulation import PERCENTILES, DecisionOdds, InputSpread, Simulated, Spread
from capplan.engine.evaluate import Evaluation
from capplan.engine.montecarlo import DEFAULT_SAMPLES, DEFAULT_SEED, Simulation, simulate, uncertain_in
from capplan.language import units

DRIVER_FLOOR = 0.05         # |ρ| below this is not worth a reader's attention; below 3/√n it is noise


def run(e: Evaluation, decided: dict, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> Simulated:
    """Simulate scenario ``e`` of its plan, keeping over the draws only what is shown."""
    return summarise(simulate(e.plan, e.model, decided, e.scenario, samples, seed, kept(e)), e)


def kept(e: Evaluation) -> frozenset[str]:
    """The quantities a simulation keeps over its draws: the key results (but text) and the decisions."""
    return frozenset(s.quantity for s in key_slots(e) if e.model.quantities[s.quantity].kind != "text") | frozenset(
        d.target.name for d in decisions(e)[0])


def of_plan(evaluations: list[Evaluation]) -> Simulated | None:
    """The nominal scenario's simulation with the default draws and seed, as the record,
    the JSON and the workbook show it; ``None`` for a plan without uncertain values."""
    nominal = evaluations[0]
    if not uncertain_in(nominal.plan):
        return None
    return run(nominal, nominal.values)


def summarise(sim: Simulation, e: Evaluation) -> Simulated:
    """The findings of a simulation of scenario ``e`` (its deterministic evaluation)."""
    ok = sim.evaluates
    shown = [s for s in key_slots(e) if e.model.quantities[s.quantity].kind not in ("bool", "text")]
    draws = [units.to_display(sim.column(s.quantity, s.index), e.model.quantities[s.quantity].unit)[ok]
             for s in shown]
    ranks = np.array([_standard_ranks(d) for d in draws]).reshape(len(draws), -1)
    drivers: list[list] = [[] for _ in shown]
    floor = max(DRIVER_FLOOR, 3 / np.sqrt(max(1, int(np.count_nonzero(ok)))))
    for u in sim.uncertain:             # one input's ranks at a time: 500 ranged rows need not all be held
        rhos = ranks @ _standard_ranks(u.drawn.values[ok])     # Pearson's r of the ranks: Spearman's ρ
        for found, rho in zip(drivers, rhos.tolist()):
            if abs(rho) >= floor:
                found.append((u.label, formatting.plain(round(rho, 3))))
    spreads = tuple(_spread(s, d, found) for s, d, found in zip(shown, draws, drivers))
    odds = []
    for d in decisions(e)[0]:
        name, row = d.target.name, d.target.index
        q = e.model.quantities[name]
        drawn = sim.column(name, row)
        prefix = f"{d.row}: " if d.row else ""
        if q.kind == "bool":
            held, text = drawn != 0, f"{prefix}{d.label}" + (" passes" if d.role == "gate" else "")
        else:
            point = e.values[name] if row is None else e.values[name][row]
            held = drawn <= point
            shown_point = formatting.quantity(units.to_display(float(point), q.unit), q.unit, q.kind)
            text = f"{prefix}{d.label} ≤ {shown_point}"
        odds.append(DecisionOdds(d.id, text, formatting.plain(float(np.mean(held & ok)))))
    inputs = tuple(InputSpread(u.label, u.dist.text, u.drawn.truncated) for u in sim.uncertain)
    return Simulated(e.scenario.name, sim.samples, sim.seed, int(np.count_nonzero(ok)), inputs,
                     spreads, tuple(odds), tuple(sim.causes.items()))


def _spread(slot: Slot, draws: np.ndarray, drivers: list) -> Spread:
    if not draws.size:
        return Spread(slot, (), None, ())
    # Order statistics of a sorted copy: the same values, found six times faster than by
    # partitioning 100,000 draws at 101 places (the mean keeps the draws' own order).
    raw = np.percentile(np.sort(draws), np.arange(101), method="inverted_cdf")
    if raw[0] == raw[-1]:                       # no draw moves it: exactly the point, as the engine has it
        cdf, mean = [float(raw[0])] * len(raw), float(raw[0])
    else:
        cdf, mean = [_stable(v) for v in raw], _stable(np.mean(draws))
    drivers.sort(key=lambda pair: (-abs(pair[1]), pair[0]))
    return Spread(slot, tuple(cdf[p] for p in PERCENTILES), mean, tuple(drivers), tuple(cdf))


def _stable(value) -> float:
    """A drawn value to 10 significant digits: numpy's exp and log may differ in the last bit
    between versions and CPUs, and the outputs must not."""
    return float(f"{float(value):.10g}")


def _standard_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their positions), centred and scaled to unit
    length, so the dot product of two of them is Spearman's ρ (0 for a constant). One
    argsort: the tie groups are runs of equal values in sorted order (drawn inputs have
    none, and skip the grouping)."""
    values = values.reshape(-1)
    order = np.argsort(values)             # ties share one rank, so their order does not matter
    ordered = values[order]
    ranks = np.empty(values.size)
    new = np.concatenate(([True], ordered[1:] != ordered[:-1])) if values.size else np.ones(0, bool)
    if new.all():
        ranks[order] = np.arange(1.0, values.size + 1)
    else:
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], values.size)
        counts = ends - starts
        ranks[order] = np.repeat(ends - (counts - 1) / 2.0, counts)
    ranks -= ranks.mean()
    length = float(np.sqrt(np.dot(ranks, ranks)))
    return ranks / length if length > 0 else ranks
