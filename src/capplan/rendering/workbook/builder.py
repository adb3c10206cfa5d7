"""One workbook's build: sheets created, positions planned, then every sheet written.

:class:`Builder` is the state the writers share (the plan, its evaluations, the
names, the styles, the sheet positions and the manifest they append to): it
implements :class:`.book.Book`, the one thing a sheet writer is given, and runs
:data:`WRITERS` in order.
"""

from __future__ import annotations

import itertools

from capplan.engine.evaluate import Evaluation
from capplan.language.model import Model
from capplan.loading.plan import Plan
from capplan.artifacts.declared import layout
from capplan.rendering.present import UNMEASURED
from capplan.rendering.view import PlanView
from capplan.rendering.workbook import candidatesheet, holds, overtaken, scenariosheet, sheetshape, simulation, summary
from capplan.rendering.workbook.book import Writer, Written
from capplan.rendering.workbook.formulas import Formulas, Refs
from capplan.rendering.workbook.layout import SheetLayout, plan_sheet
from capplan.rendering.workbook.manifest import BuiltWorkbook, CellInfo, RunInfo, SheetEntries
from capplan.xlsx.printing import print_setup
from capplan.xlsx.sheetmodel import Cell, Run, Sheet
from capplan.rendering.workbook.cellstyles import Styles, number_format
from capplan.rendering.workbook.template import config
from capplan.rendering.workbook.plantext import sheet_title

# The sheet writers, in the order they run: the scenario sheets first, then at the foot of the nominal one
# how far the recommendation holds and how far the decision holds (the record's order), the Simulation
# and Candidates sheets, and the Summary last, as it links into all of them.
WRITERS: tuple[Writer, ...] = (sheetshape.write_scenarios, overtaken.write_overtaken, holds.write_holds,
                               simulation.write_simulation, candidatesheet.write_candidates, summary.write_summary)


class Builder:
    def __init__(self, plan: Plan, evaluations: list[Evaluation], model: Model, shown: PlanView):
        self.plan = plan
        self.view = shown               # the one view of the results (Summary, holds)
        self.evs = evaluations
        self.model = model
        self.cfg = config()
        self.layout = layout()
        self.entries: list[CellInfo | RunInfo | SheetEntries] = []    # as written: BuiltWorkbook.entries
        self.stamps: dict[tuple, scenariosheet.Stamp] = {}    # rows and table frames alike on every sheet
        self.shapes: dict[tuple, sheetshape.Shape] | None = {}  # scenario sheets alike but for values (None: off)
        self.recording: sheetshape.Shape | None = None        # the shape of the sheet being written, if it has one
        self.nominal = evaluations[0]
        self.formulas = Formulas(model, evaluations)
        self.names = self.formulas.names
        self.styles = Styles(self.cfg)
        self.sheets: list[SheetLayout] = []
        self._formats: dict[str, str] = {}
        self.holds_rows: list[tuple] = []      # (InputHolds, its row on the nominal sheet), by holds
        self.odds_cells: list[tuple] = []      # (DecisionOdds, the cell of its probability), by simulation
        self.summary = Sheet(self.cfg.get("summary_sheet", "Summary"))
        self.simulated: Sheet | None = None
        self.ranked: Written | None = None
        self._taken = {self.summary.title.lower()}        # sheet titles, lower case
        self._added: list[Sheet] = []                     # sheets after the scenario sheets, in order

    def add_sheet(self, title: str) -> Sheet:
        """A new sheet after the scenario sheets, titled ``title`` (``title_2``, ... if taken)."""
        titles = itertools.chain((title,), (f"{title}_{k}" for k in itertools.count(2)))
        ws = Sheet(next(t for t in titles if t.lower() not in self._taken))
        self._taken.add(ws.title.lower())
        self._added.append(ws)
        return ws

    def number_format(self, name: str) -> str:
        """One format per quantity, wide enough for its values in every scenario (computed once)."""
        if name not in self._formats:
            q = self.model.quantities[name]
            values = []
            for s in self.sheets:
                if name in s.ev.values:
                    if q.table is None:
                        values.append(s.display(name))
                    else:
                        values.extend(s.display(name))
            fmt = number_format(q.unit, q.kind, list(dict.fromkeys(values)))   # scenarios repeat their values
            if q.unmeasured == 0 and ";" not in fmt:         # the model's "not measured" reads so
                fmt = f'{fmt};-{fmt};"{UNMEASURED}"'
            self._formats[name] = fmt
        return self._formats[name]

    def formula(self, sheet: Sheet, cell: Cell, text: str, quantity: str, scenario: str, row: int | None,
                role: str, expected, source: tuple | None = None) -> None:
        """Write a live formula with the engine's value as its cached result, and list the cell.
        ``source``: where the value comes from (:meth:`slot`; by default the quantity's, or its row's)."""
        cell.formula(text, expected)
        self.slot(cell, source or ("formula", quantity, row, None))
        self.entries.append(CellInfo(sheet.title, cell.coordinate, quantity, scenario, row, role, expected))

    def formula_run(self, sheet: Sheet, run: Run, quantity: str, scenario: str, expected: list, role: str,
                    clean=None) -> None:
        """Write a column of a table's formulas as one run (:class:`.sheetmodel.Run`), and list it.
        ``clean``: how ``expected`` was made from the column's display values (None: as they are)."""
        sheet.add_run(run)
        if self.recording is not None:
            for i in range(len(run.formulas)):
                self.recording.slots[(run.first_row + i, run.column)] = ("formula", quantity, i, clean)
        self.entries.append(RunInfo(sheet.title, run, quantity, scenario, role, expected))

    def slot(self, cell: Cell, source: tuple) -> None:
        """Note, on a sheet others repeat (:mod:`.sheetshape`), that ``cell``'s value is its
        scenario's own: ``source`` is (formula | input | title, quantity, row | min | max | None,
        clean), read by :meth:`.sheetshape.Shape.spelled`."""
        if self.recording is not None:
            self.recording.slots[(cell.row, cell.column)] = source

    def own_comment(self, cell: Cell, name: str) -> None:
        """Note, on a sheet others repeat, that ``cell``'s comment is the input ``name``'s own."""
        if self.recording is not None:
            self.recording.own_comments[(cell.row, cell.column)] = name

    def chart_maker(self, make) -> None:
        """Note, on a sheet others repeat, how its chart is made for another sheet (``make(layout)``)."""
        if self.recording is not None:
            self.recording.charts.append(make)

    def refs(self, sheet: SheetLayout, table: str | None = None, row: int | None = None) -> Refs:
        return Refs(self.formulas, sheet, self.sheets[0], table, row)

    def build(self) -> BuiltWorkbook:
        for ev in self.evs:
            self.sheets.append(SheetLayout(ev, Sheet(sheet_title(ev.scenario.name, self._taken))))
        planned: dict = {}
        for sheet in self.sheets:
            plan_sheet(sheet, self.model, self.layout.get("sections", []), self.cfg, planned)
        for write in WRITERS:
            write(self)
        worksheets = [self.summary] + [s.ws for s in self.sheets] + self._added
        print_sheets(self.cfg, self.summary, self.sheets, self.simulated, self.ranked and self.ranked.ws)
        for ws in worksheets:
            ws.protected = True
        return BuiltWorkbook(worksheets, self.entries, {s.ev.scenario.name: s.ws.title for s in self.sheets},
                             dict(self.names))


def print_sheets(cfg: dict, summary_ws: Sheet, sheets: list[SheetLayout], simulated: Sheet | None,
                 ranked: Sheet | None) -> None:
    """How each sheet prints (``print:`` in ``templates/workbook.yaml``): one page wide, column
    headers repeated, each chart on a page of its own (:func:`capplan.xlsx.printing.print_setup`).
    A scenario sheet is only as wide as its five columns and a table's band (:mod:`.layout`), so
    fitting it prints legible text. The Simulation sheet's charts go ``simulation_charts_per_page``
    to a page. The Summary, up to ``summary_fit_columns`` scenarios, prints one page wide (as many
    down as it takes: :mod:`.summarypage`); with more, its scenario columns print across pages at
    full size, its label columns repeated. Printed as it comes, the workbook is the decision: the
    Summary and the nominal sheet whole, and of every other scenario sheet its title rows (what the
    scenario changes: the Summary's scenario columns compare them); a reader who wants a scenario's
    derivation on paper clears that sheet's print area."""
    look = cfg["print"]
    page = {"paper": int(look["paper_size"]), "orientation": look["orientation"], "margins": look["margins_in"]}
    few = len(sheets) <= look["summary_fit_columns"]
    print_setup(summary_ws, **{**page, "orientation": look["summary_orientation"]}, title_rows=None, wide=not few,
                last_row=summary_ws.bottom)
    header = cfg["sheets"]["header_row"]
    for s in sheets:
        whole = s is sheets[0]
        print_setup(s.ws, **page, title_rows=(header, header), last_row=s.ws.bottom if whole else header - 1)
    if simulated is not None:
        print_setup(simulated, **page, title_rows=(1, 1), charts_per_page=look["simulation_charts_per_page"])
    if ranked is not None:
        print_setup(ranked, **page, title_rows=(1, 1))
