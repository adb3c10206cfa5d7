"""The load sweep as the record shows it: the table with per-SLO verdicts,
the knee bracket in words, closed bursts, the evidence files, and what
the latency chart draws (:mod:`capplan.rendering.charts.sweep`).

What is shown comes from the ``sweep:`` part of ``templates/layout.yaml``
(columns, spreads, the per-SLO checks and their short names, the λ* and
knee quantities); each check's measured column and limit are read from its
formula in the model (``ttft_p95 <= ttft_p95_slo``), so a new SLO column
needs a line in the model and a name in the layout, not code. A layout name
that stands for one column per SLO of the plan (``slo_values``) is expanded
by the model; each SLO's check is named by its metric and percentile.
"""

from __future__ import annotations

import math

from capplan import formatting
from capplan.engine.evaluate import Evaluation
from capplan.loading.sweeps import delivery_text
from capplan.rendering.present import is_unmeasured, shown


def sweep(e: Evaluation, spec: dict) -> dict:
    table = spec["table"]
    model = e.model
    data = e.scenario.tables[table]
    count = len(data.rows)
    col = lambda c: f"{table}.{c}"              # noqa: E731 - a column's model name

    def bare(names) -> list[str]:
        """Layout names as bare columns, one per SLO where the model says so."""
        return [n.split(".", 1)[1] for n in model.expand(col(c) for c in names)]

    columns = [c for c in bare(spec["columns"]) if col(c) in e.values and not _blank(e, col(c))]
    spreads = {v: s for key, spread in spec.get("spreads", {}).items()
               for v, s in zip(bare([key]), bare([spread]))}
    labels, slo_checks = {}, set()
    for key, label in spec["checks"].items():       # one check per SLO: 'TTFT p95', ...
        per_slo = model.expansions.get(col(key))
        labels.update(zip(bare([key]), [s.text for s in model.slos]) if per_slo else [(key, label)])
        slo_checks.update(bare([key]) if per_slo else ())
    checks = {ok: (_relation(e, col(ok)) if ok != spec.get("delivery") else (None, None)) + (label,)
              for ok, label in labels.items() if col(ok) in e.values and not _no_floor(e, col(ok))}
    ok = [bool(v) for v in e.display(col(spec["verdict"]))]
    replicates = e.display(col(spec["replicates"])) if col(spec.get("replicates", "")) in e.values else [1] * count

    header = [_header(model.quantities[col(c)]) for c in columns] + ["per SLO", "SLO"]
    # a point that was sent requests and completed none measured no latency (0 is "not recorded"
    # for rows typed in, which have no request counts)
    sent, done = (e.display(col(c)) if col(c) in e.values else [0] * count for c in ("sent", "completed"))
    delivered = [not (sent[i] > 0 and done[i] == 0) for i in range(count)]
    latencies = {checks[k][0] for k in slo_checks if k in checks}     # what the SLO checks measure
    rows = []
    for i in range(count):
        cells = []
        for c in columns:
            if not delivered[i] and col(c) in latencies:  # no request completed: no latency was measured
                cells.append("not measured")
                continue
            text = formatting.number(e.display(col(c))[i])
            spread = spreads.get(c)
            if spread and col(spread) in e.values and replicates[i] > 1:
                text += f" ± {formatting.number(e.display(col(spread))[i])}"
            cells.append(text)
        verdicts = " ".join(("– " if not delivered[i] and name in latencies else
                             "✓ " if e.display(col(k))[i] else "✗ ") + label
                            for k, (name, _, label) in checks.items())
        rows.append(cells + [verdicts, "**PASS**" if ok[i] else "FAIL"])
    return {"header": header, "numeric": [True] * len(columns) + [False, False], "rows": rows,
            "knee": _knee(e, spec, checks, ok), "files": _files(data), "bursts": _bursts(data, model.slos),
            "chart": _chart(e, spec, checks, ok),
            "description": model.tables[table].description, "source": data.source or "", "note": data.note or ""}


def _blank(e: Evaluation, name: str) -> bool:
    """An optional column no row fills (NaN throughout, or 'not measured' throughout,
    as goodput_share without per-request data) is left out."""
    q = e.model.quantities[name]
    return q.optional and all(v != v or is_unmeasured(q, v) for v in e.values[name])


def _no_floor(e: Evaluation, name: str) -> bool:
    """A check ``measured >= floor`` whose floor is 0 asks nothing (no goodput SLO): not shown."""
    expr = e.graph.nodes[name].formula.expr
    return type(expr).__name__ == "GreaterThan" and e.display(str(expr.args[1])) == 0


def _header(q) -> str:
    label = formatting.unit_label(q.unit)
    return f"{q.column} [{label}]" if label else q.column


def _relation(e: Evaluation, name: str) -> tuple[str, str]:
    """(measured, limit) of a check column ``measured <= limit`` (or ``>=``, a floor)."""
    measured, limit = (str(a) for a in e.graph.nodes[name].formula.expr.args)
    return measured, limit


def _miss(e: Evaluation, check: str) -> str:
    """How a failing check's measured value misses its limit: '>' a ceiling, '<' a floor."""
    return "<" if type(e.graph.nodes[check].formula.expr).__name__ == "GreaterThan" else ">"


def _knee(e: Evaluation, spec: dict, checks: dict, ok: list[bool]) -> str:
    rate, knee = spec["rate"], spec["knee"]
    xs = e.display(f"{spec['table']}.arrival_rate")
    star = shown(e, rate).text
    if e.inputs.get(rate) is not None:
        return f"λ* is pinned at {star} in this plan; the sweep below is shown as evidence."
    top = e.display(knee)
    first = next((i for i, x in enumerate(xs) if x == top and not ok[i]), None)
    if first is None:
        return (f"Every swept rate meets the SLOs: λ* = {star} is only a lower bound; "
                f"the knee lies above the highest rate swept. Extend the sweep.")
    table = spec["table"]
    why = "; ".join(f"{label} {shown(e, measured, first).text} {_miss(e, table + '.' + k)} "
                    f"{shown(e, limit).text}" if measured
                    else _undelivered(e, spec["table"], first)
                    for k, (measured, limit, label) in checks.items()
                    if not e.display(f"{spec['table']}.{k}")[first])
    text = (f"λ* = {star}: every SLO holds up to it. The knee lies between "
            f"{formatting.number(e.display(rate))} and {shown(e, knee).text} "
            f"(first failure: {why}); sweep finer there.")
    noisy = [formatting.number(x) for x, passed in zip(xs, ok) if x > top and passed]
    if noisy:
        text += f" A pass above the first failure ({', '.join(noisy)} req/s) is noise and does not count."
    return text


def _undelivered(e: Evaluation, table: str, index: int) -> str:
    """Why a point that did not deliver its offered load fails, in words."""
    row = {c: e.display(f"{table}.{c}")[index] for c in ("arrival_rate", "sent", "completed", "failed", "achieved_rate")}
    return delivery_text(row) + ": the replica was saturated"


def _files(data) -> list[dict]:
    """Per file: where it came from (tool, the version its layout shows, how the load was
    offered), which SLO percentiles came from its summary and which were computed."""
    def columns(f, how: str) -> str:
        return ", ".join(dict.fromkeys(c for p in f.points for c, s in p.sources.items() if s == how)) or "—"

    return [{"path": f.path, "sha256": f.sha256, "format": f.format, "tool": f.tool[0], "version": f.tool[1],
             "strategy": ", ".join(dict.fromkeys(p.strategy for p in f.points)) or "—",
             "summary": columns(f, "summary"), "computed": columns(f, "computed"),
             "runs": ", ".join(_rate(p.arrival_rate) for p in f.points) or "none counted",
             "methods": [*f.evidence, *sorted({m for p in f.points for m in p.methods})]} for f in data.imported]


def _bursts(data, slos) -> list[str]:
    """Closed bursts (all requests at once) are shown, never counted: with the
    percentiles of the plan's SLOs they have, and those they lack."""
    out = []
    for f in data.imported:
        for p in f.points:
            if not math.isinf(p.arrival_rate):
                continue
            have = [f"{s.text} {formatting.number(p.latency[s.column])} {s.unit}"
                    for s in slos if s.column in p.latency]
            lacks = [s.text for s in slos if s.column in p.missing]
            parts = have + ([f"no {', '.join(lacks)} in the file"] if lacks else [])
            loop = (f"closed loop, {p.strategy}, {formatting.number(p.achieved_rate)} req/s completed (an outcome, "
                    "not an offered rate)" if p.achieved_rate else "closed burst (all requests at once)")
            out.append(f"{p.file}: {loop}, {', '.join(parts)}, "
                       f"{formatting.number(p.output_throughput)} tok/s — not an open-loop point, not counted")
    return out


def _rate(rate: float) -> str:
    return "closed burst" if math.isinf(rate) else f"{formatting.number(rate)} req/s"


def _chart_series(e: Evaluation, table: str, checks: dict) -> list[dict]:
    """Each latency check's measured values against its limit, with the
    check's verdict per point, for the latency chart. Checks whose limit is
    not a time (the error budget) are left out of a latency chart."""
    series = []
    for ok, (measured, limit, label) in checks.items():
        if measured is None or e.model.quantities[limit].unit in ("", None):
            continue
        q = e.model.quantities[measured]
        series.append({"label": label, "column": q.column, "unit": formatting.unit_label(q.unit),
                       "values": [float(v) for v in e.display(measured)],
                       "limit": float(e.display(limit)), "limit_text": shown(e, limit).text,
                       "ok": [bool(v) for v in e.display(f"{table}.{ok}")]})
    return series


def _chart(e: Evaluation, spec: dict, checks: dict, ok: list[bool]) -> dict | None:
    """What the latency chart draws: the swept rates, each latency series,
    λ* and the top of the knee bracket (None where the sweep has no failure
    or λ* is pinned) — every number a value of the model."""
    table = spec["table"]
    if f"{table}.arrival_rate" not in e.values:
        return None
    rate_unit = e.model.quantities[f"{table}.arrival_rate"].unit
    pinned = e.inputs.get(spec["rate"]) is not None
    failed = not all(ok)
    return {"rates": [float(r) for r in e.display(f"{table}.arrival_rate")], "rate_unit": formatting.unit_label(rate_unit),
            "ok": ok, "series": _chart_series(e, table, checks),
            "star": float(e.display(spec["rate"])), "star_text": shown(e, spec["rate"]).text,
            "star_pinned": pinned,
            "knee": float(e.display(spec["knee"])) if failed and not pinned else None,
            "knee_text": shown(e, spec["knee"]).text if failed and not pinned else ""}
