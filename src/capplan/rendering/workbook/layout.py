"""Where everything goes on a scenario sheet: the rows of sections, parts,
quantities and tables, decided before any cell is written.

Positions come first because formulas reference cells of other rows and of
the nominal sheet (``nominal(...)``, inherited inputs), which must be known
before the sheet that holds them is written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from capplan.engine.evaluate import Evaluation
from capplan.language.model import Model
from capplan.xlsx.sheetmodel import Sheet, column_letter, quote_sheet


@dataclass
class TablePos:
    """Where a table is: one record per row, its columns in bands of at most a page's
    width, one under the other, each band led by a copy of the key (first) column."""

    name: str
    header_row: int                    # of the first band
    first_row: int                     # the first band's first record
    n_rows: int
    columns: list[str]                 # qualified names
    col_index: dict[str, int]          # qualified name -> column number (in its band)
    bands: list[tuple[int, list[str]]] = field(default_factory=list)   # (header row, columns; key first)
    row_of: dict[str, int] = field(default_factory=dict)              # qualified name -> its first record's row

    @property
    def last_row(self) -> int:
        """The last record's row in the last band."""
        return self.bands[-1][0] + 1 + self.n_rows


def bands(columns: list[str], per_band: int) -> list[list[str]]:
    """The columns in bands of at most ``per_band`` sheet columns, the key column leading each."""
    key, rest = columns[0], columns[1:]
    step = max(1, per_band - 1)
    return [[key, *rest[i:i + step]] for i in range(0, len(rest), step)] or [[key]]


@dataclass
class SheetLayout:
    """Where one scenario's cells go."""

    ev: Evaluation
    ws: Sheet
    rows: list[tuple] = field(default_factory=list)          # (layout item, row)
    scalar_row: dict[str, int] = field(default_factory=dict)
    tables: dict[str, TablePos] = field(default_factory=dict)
    _shown: dict[str, object] = field(default_factory=dict, repr=False)
    _table_layout: tuple | None = field(default=None, repr=False)
    _links: dict[tuple, str] = field(default_factory=dict, repr=False)
    _pending: frozenset[str] | None = field(default=None, repr=False)
    chart_row: int = 0                 # where the sheet's chart goes, below its rows

    def display(self, name: str):
        """The scenario's value in display units, converted once (a column is read once per row)."""
        if name not in self._shown:
            self._shown[name] = self.ev.display(name)
        return self._shown[name]

    def pending(self) -> frozenset[str]:
        """The scenario's inputs that are pending measurements (read for every derived row)."""
        if self._pending is None:
            self._pending = frozenset(n for n, given in self.ev.inputs.items() if given.pending)
        return self._pending

    def table_layout(self) -> tuple:
        """Where this sheet's tables are: sheets with the same layout print the same row formulas.
        Read once the sheet is planned (tables do not move after)."""
        if self._table_layout is None:
            self._table_layout = tuple((t, p.first_row, p.n_rows, tuple(sorted(p.row_of.items())))
                                       for t, p in sorted(self.tables.items()))
        return self._table_layout

    def scalar_cell(self, name: str, absolute=False) -> str:
        r = self.scalar_row[name]
        return f"$B${r}" if absolute else f"B{r}"

    def table_column(self, name: str) -> tuple[str, int]:
        """A table column's letter and its first record's row."""
        pos = self.tables[name.split(".", 1)[0]]
        return column_letter(pos.col_index[name]), pos.row_of[name]

    def table_cell(self, name: str, row: int, absolute=False) -> str:
        letter, first = self.table_column(name)
        return f"${letter}${first + row}" if absolute else f"{letter}{first + row}"

    def link(self, name: str, row: int | None = None) -> str:
        """The formula another sheet links this sheet's cell of a quantity (of a table row) by:
        ``='nominal'!$B$7``, a cell reference, not 'nominal'!name (LibreOffice misreads a
        sheet-qualified name that starts like a cell address, 'nominal'!bf16_peak_flops).
        Every scenario sheet links the same cells, so each text is made once."""
        found = self._links.get((name, row))
        if found is None:
            cell = self.scalar_cell(name, absolute=True) if row is None else self.table_cell(name, row, absolute=True)
            found = self._links[(name, row)] = f"={quote_sheet(self.ws.title)}!{cell}"
        return found

    def column_range(self, name: str) -> str:
        pos = self.tables[name.split(".", 1)[0]]
        letter = column_letter(pos.col_index[name])
        first = pos.row_of[name]
        return f"${letter}${first}:${letter}${first + pos.n_rows - 1}"


def plan_sheet(sheet: SheetLayout, model: Model, sections: list, cfg: dict, planned: dict | None = None) -> None:
    """Assign rows: sections and parts of layout.yaml, then whatever it does not place.
    ``planned``: the sheets planned so far, by what their plan rests on (the scenario's graph,
    which the sheet keeps alive, and its tables' lengths), so scenarios alike in those are planned once."""
    key = (id(sheet.ev.graph), tuple((t, len(data.rows)) for t, data in sheet.ev.scenario.tables.items()))
    if planned is not None and key in planned:
        done = planned[key]
        sheet.rows, sheet.scalar_row, sheet.tables = list(done.rows), dict(done.scalar_row), dict(done.tables)
        sheet.chart_row = done.chart_row
        return
    if planned is not None:
        planned[key] = sheet
    ev = sheet.ev
    nodes = ev.graph.nodes
    placed: set[str] = set()
    tables_placed: set[str] = set()
    items: list[tuple] = []
    for section in sections:
        body = []
        for part in section.get("parts", []) or []:
            named = list(part.get("tables", []) or [])
            if isinstance(part.get("sweep"), str):       # the record's sweep part names its table so
                named.append(part["sweep"])
            tables = [t for t in dict.fromkeys(named) if t in ev.scenario.tables and t not in tables_placed]
            quantities = [q for q in model.expand(part.get("quantities", []) or [])
                          if q in nodes and model.quantities[q].table is None and q not in placed]
            if not tables and not quantities:
                continue
            body.append(("part", part.get("title", "")))
            for t in tables:
                body.append(("table", t))
                tables_placed.add(t)
            for q in quantities:
                body.append(("quantity", q))
                placed.add(q)
        if body:
            items.append(("section", section.get("title", section.get("id", ""))))
            items.extend(body)
    rest_tables = [t for t in model.tables if t in ev.scenario.tables and t not in tables_placed]
    rest = [n for n in ev.graph.order if model.quantities[n].table is None and n not in placed]
    if rest or rest_tables:
        items.append(("section", "Other quantities"))
        items.append(("part", "Not placed by templates/layout.yaml"))
        items.extend(("table", t) for t in rest_tables)
        items.extend(("quantity", q) for q in rest)
    row = cfg["sheets"]["header_row"] + 1
    for item in items:
        kind = item[0]
        if kind == "table":
            t = item[1]
            cols = [c for c in model.tables[t].columns if c in nodes]
            n = len(ev.scenario.tables[t].rows)
            pos = TablePos(t, row, row + 2, n, cols, {})
            for b, band in enumerate(bands(cols, cfg["sheets"]["table_columns"])):
                header = row + b * (n + 3)                   # header, units, records, a gap
                pos.bands.append((header, band))
                for i, c in enumerate(band):
                    if c not in pos.row_of:                  # the key column lives in the first band
                        pos.col_index[c], pos.row_of[c] = i + 1, header + 2
            sheet.tables[t] = pos
            computed = [c for c in cols if nodes[c].formula is not None]
            # the load sweep also holds the chart's SLO lines (the chart goes below the sheet's rows)
            height = (pos.last_row - row + 1) + len(computed) + (4 if t == "load_sweep" else 0) + 1
            sheet.rows.append((item, row))
            row += height
        else:
            sheet.rows.append((item, row))
            if kind == "quantity":
                sheet.scalar_row[item[1]] = row
            row += 1
    sheet.chart_row = row + 1        # 1-based: a chart below every row, so its page holds nothing else
