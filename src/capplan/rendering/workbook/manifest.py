"""What a built workbook holds, for the tests: which cell carries which
quantity of which scenario, and the engine's value for it.

The LibreOffice tests recalculate the workbook and compare every listed cell
with ``expected``; a cell missing here is a cell nobody checks.
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from functools import cached_property

from capplan.rendering.workbook.template import config
from capplan.xlsx import packaging
from capplan.xlsx.sheetmodel import Run, Sheet, column_letter

APPLICATION = "Microsoft Excel Compatible / capplan"


@dataclass(frozen=True, slots=True)
class CellInfo:
    """One value-bearing cell: what it holds and what the engine says it is (one per
    formula and input cell, a thousand per scenario sheet: slots, no instance dict)."""

    sheet: str
    coordinate: str
    quantity: str          # canonical name ('kv_pool', 'deployments.nodes')
    scenario: str
    row: int | None        # table row index, None for a scalar
    role: str              # input | override | pinned | link | derived | summary | chart | label (a band's key copy)
    expected: object       # the engine's value in display units (float, bool or str)

    @property
    def ref(self) -> str:
        return f"{self.sheet}!{self.coordinate}"


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The cells of a :class:`.sheetmodel.Run` (a column of a table's formulas): one entry for
    thousands of rows, listed as :class:`CellInfo` only when a reader asks."""

    sheet: str
    run: Run
    quantity: str
    scenario: str
    role: str              # as CellInfo's: derived, link (to the nominal sheet) or label (a band's key copy)
    expected: list         # the engine's value of each row, top to bottom

    def cells(self) -> list[CellInfo]:
        letter, first = column_letter(self.run.column), self.run.first_row
        return [CellInfo(self.sheet, f"{letter}{first + i}", self.quantity, self.scenario, i, self.role, value)
                for i, value in enumerate(self.expected)]


class SheetEntries:
    """The entries of a scenario sheet that repeats an earlier one's shape (:mod:`.sheetshape`):
    written out, and listed, only when a reader asks (a build that writes the file never does)."""

    __slots__ = ("sheet",)

    def __init__(self, sheet):
        self.sheet = sheet                 # a sheetshape.ShapedSheet

    def cells(self) -> list[CellInfo]:
        return [cell for entry in self.sheet.entries()
                for cell in ((entry,) if isinstance(entry, CellInfo) else entry.cells())]


@dataclass
class BuiltWorkbook:
    worksheets: list[Sheet]                # in the workbook's order, the Summary first
    entries: list[CellInfo | RunInfo | SheetEntries]      # as written
    sheets: dict[str, str]                 # scenario name -> sheet title
    names: dict[str, str]                  # canonical name -> Excel defined name

    @cached_property
    def cells(self) -> list[CellInfo]:
        """Every value-bearing cell, a run's one by one."""
        return [cell for entry in self.entries
                for cell in ((entry,) if isinstance(entry, CellInfo) else entry.cells())]

    def cell(self, scenario: str, quantity: str, row: int | None = None) -> CellInfo:
        """The scenario sheet's cell of a quantity (or of a table column's row)."""
        sheet = self.sheets[scenario]
        for info in self.cells:
            if info.sheet == sheet and info.quantity == quantity and info.row == row and \
                    info.role not in ("summary", "chart", "label"):
                return info
        raise KeyError((scenario, quantity, row))

    def formulas(self) -> list[tuple[str, str]]:
        """(sheet!cell, formula) for every formula in the workbook."""
        return [(f"{ws.title}!{c.coordinate}", "=" + c.value) for ws in self.worksheets
                for _, c in sorted(ws.all_cells().items()) if c.kind == "f"]

    def to_bytes(self) -> bytes:
        return to_bytes(self)

    @cached_property
    def workbook(self):
        """The written file as openpyxl reads it back (for tests and tools that inspect
        it; building never needs openpyxl)."""
        from openpyxl import load_workbook
        return load_workbook(io.BytesIO(self.to_bytes()))


def to_bytes(built: BuiltWorkbook, release: bool = False) -> bytes:
    """The workbook's .xlsx bytes (:func:`capplan.xlsx.packaging.to_bytes`), compressed and dated
    as ``templates/workbook.yaml`` says. ``release`` (the workbook's last use, :func:`.render_workbook`):
    its cells and manifest are dropped as the parts are spelled."""
    cfg = config()
    if release:
        built.entries = []
        built.__dict__.pop("cells", None)
    properties = packaging.Properties("capplan", APPLICATION, _timestamp(cfg.get("timestamp")))
    return packaging.to_bytes(built.worksheets, properties, deflate=cfg.get("zip_compression") == "deflate",
                              release=release)


def _timestamp(stamp) -> dt.datetime:
    """The configured timestamp (YAML reads it as a date, a datetime or text), 2000-01-01 by default."""
    stamp = stamp or dt.datetime(2000, 1, 1)
    if isinstance(stamp, str):
        stamp = dt.datetime.fromisoformat(stamp)
    if isinstance(stamp, dt.date) and not isinstance(stamp, dt.datetime):
        stamp = dt.datetime(stamp.year, stamp.month, stamp.day)
    return stamp
