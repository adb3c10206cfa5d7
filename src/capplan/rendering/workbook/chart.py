"""The load sweep's extras: failing rows highlighted, the knee row marked, and
a chart of TTFT and TPOT (at the plan's first SLO percentile of each) against the
arrival rate with the SLO lines.

The SLO lines are two-point series whose cells are formulas over the sweep
and the SLO inputs, so the chart follows an edited SLO or sweep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.xlsx import chartxml
from capplan.rendering.workbook.layout import SheetLayout, TablePos
from capplan.xlsx.sheetmodel import Chart, Rule, Style, column_letter, quote_sheet
from capplan.rendering.workbook.cellstyles import number_format
from capplan.rendering.workbook.plantext import one_line, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book


def sweep_extras(book: Book, sheet: SheetLayout, pos: TablePos, r: int) -> None:
    """Conditional formatting of the sweep, SLO lines for the chart, the chart."""
    ws, ev = sheet.ws, sheet.ev
    last_col = column_letter(len(pos.columns))
    rows = f"A{pos.first_row}:{last_col}{pos.first_row + pos.n_rows - 1}"
    if "load_sweep.meets_slo" in pos.col_index:
        ok = column_letter(pos.col_index["load_sweep.meets_slo"])
        ws.conditional_format(rows, Rule("expression", f"${ok}{pos.first_row}=FALSE",
                                         Style(fill=book.styles.failing_row_fill)))
    if "instance_max_rate" in ev.graph.nodes and "load_sweep.arrival_rate" in pos.col_index:
        x = column_letter(pos.col_index["load_sweep.arrival_rate"])
        ws.conditional_format(rows, Rule("expression", f"${x}{pos.first_row}={book.names['instance_max_rate']}",
                                         Style(font=book.styles.knee_font, border=book.styles.knee_border)))
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
    for k, (formula, pick, expected) in enumerate(((f"=MIN({x_name})", "min", min(xs)),
                                                   (f"=MAX({x_name})", "max", max(xs)))):
        rr = r + 1 + k
        book.formula(ws, ws.cell(rr, 2), formula, "load_sweep.arrival_rate", ev.scenario.name, None, "chart",
                     expected, ("formula", "load_sweep.arrival_rate", pick, None))
        for j, q in ((3, ttft_slo.limit), (4, tpot_slo.limit)):
            book.formula(ws, ws.cell(rr, j), f"={book.names[q]}", q, ev.scenario.name, None, "chart",
                         sheet.display(q))
            book.styles.dress(ws.cell(rr, j), number_format=number_format(book.model.quantities[q].unit, "number", []))
        for j in (2, 3, 4):
            book.styles.dress(ws.cell(rr, j), book.styles.note)
    ws.charts.append(sweep_chart(book, sheet, r))
    book.chart_maker(lambda other: sweep_chart(book, other, r))


def sweep_chart(book: Book, sheet: SheetLayout, r: int) -> Chart:
    """The chart: TTFT (left axis) and TPOT (right axis) at the plan's first percentile of each,
    against the arrival rate, with the SLO lines of rows ``r`` + 1 and + 2 (:func:`sweep_extras`)."""
    ws, ev, pos = sheet.ws, sheet.ev, sheet.tables["load_sweep"]
    first_slo = {s.metric: s for s in reversed(book.model.slos)}
    ttft_slo, tpot_slo = first_slo["ttft"], first_slo["tpot"]
    ttft_col, tpot_col = f"load_sweep.{ttft_slo.column}", f"load_sweep.{tpot_slo.column}"
    look = book.cfg["chart"]
    ttft_rgb, tpot_rgb = book.styles.chart_colors
    qs = quote_sheet(ws.title)
    first, last = pos.first_row, pos.first_row + pos.n_rows - 1

    def column(name: str) -> str:
        letter = column_letter(pos.col_index[name])
        return f"{qs}!${letter}${first}:${letter}${last}"

    def line(title, x, y, color, dash=False):
        return chartxml.Line(title, x, y, color, look["line_width_emu"], look["slo_dash"] if dash else "solid",
                             None if dash else look["marker_size"])

    x, slo_x = column("load_sweep.arrival_rate"), f"{qs}!$B${r + 1}:$B${r + 2}"
    percentiles = "/".join(dict.fromkeys((ttft_slo.p, tpot_slo.p)))
    ttft, tpot = f"{ttft_slo.p} TTFT", f"{tpot_slo.p} TPOT"
    xml = chartxml.scatter(
        one_line(f"Load sweep: {percentiles} latency vs arrival rate ({ev.scenario.name})"), "arrival rate (req/s)",
        (f"{ttft} (ms)", [line(ttft, x, column(ttft_col), ttft_rgb),
                          line("TTFT SLO", slo_x, f"{qs}!$C${r + 1}:$C${r + 2}", ttft_rgb, dash=True)]),
        (f"{tpot} (ms)", [line(tpot, x, column(tpot_col), tpot_rgb),
                          line("TPOT SLO", slo_x, f"{qs}!$D${r + 1}:$D${r + 2}", tpot_rgb, dash=True)]),
        look["legend"], look["style"])
    return Chart(xml, sheet.chart_row - 1, 0, look["width_cm"], look["height_cm"])
