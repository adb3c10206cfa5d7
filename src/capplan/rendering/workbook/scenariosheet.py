"""The scenario sheets: ``Quantity | Value | Unit | Tag | Formula``, sections and
parts in the record's order, tables as ranges (one record per row).

Inputs are the only constants. On the nominal sheet they are values styled by
tag, with their source and date as a cell comment. On a scenario sheet an
inherited input is a link (``='nominal'!$B$7``), so a change on the nominal
sheet flows into every scenario that does not override it; an overridden
input, or a derived quantity the scenario pins, is a value.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.workbook.labels import label
from capplan.rendering.workbook.validation import validate_input
from capplan.rendering.workbook.chart import sweep_extras
from capplan.rendering.workbook.layout import SheetLayout
from capplan.rendering.workbook.manifest import CellInfo
from capplan.xlsx.sheetmodel import Cell, Comment, Rule, Run, Sheet, Style, column_letter, quote_sheet
from capplan.rendering.workbook.template import COLUMNS, config
from capplan.rendering.workbook.plantext import clean_text, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book


def cell_number(value: float):
    """A display value as written to a cell: 15 significant digits, whole numbers as int."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    value = float(f"{float(value):.15g}")
    if value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def pass_fail(book: Book, ws, bool_cells: list[str]) -> None:
    """Green TRUE, red FALSE: gates and SLO checks read at a glance."""
    if bool_cells:
        ranges = " ".join(bool_cells)
        ws.conditional_format(ranges, Rule("cellIs", "TRUE", Style(fill=book.styles.pass_fill), "equal"))
        ws.conditional_format(ranges, Rule("cellIs", "FALSE", Style(fill=book.styles.fail_fill), "equal"))


@lru_cache(maxsize=4096)
def wrapped_lines(text: str, chars_per_line: int) -> int:
    """How many lines a text takes when its lines wrap at ``chars_per_line`` (sheets repeat
    the same descriptions and sources, so each is counted once)."""
    return sum(max(1, math.ceil(len(line) / chars_per_line)) for line in text.split("\n"))


def make_comment(text: str) -> Comment:
    """A cell comment sized to show its text (lines wrap at ``chars_per_line``)."""
    look = config()["comments"]
    text = clean_text(text)
    lines = wrapped_lines(text, look["chars_per_line"])
    return Comment(text, look["width_px"], max(look["min_height_px"], look["line_height_px"] * lines + 10))


def input_comment(given) -> Comment:
    lines = []
    if given.source:
        lines.append(f"Source: {given.source}")
    if given.date:
        lines.append(f"Date: {given.date}")
    if given.pending:
        lines.append("Status: PENDING measurement (placeholder value)")
    if given.pinned:
        lines.append("Pinned: this value replaces the quantity's formula in this scenario")
    lines.append(f"Tag: {given.tag}; from: {given.origin}")
    if given.note:
        lines.append(f"Note: {given.note}")
    return make_comment("\n".join(lines))


LEGEND = (("input", "input: edit"), ("override", "scenario override"), ("linked", "linked to nominal"),
          ("derived", "formula (locked)"))


def _legend_row(book: Book, ws, row: int) -> None:
    """One-line legend on a scenario sheet: a swatch per look (the Summary explains each)."""
    c = ws.cell(row, 1)
    set_text(c, "Legend (cell styles; tags colour the Tag column):")
    book.styles.dress(c, book.styles.legend_label)
    for i, (key, text) in enumerate(LEGEND, start=2):
        c = ws.cell(row, i)
        set_text(c, text)
        book.styles.swatch(c, key)
        book.styles.dress(c, book.styles.center)


def write_sheet(book: Book, sheet: SheetLayout) -> None:
    ws, ev = sheet.ws, sheet.ev
    styles = book.styles
    nominal = book.sheets[0]
    is_nominal = sheet is nominal
    cols = book.cfg["columns"]
    widths = {i: cols[key]["width"] for i, key in enumerate(COLUMNS, start=1)}
    for i in range(len(COLUMNS) + 1, book.cfg["sheets"]["table_columns"] + 1):     # a table band's further columns
        widths[i] = book.cfg["table_column_width"]
    ws.widths.update(widths)

    title = ws.cell(1, 1)
    set_text(title, book.plan.title)
    styles.dress(title, styles.title)
    sub = ws.cell(2, 1)
    set_text(sub, subtitle(book, sheet))
    book.slot(sub, ("title", None, None, None))
    styles.dress(sub, styles.italic)
    _legend_row(book, ws, book.cfg["sheets"]["legend_row"])
    for i, key in enumerate(COLUMNS, start=1):
        c = ws.cell(book.cfg["sheets"]["header_row"], i)
        set_text(c, cols[key]["title"])
        styles.dress(c, styles.bold, styles.thin_bottom)
    ws.freeze = book.cfg["sheets"]["freeze_panes"]

    bool_cells: list[str] = []
    for item, row in sheet.rows:
        kind = item[0]
        if kind in ("section", "part"):
            fill, font = (styles.section_fill, styles.section_font) if kind == "section" else \
                (styles.part_fill, styles.part_font)
            for i in range(1, len(COLUMNS) + 1):
                styles.dress(ws.cell(row, i), fill)
            c = ws.cell(row, 1)
            set_text(c, item[1])
            styles.dress(c, font)
        elif kind == "quantity":
            _write_scalar(book, sheet, item[1], row, nominal, is_nominal, bool_cells)
        elif kind == "table":
            _write_table(book, sheet, item[1], nominal, is_nominal, bool_cells)
    pass_fail(book, ws, bool_cells)
    define_names(book, sheet)


def subtitle(book: Book, sheet: SheetLayout) -> str:
    """The sheet's second line: which scenario it is and what it changes."""
    scen = sheet.ev.scenario
    if sheet is book.sheets[0]:
        return (f"Scenario: nominal (the plan as written, {book.plan.file}). "
                "Edit the yellow input cells on this sheet; the scenarios follow.")
    return (f"Scenario: {scen.name} ({scen.title}); changes: {'; '.join(scen.changes)}. "
            "Inputs in green text follow the nominal sheet; yellow cells are this scenario's own.")


def define_names(book: Book, sheet: SheetLayout) -> None:
    """Defined names, scoped to the sheet: the same formula text works on every sheet."""
    ws = sheet.ws
    qs = quote_sheet(ws.title)
    for n, r in sheet.scalar_row.items():
        ws.names[book.names[n]] = f"{qs}!$B${r}"
    for t in sheet.tables.values():
        for c in t.columns:
            ws.names[book.names[c]] = f"{qs}!{sheet.column_range(c)}"


def about(sheet: SheetLayout, name: str, nominal: SheetLayout | None) -> tuple[tuple, bool]:
    """What a quantity's row on ``sheet`` shows but its value: derived (its formula and the
    pending inputs it rests on) or given (its tag, pending, pinned), and whether it links
    to the ``nominal`` sheet's cell (an input this scenario inherits; None on that sheet)."""
    ev = sheet.ev
    node = ev.graph.nodes[name]
    given = ev.inputs.get(name) if node.formula is None else None
    if given is None:
        pending = tuple(sorted(ev.provenance.get(name, frozenset()) & sheet.pending()))
        return ("derived", node.formula.text, pending), False
    inherited = (nominal is not None and nominal.ev.inputs.get(name) == given and name in nominal.scalar_row
                 and nominal.ev.graph.nodes[name].formula is None)
    return ("given", given.tag, given.pending, given.pinned), inherited


def _write_scalar(book: Book, sheet: SheetLayout, name: str, row: int, nominal: SheetLayout, is_nominal: bool,
                  bool_cells) -> None:
    """A quantity's row: its value (B) as this scenario has it, and the label, unit, tag and
    note around it, which are the same on every sheet where the quantity is (:func:`_stamp`)."""
    ws, ev = sheet.ws, sheet.ev
    styles = book.styles
    q = book.model.quantities[name]
    node = ev.graph.nodes[name]
    scen = ev.scenario.name
    shows, inherited = about(sheet, name, None if is_nominal else nominal)
    stamp = book.stamps.get((name, shows))
    if stamp is None:
        stamp = book.stamps[(name, shows)] = _stamp(book, q, shows)
    stamp.put(ws, row - 1)
    value_cell = ws.cell(row, 2)
    expected = sheet.display(name)
    styles.dress(value_cell, number_format=book.number_format(name))
    if shows[0] == "derived":
        book.formula(ws, value_cell, book.formulas.compile(name, node.formula, sheet, nominal), name, scen, None,
                     "derived", expected)
        styles.apply(value_cell, "derived")
    else:
        given = ev.inputs[name]
        if inherited:
            book.formula(ws, value_cell, nominal.link(name), name, scen, None, "link", expected)
            styles.apply(value_cell, "derived", linked=True)
        else:
            value_cell.number(cell_number(expected))
            book.slot(value_cell, ("input", name, None, None))
            styles.editable(value_cell, override=not is_nominal or given.pinned)
            role = "pinned" if given.pinned else ("input" if is_nominal else "override")
            value_cell.comment = input_comment(given)
            book.own_comment(value_cell, name)
            book.entries.append(CellInfo(ws.title, value_cell.coordinate, name, scen, None, role, expected))
        validate_input(ws, [value_cell.coordinate], q)
    if q.kind == "bool":
        bool_cells.append(value_cell.coordinate)


class Stamp:
    """Cells that show the same on every sheet of one layout (a quantity's row but its
    value, a table's frame), made once on a scratch sheet and put on each: a plan of a
    thousand scenarios has a thousand copies of each."""

    def __init__(self, made: Sheet):
        self.cells = sorted(made.cells.items())
        self.heights = sorted(made.heights.items())

    def put(self, ws: Sheet, offset: int) -> None:
        """The cells, each ``offset`` rows below where it was made."""
        for (row, column), made in self.cells:
            cell = ws.cell(row + offset, column)
            cell.value, cell.kind, cell.style, cell.comment = made.value, made.kind, made.style, made.comment
        for row, height in self.heights:
            ws.heights[row + offset] = height


def _stamp(book: Book, q, shows: tuple) -> Stamp:
    """A quantity's label, unit, tag and note cells (``shows``: derived with its formula and
    the pending inputs it rests on, or given with its tag), and the row height they need."""
    styles, name = book.styles, q.name
    made = Sheet("stamp")
    set_text(made.cell(1, 1), label(q))
    styles.dress(made.cell(1, 1), styles.wrapped)
    set_text(made.cell(1, 3), formatting.unit_label(q.unit) if q.kind != "money" else q.unit)
    tag_cell, note = made.cell(1, 4), made.cell(1, 5)
    if shows[0] == "derived":
        _, formula, pending = shows
        if pending:          # pending measurements are flagged wherever they flow
            set_text(tag_cell, "derived (pending)")
            styles.dress(tag_cell, styles.pending_derived)
            tag_cell.comment = make_comment("Rests on pending measurement(s): " + ", ".join(pending))
        else:
            set_text(tag_cell, "derived")
        set_text(note, f"{name} = {formula}")
        styles.dress(note, styles.formula_font, styles.wrapped)
    else:
        _, tag, pending, pinned = shows
        set_text(tag_cell, ("pending measurement" if pending else tag) + (" (pinned)" if pinned else ""))
        styles.apply(tag_cell, styles.key(tag, pending))
        if pinned and q.formulas:
            set_text(note, f"{name} pinned; replaces {q.formula_for(book.plan.switches).text}")
            styles.dress(note, styles.formula_font, styles.wrapped)
        else:
            set_text(note, f"{name}: {q.description}")
            styles.dress(note, styles.note, styles.wrapped)
    _fit_row(book, made, 1, note.value, made.cell(1, 1).value, formula=note.style.font is styles.formula_font)
    return Stamp(made)


def _fit_row(book: Book, ws: Sheet, row: int, text: str, name: str | None = None, formula: bool = True) -> None:
    """A row as tall as its wrapped formula (monospaced) or description, or its wrapped
    label (spreadsheets do not resize rows when they open a file, so the height is written)."""
    cols = book.cfg["columns"]
    lines = wrapped_lines(text, cols["note"]["chars_per_line" if formula else "text_chars_per_line"])
    height = lines * cols["note"]["line_height_pt"] if lines > 1 else 0
    labelled = wrapped_lines(name, cols["name"]["chars_per_line"]) if name else 1
    if labelled > 1:                     # the label's lines are in the sheet's 11 pt
        height = max(height, labelled * cols["name"]["line_height_pt"])
    if height:
        ws.heights[row] = height


def _key_copies(book: Book, sheet: SheetLayout, pos, row: int) -> None:
    """A later band's key column: links to the first band's keys, so its rows read on their own."""
    key = pos.columns[0]
    values = [clean_if_text(v) for v in sheet.display(key)[:pos.n_rows]]
    look = Cell(0, 0)
    book.styles.dress(look, book.styles.bold, number_format=book.number_format(key))
    letter, first = sheet.table_column(key)
    texts = [f"={letter}{first + i}" for i in range(pos.n_rows)]
    book.formula_run(sheet.ws, Run(1, row, look.style, texts, values), key, sheet.ev.scenario.name, values, "label",
                     clean_if_text)


def clean_if_text(value):
    """A value as a formula caches it: text without control characters, anything else as it is."""
    return clean_text(value) if isinstance(value, str) else value


def _derived_column(book: Book, sheet: SheetLayout, nominal: SheetLayout, tname: str, col: str, values: list,
                    fmt: str, clean) -> None:
    """A table's derived column: each row's formula, as one run (:class:`.sheetmodel.Run`),
    but the key column's, as cells (they take the rows' sources as comments). ``clean``:
    how ``values`` were made from the column's display values (None: as they are)."""
    ws, pos = sheet.ws, sheet.tables[tname]
    texts = book.formulas.column(col, sheet.ev.graph.nodes[col].formula, sheet, nominal, tname, pos.n_rows)
    first, column, scenario = pos.row_of[col], pos.col_index[col], sheet.ev.scenario.name
    look = Cell(0, 0)                           # the look every cell of the column has
    book.styles.dress(look, number_format=fmt)
    book.styles.apply(look, "derived")
    if col != pos.columns[0]:
        book.formula_run(ws, Run(column, first, look.style, texts, values), col, scenario, values, "derived", clean)
        return
    for i, text in enumerate(texts):
        cell = ws.cell(first + i, column)
        cell.style = look.style
        book.formula(ws, cell, text, col, scenario, i, "derived", values[i], ("formula", col, i, clean))


def _linked_column(book: Book, sheet: SheetLayout, nominal: SheetLayout, tname: str, col: str, values: list,
                   fmt: str, clean) -> None:
    """A scenario's table column that is the nominal's in every row: a run of links to it
    (on a plan of many scenarios, most of each scenario sheet's table cells)."""
    ws, pos = sheet.ws, sheet.tables[tname]
    first, column = pos.row_of[col], pos.col_index[col]
    look = Cell(0, 0)
    book.styles.dress(look, number_format=fmt)
    book.styles.apply(look, "derived", linked=True)
    run = Run(column, first, look.style, [nominal.link(col, i) for i in range(pos.n_rows)], values)
    book.formula_run(ws, run, col, sheet.ev.scenario.name, values, "link", clean)
    letter = column_letter(column)
    validate_input(ws, [f"{letter}{first + i}" for i in range(pos.n_rows)], book.model.quantities[col])


def _column_values(sheet: SheetLayout, q) -> list:
    """A table column's values as its cells hold them (text without control characters)."""
    values = sheet.display(q.name)
    return [clean_text(v) for v in values] if q.kind == "text" else values


def table_plan(book: Book, sheet: SheetLayout, tname: str, nominal: SheetLayout) -> tuple:
    """How a table's cells are written on ``sheet``: whether it has the nominal's shape, each
    column's formula (None for a given one), and each column's cells: ``derived`` (a run of
    formulas), ``linked`` (a run of links to the nominal's column, which it repeats) or, row by
    row, ``blank`` (an optional cell left out, as on the nominal sheet), ``link``, ``value``
    or ("text", the text). Sheets whose tables plan alike differ in their values only."""
    ev = sheet.ev
    pos = sheet.tables[tname]
    data = ev.scenario.tables[tname]
    nodes = ev.graph.nodes
    nominal_data = nominal.ev.scenario.tables.get(tname)
    nominal_pos = nominal.tables.get(tname)
    same_shape = (sheet is not nominal and nominal_data is not None and nominal_pos is not None
                  and len(nominal_data.rows) == len(data.rows) and nominal_pos.columns == pos.columns)
    formulas = tuple(nodes[c].formula.text if nodes[c].formula is not None else None for c in pos.columns)
    # a row the scenario copied unchanged is the nominal's in every column (the same values, so NaN too)
    alike = [row == nominal_row for row, nominal_row in zip(data.rows, nominal_data.rows)] if same_shape else []
    columns = []
    for col in pos.columns:
        if nodes[col].formula is not None:
            columns.append("derived")
            continue
        q = book.model.quantities[col]
        values = _column_values(sheet, q)
        inherited = [alike[i] or _same(data.rows[i].get(q.column), nominal_data.rows[i].get(q.column))
                     for i in range(pos.n_rows)] if same_shape else [False] * pos.n_rows
        if col != pos.columns[0] and same_shape and all(inherited) and not any(map(_missing, values)):
            columns.append("linked")     # every row the nominal's, and none blank
        else:
            columns.append(tuple(("blank" if _missing(values[i]) else "link") if inherited[i] else
                                 (("text", data.rows[i].get(q.column)) if q.kind == "text" else "value")
                                 for i in range(pos.n_rows)))
    return same_shape, formulas, tuple(columns)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _write_table(book: Book, sheet: SheetLayout, tname: str, nominal: SheetLayout, is_nominal: bool,
                 bool_cells) -> None:
    """A table: its frame (:func:`_table_frame`, the same on every sheet of one layout),
    the key column's copy in the later bands, and each column's cells as this scenario has
    them (:func:`table_plan`)."""
    ws, ev = sheet.ws, sheet.ev
    styles = book.styles
    pos = sheet.tables[tname]
    data = ev.scenario.tables[tname]
    _, formulas, plan = table_plan(book, sheet, tname, nominal)
    key = ("table", tname, sheet.table_layout(), tuple(ws.widths.items()), data.source, data.as_of, data.note, formulas)
    frame = book.stamps.get(key)
    if frame is None:
        frame = book.stamps[key] = _table_frame(book, sheet, tname, data, formulas)
    frame.put(ws, 0)
    for header, _ in pos.bands[1:]:
        _key_copies(book, sheet, pos, header + 2)
    for col, how in zip(pos.columns, plan):
        q = book.model.quantities[col]
        c_index = pos.col_index[col]
        values = _column_values(sheet, q)
        clean = clean_text if q.kind == "text" else None
        fmt = book.number_format(col)
        if how == "derived":
            _derived_column(book, sheet, nominal, tname, col, values[:pos.n_rows], fmt, clean)
        elif how == "linked":
            _linked_column(book, sheet, nominal, tname, col, values[:pos.n_rows], fmt, clean)
        else:
            for i, state in enumerate(how):
                cell = ws.cell(pos.row_of[col] + i, c_index)
                styles.dress(cell, number_format=fmt)
                expected = values[i]
                if state == "blank":
                    styles.apply(cell, "derived", linked=True)
                elif state == "link":
                    book.formula(ws, cell, nominal.link(col, i), col, ev.scenario.name, i, "link", expected,
                                 ("formula", col, i, clean))
                    styles.apply(cell, "derived", linked=True)
                else:
                    if state == "value":
                        cell.number(cell_number(expected))
                        book.slot(cell, ("input", col, i, None))
                    else:
                        set_text(cell, state[1])
                    styles.editable(cell, override=not is_nominal)
                    if not _missing(expected):
                        book.entries.append(CellInfo(ws.title, cell.coordinate, col, ev.scenario.name, i,
                                                   "input" if is_nominal else "override", expected))
                validate_input(ws, [cell.coordinate], q)
        if q.kind == "bool":
            bool_cells.append(f"{column_letter(c_index)}{pos.row_of[col]}:"
                              f"{column_letter(c_index)}{pos.row_of[col] + pos.n_rows - 1}")
    # row sources as comments on the key cells
    for i, row_meta in enumerate(data.meta):
        lines = [f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in row_meta.items() if v]
        if lines and i < pos.n_rows:
            ws.cell(pos.first_row + i, 1).comment = make_comment("\n".join(lines))
    if tname == "load_sweep":
        sweep_extras(book, sheet, pos, pos.last_row + 1 + sum(f is not None for f in formulas))


def _table_frame(book: Book, sheet: SheetLayout, tname: str, data, formulas: tuple) -> Stamp:
    """What a table shows around its cells: each band's header and unit rows, the table's
    source as a comment, and the formulas of its computed columns under it (``formulas``,
    one per column, None for a given one)."""
    styles, pos, table = book.styles, sheet.tables[tname], book.model.tables[tname]
    made = Sheet("frame")
    made.widths = sheet.ws.widths
    computed = dict(zip(pos.columns, formulas))
    for header, band in pos.bands:
        lines = 1
        for c, col in enumerate(band, start=1):
            q = book.model.quantities[col]
            h = made.cell(header, c)
            set_text(h, label(q))
            styles.dress(h, styles.bold, styles.header_alignment, styles.thin_bottom)
            lines = max(lines, wrapped_lines(h.value, max(4, int(made.widths.get(c, 10)) - 2)))
            u = made.cell(header + 1, c)
            set_text(u, formatting.unit_label(q.unit) if q.kind not in ("money", "bool", "text") else
                     (q.unit if q.kind == "money" else ""))
            styles.dress(u, styles.unit)
            if computed[col] is not None:
                styles.dress(h, styles.part_fill)
        made.heights[header] = lines * book.cfg["columns"]["note"]["line_height_pt"] + 3
    meta = [f"Table {tname}: {table.title}. {table.description}"]
    if data.source:
        meta.append(f"Source: {data.source}")
    if data.as_of:
        meta.append(f"As of: {data.as_of}")
    if data.note:
        meta.append(f"Note: {data.note}")
    meta.append(f"Tag: {table.tag}")
    made.cell(pos.header_row, 1).comment = make_comment("\n".join(meta))
    r = pos.last_row + 1
    for col in pos.columns:
        if computed[col] is not None:
            set_text(made.cell(r, 1), label(book.model.quantities[col]))
            styles.dress(made.cell(r, 1), styles.note, styles.wrapped)
            c = made.cell(r, len(COLUMNS))
            set_text(c, f"{book.model.quantities[col].column} = {computed[col]}")
            styles.dress(c, styles.formula_font, styles.wrapped)
            _fit_row(book, made, r, c.value, made.cell(r, 1).value)
            r += 1
    return Stamp(made)
