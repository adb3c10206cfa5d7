"""Render the Markdown decision record (``out/<plan>.md``) with Jinja.

Everything the record says comes from the plan's view
(:mod:`capplan.rendering.view`); this module adds only what is Markdown's
own: the mermaid dependency graph and latency chart. The template decides
how it looks. Nothing here depends on the clock or on dict order from
outside the model, so an unchanged plan renders byte-identical text.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from capplan.engine.evaluate import Evaluation
from capplan.rendering import markdown, simulation
from capplan.rendering.palette import palette
from capplan.rendering.view import PlanView
from capplan.resources import templates_dir


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["cell"] = markdown.cell
    return env


def render(view: PlanView) -> str:
    nominal = view.nominal
    context = {
        "plan": view.plan,
        "sizing": view.model.switches["sizing"]["cases"][view.plan.switches["sizing"]],
        "headline": view.headline,
        "pending": view.pending,
        "sections": view.sections,
        "provenance": view.provenance,
        "overrides": view.overrides,
        "dependency_graph": dependency_graph(nominal),
        "latency_chart": latency_chart,
        "simulation": simulation.section(view),
    }
    text = _environment().get_template("record.md.j2").render(**context)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def latency_chart(sweep: dict) -> str:
    """A mermaid xychart of the sweep's latency series, each as a share of its SLO."""
    series = sweep["chart"]
    if len(sweep["rates"]) < 2 or not series:
        return ""
    top = max([1.0] + [x for s in series for x in s["shares"]])
    names = ", ".join(s["label"] for s in series)
    rates = ", ".join(f'"{r}"' for r in sweep["rates"])
    return "\n".join(["xychart-beta",
                      f'    title "Latency as a share of its SLO (lines: {names}; 1.0 = SLO)"',
                      f'    x-axis "arrival rate (req/s)" [{rates}]',
                      f'    y-axis "share of SLO" 0 --> {max(1.5, round(top * 1.1, 1)):.1f}',
                      *("    line [" + ", ".join(f"{x:.3f}" for x in s["shares"]) + "]" for s in series),
                      "    line [" + ", ".join("1" for _ in sweep["rates"]) + "]"])


def tag_styles() -> dict[str, str]:
    """Mermaid class definitions per tag, in the workbook's colours (templates/palette.yaml)."""
    colours = palette()
    out = {}
    for tag, c in colours["tags"].items():
        fill = c["fill"] or colours["background"]
        out[tag] = f"fill:#{fill.lower()},stroke:#{c['stroke'].lower()},color:#{c['text'].lower()}"
    return out


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
    lines += [f"  classDef {t} {style}" for t, style in tag_styles().items()]
    return "\n".join(lines)
