"""A row formula printed once per column, its row numbers filled in per row.

Every row of a table column has the same formula; its texts differ only in the
row numbers of the cells it reads (this row's cell, the nominal sheet's cell of
this row) and in the row index of a row window (``MIN(k,row)``). Printing and
linting an 8,760-row column one row at a time was most of a year-profile
workbook, so the printer runs once with each row-dependent number left as a
slot (a marked base), and a row's text is a ``str.format`` of the bases plus
the row: the same characters the printer would have written for that row.
"""

from __future__ import annotations

from capplan.errors import CapplanError

MARK = "\x00"           # brackets a slot's index in the printed text; no formula text holds it


class Slots:
    """The row-dependent numbers of one printed formula, in the order they were printed."""

    def __init__(self):
        self.bases: list[int] = []
        self.limit: tuple[int, str, str] | None = None     # (rows the nominal table has, quantity, table)

    def slot(self, base: int) -> str:
        """The marked place of the number ``base + row``."""
        self.bases.append(base)
        return f"{MARK}{len(self.bases) - 1}{MARK}"

    def within(self, n_rows: int, name: str, table: str) -> None:
        """Rows from ``n_rows`` on have no cell to read: ``nominal(name)`` of the nominal ``table``."""
        if self.limit is None or n_rows < self.limit[0]:
            self.limit = (n_rows, name, table)


class RowSlot:
    """The row index itself as the printer writes it (``MIN(k,row)``): slot 0 + row."""

    def __init__(self, slots: Slots):
        self.text = slots.slot(0)

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return self.text


class RowTemplate:
    """The texts of a column's rows."""

    def __init__(self, marked: str, slots: Slots):
        parts = marked.split(MARK)
        spelled = [("{" + part + "}") if i % 2 else part.replace("{", "{{").replace("}", "}}")
                   for i, part in enumerate(parts)]
        self._format = "".join(spelled).format
        self._bases = slots.bases
        self._limit = slots.limit
        self._texts: list[str] = []       # rows spelled so far: scenario sheets of one layout share them

    def texts(self, n_rows: int) -> list[str]:
        """The texts of rows 0 to ``n_rows`` - 1."""
        if self._limit is not None and n_rows > self._limit[0]:
            rows, name, table = self._limit
            raise CapplanError(f"nominal({name}): the nominal {table} table has no row {rows + 1}")
        if len(self._texts) < n_rows:
            spell, bases = self._format, self._bases
            self._texts += [spell(*[base + row for base in bases]) for row in range(len(self._texts), n_rows)]
        return self._texts[:n_rows]
