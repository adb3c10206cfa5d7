"""The record's first screen: the decision, what it costs, what it asks, what can break it.

A reviewer reads one screen. It holds one sentence with the recommendation
(with one option, its verdict) and its cost, the ask (what the reader
approves), a short table of the options (:class:`Option`: monthly cost,
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
from capplan.analysis.declared import holds_spec
from capplan.engine.evaluate import Evaluation
from capplan.rendering.choices import Option, Risk, holds_across
from capplan.rendering.simulation import percent
from capplan.rendering.view import PlanView, sentence as layout_sentence

if TYPE_CHECKING:
    from capplan.rendering.holds import InputHolds


@dataclass
class FirstScreen:
    sentence: str
    ask: str
    options: list[Option]
    risks: list[Risk]
    odds: list[str] = field(default_factory=list)     # 'active GPUs ≤ 9 GPUs: 61.1 %'
    farther: list[Risk] = field(default_factory=list)  # weak evidence no decision is near
    warn: float = 0.25
    reference: str = ""                               # the date prices are aged against


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
        holds = holds_across(len(failed), total)
        size = f"{role['size'].text} node{'s' if role['size'].value != 1 else ''}" if "size" in role else ""
        gpus = by.get("deployed_gpus")
        note = ", ".join(filter(None, [size + (f" ({gpus.text})" if gpus else ""),
                                       f"breaks in {', '.join(failed)}" if failed else ""]))
        out.append(Option(row, role["cost"].text if "cost" in role else "–",
                          formatting.money(by["cost_per_million_tokens"].value)
                          if "cost_per_million_tokens" in by else "–",
                          holds, note))
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
    if options is None and sentence is None:
        options, sentence, ask = _analysis_options(view, ask)
    rows = deployment_context(view)
    context = {**view.context, "options": rows, "scenarios": len(view.scenarios),
               "headline": view.headline}
    if sentence is None:
        sentence = layout_sentence("recommendation", **context) if rows else view.headline
    if ask is None:
        ask = layout_sentence("ask", **context) if rows else ""

    stale, reference = price_risks(view.nominal)
    warn = holds_spec().get("warn", 0.25)
    if view.candidates is not None:         # the plan's question is which candidate: its risks are the ranking's
        ranked = view.candidates.risks(reference)
        risks = [r for r in ranked if r.distance is None or r.distance <= warn]
        far = [r for r in ranked if r not in risks and r.evidence]
        chances, reference = view.candidates.odds, view.candidates.reference(reference)
    else:
        near, far = flip_risks(view)
        risks, chances = stale + near, odds(view)
    return FirstScreen(sentence, ask, deployment_options(view) if options is None else options,
                       risks, chances, far, warn, reference)


def _analysis_options(view: PlanView, ask: str | None) -> tuple[list[Option] | None, str | None, str | None]:
    """The options, sentence and ask of the analysis that answers the plan's question, or Nones."""
    ranking = view.candidates
    if ranking is not None:
        return ranking.options(), ranking.sentence, ask if ask is not None else ranking.ask
    demand_options = view.demand_options
    if demand_options:
        return demand_options, view.demand_sentence, ask if ask is not None else view.demand_ask
    return None, None, ask
