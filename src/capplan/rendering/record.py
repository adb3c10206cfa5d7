"""Render the Markdown decision record (``out/<plan>.md``) with Jinja.

Everything the record says comes from the plan's view
(:mod:`capplan.rendering.view`); this module adds only what is Markdown's
own: the mermaid dependency graph and source links (the charts are SVG
files beside it, written by the build). The template decides how it looks. Nothing here depends on the clock or on dict order from
outside the model, so an unchanged plan renders byte-identical text.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from capplan.engine.evaluate import Evaluation
from capplan.loading import tablestatus
from capplan.rendering import markdown
from capplan.rendering.firstscreen import FirstScreen, first_screen
from capplan.rendering.simulation import SimulationView, percent
from capplan.artifacts.declared import layout
from capplan.rendering.palette import palette
from capplan.rendering.view import PlanView
from capplan.resources import templates_dir


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["cell"] = markdown.cell
    env.filters["source"] = markdown.source
    env.filters["code"] = markdown.code
    env.filters["url"] = markdown.url
    env.filters["prose"] = markdown.prose
    env.filters["math"] = markdown.math
    return env


class Footnotes:
    """The record's sources and notes: :meth:`ref` numbers each distinct text once, in the
    order the record first cites it, and returns the reference (a superscript link to
    ``#source-3``) that stands in a table in place of a Source or Note column; :attr:`items`
    are the definitions, written in the record's last appendix, folded. Not GitHub footnotes:
    GitHub sets those out after everything else, unfoldable, three screens of a record."""

    def __init__(self):
        self.numbers: dict[str, int] = {}

    def ref(self, text, date="") -> str:
        shown = markdown.source(text)
        if not shown:
            return ""
        if date:
            shown += f" ({markdown.cell(date)})"
        number = self.numbers.setdefault(shown, len(self.numbers) + 1)
        return f"<sup>[{number}](#source-{number})</sup>"

    @property
    def items(self) -> list[tuple[int, str]]:
        return [(n, text) for text, n in self.numbers.items()]


def _sizing(view: PlanView) -> str:
    """How the plan sizes, in the model's words; a sweep of a performance model's predictions is
    said to be one (the model's words say 'measured')."""
    sweep = view.nominal.scenario.tables.get("load_sweep")
    if sweep is not None and sweep.status is not None and sweep.status.status == tablestatus.ESTIMATED:
        tools = sorted({f.release.split(" (")[0] for f in sweep.imported})
        return (f"from a load sweep predicted by {', '.join(tools)} (estimated, not measured: lambda* with "
                "queueing headroom)")
    return view.model.switches["sizing"]["cases"][view.plan.switches["sizing"]]


def render(view: PlanView, screen: FirstScreen | None = None) -> str:
    """The record of ``view``, opening with ``screen`` (by default :func:`first_screen` of the view)."""
    nominal = view.nominal
    context = {
        "fs": screen or first_screen(view),
        "notes": Footnotes(),
        "plan": view.plan,
        "sizing": _sizing(view),
        "headline": view.headline,
        "decision": view.decision,
        "pending": view.pending,
        "sections": view.sections,
        "provenance": view.provenance,
        "overrides": view.overrides,
        "graphs": dependency_graphs(nominal),
        "simulation": _simulation_section(view, len(view.sections) + 1),
        "candidates": view.candidates,
        "recommended": (view.recommended_holds.section(view.chart_file("recommended"))
                        if view.recommended_holds is not None else None),
        "appendix": appendices(view),
    }
    text = _environment().get_template("record.md.j2").render(**context)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def appendices(view: PlanView) -> dict[str, str]:
    """The letter of each appendix the record ends with, in order: the dependency graph, the
    provenance of every input, then where the plan has them the load sweep's benchmark files
    (their SHA-256 and methods) and the commands of the benchmarks to run next, and the sources
    and notes the record cites. What a reviewer needs to decide stays in the body; what an
    auditor checks comes here, folded."""
    present = ["graph", "provenance"]
    if any(part["sweep"] and part["sweep"]["files"] for section in view.sections for part in section["parts"]):
        present.append("evidence")
    if view.candidates is not None and view.candidates.benchmarks:
        present.append("benchmarks")
    present.append("sources")                   # last: printed when the record cites a source
    return {name: chr(ord("A") + i) for i, name in enumerate(present)}


def first_screen_markdown(screen: FirstScreen) -> str:
    """The first screen alone (``templates/firstscreen.md.j2``), as ``capplan diff`` opens with it."""
    return _environment().get_template("firstscreen.md.j2").render(fs=screen)


def simulation_markdown(shown: SimulationView, chart: str = "", number: int | None = None) -> str:
    """A simulation as Markdown (``templates/simulation.md.j2``); the record's
    section carries its ``number`` in the record, ``capplan simulate`` none."""
    return _environment().get_template("simulation.md.j2").render(sim=shown, chart=chart, percent=percent,
                                                                  number=number)


def _simulation_section(view: PlanView, number: int) -> str:
    """The record's simulation section numbered ``number``, or '' for a plan without uncertain values."""
    shown = view.simulation
    return simulation_markdown(shown, view.chart_file("simulation"), number) if shown else ""


def tag_styles() -> dict[str, str]:
    """Mermaid class definitions per tag, in the workbook's colours (templates/palette.yaml)."""
    colours = palette()
    out = {}
    for tag, c in colours["tags"].items():
        fill = c["fill"] or colours["background"]
        out[tag] = f"fill:#{fill.lower()},stroke:#{c['stroke'].lower()},color:#{c['text'].lower()}"
    return out


def dependency_graphs(e: Evaluation) -> dict:
    """The plan's quantities as mermaid flowcharts small enough to read at page width.

    ``overview``: one box per stage of ``graph.stages`` in layout.yaml
    (inputs → memory → throughput → sizing → cost), each saying how many
    quantities it holds and what it hands on; an arrow where one stage reads
    another. ``stages``: per stage, its derived quantities and tables one box
    each, coloured by tag, its own inputs folded into one box per tag
    (pending ones in their own), and each other stage it reads as one box
    naming what it reads. (One graph of every quantity rendered 2,907 ×
    4,088 px, its text 6 px high at page width.)
    """
    graph = _Graph(e)
    stages = layout()["graph"]["stages"]
    overview = ["flowchart TB"]
    for i, spec in enumerate(stages):
        members = graph.members(i)
        if not members:
            continue
        given = [n for n in members if graph.nodes[n] != "derived"]
        pending = sum(1 for n in given if graph.nodes[n] == "pending")
        handed = [n for n in members if n in graph.handing_on]
        counts = f"{len(members)} quantities, {len(given)} given" + (f" ({pending} pending)" if pending else "")
        hands = _wrapped([_label(n) for n in handed], most=4) if handed else "the results"
        overview.append(f'  S{i}["<b>{i + 1}. {spec["title"]}</b><br/>{counts}<br/>hands on: {hands}"]:::stage')
    crossing = sorted({(graph.stage(a), graph.stage(b)) for a, b in graph.edges if graph.stage(a) != graph.stage(b)})
    overview += [f"  S{a} --> S{b}" for a, b in crossing]
    overview.append(f"  classDef stage {STAGE_STYLE}")
    graphs = [{"title": f"{i + 1}. {spec['title']}", "count": len(graph.members(i)),
               "graph": _stage_graph(graph, i, stages)} for i, spec in enumerate(stages) if graph.members(i)]
    return {"overview": "\n".join(overview), "stages": graphs}


class _Graph:
    """The plan's quantities as nodes (a table is one node), each with its tag and stage."""

    def __init__(self, e: Evaluation):
        self.model = model = e.model
        self.stage_of_group = {g: i for i, stage in enumerate(layout()["graph"]["stages"]) for g in stage["groups"]}
        self.nodes: dict[str, str] = {}          # node id -> tag, in the graph's order
        self.edges: set[tuple[str, str]] = set()
        for name in e.graph.order:
            nid = self.node_id(name)
            q = model.quantities[name]
            given = e.inputs.get(name)
            tag = (model.tables[q.table].tag if q.table           # a table node stands for its rows of data
                   else ("pending" if given.pending else given.tag) if given else "derived")
            self.nodes.setdefault(nid, tag)
            self.edges |= {(self.node_id(d), nid) for d in e.graph.nodes[name].deps if self.node_id(d) != nid}
        self.stages = {nid: self._stage(nid) for nid in self.nodes}
        self.handing_on = {a for a, b in self.edges if self.stages[a] != self.stages[b]}   # read by another stage

    def node_id(self, name: str) -> str:
        q = self.model.quantities[name]
        return f"T_{q.table}" if q.table else name

    def stage(self, nid: str) -> int:
        return self.stages[nid]

    def _stage(self, nid: str) -> int:
        if nid.startswith("T_"):
            return self.stage_of_group[self.model.tables[nid[2:]].group]
        return self.stage_of_group[self.model.quantities[nid].group]

    def members(self, i: int) -> list[str]:
        return [n for n in self.nodes if self.stage(n) == i]


def _stage_graph(graph: _Graph, i: int, stages: list[dict]) -> str:
    """One stage's flowchart: its derived quantities, its inputs folded by tag, the stages it reads."""
    members = graph.members(i)
    folded = {n: f"given_{graph.nodes[n]}" for n in members if graph.nodes[n] != "derived" and not n.startswith("T_")}
    boxes: dict[str, tuple[str, str]] = {}      # box id -> (label, class)
    read_here = {a for a, b in graph.edges if graph.stage(b) == i}
    for j, spec in enumerate(stages):
        reads = [a for a in graph.nodes if graph.stage(a) == j != i and a in read_here]
        if reads:
            boxes[f"S{j}"] = (f"from {j + 1}. {spec['title']}:<br/>{_wrapped([_label(n) for n in reads])}", "stage")
    for box in dict.fromkeys(folded.values()):
        tag = box.removeprefix("given_")
        word = "pending measurements" if tag == "pending" else f"{tag} inputs"
        boxes[box] = (f"{word}:<br/>{_wrapped([n for n, f in folded.items() if f == box])}", tag)
    boxes.update({n: (_label(n), graph.nodes[n]) for n in members if n not in folded})
    local = {(folded.get(a, a) if graph.stage(a) == i else f"S{graph.stage(a)}", folded.get(b, b))
             for a, b in graph.edges if graph.stage(b) == i}
    local = sorted((a, b) for a, b in local if a != b)
    lines = [f"flowchart {_direction(boxes, local)}"]
    lines += [f'  {box}["{label}"]:::{cls}' for box, (label, cls) in boxes.items()]
    lines += [f"  {a} --> {b}" for a, b in local]
    used = {cls for _, cls in boxes.values()}
    lines += [f"  classDef {t} {style}" for t, style in {**tag_styles(), "stage": STAGE_STYLE}.items() if t in used]
    return "\n".join(lines)


def _direction(boxes: dict[str, tuple[str, str]], edges: list[tuple[str, str]]) -> str:
    """Top to bottom or left to right, whichever draws the graph narrower
    (about: the boxes side by side on its widest level, or the widest box of
    each level in a row), so the renderer shrinks its text the least."""
    rank = dict.fromkeys(boxes, 0)
    for _ in range(len(edges) + 1):              # longest path from a source; the graph has no cycle
        changed = False
        for a, b in edges:
            if rank[b] < rank[a] + 1:
                rank[b], changed = rank[a] + 1, True
        if not changed:
            break
    widths = {box: 7 * max(len(line) for line in label.split("<br/>")) + 40 for box, (label, _) in boxes.items()}
    levels = [[w for box, w in widths.items() if rank[box] == r] for r in range(max(rank.values()) + 1)]
    across = max(sum(level) for level in levels)
    along = sum(max(level) + 50 for level in levels)
    return "LR" if along < across else "TB"


STAGE_STYLE = "fill:#f2f2f2,stroke:#7f7f7f,color:#000000"


def _label(nid: str) -> str:
    return nid[2:] + " (table)" if nid.startswith("T_") else nid


def _wrapped(names: list[str], per_line: int = 2, most: int | None = None) -> str:
    """Names two to a line, so a box stays narrow; past ``most`` names, how many more."""
    more = len(names) - most if most and len(names) > most else 0
    shown = names[:most - 1] if more else names
    lines = [", ".join(shown[k:k + per_line]) for k in range(0, len(shown), per_line)]
    return "<br/>".join(lines + ([f"and {more + 1} more"] if more else []))
