"""The record's first screen: the decision, what it costs, what it asks, what can break it.

A reviewer reads one screen. It opens with the recommendation in one short
bold sentence with what it rents and costs (:class:`Bill`: GPUs, nodes, a
month, a year), then its verdict in short sentences and, where the spares of
N+k raise the spend by more than a quarter, how much; the ask (what the reader
approves), the decision record's fields (status, owner, approver, date,
commitment, review trigger: the plan's ``decision:``), a short table of the options (:class:`Option`: monthly cost,
$ per 1M output tokens, whether it holds in every scenario) and the risks,
nearest first (:class:`Risk`): the flip points of :mod:`capplan.analysis.holds`
within the layout's ``holds.warn`` of today's value, each with the weak
evidence under its input; the probability each decision holds over the
uncertain inputs; prices older than ``holds.price_age`` days.

The options and the sentence are arguments (:func:`first_screen`), so an
analysis with options of its own (candidate deployments, a demand curve)
passes its rows and sentence; by default they are the plan's deployment rows.
A weak-evidence check is a function in :data:`EVIDENCE` (append one to flag a
new kind, e.g. a transferred λ*).

Price age is measured against the plan's own newest date (an ``as_of``, an
input's ``date:``, or a YYYY-MM-DD written in a source), never the clock, so
the record stays a function of the plan and ``capplan check`` can reproduce it.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.artifacts import demand
from capplan.artifacts.declared import holds_spec
from capplan.artifacts.ranking import MONTH
from capplan.engine.evaluate import Evaluation
from capplan.loading.plan.data import Decision
from capplan.rendering.choices import Option, Risk, holds_across
from capplan.rendering.present import on_estimated_lambda
from capplan.rendering.sentences import count
from capplan.rendering.simulation import percent
from capplan.rendering.view import PlanView, sentence as layout_sentence

if TYPE_CHECKING:
    from capplan.rendering.holds import InputHolds


@dataclass
class FirstScreen:
    sentence: str                                     # the lead, in bold: what to rent and what it costs
    ask: str
    options: list[Option]
    risks: list[Risk]
    odds: list[str] = field(default_factory=list)     # 'active GPUs ≤ 9 GPUs: 61.1 %'
    farther: list[Risk] = field(default_factory=list)  # weak evidence no decision is near
    warn: float = 0.25
    reference: str = ""                               # the date prices are aged against
    more: str = ""                                    # the verdict after the lead, in short sentences
    redundancy: str = ""                              # 'N+1 doubles the spend: …', or ''
    decision: Decision = field(default_factory=Decision)
    chain: list = field(default_factory=list)         # the candidates' sizing chains (rendering.candidates.Chain)
    change: str = ""                                  # the winner against the plan's own configuration, or ''


SPARES_CALLED_OUT = 0.25    # the first screen says what N+k costs when the spares raise the spend by more


@dataclass(frozen=True)
class Bill:
    """What the recommended option rents and what it costs, in base units: the figures of the
    first screen's lead (a finance partner reads the year). ``bare_nodes``: the nodes the active
    replicas alone would take, so that the spares' share of the spend is known."""

    name: str
    gpus: float
    nodes: float
    monthly: float
    months_per_year: float
    active_gpus: float
    spares: float                # the k of N+k
    bare_nodes: float
    up_to: bool = False          # a fleet that scales through the day: its GPUs and nodes at the peak

    @property
    def annual(self) -> float:
        return self.monthly * self.months_per_year

    @property
    def text(self) -> str:
        """'16 GPUs on 2 nodes, $166,797.62 a month, $2,001,571.44 a year'."""
        fleet = f"{count(self.gpus, 'GPU')} on {count(self.nodes, 'node')}"
        fleet = f"up to {fleet} at the peak" if self.up_to else fleet
        return f"{fleet}, {formatting.money(self.monthly)} a month, {formatting.money(self.annual)} a year"

    @property
    def redundancy(self) -> str:
        """'N+1 doubles the spend: 8 GPUs carry the peak, 16 are rented.' when the spares raise the
        spend by more than :data:`SPARES_CALLED_OUT`, else ''."""
        if self.up_to or not self.spares or not self.bare_nodes:
            return ""
        ratio = self.nodes / self.bare_nodes
        if ratio - 1 <= SPARES_CALLED_OUT:
            return ""
        raised = ({2: "doubles the spend", 3: "triples the spend"}.get(ratio)
                  or f"raises the spend by {formatting.number((ratio - 1) * 100, 3)} %")
        return (f"N+{formatting.number(self.spares)} {raised}: {count(self.active_gpus, 'GPU')} carry the "
                f"peak, {formatting.number(self.gpus)} are rented.")


def deployment_bill(e: Evaluation, row: int, strategy: demand.Strategy | None = None) -> Bill:
    """The bill of row ``row`` of the deployments, or of a ``strategy`` of buying it through the
    traffic profile (its cost; a fleet that scales, at its peak)."""
    def cell(column: str) -> float:
        return e.display(f"deployments.{column}")[row]

    bare = math.ceil(e.display("active_replicas") / max(cell("replicas_per_node"), 1)) * cell("nodes_per_replica")
    return Bill(strategy.name if strategy else str(cell("name")), cell("deployed_gpus"), cell("nodes"),
                strategy.monthly_cost if strategy else cell("monthly_cost"), e.display("months_per_year"),
                e.display("active_gpus"), e.display("redundancy_replicas"), bare,
                up_to=strategy is not None and strategy.kind != demand.FIXED)


def _candidate_bill(view: PlanView) -> Bill | None:
    """The bill of the candidate the ranking recommends (None when none is feasible)."""
    ranking = view.candidates.ranking
    w = ranking.winner
    if w is None:
        return None
    c = ranking.evaluated.candidates[w]

    def value(name: str) -> float:
        return float(ranking.value(name, w))

    if c.pooled:
        return _pools_bill(view, value, f"{c.offer.name} ({c.label}")
    bare = math.ceil(value("active_replicas") / max(value("deployments.replicas_per_node"), 1)) \
        * value("deployments.nodes_per_replica")
    return Bill(f"{c.offer.name} ({c.label})", value("deployments.deployed_gpus"), value("deployments.nodes"),
                value(MONTH), view.nominal.display("months_per_year"), value("active_gpus"),
                value("redundancy_replicas"), bare)


def _pools_bill(view: PlanView, value, name: str) -> Bill:
    """The bill of a winner ranked as prefill and decode pools, each pool named with its replicas (their
    GPUs and nodes are the sizing row's); the nodes the active replicas alone would take, pool by pool."""
    n = formatting.number
    per_node = value("deployments.prefill_node_gpus")
    prefill_gpus = value("prefill_gpus_per_replica")
    bare = (math.ceil(value("prefill_active_replicas") / max(math.floor(per_node / prefill_gpus), 1))
            * math.ceil(prefill_gpus / per_node)
            + math.ceil(value("decode_active_replicas") / max(value("deployments.replicas_per_node"), 1))
            * value("deployments.nodes_per_replica"))
    pools = (f": {n(value('prefill_resilient_replicas'))} prefill + {n(value('decode_resilient_replicas'))} "
             f"decode replicas)")
    return Bill(name + pools, value("deployments.deployed_gpus"), value("deployments.nodes"), value(MONTH),
                view.nominal.display("months_per_year"), value("active_gpus"), value("redundancy_replicas"), bare)


def _strategy_bill(e: Evaluation) -> Bill | None:
    """The bill of the strategy the demand curve recommends: its month's cost, the fleet at the peak."""
    best = demand.recommended(demand.strategies(e))
    if best is None:
        return None
    row = list(e.display("deployments.name")).index(best.deployment)
    return deployment_bill(e, row, best)


# -- weak evidence -------------------------------------------------------------------------------

def _pending(e: Evaluation, name: str) -> str | None:
    given = e.inputs.get(name)
    return "pending measurement" if given is not None and given.pending else None


def _flagged_tables(e: Evaluation, name: str) -> str | None:
    """The provisional tables (illustrative, one run per rate) a quantity is computed from."""
    table = e.model.quantities[name].table
    under = set(e.provenance.get(name, ())) | ({table} if table else set())
    flagged = [f"the {t} table is {data.status.summary}" for t, data in e.scenario.tables.items()
               if t in under and data.status is not None and data.status.flagged]
    return "; ".join(flagged) or None


def _transferred(e: Evaluation, name: str) -> str | None:
    """A sweep under the quantity that was measured on another deployment and scaled
    (``transferred:``; the importer says so in the table's note)."""
    under = set(e.provenance.get(name, ()))
    moved = [t for t, data in e.scenario.tables.items()
             if t in under and data.note and TRANSFERRED in data.note]
    return "; ".join(f"the {t} table is transferred from another deployment" for t in moved) or None


TRANSFERRED = "Transferred evidence:"      # how loading.sweeps.evidence opens its note on a transferred sweep

EVIDENCE: list[Callable[[Evaluation, str], str | None]] = [_pending, _flagged_tables, _transferred]
"""Checks of how weak the evidence under an input is: each takes the nominal
evaluation and the input's model name and says why, or None."""


def evidence(e: Evaluation, name: str) -> tuple[str, ...]:
    return tuple(w for check in EVIDENCE if (w := check(e, name)))


# -- the default options: the plan's deployment rows ----------------------------------------------

def deployment_options(view: PlanView) -> list[Option]:
    """One option per row of the key table (deployments), from the nominal key results
    and the scenarios in which each row's fleet breaks."""
    breaks = view.decision["fleet_breaks"]
    total = len(view.scenarios)
    out = []
    for row, keys in view.scenarios[0].rows().items():
        by = {k.quantity.rsplit(".", 1)[-1]: k for k in keys}
        role = {k.role: k for k in keys}
        failed = breaks.get(row, [])
        gpus, nodes, capacity = by.get("deployed_gpus"), role.get("size"), by.get("fleet_safe_capacity")
        fleet = f"{gpus.text} on {count(nodes.value, 'node')}" if gpus and nodes else ""
        ceiling = (f"breaks when traffic passes {capacity.text}"
                   if capacity and view.scenarios[0].name not in failed else "")
        out.append(Option(row, role["cost"].text if "cost" in role else "–",
                          formatting.money(by["cost_per_million_tokens"].value)
                          if "cost_per_million_tokens" in by else "–",
                          holds_across(len(failed), total, failed), "; ".join(filter(None, [fleet, ceiling]))))
    return out


def deployment_context(view: PlanView) -> list[dict]:
    """The deployment rows as the ``recommendation`` and ``ask`` sentences see them."""
    breaks = view.decision["fleet_breaks"]
    rows = []
    for row, keys in view.scenarios[0].rows().items():
        by = {k.quantity.rsplit(".", 1)[-1]: k for k in keys}
        failed = breaks.get(row, [])
        rows.append({"name": row, "breaks": failed, "viable": view.scenarios[0].name not in failed, **by})
    return rows


def _pick(rows: list[dict]) -> dict | None:
    """The deployment the first screen recommends: the cheapest whose fleet holds at the plan's own peak."""
    viable = [r for r in rows if r["viable"] and "monthly_cost" in r]
    return min(viable, key=lambda r: r["monthly_cost"].value) if viable else None


def _cheapest_bill(view: PlanView, rows: list[dict]) -> Bill | None:
    """The bill of the recommended deployment, else of the cheapest (what the plan sizes, though it breaks)."""
    priced = [r for r in rows if "monthly_cost" in r]
    pick = _pick(rows) or (min(priced, key=lambda r: r["monthly_cost"].value) if priced else None)
    return None if pick is None else deployment_bill(view.nominal, rows.index(pick))


# -- risks ----------------------------------------------------------------------------------------

def flip_risks(view: PlanView) -> tuple[list[Risk], list[Risk]]:
    """(near, far): each probed input's nearest flip as a risk; near when within
    ``holds.warn`` of today's value (or one step of a count away), far when it is
    not but its evidence is weak (it belongs in the folded list)."""
    e = view.nominal
    warn = holds_spec().get("warn", 0.25)
    near, far = [], []
    for h in view.holds.nominal:
        weak = evidence(e, h.variable.name)
        sides = [s for s in (h.below, h.above) if s.found]
        if not sides:
            if weak:
                spread = holds_spec()["spread"]
                far.append(Risk(h.name, f"(today {h.value_text(h.today)})",
                                f"no decision flips from ÷{spread} to ×{spread} of it", math.inf, weak))
            continue
        side = min(sides, key=lambda s: (s.margin is None, s.margin or 0))
        risk = Risk(h.name, _moved(h, side), "; ".join(h.changes(side)), side.margin, weak)
        if side.margin is None or side.margin <= warn:
            near.append(risk)
        elif weak:
            far.append(risk)
    return sorted(near, key=lambda r: r.order), sorted(far, key=lambda r: r.order)


def candidate_risks(view: PlanView) -> tuple[list[Risk], list[Risk], str]:
    """(near, far, reference) of a plan with ``candidates:``: the ranking's risks within ``holds.warn``
    of today's value (its swaps, the nearest overtaking flips, stale prices), the farther ones whose
    evidence is weak, and the date prices are aged against. The record's first screen and the
    workbook's Summary list the same near ones."""
    warn = holds_spec().get("warn", 0.25)
    _, reference = price_risks(view.nominal)
    ranked = view.candidates.risks(reference)
    near = [r for r in ranked if r.distance is None or r.distance <= warn]
    return near, [r for r in ranked if r not in near and r.evidence], view.candidates.reference(reference)


def _moved(h: InputHolds, side) -> str:
    """'5 % higher (above 63 req/s; today 60 req/s)'."""
    if side.margin is None:
        amount = h.margin(side)
    elif side.margin == 0:
        amount = "any " + ("lower" if side.direction == "below" else "higher")
    else:
        amount = f"{formatting.number(side.margin * 100, 3)} % {'lower' if side.direction == 'below' else 'higher'}"
    return f"{amount} ({h.where(side)}; today {h.value_text(h.today)})"


def odds(view: PlanView, below: float = 0.995) -> list[str]:
    """The decisions the simulation says may not hold, least likely first: 'active GPUs ≤ 9 GPUs: 61.1 %'."""
    sim = view.simulation
    if sim is None:
        return []
    shaky = sorted((d for d in sim.decisions if d.probability < below), key=lambda d: d.probability)
    return [f"{d.text}: {percent(d.probability)}" for d in shaky]


_ISO = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def plan_dates(e: Evaluation) -> list[dt.date]:
    """Every date the plan states: tables' and rows' ``as_of``, inputs' ``date:``, dates in sources."""
    texts = []
    for data in e.scenario.tables.values():
        texts += [data.as_of, data.source] + [m.get(k) for m in data.meta for k in ("as_of", "source")]
    for given in e.inputs.values():
        texts += [given.date, given.source]
    out = []
    for t in texts:
        for found in _ISO.findall(str(t or "")):
            try:
                out.append(dt.date.fromisoformat(found))
            except ValueError:
                pass
    return out


def price_risks(e: Evaluation) -> tuple[list[Risk], str]:
    """Prices older than ``holds.price_age`` days before the plan's newest date, and that date."""
    dates = plan_dates(e)
    if not dates:
        return [], ""
    newest = max(dates)
    limit = holds_spec()["price_age"]
    priced = holds_spec()["breakeven"]                  # the table of prices and its price column
    data = e.scenario.tables.get(priced["table"])
    out = []
    if data is None:
        return out, newest.isoformat()
    stamps = sorted({str(m.get("as_of") or data.as_of or "")[:10] for m in (data.meta or [{}])} - {""})
    for stamp in (s for s in stamps if _ISO.fullmatch(s)):
        age = (newest - dt.date.fromisoformat(stamp)).days
        if age > limit:
            out.append(Risk(priced["table"], f"prices ({priced['price']}) as of {stamp}",
                            f"{age} days older than the plan's newest date, {newest.isoformat()} "
                            f"(policy: {limit} days, as capplan check --max-price-age warns); re-check them",
                            0.0))
    return out, newest.isoformat()


# -- the screen -----------------------------------------------------------------------------------

def first_screen(view: PlanView, options: list[Option] | None = None, sentence: str | None = None,
                 ask: str | None = None) -> FirstScreen:
    """The first screen of ``view``'s record: ``options`` and ``sentence`` (and ``ask``)
    as given, else the plan's own answer to its question: the ranking of its
    ``candidates:``, else the strategies through its traffic profile, else its
    deployment rows and the layout's sentences about them."""
    more, bill = "", None
    if options is None and sentence is None:
        options, more, ask, bill = _analysis_options(view, ask)
        sentence = f"Rent {bill.name}: {bill.text}." if bill else (more or None)
        more = more if bill else ""
    rows = deployment_context(view)
    if rows and (sentence is None or ask is None):
        context = {**view.context, "options": rows, "pick": _pick(rows), "bill": _cheapest_bill(view, rows),
                   "scenarios": len(view.scenarios), "headline": view.headline}
        if sentence is None:
            bill = context["bill"]
            sentence = layout_sentence("recommendation", **context)
            more = layout_sentence("recommendation_more", **context)
        ask = layout_sentence("ask", **context) if ask is None else ask
    sentence = view.headline if sentence is None else sentence
    more = " ".join(filter(None, (more, _estimated(view))))

    warn = holds_spec().get("warn", 0.25)
    if view.candidates is not None:         # the plan's question is which candidate: its risks are the ranking's
        risks, far, reference = candidate_risks(view)
        chances = view.candidates.odds
    else:
        stale, reference = price_risks(view.nominal)
        near, far = flip_risks(view)
        risks, chances = stale + near, odds(view)
    return FirstScreen(sentence, ask or "", deployment_options(view) if options is None else options,
                       risks, chances, far, warn, reference, more, bill.redundancy if bill else "",
                       view.plan.decision, view.candidates.chain if view.candidates is not None else [],
                       view.candidates.change if view.candidates is not None else "")


def _estimated(view: PlanView) -> str:
    """Under ``sizing: estimate``, that no λ* is measured: a reviewer reads it with the decision,
    not only in the derivations ('' under any other sizing)."""
    e = view.nominal
    if not on_estimated_lambda(e, "instance_max_rate"):
        return ""
    return (f"λ* is estimated, not measured: the plan sizes from the model's throughput estimate for "
            f"{e.plan.engine.name} (±{100 * float(e.values['estimate_band']):.0f} % on the calibration points), with no load sweep yet.")


def _analysis_options(view: PlanView, ask: str | None) -> tuple:
    """The options, sentence, ask and bill of the analysis that answers the plan's question, or Nones."""
    ranking = view.candidates
    if ranking is not None:
        return ranking.options(), ranking.sentence, ask if ask is not None else ranking.ask, _candidate_bill(view)
    demand_options = view.demand_options
    if demand_options:
        return (demand_options, view.demand_sentence, ask if ask is not None else view.demand_ask,
                _strategy_bill(view.nominal))
    return None, None, ask, None
