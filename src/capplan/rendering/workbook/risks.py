"""The Summary's risks: what it takes to change the decision, read from the analyses already made.

A plan with ``candidates:`` lists the record's first screen's risks, in its words and order
(:func:`capplan.rendering.firstscreen.candidate_risks`: the ranking's swaps, the nearest overtaking
flips within ``holds.warn``, stale prices), as text of the build. Any other plan has two lists, each the few most fragile first (``summary.risks`` in
``templates/workbook.yaml``): the inputs nearest a flip point (the nominal
sheet's table of how far the decision holds, in its order: the most fragile
first), each with today's value, the nearest flip and the margin as links to
that table's cells; and, for a plan with a simulation, the decisions least
likely to hold over the draws, linked to the Simulation sheet. Nothing is
worked out again here. Like the grey flip points, these are the analyses'
numbers as of the build (role ``holds`` in the manifest): an edited input
moves the live flip points, a rebuild the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan.artifacts.declared import holds_spec
from capplan.rendering.firstscreen import candidate_risks
from capplan.rendering.workbook.holds import MARGIN_COLUMNS, MARGIN_FORMAT, flip_format
from capplan.rendering.workbook import summarypage
from capplan.rendering.workbook.labels import label
from capplan.rendering.workbook.plantext import set_text
from capplan.xlsx.sheetmodel import column_letter, quote_sheet

if TYPE_CHECKING:
    from capplan.rendering.workbook.book import Book
    from capplan.xlsx.sheetmodel import Sheet

FLIP_COLUMNS = {"below": 3, "above": 4}        # on the nominal sheet's holds table
PROBABILITY_FORMAT = "0.0%"


def _nearest(h):
    """The side whose flip is nearest today's value (None: no flip either way)."""
    found = [s for s in (h.below, h.above) if s.found]
    if not found:
        return None
    return min(found, key=lambda s: abs(s.margin) if s.margin is not None else float("inf"))


def _flips(book: Book) -> list[tuple]:
    """(input, its row in the holds table, its nearest side), the most fragile first."""
    return [(h, r, side) for h, r in book.holds_rows
            if (side := _nearest(h)) is not None][:book.cfg["summary"]["risks"]]


def _odds(book: Book) -> list[tuple]:
    """(decision odds, the cell of its probability), the least likely first."""
    return sorted(book.odds_cells, key=lambda found: found[0].probability)[:book.cfg["summary"]["risks"]]


def _ranked(book: Book) -> tuple[list, list[str]] | None:
    """The first screen's risks of a plan with candidates, nearest first, and the odds it lists after
    them (None for any other plan)."""
    cv = book.view.candidates
    return None if cv is None else (candidate_risks(book.view)[0], cv.odds)


def rows_needed(book: Book) -> int:
    """The rows :func:`write_risks` takes (the Summary places its grid below them)."""
    ranked = _ranked(book)
    if ranked is not None:
        risks, odds = ranked
        return (len(risks) + 1 if risks else 0) + bool(odds) + 2 if risks or odds else 3
    return sum(len(found) + 3 for found in (_flips(book), _odds(book)) if found)


def write_risks(book: Book, ws: Sheet, row: int, heading) -> int:
    """The nearest flips, then the least likely decisions (each under ``heading(row, title)``), or a plan
    with candidates' first-screen risks (:func:`_write_ranked`); returns the next free row."""
    ranked = _ranked(book)
    if ranked is not None:
        return _write_ranked(book, ws, row, heading, *ranked)
    styles = book.styles
    nominal = book.sheets[0]
    qs = quote_sheet(nominal.ws.title)
    scenario = nominal.ev.scenario.name
    flips = _flips(book)
    if flips:
        row = heading(row, "Top risks: the inputs nearest a flip (nominal; the full table is on the nominal sheet)")
        row = _header(book, ws, row, ("Input", "Today", "Nearest flip", "Margin", "What flips"))
        for h, r, side in flips:
            name = h.variable.name
            summarypage.long_text(book, ws, row, 1, label(book.model.quantities[name]), last=1)
            flip = h.display(side.flip.value)
            for col, source, expected, fmt in (
                    (2, f"$B${r}", h.display(h.today), book.number_format(name)),
                    (3, f"${column_letter(FLIP_COLUMNS[side.direction])}${r}", flip, flip_format(book, name, flip)),
                    (4, f"${column_letter(MARGIN_COLUMNS[FLIP_COLUMNS[side.direction]])}${r}",
                     float((side.flip.value - h.today) / h.today) if h.today else None, MARGIN_FORMAT)):
                if expected is None:
                    continue
                c = ws.cell(row, col)
                book.formula(ws, c, f"={qs}!{source}", name, scenario, None, "holds", expected)
                styles.dress(c, styles.top, number_format=fmt)          # level with the wrapped texts
            summarypage.long_text(book, ws, row, 5, h.sentence(side), styles.note)
            row += 1
        row += 1
    odds = _odds(book)
    if odds:
        row = heading(row, f"The decisions least likely to hold (simulation, {book.view.simulation.samples:,} draws)")
        row = _header(book, ws, row, ("Decision", "P(holds)"))
        for rank, (d, cell) in enumerate(odds):
            set_text(ws.cell(row, 1), d.text)
            c = ws.cell(row, 2)
            book.formula(ws, c, f"={cell}", "simulation.odds", book.view.simulation.scenario, rank, "holds",
                         d.probability)
            styles.dress(c, number_format=PROBABILITY_FORMAT)
            row += 1
        row += 1
    return row


def _write_ranked(book: Book, ws: Sheet, row: int, heading, risks: list, odds: list[str]) -> int:
    """The record's first-screen risks of a plan with candidates, one a row: the input, how far it moves
    and what changes (with the weak evidence under it), then the simulation's odds; or that nothing flips
    within the warning distance."""
    warn = f"{holds_spec().get('warn', 0.25) * 100:g} %"
    row = heading(row, f"Top risks: what can change the decision, nearest first (every flip within {warn} of "
                       "today's value, as the record's first screen lists them; figures as of the build)")
    if not risks and not odds:
        summarypage.long_text(book, ws, row, 1, f"No decision flips within {warn} of today's value of any input "
                                                "it rests on.", book.styles.note)
        return row + 2
    if risks:
        row = _header(book, ws, row, ("Input", "Change", "", "", "What changes"))
    for risk in risks:
        summarypage.long_text(book, ws, row, 1, risk.name, last=1)
        summarypage.long_text(book, ws, row, 2, risk.what, last=4)
        changes = risk.changes + (f" — ⚠ {'; '.join(risk.evidence)}" if risk.evidence else "")
        summarypage.long_text(book, ws, row, 5, changes, book.styles.note)
        row += 1
    if odds:
        summarypage.long_text(book, ws, row, 1, "Over the plan's uncertain inputs (simulation), the chance each "
                                                f"decision holds: {'; '.join(odds)}.")
        row += 1
    return row + 1


def _header(book: Book, ws: Sheet, row: int, titles) -> int:
    for i, title in enumerate(titles, start=1):       # an empty title: a column the one before spans
        c = ws.cell(row, i)
        if title:
            set_text(c, title)
        book.styles.dress(c, book.styles.bold, book.styles.thin_bottom)
    return row + 1
