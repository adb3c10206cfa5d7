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

from openpyxl.chart import Reference, ScatterChart, Series

from capplan.rendering.simulation import PERCENTILES, SimulationView
from capplan.rendering.workbook.text import one_line, set_text

if TYPE_CHECKING:
    from openpyxl import Workbook

    from capplan.rendering.workbook.builder import Book

TITLE = "Simulation"
CDF_STEP = 5                     # percent of the draws between rows of the CDF table
CHARTED_ROLES = ("count", "cost")
PROBABILITY_FORMAT = "0.0%"


def write_simulation(book: Book, wb: Workbook) -> None:
    shown: SimulationView | None = book.view.simulation
    if shown is None:
        return
    title, n = TITLE, 2
    while title.lower() in (s.lower() for s in wb.sheetnames):
        title, n = f"{TITLE}_{n}", n + 1
    ws = wb.create_sheet(title)
    styles = book.styles
    ws.column_dimensions["A"].width = 48
    for column in "BCDEFG":
        ws.column_dimensions[column].width = 16
    set_text(ws.cell(1, 1), f"Simulation output: {shown.samples:,} draws, seed {shown.seed} (values, not formulas)")
    styles.dress(ws.cell(1, 1), styles.title)
    note = ws.cell(2, 1)
    set_text(note, f"capplan simulate drew every uncertain input of the plan {shown.samples:,} times (seed "
                   f"{shown.seed}, scenario {shown.scenario}) and evaluated the same graph for each draw. Excel "
                   "cannot rerun it: these are numbers as of the build (rebuild to update); the scenario sheets' "
                   "formulas give the point plan.")
    styles.dress(note, styles.italic)
    row = _table(book, ws, 4, "Uncertain inputs", ("Input", "Distribution", "Draws redrawn into its domain"),
                 [(i.label, i.text, i.truncated) for i in shown.inputs])
    row = _results(book, ws, row + 2, shown)
    row = _table(book, ws, row + 2, "Decisions of the point plan", ("Decision", "Probability it holds"),
                 [(d.text, d.probability) for d in shown.decisions], PROBABILITY_FORMAT)
    _cdf(book, ws, row + 2, shown)


def _heading(book: Book, ws, row: int, title: str, headers) -> None:
    set_text(ws.cell(row, 1), title)
    for i in range(1, len(headers) + 1):
        book.styles.dress(ws.cell(row, i), book.styles.section_fill)
    book.styles.dress(ws.cell(row, 1), book.styles.section_font)
    for i, header in enumerate(headers, start=1):
        set_text(ws.cell(row + 1, i), header)
        book.styles.dress(ws.cell(row + 1, i), book.styles.bold, book.styles.thin_bottom)


def _table(book: Book, ws, row: int, title: str, headers, rows, number_format: str | None = None) -> int:
    """A titled table of text and numbers; returns its last row."""
    _heading(book, ws, row, title, headers)
    for r, values in enumerate(rows, start=row + 2):
        for c, value in enumerate(values, start=1):
            cell = ws.cell(r, c)
            if isinstance(value, str):
                set_text(cell, value)
            else:
                cell.value = value
                if number_format:
                    book.styles.dress(cell, number_format=number_format)
    return row + 1 + len(rows)


def _results(book: Book, ws, row: int, shown: SimulationView) -> int:
    headers = ("Key result", "Point", *(f"P{p}" for p in PERCENTILES), "Mean", "Drivers (Spearman ρ)")
    _heading(book, ws, row, "Key results over the draws", headers)
    for r, result in enumerate(shown.results, start=row + 2):
        set_text(ws.cell(r, 1), result.name)
        number_format = book.number_format(result.key.quantity)
        for c, value in enumerate((result.point, *result.percentiles, result.mean), start=2):
            ws.cell(r, c).value = value
            book.styles.dress(ws.cell(r, c), number_format=number_format)
        set_text(ws.cell(r, len(headers)), ", ".join(f"{n} {rho:+.2f}" for n, rho in result.drivers))
    return row + 1 + len(shown.results)


def _cdf(book: Book, ws, row: int, shown: SimulationView) -> None:
    """The CDF of each moving key result, every CDF_STEP % of the draws, and charts of the counts and costs."""
    moving = [r for r in shown.results if r.spread]
    if not moving:
        return
    _heading(book, ws, row, "Cumulative distributions (value at or below which this share of the draws lies)",
             ("Share of draws", *(r.name for r in moving)))
    shares = range(0, 101, CDF_STEP)
    first = row + 2
    for r, share in enumerate(shares, start=first):
        ws.cell(r, 1).value = share / 100
        book.styles.dress(ws.cell(r, 1), number_format="0%")
        for c, result in enumerate(moving, start=2):
            ws.cell(r, c).value = result.cdf[share]
            book.styles.dress(ws.cell(r, c), number_format=book.number_format(result.key.quantity))
    last = first + len(shares) - 1
    anchor = last + 2
    look = book.cfg["chart"]
    for c, result in enumerate(moving, start=2):
        if result.key.role not in CHARTED_ROLES:
            continue
        chart = ScatterChart()
        chart.title = one_line(f"{result.name}: share of draws at or below")
        chart.style = 13
        chart.y_axis.title = "share of draws"
        chart.y_axis.number_format = "0%"
        chart.y_axis.scaling.min, chart.y_axis.scaling.max = 0, 1
        chart.x_axis.title = one_line(result.name)
        chart.y_axis.delete = chart.x_axis.delete = False
        series = Series(Reference(ws, min_col=1, min_row=first, max_row=last),
                        Reference(ws, min_col=c, min_row=first, max_row=last), title=one_line(result.name))
        chart.series.append(series)
        chart.legend = None
        chart.width, chart.height = look["width_cm"] / 2, look["height_cm"] / 2
        ws.add_chart(chart, f"A{anchor}")
        anchor += int(chart.height * 2) + 2
