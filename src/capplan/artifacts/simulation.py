"""What a simulation hands the outputs: the percentiles of each key result, the probability
each decision holds, the uncertain inputs drawn. :mod:`capplan.analysis.simulation` computes
them (its docstring says how); :mod:`capplan.rendering.simulation` words them.
"""

from __future__ import annotations

from dataclasses import dataclass

from capplan.artifacts.declared import Slot

PERCENTILES = (5, 50, 95)


@dataclass(frozen=True)
class Spread:
    """One key result over the draws that evaluate (display unit); empty when none does."""

    slot: Slot
    values: tuple[float, ...]               # P5, P50, P95 (empty: no draw evaluates)
    mean: float | None
    drivers: tuple[tuple[str, float], ...]  # (input label, Spearman ρ), strongest first
    cdf: tuple[float, ...] = ()             # the 0th, 1st, … 100th percentile: the CDF the chart draws


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
class Simulated:
    """A scenario's simulation, reduced to what the outputs show."""

    scenario: str
    samples: int
    seed: int
    evaluated: int          # draws the plan evaluates at
    inputs: tuple[InputSpread, ...]
    spreads: tuple[Spread, ...]
    decisions: tuple[DecisionOdds, ...]
    causes: tuple[tuple[str, int], ...] = ()     # why draws do not evaluate: (cause, draws)
