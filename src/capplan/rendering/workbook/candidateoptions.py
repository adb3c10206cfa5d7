"""The Summary's first block for a plan with ``candidates:``: the cheapest candidates by their
live rank on the Candidates sheet, and the recommendation the record makes.

The record recommends the candidate ranked first by the monthly cost of serving the
forecast, not one of the plan's own deployment rows; a Summary that listed only the
deployments would recommend something else. Each row reads the Candidates sheet by
rank (``INDEX``/``MATCH`` on its live ``RANK`` column; the rank is the row's one input, so a
reader may ask for another), and the recommendation is the Candidates sheet's own (rank
1), so an edited price or λ* there re-orders the Summary too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.artifacts import ranking as ranked
from capplan.language import units
from capplan.rendering.workbook.manifest import CellInfo
from capplan.rendering.workbook.options import ANNUAL, MONTHLY, PER_MILLION
from capplan.rendering.workbook.plantext import set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book, Written
    from capplan.xlsx.sheetmodel import Sheet

SHOWN = 3                                      # candidates on the Summary, as on the record's first screen
RANK = PER_MILLION + 1                         # after the options table's money columns
NODES = RANK + 1                               # after the money: a candidate's name spills over B and C
LINKED = {NODES: "deployments.nodes", MONTHLY: ranked.MONTH, PER_MILLION: ranked.PER_M}
HEADERS = {1: "Candidate (the Candidates sheet)", MONTHLY: "Monthly cost", ANNUAL: "Annual cost",
           PER_MILLION: "$ per 1M output tokens", RANK: "Rank", NODES: "Nodes"}


def rows_needed(book: Book) -> int:
    """Rows the block takes: its heading and header, a row per candidate shown, the recommendation, a blank."""
    view = book.view.candidates
    return min(SHOWN, len(view.ranking.feasible)) + 4 if view is not None and view.ranking.feasible else 0


def write(book: Book, ws: Sheet, row: int, written: Written) -> int:
    """The candidates ranked 1 to :data:`SHOWN` from ``row`` (the header) and the recommendation; the next free row."""
    styles, r = book.styles, book.view.candidates.ranking
    scenario = r.evaluated.scenarios[0]
    for column, title in HEADERS.items():
        set_text(ws.cell(row, column), title)
        styles.dress(ws.cell(row, column), styles.bold, styles.thin_bottom, styles.header_alignment)
    ws.heights[row] = 30
    shown = r.feasible[:SHOWN]
    months = book.sheets[0].link("months_per_year").removeprefix("=")
    first: dict[int, float] = {}                  # the rank-1 row's money, which the recommendation repeats
    for k, i in enumerate(shown):
        at = row + 1 + k
        rank = ws.cell(at, RANK)
        rank.number(k + 1)
        styles.dress(rank, styles.center)
        styles.editable(rank)
        book.entries.append(CellInfo(ws.title, rank.coordinate, "candidates.rank", scenario, k, "input", k + 1))
        pick = f"MATCH({rank.coordinate},{written.range(written.rank)},0)"
        c = r.evaluated.candidates[i]
        name = ws.cell(at, 1)
        book.formula(ws, name, f'=INDEX({written.range(1)},{pick})&" on "&INDEX({written.range(2)},{pick})',
                     "candidates.name", scenario, k, "summary", f"{c.label} on {c.offer.name}")
        styles.dress(name, styles.bold)
        monthly = None
        for column, quantity in LINKED.items():
            cell = ws.cell(at, column)
            value = units.to_display(float(r.value(quantity, i)), book.model.quantities[quantity].unit)
            first.setdefault(column, value)
            monthly = value if column == MONTHLY else monthly
            book.formula(ws, cell, f"=INDEX({written.range(written.columns[quantity])},{pick})", quantity,
                         scenario, k, "summary", value)
            styles.dress(cell, number_format=book.number_format(quantity))
        _annual(book, ws, at, months, monthly, k)
    last = row + len(shown)
    head = ws.cell(last + 1, 1)
    best = r.evaluated.candidates[shown[0]]
    book.formula(ws, head, f'="Recommended: "&{written.recommendation}', "candidates.recommendation", scenario,
                 None, "summary", f"Recommended: {best.label} on {best.offer.name}")
    styles.dress(head, styles.bold)
    for column in (MONTHLY, PER_MILLION):
        cell, quantity = ws.cell(last + 1, column), LINKED[column]
        book.formula(ws, cell, f"=INDEX({written.range(written.columns[quantity])},{written.first_rank})", quantity,
                     scenario, None, "summary", first[column])
        styles.dress(cell, styles.bold, number_format=book.number_format(quantity))
    _annual(book, ws, last + 1, months, first[MONTHLY], None)
    styles.dress(ws.cell(last + 1, ANNUAL), styles.bold)
    for column in range(1, NODES + 1):
        styles.dress(ws.cell(last + 1, column), styles.top_rule)
    return last + 2


def _annual(book: Book, ws: Sheet, row: int, months: str, monthly: float, k: int | None) -> None:
    """The year of the monthly cost beside it (``months``: the nominal sheet's months_per_year cell); ``k``
    the candidate's place in the block, None on the recommendation's row."""
    cell = ws.cell(row, ANNUAL)
    book.formula(ws, cell, f"={ws.cell(row, MONTHLY).coordinate}*{months}", "candidates.annual_cost",
                 book.view.candidates.ranking.evaluated.scenarios[0], k, "summary",
                 monthly * book.nominal.display("months_per_year"))
    book.styles.dress(cell, number_format=book.number_format(ranked.MONTH))
