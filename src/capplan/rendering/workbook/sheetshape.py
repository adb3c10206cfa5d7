"""Scenario sheets that repeat an earlier sheet's shape, written once and filled in.

A plan of a thousand scenarios that each set one input has a thousand scenario
sheets in a handful of shapes: the same rows, formulas, styles, links,
validations and comments, different only in each formula's cached value, in
the overridden inputs' values and in the line that names the scenario. A sheet's
*shape* (:func:`shape_key`) is everything the sheet shows but those values: its
layout, each quantity's row as :func:`.scenariosheet.about` has it (derived with
its formula and pending inputs, or given with its tag, pending, pinned, and
whether it links to the nominal sheet) and each table's cells as
:func:`.scenariosheet.table_plan` has them.

The first sheet of a shape (its template) is written cell by cell, as any
sheet, and notes where each value comes from (:meth:`.builder.Book.slot`). A
sheet that repeats it holds no cells (:class:`ShapedSheet`): its XML is the
template's, spelled once with the values left open (:meth:`.sheetxml.CellXml.pieces`),
filled with the sheet's own (:meth:`Shape.spelled`) in one join. Its comments, its
chart and its names are its own, made from the template's. Its cells and its
manifest entries are written out only when a reader asks for them. A template
that fills in to other bytes than its cells spell (which would be a slot noted
wrong) is not trusted: the sheets of its shape are then spelled from their cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.rendering.workbook import scenariosheet
from capplan.rendering.workbook.layout import SheetLayout
from capplan.rendering.workbook.manifest import SheetEntries
from capplan.xlsx.sheetmodel import Cell, Run, Sheet, cached_value
from capplan.xlsx.sheetxml import OPEN_TEXT, SLOT, CellXml, constant_tail

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book

MARKERS = {"formula": ["\x01", "\x02"], "input": ["\x03"], "title": ["\x03"]}


def write_scenarios(book: Book) -> None:
    """Every scenario sheet, nominal first."""
    for sheet in book.sheets:
        write(book, sheet)


def write(book: Book, sheet: SheetLayout) -> None:
    """Write a scenario sheet: whole if it is the nominal one or the first of its shape,
    else as a sheet that repeats its shape's template."""
    if book.shapes is None or sheet is book.sheets[0]:
        scenariosheet.write_sheet(book, sheet)
        return
    key = shape_key(book, sheet)
    shape = book.shapes.get(key)
    if shape is not None:
        if not shape.usable:
            scenariosheet.write_sheet(book, sheet)
            return
        sheet.ws = ShapedSheet(book, sheet, shape)
        book.entries.append(SheetEntries(sheet.ws))
        shape.repeats += 1
        return
    shape = book.shapes[key] = Shape(book, sheet)
    book.recording = shape
    try:
        scenariosheet.write_sheet(book, sheet)
    finally:
        book.recording = None
    shape.finish()


def shape_key(book: Book, sheet: SheetLayout) -> tuple:
    """What a scenario sheet (not the nominal one) shows but its values: two sheets with
    one key spell the same XML but for their values, comments, chart and names."""
    nominal = book.sheets[0]
    tables = sheet.ev.scenario.tables
    parts: list = [sheet.table_layout(), tuple(sheet.rows), sheet.chart_row]
    for item, _ in sheet.rows:
        if item[0] == "quantity":
            parts.append(scenariosheet.about(sheet, item[1], nominal))
        elif item[0] == "table":
            data = tables[item[1]]
            parts.append((scenariosheet.table_plan(book, sheet, item[1], nominal),
                          data.source, data.as_of, data.note, repr(data.meta)))
    return tuple(parts)


class Shape:
    """A template sheet and where each of its values comes from (``slots``: by (row,
    column), a :meth:`.builder.Book.slot` source), which comments are its inputs' own,
    and how its charts are made for another sheet."""

    def __init__(self, book: Book, template: SheetLayout):
        self.book, self.template = book, template
        self.slots: dict[tuple[int, int], tuple] = {}
        self.own_comments: dict[tuple[int, int], str] = {}
        self.charts: list = []
        self.usable = True
        self.repeats = 0                          # sheets that repeat the template
        self.markers: list[str] = []              # the open places in the XML (:meth:`.sheetxml.CellXml.pieces`)
        self.groups: list[tuple] = []             # the sources by what they read (kind, name, clean, pick, picks)
        self.order: list[int] = []                # the XML's open places, as indices into the groups' spellings
        self.comments: list[tuple] = []           # (row, column, the template's comment)
        self.max_row = self.max_column = 0

    def finish(self) -> None:
        """Once the template is written: usable if every formula's value is one of its slots."""
        ws = self.template.ws
        formulas = {key for key, c in ws.cells.items() if c.kind == "f"}
        formulas.update((run.first_row + i, run.column) for run in ws.runs for i in range(len(run.formulas)))
        self.usable = formulas <= self.slots.keys()
        if not self.usable:
            return
        self._group([source for _, source in sorted(self.slots.items())])   # rows, then columns: as the XML
        self.comments = [(c.row, c.column, c.comment) for c in ws.comments()]
        self.max_row, self.max_column = ws.max_row, ws.max_column
        ws.shape = self

    def _group(self, sources: list[tuple]) -> None:
        """Sources that read one quantity alike gathered, so a sheet reads each once; ``order``
        puts their spellings back in the order of the XML."""
        groups: dict[tuple, list] = {}
        place = 0                                  # an open place's index in the XML
        for kind, name, pick, clean in sources:
            groups.setdefault((kind, name, clean, "row" if pick.__class__ is int else pick), []).append((place, pick))
            self.markers.extend(MARKERS[kind])
            place += len(MARKERS[kind])
        self.order = [0] * place
        spelled = 0                                # an open place's index in the groups' spellings
        for (kind, name, clean, pick), members in groups.items():
            self.groups.append((kind, name, clean, pick, [row for _, row in members]))
            for place, _ in members:
                for k in range(len(MARKERS[kind])):
                    self.order[place + k] = spelled
                    spelled += 1

    def rows(self, cells: CellXml, sheet: Sheet) -> str | None:
        """A sheet's <row> elements, the template's with the sheet's values; None when
        they are to be spelled from its cells (a template no sheet repeats, or one not
        trusted: see the module)."""
        if sheet is self.template.ws:
            if not self.repeats:
                return None                        # a sheet of its own: nothing to spell it for
            real = cells.cell_rows(sheet)
            pieces = cells.pieces(self._shadow(), self.markers)
            trusted = pieces is not None and cells.fill(pieces, self.spelled(cells, self.template)) == real
            cells.shapes[id(self)] = pieces if trusted else None
            return real
        pieces = cells.shapes.get(id(self))
        return None if pieces is None else cells.fill(pieces, self.spelled(cells, sheet.layout))

    def _shadow(self) -> Sheet:
        """The template with its values left open (:meth:`.sheetxml.CellXml.pieces`)."""
        ws = self.template.ws
        shadow = Sheet(ws.title)
        shadow.heights = ws.heights
        shadow.cells = dict(ws.cells)
        for key, (kind, *_) in self.slots.items():
            made = ws.cells.get(key)
            if made is None:
                continue                               # a run's cell
            open_cell = shadow.cells[key] = Cell(*key)
            open_cell.style = made.style
            if kind == "formula":
                open_cell.value, open_cell.kind, open_cell.cached = made.value, "f", SLOT
            else:
                open_cell.text(OPEN_TEXT)
        for run in ws.runs:
            open_run = Run(run.column, run.first_row, run.style, run.formulas, [SLOT] * len(run.formulas))
            shadow.runs.append(open_run)
        return shadow

    def spelled(self, cells: CellXml, sheet: SheetLayout) -> list[str]:
        """The spelling of each of ``sheet``'s open places, in the order of the XML."""
        out: list[str] = []
        add = out.append
        known, cached = cells._values, cells.cached
        for kind, name, clean, pick, rows in self.groups:
            if kind == "title":
                add(constant_tail("s", scenariosheet.subtitle(self.book, sheet)))
                continue
            value = sheet.display(name)
            if pick == "row":
                values = [value[i] for i in rows]
            else:
                values = [value if pick is None else (min(value) if pick == "min" else max(value))] * len(rows)
            if clean is not None:
                values = [clean(v) for v in values]
            if kind == "formula":
                for v in map(cached_value, values):
                    out.extend(known.get((v.__class__, v)) or cached(v))
            else:
                for v in map(scenariosheet.cell_number, values):
                    add(constant_tail("b" if isinstance(v, bool) else "n", v))
        return list(map(out.__getitem__, self.order))

    def own_comments_of(self, sheet: SheetLayout) -> list[Cell]:
        """The template's comments, its inputs' own made from ``sheet``'s inputs."""
        out = []
        for row, column, comment in self.comments:
            name = self.own_comments.get((row, column))
            cell = Cell(row, column)
            cell.comment = comment if name is None else scenariosheet.input_comment(sheet.ev.inputs[name])
            out.append(cell)
        return out


class _OnRead:
    """An attribute of a :class:`ShapedSheet` that holds nothing until it is read: the sheet
    is then written out whole (:meth:`ShapedSheet._write_out`)."""

    def __set_name__(self, owner, name: str):
        self.name = name

    def __get__(self, sheet, owner=None):
        if sheet is None:
            return self
        if sheet.__dict__[self.name] is None:
            sheet._write_out()
        return sheet.__dict__[self.name]

    def __set__(self, sheet, value):
        sheet.__dict__[self.name] = value


class ShapedSheet(Sheet):
    """A scenario sheet that repeats its shape's template: the template's furniture, its
    own names, comments and charts, and cells only when a reader asks (:meth:`entries`)."""

    def __init__(self, book: Book, layout: SheetLayout, shape: Shape):
        super().__init__(layout.ws.title)
        self.cells = self.runs = self._runs_in = None
        self._entries: list | None = None
        self.book, self.layout, self.shape = book, layout, shape
        made = shape.template.ws
        self.widths, self.heights, self.freeze = made.widths, made.heights, made.freeze
        self.validations, self.conditional = made.validations, made.conditional
        layout.ws = self
        scenariosheet.define_names(book, layout)
        self.charts = [make(layout) for make in shape.charts]

    cells = _OnRead()
    runs = _OnRead()
    _runs_in = _OnRead()

    def entries(self) -> list:
        """The sheet's manifest entries (:class:`.manifest.CellInfo`, :class:`.manifest.RunInfo`)."""
        if self._entries is None:
            self._write_out()
        return self._entries

    def _write_out(self) -> None:
        """Write the sheet whole on a scratch sheet, for a reader of its cells or entries."""
        book, layout = self.book, self.layout
        scratch = Sheet(self.title)
        listed, recording = book.entries, book.recording
        book.entries, book.recording, layout.ws = [], None, scratch
        try:
            scenariosheet.write_sheet(book, layout)
        finally:
            self._entries, book.entries, book.recording, layout.ws = book.entries, listed, recording, self
        if self.__dict__["cells"] is None:
            self.cells, self.runs, self._runs_in = scratch.cells, scratch.runs, scratch._runs_in

    def comments(self) -> list[Cell]:
        return self.shape.own_comments_of(self.layout)

    @property
    def max_row(self) -> int:
        return self.shape.max_row

    @property
    def max_column(self) -> int:
        return self.shape.max_column

