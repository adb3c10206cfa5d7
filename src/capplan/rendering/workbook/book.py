"""What every sheet writer is given: the workbook being built, as a protocol.

A sheet writer is a function ``write(book: Book) -> None`` (:data:`Writer`).
It reads the plan, its evaluations and the view, writes cells through the
book (:meth:`Book.formula`, which lists each value-bearing cell in the
manifest), and leaves what a later writer links to on the book (the holds'
rows, the simulation's odds cells, the Candidates sheet's ranks). The builder
(:mod:`.builder`) implements the protocol and runs its declared list of
writers in order; the writers import this module, never the builder, so the
builder may import them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from capplan.xlsx.sheetmodel import Cell, Run, Sheet, column_letter, quote_sheet

if TYPE_CHECKING:
    from capplan.engine.evaluate import Evaluation
    from capplan.language.model import Model
    from capplan.loading.plan import Plan
    from capplan.rendering.view import PlanView
    from capplan.rendering.workbook.cellstyles import Styles
    from capplan.rendering.workbook.formulas import Formulas, Refs
    from capplan.rendering.workbook.layout import SheetLayout
    from capplan.rendering.workbook.manifest import CellInfo, RunInfo, SheetEntries


@dataclass(frozen=True)
class Written:
    """The Candidates sheet as the Summary links it (:mod:`.candidateoptions`)."""

    ws: Sheet
    first: int                  # the first and last candidate rows
    last: int
    columns: dict[str, int]     # quantity -> its column
    rank: int                   # the live rank's column
    recommended_row: int        # the recommendation's row, in column B

    def range(self, column: int) -> str:
        letter = column_letter(column)
        return f"{quote_sheet(self.ws.title)}!${letter}${self.first}:${letter}${self.last}"

    @property
    def first_rank(self) -> str:
        """The position of the candidate ranked first, as the sheet's recommendation finds it."""
        return f"MATCH(1,{self.range(self.rank)},0)"

    @property
    def recommendation(self) -> str:
        """The sheet's recommendation cell ('<candidate> on <offer>', rank 1)."""
        return f"{quote_sheet(self.ws.title)}!$B${self.recommended_row}"


class Recording(Protocol):
    """What a scenario sheet that others repeat notes while it is written (:mod:`.sheetshape`)."""

    slots: dict[tuple[int, int], tuple]
    own_comments: dict[tuple[int, int], str]
    charts: list[Callable]


class Book(Protocol):
    """The workbook being built, as the sheet writers use it."""

    plan: Plan
    view: PlanView                          # the one view of the results (Summary, holds, simulation, candidates)
    evs: list[Evaluation]
    nominal: Evaluation
    model: Model
    cfg: dict                               # templates/workbook.yaml
    layout: dict                            # templates/layout.yaml
    styles: Styles
    formulas: Formulas
    names: dict[str, str]                   # canonical name -> Excel defined name
    sheets: list[SheetLayout]               # the scenario sheets, nominal first
    summary: Sheet                          # the Summary, first in the workbook, written last
    entries: list[CellInfo | RunInfo | SheetEntries]     # the manifest, as written
    stamps: dict[tuple, object]             # a scenario sheet writer's rows and table frames, alike on every sheet
    shapes: dict[tuple, object] | None      # scenario sheets alike but for values (None: each written whole)
    recording: Recording | None             # the shape of the scenario sheet being written, if it has one
    holds_rows: list[tuple]                 # (InputHolds, its row on the nominal sheet), by the holds writer
    odds_cells: list[tuple]                 # (DecisionOdds, the cell of its probability), by the simulation's
    simulated: Sheet | None                 # the Simulation sheet, if written
    ranked: Written | None                  # the Candidates sheet, if written

    def add_sheet(self, title: str) -> Sheet:
        """A new sheet after the scenario sheets, titled ``title`` (``title_2``, ... if taken)."""

    def number_format(self, name: str) -> str:
        """One format per quantity, wide enough for its values in every scenario."""

    def formula(self, sheet: Sheet, cell: Cell, text: str, quantity: str, scenario: str, row: int | None,
                role: str, expected, source: tuple | None = None) -> None:
        """A live formula with the engine's value as its cached result, the cell listed."""

    def formula_run(self, sheet: Sheet, run: Run, quantity: str, scenario: str, expected: list, role: str,
                    clean=None) -> None:
        """A column of a table's formulas as one run, listed."""

    def slot(self, cell: Cell, source: tuple) -> None:
        """On a sheet others repeat, ``cell``'s value is its scenario's own."""

    def own_comment(self, cell: Cell, name: str) -> None:
        """On a sheet others repeat, ``cell``'s comment is the input ``name``'s own."""

    def chart_maker(self, make) -> None:
        """On a sheet others repeat, how its chart is made for another sheet."""

    def refs(self, sheet: SheetLayout, table: str | None = None, row: int | None = None) -> Refs:
        """What a formula on ``sheet`` (in a table's row) reads."""


Writer = Callable[[Book], None]
