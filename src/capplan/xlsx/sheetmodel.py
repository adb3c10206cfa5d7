"""A worksheet as plain data: rows of typed cells with styles, and the
sheet's furniture (widths, heights, freeze panes, validations, conditional
formats, names, comments, charts, page setup).

Any sheet is written by filling one of these; :mod:`.sheetxml` serialises it. Styles are immutable values
(:class:`Style` and its parts), so cells that look alike share one object and
the style table is built once, at serialisation. Nothing here imports
openpyxl: its cell objects cost ~40 ms per sheet to create and write.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from functools import cache


@dataclass(frozen=True)
class Font:
    bold: bool = False
    italic: bool = False
    color: str | None = None          # hex RGB
    size: float | None = None
    name: str | None = None


@dataclass(frozen=True)
class Fill:
    color: str                        # hex RGB, a solid fill


@dataclass(frozen=True)
class Side:
    style: str                        # thin, medium, thick
    color: str | None = None


@dataclass(frozen=True)
class Border:
    left: Side | None = None
    right: Side | None = None
    top: Side | None = None
    bottom: Side | None = None


@dataclass(frozen=True)
class Alignment:
    horizontal: str | None = None
    vertical: str | None = None
    wrap: bool = False


@dataclass(frozen=True)
class Style:
    """A cell's look; also a conditional format's (font, fill and border only)."""

    font: Font | None = None
    fill: Fill | None = None
    border: Border | None = None
    alignment: Alignment | None = None
    number_format: str = "General"
    locked: bool = True               # on a protected sheet, only unlocked cells take an edit


PLAIN = Style()
STYLE_FIELD = {Font: "font", Fill: "fill", Border: "border", Alignment: "alignment"}


ROW_CM = 0.529                        # a row of the default height, 15 pt


@cache
def column_letter(index: int) -> str:
    """1 -> A, 27 -> AA."""
    letters = ""
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def quote_sheet(title: str) -> str:
    """A sheet title as a formula or a chart series names it: ``'it''s here'``."""
    return "'" + title.replace("'", "''") + "'"


@dataclass
class Comment:
    text: str
    width_px: int
    height_px: int


class Cell:
    """One cell: ``kind`` is n (number), s (text), b (boolean) or f (formula,
    ``value`` without the leading '=', ``cached`` the engine's value for it)."""

    __slots__ = ("cached", "column", "comment", "kind", "row", "style", "value")

    def __init__(self, row: int, column: int):
        self.row, self.column = row, column
        self.value = None
        self.kind = "n"
        self.cached = None
        self.style = PLAIN
        self.comment: Comment | None = None

    @property
    def coordinate(self) -> str:
        return f"{column_letter(self.column)}{self.row}"

    def text(self, value: str) -> None:
        self.value, self.kind = value, "s"

    def number(self, value) -> None:
        """A constant: a number, a boolean, or None for an empty cell."""
        self.value, self.kind = value, ("b" if isinstance(value, bool) else "n")

    def formula(self, text: str, cached) -> None:
        """A live formula (``=...``) with the value it evaluates to, so the file
        reads right before any recalculation."""
        self.value, self.kind = sys.intern(text.removeprefix("=")), "f"   # every scenario sheet's copy, one string
        self.cached = cached_value(cached)


def cached_value(value):
    """A formula's value as its cell caches it: a Python number (not numpy's), none for NaN or ±inf."""
    if value.__class__ is float:          # as a rule (a table column holds thousands)
        return value if math.isfinite(value) else None
    if hasattr(value, "item"):            # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class Run:
    """One column's cells down consecutive rows, alike but for their values: a table's
    derived column (each row the same formula about its own row), a later band's copy of
    its key column, a scenario's links to a nominal column it does not change.

    A year of hourly traffic is 8,760 rows of a dozen formula columns; as :class:`Cell`
    objects each of those cells costs about ten times what it costs as a run's entry, to
    make and to spell. ``formulas`` are the cells' texts (``=...``), ``cached`` the
    values they evaluate to (:func:`cached_value`)."""

    __slots__ = ("cached", "column", "first_row", "formulas", "style")

    def __init__(self, column: int, first_row: int, style: Style, formulas: list[str], cached: list):
        if len(formulas) != len(cached):
            raise ValueError("a run needs one cached value per formula")
        self.column, self.first_row, self.style = column, first_row, style
        self.formulas = [text.removeprefix("=") for text in formulas]
        self.cached = [cached_value(v) for v in cached]

    @property
    def last_row(self) -> int:
        return self.first_row + len(self.formulas) - 1

    def cells(self) -> list[Cell]:
        """The run as cells, for readers that want each one (tests, :meth:`Sheet.all_cells`)."""
        out = []
        for i, (text, cached) in enumerate(zip(self.formulas, self.cached)):
            cell = Cell(self.first_row + i, self.column)
            cell.value, cell.kind, cell.cached, cell.style = text, "f", cached, self.style
            out.append(cell)
        return out


@dataclass
class Validation:
    """A data validation shared by cells (Excel's rule attributes, and its cells): its
    ``errorTitle`` at most :data:`TITLE_LIMIT` characters, its ``error`` :data:`MESSAGE_LIMIT`
    (:func:`fit`)."""

    rule: dict
    cells: list[str] = field(default_factory=list)


TITLE_LIMIT = 32        # Excel's limit for a validation's error title
MESSAGE_LIMIT = 255     # and for its error message


def fit(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis its last where cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass(frozen=True)
class Rule:
    """A conditional format: ``kind`` cellIs (``operator`` and a value) or expression."""

    kind: str
    formula: str
    style: Style
    operator: str | None = None


@dataclass
class Chart:
    """A chart part (its XML, :mod:`.chartxml`) anchored at a cell (0-based row and column)."""

    xml: str
    row: int
    column: int
    width_cm: float
    height_cm: float
    alone: bool = True                # printed on a page of its own (else with the table above it)

    @property
    def rows(self) -> int:
        """Rows of the default height (15 pt = 0.529 cm) the chart covers."""
        return math.ceil(self.height_cm / ROW_CM)


@dataclass
class PageSetup:
    orientation: str = "portrait"
    paper: int | None = None          # Excel's paperSize: 9 = A4, 1 = Letter
    fit_width: int | None = None      # pages across (None: print at ``scale``)
    fit_height: int = 0               # 0: as many pages down as needed
    scale: int | None = None
    margins: dict = field(default_factory=lambda: {"left": 0.75, "right": 0.75, "top": 1, "bottom": 1,
                                                   "header": 0.5, "footer": 0.5})
    title_rows: tuple[int, int] | None = None       # repeated on every page
    title_columns: tuple[int, int] | None = None
    breaks: list[int] = field(default_factory=list)  # a page starts after each of these rows
    starts: list[int] = field(default_factory=list)  # rows a writer wants a page to start at
    across_first: bool = False        # page order: over, then down
    area: str | None = None           # the print area ('A1:I40'); None: everything the sheet holds


class Sheet:
    def __init__(self, title: str):
        self.title = title
        self.cells: dict[tuple[int, int], Cell] = {}
        self.runs: list[Run] = []                         # columns of formula cells kept as runs (:class:`Run`)
        self._runs_in: dict[int, list[Run]] = {}          # the runs, by column
        self.widths: dict[int, float] = {}
        self.heights: dict[int, float] = {}
        self.freeze: str | None = None
        self.validations: dict[str, Validation] = {}      # keyed by the rule's error message
        self.conditional: list[tuple[str, Rule]] = []
        self.merged: list[str] = []                       # ranges shown as one cell ('E7:I7'), the first cell's
        self.names: dict[str, str] = {}                   # sheet-scoped defined names
        self.charts: list[Chart] = []
        self.page = PageSetup()
        self.protected = False                            # only unlocked cells take an edit (no password)
        self.shape = None       # shared with sheets that repeat it: ``shape.rows(cell_xml, sheet)`` spells its
                                # rows, or returns None to have them spelled cell by cell (:meth:`.CellXml.rows`)

    def cell(self, row: int, column: int) -> Cell:
        found = self.cells.get((row, column))
        if found is None:
            found = self.cells[(row, column)] = Cell(row, column)
        return found

    def add_run(self, run: Run) -> None:
        """Cells ``run`` covers must be no :class:`Cell` of this sheet, now or later."""
        cells, column, first, last = self.cells, run.column, run.first_row, run.last_row
        if any((r, column) in cells for r in range(first, last + 1)) or any(
                o.first_row <= last and first <= o.last_row for o in self._runs_in.get(column, ())):
            raise ValueError(f"a run over {column_letter(run.column)}{run.first_row}:"
                             f"{column_letter(run.column)}{run.last_row} covers cells already written")
        self.runs.append(run)
        self._runs_in.setdefault(column, []).append(run)

    def release(self) -> None:
        """Drop the cells and runs (the sheet is spelled; a workbook of many sheets is not held twice)."""
        self.cells, self.runs, self._runs_in = {}, [], {}

    def comments(self) -> list[Cell]:
        """The cells that carry a comment, by row, then column."""
        return sorted((c for c in self.cells.values() if c.comment), key=lambda c: (c.row, c.column))

    def all_cells(self) -> dict[tuple[int, int], Cell]:
        """Every cell, a run's as cells too (for readers; writing uses the runs as they are)."""
        found = dict(self.cells)
        for run in self.runs:
            found.update(((c.row, c.column), c) for c in run.cells())
        return found

    @property
    def max_row(self) -> int:
        return max([max(self.cells, default=(1,))[0]] + [run.last_row for run in self.runs])

    @property
    def max_column(self) -> int:
        return max([max((c for _, c in self.cells), default=1)] + [run.column for run in self.runs])

    @property
    def bottom(self) -> int:
        """The last row anything covers: a cell, or a chart (rows of the default height)."""
        return max([self.max_row] + [c.row + c.rows for c in self.charts])

    def conditional_format(self, ranges: str, rule: Rule) -> None:
        self.conditional.append((ranges, rule))
