"""The candidates' ranking as every output shows it: rows, the recommendation, what it rests on.

Built from the ranking artifact (:mod:`capplan.artifacts.ranking`); the record's
section (``templates/candidates.md.j2``), the JSON document and the record's
first screen (:meth:`CandidatesView.options`, :attr:`CandidatesView.sentence`)
read it. Every λ* shows its tag (measured, transferred, estimated, given) next
to the cost it leads to, and an estimated row's latencies are bounds, not
percentiles. For the top candidates whose λ* is not measured it writes the
benchmark that would measure it: a ``vllm bench serve`` run per rate around
the predicted knee, with the plan's class mix, and the ``import:`` line to
paste back.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from capplan import formatting
from capplan.artifacts import ranking as ranked
from capplan.artifacts import transfer
from capplan.artifacts.declared import holds_spec
from capplan.artifacts.ranking import Overtaken, Ranking
from capplan.language import units
from capplan.rendering.choices import Option, Risk, holds_across

SHOWN = 40                      # rows the record's table shows (the JSON has them all)
BENCHMARKED = 3                 # candidates a benchmark command is written for
KNEE_STEPS = (0.5, 0.75, 1.0, 1.25, 1.5)   # rates around the predicted knee, as shares of it
SECONDS_PER_RATE = 300          # each rate runs this long (prompts = rate × seconds): many E2E latencies
POOLS = ("prefill", "decode")   # a candidate ranked as pools: the model's prefix of each pool's quantities


@dataclass(frozen=True)
class Row:
    rank: str
    candidate: str
    offer: str
    tag: str
    lambda_star: str
    safe_rate: str
    replicas: str
    nodes: str
    monthly: str
    per_million: str
    per_million_compliant: str
    feasible: str

    def as_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Chain:
    """One candidate's sizing as a row a reviewer multiplies out by hand, each cell a step with its
    operands: λ* × ρ = λ_safe, ⌈peak / λ_safe⌉ = active, + spares = replicas, replicas × GPUs a
    replica = GPUs, nodes × $/h a node × hours = a month (the record once scattered them over the
    table, a bullet, §4 and a footnote)."""

    place: str                  # 'Winner', 'Runner-up'
    candidate: str              # 'h200-sxm-141gb TP2 bf16 on spheron-8x-h200-sxm'
    safe_rate: str              # 'λ* 10.9 req/s × ρ 0.7 = 7.63 req/s'
    replicas: str               # '⌈20 / 7.63⌉ = 3, + 1 = 4'
    gpus: str                   # '4 × 2 = 8': replicas × GPUs a replica
    monthly: str                # '1 × $36.32/h × 732 h = $26,586.24'


class CandidatesView:
    def __init__(self, ranking: Ranking, evaluations, overtaken: Callable[[], list[Overtaken]] = list):
        """``overtaken``: the flips of the inputs a serving choice turns on, computed when first read."""
        self.ranking = ranking
        self.evaluated = ranking.evaluated
        self.evaluations = evaluations
        self._overtaken = overtaken

    @property
    def sentence(self) -> str:
        return sentence(self.ranking)

    def options(self) -> list[Option]:
        return options(self.ranking)

    @property
    def ask(self) -> str:
        """What the reader approves: the winner, or first the benchmarks that would make the ranking decisive."""
        r = self.ranking
        if r.winner is None:
            return "Approve nothing yet: no candidate can serve the plan (see the reasons in the Candidates section)."
        winner = f"{option_name(r, r.winner)} at {formatting.money(r.value(ranked.MONTH, r.winner))} a month"
        if not r.needs_benchmark():
            return f"Approve {winner}."
        count = len(r.needs_benchmark())
        return (f"Approve the benchmark{'s' if count > 1 else ''} of {count} candidate{'s' if count > 1 else ''} "
                f"(What to measure next, in the Candidates section) before committing to {winner}: their λ* is "
                f"transferred or estimated, and its band reaches the winner's cost.")

    def _value(self, name, i, scenario=0):
        return self.ranking.value(name, i, scenario)

    @property
    def chain(self) -> list[Chain]:
        """The winner's and the runner-up's sizing chains, every figure the ranking's own."""
        r = self.ranking
        return [self._chain(place, i) for place, i in (("Winner", r.winner), ("Runner-up", r.runner_up))
                if i is not None]

    @property
    def change(self) -> str:
        """What the recommendation changes against the plan's own configuration (its cheapest
        deployment whose fleet holds), as ``capplan diff`` words a change: GPUs and monthly cost
        before → after, the difference and its share, and a year of it ('' with no winner or no
        such deployment)."""
        w, e = self.ranking.winner, self.evaluations[0]
        cost, holds = (np.asarray(e.values[n], dtype=float) for n in (ranked.MONTH, "deployments.fleet_holds"))
        held = [k for k in range(len(cost)) if holds[k]]
        if w is None or not held:
            return ""
        k = min(held, key=lambda k: cost[k])
        before, after = float(cost[k]), self._value(ranked.MONTH, w)
        gpus = float(np.asarray(e.values["deployments.deployed_gpus"], dtype=float)[k])
        name = e.scenario.tables["deployments"].rows[k]["name"]
        delta = after - before
        sign, money, n = "+" if delta >= 0 else "−", formatting.money, formatting.number
        share = f", {sign}{100 * abs(delta) / before:.1f} %" if before > 0 else ""
        return (f"({e.plan.gpu.id} TP{n(float(e.values['gpus_per_replica']))} on {name}): "
                f"{n(gpus)} → {n(self._value('deployments.deployed_gpus', w))} GPUs, {money(before)} → "
                f"{money(after)} a month ({sign}{money(abs(delta))}{share}), {sign}{money(abs(delta) * 12)} a year.")

    def _chain(self, place: str, i: int) -> Chain:
        c, v, n = self.evaluated.candidates[i], self._value, formatting.number
        if c.pooled:
            return self._pools_chain(place, i)
        safe = n(v("safe_rate_per_replica", i), 3)
        replicas = v("resilient_replicas", i)
        return Chain(place, f"{c.label} on {c.offer.name}",
                     f"λ* {n(v('instance_max_rate', i), 3)} req/s × ρ {n(v('rho_target', i))} = {safe} req/s",
                     f"⌈{n(v('peak_arrival_rate', i))} / {safe}⌉ = {n(v('active_replicas', i))}, "
                     f"+ {n(v('redundancy_replicas', i))} = {n(replicas)}",
                     f"{n(replicas)} × {n(v('gpus_per_replica', i))} = {n(v('resilient_gpus', i))}",
                     f"{n(v('deployments.nodes', i))} × {formatting.money(v('deployments.node_hourly_cost', i) * 3600)}/h"
                     f" × {n(v('hours_per_month', i) / 3600)} h = {formatting.money(v(ranked.MONTH, i))}")

    def _pools_chain(self, place: str, i: int) -> Chain:
        """The chain of a candidate ranked as prefill and decode pools: each pool's λ_safe (λ* × ρ × its
        rate-matching derate) and replicas, both pools' GPUs, and their nodes' month."""
        c, v, n = self.evaluated.candidates[i], self._value, formatting.number
        safe = {p: n(v("rho_target", i) * v(f"{p}_rate_derate", i) * v(f"{p}_max_rate", i), 3) for p in POOLS}
        gpus = {"prefill": v("prefill_gpus_per_replica", i), "decode": v("gpus_per_replica", i)}
        return Chain(place, f"{c.label} on {c.offer.name}",
                     "; ".join(f"{p} λ* {n(v(f'{p}_max_rate', i), 3)} req/s × ρ {n(v('rho_target', i))} × "
                               f"{n(v(f'{p}_rate_derate', i))} = {safe[p]} req/s" for p in POOLS),
                     "; ".join(f"{p} ⌈{n(v('peak_arrival_rate', i))} / {safe[p]}⌉ = {n(v(f'{p}_active_replicas', i))}, "
                               f"+ {n(v(f'{p}_redundancy_replicas', i))} = {n(v(f'{p}_resilient_replicas', i))}"
                               for p in POOLS),
                     " + ".join(f"{n(v(f'{p}_resilient_replicas', i))} × {n(gpus[p])}" for p in POOLS)
                     + f" = {n(v('resilient_gpus', i))}",
                     f"{self._pools_nodes(i)} × {n(v('hours_per_month', i) / 3600)} h = "
                     f"{formatting.money(v(ranked.MONTH, i))}")

    def _pools_nodes(self, i: int) -> str:
        """'(18 + 5) × $36.32/h', or '(2 × $98.32/h + 5 × $36.32/h)' where the prefill pool's nodes are priced
        apart (another GPU's offer)."""
        v, n, money = self._value, formatting.number, formatting.money
        prefill, decode = (v(f"deployments.{p}_nodes", i) for p in POOLS)
        price, own = (v(f"deployments.{c}", i) * 3600 for c in ("prefill_node_cost", "node_hourly_cost"))
        if price == own:
            return f"({n(prefill)} + {n(decode)}) × {money(own)}/h"
        return f"({n(prefill)} × {money(price)}/h + {n(decode)} × {money(own)}/h)"

    def _lambda(self, i: int) -> str:
        ev = self.evaluated
        text = lambda_text(self.ranking, i)
        return text + (f" ±{100 * ev.band[i]:.0f} %" if ev.band[i] else "")

    def row(self, i: int, rank: int | None) -> Row:
        ev, r = self.evaluated, self.ranking
        c = ev.candidates[i]
        money = formatting.money
        reason = ev.reasons[i]
        compliant = self._value("deployments.cost_per_million_compliant_tokens", i)
        return Row(str(rank) if rank else "–", c.label, c.offer.name, ev.tag_text(i), self._lambda(i),
                   f"{formatting.number(self._value('safe_rate_per_replica', i), 3)} req/s",
                   f"{self._value('active_replicas', i):g} + {self._value('redundancy_replicas', i):g}"
                   if not reason else "–",
                   f"{self._value('deployments.nodes', i):g}" if not reason else "–",
                   money(self._value(ranked.MONTH, i)) if not reason else "–",
                   money(self._value(ranked.PER_M, i) * 1e6) if not reason else "–",
                   money(compliant * 1e6) if compliant and not reason else "not measured",
                   "✓" if not reason else f"✗ {reason}")

    @cached_property
    def rows(self) -> list[Row]:
        feasible = set(self.ranking.feasible)
        out, rank = [], 0
        for i in self.ranking.order:
            rank += i in feasible
            out.append(self.row(i, rank if i in feasible else None))
        return out

    @property
    def shown_rows(self) -> list[Row]:
        return self.rows[:SHOWN]

    @property
    def more(self) -> int:
        return max(0, len(self.rows) - SHOWN)

    @property
    def stays(self) -> str:
        r = self.ranking
        if r.stays is None:
            return ""
        return (f"P(the winner stays the cheapest) = {100 * r.stays:.1f} % over {r.draws:,} draws of the "
                f"transferred and estimated λ* within their bands and of the plan's uncertain inputs")

    @property
    def same_source(self) -> list[str]:
        """Who would win had every λ* come from one provenance (the ranking's re-ranking), against today's winner."""
        r, ev = self.ranking, self.evaluated
        out = []
        for s in r.same_source:
            c = ev.candidates[s.winner]
            source = (f"were transferred from the {ev.tags[ev.reference]} {ev.candidates[ev.reference].label}"
                      if s.provenance == transfer.TRANSFERRED else f"came from the built-in estimate (for {ev.engine})")
            tail = ": today's winner too" if s.winner == r.winner else f", not {option_name(r, r.winner)}"
            out.append(f"If every λ* {source}, the cheapest would be {c.label} on {c.offer.name} "
                       f"({formatting.money(s.monthly)} a month){tail}")
        return out

    @property
    def rests_on(self) -> list[str]:
        """What the recommendation rests on: each of the top two's λ* and its basis, and the plan's inputs."""
        ev, r = self.evaluated, self.ranking
        out = []
        for label, i in (("winner", r.winner), ("runner-up", r.runner_up)):
            if i is None:
                continue
            c = ev.candidates[i]
            text = f"{label} {c.label}: {ev.tag_text(i)} λ* {self._lambda(i)} — {ev.basis[i]}; offer {c.offer.name} at " \
                   f"{formatting.money(c.offer.node_hourly_cost * 3600)}/h"
            text += f" (as of {c.offer.as_of})" if c.offer.as_of else ""
            text += f", {c.offer.source}" if c.offer.source else ""
            if ev.tags[i] == transfer.ESTIMATED and ev.from_file(i) is None:
                text += "; its latencies are predicted means, not percentiles"
            out.append(text)
        return out

    @property
    def evidence(self) -> list[str]:
        """Where each λ* that is not a transfer comes from: the plan's sweep, and each evidence file with its
        SHA-256, the configuration it ran on and the candidates it gives a λ* (one line each)."""
        ev = self.evaluated
        items = {}
        for i in range(len(ev.candidates)):
            item = ev.from_file(i)
            if item is not None:
                items.setdefault(item.index, (item, []))[1].append(i)
        if not items:
            return []
        out = []
        tools = sorted({item.tool for item, _ in items.values() if item.tool})
        if tools:
            out.append(f"Estimate files: predictions of {formatting.and_list(tools)}, written by `capplan estimate`")
        if ev.reference is not None:
            out.append(f"{ev.candidates[ev.reference].label}: measured, {ev.basis[ev.reference]}")
        for item, members in (items[k] for k in sorted(items)):
            files = ", ".join(f"{f.path} (SHA-256 {f.sha256})" for f in item.files)
            lam = formatting.number(self._value("instance_max_rate", members[0]), 3)
            out.append(f"{', '.join(sorted({ev.candidates[i].label for i in members}))}: {item.tag}, λ* {lam} req/s at "
                       f"the plan's SLOs — {files}" + (f". {item.note}" if item.note else ""))
        return out

    @property
    def comparison(self) -> list[dict]:
        """For each candidate with a λ* from a performance model's estimate file, the λ* a transfer from the
        measured candidate would give, and the factor between them (the error band the issue asks stated)."""
        ev = self.evaluated
        if ev.transferred is None:
            return []
        out = []
        for i in range(len(ev.candidates)):
            item = ev.from_file(i)
            est, moved = self._value("instance_max_rate", i), float(ev.transferred[i])
            if item is None or item.kind != transfer.ESTIMATED or not moved > 0 or ev.candidates[i].label in {
                    row["candidate"] for row in out}:
                continue
            out.append({"candidate": ev.candidates[i].label, "estimated": formatting.number(est, 3),
                        "transferred": formatting.number(moved, 3), "factor": est / moved, "band": float(ev.band[i])})
        return out

    @property
    def comparison_summary(self) -> str:
        rows = self.comparison
        if not rows:
            return ""
        factors = sorted(r["factor"] for r in rows)
        mid = factors[len(factors) // 2] if len(factors) % 2 else (factors[len(factors) // 2 - 1]
                                                                  + factors[len(factors) // 2]) / 2
        ref = self.evaluated.candidates[self.evaluated.reference].label
        in_tool = sum(within_band(1 / r["factor"], r["band"]) for r in rows)
        bands = " or ".join(f"±{100 * b:.0f} %" for b in sorted({r["band"] for r in rows}))
        in_transfer = sum(within_band(r["factor"], transfer.TRANSFER_BAND) for r in rows)
        return (f"Over the {len(rows)} configurations with both, the estimate files' λ* is {factors[0]:.2f} to "
                f"{factors[-1]:.2f} times (median {mid:.2f}) the λ* transferred from the measured {ref}. The transfer "
                f"lies inside the tool's band ({bands} of its prediction) for "
                f"{in_tool} of {len(rows)}, the tool's λ* inside the transfer's (±{100 * transfer.TRANSFER_BAND:.0f} %) "
                f"for {in_transfer}: until one of them is benchmarked, the error of either is this wide.")

    @property
    def flips(self) -> list[str]:
        r, ev = self.ranking, self.evaluated
        f = r.flips
        if f is None:
            return []
        w, u = ev.candidates[r.winner], ev.candidates[r.runner_up]
        money = formatting.money
        out = [] if f.runner_price is None else [
            f"{u.label} on {u.offer.name} wins below {money(f.runner_price * 3600)}/h a node "
            f"(today {money(u.offer.node_hourly_cost * 3600)}/h)",
            f"{w.label} on {w.offer.name} loses above {money(f.winner_price * 3600)}/h a node "
            f"(today {money(w.offer.node_hourly_cost * 3600)}/h)"]
        today = formatting.number(self._value("peak_arrival_rate", r.winner), 4)
        for flip, where in ((f.peak_above, "above {at} and up to {until} req/s"),
                            (f.peak_below, "from {until} to {at} req/s")):
            if flip is not None:
                c = ev.candidates[flip.by]
                out.append(f"{c.label} on {c.offer.name} is the cheapest for a peak "
                           + where.format(at=formatting.number(flip.at, 4), until=formatting.number(flip.until, 4))
                           + f" (today {today} req/s, every λ* as today)")
        if f.runner_lambda is not None:
            out.append(f"{u.label} wins at a λ* of {formatting.number(f.runner_lambda, 3)} req/s or more "
                       f"(today {self._lambda(r.runner_up)}, {ev.tag_text(r.runner_up)})")
        if f.runner_rho is not None:
            out.append(f"{u.label} wins at ρ {formatting.number(f.runner_rho, 3)} or more at today's λ* "
                       f"(today {formatting.number(self._value('rho_target', r.runner_up), 3)})")
        return out

    @cached_property
    def overtaken(self) -> list[str]:
        """Where another candidate overtakes the recommendation as the prompt, the peak or a prefix hit
        rate moves, nearest first on each side (:mod:`capplan.analysis.overtaking`), in words."""
        return [self._overtaken_text(o) for o in self._overtaken()]

    def _overtaken_text(self, o: Overtaken) -> str:
        ev, e = self.evaluated, self.evaluations[0]
        q = e.model.quantities[o.variable]
        scale = units.factor(q.unit)
        n = lambda x: formatting.number(x / scale, 4)  # noqa: E731 (the variable in its display unit)
        up = o.at > o.today
        where = (("from {at} up to {until}" if o.closed else "above {at} and up to {until}") if up else
                 ("at {at} or below, down to {until}" if o.closed else "below {at}, down to {until}"))
        where = where.format(at=n(o.at), until=n(o.until))
        cls = None if o.index is None else e.display("classes.name")[o.index]
        if o.variable == "peak_arrival_rate":
            what = f"a peak {where} req/s (today {n(o.today)} req/s)"
        elif q.column == "prompt_tokens":
            out = e.display("classes.output_tokens")[o.index]
            ratio = lambda x: formatting.number(x / scale / out, 3)  # noqa: E731
            what = (f"class {cls}'s prompts {where} tokens ({ratio(o.at)}:1 to {ratio(o.until)}:1 input to output at "
                    f"its {formatting.number(out)} output tokens; today {n(o.today)} tokens, {ratio(o.today)}:1)")
        else:
            what = f"class {cls}'s {q.column.replace('_', ' ')} {where} (today {n(o.today)})"
        return f"For {what}, {self._cheaper(o)}: {_costs(o)}"

    def _cheaper(self, o: Overtaken) -> str:
        """'h200 TP4, aggregated on spheron costs less than h200 TP4, disaggregated on spheron' (the
        topology said where the two differ in it)."""
        by, rival = self.evaluated.candidates[o.by], self.evaluated.candidates[o.rival]
        kinds = by.pooled != rival.pooled
        name = lambda c: f"{c.label}{', aggregated' if kinds and not c.pooled else ''} on {c.offer.name}"  # noqa: E731
        return f"{name(by)} costs less than {name(rival)}"

    def _input(self, o: Overtaken) -> str:
        """The flip's input as the JSON and the risks name it: 'peak_arrival_rate', 'classes[rag].prompt_tokens'."""
        e = self.evaluations[0]
        q = e.model.quantities[o.variable]
        return o.variable if o.index is None else f"{q.table}[{e.display(f'{q.table}.name')[o.index]}].{q.column}"

    def _overtaken_risks(self) -> list[Risk]:
        """Each input's nearest overtaking flip (:attr:`overtaken`) as a risk, as far as the input moves to it."""
        nearest: dict[tuple, Overtaken] = {}
        for o in self._overtaken():
            held = nearest.get((o.variable, o.index))
            if o.today and (held is None or abs(o.at / o.today - 1) < abs(held.at / held.today - 1)):
                nearest[(o.variable, o.index)] = o
        return [self._overtaken_risk(o) for o in nearest.values()]

    def _overtaken_risk(self, o: Overtaken) -> Risk:
        """'2.78 % higher (0.5139; today 0.5)': h100 TP2 on p5 costs less than h200 TP1 on p5e up to 0.6684 (…)."""
        q = self.evaluations[0].model.quantities[o.variable]
        unit = f" {q.unit}" if q.unit else ""
        n = lambda x: formatting.number(x / units.factor(q.unit), 4) + unit  # noqa: E731 (in the display unit)
        up, moved = o.at > o.today, abs(o.at / o.today - 1)
        return Risk(self._input(o), f"{_percent(moved)} {'higher' if up else 'lower'} ({n(o.at)}; today {n(o.today)})",
                    f"{self._cheaper(o)} {'up' if up else 'down'} to {n(o.until)} ({_costs(o)})", moved)

    def risks(self, reference: str) -> list[Risk]:
        """What swaps #1 and #2, as the first screen ranks risks (distance: the relative move of
        the input that swaps them), each input's nearest flip where another candidate overtakes the
        winner (the peak, a prompt, a prefix hit rate), and offers priced long before ``reference``
        (the plan's newest date, ISO; the policy is the layout's ``holds.price_age``)."""
        r, ev = self.ranking, self.evaluated
        f, money, number = r.flips, formatting.money, formatting.number
        out = []
        if f is not None:
            w, u = ev.candidates[r.winner], ev.candidates[r.runner_up]
            swap = f"{u.label} on {u.offer.name} becomes the cheapest"
            weak = tuple(f"{w.label}'s λ* is {ev.tag_text(r.winner)}" + (f" ±{100 * ev.band[r.winner]:.0f} %"
                                                                    if ev.band[r.winner] else "")
                         for _ in (0,) if ev.tags[r.winner] != transfer.MEASURED)
            for label, today, at, lower in (
                    (f"{u.offer.name} price", u.offer.node_hourly_cost, f.runner_price, True),
                    (f"{w.offer.name} price", w.offer.node_hourly_cost, f.winner_price, False)):
                if at is not None and today > 0:
                    out.append(Risk(label, f"{_percent(abs(at / today - 1))} {'lower' if lower else 'higher'} "
                                           f"({'below' if lower else 'above'} {money(at * 3600)}/h a node; today "
                                           f"{money(today * 3600)}/h)", swap, abs(at / today - 1), weak))
            runner_lambda = self._value("instance_max_rate", r.runner_up)
            if f.runner_lambda is not None and runner_lambda > 0:
                moved = f.runner_lambda / runner_lambda - 1
                out.append(Risk(f"{u.label} λ*", f"{_percent(moved)} higher (from {number(f.runner_lambda, 3)} "
                                                 f"req/s; today {self._lambda(r.runner_up)}, {ev.tag_text(r.runner_up)})",
                                swap, moved, weak))
            peak = self._value("peak_arrival_rate", r.winner)
            for flip, word in ((f.peak_above, "higher"), (f.peak_below, "lower")):
                if flip is not None and peak > 0:
                    c = ev.candidates[flip.by]
                    out.append(Risk("peak_arrival_rate", f"{_percent(abs(flip.at / peak - 1))} {word} ({number(flip.at, 4)} "
                                                         f"req/s; today {number(peak, 4)} req/s)",
                                    f"{c.label} on {c.offer.name} becomes the cheapest, up to "
                                    f"{number(flip.until, 4)} req/s", abs(flip.at / peak - 1)))
        return sorted(out + self._overtaken_risks() + self._stale(self.reference(reference)),
                      key=lambda risk: risk.order)

    def reference(self, plan_newest: str) -> str:
        """The date prices are aged against: the plan's newest date or a newer offer's as_of."""
        dates = [plan_newest] + [str(c.offer.as_of)[:10] for c in self.evaluated.candidates if c.offer.as_of]
        return max((d for d in dates if d), default="")

    def _stale(self, reference: str) -> list[Risk]:
        """Offers of a ranked candidate priced more than the policy's days before ``reference``, each
        as far from this decision as its cheapest candidate is dearer than the winner: a stale price
        of the winner's offer moves it at once, one of an offer whose best candidate costs three
        times as much does not (it is listed with the evidence farther from a flip)."""
        if not reference:
            return []
        limit = holds_spec()["price_age"]
        newest = dt.date.fromisoformat(reference)
        r = self.ranking
        best: dict = {}
        for i in r.feasible:                     # cheapest first: the first candidate of each offer
            best.setdefault(self.evaluated.candidates[i].offer, i)
        out = []
        for offer, i in sorted(best.items(), key=lambda item: item[0].name):
            age = (newest - dt.date.fromisoformat(str(offer.as_of)[:10])).days if offer.as_of else 0
            if age <= limit:
                continue
            gap = 0.0 if i == r.winner else r.dearer(i)
            far = () if not gap else (f"its cheapest candidate, {self.evaluated.candidates[i].label}, costs "
                                      f"{_percent(gap)} more a month than the winner",)
            out.append(Risk(offer.name, f"price as of {str(offer.as_of)[:10]}",
                            f"{age} days older than the plan's newest date, {reference} (policy: {limit} "
                            f"days); re-check it", gap or 0.0, far))
        return out

    @property
    def odds(self) -> list[str]:
        """P(the winner stays the cheapest), as the first screen lists a decision's odds."""
        r = self.ranking
        if r.stays is None or r.winner is None:
            return []
        return [f"{self.evaluated.candidates[r.winner].label} stays the cheapest: {_percent(r.stays)} "
                f"of {r.draws:,} draws"]

    @property
    def near_misses(self) -> list[str]:
        """The next candidates with the price that would make each the winner, and the infeasible
        ones nearest to the plan (the first few) with their reasons."""
        r, ev = self.ranking, self.evaluated
        if r.winner is None:
            return []
        cost_w = r.value(ranked.MONTH, r.winner)
        out = []
        for i in r.feasible[2:5]:
            c = ev.candidates[i]
            price = cost_w / (r.value("deployments.nodes", i) * r.value("hours_per_month", i))
            wins = f"wins below {formatting.money(price * 3600)}/h a node" if price > 0 else "no price wins: the winner is free"
            out.append(f"{c.label} on {c.offer.name}: {dearer(r, i)}; {wins}")
        infeasible = [i for i in r.order if ev.reasons[i]][:3]
        out += [f"{ev.candidates[i].label} on {ev.candidates[i].offer.name}: {ev.reasons[i]}{self._would_take(i)}"
                for i in infeasible]
        return out

    def _would_take(self, i: int) -> str:
        """What would make an infeasible candidate feasible: the smallest TP of the same GPU, formats
        and offer that is ('' when none of the candidates is)."""
        ev, c = self.evaluated, self.evaluated.candidates[i]
        larger = [j for j in self.ranking.feasible if ev.candidates[j].keys | {"tp": c.tp} == c.keys
                  and ev.candidates[j].tp > c.tp]
        if not larger:
            return ""
        j = min(larger, key=lambda k: ev.candidates[k].tp)
        return f"; TP{ev.candidates[j].tp} fits (rank {self.ranking.feasible.index(j) + 1})"

    @property
    def undecided(self) -> str:
        """Which candidates a benchmark would make the ranking decisive for, in words ('' for none)."""
        ev = self.evaluated
        names = [f"{ev.candidates[i].label} on {ev.candidates[i].offer.name} ({ev.tag_text(i)})"
                 for i in self.ranking.needs_benchmark()]
        if not names:
            return ""
        return (f"The ranking is not decisive until these are measured (each λ*'s band reaches the winner's "
                f"cost, or the runner-up's for the winner): {'; '.join(names)}.")

    @property
    def scenario_winners(self) -> list[str]:
        ev = self.evaluated
        return [f"{s}: {ev.candidates[i].label} on {ev.candidates[i].offer.name}" if i is not None else f"{s}: none"
                for s, i in zip(ev.scenarios, self.ranking.scenario_winners)]

    @property
    def benchmarks(self) -> list[dict]:
        """The benchmark that would make each top transferred or estimated candidate measured."""
        r, ev = self.ranking, self.evaluated
        want = [i for i in r.needs_benchmark()] or [i for i in r.feasible[:2] if ev.tags[i] in
                                                    (transfer.TRANSFERRED, transfer.ESTIMATED)]
        return [self._benchmark(i) for i in want[:BENCHMARKED]]

    def _benchmark(self, i: int) -> dict:
        ev = self.evaluated
        c = ev.candidates[i]
        e = self.evaluations[0]
        entry = e.plan.model_entry
        checkpoint = (entry.weights.get(c.weights, {}).get("checkpoint") if c.weights else None) or entry.hf_id \
            or entry.id
        knee = self._value("instance_max_rate", i)
        rates = sorted({_round_rate(knee * k) for k in KNEE_STEPS})
        prompt = round(float(e.values["avg_prompt_tokens"]))
        output = round(float(e.values["avg_output_tokens"]))
        slos = ",".join(f"{s.metric if s.metric != 'e2e' else 'e2el'}:{_ms(float(e.values[s.limit]))}"
                        for s in e.model.slos if s.metric in ("ttft", "tpot", "e2e"))
        ep = f"-ep{c.ep}" if (c.ep or 1) > 1 else ""
        folder = f"sweeps/{c.gpu.id}-tp{c.tp}{ep}" + (f"-{c.weights}" if c.weights else "")
        kv = f" --kv-cache-dtype {c.kv_cache_dtype}" if c.kv_cache_dtype != "auto" else ""
        experts = f" --data-parallel-size {c.ep} --enable-expert-parallel" if ep else ""
        serve = f"vllm serve {checkpoint} --tensor-parallel-size {c.tp}{experts}{kv}"
        bench = "\n".join(
            f"vllm bench serve --model {checkpoint} --dataset-name random --random-input-len {prompt} "
            f"--random-output-len {output} --request-rate {rate:g} --num-prompts {max(200, round(rate * SECONDS_PER_RATE))} "
            f"--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95,99 --goodput {slos} "
            f"--save-result --result-dir {folder} --result-filename qps_{rate:g}.json" for rate in rates)
        return {"candidate": c.label, "offer": c.offer.name, "tag": ev.tag_text(i), "predicted_knee": self._lambda(i),
                "serve": serve, "bench": bench,
                "import": f"load_sweep: {{import: [{folder}/qps_*.json]}}   # in a plan with gpu: {c.gpu.id}, "
                          f"gpus_per_replica: {c.gpus}" + (f", expert_parallel_size: {c.ep}" if ep else ""),
                "mix": f"the plan's class mix as its weighted means: {prompt} prompt and {output} output tokens"}

    def as_json(self) -> dict:
        ev, r = self.evaluated, self.ranking
        money = lambda x: round(float(x), 2)  # noqa: E731 (USD)
        cands = []
        for i, c in enumerate(ev.candidates):
            cands.append({
                "candidate": c.label, "keys": c.keys, "offer": {
                    "name": c.offer.name, "gpus_per_node": c.offer.gpus_per_node,
                    "node_hourly_cost": money(c.offer.node_hourly_cost * 3600), "as_of": c.offer.as_of,
                    "source": c.offer.source},
                "lambda_star": {"tag": ev.tags[i], "shown": ev.tag_text(i), "basis": ev.basis[i],
                                "band": float(ev.band[i]), "evidence": _evidence_json(ev.from_file(i)),
                                "transferred": _num(ev.transferred[i]) if ev.transferred is not None else None},
                "feasible": not ev.reasons[i], "reason": ev.reasons[i] or None,
                "scenarios": None if ev.reasons[i] else {s: {"lambda_star": _num(r.value("instance_max_rate", i, j)),
                                  "safe_rate_per_replica": _num(r.value("safe_rate_per_replica", i, j)),
                                  "active_replicas": _num(r.value("active_replicas", i, j)),
                                  "resilient_replicas": _num(r.value("resilient_replicas", i, j)),
                                  "nodes": _num(r.value("deployments.nodes", i, j)),
                                  "monthly_cost": _num(r.value(ranked.MONTH, i, j), 2),
                                  "cost_per_million_tokens": _num(r.value(ranked.PER_M, i, j) * 1e6, 4)}
                              for j, s in enumerate(ev.scenarios)}})
        f = r.flips
        return {"candidates": cands,
                "ranking": [ev.candidates[i].name for i in r.feasible],
                "winner": ev.candidates[r.winner].name if r.winner is not None else None,
                "runner_up": ev.candidates[r.runner_up].name if r.runner_up is not None else None,
                "gap": _num(r.gap, 6) if r.gap is not None else None,
                "flips": None if f is None else {
                    "runner_up_price_below": _num(f.runner_price * 3600, 4) if f.runner_price else None,
                    "winner_price_above": _num(f.winner_price * 3600, 4) if f.winner_price else None,
                    "runner_up_lambda_star_at_least": _num(f.runner_lambda, 6) if f.runner_lambda else None,
                    "cheapest_above_peak": _peak_json(f.peak_above, ev),
                    "cheapest_at_or_below_peak": _peak_json(f.peak_below, ev)},
                "overtaken": [self._overtaken_json(o) for o in self._overtaken()],
                "p_winner_stays": r.stays, "draws": r.draws, "recommendation": self.sentence,
                "if_every_lambda_from": [{"provenance": s.provenance, "winner": ev.candidates[s.winner].name,
                                          "monthly_cost": _num(s.monthly, 2)} for s in r.same_source],
                "unpriced_gpus": list(ev.unpriced)}


    def _overtaken_json(self, o: Overtaken) -> dict:
        """One flip of :attr:`overtaken` for the JSON, the input in its display unit."""
        e, ev = self.evaluations[0], self.evaluated
        q = e.model.quantities[o.variable]
        scale = units.factor(q.unit)
        return {"input": self._input(o), "unit": q.unit, "today": _num(o.today / scale), "at": _num(o.at / scale),
                "until": _num(o.until / scale),
                "at_included": o.closed, "candidate": ev.candidates[o.by].name, "monthly_cost": _num(o.cost, 2),
                "against": ev.candidates[o.rival].name, "against_monthly_cost": _num(o.rival_cost, 2)}


def _costs(o: Overtaken) -> str:
    """'$87,840.00 against $109,800.00 a month': the cheaper one's cost and its rival's just past the flip."""
    money = formatting.money
    return f"{money(o.cost)} against " + (f"{money(o.rival_cost)} a month" if math.isfinite(o.rival_cost)
                                          else "a fleet that cannot serve there")


def _peak_json(flip, ev) -> dict | None:
    """A peak flip for the JSON: the peak, how far the new cheapest stays so, and which candidate."""
    return None if flip is None else {"peak": _num(flip.at), "until": _num(flip.until),
                                      "candidate": ev.candidates[flip.by].name}


def _evidence_json(item) -> dict | None:
    if item is None:
        return None
    return {"kind": item.kind, "tool": item.tool or None, "gpu": item.gpu, "tp": item.tp, "weights": item.weights,
            "kv_bytes_per_element": item.kv_bytes, "source": item.source, "note": item.note or None,
            "files": [{"path": f.path, "sha256": f.sha256, "format": f.format} for f in item.files]}


def _percent(share: float) -> str:
    return f"{formatting.number(100 * share, 3)} %"


def _num(x, digits: int = 6):
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def _round_rate(x: float) -> float:
    """A rate to sweep: two significant digits."""
    return float(f"{x:.2g}") if x > 0 else 0.1


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g}"


def lambda_text(ranking: Ranking, i: int) -> str:
    """'1.75 req/s', or 'prefill 0.634 / decode 3.29 req/s': the rates of a candidate ranked as pools."""
    n = formatting.number
    if ranking.evaluated.candidates[i].pooled:
        return " / ".join(f"{p} {n(ranking.value(f'{p}_max_rate', i), 3)}" for p in POOLS) + " req/s"
    return f"{n(ranking.value('instance_max_rate', i), 3)} req/s"


def option_name(ranking: Ranking, i: int) -> str:
    """A candidate as the outputs name it: '2 × aws-p4de.24xlarge (a100 TP8 bf16)'."""
    c = ranking.evaluated.candidates[i]
    nodes = ranking.value("deployments.nodes", i)
    return f"{nodes:g} × {c.offer.name} ({c.label})"


def build(ranking: Ranking | None, evaluations,
          overtaken: Callable[[], list[Overtaken]] = list) -> CandidatesView | None:
    return CandidatesView(ranking, evaluations, overtaken) if ranking is not None else None


def dearer(ranking: Ranking, i: int, money=formatting.money) -> str:
    """'+25.0 %': what candidate ``i`` costs more than the winner; '+$73,200.00 a month' when the
    winner is free (:meth:`Ranking.dearer`)."""
    share = ranking.dearer(i)
    if share is not None:
        return f"+{100 * share:.1f} %"
    return f"+{money(ranking.value(ranked.MONTH, i))} a month"


def sentence(ranking: Ranking, money=formatting.money) -> str:
    """'Recommended: 2 × p5en (H200 TP1), $x a month; runner-up … at +y % — swaps if …'."""
    w, r = ranking.winner, ranking.runner_up
    if w is None:
        return "No candidate can serve the plan: every one is infeasible (see the reasons)."
    ev = ranking.evaluated
    text = (f"Recommended: {option_name(ranking, w)}, {money(ranking.value(ranked.MONTH, w))} a month "
            f"({ev.tag_text(w)} λ*)")
    if r is None:
        return text + "; no other candidate is feasible."
    c = ev.candidates[r]
    if ranking.value(ranked.MONTH, r) == ranking.value(ranked.MONTH, w):
        text += (f"; runner-up {c.label} on {c.offer.name} ({ev.tag_text(r)} λ*) ties on cost, behind it by the "
                 f"ranking's order ($ per 1M output tokens, then GPUs rented, then name)")
    else:
        text += f"; runner-up {c.label} on {c.offer.name} at {dearer(ranking, r, money)} ({ev.tag_text(r)} λ*)"
    tied = [ev.candidates[i].label for i in ranking.feasible[2:]
            if ranking.value(ranked.MONTH, i) == ranking.value(ranked.MONTH, r)]
    if tied:
        text += (f", tied on cost with {formatting.and_list(tied)}, ahead of {'it' if len(tied) == 1 else 'them'} "
                 f"by the ranking's order ($ per 1M output tokens, then GPUs rented, then name)")
    f = ranking.flips
    swaps = [f"its price falls below {money(f.runner_price * 3600)}/h"] if f.runner_price else []
    if f.runner_lambda is not None:
        kind = "measured " if ev.tags[r] != transfer.MEASURED else ""
        swaps.append(f"its {kind}λ* reaches {formatting.number(f.runner_lambda, 3)} req/s")
    return text + (f" — swaps if {' or if '.join(swaps)}." if swaps else ".")


def options(ranking: Ranking, money=formatting.money, count: int = 3) -> list[Option]:
    """The first ``count`` feasible candidates as options for the record's first screen."""
    ev = ranking.evaluated
    out = []
    for i in ranking.feasible[:count]:
        failing = [s for j, s in enumerate(ev.scenarios) if not ranking.value("deployments.fleet_holds", i, j)]
        holds = holds_across(len(failing), len(ev.scenarios))
        note = f"{ev.tag_text(i)} λ* {lambda_text(ranking, i)}"
        if ev.band[i]:
            note += f" ±{100 * ev.band[i]:.0f} %"
        if failing:
            note += f", breaks in {', '.join(failing)}"      # as the deployments' rows say it
        out.append(Option(option_name(ranking, i), money(ranking.value(ranked.MONTH, i)),
                          money(ranking.value(ranked.PER_M, i) * 1e6), holds, note))
    return out


def within_band(ratio: float, band: float) -> bool:
    """Whether a value ``ratio`` times another lies inside the other's ± ``band``: both sides."""
    return 1 - band <= ratio <= 1 + band
