"""The Candidates sheet: one row per candidate, re-ranked live when a price or a λ* is edited.

Input cells per row (the offer's price and GPUs per node, λ* with its tag,
ρ, GPUs per replica, the peak, the spare replicas) and live formulas printed
from the model's own formulas by the workbook's printer
(:class:`~capplan.rendering.workbook.formulaprinter.ExcelPrinter`, units
folded as on the scenario sheets): λ_safe, active and resilient replicas,
replicas per node, nodes per replica, nodes, hourly and monthly cost and $ per
1M output tokens (the month's tokens read from the nominal sheet). A
candidate's feasibility (its weights fit, its KV pool, its replica on a node)
is capplan's answer as of the build, a 1 or 0; ``RANK`` orders the feasible
ones by monthly cost (an infeasible row ranks after every feasible one) with
ties broken by row order, and the recommendation cell reads rank 1. The
cost an infeasible row ranks by is a labelled cell, not a constant inside
the formulas. Rows are written in capplan's ranking order, so a tie ranks as
capplan's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from capplan.artifacts import ranking as ranked
from capplan.rendering.workbook.cellstyles import number_format
from capplan.rendering.workbook.formulaprinter import ExcelPrinter
from capplan.rendering.workbook.lint import lint_formula
from capplan.rendering.workbook.manifest import CellInfo
from capplan.rendering.workbook.plantext import set_text
from capplan.rendering.workbook.scenariosheet import cell_number
from capplan.rendering.workbook.book import Written
from capplan.xlsx.sheetmodel import Sheet, column_letter, quote_sheet
from capplan.errors import InternalError
from capplan.language import units

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book

TITLE = "Candidates"
FIRST = 6                       # first candidate row
INFEASIBLE = 1e15               # the cost an infeasible row ranks by: after every feasible one
RECOMMENDED_ROW = 3             # the recommendation, in column B
INFEASIBLE_ROW = 4              # shown in a labelled cell the rank keys read (no constant inside a formula)
INFEASIBLE_CELL = f"$B${INFEASIBLE_ROW}"
INPUTS = ("deployments.node_hourly_cost", "deployments.gpus_per_node", "instance_max_rate", "rho_target",
          "gpus_per_replica", "peak_arrival_rate", "redundancy_replicas")
DERIVED = ("safe_rate_per_replica", "active_replicas", "resilient_replicas", "deployments.replicas_per_node",
           "deployments.nodes_per_replica", "deployments.nodes", "deployments.hourly_cost",
           "deployments.monthly_cost", "deployments.cost_per_million_tokens")
TEXT = ("Candidate", "Offer", "λ* tag")
# a row ranked as prefill and decode pools shows these as capplan computed them (its pools' formulas
# are the Prefill/decode disaggregation rows of the scenario sheets), the aggregated chain as '–'
POOLED = ("deployments.nodes", "deployments.monthly_cost", "deployments.cost_per_million_tokens")
POOLS_NOTE = (" A row ', disaggregated' is priced as a prefill pool and a decode pool: its nodes, monthly cost "
              "and $ per 1M tokens are capplan's as of the build.")
HEADERS = {"deployments.node_hourly_cost": "Price a node", "deployments.gpus_per_node": "GPUs per node",
           "instance_max_rate": "λ*", "rho_target": "ρ", "gpus_per_replica": "GPUs per replica",
           "peak_arrival_rate": "Peak", "redundancy_replicas": "Spare replicas",
           "safe_rate_per_replica": "λ_safe", "active_replicas": "Active replicas",
           "resilient_replicas": "Replicas with spares", "deployments.replicas_per_node": "Replicas per node",
           "deployments.nodes_per_replica": "Nodes per replica", "deployments.nodes": "Nodes",
           "deployments.hourly_cost": "Hourly cost", "deployments.monthly_cost": "Monthly cost",
           "deployments.cost_per_million_tokens": "$ per 1M tokens"}


class _Refs:
    """What a candidate row's formula reads: its own row's cells, else the nominal sheet."""

    def __init__(self, book: Book, columns: dict[str, int], row: int):
        self.book, self.columns, self.row = book, columns, row
        self.model = book.model

    def _own(self, name: str) -> str | None:
        return f"{column_letter(self.columns[name])}{self.row}" if name in self.columns else None

    def scalar(self, name: str) -> str:
        nominal = self.book.sheets[0]
        return self._own(name) or f"{quote_sheet(nominal.ws.title)}!{nominal.scalar_cell(name, absolute=True)}"

    def column(self, name: str) -> str:
        raise InternalError(f"the Candidates sheet reads no table column ({name})")

    def cell(self, name: str):
        return self._own(name)

    def is_bool(self, name: str) -> bool:
        return self.model.quantities[name].kind == "bool"

    def nominal(self, name: str, array: bool):
        return None


@dataclass(frozen=True)
class Columns:
    """Where a candidate row's cells go: the texts, then :data:`INPUTS` and :data:`DERIVED`
    (``quantities``), then whether it is feasible, the cost it ranks by and its live rank."""

    quantities: dict[str, int]
    feasible: int
    rank_key: int
    rank: int
    last: int                   # the last candidate row

    @classmethod
    def of(cls, candidates: int) -> Columns:
        first = len(TEXT) + 1
        quantities = {name: first + k for k, name in enumerate(INPUTS + DERIVED)}
        after = first + len(quantities)
        return cls(quantities, after, after + 1, after + 2, FIRST + candidates - 1)

    def span(self, column: int, last: int | None = None) -> str:
        """The column's candidate rows, absolute (to ``last``, a plain reference, if given)."""
        letter = column_letter(column)
        return f"${letter}${FIRST}:" + (f"{letter}{last}" if last else f"${letter}${self.last}")


def write_candidates(book: Book) -> None:
    """The Candidates sheet of a plan with ``candidates:`` (none for a plan without):
    laid out (:class:`Columns`, :func:`_frame`), then one row per candidate in capplan's
    ranking order, then the cost an infeasible row ranks by and the recommendation."""
    view = book.view.candidates
    if view is None:
        return
    r = view.ranking
    ws = book.add_sheet(TITLE)
    at = Columns.of(len(r.order))
    _frame(book, ws, at)
    formats = {name: _format(book, name, [r.value(name, i) for i in r.order]) for name in INPUTS + DERIVED}
    for k, i in enumerate(r.order):
        _candidate(book, ws, at, formats, r, k, i)
    _infeasible_key(book, ws, r.evaluated.scenarios[0])
    _recommendation(book, ws, at, r)
    book.ranked = Written(ws, FIRST, at.last, at.quantities, at.rank, RECOMMENDED_ROW)


def _frame(book: Book, ws: Sheet, at: Columns) -> None:
    """The title, the note, the header row and the column widths."""
    styles = book.styles
    set_text(ws.cell(1, 1), "Candidates ranked by the monthly cost of serving the forecast (nominal scenario)")
    styles.dress(ws.cell(1, 1), styles.title)
    set_text(ws.cell(2, 1), "Edit a price, a λ* or ρ: the formulas re-size every candidate and RANK re-orders "
                            "them. Feasible is capplan's answer as of the build (weights fit, KV pool, replica "
                            "on a node); an infeasible row ranks last.")
    styles.dress(ws.cell(2, 1), styles.italic)
    if any(c.pooled for c in book.view.candidates.evaluated.candidates):
        set_text(ws.cell(2, 1), ws.cell(2, 1).value + POOLS_NOTE)
    header = FIRST - 1
    for i, text in enumerate(TEXT, start=1):
        set_text(ws.cell(header, i), text)
    for name, c in at.quantities.items():
        unit = book.model.quantities[name].unit
        set_text(ws.cell(header, c), HEADERS[name] + (f" ({unit})" if unit else ""))
    for c, text in ((at.feasible, "Feasible (1 = yes)"), (at.rank_key, "Ranked by"), (at.rank, "Rank")):
        set_text(ws.cell(header, c), text)
    for c in range(1, at.rank + 1):
        styles.dress(ws.cell(header, c), styles.bold, styles.thin_bottom, styles.header_alignment)
    ws.widths[1], ws.widths[2], ws.widths[3] = 34, 34, 44
    for name, c in at.quantities.items():           # money up to $9,999,999.99 and its header fit
        q = book.model.quantities[name]
        ws.widths[c] = 14 if q.kind == "money" or q.unit else 9
    ws.widths[at.rank_key] = 14
    ws.heights[header] = 45                          # headers wrap to three lines in their narrow columns


def _candidate(book: Book, ws: Sheet, at: Columns, formats: dict[str, str], r, k: int, i: int) -> None:
    """Candidate ``i``, ranked ``k``-th by capplan, on its row: texts, inputs, sizing formulas, rank."""
    row, ev, styles = FIRST + k, r.evaluated, book.styles
    scenario, c = ev.scenarios[0], ev.candidates[i]
    set_text(ws.cell(row, 1), c.label)
    set_text(ws.cell(row, 2), c.offer.name)
    set_text(ws.cell(row, 3), ev.tag_text(i) + (f" ±{100 * ev.band[i]:.0f} %" if ev.band[i] else ""))
    for name in INPUTS:
        cell = ws.cell(row, at.quantities[name])
        value = _display(book, name, r.value(name, i))
        cell.number(value)
        styles.dress(cell, number_format=formats[name])
        styles.editable(cell)             # the sheet is protected: a reader edits a price or a λ* here
        book.entries.append(CellInfo(ws.title, cell.coordinate, name, scenario, k, "input", value))
    sized = all(np.isfinite(r.value(name, i)) for name in DERIVED) and r.value("instance_max_rate", i) > 0
    refs = _Refs(book, at.quantities, row)
    for name in DERIVED:
        cell = ws.cell(row, at.quantities[name])
        if c.pooled and name in POOLED and np.isfinite(r.value(name, i)):   # the pools: capplan's figures
            value = _display(book, name, r.value(name, i))
            cell.number(value)
            styles.dress(cell, number_format=formats[name])
            book.entries.append(CellInfo(ws.title, cell.coordinate, name, scenario, k, "input", value))
            continue
        if not sized or c.pooled:         # no λ*: nothing to size (the row is infeasible, and says why)
            set_text(cell, "–")
            continue
        book.formula(ws, cell, _sizing(book, refs, name), name, scenario, k, "derived",
                     _display(book, name, r.value(name, i)))
        styles.dress(cell, number_format=formats[name])
    feasible = ws.cell(row, at.feasible)
    feasible.number(0 if ev.reasons[i] else 1)
    book.entries.append(CellInfo(ws.title, feasible.coordinate, "feasible", scenario, k, "input", feasible.value))
    f, monthly = f"{column_letter(at.feasible)}{row}", f"{column_letter(at.quantities[ranked.MONTH])}{row}"
    month_value = _display(book, ranked.MONTH, r.value(ranked.MONTH, i))
    book.formula(ws, ws.cell(row, at.rank_key), f"IF({f}=1,{monthly},{INFEASIBLE_CELL})" if sized else INFEASIBLE_CELL,
                 "rank key", scenario, k, "derived", month_value if not ev.reasons[i] else INFEASIBLE)
    key = f"{column_letter(at.rank_key)}{row}"
    book.formula(ws, ws.cell(row, at.rank), f"RANK({key},{at.span(at.rank_key)},1)+COUNTIF({at.span(at.rank_key, row)},"
                 f"{key})-1", "rank", scenario, k, "derived", k + 1)


def _sizing(book: Book, refs: _Refs, name: str) -> str:
    """The model's formula of ``name`` over a candidate row's cells (units folded)."""
    formula = book.model.quantities[name].formula_for(book.plan.switches)
    text = ExcelPrinter(refs).doprint(book.formulas.folded(name, formula))
    problems = lint_formula(text, book.formulas.name_set)
    if problems:
        raise InternalError(f"compiling {name} for the Candidates sheet: {'; '.join(problems)}")
    return text


def _infeasible_key(book: Book, ws: Sheet, scenario: str) -> None:
    """The labelled cell the rank keys of infeasible rows read."""
    styles = book.styles
    set_text(ws.cell(INFEASIBLE_ROW, 1), "An infeasible row ranks by (last):")
    styles.dress(ws.cell(INFEASIBLE_ROW, 1), styles.italic)
    ranked_last = ws.cell(INFEASIBLE_ROW, 2)
    ranked_last.number(INFEASIBLE)
    styles.dress(ranked_last, number_format="0E+00")
    styles.editable(ranked_last)
    book.entries.append(CellInfo(ws.title, ranked_last.coordinate, "infeasible rank key", scenario, None,
                                 "input", INFEASIBLE))


def _recommendation(book: Book, ws: Sheet, at: Columns, r) -> None:
    """The candidate ranked 1 live, '<candidate> on <offer>'."""
    best = f"MATCH(1,{at.span(at.rank)},0)"
    set_text(ws.cell(RECOMMENDED_ROW, 1), "Recommended (rank 1):")
    book.styles.dress(ws.cell(RECOMMENDED_ROW, 1), book.styles.bold)
    ev, winner, last = r.evaluated, r.order[0], at.last
    book.formula(ws, ws.cell(RECOMMENDED_ROW, 2), f'INDEX($A${FIRST}:$A${last},{best})&" on "&'
                 f'INDEX($B${FIRST}:$B${last},{best})', "recommendation", ev.scenarios[0], None, "derived",
                 f"{ev.candidates[winner].label} on {ev.candidates[winner].offer.name}")


def _format(book: Book, name: str, values) -> str:
    """The column's number format, as wide as the candidates' own values need (λ* 4.67, not the
    plan's 4 rounded to 5)."""
    q = book.model.quantities[name]
    return number_format(q.unit, q.kind, [_display(book, name, v) for v in values if np.isfinite(v)])


def _display(book: Book, name: str, value: float) -> float:
    """``value`` in its display unit as a cell holds it: 15 significant digits, so a float's last
    bit, which numpy versions may round differently, does not change the file."""
    return cell_number(units.to_display(float(value), book.model.quantities[name].unit))
