"""``capplan explain``: the derivation tree of one quantity, down to its inputs.

Each node of the tree is a line a reviewer can check by hand: the formula as
the model writes it, the same formula with the numbers that went in, the
value with its unit, the tag (fact, policy, measurement, assumption or
derived) and the source. Pending measurements are marked ⚠ wherever they
flow. Scalars come from :func:`capplan.rendering.present.row`, so the numbers read as
they do in the record.

Table columns appear as one summary line each (``2, 4, 6, …, 14 req/s (7
rows)``), never row by row. One row can be explained on its own, by naming a
cell: ``deployments[aws-p4de.24xlarge].monthly_cost``; its computed columns
are then shown with that row's numbers.

A quantity reached twice (``gpus_per_replica`` feeds several results) is
expanded the first time and referred to ("see above") afterwards.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from capplan import formatting, names
from capplan.language import units
from capplan.engine.evaluate import Evaluation
from capplan.errors import CapplanError
from capplan.rendering.markdown import cell as markdown_cell
from capplan.rendering.markdown import code as markdown_code
from capplan.rendering.present import row as present_row
from capplan.rendering.present import shown

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?")
_NOMINAL = re.compile(r"\bnominal\(\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\s*\)")
_SHOWN_ROWS = 3          # a column summary shows the first rows, "…" and the last
_SOURCE_WIDTH = 90       # the terminal view shortens long sources


@dataclass
class Node:
    """One line of the tree."""

    label: str                       # 'active_gpus', 'load_sweep.arrival_rate', 'deployments[aws].nodes'
    kind: str                        # 'quantity' | 'column' | 'cell'
    value: str                       # with unit; for a column, its summary
    tag: str                         # fact | policy | measurement | assumption | derived
    description: str = ""
    formula: str = ""                # as the model writes it ('' for an input)
    substituted: str = ""            # numbers in place of names ('' when not helpful)
    source: str = ""
    pending: bool = False            # a pending measurement …
    rests_on_pending: tuple[str, ...] = ()   # … or a result that rests on one
    pinned: bool = False             # a derived quantity the plan pins (formula = the one it replaces)
    repeat: bool = False             # expanded earlier in the tree
    truncated: bool = False          # children left out (--depth)
    children: list["Node"] = field(default_factory=list)


# -- resolving the name the user typed -------------------------------------------

def resolve(e: Evaluation, target: str) -> tuple[str, int | None]:
    """``(node name, row index or None)`` for a quantity, ``table.column`` or
    ``table[row].column``; an unknown name is an error that lists the nearest."""
    cell = names.cell(target)
    if cell:
        table, key, column = cell
        name = f"{table}.{column}"
        if name not in e.graph.nodes:
            raise unknown(e.model, e.plan, e.graph.nodes, target, name)
        key_column = e.model.tables[table].key
        index = e.scenario.tables[table].key_index(key_column, key)
        if index is None:
            raise no_row(e.plan, table, key, e.display(f"{table}.{key_column}"))
        return name, index
    if target in e.graph.nodes:
        return target, None
    raise unknown(e.model, e.plan, e.graph.nodes, target, target)


def unknown(model, plan, nodes, target: str, name: str) -> CapplanError:
    """``target`` (quantity ``name``) is not in the plan's graph ``nodes``: which switches it needs, or the nearest names."""
    if name in model.quantities:
        needs = model.requirement(name)
        have = ", ".join(f"{sw}: {case}" for sw, case in sorted(plan.switches.items()))
        return CapplanError(f"'{target}' exists only in plans with {needs} (this plan has {have})",
                            file=plan.file)
    return CapplanError(f"unknown quantity '{target}'{names.nearest(name, nodes, count=5)}", file=plan.file)


def no_row(plan, table: str, key: str, keys) -> CapplanError:
    """``table`` has no row ``key``; ``keys`` are its key column's values in display units."""
    shown = [formatting.key_text(v) for v in keys]
    hint = names.nearest(key, shown, cutoff=0.5) or f" (rows: {', '.join(shown)})"
    return CapplanError(f"{table} has no row '{key}'{hint}", file=plan.file)


# -- the tree ----------------------------------------------------------------------

def tree(e: Evaluation, target: str, nominal: Evaluation | None = None, depth: int | None = None) -> Node:
    """The derivation tree of ``target`` in this evaluation. ``nominal`` is the
    nominal scenario's evaluation (what ``nominal(x)`` reads in a scenario)."""
    name, index = resolve(e, target)
    return _Builder(e, nominal or e, depth).build(name, index, 0)


class _Builder:
    def __init__(self, e: Evaluation, nominal: Evaluation, depth: int | None):
        self.e = e
        self.nominal = nominal
        self.depth = depth
        self.seen: set[tuple[str, int | None]] = set()
        self.sources: set[str] = set()       # table sources already shown

    def once(self, source: str) -> str:
        """A table's source, the first time one of its columns or cells shows it."""
        if not source or source in self.sources:
            return ""
        self.sources.add(source)
        return source

    def build(self, name: str, index: int | None, level: int) -> Node:
        node = self.describe(name, index)
        key = (name, index)
        graph_node = self.e.graph.nodes[name]
        if not graph_node.deps:
            return node
        if key in self.seen:
            node.repeat = True
            return node
        self.seen.add(key)
        if self.depth is not None and level >= self.depth:
            node.truncated = True
            return node
        table = graph_node.quantity.table
        for dep in _ordered_deps(graph_node):
            dep_q = self.e.model.quantities[dep]
            dep_index = index if (index is not None and dep_q.table == table) else None
            node.children.append(self.build(dep, dep_index, level + 1))
        return node

    def describe(self, name: str, index: int | None) -> Node:
        e = self.e
        q = e.model.quantities[name]
        if q.table is None:
            r = present_row(e, name)
            return Node(label=name, kind="quantity", value=r.value, tag=r.tag, description=r.description,
                        formula=r.formula, substituted=r.substituted,
                        source=r.source + (f" ({r.date})" if r.date else ""), pending=r.pending,
                        rests_on_pending=r.rests_on_pending, pinned=r.pinned)
        table = e.model.tables[q.table]
        data = e.scenario.tables[q.table]
        node = e.graph.nodes[name]
        if index is None:
            return Node(label=name, kind="column", value=column_summary(e, name), description=q.description,
                        tag="derived" if node.formula else table.tag,
                        formula=node.formula.text if node.formula else "",
                        source="" if node.formula else self.once(_table_source(data)),
                        rests_on_pending=tuple(e.pending_inputs(name)) if node.formula else ())
        label = cell_label(e, q.table, index, q.column)
        if node.formula is None:
            meta = data.meta[index] if index < len(data.meta) else {}
            source = meta.get("source") or data.source or ""
            as_of = meta.get("as_of") or data.as_of
            if as_of:
                source = f"{source} (as of {as_of})" if source else f"as of {as_of}"
            return Node(label=label, kind="cell", value=cell_text(e, name, index), tag=table.tag,
                        description=q.description, source=self.once(source))
        return Node(label=label, kind="cell", value=cell_text(e, name, index), tag="derived",
                    description=q.description, formula=node.formula.text,
                    substituted=substitute_row(e, name, index, self.nominal),
                    rests_on_pending=tuple(e.pending_inputs(name)))


def _ordered_deps(node) -> list[str]:
    """Dependencies in the order the formula names them (then alphabetically)."""
    deps = list(node.deps)
    if node.formula is None:
        return deps
    table = node.quantity.table
    position: dict[str, int] = {}
    for m in _NAME.finditer(node.formula.text):
        token = m.group(0)
        for candidate in (token, f"{table}.{token}" if table else None):
            if candidate in deps and candidate not in position:
                position[candidate] = m.start()
    return sorted(deps, key=lambda d: (position.get(d, math.inf), d))


# -- numbers of tables -----------------------------------------------------------------

def cell_label(e: Evaluation, table: str, index: int, column: str) -> str:
    key_column = e.model.tables[table].key
    key = e.values[f"{table}.{key_column}"][index]
    if not isinstance(key, str):
        key = units.to_display(float(key), e.model.quantities[f"{table}.{key_column}"].unit)
    return f"{table}[{formatting.key_text(key)}].{column}"


def cell_text(e: Evaluation, name: str, index: int) -> str:
    return shown(e, name, index).text


def column_summary(e: Evaluation, name: str) -> str:
    """'2, 4, 6, …, 14 req/s (7 rows)'; 'PASS ×5, then FAIL ×2'; short columns in full."""
    return summarise_column(e.model.quantities[name], e.display(name))


def summarise_column(q, values) -> str:
    """:func:`column_summary` of column ``q``'s values (display units), evaluated or as the plan gives them."""
    count = len(values)
    rows = f"{count} row{'s' if count != 1 else ''}"
    if q.kind == "bool":
        runs: list[list] = []
        for v in values:
            if runs and runs[-1][0] == v:
                runs[-1][1] += 1
            else:
                runs.append([v, 1])
        return ", then ".join(f"{'PASS' if v else 'FAIL'} ×{n}" for v, n in runs) + f" ({rows})"
    if q.kind == "text":
        shown = [str(v) for v in values]
    elif q.kind == "money":
        shown = [formatting.money(v, q.unit) for v in values]
    else:
        shown = [formatting.number(v) for v in values]
    if count > _SHOWN_ROWS + 1:
        shown = shown[:_SHOWN_ROWS] + ["…", shown[-1]]
    label = "" if q.kind in ("text", "money") else formatting.unit_label(q.unit)
    return ", ".join(shown) + (f" {label}" if label else "") + f" ({rows})"


def _table_source(data) -> str:
    parts = [data.source or ""]
    if data.as_of:
        parts.append(f"as of {data.as_of}")
    return "; ".join(p for p in parts if p)


def substitute_row(e: Evaluation, name: str, index: int, nominal: Evaluation | None = None) -> str:
    """A row-wise formula with that row's numbers (and the scalars it reads)."""
    nominal = nominal or e
    node = e.graph.nodes[name]
    formula = node.formula
    table = node.quantity.table

    def value_text(ev: Evaluation, ref: str) -> str:
        q = ev.model.quantities[ref]
        if q.table is None:
            return shown(ev, ref).text
        if q.table == table:
            return cell_text(ev, ref, index)
        return column_summary(ev, ref)

    def qualified(token: str) -> str | None:
        if table and f"{table}.{token}" in formula.names:
            return f"{table}.{token}"
        return token if token in formula.names else None

    def nominal_ref(m: re.Match) -> str:
        ref = qualified(m.group(1))
        return f"{value_text(nominal, ref)} (nominal)" if ref and ref in nominal.values else m.group(0)

    text = _NOMINAL.sub(nominal_ref, formula.text)
    text = _NAME.sub(lambda m: value_text(e, qualified(m.group(0))) if qualified(m.group(0)) else m.group(0), text)
    for plain, pretty in ((" * ", " × "), (" <= ", " ≤ "), (" >= ", " ≥ ")):
        text = text.replace(plain, pretty)
    return text


# -- one line: the derivation in a message --------------------------------------------------

def derivation(e: Evaluation, target: str, nominal: Evaluation | None = None) -> str:
    """'active_gpus = active_replicas * gpus_per_replica = 9 × 1 GPU = 9 GPUs'
    (for an input: its value, tag and source)."""
    name, index = resolve(e, target)
    node = _Builder(e, nominal or e, 0).describe(name, index)
    return _line(node)


# -- rendering ------------------------------------------------------------------------------

def _line(node: Node, source_width: int | None = None) -> str:
    if node.kind == "column":
        head = f"{node.label} = {node.formula} (per row): {node.value}" if node.formula else f"{node.label}: {node.value}"
    elif node.formula and not node.pinned:
        head = f"{node.label} = {node.formula}"
        if node.substituted and node.substituted != node.formula:
            head += f" = {node.substituted}"
        head += f" = {node.value}"
    else:
        head = f"{node.label} = {node.value}"
    return head + _tail(node, source_width)


def _tail(node: Node, source_width: int | None) -> str:
    tag = node.tag + (" column" if node.kind == "column" and node.tag != "derived" else "")
    if node.pinned:
        tag += f", pinned; replaces {node.formula}" if node.formula else ", pinned"
    out = f"  [{tag}]"
    if node.pending:
        out += " ⚠ pending"
    if node.rests_on_pending:
        out += f" ⚠ rests on pending {', '.join(node.rests_on_pending)}"
    source = " ".join(node.source.split())
    if source:
        if source_width and len(source) > source_width:
            source = source[:source_width - 1].rstrip() + "…"
        out += f"  {source}"
    if node.repeat:
        out += "  (see above)"
    if node.truncated:
        out += "  (…)"
    return out


def render_text(e: Evaluation, root: Node) -> str:
    lines = [_header(e, root), "", _line(root, _SOURCE_WIDTH)]

    def walk(node: Node, prefix: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(prefix + ("└── " if last else "├── ") + _line(child, _SOURCE_WIDTH))
            walk(child, prefix + ("    " if last else "│   "))

    walk(root, "")
    pending = pending_in(root)
    if pending:
        lines += ["", f"⚠ pending measurements in this derivation: {', '.join(pending)}"]
    return "\n".join(lines) + "\n"


def render_markdown(e: Evaluation, root: Node) -> str:
    lines = [f"#### {markdown_code(root.label)} = {markdown_cell(root.value)}", "", _header(e, root, markdown=True), ""]

    def item(node: Node, level: int) -> None:
        indent = "  " * level
        text = f"**`{node.label}`** = **{markdown_cell(node.value)}**"
        meta = [node.tag + (" column" if node.kind == "column" and node.tag != "derived" else "")]
        if node.pending:
            meta.append("⚠ pending")
        if node.pinned:
            meta.append("pinned")
        if node.rests_on_pending:
            meta.append(f"⚠ rests on pending {', '.join(f'`{p}`' for p in node.rests_on_pending)}")
        text += " · " + " · ".join(meta)
        if node.source:
            text += f" · {markdown_cell(' '.join(node.source.split()))}"
        if node.repeat:
            text += " · (see above)"
        if node.truncated:
            text += " · (…)"
        if node.formula:
            if node.pinned:
                text += f"<br>replaces `{node.formula}`"
            elif node.kind == "column":
                text += f"<br>per row: `{node.formula}`"
            else:
                text += f"<br>`{node.formula}`"
                if node.substituted and node.substituted != node.formula:
                    text += f" = `{node.substituted}`"
        lines.append(f"{indent}- {text}")
        for child in node.children:
            item(child, level + 1)

    item(root, 0)
    pending = pending_in(root)
    if pending:
        lines += ["", f"> ⚠ Pending measurements in this derivation: {', '.join(f'`{p}`' for p in pending)}."]
    return "\n".join(lines) + "\n"


def _header(e: Evaluation, root: Node, markdown: bool = False) -> str:
    scenario = e.scenario
    where = f"{e.plan.file}, scenario {scenario.name}" + ("" if scenario.name == "nominal" else f" ({scenario.title})")
    if markdown:
        where = f"{markdown_code(e.plan.file)}, scenario {markdown_code(scenario.name)}" + (
            "" if scenario.name == "nominal" else f" ({markdown_cell(scenario.title)})")
        return f"{markdown_cell(root.description)} — {where}." if root.description else f"{where}."
    text = f"{root.label}"
    if root.description:
        text += f" — {root.description.rstrip('.')}"
    return f"{text}\n{where}"


def pending_in(root: Node) -> list[str]:
    """Pending inputs anywhere under ``root`` (sorted, each once)."""
    found: set[str] = set()

    def walk(node: Node) -> None:
        if node.pending:
            found.add(node.label)
        found.update(node.rests_on_pending)
        for child in node.children:
            walk(child)

    walk(root)
    return sorted(found)


def render(e: Evaluation, target: str, fmt: str = "text", nominal: Evaluation | None = None,
           depth: int | None = None) -> str:
    root = tree(e, target, nominal, depth)
    return render_markdown(e, root) if fmt == "markdown" else render_text(e, root)
