"""``expect:`` assertions: the plan states results it must produce.

An expectation holds when the value, rounded to the digits the plan writes,
equals it: ``10.96 ms`` accepts 10.955 … 10.965 ms, ``9`` accepts only a
value that rounds to 9. So a plan pins exactly the precision it claims.
"""

from __future__ import annotations

from capplan import formatting, names
from capplan.language import units
from capplan.engine.evaluate import Evaluation
from capplan.loading.plan import Expectation


def actual(e: Evaluation, target: str):
    """The value an expectation target names, in base units (or bool)."""
    cell = names.cell(target)
    if not cell:
        return e.values[target]
    table, key, column = cell
    key_column = e.model.tables[table].key
    index = e.scenario.tables[table].key_index(key_column, key)
    if index is None:
        return None
    return e.values[f"{table}.{column}"][index]


def failure(e: Evaluation, x: Expectation) -> str | None:
    """``file:line: [scenario s: ]expect target: expected …, got …`` or None if it holds."""
    message = _failure(e, x)
    if not message:
        return None
    where = f"{e.plan.file}:{x.line}" if x.line else e.plan.file
    scope = "" if e.scenario.name == "nominal" else f"scenario {e.scenario.name}: "
    return f"{where}: {scope}expect {x.target}: {message}"


def _failure(e: Evaluation, x: Expectation) -> str | None:
    name = x.target
    cell = names.cell(name)
    q = e.model.quantities[f"{cell[0]}.{cell[2]}" if cell else name]
    if q.name not in e.values:
        return f"'{q.name}' does not exist in this plan"
    got = actual(e, name)
    if got is None:
        return f"no row '{cell[1]}' in {cell[0]}"
    if q.kind == "bool":
        return None if bool(got) == x.expected else f"expected {'PASS' if x.expected else 'FAIL'}, got {'PASS' if got else 'FAIL'}"
    shown = units.to_display(float(got), x.unit)
    if abs(shown - x.expected) <= x.tolerance * (1 + 1e-9):
        return None
    return (f"expected {x.raw}, got {_number(shown)} {formatting.unit_label(x.unit)}".rstrip()
            + _formula_hint(e, q.name))


def _number(value: float) -> str:
    """The value to 8 digits; in scientific notation when the expectation's unit makes it
    too large for the record's rounding (a GiB result expected in nB)."""
    return formatting.number(value, 8) if abs(value) < units.LIMIT else f"{value:.8g}"


def _formula_hint(e: Evaluation, name: str) -> str:
    node = e.graph.nodes.get(name)
    if node is None or node.formula is None:
        return " (an input)"
    return f" (= {node.formula.text})"
