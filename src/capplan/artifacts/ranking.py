"""What the candidates' ranking hands the outputs: every candidate's values over every
scenario (:class:`Evaluated`), their order, the flips of #1 and #2 and how firmly the
winner stays (:class:`Ranking`). :mod:`capplan.analysis.candidates` evaluates them and
:mod:`capplan.analysis.ranking` ranks them; the outputs only read these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from capplan.artifacts import transfer
from capplan.loading.plan.candidates import Candidate

MONTH = "deployments.monthly_cost"
PER_M = "deployments.cost_per_million_tokens"


@dataclass
class Evaluated:
    """All candidates over all scenarios: ``values[name]`` is ``(C, S)`` in base units."""

    candidates: tuple[Candidate, ...]
    scenarios: tuple[str, ...]
    values: dict[str, np.ndarray]
    tags: list[str]               # per candidate: measured, transferred, estimated, given
    basis: list[str]              # per candidate: what its λ* rests on, in words
    band: np.ndarray              # (C,) ± share of λ* (0 for measured)
    reasons: list[str]            # per candidate: '' when feasible, else why not
    reference: int | None         # the measured candidate transfers start from
    unpriced: tuple[str, ...]
    transferred: np.ndarray | None = None   # (C,) the nominal λ* a transfer from the reference gives, to compare
    engine: str = "vLLM"          # the serving engine the built-in estimate's constants are for (the plan's engine:)
    estimated: np.ndarray | None = None     # (C,) the nominal λ* the built-in estimate gives, to re-rank on

    @property
    def feasible(self) -> np.ndarray:
        return np.array([not r for r in self.reasons])

    def from_file(self, i: int):
        """The evidence item candidate ``i``'s λ* comes from (None: the plan's sweep, a transfer, the
        roofline or a given value; and for a candidate ranked as pools, whose rates are the pools' own,
        which no evidence file of the aggregated replica gives)."""
        c = self.candidates[i]
        return c.evidence if c.evidence is not None and not c.pooled and i != self.reference and self.tags[i] in (
            transfer.MEASURED, transfer.ESTIMATED) else None

    def tag_text(self, i: int) -> str:
        """The tag as every output shows it: 'estimated by aiconfigurator' for a λ* from a
        performance model's estimate file, 'estimated for vLLM' for the built-in estimate (its
        constants are an engine's: a prediction says which engine it is for)."""
        ev = self.from_file(i)
        if ev is not None:
            return ev.tag
        builtin = self.tags[i] == transfer.ESTIMATED and i != self.reference
        return f"estimated for {self.engine}" if builtin else self.tags[i]


@dataclass(frozen=True)
class Flips:
    """What swaps #1 and #2 (base units; None where no value does)."""

    runner_price: float | None     # the runner-up wins below this node price
    winner_price: float | None     # the winner loses above this node price
    runner_lambda: float | None    # the runner-up wins at or above this λ*
    runner_rho: float | None = None   # … or at or above this ρ (at its λ*), when ρ ≤ 1 reaches it
    peak_above: PeakFlip | None = None   # the nearest peak above today's past which another is cheapest
    peak_below: PeakFlip | None = None   # … and below today's, at or under which another is


@dataclass(frozen=True)
class PeakFlip:
    """Where another candidate becomes the cheapest as the peak moves, and over how much it stays so:
    ``by`` is the cheapest for every peak from ``at`` to ``until`` (req/s in base units; above
    today's peak ``at`` itself still belongs to the winner, below it ``at`` belongs to ``by``)."""

    at: float
    until: float
    by: int


@dataclass(frozen=True)
class Overtaken:
    """Where another candidate becomes cheaper than the recommendation as one input moves, every other
    as today (:mod:`capplan.analysis.overtaking`; base units): ``by`` costs less than each of
    ``rivals`` for every value from ``at`` to ``until`` (``at`` itself included when ``closed``), the
    nearest such run on its side of ``today``."""

    variable: str               # the model's name: 'classes.prompt_tokens', 'peak_arrival_rate'
    index: int | None           # the table row (a class) the variable is a cell of; None for a scalar
    today: float
    at: float
    until: float
    closed: bool
    by: int                     # the candidate that becomes cheaper
    rival: int                  # the cheapest of the recommendation's side there
    cost: float                 # ``by``'s monthly cost just past ``at``
    rival_cost: float           # ``rival``'s


@dataclass(frozen=True)
class SameSource:
    """The cheapest feasible candidate, and its monthly cost (base units), had every candidate's λ*
    come from one provenance: ``transferred`` (from the measured reference) or ``estimated`` (the
    built-in estimate)."""

    provenance: str
    winner: int
    monthly: float


@dataclass
class Ranking:
    evaluated: Evaluated
    order: list[int]                    # feasible by nominal monthly cost, then infeasible
    flips: Flips | None
    stays: float | None                 # P(winner stays winner), None without uncertainty
    draws: int = 0
    scenario_winners: list[int | None] = field(default_factory=list)
    same_source: list[SameSource] = field(default_factory=list)   # the winner had every λ* one provenance

    @property
    def feasible(self) -> list[int]:
        return [i for i in self.order if not self.evaluated.reasons[i]]

    @property
    def winner(self) -> int | None:
        return self.feasible[0] if self.feasible else None

    @property
    def runner_up(self) -> int | None:
        return self.feasible[1] if len(self.feasible) > 1 else None

    def value(self, name: str, i: int, scenario: int = 0) -> float:
        return float(self.evaluated.values[name][i, scenario])

    @property
    def gap(self) -> float | None:
        """How much more the runner-up costs a month than the winner, as a share (None without a
        runner-up)."""
        return None if self.runner_up is None else self.dearer(self.runner_up)

    def dearer(self, i: int) -> float | None:
        """How much more candidate ``i`` costs a month than the winner, as a share; None when the
        winner is free (a share of $0 is no number: the outputs say the amount instead).

        A free offer ranks: owned hardware whose cost is sunk is priced at 0 USD/h, and it wins
        on cost as it should (refusing it would make its owner invent a price); the record and
        the workbook then name what the others cost, not a percentage of nothing."""
        cost_w = self.value(MONTH, self.winner)
        return self.value(MONTH, i) / cost_w - 1 if cost_w > 0 else None

    def needs_benchmark(self) -> list[int]:
        """Transferred or estimated candidates whose λ* band reaches the winner's cost: a benchmark
        would make the ranking decisive (the winner itself included when its own band reaches #2)."""
        w = self.winner
        if w is None:
            return []
        out = []
        for i in self.feasible[:10]:
            band = self.evaluated.band[i]
            if band <= 0:
                continue
            best = self.value(MONTH, i) * (1 - band)      # cost scales at most like 1/λ*
            worst = self.value(MONTH, i) / (1 - band)
            if (i != w and best <= self.value(MONTH, w)) or (
                    i == w and self.runner_up is not None and worst >= self.value(MONTH, self.runner_up)):
                out.append(i)
        return out
