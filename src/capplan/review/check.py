"""What ``capplan check`` reports about a plan, kept in a form the manifest can hold.

``check`` must not re-evaluate a plan whose inputs did not change, yet it
must still fail on an ``expect:`` that does not hold and warn about pending
measurements, placeholders, prefix hit rates its routing cannot achieve, old prices and free ones.
So these *findings* are computed once, when a
build evaluates the plan, and recorded in ``out/manifest.json``; ``check``
reads them back. Only a price's age depends on the day ``check`` runs, so
prices are kept as their dates and aged by :func:`warnings`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex

from capplan.errors import CapplanError


PLACEHOLDER = re.compile(r"\s*TODO\b")     # a text that starts with the word TODO (capplan init writes them)
SHOWN_CHARS = 80                            # of a placeholder's text, in its warning


def findings(evaluations) -> dict:
    """Failed expectations, pending measurements, placeholders, the decision fields left
    unstated and price dates of a plan (JSON-ready), and the age past which a price is old: the layout's ``holds.price_age``,
    which also puts a price among the record's risks (recorded here, so ``check`` ages
    prices without loading the layout's analyses)."""
    from capplan.artifacts.declared import holds_spec     # deferred: the analyses import sympy; check reads these back

    return {"failed_expectations": expectation_failures(evaluations),
            "pending": pending_warnings(evaluations),
            "placeholders": placeholders(evaluations[0].plan),
            "decision": unstated_decision(evaluations[0].plan),
            "routing": routing_warnings(evaluations),
            "prices": price_dates(evaluations[0]),
            "price_age": holds_spec()["price_age"]}


def warnings(found: dict, today: dt.date, max_age: int | None = None) -> list[str]:
    """The warnings of recorded findings, prices aged against ``today``: older than ``max_age``
    days, by default the policy the findings recorded."""
    limit = found["price_age"] if max_age is None else max_age
    return (list(found["pending"]) + list(found["placeholders"]) + list(found["decision"]) + list(found["routing"])
            + [w for price in found["prices"] for w in _price_warning(price, today, limit)])


def placeholders(plan) -> list[str]:
    """Each text of the plan file that starts with the word TODO, in the file's order: an
    owner, a source, a note, a scenario's ``set:`` — whatever ``capplan init`` wrote for the
    team to replace (its placeholder price is marked by its row's TODO source), or an author
    left. A value stays a placeholder while its text says so, whatever the number beside it."""
    if plan.doc is None:
        return []
    from capplan.language.yamlevents import dotted

    out = []

    def visit(value, path: tuple) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                visit(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                visit(item, (*path, index))
        elif isinstance(value, str) and PLACEHOLDER.match(value):
            text = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
            out.append(f"{_where(plan.file, plan.doc.line(path))}{dotted(path)}: "
                       f"{json.dumps(text, ensure_ascii=False)} is a placeholder, not yet replaced")

    visit(plan.doc.data, ())
    return out


def unstated_decision(plan) -> list[str]:
    """One warning naming the fields of the plan's ``decision:`` it leaves out (the record shows
    them as 'not stated'), or none: a reviewer signs an owner, an approver, a date, a term and a
    trigger to review, as the placeholders ``capplan init`` writes ask for a source."""
    missing = plan.decision.unstated
    if not missing:
        return []
    names = " or ".join(filter(None, [", ".join(missing[:-1]), missing[-1]]))
    them = "them" if len(missing) > 1 else "it"
    return [f"{_where(plan.file, plan.decision.line)}decision: no {names} stated; the record shows {them} as "
            f"not stated (name {them} under decision:)"]


def routing_warnings(evaluations) -> list[str]:
    """One warning per class whose prefix hit rate the plan's routing cannot achieve: requests spread
    round robin over several replicas find a prefix one conversation or agent reuses cached on about
    one replica in N, since each replica caches its own (the model prices prefill at the stated rate,
    so the plan states routing: prefix_aware where a router keeps prefixes on their replica)."""
    from capplan.formatting import number

    e = evaluations[0]
    replicas = int(e.values["resilient_replicas"])
    if e.plan.switches["routing"] != "round_robin" or replicas <= 1:
        return []
    out = []
    for i, row in enumerate(e.scenario.tables["classes"].rows):
        if row["prefix_hit_rate"] > 0:
            path = ("tables", "classes", "rows", i, "prefix_hit_rate")
            out.append(f"{_where(e.plan.file, e.plan.doc.line(path) if e.plan.doc else None)}"
                       f"tables.classes.rows[{i}].prefix_hit_rate: class {row['name']}'s prefix hit rate "
                       f"{number(row['prefix_hit_rate'])} needs each request at the replica that caches its prefix, "
                       f"but routing is round_robin over {replicas} replicas: a prefix one conversation or agent "
                       f"reuses is cached on about 1 replica in {replicas}. State `routing: prefix_aware` if a router "
                       "sends requests by their prefix (llm-d, the Dynamo KV router, SGLang's router), else lower the "
                       "hit rate")
    return out


def expectation_failures(evaluations) -> list[str]:
    """Each failed expect:, with the quantity's derivation: its formula with the
    numbers that went in, what it rests on, and how to see the whole tree."""
    from capplan.rendering.present import row
    from capplan.review import expect, explain

    nominal = evaluations[0]
    out = []
    for e in evaluations:
        for x in e.scenario.expect:
            message = expect.failure(e, x)
            if not message:
                continue
            extra = []
            try:
                extra.append(f"derivation: {explain.derivation(e, x.target, nominal).strip()}")
                name, index = explain.resolve(e, x.target)
                if index is None and e.graph.nodes[name].formula is not None:
                    rests = row(e, name).rests_on
                    if rests:
                        extra.append(f"rests on {rests}")
                scenario = "" if e.scenario.name == "nominal" else f" --scenario {e.scenario.name}"
                extra.append(f"full tree: capplan explain {shlex.quote(e.plan.file)} {shlex.quote(x.target)}{scenario}")
            except CapplanError:
                pass
            out.append("\n".join([message] + extra))
    return out


def pending_warnings(evaluations) -> list[str]:
    """One warning per plan listing its pending measurements (placeholders)."""
    from capplan.rendering import present

    nominal = evaluations[0]
    items = []
    for e in evaluations:
        for name in e.graph.order:
            given = e.inputs.get(name)
            if given is None or not given.pending:
                continue
            if e is not nominal and given.origin != e.scenario.name:
                continue                      # the nominal one, listed already
            where = f"line {given.line}" if given.line else given.origin
            scope = "" if e is nominal else f"scenario {e.scenario.name}: "
            items.append(f"{scope}{name} = {present.shown(e, name).text} ({where})")
    if not items:
        return []
    plural = "s" if len(items) != 1 else ""
    return [f"{nominal.plan.file}: {len(items)} pending measurement{plural}, placeholders until measured: "
            + "; ".join(items)]


def price_dates(e) -> list[dict]:
    """The dates of a plan's prices (tables with a money input column, i.e.
    deployments): one entry per ``as_of`` (of the table or of a row) with the
    rows it dates, one per table for rows that have no date at all, and one per
    price of 0 (``free``: the row, at the line of its price)."""
    plan = e.plan
    out = []
    for tname, data in e.scenario.tables.items():
        table = e.model.tables[tname]
        prices = [e.model.quantities[c].column for c in table.columns if c in e.graph.nodes
                  and e.model.quantities[c].is_input and e.model.quantities[c].kind == "money"]
        if not prices:
            continue
        key = e.model.quantities[f"{tname}.{table.key}"].column
        required = [c for c in prices if not e.model.quantities[f"{tname}.{c}"].optional]
        undated, by_table, free = [], [], []
        for i, row in enumerate(data.rows):
            meta = data.meta[i] if i < len(data.meta) else {}
            name = str(row.get(key))
            free += [_free(plan.file, plan.doc.line(("tables", tname, "rows", i, c)) if plan.doc else None,
                           f"tables.{tname}.rows[{i}].{c}", name, c) for c in required if row.get(c) == 0]
            if meta.get("as_of"):
                line = plan.doc.line(("tables", tname, "rows", i, "as_of")) if plan.doc else None
                out.append(_dated(plan.file, line, f"tables.{tname}.rows[{i}].as_of", meta["as_of"], [name], prices))
            elif data.as_of:
                by_table.append(name)
            else:
                undated.append(name)
        if by_table:
            out.append(_dated(plan.file, plan.line(f"tables.{tname}.as_of"), f"tables.{tname}.as_of", data.as_of,
                              by_table, prices))
        if undated:
            out.append({"where": _where(plan.file, plan.line(f"tables.{tname}")), "key": f"tables.{tname}",
                        "undated": undated})
        out += free
    return out + _offer_dates(plan)


def _offer_dates(plan) -> list[dict]:
    """The dates of the ``candidates:`` offers' prices, one entry per offer (each states its own ``as_of``)."""
    offers = {c.offer.name: c.offer for c in plan.candidates.candidates} if plan.candidates else {}
    out = []
    for name, offer in offers.items():
        key = f"candidates.offers[{name}]"
        if offer.as_of:
            out.append(_dated(plan.file, offer.line, f"{key}.as_of", offer.as_of, [name], ["node_hourly_cost"]))
        else:
            out.append({"where": _where(plan.file, offer.line), "key": key, "undated": [name]})
        if offer.node_hourly_cost == 0:
            out.append(_free(plan.file, offer.line, f"{key}.node_hourly_cost", name, "node_hourly_cost"))
    return out


def _free(file, line, key, row, price) -> dict:
    """A price of 0 (a required money column, or an offer's node price): a finding, since a free
    deployment costs $0.00 a month and wins every comparison; right only for hardware whose cost
    is sunk (owned), a placeholder or a slip otherwise."""
    return {"where": _where(file, line), "key": key, "free": [row], "prices": [price]}


def _dated(file, line, key, as_of, rows, prices) -> dict:
    return {"where": _where(file, line), "key": key, "as_of": str(as_of), "rows": rows, "prices": prices}


def _where(file: str, line: int | None) -> str:
    return f"{file}:{line}: " if line else f"{file}: "


def _price_warning(price: dict, today: dt.date, max_age: int) -> list[str]:
    where, key = price["where"], price["key"]
    if "free" in price:
        return [(f"{where}{key}: {', '.join(price['free'])} is priced at 0 (free: $0.00 a month, cheaper than any "
                 f"other); right only for hardware whose cost is sunk, else give its {', '.join(price['prices'])}")]
    if "undated" in price:
        return [(f"{where}{key}: no as_of date for the prices of {', '.join(price['undated'])}; "
                 "add `as_of: YYYY-MM-DD` (to the table or the row)")]
    try:
        date = dt.date.fromisoformat(price["as_of"][:10])
    except ValueError:
        return [f"{where}{key}: '{price['as_of']}' is not a date (YYYY-MM-DD)"]
    age = (today - date).days
    if age <= max_age:
        return []
    return [(f"{where}{key}: prices as of {date.isoformat()} are {age} days old (limit {max_age}, "
             f"today {today.isoformat()}): re-check {', '.join(price['prices'])} of {', '.join(price['rows'])}")]
