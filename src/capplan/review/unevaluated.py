"""``capplan explain`` on a plan that loads but does not evaluate.

A plan whose numbers stop somewhere (no sweep row meets the SLOs, a division
by zero) has no derivation tree to show, yet that is when a user most needs
to see what went in: an SLO typed in the wrong unit makes every sweep row
fail, and the error alone does not say so. So explain shows what the plan
gives without evaluating anything: the quantity's own value, unit, tag and
source when it is an input (or a table column or cell the plan writes), else
its formula and every input it rests on; then the error that stopped the
evaluation.
"""

from __future__ import annotations

from capplan import formatting, names
from capplan.engine import graph as graphs
from capplan.errors import CapplanError
from capplan.language import units
from capplan.language.model import Model
from capplan.loading.plan import Plan
from capplan.rendering.markdown import cell as markdown_cell
from capplan.review.explain import no_row, summarise_column, unknown


def render(plan: Plan, model: Model, target: str, scenario_name: str, error: CapplanError,
           fmt: str = "text") -> str:
    """What ``target`` rests on in the scenario, and ``error``; the error itself is
    raised again when the scenario is not the plan's (nothing to show)."""
    scenario = next((s for s in plan.scenarios if s.name == scenario_name), None)
    if scenario is None:
        raise error
    model = model.with_slos(plan.slos)
    pinned = frozenset(n for n, i in scenario.inputs.items() if i.pinned)
    graph = graphs.build(model, plan.switches, pinned, nominal=scenario is plan.nominal)
    name, row = _resolve(plan, scenario, model, graph, target)
    node = graph.nodes[name]
    if node.formula is None:
        lines = [_given(plan, scenario, model, name, row, target)]
    else:
        lines = [_given(plan, scenario, model, dep, row if model.quantities[dep].table == node.quantity.table else None)
                 for dep in graph.upstream(name) if graph.nodes[dep].formula is None]
    where = f"{plan.file}, scenario {scenario.name}"
    if fmt == "markdown":
        head = f"#### `{target}` is not computed: the plan does not evaluate"
        body = ([f"`{name} = {node.formula.text}`, from these inputs:"] if node.formula else []) + \
            [f"- {markdown_cell(line)}" for line in lines]
        return "\n".join([head, "", f"{where}.", "", *body, "", f"> {markdown_cell(str(error))}"]) + "\n"
    head = [f"{target} — {node.quantity.description.rstrip('.')}" if node.quantity.description else target, where, ""]
    if node.formula is not None:
        head += [f"{name} = {node.formula.text}  (not computed), from these inputs:"]
        lines = [f"  {line}" for line in lines]
    return "\n".join([*head, *lines, "", f"The plan does not evaluate: {error}"]) + "\n"


def _resolve(plan: Plan, scenario, model: Model, graph, target: str) -> tuple[str, int | None]:
    """``(node name, row index or None)`` as :func:`capplan.review.explain.resolve`, without values."""
    cell = names.cell(target)
    name = f"{cell[0]}.{cell[2]}" if cell else target
    if name not in graph.nodes:
        raise unknown(model, plan, graph.nodes, target, name)
    if not cell:
        return name, None
    table, key_column = cell[0], model.tables[cell[0]].key
    index = scenario.tables[table].key_index(key_column, cell[1])
    if index is None:
        raise no_row(plan, table, cell[1], _display(model, f"{table}.{key_column}", scenario.tables[table]))
    return name, index


def _display(model: Model, name: str, data) -> list:
    """A column as the plan gives it, in display units (text as it is)."""
    q = model.quantities[name]
    column = [r[q.column] for r in data.rows]
    return column if q.kind == "text" else [units.to_display(v, q.unit) for v in column]


def _given(plan: Plan, scenario, model: Model, name: str, row: int | None, label: str | None = None) -> str:
    """One input as the plan gives it: 'ttft_p95_slo = 0.8 ms  [policy]  product SLO (plans/x.yaml:12)';
    of a table column, its summary, or with ``row`` that row's cell (``label``: 'load_sweep[4].ttft_p95')."""
    q = model.quantities[name]
    if q.table is None:
        item = scenario.inputs[name]
        value = formatting.quantity(units.to_display(item.value, q.unit), q.unit, q.kind)
        where = f"{plan.file}:{item.line}" if item.line else item.origin
        source = " ".join((item.source or "").split())
        return f"{name} = {value}  [{item.tag}{', pending' if item.pending else ''}]" + \
            (f"  {source}" if source else "") + f"  ({where})"
    data = scenario.tables[q.table]
    shown = _display(model, name, data)
    tag = model.tables[q.table].tag
    if row is not None:
        line = data.lines[row] if row < len(data.lines) else None
        value = formatting.quantity(shown[row], q.unit, q.kind)
        return f"{label or name} = {value}  [{tag}]" + (f"  ({plan.file}:{line})" if line else "")
    line = plan.line(f"tables.{q.table}")
    return f"{name}: {summarise_column(q, shown)}  [{tag} column]" + (f"  ({plan.file}:{line})" if line else "")
