"""What a simulation shows: the findings of :mod:`capplan.analysis.simulation`
(percentiles of the key results, the probability each decision holds, the
drivers of the spread) next to the key results they are of, formatted once
here, so ``capplan simulate``, the record, the JSON document and the
workbook print the same numbers. :func:`capplan.rendering.view.simulation_view`
pairs a simulation with the scenario's key results.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.artifacts.simulation import PERCENTILES, Simulated, Spread

if TYPE_CHECKING:
    from capplan.rendering.keyresults import KeyResult

__all__ = ["PERCENTILES", "ResultSpread", "SimulationView", "percent", "shown_simulation", "text"]

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
class SimulationView(Simulated):
    """A simulation's findings (:class:`capplan.artifacts.simulation.Simulated`) with its key results' spreads shown."""

    results: tuple[ResultSpread, ...] = ()

    @property
    def truncations(self) -> list[str]:
        """'hbm_efficiency: 12 draws (0.01 %) fell outside its domain and were redrawn'."""
        return [f"{i.label}: {i.truncated:,} draw{'s' if i.truncated != 1 else ''} "
                f"({percent(i.truncated / self.samples)}) fell outside its domain and "
                f"{'was' if i.truncated == 1 else 'were'} redrawn"
                for i in self.inputs if i.truncated]

    @property
    def outside(self) -> list[str]:
        """Why a point plan lies outside the 90 % band of its own draws, in words: the
        point plan uses today's values, and its strongest driver is drawn mostly on
        the other side of today's value (below it when the result lies above its band
        and they rise together)."""
        out = []
        ranges = {i.label: i.text for i in self.inputs}
        for r in self.results:
            low, high = r.percentiles[0], r.percentiles[-1]
            point = r.point
            if not isinstance(point, (int, float)) or low is None or high is None or low <= point <= high:
                continue
            above = point > high
            line = (f"The point plan's {r.name}, {r.key.text}, lies {'above' if above else 'below'} the 90 % band of "
                    f"its draws ({r.texts[0]} to {r.texts[2]}): the point plan uses today's values")
            if r.drivers:
                name, rho = r.drivers[0]
                side = "below" if above == (rho > 0) else "above"
                line += (f", and its strongest driver, {name} (ρ {rho:+.2f}), is drawn {side} today's value most of the "
                         f"time ({ranges.get(name, 'its range')})")
            out.append(line + ".")
        return out

    def as_json(self) -> dict:
        return {"scenario": self.scenario, "samples": self.samples, "seed": self.seed,
                "evaluated": self.evaluated, "note": "simulation output: values drawn with this seed",
                "inputs": [{"input": i.label, "distribution": i.text, "truncated": i.truncated} for i in self.inputs],
                "key_results": [r.as_json() for r in self.results],
                "decisions": [d.as_json() for d in self.decisions],
                **({"not_evaluated": [{"cause": c, "draws": n} for c, n in self.causes]} if self.causes else {})}


def shown_simulation(found: Simulated, keys: tuple[KeyResult, ...]) -> SimulationView:
    """A simulation (:func:`capplan.analysis.simulation.run`) beside the scenario's key results
    (:func:`capplan.rendering.keyresults.key_results`), formatted."""
    spreads = {(s.slot.quantity, s.slot.index): s for s in found.spreads}
    results = tuple(_result(k, spreads[k.quantity, k.index]) for k in keys if k.kind not in ("bool", "text"))
    return SimulationView(**{f.name: getattr(found, f.name) for f in fields(found)}, results=results)


def _result(k: KeyResult, found: Spread) -> ResultSpread:
    if not found.values:
        none = (None,) * len(PERCENTILES)
        return ResultSpread(k, k.value, none, None, ("–",) * (len(PERCENTILES) + 1), ())
    values = list(found.values)
    texts = tuple(formatting.quantity(v, k.unit, k.kind) for v in values + [found.mean])
    return ResultSpread(k, k.value, tuple(formatting.plain(v) for v in values), formatting.plain(found.mean), texts,
                        found.drivers, found.cdf)


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
