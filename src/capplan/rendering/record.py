"""Render the Markdown decision record (``out/<plan>.md``) with Jinja.

This module gathers what the template needs, already formatted for humans:
the headline decision, pending measurements, the sections of
``templates/layout.yaml`` with their derivation rows and tables, the
sensitivity table and the provenance of every input. The template decides
only how it looks. Nothing here depends on the clock or on dict order from
outside the model, so an unchanged plan renders byte-identical text.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from capplan.engine.evaluate import Evaluation
from capplan.loading.plan import Plan
from capplan.rendering import formatting
from capplan.rendering.layout import layout
from capplan.rendering.present import row
from capplan.resources import templates_dir


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["cell"] = lambda text: str(text or "").replace("|", "\\|").replace("\n", " ").strip()
    return env


def render(plan: Plan, evaluations: list[Evaluation]) -> str:
    nominal = evaluations[0]
    context = {
        "plan": plan,
        "sizing": nominal.model.switches["sizing"]["cases"][plan.switches["sizing"]],
        "headline": headline(nominal),
        "pending": _pending(nominal),
        "sections": [_section(nominal, evaluations, s) for s in layout()["sections"]],
        "provenance": _provenance(nominal),
        "overrides": _overrides(evaluations),
        "dependency_graph": dependency_graph(nominal),
    }
    text = _environment().get_template("record.md.j2").render(**context)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def headline(e: Evaluation) -> str:
    """One paragraph a leader reads: GPUs, then nodes and money per deployment."""
    summary = layout()["summary"]
    parts = [f"{e.text('active_gpus')} carry the {e.text('peak_arrival_rate')} peak; "
             f"{e.text('resilient_gpus')} with redundancy."]
    table = summary["table"]
    for r in e.rows(table):
        parts.append(f"On {r['name']}: {formatting.number(r['nodes'])} node{'s' if r['nodes'] != 1 else ''} "
                     f"({formatting.number(r['deployed_gpus'])} GPUs), "
                     f"{formatting.money(r['monthly_cost'])} a month, "
                     f"{formatting.money(r['cost_per_million_tokens'])} per 1M output tokens.")
    return " ".join(parts)


def _pending(e: Evaluation) -> list[dict]:
    out = []
    for name, given in sorted(e.inputs.items()):
        if not given.pending:
            continue
        affects = [n for n in e.graph.order if name in e.provenance.get(n, ()) and n != name
                   and e.model.quantities[n].table is None and e.model.quantities[n].kind != "bool"]
        key = [n for n in affects if n in ("decode_step_time_bound", "prefill_time_bound", "ttft_bound",
                                            "active_gpus", "resilient_gpus", "safe_rate_per_replica")]
        out.append({"name": name, "value": e.text(name), "description": e.model.quantities[name].description.rstrip("."),
                    "source": given.source or "", "affects": [f"`{n}`" for n in (key or affects[:4])]})
    return out


def _section(nominal: Evaluation, evaluations, spec: dict) -> dict:
    parts = []
    for part in spec.get("parts", []):
        rows = [row(nominal, n) for n in part.get("quantities", []) if n in nominal.graph.nodes]
        tables = [_table(nominal, t, part.get("columns", {})) for t in part.get("tables", [])
                  if t in nominal.scenario.tables]
        sweep = _sweep(nominal) if part.get("sweep") in nominal.scenario.tables else None
        if not rows and not tables and not sweep:
            continue
        gate = None
        if part.get("gate") in nominal.graph.nodes:
            g = row(nominal, part["gate"])
            gate = {"title": part["title"], "value": g.value, "substituted": g.substituted}
        parts.append({"title": part["title"], "rows": rows, "tables": tables, "gate": gate, "sweep": sweep})
    section = {"title": spec["title"], "parts": parts, "sensitivity": None}
    if "scenario_columns" in spec:
        section["sensitivity"] = _sensitivity(evaluations, spec)
    return section


def _table(e: Evaluation, name: str, shown_columns: dict) -> dict:
    model = e.model
    table = model.tables[name]
    data = e.scenario.tables[name]
    wanted = shown_columns.get(name)
    cols = [c for c in table.columns if c in e.values and not (
        model.quantities[c].optional and all(v != v for v in e.values[c]))
        and (wanted is None or model.quantities[c].column in wanted)]
    columns, formulas = [], []
    for c in cols:
        q = model.quantities[c]
        label = formatting.unit_label(q.unit)
        if q.kind == "money":
            label = formatting.MONEY_UNITS.get(q.unit, q.unit)
        columns.append({"header": q.column + (f" [{label}]" if label else ""),
                        "numeric": q.kind in ("number", "money")})
        node = e.graph.nodes[c]
        if node.formula:
            formulas.append({"name": q.column, "formula": node.formula.text})
    rows = []
    shown = {c: e.display(c) for c in cols}
    for i in range(len(data.rows)):
        cells = []
        for c in cols:
            q = model.quantities[c]
            v = shown[c][i]
            cells.append(formatting.money(v, "USD") if q.kind == "money" else formatting.quantity(v, "", q.kind))
        rows.append(cells)
    source = data.source or ""
    return {"title": table.title, "description": table.description, "columns": columns, "rows": rows,
            "formulas": formulas, "source": source, "as_of": data.as_of or ""}


SLO_CHECKS = (("ttft_ok", "ttft_p95", "ttft_p95_slo", "TTFT p95"), ("tpot_ok", "tpot_p95", "tpot_p95_slo", "TPOT p95"),
              ("e2e_ok", "e2e_p99", "e2e_p99_slo", "E2E p99"))


def _sweep(e: Evaluation) -> dict:
    """The 7.3 table, the knee bracket, the evidence files and a chart."""
    rows = e.rows("load_sweep")
    data = e.scenario.tables["load_sweep"]
    table = []
    for r in rows:
        def spread(col, unit):
            mad = r.get(col + "_mad") or 0
            text = formatting.number(r[col])
            return f"{text} ± {formatting.number(mad)}" if r.get("runs", 1) > 1 else text
        verdicts = " ".join(("✓ " if r[ok] else "✗ ") + label.split()[0] for ok, _, _, label in SLO_CHECKS)
        errors = formatting.number(r["error_rate"] * 100) + " %" if r["completed"] or r["failed"] else "–"
        table.append([formatting.number(r["arrival_rate"]), formatting.number(r["mean_batch"]),
                      spread("ttft_p95", "ms"), spread("tpot_p95", "ms"), spread("e2e_p99", "s"),
                      formatting.number(r["output_throughput"]), formatting.number(r["runs"]), errors,
                      verdicts + ("" if r["errors_ok"] else " ✗ errors"),
                      "**PASS**" if r["meets_slo"] else "FAIL"])
    star = e.display("instance_max_rate") if "instance_max_rate" in e.values else None
    pinned = "instance_max_rate" in e.inputs
    first_fail = next((r for r in rows if not r["meets_slo"]), None)
    noisy = [r for r in rows if first_fail and r["arrival_rate"] > first_fail["arrival_rate"] and r["meets_slo"]]
    if pinned:
        knee = f"λ* is pinned at {formatting.number(star)} req/s in this plan; the sweep below is shown as evidence."
    elif first_fail is None:
        knee = (f"Every swept rate meets the SLOs: λ* = {formatting.number(star)} req/s is only a lower bound; "
                f"the knee lies above the highest rate swept. Extend the sweep.")
    else:
        why = "; ".join(f"{label} {formatting.number(first_fail[col])} > {e.text(slo)}"
                        for ok, col, slo, label in SLO_CHECKS if not first_fail[ok])
        if not first_fail["errors_ok"]:
            why += ("; " if why else "") + f"errors {formatting.number(first_fail['error_rate'] * 100)} % > "                    f"{formatting.number(e.display('error_budget') * 100)} %"
        knee = (f"λ* = {formatting.number(star)} req/s: every SLO holds up to it. The knee lies between "
                f"{formatting.number(star)} and {formatting.number(first_fail['arrival_rate'])} req/s "
                f"(first failure: {why}); sweep finer there.")
    if noisy:
        knee += (" A pass above the first failure (" + ", ".join(formatting.number(r["arrival_rate"]) for r in noisy)
                 + " req/s) is noise and does not count.")
    files = [{"path": f.path, "sha256": f.sha256, "format": f.format,
              "runs": ", ".join(_rate(p.arrival_rate) for p in f.points),
              "methods": sorted({m for p in f.points for m in p.methods})} for f in data.imported]
    bursts = [p for f in data.imported for p in f.points if p.arrival_rate == float("inf")]
    return {"rows": table, "knee": knee, "files": files, "chart": _chart(e, rows),
            "description": e.model.tables["load_sweep"].description, "source": data.source or "",
            "bursts": [f"{p.file}: closed burst (all requests at once), TTFT p95 {formatting.number(p.ttft_p95)} ms, "
                       f"TPOT p95 {formatting.number(p.tpot_p95)} ms, E2E p99 {formatting.number(p.e2e_p99)} s, "
                       f"{formatting.number(p.output_throughput)} tok/s — not an open-loop point, not counted"
                       for p in bursts]}


def _rate(rate: float) -> str:
    return "closed burst" if rate == float("inf") else f"{formatting.number(rate)} req/s"


def _chart(e: Evaluation, rows: list[dict]) -> str:
    """A mermaid xychart: each latency as a share of its SLO (1.0 = at the SLO)."""
    if len(rows) < 2:
        return ""
    series = []
    top = 1.0
    for _, col, slo, _ in SLO_CHECKS:
        shares = [r[col] / e.display(slo) for r in rows]
        top = max(top, *shares)
        series.append("    line [" + ", ".join(f"{x:.3f}" for x in shares) + "]")
    rates = ", ".join(f'"{formatting.number(r["arrival_rate"])}"' for r in rows)
    return "\n".join(["xychart-beta",
                      '    title "Latency as a share of its SLO (lines: TTFT p95, TPOT p95, E2E p99; 1.0 = SLO)"',
                      f'    x-axis "arrival rate (req/s)" [{rates}]',
                      f'    y-axis "share of SLO" 0 --> {max(1.5, round(top * 1.1, 1)):.1f}',
                      *series,
                      "    line [" + ", ".join("1" for _ in rows) + "]"])


def _sensitivity(evaluations, spec) -> dict:
    nominal = evaluations[0]
    model = nominal.model
    columns = [formatting.unit_label(model.quantities[n].unit) and f"{n} [{formatting.unit_label(model.quantities[n].unit)}]" or n
               for n in spec["scenario_columns"]]
    columns += [r["name"] for r in nominal.rows("deployments")]
    rows = []
    for e in evaluations:
        values = [formatting.number(e.display(n)) if n in e.values else "—" for n in spec["scenario_columns"]]
        peak = e.display("peak_arrival_rate")
        for r in e.rows("deployments"):
            share = peak / r["fleet_safe_capacity"] if r["fleet_safe_capacity"] else float("inf")
            verdict = "holds" if r["fleet_holds"] else "**breaks**"
            values.append(f"{formatting.number(r['nodes'])} nodes, {formatting.money(r['monthly_cost'])}; "
                          f"nominal fleet {formatting.number(r['fleet_safe_capacity'])} req/s safe, "
                          f"{share:.0%} loaded: {verdict}")
        rows.append({"name": e.scenario.name, "title": e.scenario.title,
                     "changes": e.scenario.changes or ["—"], "cells": values})
    return {"columns": columns, "rows": rows}


TAG_STYLES = {   # fill, stroke: the same colours as the workbook's input styles
    "fact": ("#dbe9f6", "#5b9bd5"), "policy": ("#e2f0d9", "#70ad47"), "measurement": ("#fff2cc", "#bf9000"),
    "pending": ("#f8cbad", "#c55a11"), "assumption": ("#e4dfec", "#7030a0"), "derived": ("#ffffff", "#7f7f7f"),
}


def dependency_graph(e: Evaluation) -> str:
    """A mermaid flowchart of the plan's quantities: one box per model group
    (workload, memory, roofline, sweep, sizing, cost …), each quantity coloured
    by its tag, each table one node."""
    model = e.model
    def node_id(name):
        q = model.quantities[name]
        return f"T_{q.table}" if q.table else name

    def tag(name):
        q = model.quantities[name]
        if q.table:
            return model.tables[q.table].tag      # a table node stands for its rows of data
        given = e.inputs.get(name)
        return ("pending" if given.pending else given.tag) if given else "derived"

    groups: dict[str, list[str]] = {}
    classes: dict[str, str] = {}
    edges: set[tuple[str, str]] = set()
    for name in e.graph.order:
        q = model.quantities[name]
        nid = node_id(name)
        group = model.tables[q.table].group if q.table else q.group
        if nid not in classes:
            groups.setdefault(group, []).append(nid)
        classes[nid] = tag(name)
        for dep in e.graph.nodes[name].deps:
            if node_id(dep) != nid:
                edges.add((node_id(dep), nid))
    lines = ["flowchart LR"]
    for group in model.groups:
        members = groups.get(group)
        if not members:
            continue
        lines.append(f'  subgraph {group}["{model.groups[group].title}"]')
        for nid in members:
            label = nid[2:] + " (table)" if nid.startswith("T_") else nid
            lines.append(f'    {nid}["{label}"]:::{classes[nid]}')
        lines.append("  end")
    lines += [f"  {a} --> {b}" for a, b in sorted(edges)]
    lines += [f"  classDef {t} fill:{fill},stroke:{stroke},color:#000" for t, (fill, stroke) in TAG_STYLES.items()]
    return "\n".join(lines)


def _provenance(e: Evaluation) -> list[dict]:
    out = []
    for name in e.graph.order:
        if name not in e.inputs:
            continue
        given = e.inputs[name]
        out.append({"name": name, "value": e.text(name), "tag": given.tag, "pending": given.pending,
                    "pinned": given.pinned, "origin": given.origin, "source": given.source or "",
                    "date": given.date or "", "note": given.note or ""})
    return out


def _overrides(evaluations) -> list[dict]:
    out = []
    nominal = evaluations[0]
    for e in evaluations[1:]:
        for name, given in e.inputs.items():
            if given.origin == e.scenario.name:
                out.append({"scenario": e.scenario.name, "name": name, "value": e.text(name), "tag": given.tag,
                            "pending": given.pending, "pinned": given.pinned, "source": given.source or ""})
        for tname, data in e.scenario.tables.items():
            base = nominal.scenario.tables[tname]
            for i, (new, old) in enumerate(zip(data.rows, base.rows)):
                for col, value in new.items():
                    if value != old[col]:
                        q = e.model.quantities[f"{tname}.{col}"]
                        key = old.get(e.model.quantities[f"{tname}.{e.model.tables[tname].key}"].column)
                        out.append({"scenario": e.scenario.name, "name": f"{tname}[{key}].{col}",
                                    "value": formatting.quantity(e.display(f"{tname}.{col}")[i], q.unit, q.kind),
                                    "tag": e.model.tables[tname].tag, "pending": False, "pinned": False, "source": ""})
    return out
