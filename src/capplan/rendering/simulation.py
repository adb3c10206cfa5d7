"""What a simulation shows: percentiles of the key results, the probability each
decision holds, and which uncertain inputs drive the spread.

Built from a :class:`capplan.engine.montecarlo.Simulation` and the scenario's
deterministic evaluation (which says what the key results and the decisions
are, :mod:`capplan.rendering.view` and :mod:`capplan.rendering.holds`, and
what the plan decided). Everything is formatted once here, so ``capplan
simulate``, the record, the JSON document and the workbook print the same
numbers. A decision is the point plan's: a count or size *suffices* in a
draw when the draw needs no more than the plan decided (``P(active GPUs ≤
9 GPUs)``); a pass/fail holds when it passes. A draw the plan does not
evaluate at (no sweep row passes) counts as not holding.

Percentiles are of the draws themselves (numpy's ``inverted_cdf``: a GPU
count's P95 is a whole number of GPUs); drivers are Spearman rank
correlations (average ranks for ties, as a GPU count has many).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capplan import formatting
from capplan.language import units
from capplan.engine.evaluate import Evaluation
from capplan.engine.montecarlo import DEFAULT_SAMPLES, DEFAULT_SEED, Simulation, simulate
from capplan.rendering.charts import simulation as simchart
from capplan.rendering.holds import decisions
from capplan.rendering.view import KeyResult, key_results

PERCENTILES = (5, 50, 95)
DRIVER_FLOOR = 0.05         # |ρ| below this is not worth a reader's attention; below 3/√n it is noise
DRIVERS_SHOWN = 3


@dataclass(frozen=True)
class ResultSpread:
    """One key result over the draws (display unit)."""

    key: KeyResult
    point: object
    percentiles: tuple[float | None, ...]
    mean: float | None
    texts: tuple[str, ...]                 # P5, P50, P95, mean as text
    drivers: tuple[tuple[str, float], ...]  # (input label, Spearman ρ), strongest first
    cdf: tuple[float, ...] = ()             # the 0th, 1st, … 100th percentile: the CDF the chart draws

    @property
    def spread(self) -> bool:
        """Whether the draws differ at all (a constant has no picture worth drawing)."""
        return bool(self.cdf) and self.cdf[0] != self.cdf[-1]

    @property
    def name(self) -> str:
        return f"{self.key.row}: {self.key.label}" if self.key.row else self.key.label

    def as_json(self) -> dict:
        return {"id": self.key.id, "label": self.key.label, "unit": self.key.unit, "point": self.point,
                **{f"p{p}": v for p, v in zip(PERCENTILES, self.percentiles)}, "mean": self.mean,
                "drivers": [{"input": name, "spearman": rho} for name, rho in self.drivers]}


@dataclass(frozen=True)
class DecisionOdds:
    """How often the point plan's decision holds over the draws."""

    id: str
    text: str               # 'active GPUs ≤ 9 GPUs', 'aws-p4de.24xlarge: nominal fleet holds'
    probability: float

    def as_json(self) -> dict:
        return {"id": self.id, "decision": self.text, "probability": self.probability}


@dataclass(frozen=True)
class InputSpread:
    label: str
    text: str               # 'lognormal, 90 % in 45 to 80 req/s'
    truncated: int          # draws redrawn into the domain


@dataclass(frozen=True)
class SimulationView:
    scenario: str
    samples: int
    seed: int
    evaluated: int          # draws the plan evaluates at
    inputs: tuple[InputSpread, ...]
    results: tuple[ResultSpread, ...]
    decisions: tuple[DecisionOdds, ...]
    causes: tuple[tuple[str, int], ...] = ()     # why draws do not evaluate: (cause, draws)

    @property
    def truncations(self) -> list[str]:
        """'hbm_efficiency: 12 draws (0.01 %) fell outside its domain and were redrawn'."""
        return [f"{i.label}: {i.truncated:,} draw{'s' if i.truncated != 1 else ''} "
                f"({percent(i.truncated / self.samples)}) fell outside its domain and "
                f"{'was' if i.truncated == 1 else 'were'} redrawn"
                for i in self.inputs if i.truncated]

    def as_json(self) -> dict:
        return {"scenario": self.scenario, "samples": self.samples, "seed": self.seed,
                "evaluated": self.evaluated, "note": "simulation output: values drawn with this seed",
                "inputs": [{"input": i.label, "distribution": i.text, "truncated": i.truncated} for i in self.inputs],
                "key_results": [r.as_json() for r in self.results],
                "decisions": [d.as_json() for d in self.decisions],
                **({"not_evaluated": [{"cause": c, "draws": n} for c, n in self.causes]} if self.causes else {})}


def percent(p: float) -> str:
    """A probability as a reader sees it: one decimal, never rounding to a certainty that is not one."""
    text = f"{100 * p:.1f} %"
    if text == "100.0 %" and p < 1:
        return "> 99.9 %"
    if text == "0.0 %" and p > 0:
        return "< 0.1 %"
    return text


def odds(p: float) -> str:
    """'= 61.1 %', '> 99.9 %': a probability after P(...)."""
    shown = percent(p)
    return shown if shown[0] in "<>" else f"= {shown}"


def run(e: Evaluation, decided: dict, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> SimulationView:
    """Simulate scenario ``e`` of its plan, keeping over the draws only what the view shows."""
    keep = frozenset(k.quantity for k in key_results(e) if k.kind != "text") | frozenset(
        d.target.name for d in decisions(e)[0])
    return summarise(simulate(e.plan, e.model, decided, e.scenario, samples, seed, keep), e)


def summarise(sim: Simulation, e: Evaluation) -> SimulationView:
    """The view of a simulation of scenario ``e`` (its deterministic evaluation)."""
    ok = sim.evaluates
    shown = [k for k in key_results(e) if k.kind not in ("bool", "text")]
    draws = [units.to_display(sim.column(k.quantity, k.index), k.unit)[ok] for k in shown]
    ranks = np.array([_standard_ranks(d) for d in draws]).reshape(len(draws), -1)
    drivers: list[list] = [[] for _ in shown]
    floor = max(DRIVER_FLOOR, 3 / np.sqrt(max(1, int(np.count_nonzero(ok)))))
    for u in sim.uncertain:             # one input's ranks at a time: 500 ranged rows need not all be held
        rhos = ranks @ _standard_ranks(u.drawn.values[ok])     # Pearson's r of the ranks: Spearman's ρ
        for found, rho in zip(drivers, rhos.tolist()):
            if abs(rho) >= floor:
                found.append((u.label, formatting.plain(round(rho, 3))))
    results = [_spread(k, d, found) for k, d, found in zip(shown, draws, drivers)]
    odds = []
    for d in decisions(e)[0]:
        name, row = d.target.name, d.target.index
        q = e.model.quantities[name]
        draws = sim.column(name, row)
        prefix = f"{d.row}: " if d.row else ""
        if q.kind == "bool":
            held, text = draws != 0, f"{prefix}{d.label}" + (" passes" if d.role == "gate" else "")
        else:
            point = e.values[name] if row is None else e.values[name][row]
            held = draws <= point
            shown_point = formatting.quantity(units.to_display(float(point), q.unit), q.unit, q.kind)
            text = f"{prefix}{d.label} ≤ {shown_point}"
        odds.append(DecisionOdds(d.id, text, formatting.plain(float(np.mean(held & ok)))))
    spreads = tuple(InputSpread(u.label, u.dist.text, u.drawn.truncated) for u in sim.uncertain)
    return SimulationView(e.scenario.name, sim.samples, sim.seed, int(np.count_nonzero(ok)), spreads,
                          tuple(results), tuple(odds), tuple(sim.causes.items()))


def _spread(k: KeyResult, draws: np.ndarray, drivers: list) -> ResultSpread:
    if not draws.size:
        none = (None,) * len(PERCENTILES)
        return ResultSpread(k, k.value, none, None, ("–",) * (len(PERCENTILES) + 1), ())
    # Order statistics of a sorted copy: the same values, found six times faster than by
    # partitioning 100,000 draws at 101 places (the mean keeps the draws' own order).
    raw = np.percentile(np.sort(draws), np.arange(101), method="inverted_cdf")
    if raw[0] == raw[-1]:                       # no draw moves it: exactly the point, as the engine has it
        cdf, mean = [float(raw[0])] * len(raw), float(raw[0])
    else:
        cdf, mean = [_stable(v) for v in raw], _stable(np.mean(draws))
    values = [cdf[p] for p in PERCENTILES]
    texts = tuple(formatting.quantity(v, k.unit, k.kind) for v in values + [mean])
    drivers.sort(key=lambda pair: (-abs(pair[1]), pair[0]))
    return ResultSpread(k, k.value, tuple(formatting.plain(v) for v in values), formatting.plain(mean), texts,
                        tuple(drivers), tuple(cdf))


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


def text(view: SimulationView) -> str:
    """``capplan simulate``'s plain-text report."""
    head = (f"[{view.scenario}] {view.samples:,} draws, seed {view.seed}; the plan evaluates at "
            f"{view.evaluated:,} ({percent(view.evaluated / view.samples)})")
    width = max([len(r.name) for r in view.results] + [len(i.label) for i in view.inputs] + [10])
    lines = [head, "", "Uncertain inputs:"]
    lines += [f"  {i.label:<{width}}  {i.text}" for i in view.inputs] or [
        "  none: the plan gives no range and no replicated runs, so every draw is the point plan"]
    lines += [f"  note: {t}" for t in view.truncations]
    lines += [f"  note: {count:,} draw{'s' if count != 1 else ''} ({percent(count / view.samples)}) do not evaluate: "
              f"{cause}" for cause, count in view.causes]
    lines += ["", f"  {'key result':<{width}} " + " ".join(f"{h:>14}" for h in ("point", "P5", "P50", "P95", "mean"))]
    for r in view.results:
        lines.append(f"  {r.name:<{width}} {r.key.text:>14} " + " ".join(f"{t:>14}" for t in r.texts))
    lines += ["", "Decisions (the point plan's), probability they hold:"]
    lines += [f"  P({d.text}) {odds(d.probability)}" for d in view.decisions]
    lines += ["", "Drivers (Spearman rank correlation with each key result):"]
    for r in view.results:
        if r.drivers:
            lines.append(f"  {r.name:<{width}}  " + ", ".join(f"{n} {rho:+.2f}" for n, rho in r.drivers[:DRIVERS_SHOWN]))
    return "\n".join(lines) + "\n"


def markdown(view: SimulationView, chart: str = "", number: int | None = None) -> str:
    """The simulation as Markdown (``templates/simulation.md.j2``); the record's
    section carries its ``number`` in the record, ``capplan simulate`` none."""
    from capplan.rendering.record import _environment

    return _environment().get_template("simulation.md.j2").render(sim=view, chart=chart, percent=percent,
                                                                  number=number)


def of_plan(plan_view) -> SimulationView | None:
    """The nominal scenario's simulation with the default draws and seed, as the record,
    the JSON and the workbook show it; ``None`` for a plan without uncertain values."""
    from capplan.engine.montecarlo import uncertain_in

    if not uncertain_in(plan_view.plan):
        return None
    return run(plan_view.nominal, plan_view.nominal.values)


def chart_name(plan_name: str) -> str:
    """The file next to the record that holds the simulation's picture."""
    return f"{plan_name}.simulation.svg"


def chart(view: SimulationView, plan_title: str) -> str:
    return simchart.svg(view, f"What the uncertain inputs do: {plan_title}")


def section(plan_view, number: int) -> str:
    """The record's simulation section (Markdown) numbered ``number``, or '' for a plan without uncertain values."""
    shown = plan_view.simulation
    return markdown(shown, chart_name(plan_view.plan.name), number) if shown else ""


def files(plan_view) -> dict[str, bytes]:
    """The files a build writes for the simulation: its picture, when there is one."""
    shown = plan_view.simulation
    return {chart_name(plan_view.plan.name): chart(shown, plan_view.plan.title).encode("utf-8")} if shown else {}
