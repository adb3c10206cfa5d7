"""The Summary as a finance partner prints and signs it (#41): one budget, its year filled in, the
decision's fields, words for headers, and text of 8 pt or more on a landscape page one page wide.

The six reference workbooks of out/ are read (``capplan check`` keeps them equal to a rebuild);
the text height on paper is measured on their PDF export in test_workbook.py, which exports them
once for the whole suite.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from capplan.rendering.workbook import config
from capplan.xlsx.printing import column_px
from capplan.xlsx.sheetmodel import column_letter

ROOT = Path(__file__).resolve().parents[1]
BOOKS = sorted((ROOT / "out").glob("*.xlsx"))
PICKS = ("Recommended", "Cheapest that holds", "Verdict")       # the row a Summary's budget is on
A4_LANDSCAPE_PT = 841.89
SMALLEST_PT = 8
LIBREOFFICE_PT_PER_CHARACTER = 7.0     # a column's printed width in LibreOffice (Excel's is narrower)


@pytest.fixture(scope="module", params=BOOKS, ids=lambda p: p.stem)
def book(request):
    formulas = load_workbook(request.param)
    formulas.path = request.param
    return (formulas, load_workbook(request.param, data_only=True))


def _filled(path: Path) -> set[str]:
    """The Summary's cells that hold a value or a formula, read from its XML (openpyxl drops what
    a merge covers)."""
    with zipfile.ZipFile(path) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    return set(re.findall(r'<c r="([A-Z]+\d+)"[^>]*>(?=<[fvi])', xml))


def _column_a(ws) -> list[str]:
    return [str(ws.cell(r, 1).value or "") for r in range(1, ws.max_row + 1)]


def _picks(ws) -> list[int]:
    """The rows that say what the Summary recommends (1-based)."""
    return [r for r, text in enumerate(_column_a(ws), start=1) if text.startswith(PICKS)]


def test_no_header_is_a_class_name(book):
    """Cell A6 read 'SummaryOption' on 5 of 6 Summaries: a renamed class leaked into the header."""
    ws = book[0]["Summary"]
    texts = {c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)}
    assert not [t for t in texts if re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z]+)+", t)]


def test_one_budget_per_summary(book):
    """The candidates Summary showed two: the H200's recommendation and the A100 baseline's verdict."""
    formulas, values = book
    assert len(_picks(values["Summary"])) == 1, _column_a(values["Summary"])


def test_the_recommended_row_carries_its_monthly_and_annual_cost(book):
    """The diurnal Summary's annual cell was blank: every recommendation gives the year, a live
    formula, twelve months (months_per_year) of the month beside it."""
    formulas, values = book
    ws = values["Summary"]
    row = _picks(ws)[0]
    header = max(r for r in range(1, row) if ws.cell(r, 4).value == "Monthly cost")
    assert ws.cell(header, 5).value == "Annual cost"
    monthly, annual = ws.cell(row, 4).value, ws.cell(row, 5).value
    if "none (no" in ws.cell(row, 1).value:                       # nothing to budget (retail)
        assert monthly == annual == "—"
        return
    assert isinstance(monthly, (int, float)) and monthly > 0, (row, monthly)
    assert annual == pytest.approx(12 * monthly, rel=1e-9)
    assert str(formulas["Summary"].cell(row, 5).value).startswith("=")


def test_the_decision_fields_are_on_the_summary(book):
    ws = book[1]["Summary"]
    column_a = _column_a(ws)
    fields = {text: ws.cell(r, 2).value for r, text in enumerate(column_a, start=1)
              if text in ("Status", "Owner", "Approver", "Date", "Commitment", "Review if")}
    assert list(fields) == ["Status", "Owner", "Approver", "Date", "Commitment", "Review if"]
    assert fields["Status"] in ("proposed", "approved", "superseded", "rejected")
    assert all(fields.values())
    assert column_a.index("Status") < column_a.index(next(t for t in column_a if t.startswith("Decisions by")))


def test_diurnal_states_its_decision_as_the_plan_does():
    ws = load_workbook(ROOT / "out" / "llama3-8b-a100-diurnal.xlsx")["Summary"]
    fields = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(1, ws.max_row + 1)}
    assert (fields["Status"], fields["Approver"], fields["Date"]) == ("proposed", "not yet named", "2026-12-03")
    assert fields["Commitment"] == "spot and on demand, month to month"


def test_the_summary_prints_landscape_one_page_wide_in_a_print_area(book):
    formulas, _ = book
    ws = formulas["Summary"]
    setup = ws.page_setup
    assert setup.orientation == "landscape"
    assert ws.sheet_properties.pageSetUpPr.fitToPage and (setup.fitToWidth, setup.fitToHeight) == (1, 0)
    assert ws.print_area and formulas.worksheets[1].print_area         # the Summary's and the nominal sheet's
    last = re.search(r"\$([A-Z]+)\$\d+$", ws.print_area).group(1)
    assert not [c.coordinate for row in ws.iter_rows() for c in row
                if c.value is not None and c.column > _index(last)]


def test_the_workbook_prints_the_summary_the_nominal_sheet_and_each_scenario_s_title(book):
    """#41: printed as it comes the workbook is the decision (Summary, the nominal derivation) and what
    each other scenario changes: its title rows, above the header row, not its derivation again."""
    formulas, _ = book
    header = config()["sheets"]["header_row"]
    scenarios = [ws for ws in formulas.worksheets[1:] if str(ws.cell(2, 1).value).startswith("Scenario: ")]
    assert scenarios and scenarios[0].title == "nominal"
    assert re.fullmatch(r"'nominal'!\$A\$1:\$[A-Z]+\$(\d+)", scenarios[0].print_area)
    for ws in scenarios[1:]:
        assert re.fullmatch(rf"'{ws.title}'!\$A\$1:\$[A-Z]+\${header - 1}", ws.print_area), ws.title
        assert "changes:" in ws.cell(2, 1).value, ws.title


def test_the_summary_text_prints_at_8_pt_or_more(book):
    """Fit to the page's width, the Summary prints at (page width) / (its columns' width); its
    smallest font at that scale is 8 pt or more in LibreOffice, whose columns print wider than
    Excel's (measured in the PDF by test_workbook.py)."""
    formulas, _ = book
    ws = formulas["Summary"]
    look = config()["print"]
    last = _index(re.search(r"\$([A-Z]+)\$\d+$", ws.print_area).group(1))
    widths = [ws.column_dimensions[column_letter(c)].width or 8.43 for c in range(1, last + 1)]
    width_pt = max(sum(column_px(w) for w in widths) * 0.75, sum(widths) * LIBREOFFICE_PT_PER_CHARACTER)
    margins = look["margins_in"]
    page_pt = A4_LANDSCAPE_PT - 72 * (margins["left"] + margins["right"])
    scale = min(1.0, math.floor(page_pt / width_pt * 100) / 100)
    sizes = {c.font.sz or 11 for row in ws.iter_rows() for c in row if c.value is not None}
    assert min(sizes) * scale >= SMALLEST_PT, (min(sizes), scale)


def test_a_long_text_wraps_in_merged_cells_inside_the_print_area(book):
    """'What flips' ran on past the last column (and shrank the page): it wraps, merged to the edge."""
    formulas, _ = book
    ws = formulas["Summary"]
    merged = [str(r) for r in ws.merged_cells.ranges]
    column_a = _column_a(ws)
    filled = _filled(ws.parent.path)
    for m in ws.merged_cells.ranges:                              # only the first cell of a merge holds a value
        inside = {f"{column_letter(c)}{r}" for r in range(m.min_row, m.max_row + 1)
                  for c in range(m.min_col, m.max_col + 1)}
        assert inside & filled == {f"{column_letter(m.min_col)}{m.min_row}"}, str(m)
    if "Input" in column_a:                                       # the risks' header
        first = column_a.index("Input") + 2
        assert any(m.startswith(f"E{first}:") for m in merged), merged
        assert ws.cell(first, 5).alignment.wrap_text


def _index(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n
