"""The Summary on paper: one page wide, landscape, no text under ``summary.min_font_pt``.

A printout fits the Summary to the page's width, so its text prints at the
width of its columns over the page's: its columns stop at :func:`last_column`
(the options table's or the scenario grid's, whichever is wider), and the
sheet's print area ends there. A long text (a title, what flips, a decision
field, a pending measurement's source) does not run on past that column,
which would widen the page and shrink every text on it to 5-6 pt: it is
merged from its column to the last, wrapped, and its row made as tall as its
lines (neither Excel nor LibreOffice grows a row to fit merged cells).
:func:`legible` then raises every smaller font on the sheet to the minimum.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from capplan.rendering.workbook.options import IF_HOLDS
from capplan.rendering.workbook.plantext import set_text
from capplan.xlsx.printing import column_px

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.xlsx.sheetmodel import Font, Sheet

EM_PX = 0.56 * 96 / 72         # a character's width, px per pt of font size (Calibri prose, with room to spare)
LINE_PT = 1.3                  # a line's height per pt of font size
DEFAULT_PT = 11


def last_column(book: Book) -> int:
    """The Summary's last printed column: the options table's, or the last scenario's."""
    return max(2 + len(book.sheets), IF_HOLDS)


def lines(text: str, width_px: float, size: float) -> int:
    """The lines ``text`` wraps to in ``width_px`` at ``size`` pt (words kept whole)."""
    per_line = max(1, int(width_px / (EM_PX * size)))
    count = 0
    for paragraph in text.split("\n"):
        used = None
        for word in paragraph.split() or [""]:
            if used is None or used + 1 + len(word) > per_line:
                count += 1 + len(word) // (per_line + 1)
                used = len(word) % (per_line + 1)
            else:
                used += 1 + len(word)
    return max(count, 1)


def long_text(book: Book, ws: Sheet, row: int, column: int, text: str, *fonts: Font, last: int | None = None) -> None:
    """``text`` in ``row`` from ``column`` to ``last`` (:func:`last_column`: the print edge), merged,
    wrapped, the row as tall as its lines."""
    last = last or last_column(book)
    cell = ws.cell(row, column)
    set_text(cell, text)
    book.styles.dress(cell, book.styles.top_wrapped, *fonts)
    if last > column:
        ws.merged.append(f"{cell.coordinate}:{ws.cell(row, last).coordinate}")
    font = cell.style.font
    size = max((font.size if font else None) or DEFAULT_PT, book.cfg["summary"]["min_font_pt"])
    width = sum(column_px(ws.widths.get(c, 8.43)) for c in range(column, last + 1)) - 6
    height = lines(cell.value, width, size) * size * LINE_PT
    ws.heights[row] = max(ws.heights.get(row, 0), math.ceil(height * 2) / 2)


def legible(ws: Sheet, minimum: float) -> None:
    """Every font on ``ws`` smaller than ``minimum`` pt raised to it (styles are shared values: one
    new style per old one)."""
    raised: dict = {}
    for cell in ws.cells.values():
        font = cell.style.font
        if font is None or font.size is None or font.size >= minimum:
            continue
        if cell.style not in raised:
            raised[cell.style] = dataclasses.replace(cell.style, font=dataclasses.replace(font, size=minimum))
        cell.style = raised[cell.style]
