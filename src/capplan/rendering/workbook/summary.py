"""The Summary sheet, printed one page wide (:mod:`.summarypage`): the decision record's
fields (the plan's ``decision:``), the options with their money and the one
recommendation the record makes (the candidates by rank, :mod:`.candidateoptions`; the
strategies through a traffic profile, :mod:`.strategies`; the deployments,
:mod:`.options`: the first of these that the plan has recommends, the others list
their rows), the top risks (:mod:`.risks`), the price dates; then the
decisions per scenario, one column per scenario, each cell a link into that
scenario's sheet; the legend of the cell styles (the one input
style, links, overrides, formulas, and the tags' colours); pending measurements.

:func:`gather` decides WHAT the sheet shows and :func:`write_summary` only lays
it out, so the content can come from another source (the shared view of the
results) without touching the sheet's layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.workbook import candidateoptions, options, risks, strategies, summarypage
from capplan.rendering.workbook.scenariosheet import pass_fail
from capplan.xlsx.printing import column_px
from capplan.xlsx.sheetmodel import column_letter, quote_sheet
from capplan.rendering.workbook.cellstyles import number_format
from capplan.rendering.workbook.template import TAG_KEYS
from capplan.rendering.workbook.plantext import one_line, set_text

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.rendering.workbook.layout import SheetLayout
    from capplan.xlsx.sheetmodel import Sheet


@dataclass(frozen=True)
class Row:
    """A decision row (``quantity`` set; ``index`` for a table row) or a table row's heading."""

    label: str
    quantity: str | None = None
    index: int | None = None
    verdict: bool = False        # a table row's verdict (the options' "holds in every scenario" reads it)


@dataclass(frozen=True)
class Pending:
    """A pending measurement: its input, the sheet whose cell holds it (the nominal one
    where the plan sets it), and where the placeholder comes from."""

    name: str
    sheet: SheetLayout
    source: str


@dataclass
class Content:
    title: str
    subtitle: str
    rows: list[Row]
    pending: list[Pending]
    dated: list[tuple[str, str]]        # (table, as of)


def gather(book: Book) -> Content:
    """What the Summary shows: the decisions of layout.yaml, then pending inputs and price dates."""
    plan, model, nominal = book.plan, book.model, book.nominal
    sizing = plan.switches.get("sizing", "")
    key = book.view.scenarios[0]      # the key results, as every summary shows them
    rows = [Row(k.label, k.quantity) for k in key.scalars()]
    for row_key, results in key.rows().items():
        table = model.tables[model.quantities[results[0].quantity].table]
        index = results[0].index
        if any(len(e.scenario.tables[table.name].rows) <= index for e in book.evs):
            continue
        rows.append(Row(f"{table.title}: {row_key}"))
        rows.extend(Row(f"  {k.label}", k.quantity, k.index, k.role == "verdict") for k in results)
    pending = []
    for n in sorted({n for e in book.evs for n, i in e.inputs.items() if i.pending}):
        sheet = next(s for s in book.sheets if n in s.scalar_row and n in s.ev.inputs)
        pending.append(Pending(n, sheet, sheet.ev.inputs[n].source or "no source"))
    dated = [(t, d.as_of) for t, d in nominal.scenario.tables.items() if d.as_of]
    return Content(plan.title, f"Plan {plan.file}; GPU {plan.gpu.id}; model {plan.model_entry.id}; sizing: {sizing}.",
                   rows, pending, dated)


def write_summary(book: Book) -> None:
    """The money and the decision first (options, recommendation, risks, price dates), then
    the decisions by scenario, the legend and the pending measurements. The recommendation is
    the record's: the candidates' first rank (``book.ranked``, the Candidates sheet), else the
    cheapest strategy through a traffic profile, else the cheapest deployment that holds."""
    content = gather(book)
    ws, ranked, styles = book.summary, book.ranked, book.styles
    sheets = book.sheets
    ncols = 2 + len(sheets)
    look = book.cfg["summary"]
    ws.widths[1] = look["widths"]["quantity"]
    ws.widths[2] = look["widths"]["unit"]
    for i in range(max(len(sheets), options.IF_HOLDS - 2)):
        ws.widths[3 + i] = look["widths"]["scenario"]
    summarypage.long_text(book, ws, 1, 1, content.title, styles.title)
    summarypage.long_text(book, ws, 2, 1, content.subtitle, styles.muted)
    summarypage.long_text(book, ws, 3, 1, "Every number below is a live formula over the scenario sheets. Edit the "
                                          "yellow input cells of the 'nominal' sheet; scenarios follow unless they "
                                          "override.", styles.muted)
    candidates = candidateoptions.rows_needed(book) if ranked is not None else 0
    profile = strategies.listed(book)       # a plan with a traffic profile: the record recommends a strategy
    listed = [] if profile else options.deployment_options(book)
    fields = book.plan.decision.shown
    first = look["first_row"]
    top = len(fields) + 2 + candidates + (len(listed) + 3 + (not candidates) if listed else 0) + \
        strategies.rows_needed(profile, picks=not candidates) + risks.rows_needed(book) + \
        (len(content.dated) + 2 if content.dated else 0)
    label = None if candidates else "Recommended"      # one recommendation, one budget: the candidates' if any

    def heading(row: int, title: str, width: int = options.IF_HOLDS) -> int:
        set_text(ws.cell(row, 1), title)
        for i in range(1, max(width, ncols) + 1):
            styles.dress(ws.cell(row, i), styles.section_fill)
        styles.dress(ws.cell(row, 1), styles.section_font)
        return row + 1

    verdicts = _grid(book, ws, first + top, content, ncols, heading)
    row = _decision(book, ws, heading(first, "The decision (the plan's decision: section)"), fields) + 1
    if candidates:
        row = heading(row, "Candidates and the recommendation (nominal scenario)")
        row = candidateoptions.write(book, ws, row, ranked) + 1
    if profile:
        row = heading(row, "Strategies through the traffic profile" +
                      (" (nominal scenario)" if candidates else " and the recommendation (nominal scenario)"))
        row = strategies.write(book, ws, row, profile, label) + 1
    if listed:
        row = heading(row, "The baseline: the plan's deployments (nominal scenario)" if candidates else
                      "Options and the recommendation (nominal scenario)")
        row = options.write_options(book, ws, row, listed, [verdicts.get(o.name.row) for o in listed], label) + 1
    row = risks.write_risks(book, ws, row, heading)
    if content.dated:
        _listing(styles, ws, row, "Prices and tables as of", content.dated)
    row = _legend(book, ws, ws.max_row + 2, 1) + 1
    if content.pending:
        _pending(book, ws, row, content.pending)
    summarypage.legible(ws, look["min_font_pt"])


def _decision(book: Book, ws: Sheet, row: int, fields: list[tuple[str, str]]) -> int:
    """The decision record's fields, a row each (a default where the plan states none, as the record
    says it); the next free row."""
    for label, text in fields:
        set_text(ws.cell(row, 1), label)
        book.styles.dress(ws.cell(row, 1), book.styles.bold, book.styles.top)
        summarypage.long_text(book, ws, row, 2, text)
        row += 1
    return row


def _grid(book: Book, ws, row: int, content: Content, ncols: int, heading) -> dict[int, str]:
    """The decisions by scenario, one column per scenario; returns, per table row, the range of its verdicts."""
    styles, sheets, look = book.styles, book.sheets, book.cfg["summary"]
    row = heading(row, "Decisions by scenario")
    set_text(ws.cell(row, 1), "Quantity")
    set_text(ws.cell(row, 2), "Unit")
    for i, s in enumerate(sheets):
        set_text(ws.cell(row, 3 + i), one_line(s.ev.scenario.name))     # a name, like its sheet's
    for i in range(1, ncols + 1):
        styles.dress(ws.cell(row, i), styles.bold, styles.thin_bottom, styles.center if i > 2 else styles.left)
    row += 1
    set_text(ws.cell(row, 1), "scenario")
    styles.dress(ws.cell(row, 1), styles.top)
    for i, s in enumerate(sheets):
        c = ws.cell(row, 3 + i)
        set_text(c, s.ev.scenario.title)
        styles.dress(c, styles.top_center_wrapped, styles.small)
    ws.heights[row] = _tall(book, [s.ev.scenario.title for s in sheets], look["heights"]["scenario"])
    row += 1
    set_text(ws.cell(row, 1), "changes")
    styles.dress(ws.cell(row, 1), styles.top)
    changes = ["; ".join(s.ev.scenario.changes) or "(as written)" for s in sheets]
    for i, text in enumerate(changes):
        c = ws.cell(row, 3 + i)
        set_text(c, text)
        styles.dress(c, styles.top_wrapped, styles.changes)
    ws.heights[row] = _tall(book, changes, look["heights"]["changes"])
    row += 1
    bool_cells: list[str] = []
    verdicts: dict[int, str] = {}
    for item in content.rows:
        if item.quantity is None:
            c = ws.cell(row, 1)
            set_text(c, item.label)
            styles.dress(c, styles.part_font)
            for j in range(1, ncols + 1):
                styles.dress(ws.cell(row, j), styles.part_fill)
            row += 1
        else:
            if item.verdict:
                verdicts[item.index] = f"$C${row}:${column_letter(ncols)}${row}"
            row = _decision_row(book, ws, row, item, bool_cells)
    pass_fail(book, ws, bool_cells)
    return verdicts


def _tall(book: Book, texts: list[str], least: float) -> float:
    """The height of a row of scenario cells holding ``texts`` wrapped at the Summary's smallest font."""
    size = book.cfg["summary"]["min_font_pt"]
    width = column_px(book.cfg["summary"]["widths"]["scenario"]) - 6
    return max(least, max(summarypage.lines(t, width, size) for t in texts) * size * summarypage.LINE_PT)


def _listing(styles, ws, row: int, heading: str, entries) -> int:
    """A bold heading over (key, text) rows."""
    c = ws.cell(row, 1)
    set_text(c, heading)
    styles.dress(c, styles.bold)
    for key, text in entries:
        row += 1
        set_text(ws.cell(row, 1), key)
        set_text(ws.cell(row, 2), text)
    return row + 1


def _pending(book: Book, ws: Sheet, row: int, entries: list[Pending]) -> int:
    """Each pending input, its value a live reference to its cell (it follows an edit), and its source."""
    styles = book.styles
    c = ws.cell(row, 1)
    set_text(c, "Pending measurements (results resting on them are provisional)")
    styles.dress(c, styles.bold)
    for p in entries:
        row += 1
        name = ws.cell(row, 1)
        set_text(name, p.name)
        styles.apply(name, "pending")
        value = ws.cell(row, 2)
        book.formula(ws, value, f"={quote_sheet(p.sheet.ws.title)}!{p.sheet.scalar_cell(p.name, absolute=True)}",
                     p.name, p.sheet.ev.scenario.name, None, "summary", p.sheet.display(p.name))
        styles.dress(value, number_format=book.number_format(p.name))
        styles.apply(value, "pending", linked=True)
        summarypage.long_text(book, ws, row, 3, p.source, styles.small)
    return row + 1


def _decision_row(book: Book, ws, row: int, item: Row, bool_cells) -> int:
    name, index = item.quantity, item.index
    q = book.model.quantities[name]
    set_text(ws.cell(row, 1), item.label)
    set_text(ws.cell(row, 2), formatting.unit_label(q.unit) if q.kind != "money" else q.unit)
    book.styles.dress(ws.cell(row, 2), book.styles.note)
    values = [s.display(name) if index is None else s.display(name)[index]
              for s in book.sheets if name in s.ev.values]
    fmt = number_format(q.unit, q.kind, values)
    for i, s in enumerate(book.sheets):
        if name not in s.ev.values:
            continue
        c = ws.cell(row, 3 + i)
        qs = quote_sheet(s.ws.title)
        if index is None:
            target, expected = s.scalar_cell(name, absolute=True), s.display(name)
        else:
            target, expected = s.table_cell(name, index, absolute=True), s.display(name)[index]
        book.formula(ws, c, f"={qs}!{target}", name, s.ev.scenario.name, index, "summary", expected)
        book.styles.dress(c, number_format=fmt)
        book.styles.apply(c, "derived")
        if q.kind == "bool":
            bool_cells.append(c.coordinate)
    return row + 1


def _legend(book: Book, ws, row: int, col: int) -> int:
    """The cell looks (input, override, linked, formula), then the tags' colours (their column on each sheet)."""
    head = ws.cell(row, col)
    set_text(head, "Legend")
    book.styles.dress(head, book.styles.bold)
    r = row + 1
    looks = [(key, key, book.cfg[key]["label"]) for key in ("input", "override", "linked")]
    looks.extend((key, key, book.cfg["tags"][key]["label"]) for key in TAG_KEYS)
    for key, text, meaning in looks:
        c = ws.cell(r, col)
        set_text(c, text)
        book.styles.swatch(c, key)
        d = ws.cell(r, col + 1)
        set_text(d, meaning)
        book.styles.dress(d, book.styles.small)
        r += 1
    return r
