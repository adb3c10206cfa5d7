"""How a sheet prints: paper, margins, fitting, repeated titles and page breaks around charts.

A sheet prints one page wide (fit to width, as many pages down as it takes)
unless it is too wide to fit, when its pages go across, then down, at full
size, its label columns repeated. Each chart that stands alone
(:attr:`.Chart.alone`) prints on a page of its own (manual breaks above and
below it), so none is split; ``charts_per_page`` of them may share a page. A
chart that reads with the table above it is no break of its own: the writer
asks for a page to start above the table (``page.starts``). ``last_row``: the
sheet prints from A1 down to that row and across to the last cell or chart it
holds (a print area, so that a text running on past the last column neither
widens the page nor is printed); a sheet without one prints everything it holds.
"""

from __future__ import annotations

import math

from .sheetmodel import Sheet, column_letter

DEFAULT_WIDTH = 8.43            # a column's width where the sheet sets none (characters)
CM_PER_PX = 2.54 / 96


def print_setup(ws: Sheet, *, paper: int, orientation: str, margins: dict, title_rows: tuple[int, int] | None,
                one_page: bool = False, wide: bool = False, charts_per_page: int = 1, last_row: int | None = None) -> None:
    """``paper``: Excel's paperSize (9 = A4); ``margins`` in inches (left, right, top, bottom,
    header, footer); ``title_rows`` repeat on every page; ``one_page``: fit the sheet on one
    page; ``wide``: too wide to fit, so pages go across then down at full size, the first two
    (label) columns repeated."""
    page = ws.page
    page.paper = paper
    page.orientation = orientation
    page.margins = dict(margins)
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
    if last_row is not None:
        page.area = f"A1:{column_letter(last_column(ws))}{last_row}"


def column_px(width: float) -> int:
    """A column's width on screen in pixels, from its width in characters (Calibri 11's digit, 7 px, and 5 px
    of padding)."""
    return math.trunc(width * 7 + 5)


def last_column(ws: Sheet) -> int:
    """The last column a cell or a chart of ``ws`` reaches."""
    last = ws.max_column
    for chart in ws.charts:
        column, reach = chart.column + 1, chart.width_cm
        while reach > 0:
            reach -= column_px(ws.widths.get(column, DEFAULT_WIDTH)) * CM_PER_PX
            column += 1
        last = max(last, column - 1)
    return last
