"""The Excel workbook: every derived quantity a live formula over named cells.

Sections come from ``templates/layout.yaml`` (shared with the record), tag
colours from ``templates/palette.yaml`` (shared with the record's dependency
graph), every other look (widths, row positions, freeze panes, fonts, the
chart) from ``templates/workbook.yaml`` (:mod:`.template`, :mod:`.cellstyles`):

* **Summary** (:mod:`.summary`), one landscape page wide (:mod:`.summarypage`) – the decision
  record's fields, the options with their
  monthly and annual cost and $/1M tokens and the recommendation
  (:mod:`.options`), the top risks (:mod:`.risks`), price dates; then the
  decisions per scenario, one column per scenario, each cell a link into that
  scenario's sheet; the legend; pending measurements.
* **one sheet per scenario** (:mod:`.scenariosheet`, nominal first), all with the same
  layout (:mod:`.layout`: wide tables folded into bands a page wide) and the
  load-sweep chart (:mod:`.chart`) on a page of its own (:func:`.builder.print_sheets`). Rows
  are labelled in words with the symbol beside them (:mod:`.labels`); inputs
  have one editable look and are the only unlocked cells of the protected
  sheets (no password). Every cell
  carries a *sheet-scoped* defined name equal to the canonical quantity name,
  so the same formula text works on every sheet (:mod:`.formulas`):
  ``=CEILING(peak_arrival_rate/safe_rate_per_replica,1)``. Table columns are
  named ranges (``deployments_nodes``). A sheet alike an earlier one but for
  its values is spelled from it, values filled in (:mod:`.sheetshape`).
* at the foot of the nominal sheet, **how far the recommendation holds** (:mod:`.overtaken`): where
  another candidate or strategy becomes cheaper as the peak, a prompt, a prefix hit rate or the
  electricity price moves, the flip points capplan's search found (as of the build); then
  **how far the decision holds**
  (:mod:`.holds`): each input's first flip points, live formulas where they
  have a closed form, and a tornado chart of the margins.
* **Simulation** (:mod:`.simulation`), for a plan with uncertain values: the
  Monte Carlo's percentiles, odds and CDFs as values labelled with the seed
  and the number of draws (Excel cannot rerun it).

:func:`build_workbook` also returns a manifest (:mod:`.manifest`: which cell
holds which quantity of which scenario, and the engine's value for it) that
the tests use to compare a recalculated workbook with the engine.
:func:`render_workbook` serialises byte-for-byte deterministically
(:mod:`capplan.xlsx`: sheets as plain data and their XML, knowing nothing of plans).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from capplan.engine.evaluate import Evaluation
from capplan.language.model import Model
from capplan.errors import CapplanError
from capplan.loading.plan import Plan
from capplan.rendering.view import PlanView
from capplan.rendering.workbook.builder import Builder
from capplan.rendering.workbook.manifest import BuiltWorkbook, CellInfo, to_bytes
from capplan.rendering.workbook.template import config

__all__ = ["BuiltWorkbook", "CellInfo", "build_workbook", "config", "render_workbook", "to_bytes"]


def render_workbook(plan: Plan, evaluations: list[Evaluation], model: Model, shown: PlanView) -> bytes:
    """The .xlsx bytes for a plan; identical input gives identical bytes. ``shown`` is the plan's
    view (the record's: the workbook reads the same artifacts)."""
    with _no_cycle_collection():
        return to_bytes(build_workbook(plan, evaluations, model, shown), release=True)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a workbook is made. A workbook is about a
    thousand small objects per scenario sheet (cells, styles, manifest entries, XML
    text), none in a reference cycle, and each collection pass walks every one of them
    again: a third of the time of a 1,000-scenario workbook. Reference counting still
    frees what is dropped; a cycle made meanwhile waits for the next collection."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def build_workbook(plan: Plan, evaluations: list[Evaluation], model: Model,
                   shown: PlanView) -> BuiltWorkbook:
    if not evaluations:
        raise CapplanError("no scenario was evaluated, so there is no workbook to write", file=plan.file)
    if len(evaluations) != len(plan.scenarios) or any(
            e.scenario.name != s.name for e, s in zip(evaluations, plan.scenarios)):
        raise CapplanError("the workbook needs one evaluation per scenario, in the plan's order", file=plan.file)
    try:
        return Builder(plan, evaluations, model, shown).build()
    except CapplanError as err:
        raise err.located(file=plan.file) from None
