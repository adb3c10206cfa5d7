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
from capplan.xlsx import chartxml
from capplan.rendering.workbook.cellstyles import number_format
from capplan.xlsx.sheetmodel import Chart, Sheet, column_letter, quote_sheet
from capplan.rendering.workbook.plantext import one_line, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book

TITLE = "Simulation"
CDF_STEP = 5                     # percent of the draws between rows of the CDF table
CHARTED_ROLES = ("count", "cost")
PROBABILITY_FORMAT = "0.0%"
CHART_ROWS = 17                  # rows a CDF chart covers, with a gap below
CDF_BAND = 6                     # key results per band of the CDF table
DRIVERS_CHARS = 44               # width of the drivers column (wrapped)
COLUMN_CHARS = 16                # width of the value columns, in characters
HEADER_LINE_PT = 15              # height of one line of a wrapped header
WORD_SLACK = 5                   # characters a line of a wrapped header loses to whole words


def write_simulation(book: Book) -> None:
    """The Simulation sheet of a plan with uncertain values (none for a plan without)."""
    shown: SimulationView | None = book.view.simulation
    if shown is None:
        return
    ws = book.simulated = book.add_sheet(TITLE)
    title = ws.title
    styles = book.styles
    ws.widths[1] = 48
    set_text(ws.cell(1, 1), f"Simulation output: {shown.samples:,} draws, seed {shown.seed} (values, not formulas)")
    styles.dress(ws.cell(1, 1), styles.title)
    for r, line in enumerate((       # short lines: a long one would widen the printed page
            f"capplan simulate drew every uncertain input of the plan {shown.samples:,} times (seed {shown.seed}, "
            f"scenario {shown.scenario})",
            "and evaluated the same graph for each draw. Excel cannot rerun it: these are numbers as of the build",
            "(rebuild to update); the scenario sheets' formulas give the point plan."), start=2):
        set_text(ws.cell(r, 1), line)
        styles.dress(ws.cell(r, 1), styles.italic)
    row = _table(book, ws, 6, "Uncertain inputs", ("Input", "Draws redrawn into its domain", "Distribution"),
                 [(i.label, i.truncated, i.text) for i in shown.inputs])      # the long text last: it reads on
    row = _results(book, ws, row + 2, shown)
    top = row + 2
    row = _table(book, ws, top, "Decisions of the point plan", ("Decision", "Probability it holds"),
                 [(d.text, d.probability) for d in shown.decisions], PROBABILITY_FORMAT)
    book.odds_cells = [(d, f"{quote_sheet(title)}!$B${top + 2 + k}") for k, d in enumerate(shown.decisions)]
    _cdf(book, ws, row + 2, shown)


def _heading(book: Book, ws: Sheet, row: int, title: str, headers, numeric=()) -> None:
    """A section bar and a header row, wrapped so that a long key result's name reads whole;
    the headers of the ``numeric`` columns right-aligned, over their numbers."""
    set_text(ws.cell(row, 1), title)
    for i in range(1, len(headers) + 1):
        book.styles.dress(ws.cell(row, i), book.styles.section_fill)
    book.styles.dress(ws.cell(row, 1), book.styles.section_font)
    for i, header in enumerate(headers, start=1):
        set_text(ws.cell(row + 1, i), header)
        book.styles.dress(ws.cell(row + 1, i), book.styles.bold, book.styles.thin_bottom,
                          book.styles.header_right if i in numeric else book.styles.header_alignment)
    for i in range(2, len(headers) + 1):
        ws.widths.setdefault(i, COLUMN_CHARS)
    longest = max(len(h) for h in headers[1:]) if len(headers) > 1 else 0
    ws.heights[row + 1] = HEADER_LINE_PT * max(1, -(-longest // (COLUMN_CHARS - WORD_SLACK)))


def _table(book: Book, ws: Sheet, row: int, title: str, headers, rows, number_format: str | None = None) -> int:
    """A titled table of text and numbers; returns its last row."""
    numeric = {c for c, value in enumerate(rows[0], start=1) if not isinstance(value, str)} if rows else set()
    _heading(book, ws, row, title, headers, numeric)
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
    _heading(book, ws, row, "Key results over the draws", headers, set(range(2, len(headers))))
    for r, result in enumerate(shown.results, start=row + 2):
        set_text(ws.cell(r, 1), result.name)
        q = book.model.quantities[result.key.quantity]
        for c, value in enumerate((result.point, *result.percentiles, result.mean), start=2):
            ws.cell(r, c).number(value)
            fmt = book.number_format(result.key.quantity) if c < len(headers) - 1 else \
                number_format(q.unit, q.kind, [value, 0.5])       # a mean is no count: two decimals at least
            book.styles.dress(ws.cell(r, c), number_format=fmt)
        drivers = ws.cell(r, len(headers))
        set_text(drivers, ", ".join(f"{n} {rho:+.2f}" for n, rho in result.drivers))
        book.styles.dress(drivers, book.styles.wrapped)
        lines = -(-len(drivers.value) // DRIVERS_CHARS)
        if lines > 1:
            ws.heights[r] = HEADER_LINE_PT * lines
    ws.widths[len(headers)] = DRIVERS_CHARS
    return row + 1 + len(shown.results)


def _cdf(book: Book, ws: Sheet, row: int, shown: SimulationView) -> None:
    """The CDF of each moving key result, every CDF_STEP % of the draws, in bands of at most
    CDF_BAND results (the sheet prints one page wide), and charts of the counts and costs."""
    moving = [r for r in shown.results if r.spread]
    if not moving:
        return
    shares = range(0, 101, CDF_STEP)
    look, qs = book.cfg["chart"], quote_sheet(ws.title)
    where = {}                                # result -> (column, first row)
    for b in range(0, len(moving), CDF_BAND):
        band = moving[b:b + CDF_BAND]
        _heading(book, ws, row, "Cumulative distributions (value at or below which this share of the draws lies)",
                 ("Share of draws", *(r.name for r in band)), set(range(1, len(band) + 2)))
        first = row + 2
        for r, share in enumerate(shares, start=first):
            ws.cell(r, 1).number(share / 100)
            book.styles.dress(ws.cell(r, 1), number_format="0%")
            for c, result in enumerate(band, start=2):
                ws.cell(r, c).number(result.cdf[share])
                book.styles.dress(ws.cell(r, c), number_format=book.number_format(result.key.quantity))
                where[id(result)] = (c, first)
        row = first + len(shares) + 1
    anchor = row - 1                          # 0-based: the row below the last band's gap
    color = book.styles.chart_colors[0]
    for result in moving:
        if result.key.role not in CHARTED_ROLES:
            continue
        c, first = where[id(result)]
        letter, last = column_letter(c), first + len(shares) - 1
        line = chartxml.Line(one_line(result.name), f"{qs}!${letter}${first}:${letter}${last}",
                             f"{qs}!$A${first}:$A${last}", color, look["line_width_emu"], "solid", look["marker_size"])
        xml = chartxml.scatter(one_line(f"{result.name}: share of draws at or below"), one_line(result.name),
                               ("share of draws", [line]), None, None, look["style"], y_format="0%",
                               y_range=(0, 1))
        ws.charts.append(Chart(xml, anchor, 0, look["width_cm"] / 2, look["height_cm"] / 2))
        anchor += CHART_ROWS
