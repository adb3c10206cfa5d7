"""The workbook as a finance partner prints and edits it (#24): the money and the
decision on the Summary's one page, labels in words, one editable input style
behind sheet protection, wide tables folded to the page, a readable Simulation
sheet. Page counts of the printed workbooks are pinned in test_workbook.py's
PDF export (one soffice call for every workbook of out/).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
import recalc
from openpyxl import load_workbook

from capplan.engine.evaluate import evaluate_all
from capplan.language.model import standard_model
from capplan.loading.plan import load
from capplan.rendering.workbook import config, to_bytes
from capplan.rendering.workbook.builder import Builder
from capplan.rendering.workbook.labels import label, plain_symbol
from capplan.rendering.workbook.options import HEADERS, Ref, SummaryOption, deployment_options, write_options
from capplan.xlsx.sheetmodel import Sheet
from plan_edits import full_view, workbook_of

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"
INPUT_ROLES = {"input", "override", "pinned"}


@pytest.fixture(scope="module")
def model():
    return standard_model()


@pytest.fixture(scope="module")
def chat(model):
    plan = load(CHAT, model)
    evs = evaluate_all(plan, model)
    return plan, evs, workbook_of(plan, evs, model)


def _column(ws, text: str, row: int) -> int:
    return next(c for c in range(1, ws.max_column + 1) if ws.cell(row, c).value == text)


def test_labels_are_words_with_the_symbol_beside_them(model, chat):
    assert plain_symbol(r"\lambda_{peak}") == "λ_peak"
    assert plain_symbol(r"\bar{S}_{KV}") == "S\u0304_KV"
    assert plain_symbol(r"TTFT^{p95}_i") == "TTFT^p95_i"
    q = model.quantities
    assert label(q["peak_arrival_rate"]) == "Peak arrival rate the fleet must carry (λ_peak)"
    assert label(q["deployments.monthly_cost"]) == "Fleet price per month (C_month)"
    assert label(q["deployments.name"]) == "Offer"                        # its symbol only repeats the name
    # a description whose first clause runs long gives way to the name in words
    assert label(q["deployments.fleet_burst_probability"]).startswith("Fleet burst probability (")
    plan, evs, built = chat
    ws = built.workbook["nominal"]
    peak = built.cell("nominal", "peak_arrival_rate")
    row = int(peak.coordinate[1:])
    assert ws.cell(row, 1).value == label(q["peak_arrival_rate"])
    assert ws.cell(row, 5).value.startswith("peak_arrival_rate: ")     # the name formulas use, beside the words
    gpus = built.cell("nominal", "active_gpus")
    assert ws.cell(int(gpus.coordinate[1:]), 5).value.startswith("active_gpus = ")


def test_only_inputs_are_unlocked_behind_a_protection_without_password(chat):
    plan, evs, built = chat
    wb = built.workbook
    for ws in wb.worksheets:
        assert ws.protection.sheet and not ws.protection.password, ws.title
    inputs = [c for c in built.cells if c.role in INPUT_ROLES]
    assert len(inputs) > 100
    for c in inputs:
        assert wb[c.sheet][c.coordinate].protection.locked is False, c
    locked_formulas = [ref for ref, _ in built.formulas()]
    for ref in locked_formulas:
        sheet, coordinate = ref.rsplit("!", 1)
        assert wb[sheet][coordinate].protection.locked is not False, ref
    unlocked = {(ws.title, c.coordinate) for ws in wb.worksheets for row in ws.iter_rows() for c in row
                if c.protection.locked is False}
    assert unlocked == {(c.sheet, c.coordinate) for c in inputs}
    with zipfile.ZipFile(io.BytesIO(to_bytes(built))) as z:
        sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        styles = z.read("xl/styles.xml").decode()
    assert all('<sheetProtection sheet="1" objects="1" scenarios="1"' in s for s in sheets)
    assert not any("password" in s for s in sheets)
    assert '<protection locked="0"/>' in styles


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_libreoffice_keeps_the_protection_and_takes_an_edited_input(chat, tmp_path):
    """An input edited in the protected workbook (openpyxl, as a user's edit of an unlocked
    cell) recalculates in LibreOffice, which writes the protection and the unlocked input back."""
    plan, evs, built = chat
    source = tmp_path / "src"
    source.mkdir()
    path = source / "chat.xlsx"
    path.write_bytes(to_bytes(built))
    peak = built.cell("nominal", "peak_arrival_rate")
    gpus = built.cell("nominal", "active_gpus")
    wb = load_workbook(path)
    wb["nominal"][peak.coordinate].value = 90
    wb.save(path)
    out = recalc.values(recalc.recalc([path], tmp_path)[path])
    ws = out["nominal"]
    assert ws.protection.sheet
    assert ws[peak.coordinate].protection.locked is False and ws[peak.coordinate].value == 90
    assert ws[gpus.coordinate].protection.locked is not False
    assert ws[gpus.coordinate].value == 13                     # 90 req/s at 7 req/s a replica (surge_50's sizing)
    assert not recalc.error_cells(out)


def test_summary_leads_with_the_money_and_the_recommendation(chat):
    plan, evs, built = chat
    ws = built.workbook["Summary"]
    header = next(r for r in range(1, 20) if ws.cell(r, 1).value == HEADERS[0])
    names = {ws.cell(r, 1).value: r for r in range(header + 1, header + 4)}
    listed = {(c.sheet, c.coordinate): c for c in built.cells}
    for index in (0, 1):
        r = header + 1 + index
        for title, quantity in (("Monthly cost", "deployments.monthly_cost"),
                                ("Annual cost", "deployments.annual_cost"),
                                ("$ per 1M output tokens", "deployments.cost_per_million_tokens")):
            cell = ws.cell(r, _column(ws, title, header))
            column, number = re.fullmatch(r"([A-Z]+)(\d+)", built.cell("nominal", quantity, index).coordinate).groups()
            assert cell.value == f"='nominal'!${column}${number}"
            assert listed[("Summary", cell.coordinate)].expected == evs[0].display(quantity)[index]
    holds = [ws.cell(header + 1 + i, _column(ws, "Holds in every scenario", header)) for i in (0, 1)]
    assert all(c.value.startswith("=AND(") for c in holds)
    assert [listed[("Summary", c.coordinate)].expected for c in holds] == [True, False]
    recommendation = ws.cell(header + 3, 1)
    assert "INDEX(" in recommendation.value and "MATCH(MIN(" in recommendation.value
    # the record's pick: the cheapest whose fleet holds at the plan's peak, with the scenarios it breaks in
    assert listed[("Summary", recommendation.coordinate)].expected == \
        "Recommended: fractional-a100-80gb (breaks in 3 scenario(s))"
    assert [listed[("Summary", ws.cell(r, 1).coordinate)].expected for r in sorted(names.values())[:2]] == \
        ["aws-p4de.24xlarge", "fractional-a100-80gb"]
    column_a = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    risks = column_a.index(next(t for t in column_a if t and t.startswith("Top risks")))
    assert column_a[risks + 2] == label(evs[0].model.quantities["instance_max_rate"])    # the most fragile first
    assert ws.cell(risks + 3, 2).value.startswith("='nominal'!$B$")
    assert "Prices and tables as of" in column_a and "Decisions by scenario" in column_a
    assert column_a.index("Prices and tables as of") < column_a.index("Decisions by scenario")
    assert "Legend" in column_a and "input" in column_a


def test_one_option_gives_a_verdict(model):
    plan = load(ROOT / "plans" / "gpt-oss-120b-b200-tp8-engine.yaml", model)       # one deployment
    evs = evaluate_all(plan, model)
    built = workbook_of(plan, evs, model)
    verdict = [c for c in built.cells if c.quantity == "options.recommendation"]
    assert len(verdict) == 1 and verdict[0].expected.startswith("Verdict: ")


def test_the_options_table_takes_more_rows(model):
    """A source of options other than the deployments (candidate fleets) adds rows:
    the recommendation picks the cheapest that holds among all of them."""
    plan = load(CHAT, model)
    evs = evaluate_all(plan, model)
    book = Builder(plan, evs, model, full_view(plan, evs))
    book.build()
    listed = deployment_options(book)
    cheaper = SummaryOption(Ref('"cheap-candidate"', "candidate.name", "nominal", None, "cheap-candidate"),
                     Ref("1000", "candidate.monthly_cost", "nominal", None, 1000.0), verdicts=(True,) * len(evs))
    ws = Sheet("Options")
    verdicts = [f"$Z$1:$Z${len(evs)}"] * 3
    end = write_options(book, ws, 1, [*listed, cheaper], verdicts)
    assert end == 1 + 1 + 3 + 1
    recommended = next(c for c in reversed(book.entries) if c.quantity == "options.recommendation")
    assert recommended.expected == "Recommended: cheap-candidate"
    assert (ws.cell(4, 1).kind, ws.cell(4, 1).value) == ("f", '"cheap-candidate"')


def test_simulation_sheet_reads_right(chat):
    plan, evs, built = chat
    ws = built.workbook["Simulation"]
    header = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "Key result")
    for c in range(2, 7):                                  # Point, P5, P50, P95, Mean over numbers: right
        assert ws.cell(header, c).alignment.horizontal == "right", ws.cell(header, c).value
    assert ws.cell(header, 1).alignment.horizontal != "right"
    mean = _column(ws, "Mean", header)
    gpus = next(r for r in range(header + 1, ws.max_row + 1) if ws.cell(r, 1).value == "active GPUs")
    assert ".00" in ws.cell(gpus, mean).number_format                    # a mean of counts has decimals
    assert "." not in ws.cell(gpus, 2).number_format.split('"')[0]         # the point plan's count has none
    for chart in ws._charts:
        assert chart.anchor.ext.width / 360000 > 10 and chart.anchor.ext.height / 360000 > 5
    with zipfile.ZipFile(io.BytesIO(to_bytes(built))) as z:
        charts = [z.read(n).decode() for n in sorted(z.namelist()) if n.startswith("xl/charts/")]
    shares = [c for c in charts if "share of draws" in c]
    assert shares and all('<max val="1"/><min val="0"/>' in c for c in shares)        # 0-100 %, fixed


def test_wide_tables_fold_into_bands_that_name_their_rows(chat):
    """The deployments and the load sweep print in bands of at most table_columns columns,
    each band led by live links to the first band's keys."""
    plan, evs, built = chat
    ws = built.workbook["nominal"]
    widest = config()["sheets"]["table_columns"]
    assert ws.max_column <= widest
    copies = [c for c in built.cells if c.sheet == "nominal" and c.role == "label"]
    assert {c.quantity for c in copies} == {"deployments.name", "load_sweep.arrival_rate"}
    for c in copies:
        first = built.cell("nominal", c.quantity, c.row).coordinate
        assert ws[c.coordinate].value == f"={first}"


def test_a_summary_of_many_scenarios_prints_across_pages_at_full_size(model, chat, monkeypatch):
    """Past summary_fit_columns scenarios, fitting the Summary on a page would shrink its text:
    its scenario columns go across pages instead, the label columns repeated."""
    plan, evs, built = chat
    assert built.workbook["Summary"].sheet_properties.pageSetUpPr.fitToPage
    monkeypatch.setitem(config()["print"], "summary_fit_columns", len(evs) - 1)
    summary = workbook_of(plan, evs, model).workbook["Summary"]
    assert not (summary.sheet_properties.pageSetUpPr and summary.sheet_properties.pageSetUpPr.fitToPage)
    assert summary.print_title_cols == "$A:$B" and summary.page_setup.pageOrder == "overThenDown"
