"""The Summary's first block: the options side by side with their money, and the recommendation.

An option is a row the Summary compares (today a row of the key table, a
deployment; :func:`deployment_options`). It is given as :class:`SummaryOption` —
its name and where its numbers are — so another source of options (candidate
fleets) adds rows without touching the layout. Every number is a live link to
the cell that computes it; "holds in every scenario" reads the option's row of
verdicts on the Summary's own grid, and the recommendation is a formula over
the table, so an edited input moves it. It is the record's: the cheapest option
whose fleet holds at the plan's peak (the nominal scenario), with the number of
scenarios it breaks in said beside its name; with one option, its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capplan.rendering.workbook.cellstyles import BOOLEAN_FORMAT
from capplan.rendering.workbook.plantext import set_text
from capplan.rendering.workbook.scenariosheet import pass_fail
from capplan.xlsx.sheetmodel import column_letter

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.xlsx.sheetmodel import Sheet

NONE_HOLDS = "none (no option holds at the plan's peak)"
NO_VALUE = "—"


@dataclass(frozen=True)
class Ref:
    """A cell another sheet holds, as the Summary links it: where, what, and the engine's value there."""

    target: str             # 'nominal'!$W$115
    quantity: str
    scenario: str
    row: int | None
    expected: object


@dataclass(frozen=True)
class SummaryOption:
    """One option: its name and money (links), and its verdict in each scenario."""

    name: Ref
    monthly: Ref
    nodes: Ref | None = None
    gpus: Ref | None = None
    annual: Ref | None = None
    per_million: Ref | None = None
    verdicts: tuple[bool, ...] = ()             # the engine's, one per scenario (the grid's row)


# (header, SummaryOption field) of the linked columns, in order from column B; the number format is the quantity's
LINKED = (("Nodes", "nodes"), ("GPUs rented", "gpus"), ("Monthly cost", "monthly"), ("Annual cost", "annual"),
          ("$ per 1M output tokens", "per_million"))
HEADERS = ("Option", *(h for h, _ in LINKED), "Holds in every scenario", "Scenarios it breaks in",
           "Monthly cost if it holds at the peak")
MONTHLY, ANNUAL, PER_MILLION, HOLDS, BREAKS, IF_HOLDS = 4, 5, 6, 7, 8, 9    # columns (the other blocks align to them)


def deployment_options(book: Book) -> list[SummaryOption]:
    """The key table's rows (deployments), as the nominal sheet computes them."""
    nominal = book.sheets[0]
    key = book.view.scenarios[0]
    out = []
    for results in key.rows().values():
        index = results[0].index
        table = book.model.quantities[results[0].quantity].table
        if any(len(e.scenario.tables[table].rows) <= index for e in book.evs):
            continue

        def ref(column: str) -> Ref | None:
            name = f"{table}.{column}"
            if name not in nominal.ev.values or name not in nominal.tables[table].col_index:
                return None
            value = nominal.display(name)[index]
            return Ref(nominal.link(name, index).removeprefix("="), name, nominal.ev.scenario.name, index, value)

        verdict = next((k.quantity for k in results if k.role == "verdict"), None)
        verdicts = tuple(bool(s.display(verdict)[index]) for s in book.sheets) if verdict else ()
        out.append(SummaryOption(ref(nominal.tables[table].columns[0].split(".", 1)[1]), ref("monthly_cost"),
                          ref("nodes"), ref("deployed_gpus"), ref("annual_cost"), ref("cost_per_million_tokens"),
                          verdicts))
    return [o for o in out if o.name is not None and o.monthly is not None]


def write_options(book: Book, ws: Sheet, row: int, options: list[SummaryOption], verdict_rows: list[str | None],
                  label: str | None = "Recommended") -> int:
    """The options table from ``row`` and the recommendation under it; ``verdict_rows`` the range of
    each option's verdicts on the grid (None: none); ``label`` words the pick, None when another
    block makes the recommendation (no second budget under the table). Returns the next free row."""
    styles = book.styles
    scenario = book.evs[0].scenario.name
    for i, title in enumerate(HEADERS, start=1):
        c = ws.cell(row, i)
        set_text(c, title)
        styles.dress(c, styles.bold, styles.thin_bottom, styles.header_alignment)
    ws.heights[row] = 30
    first = row + 1
    expected_if_holds = []
    for k, (option, verdicts) in enumerate(zip(options, verdict_rows)):
        r = first + k
        _link(book, ws, ws.cell(r, 1), option.name, bold=True)
        for col, (_, field) in enumerate(LINKED, start=2):
            found = getattr(option, field)
            if found is not None:
                _link(book, ws, ws.cell(r, col), found)
        holds = all(option.verdicts) if option.verdicts else None
        if verdicts is not None and holds is not None:
            c = ws.cell(r, HOLDS)
            book.formula(ws, c, f"=AND({verdicts})", "options.holds", scenario, k, "summary", holds)
            styles.dress(c, styles.center, number_format=BOOLEAN_FORMAT)
            c = ws.cell(r, BREAKS)
            book.formula(ws, c, f"=COUNTIF({verdicts},FALSE)", "options.breaks", scenario, k, "summary",
                         sum(1 for v in option.verdicts if not v))
            styles.dress(c, styles.center)
            c = ws.cell(r, IF_HOLDS)
            monthly = ws.cell(r, MONTHLY).coordinate
            at_peak = verdicts.split(":")[0]                  # the nominal scenario's verdict, the grid's first
            cost = option.monthly.expected if option.verdicts[0] else NO_VALUE   # text: MIN passes over it
            book.formula(ws, c, f'=IF({at_peak},{monthly},"{NO_VALUE}")', "options.if_holds", scenario, k, "summary",
                         cost)
            styles.dress(c, styles.note, styles.right, number_format=_format(book, option.monthly))
            expected_if_holds.append(cost)
        else:
            expected_if_holds.append(NO_VALUE)
    last = first + len(options) - 1
    book.styles.dress(ws.cell(row, IF_HOLDS), styles.note)
    pass_fail(book, ws, [f"{ws.cell(first, HOLDS).coordinate}:{ws.cell(last, HOLDS).coordinate}"])
    if label is None:
        return last + 1
    return _recommendation(book, ws, last + 1, options, first, last, expected_if_holds, label)


def _recommendation(book: Book, ws: Sheet, r: int, options: list[SummaryOption], first: int, last: int,
                    if_holds: list, label: str) -> int:
    """The cheapest option whose fleet holds at the plan's peak, as the record recommends it, with
    the scenarios it breaks in (the record's caveat) and its money beside it; with one option, its verdict."""
    styles = book.styles
    scenario = book.evs[0].scenario.name
    costs = f"${column_letter(IF_HOLDS)}${first}:${column_letter(IF_HOLDS)}${last}"
    pick = f"MATCH(MIN({costs}),{costs},0)"
    held = [k for k, c in enumerate(if_holds) if c != NO_VALUE]
    best = min(held, key=lambda k: (if_holds[k], k)) if held else None
    head = ws.cell(r, 1)
    if len(options) == 1:
        option = options[0]
        breaks = sum(1 for v in option.verdicts if not v)
        text = "Verdict: holds in every scenario" if not breaks else f"Verdict: breaks in {breaks} scenario(s)"
        book.formula(ws, head, f'=IF({ws.cell(first, HOLDS).coordinate},"Verdict: holds in every scenario",'
                               f'"Verdict: breaks in "&{ws.cell(first, BREAKS).coordinate}&" scenario(s)")',
                     "options.recommendation", scenario, None, "summary", text)
    else:
        names = f"$A${first}:$A${last}"
        breaks = f"${column_letter(BREAKS)}${first}:${column_letter(BREAKS)}${last}"
        broken = sum(1 for v in options[best].verdicts if not v) if best is not None else 0
        text = f"{label}: " + (str(options[best].name.expected) if best is not None else NONE_HOLDS) + \
            (f" (breaks in {broken} scenario(s))" if broken else "")
        caveat = f'IF(INDEX({breaks},{pick})>0," (breaks in "&INDEX({breaks},{pick})&" scenario(s))","")'
        book.formula(ws, head, f'=IFERROR("{label}: "&INDEX({names},{pick})&{caveat},"{label}: {NONE_HOLDS}")',
                     "options.recommendation", scenario, None, "summary", text)
    styles.dress(head, styles.bold)
    for column, (_, field) in enumerate(LINKED, start=2):
        if field not in ("monthly", "annual", "per_million"):
            continue
        found = [getattr(o, field) for o in options]
        if any(f is None for f in found):
            continue
        letter = column_letter(column)
        c = ws.cell(r, column)
        if len(options) == 1:
            formula, value = f"={letter}{first}", found[0].expected
        else:
            formula = f'=IFERROR(INDEX(${letter}${first}:${letter}${last},{pick}),"{NO_VALUE}")'
            value = found[best].expected if best is not None else NO_VALUE
        book.formula(ws, c, formula, f"options.recommended_{field}", scenario, None, "summary", value)
        styles.dress(c, styles.bold, number_format=_format(book, found[0]))
    for column in range(1, IF_HOLDS):
        styles.dress(ws.cell(r, column), styles.top_rule)
    return r + 1


def _link(book: Book, ws: Sheet, cell, ref: Ref, bold: bool = False) -> None:
    book.formula(ws, cell, f"={ref.target}", ref.quantity, ref.scenario, ref.row, "summary", ref.expected)
    book.styles.dress(cell, number_format=_format(book, ref))
    if bold:
        book.styles.dress(cell, book.styles.bold)


def _format(book: Book, ref: Ref) -> str:
    """The linked quantity's number format (a cell of another source, not a model quantity: General)."""
    return book.number_format(ref.quantity) if ref.quantity in book.model.quantities else "General"
