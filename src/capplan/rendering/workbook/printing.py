"""How each sheet prints (``print:`` in ``templates/workbook.yaml``).

Every sheet prints one page wide (fit to width, as many pages down as it
takes): a scenario sheet is only as wide as its five columns and a table's
band (:mod:`.layout` folds a wide table into bands), so fitting it prints
legible text on a landscape page and no page holds only a repeated column.
The column headers repeat on every page. Each chart prints on a page of its
own (manual breaks above and below it), so none is split; a chart that reads
with its table (the tornado under how far the decision holds) prints with it,
the page starting above the table (``page.starts``). The Simulation sheet's
charts go ``simulation_charts_per_page`` to a page. The Summary, up to
``summary_fit_columns`` scenarios, fits one page; with more, its scenario
columns print across pages at full size, its label columns repeated.
"""

from __future__ import annotations

from capplan.rendering.workbook.sheetmodel import Sheet

def print_setup(ws: Sheet, look: dict, title_rows: tuple[int, int] | None, *, orientation: str | None = None,
                one_page: bool = False, wide: bool = False, charts_per_page: int = 1) -> None:
    """``one_page``: fit the sheet on one page; ``wide``: too wide to fit (a Summary of many
    scenarios), so pages go across then down at full size, the label columns repeated."""
    page = ws.page
    page.paper = int(look["paper_size"])
    page.orientation = orientation or look["orientation"]
    page.margins = dict(look["margins_in"])
    page.title_rows = title_rows
    if wide:
        page.title_columns, page.across_first = (1, 2), True
    else:
        page.fit_width, page.fit_height = 1, (1 if one_page else 0)
    breaks = {r - 1 for r in page.starts if r > 1}
    alone = [c for c in ws.charts if c.alone]
    ends = set()
    for group in range(0, len(alone), charts_per_page):
        charts = alone[group:group + charts_per_page]
        if charts[0].row > 0:
            breaks.add(charts[0].row)                       # 0-based anchor = the 1-based row above
        ends.add(max(c.row + c.rows for c in charts) + 1)
    # a page ends below a chart group, unless the next page starts there anyway (no empty page)
    breaks |= {e for e in ends if not any(e - 2 <= b <= e + 2 for b in breaks)}
    page.breaks = sorted(b for b in breaks if b < ws.bottom)
