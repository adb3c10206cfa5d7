"""A small, deterministic .xlsx writer: worksheets as plain data, written as text.

It needs only the standard library, and nothing outside this folder: copy the
folder into another project and import it under any name (its modules import
one another relatively).

Fill a :class:`Sheet` with cells (a number, a text, a live formula with the value
it evaluates to, so the file reads right before any recalculation), each with an
immutable :class:`Style`; add widths, freeze panes, comments, data validations,
conditional formats, defined names, charts (:mod:`.chartxml`) and a page setup
(:func:`print_setup`); then :func:`to_bytes` gives the file::

    from xlsx import Sheet, Style, Font, to_bytes

    sheet = Sheet("Prices")
    sheet.cell(1, 1).text("Hourly")
    sheet.cell(1, 2).number(2.5)
    total = sheet.cell(2, 2)
    total.formula("=B1*730", 1825.0)
    total.style = Style(font=Font(bold=True), number_format='"$"#,##0.00')
    data = to_bytes([sheet])

The same sheets give the same bytes, whatever the clock or the zlib build: parts
are spelled in one way (attributes in a fixed order, numbers in their shortest
form, a formula's cached value to 12 significant digits), zip entries are
sorted and dated 1980-01-01 and stored unless asked to deflate, and the
document's date is the caller's (:class:`Properties`), never now.

Modules: :mod:`.sheetmodel` (the data), :mod:`.sheetxml` (a worksheet's XML),
:mod:`.stylesxml` (the style table), :mod:`.chartxml` (scatter and bar charts
over cell ranges), :mod:`.printing` (page setup), :mod:`.packaging` (the zip),
:mod:`.xmlescape`. Nothing here reads a file, recalculates a formula or checks
one: a formula is the caller's text.
"""

from __future__ import annotations

from .packaging import Properties, to_bytes
from .printing import print_setup
from .sheetmodel import (
    Alignment,
    Border,
    Cell,
    Chart,
    Comment,
    Fill,
    Font,
    Rule,
    Run,
    Sheet,
    Side,
    Style,
    Validation,
    column_letter,
    quote_sheet,
)

__all__ = ["Alignment", "Border", "Cell", "Chart", "Comment", "Fill", "Font", "Properties", "Rule", "Run", "Sheet",
           "Side", "Style", "Validation", "column_letter", "print_setup", "quote_sheet", "to_bytes"]
