"""How far the recommendation holds, at the foot of the nominal sheet: the flips of the inputs a
serving choice turns on (issue 40), as the record's section of that name states them.

Two analyses find them: where another candidate becomes cheaper than the recommendation as the peak,
a class's prompt length or a prefix hit rate moves (:mod:`capplan.analysis.overtaking`,
``Artifacts.overtaken``), and where the electricity price changes a traffic profile's recommended
strategy (``Artifacts.power_flips``; a price past which none does is no row). One row each: the
input, today's value (a link to its cell), where the run starts and ends, what becomes cheaper (the
record's sentence), the margin (a formula of those cells) and the cheaper option's monthly cost at
the flip. The flip points are searched for, not a formula of the sheet's cells (a contender's cost
steps with whole replicas and nodes, and an estimated λ* moves with the input), so they are
capplan's as of the build, in grey, as the holds table's searched flips are; so is a candidate's
cost there. A rented strategy's cost does not move with the electricity price: at the flip it is
its cell on the sheet, and the row links it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capplan.artifacts import demand
from capplan.artifacts.ranking import MONTH
from capplan.language import units
from capplan.rendering.demand import power_clause, price_text
from capplan.rendering.workbook.holds import MARGIN_FORMAT, fit_height, flip_format, foot_section
from capplan.rendering.workbook.labels import label
from capplan.rendering.workbook.manifest import CellInfo
from capplan.rendering.workbook.plantext import set_text
from capplan.rendering.workbook.scenariosheet import cell_number

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.xlsx.sheetmodel import Sheet

TITLE = "How far the recommendation holds"
HEADERS = ("Input", "Today", "Flip at (found)", "Until (found)", "What becomes cheaper", "Margin",
           "Its monthly cost there")
NOTE = ("Where another option becomes cheaper than the recommendation as one input moves, every other as today.",
        "In grey, capplan's flip search as of the build (rebuild to update): where the run starts and ends, a cost it found.")
TODAY, AT, UNTIL, WHAT, MARGIN, COST = 2, 3, 4, 5, 6, 7      # columns


@dataclass(frozen=True)
class _Flip:
    """One found flip as a row shows it: the input (a table's row of it), its values in base units,
    the sentence, and the cheaper option's monthly cost (USD), the quantity that cost is and, where
    it is a cell of the sheet, its row of that quantity's table (None: a found value)."""

    name: str
    index: int | None
    today: float
    at: float
    until: float
    text: str
    cost: float
    costed: str
    costed_row: int | None = None


def _found(book: Book) -> list[_Flip]:
    """The overtaking flips in the record's order, then the electricity price's."""
    view, artifacts = book.view, book.view.artifacts
    out = []
    if view.candidates is not None:
        out += [_Flip(o.variable, o.index, o.today, o.at, o.until, text, o.cost, MONTH)
                for o, text in zip(artifacts.overtaken, view.candidates.overtaken)]
    price, names = price_text(book.nominal), list(book.nominal.display("deployments.name"))
    for f in artifacts.power_flips:
        if f.at is not None:
            clause = power_clause(f, price)
            rented = None if f.after.kind == demand.OWNED else names.index(f.after.deployment)
            out.append(_Flip("electricity_price", None, f.today, f.at, f.end, clause[:1].upper() + clause[1:],
                             f.after.monthly_cost, demand.COSTS[f.after.kind], rented))
    return out


def write_overtaken(book: Book) -> None:
    found = _found(book)
    if not found:
        return
    ws = book.sheets[0].ws
    first = foot_section(book, ws, TITLE, NOTE, HEADERS)
    for k, flip in enumerate(found):
        _row(book, ws, flip, first + k)


def _row(book: Book, ws: Sheet, flip: _Flip, r: int) -> None:
    styles, nominal = book.styles, book.sheets[0]
    scenario = nominal.ev.scenario.name
    q = book.model.quantities[flip.name]
    shown = lambda x: units.to_display(float(x), q.unit)  # noqa: E731 (the input in its display unit)
    row_key = "" if flip.index is None else f" [{book.nominal.display(f'{q.table}.name')[flip.index]}]"
    set_text(ws.cell(r, 1), label(q) + row_key)
    styles.dress(ws.cell(r, 1), styles.wrapped)
    today = ws.cell(r, TODAY)
    book.formula(ws, today, nominal.link(flip.name, flip.index), flip.name, scenario, flip.index, "holds",
                 shown(flip.today))
    styles.dress(today, number_format=book.number_format(flip.name))
    found = [(AT, shown(flip.at), flip.name, flip_format(book, flip.name, shown(flip.at))),
             (UNTIL, shown(flip.until), flip.name, flip_format(book, flip.name, shown(flip.until)))]
    if flip.costed_row is None:
        found.append((COST, flip.cost, flip.costed, book.number_format(MONTH)))
    else:                                                              # a rented strategy's own cell
        cost = ws.cell(r, COST)
        book.formula(ws, cost, nominal.link(flip.costed, flip.costed_row), flip.costed, scenario, flip.costed_row,
                     "holds", flip.cost)
        styles.dress(cost, number_format=book.number_format(MONTH))
    for column, value, quantity, fmt in found:
        cell = ws.cell(r, column)
        cell.number(cell_number(value))
        styles.dress(cell, styles.unit, number_format=fmt)            # a number as of the build: grey
        book.entries.append(CellInfo(ws.title, cell.coordinate, quantity, scenario, flip.index, "holds", value))
    if flip.today:
        margin, at, now = ws.cell(r, MARGIN), ws.cell(r, AT).coordinate, today.coordinate
        book.formula(ws, margin, f"=({at}-{now})/{now}", flip.name, scenario, flip.index, "holds",
                     (shown(flip.at) - shown(flip.today)) / shown(flip.today))
        styles.dress(margin, number_format=MARGIN_FORMAT)
    set_text(ws.cell(r, WHAT), flip.text)
    styles.dress(ws.cell(r, WHAT), styles.note, styles.wrapped)
    fit_height(book, ws, r)
