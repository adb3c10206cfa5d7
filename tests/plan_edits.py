"""Edits to a loaded plan, the way a change in the workbook or the YAML would make
them: shared by the workbook tests (tests/test_workbook.py, tests/test_workbook_random.py)."""

from __future__ import annotations

import copy
import dataclasses
import math

from capplan.engine import montecarlo

from capplan.language import units
from capplan.language.model import standard_model
from capplan.analysis import simulation
from capplan.analysis.pipeline import Artifacts
from capplan.rendering.workbook import build_workbook
from capplan.rendering import view


def with_input(plan, name: str, raw: str):
    """The plan with a nominal input changed; scenarios that inherit it follow."""
    plan = copy.deepcopy(plan)
    old = plan.nominal.inputs[name]
    new = dataclasses.replace(old, value=units.parse_value(raw, standard_model().quantities[name].unit))
    for s in plan.scenarios:
        if s.inputs.get(name) == old:
            s.inputs[name] = new
    return plan


def with_cell(plan, table: str, row: int, column: str, raw: str):
    """The plan with a nominal table cell changed; scenarios that inherit it follow."""
    plan = copy.deepcopy(plan)
    unit = standard_model().quantities[f"{table}.{column}"].unit
    old = plan.nominal.tables[table].rows[row][column]
    new = units.parse_value(raw, unit)
    for s in plan.scenarios:
        rows = s.tables[table].rows
        if row < len(rows) and rows[row][column] == old:
            rows[row][column] = new
    return plan


def with_table(plan, table: str, rows: list[dict]):
    """The plan with a table replaced in every scenario (rows in base units);
    input columns a row leaves out take the model's default, else NaN."""
    model = standard_model()
    for c in model.tables[table].columns:
        q = model.quantities[c]
        if q.is_input and q.kind != "text":
            default = math.nan if q.default is None else units.parse_value(q.default, q.unit)
            for r in rows:
                r.setdefault(q.column, default)
    for s in plan.scenarios:
        data = s.tables[table]
        data.rows = [dict(r) for r in rows]
        data.meta = [{} for _ in rows]
        data.lines = [None for _ in rows]
    return plan


def defined_names(wb) -> set[str]:
    names = {n.lower() for n in wb.defined_names}
    for ws in wb.worksheets:
        names |= {n.lower() for n in ws.defined_names}
    return names


def few_draws(plan, evaluations):
    """A plan's simulation with 2,000 draws. The Simulation sheet holds values, not
    formulas, so for a workbook test the default 100,000 only cost time."""
    if not montecarlo.uncertain_in(plan):
        return None
    e = evaluations[0]
    return simulation.summarise(montecarlo.simulate(plan, e.model, e.values, samples=2_000), e)


def full_view(plan, evaluations):
    """The plan's view reading its analyses, each computed when first read (as ``capplan build``'s)."""
    return view.build(plan, evaluations, Artifacts(evaluations))


def workbook_of(plan, evaluations, model):
    """The plan's workbook, built as ``capplan build`` builds it from the plan's view."""
    return build_workbook(plan, evaluations, model, full_view(plan, evaluations))


def quick_view(plan, evaluations):
    """The plan's view with :func:`few_draws` as its simulation."""
    return view.build(plan, evaluations, Artifacts(evaluations, lambda: few_draws(plan, evaluations)))
