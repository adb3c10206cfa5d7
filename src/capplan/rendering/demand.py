"""The demand curve as shown: the strategies' cost table, the recommendation, the chart's data.

:func:`options` gives the rows the record's first screen lists (:class:`~capplan.rendering.choices.Option`,
formatted strings) and :func:`sentence` its one sentence; :func:`section` what ``templates/demand.md.j2``
prints below the demand section's derivations. Every number is a quantity of the model,
formatted as the rest of the record formats it.
"""

from __future__ import annotations

from collections.abc import Callable

from capplan import formatting
from capplan.artifacts import demand
from capplan.engine.evaluate import Evaluation
from capplan.language import units
from capplan.rendering.choices import Option
from capplan.rendering.present import shown


def _note(e: Evaluation, s: demand.Strategy, fixed: float) -> str:
    if s.kind == demand.FIXED:
        return "sized for the peak, every hour"
    saved = fixed - s.monthly_cost
    share = f" ({saved / fixed:.0%})" if fixed else ""
    versus = f"{'saves' if saved >= 0 else 'costs'} {formatting.money(abs(saved))}{share} against fixed on this offer"
    if s.kind == demand.AUTOSCALED:
        return f"{versus}; mean utilisation {shown(e, 'mean_utilisation').text}"
    if s.kind == demand.BASE_BURST:
        return (f"{versus}; {shown(e, 'base_replicas').text} replicas reserved at p_r/p_o = "
                f"{shown(e, 'reserved_price_ratio').text}, the rest on demand")
    if s.kind == demand.BLOCK:
        return f"{versus}; the fleet sized for the peak in back-to-back blocks, no scaling inside one"
    if s.kind == demand.OWNED:
        row = list(e.display("deployments.name")).index(s.deployment)
        hourly = shown(e, "deployments.owned_hourly_cost", row).text
        return (f"{versus}; the fleet sized for the peak bought at {hourly} a node (depreciation, capital, "
                f"maintenance, power at TDP × PUE)")
    if s.kind == demand.SPOT:
        spot, spare = e.display("spot_replica_hours"), e.display("spare_replica_hours")
        share = spot / (spot + spare) if spot + spare else 0.0
        return (f"{versus}; {share:.0%} of the replica-hours on spot, topped up for "
                f"{shown(e, 'spot_interruption_rate').text} interrupted a month, the spares on demand")
    return f"{versus}; the autoscaled peak of {shown(e, 'peak_serving_replicas').text} replicas reserved"


def _holds(e: Evaluation, s: demand.Strategy) -> str:
    """Whether the strategy holds the SLO, worded as the first screen's other options are ('✓ …', '✗ …')."""
    if s.holds:
        return "✓ holds in every interval"
    if s.kind in (demand.AUTOSCALED, demand.BASE_BURST, demand.SPOT):
        return (f"✗ short for {shown(e, 'slo_risk_time').text} of the profile unless replicas are asked for "
                f"{shown(e, 'prewarm_lead').text} ahead")
    return "✗ the fleet breaks at the peak"


SHARED = "at most: whole nodes, less than one partly used node an interval above the replicas' shares"


def options(e: Evaluation) -> list[Option]:
    """The first screen's rows, formatted: with one offer, its strategies (how to buy it);
    with several, the recommended strategy, the cheapest that holds on each other offer (what
    their price models come to beside it) and the fixed fleet the saving is counted against,
    so the risks stay on the screen. Every strategy when none holds; none without a profile."""
    found = demand.strategies(e)
    best = demand.recommended(found)
    offers = list(dict.fromkeys(s.deployment for s in found))
    if best is None or len(offers) == 1:
        return _formatted(e, found)
    others = [demand.recommended([s for s in found if s.deployment == name]) for name in offers
              if name != best.deployment]
    fixed = next(s for s in found if s.kind == demand.FIXED and s.deployment == best.deployment)
    shown = [best] + sorted((s for s in others if s), key=lambda s: s.monthly_cost)
    return _formatted(e, shown + ([fixed] if fixed is not best else []))


def _formatted(e: Evaluation, found: list[demand.Strategy]) -> list[Option]:
    fixed = {s.deployment: s.monthly_cost for s in demand.strategies(e) if s.kind == demand.FIXED}
    names = e.display("deployments.name") if found else []
    shared = {n for n, per in zip(names, e.display("deployments.replicas_per_node") if found else []) if per > 1}
    return [Option(s.name, formatting.money(s.monthly_cost), formatting.money(s.cost_per_million), _holds(e, s),
                   _note(e, s, fixed[s.deployment])
                   + (f" ({SHARED})" if s.deployment in shared
                      and s.kind in (demand.AUTOSCALED, demand.BASE_BURST, demand.SPOT) else ""))
            for s in found]


def _choice(e: Evaluation) -> tuple[list, demand.Strategy | None, demand.Strategy | None]:
    """Every strategy, the recommended one and the fixed fleet on its offer (Nones without one)."""
    found = demand.strategies(e)
    best = demand.recommended(found)
    fixed = None if best is None else next(
        s for s in found if s.kind == demand.FIXED and s.deployment == best.deployment)
    return found, best, fixed


def sentence(e: Evaluation) -> str:
    """The recommendation in one sentence, or '' for a plan without a profile."""
    found, best, fixed = _choice(e)
    if best is None:
        return "" if not found else "No strategy of the profile holds the SLO in every interval."
    if best is fixed:
        return (f"Through the traffic profile the fleet sized for the peak on {best.deployment} stays the "
                f"cheapest that holds the SLO: {formatting.money(best.monthly_cost)} a month.")
    saved = fixed.monthly_cost - best.monthly_cost
    share = f" ({saved / fixed.monthly_cost:.0%})" if fixed.monthly_cost > 0 else ""     # a free fleet: no share
    return (f"Through the traffic profile, {best.kind} on {best.deployment} is the cheapest that holds the SLO: "
            f"{formatting.money(best.monthly_cost)} a month ({formatting.money(best.cost_per_million)} per 1M output tokens), "
            f"{formatting.money(saved)}{share} less than the fleet sized for the peak.")


def ask(e: Evaluation) -> str:
    """What the reader approves through the profile, or '' for a plan without one."""
    found, best, fixed = _choice(e)
    if best is None:
        return "" if not found else "Approve nothing yet: no strategy holds the SLO through the profile."
    if best is fixed:
        return f"Approve the fleet sized for the peak on {best.deployment} at {formatting.money(best.monthly_cost)} a month."
    return (f"Approve {best.kind} on {best.deployment} at {formatting.money(best.monthly_cost)} a month, against "
            f"{formatting.money(fixed.monthly_cost)} for the fleet sized for the peak.")


def power_json(e: Evaluation, flips: list[demand.PowerFlip]) -> list[dict]:
    """The electricity-price flips for the JSON document, prices in USD/kWh (``at`` null: none to ``end``)."""
    scale = units.factor(e.model.quantities["electricity_price"].unit)
    return [{"today": round(f.today / scale, 6), "end": round(f.end / scale, 6),
             "at": None if f.at is None else round(f.at / scale, 6), "at_included": f.closed,
             "recommended": f.before.name, "then": None if f.after is None else f.after.name,
             "then_monthly_cost": None if f.after is None else round(f.after.monthly_cost, 2)} for f in flips]


def power_text(e: Evaluation, flips: list[demand.PowerFlip]) -> str:
    """The electricity prices at which the recommendation changes, nearest on each side, in words ('' for a
    plan without an owned offer): where owning starts or stops paying, or that no price in the range does."""
    price = price_text(e)
    if not flips:
        return ""
    if all(f.at is None for f in flips):
        ends = sorted(f.end for f in flips)
        return (f"No electricity price from {price(ends[0])} to {price(ends[-1])} changes the recommendation "
                f"(today {price(flips[0].today)}).")
    out = []
    for f in flips:
        up = f.end > f.today
        if f.at is None:
            out.append(f"none {'above' if up else 'below'} today's price, "
                       f"{'up to' if up else 'down to'} {price(f.end)}")
            continue
        out.append(power_clause(f, price))
    return f"As the electricity price moves (today {price(flips[0].today)}): " + "; ".join(out) + "."


def price_text(e: Evaluation) -> Callable[[float], str]:
    """An electricity price in base units (USD per joule) as the outputs write it: '$0.0806/kWh'."""
    scale = units.factor(e.model.quantities["electricity_price"].unit)
    return lambda x: f"${formatting.number(x / scale, 4)}/kWh"


def power_clause(f: demand.PowerFlip, price: Callable[[float], str]) -> str:
    """One found flip in words: 'from $1.118/kWh autoscaled on gpu is the cheapest that holds the SLO,
    $9,569.07 a month against owned on gpu's $4,026.00' (the record's sentence, the workbook's row)."""
    up = f.end > f.today
    where = ("from" if f.closed else "above") if up else ("at or below" if f.closed else "below")
    return (f"{where} {price(f.at)} {f.after.name} is the cheapest that holds the SLO, "
            f"{formatting.money(f.after.monthly_cost)} a month against {f.before.name}'s "
            f"{formatting.money(f.before.monthly_cost)}")


def chart_data(e: Evaluation) -> dict:
    """The profile in display units: start (h), arrival rate, capacity requested and serving (req/s),
    and the share of each interval the serving capacity is short (its start, while replicas boot)."""
    rate = e.display("replica_service_rate")
    return {"start": e.display("profile.start"), "arrival": e.display("profile.arrival_rate"),
            "requested": [r * rate for r in e.display("profile.requested_replicas")],
            "serving": e.display("profile.serving_capacity"), "risk": e.display("profile.slo_risk_share"),
            "step": e.display("profile_step")}


def section(e: Evaluation, chart_file: str,
            power_flips: Callable[[], list[demand.PowerFlip]] = list) -> dict | None:
    """What the demand section prints after its derivations (None without a profile): every
    strategy of every deployment, the offers' price models side by side, and the electricity prices
    at which the recommendation changes (``power_flips``, read only for a plan with a profile)."""
    found = _formatted(e, demand.strategies(e))
    if not found:
        return None
    return {"options": found, "sentence": sentence(e), "chart_file": chart_file,
            "power": power_text(e, power_flips()),
            "risk": shown(e, "slo_risk_intervals").text, "lead": shown(e, "prewarm_lead").text,
            "risk_time": shown(e, "slo_risk_time").text, "whole": shown(e, "scale_up_whole_intervals").text,
            "fraction": f"{e.display('scale_up_fraction'):.0%}", "down": shown(e, "scale_down_intervals").text,
            "lag": shown(e, "scale_up_lag").text, "delay": shown(e, "scale_down_delay").text}
