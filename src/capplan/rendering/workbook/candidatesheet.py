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

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from capplan.analysis import ranking as ranked
from capplan.rendering.workbook.cellstyles import number_format
from capplan.rendering.workbook.formulaprinter import ExcelPrinter
from capplan.rendering.workbook.lint import lint_formula
from capplan.rendering.workbook.manifest import CellInfo
from capplan.rendering.workbook.plantext import set_text
from capplan.xlsx.sheetmodel import Sheet, column_letter, quote_sheet
from capplan.errors import InternalError
from capplan.language import units

if TYPE_CHECKING:
    from capplan.rendering.workbook.builder import Book

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
class Written:
    """The Candidates sheet as the Summary links it (:mod:`.candidateoptions`)."""

    ws: Sheet
    first: int                  # the first and last candidate rows
    last: int
    columns: dict[str, int]     # quantity -> its column
    rank: int                   # the live rank's column

    def range(self, column: int) -> str:
        letter = column_letter(column)
        return f"{quote_sheet(self.ws.title)}!${letter}${self.first}:${letter}${self.last}"

    @property
    def first_rank(self) -> str:
        """The position of the candidate ranked first, as the sheet's recommendation finds it."""
        return f"MATCH(1,{self.range(self.rank)},0)"

    @property
    def recommendation(self) -> str:
        """The sheet's recommendation cell ('<candidate> on <offer>', rank 1)."""
        return f"{quote_sheet(self.ws.title)}!$B${RECOMMENDED_ROW}"


def write_candidates(book: Book, taken: set[str]) -> Written | None:
    """The Candidates sheet of a plan with ``candidates:`` (None for a plan without)."""
    view = book.view.candidates
    if view is None:
        return None
    titles = itertools.chain((TITLE,), (f"{TITLE}_{k}" for k in itertools.count(2)))
    ws = Sheet(next(t for t in titles if t.lower() not in taken))
    styles = book.styles
    r = view.ranking
    ev = r.evaluated
    set_text(ws.cell(1, 1), "Candidates ranked by the monthly cost of serving the forecast (nominal scenario)")
    styles.dress(ws.cell(1, 1), styles.title)
    set_text(ws.cell(2, 1), "Edit a price, a λ* or ρ: the formulas re-size every candidate and RANK re-orders "
                            "them. Feasible is capplan's answer as of the build (weights fit, KV pool, replica "
                            "on a node); an infeasible row ranks last.")
    styles.dress(ws.cell(2, 1), styles.italic)
    columns: dict[str, int] = {}
    col = len(TEXT) + 1
    for name in INPUTS + DERIVED:
        columns[name] = col
        col += 1
    feasible_col, rank_key_col, rank_col = col, col + 1, col + 2
    header = FIRST - 1
    for i, text in enumerate(TEXT, start=1):
        set_text(ws.cell(header, i), text)
    for name, c in columns.items():
        unit = book.model.quantities[name].unit
        set_text(ws.cell(header, c), HEADERS[name] + (f" ({unit})" if unit else ""))
    for c, text in ((feasible_col, "Feasible (1 = yes)"), (rank_key_col, "Ranked by"), (rank_col, "Rank")):
        set_text(ws.cell(header, c), text)
    for c in range(1, rank_col + 1):
        styles.dress(ws.cell(header, c), styles.bold, styles.thin_bottom, styles.header_alignment)
    ws.widths[1], ws.widths[2], ws.widths[3] = 34, 34, 44
    for name, c in columns.items():                 # money up to $9,999,999.99 and its header fit
        q = book.model.quantities[name]
        ws.widths[c] = 14 if q.kind == "money" or q.unit else 9
    ws.widths[rank_key_col] = 14
    ws.heights[header] = 45                          # headers wrap to three lines in their narrow columns
    last = FIRST + len(r.order) - 1
    key_range = f"${column_letter(rank_key_col)}${FIRST}:${column_letter(rank_key_col)}${last}"
    formats = {name: _format(book, name, [r.value(name, i) for i in r.order]) for name in INPUTS + DERIVED}
    for k, i in enumerate(r.order):
        row = FIRST + k
        c = ev.candidates[i]
        set_text(ws.cell(row, 1), c.label)
        set_text(ws.cell(row, 2), c.offer.name)
        set_text(ws.cell(row, 3), ev.tag_text(i) + (f" ±{100 * ev.band[i]:.0f} %" if ev.band[i] else ""))
        for name in INPUTS:
            cell = ws.cell(row, columns[name])
            value = _display(book, name, r.value(name, i))
            cell.number(value)
            styles.dress(cell, number_format=formats[name])
            styles.editable(cell)             # the sheet is protected: a reader edits a price or a λ* here
            book.entries.append(CellInfo(ws.title, cell.coordinate, name, ev.scenarios[0], k, "input", value))
        sized = all(np.isfinite(r.value(name, i)) for name in DERIVED) and r.value("instance_max_rate", i) > 0
        refs = _Refs(book, columns, row)
        for name in DERIVED:
            cell = ws.cell(row, columns[name])
            if not sized:                 # no λ*: nothing to size (the row is infeasible, and says why)
                set_text(cell, "–")
                continue
            formula = book.model.quantities[name].formula_for(book.plan.switches)
            text = ExcelPrinter(refs).doprint(book.formulas.folded(name, formula))
            problems = lint_formula(text, book.formulas.name_set)
            if problems:
                raise InternalError(f"compiling {name} for the Candidates sheet: {'; '.join(problems)}")
            book.formula(ws, cell, text, name, ev.scenarios[0], k, "derived", _display(book, name, r.value(name, i)))
            styles.dress(cell, number_format=formats[name])
        feasible = ws.cell(row, feasible_col)
        feasible.number(0 if ev.reasons[i] else 1)
        book.entries.append(CellInfo(ws.title, feasible.coordinate, "feasible", ev.scenarios[0], k, "input",
                                   feasible.value))
        f, monthly = f"{column_letter(feasible_col)}{row}", f"{column_letter(columns[ranked.MONTH])}{row}"
        month_value = _display(book, ranked.MONTH, r.value(ranked.MONTH, i))
        keyed = ws.cell(row, rank_key_col)
        book.formula(ws, keyed, f"IF({f}=1,{monthly},{INFEASIBLE_CELL})" if sized else INFEASIBLE_CELL,
                     "rank key", ev.scenarios[0], k, "derived", month_value if not ev.reasons[i] else INFEASIBLE)
        key = f"{column_letter(rank_key_col)}{row}"
        above = f"${column_letter(rank_key_col)}${FIRST}:{key}"
        book.formula(ws, ws.cell(row, rank_col), f"RANK({key},{key_range},1)+COUNTIF({above},{key})-1", "rank",
                     ev.scenarios[0], k, "derived", k + 1)
    set_text(ws.cell(INFEASIBLE_ROW, 1), "An infeasible row ranks by (last):")
    styles.dress(ws.cell(INFEASIBLE_ROW, 1), styles.italic)
    ranked_last = ws.cell(INFEASIBLE_ROW, 2)
    ranked_last.number(INFEASIBLE)
    styles.dress(ranked_last, number_format="0E+00")
    styles.editable(ranked_last)
    book.entries.append(CellInfo(ws.title, ranked_last.coordinate, "infeasible rank key", ev.scenarios[0], None,
                               "input", INFEASIBLE))
    rank_range = f"${column_letter(rank_col)}${FIRST}:${column_letter(rank_col)}${last}"
    best = f"MATCH(1,{rank_range},0)"
    set_text(ws.cell(RECOMMENDED_ROW, 1), "Recommended (rank 1):")
    styles.dress(ws.cell(RECOMMENDED_ROW, 1), styles.bold)
    winner = r.order[0]
    book.formula(ws, ws.cell(RECOMMENDED_ROW, 2), f'INDEX($A${FIRST}:$A${last},{best})&" on "&INDEX($B${FIRST}:$B${last},{best})',
                 "recommendation", ev.scenarios[0], None, "derived",
                 f"{ev.candidates[winner].label} on {ev.candidates[winner].offer.name}")
    return Written(ws, FIRST, last, columns, rank_col)


def _format(book: Book, name: str, values) -> str:
    """The column's number format, as wide as the candidates' own values need (λ* 4.67, not the
    plan's 4 rounded to 5)."""
    q = book.model.quantities[name]
    return number_format(q.unit, q.kind, [_display(book, name, v) for v in values if np.isfinite(v)])


def _display(book: Book, name: str, value: float) -> float:
    return units.to_display(float(value), book.model.quantities[name].unit)
