"""How each sheet prints (``print:`` in ``templates/workbook.yaml``).

A scenario sheet is wider than a page (its tables run to column W), so
fitting it to one page width printed 4-5 pt text. Scenario sheets print
instead at a fixed, legible scale on A4 or Letter, landscape, pages ordered
across then down, with the column headers and the quantity names repeated on
every page, so a table's right-hand page still says which row is which. The
Summary fits one page width while its scenario columns do
(``summary_fit_columns``); beyond that it prints like the scenario sheets,
its quantity and unit columns repeated. Each chart starts a page (a manual
break above its anchor row), so no chart is split; the Simulation sheet's
half-height charts go two to a page.
"""

from __future__ import annotations

from capplan.rendering.workbook.sheetmodel import Sheet


def print_setup(ws: Sheet, look: dict, title_rows: tuple[int, int], title_columns: tuple[int, int],
                fit_width: bool = False, charts_per_page: int = 1) -> None:
    page = ws.page
    page.paper = int(look["paper_size"])
    page.orientation = look["orientation"]
    page.margins = dict(look["margins_in"])
    page.title_rows = title_rows
    if fit_width:
        page.fit_width, page.fit_height = 1, 0
    else:
        page.scale = int(look["scale"])
        page.title_columns = title_columns
        page.across_first = True
    # 0-based anchor = the row above
    page.breaks = sorted({chart.row for chart in ws.charts[::charts_per_page] if chart.row > 0})
