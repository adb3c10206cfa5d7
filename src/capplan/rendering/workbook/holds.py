"""How far the decision holds, at the foot of the nominal sheet, with a tornado chart.

One row per input the record weighs (:mod:`capplan.rendering.holds`, the same
rows in the same order): today's value (a link to the input's cell), the
first flip point below and above it, the margins, and what flips. A flip
point with a closed form over named cells (:mod:`capplan.engine.boundaries`:
the peak at which another replica is needed is ``active_replicas ×
safe_rate_per_replica``) is a live formula, so it moves when an input is
edited; the others are capplan's numbers as of the build, in grey. The
margins are formulas over those cells, and the chart — each input's interval
as a bar around today's value — reads the margins, so it moves with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.engine.boundaries import closed_form
from capplan.rendering.workbook.formulaprinter import ExcelPrinter
from capplan.rendering.workbook.lint import lint_formula
from capplan.rendering.workbook.unitfold import fold_units
from capplan.rendering.holds import InputHolds, Side
from capplan.xlsx import chartxml
from capplan.rendering.workbook.manifest import CellInfo
from capplan.xlsx.sheetmodel import Chart, quote_sheet
from capplan.rendering.workbook.cellstyles import number_format
from capplan.rendering.workbook.labels import label
from capplan.rendering.workbook.scenariosheet import cell_number, wrapped_lines
from capplan.rendering.workbook.plantext import one_line, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.rendering.workbook.layout import SheetLayout
    from capplan.xlsx.sheetmodel import Sheet

HEADERS = ("Input", "Today", "Flip below", "Flip above", "What flips (below; above)", "Margin below",
           "Margin above")     # values carry their unit in their number format
NOTE = ("Each input alone, every other at its value: the first value below and above today's at which a decision "
        "(GPUs, nodes, a gate, the nominal fleet) changes.",
        "A flip point that is a formula moves when you edit an input; one in grey is capplan's number as of the build "
        "(rebuild to update).")
SENTENCE_COLUMN = 5              # the wide, wrapped column of the sheet
MARGIN_COLUMNS = {3: 6, 4: 7}    # flip column -> its margin's column
MARGIN_FORMAT = "0.0%"


def write_holds(book: Book) -> None:
    sheet = book.sheets[0]
    rows = book.view.holds.nominal
    if not rows:
        return
    first = foot_section(book, sheet.ws, "How far the decision holds", NOTE, HEADERS)   # with its chart
    for k, h in enumerate(rows):
        _row(book, sheet, h, first + k)
        book.holds_rows.append((h, first + k))
    _chart(book, sheet, first, first + len(rows) - 1)


def foot_section(book: Book, ws: Sheet, title: str, note: tuple[str, ...], headers: tuple[str, ...]) -> int:
    """A table's title, note lines and header row three rows under the nominal sheet's foot, on a
    page of its own; returns its first row. The note is short lines: they print within the page's width."""
    styles = book.styles
    top = ws.bottom + 3
    ws.page.starts.append(top)
    for i in range(1, len(headers) + 1):
        styles.dress(ws.cell(top, i), styles.section_fill)
    set_text(ws.cell(top, 1), title)
    styles.dress(ws.cell(top, 1), styles.section_font)
    for k, line in enumerate(note, start=1):
        set_text(ws.cell(top + k, 1), line)
        styles.dress(ws.cell(top + k, 1), styles.italic)
    header = top + len(note) + 1
    for i, text in enumerate(headers, start=1):
        c = ws.cell(header, i)
        set_text(c, text)
        styles.dress(c, styles.bold, styles.thin_bottom, styles.header_alignment)
    return header + 1


def fit_height(book: Book, ws: Sheet, r: int) -> None:
    """Row ``r`` tall enough for its wrapped name (column A) and sentence (:data:`SENTENCE_COLUMN`)."""
    cols = book.cfg["columns"]
    note, name = cols["note"], cols["name"]
    ws.heights[r] = max(15, wrapped_lines(ws.cell(r, SENTENCE_COLUMN).value, note["text_chars_per_line"])
                        * note["line_height_pt"],
                        wrapped_lines(ws.cell(r, 1).value, name["chars_per_line"]) * name["line_height_pt"])


def _row(book: Book, sheet: SheetLayout, h: InputHolds, r: int) -> None:
    ws, styles, e = sheet.ws, book.styles, sheet.ev
    scenario = e.scenario.name
    name = h.variable.name
    q = book.model.quantities[name]
    set_text(ws.cell(r, 1), label(q) if h.variable.index is None else f"{label(q)} [{_row_key(h.name)}]")
    styles.dress(ws.cell(r, 1), styles.wrapped)
    today = ws.cell(r, 2)
    book.formula(ws, today, f"={book.names[name]}", name, scenario, None, "holds", h.display(h.today))
    styles.dress(today, number_format=book.number_format(name))
    for column, side in ((3, h.below), (4, h.above)):
        if not side.found:
            continue
        cell = ws.cell(r, column)
        flip, value = _flip(book, sheet, h, side), h.display(side.flip.value)
        styles.dress(cell, number_format=flip_format(book, name, value))
        if flip is None:
            cell.number(cell_number(value))
            styles.dress(cell, styles.unit)                   # a number as of the build: grey
            book.entries.append(CellInfo(ws.title, cell.coordinate, name, scenario, None, "holds", value))
        else:
            book.formula(ws, cell, flip, name, scenario, None, "holds", value)
        if h.today:
            margin = ws.cell(r, MARGIN_COLUMNS[column])
            book.formula(ws, margin, f"=({cell.coordinate}-{today.coordinate})/{today.coordinate}", name, scenario,
                         None, "holds", float((side.flip.value - h.today) / h.today))
            styles.dress(margin, number_format=MARGIN_FORMAT)
    what = ws.cell(r, SENTENCE_COLUMN)
    set_text(what, f"Below: {h.sentence(h.below)}\nAbove: {h.sentence(h.above)}")
    styles.dress(what, styles.note, styles.wrapped)
    fit_height(book, ws, r)


def _row_key(name: str) -> str:
    """'deployments[aws-p4de.24xlarge].node_hourly_cost' -> 'aws-p4de.24xlarge'."""
    return name.split("[", 1)[1].rsplit("]", 1)[0] if "[" in name else name


def flip_format(book: Book, name: str, value) -> str:
    """A flip point's format: the quantity's, with the decimals the flip needs (19.6 req/s is no 20)."""
    q = book.model.quantities[name]
    found = number_format(q.unit, q.kind, [value])
    return found if found.count("0") > book.number_format(name).count("0") else book.number_format(name)


def _flip(book: Book, sheet: SheetLayout, h: InputHolds, side: Side) -> str | None:
    """A live formula where the flip has a closed form over named cells (None: it has not)."""
    found = closed_form(sheet.ev, h.variable, float(side.flip.value), side.direction)
    if found is None:
        return None
    formulas = book.formulas
    expr = fold_units(found.expr, formulas.factor_of, formulas.factor_of(h.variable.name))
    text = ExcelPrinter(book.refs(sheet, found.table, found.row)).doprint(expr)
    return None if lint_formula(text, formulas.name_set) else text


def _chart(book: Book, sheet: SheetLayout, first: int, last: int) -> None:
    """Horizontal bars of the two margins, overlapping at today's value: a tornado,
    the most fragile input on top as in the table, the input names at the left edge."""
    qs = quote_sheet(sheet.ws.title)
    look = book.cfg["chart"]
    xml = chartxml.tornado(one_line("How far the decision holds (nominal): margin to the first flip"),
                           "change from today's value", "0%", f"{qs}!$A${first}:$A${last}",
                           [(f"{qs}!${c}${first - 1}", f"{qs}!${c}${first}:${c}${last}", color)
                            for c, color in zip("FG", book.styles.margin_colors)])
    sheet.ws.charts.append(Chart(xml, last + 2, 0, look["width_cm"],
                                 max(look["height_cm"] / 2, 1.0 * (last - first + 3)), alone=False))
