"""The load sweep's extras: failing rows highlighted, the knee row marked, and
a chart of TTFT and TPOT (at the plan's first SLO percentile of each) against the
arrival rate with the SLO lines.

The SLO lines are two-point series whose cells are formulas over the sweep
and the SLO inputs, so the chart follows an edited SLO or sweep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.axis import NumericAxis
from openpyxl.formatting.rule import FormulaRule
from openpyxl.utils import get_column_letter

from capplan.rendering.workbook.layout import SheetLayout, TablePos
from capplan.rendering.workbook.manifest import CellInfo
from capplan.rendering.workbook.styles import number_format
from capplan.rendering.workbook.text import one_line, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.builder import Book


def sweep_extras(book: Book, sheet: SheetLayout, pos: TablePos, r: int) -> None:
    """Conditional formatting of the sweep, SLO lines for the chart, the chart."""
    ws, ev = sheet.ws, sheet.ev
    last_col = get_column_letter(len(pos.columns))
    rows = f"A{pos.first_row}:{last_col}{pos.first_row + pos.n_rows - 1}"
    if "load_sweep.meets_slo" in pos.col_index:
        ok = get_column_letter(pos.col_index["load_sweep.meets_slo"])
        ws.conditional_formatting.add(rows, FormulaRule(formula=[f"${ok}{pos.first_row}=FALSE"],
                                                        fill=book.styles.failing_row_fill))
    if "instance_max_rate" in ev.graph.nodes and "load_sweep.arrival_rate" in pos.col_index:
        x = get_column_letter(pos.col_index["load_sweep.arrival_rate"])
        ws.conditional_formatting.add(rows, FormulaRule(
            formula=[f"${x}{pos.first_row}={book.names['instance_max_rate']}"],
            font=book.styles.knee_font, border=book.styles.knee_border))
    first_slo = {s.metric: s for s in reversed(book.model.slos)}    # the plan's first TTFT and TPOT SLO
    if "ttft" not in first_slo or "tpot" not in first_slo:
        return
    ttft_slo, tpot_slo = first_slo["ttft"], first_slo["tpot"]
    ttft_col, tpot_col = f"load_sweep.{ttft_slo.column}", f"load_sweep.{tpot_slo.column}"
    needed = ("load_sweep.arrival_rate", ttft_col, tpot_col)
    if not all(n in pos.col_index for n in needed) or not all(
            n in ev.graph.nodes for n in (ttft_slo.limit, tpot_slo.limit)):
        return
    # SLO lines: two points each, from the lowest to the highest swept rate
    grey = book.styles.unit
    label = ws.cell(r, 1)
    set_text(label, "Chart: SLO lines")
    book.styles.dress(label, grey)
    for j, h in enumerate(("arrival_rate", ttft_slo.limit, tpot_slo.limit), start=2):
        c = ws.cell(r, j)
        set_text(c, h)
        book.styles.dress(c, grey)
    xs = sheet.display("load_sweep.arrival_rate")
    x_name = book.names["load_sweep.arrival_rate"]
    for k, (formula, expected) in enumerate(((f"=MIN({x_name})", min(xs)), (f"=MAX({x_name})", max(xs)))):
        rr = r + 1 + k
        ws.cell(rr, 2).value = formula
        book.cells.append(CellInfo(ws.title, f"B{rr}", "load_sweep.arrival_rate", ev.scenario.name, None,
                                   "chart", expected))
        for j, q in ((3, ttft_slo.limit), (4, tpot_slo.limit)):
            ws.cell(rr, j).value = f"={book.names[q]}"
            book.styles.dress(ws.cell(rr, j), number_format=number_format(book.model.quantities[q].unit, "number", []))
            book.cells.append(CellInfo(ws.title, f"{get_column_letter(j)}{rr}", q, ev.scenario.name, None,
                                       "chart", sheet.display(q)))
        for j in (2, 3, 4):
            book.styles.dress(ws.cell(rr, j), book.styles.note)
    # the chart: p95 TTFT (left axis) and p95 TPOT (right axis) against the arrival rate
    look = book.cfg["chart"]
    ttft_rgb, tpot_rgb = book.styles.chart_colors
    first, last = pos.first_row, pos.first_row + pos.n_rows - 1
    xref = Reference(ws, min_col=pos.col_index["load_sweep.arrival_rate"], min_row=first, max_row=last)
    slo_x = Reference(ws, min_col=2, min_row=r + 1, max_row=r + 2)

    def series(col, row_from, row_to, title, xvalues, color, dash=None, marker=True):
        s = Series(Reference(ws, min_col=col, min_row=row_from, max_row=row_to), xvalues, title=title)
        s.graphicalProperties.line.solidFill = color
        s.graphicalProperties.line.width = look["line_width_emu"]
        if dash:
            s.graphicalProperties.line.dashStyle = dash
        s.marker.symbol = "circle" if marker else "none"
        if marker:
            s.marker.size = look["marker_size"]
            s.marker.graphicalProperties.solidFill = color
            s.marker.graphicalProperties.line.solidFill = color
        s.smooth = False
        return s

    ttft = ScatterChart()
    percentiles = "/".join(dict.fromkeys((ttft_slo.p, tpot_slo.p)))
    ttft.title = one_line(f"Load sweep: {percentiles} latency vs arrival rate ({ev.scenario.name})")
    ttft.style = look["style"]
    ttft.x_axis.title = "arrival rate (req/s)"
    ttft.y_axis.title = f"{ttft_slo.p} TTFT (ms)"
    ttft.series.append(series(pos.col_index[ttft_col], first, last, f"{ttft_slo.p} TTFT", xref, ttft_rgb))
    ttft.series.append(series(3, r + 1, r + 2, "TTFT SLO", slo_x, ttft_rgb, dash=look["slo_dash"], marker=False))
    tpot = ScatterChart()
    tpot.x_axis = NumericAxis(axId=300, crossAx=200, delete=True)   # the secondary group's own, hidden
    tpot.y_axis.axId = 200
    tpot.y_axis.crossAx = 300
    tpot.y_axis.title = f"{tpot_slo.p} TPOT (ms)"
    tpot.y_axis.crosses = "max"
    tpot.series.append(series(pos.col_index[tpot_col], first, last, f"{tpot_slo.p} TPOT", xref, tpot_rgb))
    tpot.series.append(series(4, r + 1, r + 2, "TPOT SLO", slo_x, tpot_rgb, dash=look["slo_dash"], marker=False))
    for axis in (ttft.x_axis, ttft.y_axis, tpot.y_axis):
        axis.delete = False
    ttft.y_axis.majorGridlines = None
    ttft.x_axis.majorGridlines = None
    ttft += tpot
    ttft.legend.position = look["legend"]
    ttft.width = look["width_cm"]
    ttft.height = look["height_cm"]
    ws.add_chart(ttft, f"A{r + 4}")
