"""The Summary's first block for a plan with a traffic profile: every way to buy each
offer's fleet through the profile, and the recommendation the record makes.

The record recommends the cheapest strategy that holds the SLO through the profile
(:mod:`capplan.artifacts.demand`), not the cheapest fleet sized for the peak; a
Summary that listed only the deployments would recommend another offer than the
record. Each row links the nominal sheet's cells: the strategy's monthly cost (a
column of the deployments table), its cost per 1M output tokens (that cost at the
fixed fleet's tokens per dollar), and whether it holds (a fleet sized for the peak
holds where the nominal fleet does; an autoscaled one where no interval of the
profile is short of capacity). The recommendation is a formula over the rows, so an
edited price or lag moves it as the engine would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.artifacts import demand
from capplan.rendering.workbook.cellstyles import BOOLEAN_FORMAT
from capplan.rendering.workbook.options import ANNUAL, HOLDS, IF_HOLDS, MONTHLY, NO_VALUE, PER_MILLION
from capplan.rendering.workbook.plantext import set_text
from capplan.rendering.workbook.scenariosheet import pass_fail
from capplan.xlsx.sheetmodel import column_letter

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.xlsx.sheetmodel import Sheet

HEADERS = {1: "Strategy", MONTHLY: "Monthly cost", ANNUAL: "Annual cost", PER_MILLION: "$ per 1M output tokens",
           HOLDS: "Holds the SLO", IF_HOLDS: "Monthly cost if it holds"}
NONE_HOLDS = "none (no strategy holds the SLO)"


def listed(book: Book) -> list[demand.Strategy]:
    """The nominal scenario's strategies, as the record lists them (none without a profile)."""
    return demand.strategies(book.nominal)


def rows_needed(found: list[demand.Strategy], picks: bool = True) -> int:
    """Rows the block takes: its heading and header, a row per strategy, the recommendation (where
    it ``picks`` one), a blank."""
    return len(found) + 3 + picks if found else 0


def write(book: Book, ws: Sheet, row: int, found: list[demand.Strategy], label: str | None = "Recommended") -> int:
    """The strategies from ``row`` (the header) and the recommendation under them, worded ``label``
    (None: another block makes the recommendation, and this one names none); the next free row."""
    styles, nominal = book.styles, book.sheets[0]
    scenario = book.evs[0].scenario.name
    for column, title in HEADERS.items():
        set_text(ws.cell(row, column), title)
        styles.dress(ws.cell(row, column), styles.bold, styles.thin_bottom, styles.header_alignment)
    ws.heights[row] = 30
    first = row + 1
    names = list(book.nominal.display("deployments.name"))
    money, per_million = book.number_format("deployments.monthly_cost"), \
        book.number_format("deployments.cost_per_million_tokens")
    months = nominal.link("months_per_year").removeprefix("=")
    for k, s in enumerate(found):
        r, index = first + k, names.index(s.deployment)
        link = (lambda name: nominal.link(name, index).removeprefix("="))
        name = ws.cell(r, 1)
        book.formula(ws, name, f'="{s.kind} on "&{link("deployments.name")}', "strategies.name", scenario, k,
                     "summary", s.name)
        styles.dress(name, styles.bold)
        monthly = ws.cell(r, MONTHLY)
        book.formula(ws, monthly, f"={link(demand.COSTS[s.kind])}", demand.COSTS[s.kind], scenario, index,
                     "summary", s.monthly_cost)
        styles.dress(monthly, number_format=money)
        annual = ws.cell(r, ANNUAL)
        book.formula(ws, annual, f"={monthly.coordinate}*{months}", "strategies.annual_cost", scenario, k, "summary",
                     s.monthly_cost * book.nominal.display("months_per_year"))
        styles.dress(annual, number_format=money)
        fixed = link("deployments.monthly_cost")
        rate = ws.cell(r, PER_MILLION)
        book.formula(ws, rate, f"=IF({fixed}=0,0,{monthly.coordinate}*"
                               f"({link('deployments.cost_per_million_tokens')}/{fixed}))",
                     "strategies.cost_per_million", scenario, k, "summary", s.cost_per_million)
        styles.dress(rate, number_format=per_million)
        holds = ws.cell(r, HOLDS)
        verdict = (f"={link('deployments.fleet_holds')}" if s.kind in demand.SIZED_FOR_PEAK
                   else f"={nominal.link('slo_risk_intervals').removeprefix('=')}=0")
        book.formula(ws, holds, verdict, "strategies.holds", scenario, k, "summary", s.holds)
        styles.dress(holds, styles.center, number_format=BOOLEAN_FORMAT)
        if_holds = ws.cell(r, IF_HOLDS)
        book.formula(ws, if_holds, f'=IF({holds.coordinate},{monthly.coordinate},"{NO_VALUE}")',
                     "strategies.if_holds", scenario, k, "summary", s.monthly_cost if s.holds else NO_VALUE)
        styles.dress(if_holds, styles.note, styles.right, number_format=money)
    last = first + len(found) - 1
    pass_fail(book, ws, [f"{ws.cell(first, HOLDS).coordinate}:{ws.cell(last, HOLDS).coordinate}"])
    if label is None:
        return last + 1
    return _recommendation(book, ws, last + 1, found, first, last, (money, per_million), label)


def _recommendation(book: Book, ws: Sheet, r: int, found: list[demand.Strategy], first: int, last: int,
                    formats: tuple[str, str], label: str) -> int:
    """The cheapest strategy that holds (the first in the list on a tie, as the record picks it), its money beside it."""
    styles, scenario = book.styles, book.evs[0].scenario.name
    best = demand.recommended(found)
    costs = f"${column_letter(IF_HOLDS)}${first}:${column_letter(IF_HOLDS)}${last}"
    pick = f"MATCH(MIN({costs}),{costs},0)"
    head = ws.cell(r, 1)
    book.formula(ws, head, f'=IFERROR("{label}: "&INDEX($A${first}:$A${last},{pick}),"{label}: {NONE_HOLDS}")',
                 "strategies.recommendation", scenario, None, "summary", f"{label}: " + (best.name if best else NONE_HOLDS))
    styles.dress(head, styles.bold)
    months = book.nominal.display("months_per_year")
    for column, quantity, value, fmt in ((MONTHLY, "monthly", best and best.monthly_cost, formats[0]),
                                         (ANNUAL, "annual_cost", best and best.monthly_cost * months, formats[0]),
                                         (PER_MILLION, "cost_per_million", best and best.cost_per_million,
                                          formats[1])):
        letter = column_letter(column)
        c = ws.cell(r, column)
        book.formula(ws, c, f'=IFERROR(INDEX(${letter}${first}:${letter}${last},{pick}),"{NO_VALUE}")',
                     f"strategies.recommended_{quantity}", scenario, None, "summary",
                     value if best else NO_VALUE)
        styles.dress(c, styles.bold, number_format=fmt)
    for column in range(1, IF_HOLDS):
        styles.dress(ws.cell(r, column), styles.top_rule)
    return r + 1
