"""The strategies a demand curve can be bought by, per deployment, from one evaluation.

A plan with a traffic profile (``traffic:``) prices its fleet four ways, every number a
quantity of the model (so the workbook holds each as a live formula): the fleet sized for
the peak and run every hour (``monthly_cost``), the autoscaled fleet the profile's lag rule
keeps (``autoscaled_monthly_cost``), R* reserved replicas with the rest bursting on demand
(``base_burst_monthly_cost``), the autoscaled fleet's peak reserved
(``all_reserved_monthly_cost``) and, where the offer has a spot price, the autoscaled fleet on
spot with its spares on demand (``spot_monthly_cost``), the fixed fleet in capacity blocks
(``block_monthly_cost``) and the fixed fleet bought and run (``owned_monthly_cost``: depreciation,
capital, maintenance and power). This module only lines them up and says which holds the
SLO: an autoscaled fleet short of capacity in some interval (``slo_risk_intervals``) does
not, unless its replicas are asked for ``prewarm_lead`` ahead. The recommendation is the
cheapest strategy that holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from capplan.engine.evaluate import Evaluation

FIXED, AUTOSCALED, BASE_BURST, RESERVED, SPOT = "fixed", "autoscaled", "base + burst", "all reserved", "spot"
BLOCK, OWNED = "capacity blocks", "owned"
COSTS = {FIXED: "deployments.monthly_cost", AUTOSCALED: "deployments.autoscaled_monthly_cost",
         BASE_BURST: "deployments.base_burst_monthly_cost", RESERVED: "deployments.all_reserved_monthly_cost",
         SPOT: "deployments.spot_monthly_cost", BLOCK: "deployments.block_monthly_cost",
         OWNED: "deployments.owned_monthly_cost"}
OFFERED = {SPOT: "deployments.spot_hourly_cost", BLOCK: "deployments.block_price",    # strategies an offer may lack
           OWNED: "deployments.owned_price"}
SIZED_FOR_PEAK = (FIXED, RESERVED, BLOCK, OWNED)      # hold where the nominal fleet holds; the others autoscale


@dataclass(frozen=True)
class Strategy:
    """One way to buy one deployment's fleet through the profile (display units)."""

    kind: str                   # FIXED, AUTOSCALED, BASE_BURST, RESERVED, SPOT, BLOCK or OWNED
    deployment: str
    monthly_cost: float         # USD a month
    cost_per_million: float     # USD per 1M output tokens
    holds: bool                 # every interval carried at λ* (the SLO holds)

    @property
    def name(self) -> str:
        return f"{self.kind} on {self.deployment}"


@dataclass(frozen=True)
class PowerFlip:
    """Where the electricity price changes the recommended strategy (an owned fleet pays its power; a
    rented offer's price includes it), every other input as today: past ``at`` (``at`` itself when
    ``closed``) ``after`` is the cheapest that holds, at ``after.monthly_cost`` there; ``at`` None:
    no price between today's and ``end`` does (base units, USD per joule)."""

    today: float
    end: float
    at: float | None
    closed: bool
    before: Strategy
    after: Strategy | None


def has_profile(e: Evaluation) -> bool:
    return "profile.serving_replicas" in e.values


def strategies(e: Evaluation) -> list[Strategy]:
    """Every strategy of every deployment, in deployment order; none without a profile."""
    if not has_profile(e):
        return []
    names = e.display("deployments.name")
    per_million = e.display("deployments.cost_per_million_tokens")
    fixed = e.display("deployments.monthly_cost")
    fixed_holds = e.display("deployments.fleet_holds")
    autoscaled_holds = e.display("slo_risk_intervals") == 0
    offered = {kind: e.display(column) for kind, column in OFFERED.items()}
    out = []
    for kind, column in COSTS.items():
        costs = e.display(column)
        holds = fixed_holds if kind in SIZED_FOR_PEAK else [autoscaled_holds] * len(names)
        for i, name in enumerate(names):
            if kind in offered and not offered[kind][i]:
                continue                                        # the offer has no such price
            rate = per_million[i] / fixed[i] if fixed[i] else 0.0     # USD/1M tokens per USD a month
            out.append(Strategy(kind, name, costs[i], costs[i] * rate, bool(holds[i])))
    return sorted(out, key=lambda s: names.index(s.deployment))


def recommended(found: list[Strategy]) -> Strategy | None:
    """The cheapest strategy that holds the SLO (the first such in deployment order on a tie)."""
    holding = [s for s in found if s.holds]
    return min(holding, key=lambda s: s.monthly_cost) if holding else None
