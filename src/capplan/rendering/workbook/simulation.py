"""The Simulation sheet: the Monte Carlo's results as values, labelled as such.

Excel cannot rerun a simulation, so this sheet holds numbers, not formulas,
and says so at the top with the seed and the number of draws; the scenario
sheets keep their live formulas for the point plan. It shows what the
record's uncertainty section shows (:mod:`capplan.rendering.simulation`, the
same view): the uncertain inputs, each key result's P5/P50/P95 and mean with
its drivers, the probability each decision holds, and the CDF of each key
result every 5 % of the draws, charted for the counts and costs. Written
only for a plan with uncertain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.rendering.simulation import PERCENTILES, SimulationView
from capplan.rendering.workbook import chartxml
from capplan.rendering.workbook.sheetmodel import Chart, Sheet, column_letter
from capplan.rendering.workbook.plantext import one_line, quote_sheet, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.builder import Book

TITLE = "Simulation"
CDF_STEP = 5                     # percent of the draws between rows of the CDF table
CHARTED_ROLES = ("count", "cost")
PROBABILITY_FORMAT = "0.0%"
CHART_ROWS = 16                  # rows a CDF chart covers, with a gap below
COLUMN_CHARS = 16                # width of the value columns, in characters
HEADER_LINE_PT = 15              # height of one line of a wrapped header
WORD_SLACK = 5                   # characters a line of a wrapped header loses to whole words


def write_simulation(book: Book, taken: set[str]) -> Sheet | None:
    """The Simulation sheet of a plan with uncertain values (None for a plan without),
    titled apart from the ``taken`` sheet titles."""
    shown: SimulationView | None = book.view.simulation
    if shown is None:
        return None
    title, n = TITLE, 2
    while title.lower() in taken:
        title, n = f"{TITLE}_{n}", n + 1
    ws = Sheet(title)
    styles = book.styles
    ws.widths[1] = 48
    set_text(ws.cell(1, 1), f"Simulation output: {shown.samples:,} draws, seed {shown.seed} (values, not formulas)")
    styles.dress(ws.cell(1, 1), styles.title)
    note = ws.cell(2, 1)
    set_text(note, f"capplan simulate drew every uncertain input of the plan {shown.samples:,} times (seed "
                   f"{shown.seed}, scenario {shown.scenario}) and evaluated the same graph for each draw. Excel "
                   "cannot rerun it: these are numbers as of the build (rebuild to update); the scenario sheets' "
                   "formulas give the point plan.")
    styles.dress(note, styles.italic)
    row = _table(book, ws, 4, "Uncertain inputs", ("Input", "Draws redrawn into its domain", "Distribution"),
                 [(i.label, i.truncated, i.text) for i in shown.inputs])      # the long text last: it reads on
    row = _results(book, ws, row + 2, shown)
    row = _table(book, ws, row + 2, "Decisions of the point plan", ("Decision", "Probability it holds"),
                 [(d.text, d.probability) for d in shown.decisions], PROBABILITY_FORMAT)
    _cdf(book, ws, row + 2, shown)
    return ws


def _heading(book: Book, ws: Sheet, row: int, title: str, headers) -> None:
    """A section bar and a header row, wrapped so that a long key result's name reads whole."""
    set_text(ws.cell(row, 1), title)
    for i in range(1, len(headers) + 1):
        book.styles.dress(ws.cell(row, i), book.styles.section_fill)
    book.styles.dress(ws.cell(row, 1), book.styles.section_font)
    for i, header in enumerate(headers, start=1):
        set_text(ws.cell(row + 1, i), header)
        book.styles.dress(ws.cell(row + 1, i), book.styles.bold, book.styles.thin_bottom, book.styles.header_alignment)
    for i in range(2, len(headers) + 1):
        ws.widths[i] = COLUMN_CHARS
    longest = max(len(h) for h in headers[1:]) if len(headers) > 1 else 0
    ws.heights[row + 1] = HEADER_LINE_PT * max(1, -(-longest // (COLUMN_CHARS - WORD_SLACK)))


def _table(book: Book, ws: Sheet, row: int, title: str, headers, rows, number_format: str | None = None) -> int:
    """A titled table of text and numbers; returns its last row."""
    _heading(book, ws, row, title, headers)
    for r, values in enumerate(rows, start=row + 2):
        for c, value in enumerate(values, start=1):
            cell = ws.cell(r, c)
            if isinstance(value, str):
                set_text(cell, value)
            else:
                cell.number(value)
                if number_format:
                    book.styles.dress(cell, number_format=number_format)
    return row + 1 + len(rows)


def _results(book: Book, ws: Sheet, row: int, shown: SimulationView) -> int:
    headers = ("Key result", "Point", *(f"P{p}" for p in PERCENTILES), "Mean", "Drivers (Spearman ρ)")
    _heading(book, ws, row, "Key results over the draws", headers)
    for r, result in enumerate(shown.results, start=row + 2):
        set_text(ws.cell(r, 1), result.name)
        number_format = book.number_format(result.key.quantity)
        for c, value in enumerate((result.point, *result.percentiles, result.mean), start=2):
            ws.cell(r, c).number(value)
            book.styles.dress(ws.cell(r, c), number_format=number_format)
        set_text(ws.cell(r, len(headers)), ", ".join(f"{n} {rho:+.2f}" for n, rho in result.drivers))
    return row + 1 + len(shown.results)


def _cdf(book: Book, ws: Sheet, row: int, shown: SimulationView) -> None:
    """The CDF of each moving key result, every CDF_STEP % of the draws, and charts of the counts and costs."""
    moving = [r for r in shown.results if r.spread]
    if not moving:
        return
    _heading(book, ws, row, "Cumulative distributions (value at or below which this share of the draws lies)",
             ("Share of draws", *(r.name for r in moving)))
    shares = range(0, 101, CDF_STEP)
    first = row + 2
    for r, share in enumerate(shares, start=first):
        ws.cell(r, 1).number(share / 100)
        book.styles.dress(ws.cell(r, 1), number_format="0%")
        for c, result in enumerate(moving, start=2):
            ws.cell(r, c).number(result.cdf[share])
            book.styles.dress(ws.cell(r, c), number_format=book.number_format(result.key.quantity))
    last = first + len(shares) - 1
    anchor = last + 1                         # 0-based: the row below the table's gap
    look, qs = book.cfg["chart"], quote_sheet(ws.title)
    shares_range = f"{qs}!$A${first}:$A${last}"
    color = book.styles.chart_colors[0]
    for c, result in enumerate(moving, start=2):
        if result.key.role not in CHARTED_ROLES:
            continue
        letter = column_letter(c)
        line = chartxml.Line(one_line(result.name), f"{qs}!${letter}${first}:${letter}${last}", shares_range,
                             color, look["line_width_emu"], "solid", look["marker_size"])
        xml = chartxml.scatter(one_line(f"{result.name}: share of draws at or below"), one_line(result.name),
                               ("share of draws", [line]), None, None, look["style"], y_format="0%")
        ws.charts.append(Chart(xml, anchor, 0, look["width_cm"] / 2, look["height_cm"] / 2))
        anchor += CHART_ROWS
