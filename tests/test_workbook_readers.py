"""The committed workbooks where people open them: readers that do not
recalculate, and paper.

Excel's Protected View, file previewers, pandas and ``openpyxl`` with
``data_only=True`` show a formula cell's cached value. Every formula cell of
every workbook in ``out/`` must carry the engine's value (the plan evaluated
again here, not numbers typed in the test), relative 1e-9. Printed, a sheet
is one page wide (its wide tables folded into bands), its headers repeated,
each chart on a page of its own.
"""

from __future__ import annotations

import gzip
import io
import math
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
import recalc
import yaml
from openpyxl import load_workbook

from capplan.engine.evaluate import evaluate_all
from capplan.language.model import standard_model
from capplan.loading.plan import load
from capplan.rendering.workbook import config, to_bytes
from plan_edits import workbook_of

ROOT = Path(__file__).resolve().parents[1]
PLANS = tuple(sorted((ROOT / "plans").glob("*.yaml")))


@pytest.mark.parametrize("plan_path", PLANS, ids=lambda p: p.stem)
def test_every_formula_cell_caches_the_engines_value(plan_path):
    model = standard_model()
    plan = load(plan_path, model)
    listed = workbook_of(plan, evaluate_all(plan, model), model).cells
    expected = {(c.sheet, c.coordinate): c.expected for c in listed}
    path = ROOT / "out" / f"{plan_path.stem}.xlsx"
    formulas, cached = load_workbook(path), load_workbook(path, data_only=True)
    checked, wrong, unlisted = set(), [], []
    for ws in formulas.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type != "f":
                    continue
                key = (ws.title, c.coordinate)
                if key not in expected:
                    unlisted.append(f"{ws.title}!{c.coordinate}")
                    continue
                got = cached[ws.title][c.coordinate].value
                if not recalc.same(got, expected[key]):
                    wrong.append(f"{ws.title}!{c.coordinate}: cached {got!r}, engine {expected[key]!r}")
                checked.add(key)
    assert not unlisted, f"formula cells the engine has no value for: {unlisted[:10]}"
    assert not wrong, wrong[:10]
    # every derived cell, link to the nominal sheet and Summary reference is a formula, checked here
    live = {(c.sheet, c.coordinate) for c in listed if c.role in ("derived", "link", "summary", "chart")}
    assert live and live <= checked, sorted(live - checked)[:10]


def test_pending_measurements_on_the_summary_are_live_references():
    """The Summary lists each pending measurement with its value as a reference to the
    input's own cell (an edit there shows here), not as text typed at build time."""
    model = standard_model()
    plan = load(ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml", model)
    evs = evaluate_all(plan, model)
    built = workbook_of(plan, evs, model)
    pending = sorted(n for n, given in evs[0].inputs.items() if given.pending)
    assert pending == ["decode_throughput", "hbm_efficiency", "tensor_efficiency"]
    summary = built.workbook["Summary"]
    rows = {summary.cell(r, 1).value: r for r in range(1, summary.max_row + 1)}
    for name in pending:
        value = summary.cell(rows[name], 2)
        nominal = built.cell("nominal", name)
        assert value.data_type == "f" and value.value == f"='nominal'!${nominal.coordinate[0]}${nominal.coordinate[1:]}"
        listed = next(c for c in built.cells if c.sheet == "Summary" and c.coordinate == value.coordinate)
        assert listed.expected == evs[0].display(name)       # checked after recalculation like every Summary cell


def test_sheets_print_one_page_wide_with_headers_repeated_and_charts_alone():
    """Scenario sheets fit one landscape page wide (no page of a repeated column A), the
    header row on every page; no cell reaches past the band width a table folds into;
    each sweep chart has a page of its own, the tornado prints with its table; the
    Summary fits one page; the Simulation's charts go two to a page."""
    look = config()["print"]
    path = ROOT / "out" / "llama3-8b-a100-chat-mix.xlsx"
    wb = load_workbook(path)
    header = config()["sheets"]["header_row"]
    widest = config()["sheets"]["table_columns"]
    page_cm = {9: 21.0, 1: 21.59}[look["paper_size"]]            # landscape: the short side is the height
    printable_cm = page_cm - 2.54 * (look["margins_in"]["top"] + look["margins_in"]["bottom"])
    for ws in wb.worksheets[1:-1]:                                  # the scenario sheets
        setup = ws.page_setup
        assert (setup.orientation, int(setup.paperSize)) == ("landscape", look["paper_size"])
        assert ws.sheet_properties.pageSetUpPr.fitToPage and (setup.fitToWidth, setup.fitToHeight) == (1, 0)
        assert ws.print_title_rows == f"${header}:${header}" and not ws.print_title_cols
        assert ws.max_column <= widest, ws.title
        breaks = {b.id for b in ws.row_breaks.brk}
        sweep = [chart for chart in ws._charts if type(chart).__name__ == "ScatterChart"]
        assert sweep, ws.title
        for chart in sweep:                                         # a page of its own, over no cell
            top = chart.anchor._from.row
            bottom = top + math.ceil(chart.anchor.ext.height / 360000 / 0.529)
            assert top in breaks and (breaks & set(range(bottom, bottom + 4)) or bottom >= ws.max_row)
            assert not [c.coordinate for row in ws.iter_rows(min_row=top + 1, max_row=bottom) for c in row
                        if c.value is not None]
        for chart in ws._charts:                                    # ... and fits on it (scale at most 1)
            assert chart.anchor.ext.height / 360000 < printable_cm
        notes = [ws.cell(r, 5) for r in range(header + 1, ws.max_row + 1)      # texts, not a table's formulas
                 if isinstance(ws.cell(r, 5).value, str) and ws.cell(r, 5).data_type != "f"]
        assert notes and all(c.alignment.wrap_text for c in notes if len(c.value) > 60)
    nominal = wb["nominal"]
    holds = next(r for r in range(1, nominal.max_row + 1) if nominal.cell(r, 1).value == "How far the decision holds")
    assert holds - 1 in {b.id for b in nominal.row_breaks.brk}      # the table and its tornado start a page
    summary = wb["Summary"]
    assert (summary.page_setup.orientation, summary.page_setup.fitToWidth, summary.page_setup.fitToHeight) == \
        ("landscape", 1, 0)
    simulation = wb.worksheets[-1]                      # its title (seed, draws) on every page; two charts a page
    assert simulation.title == "Simulation" and simulation.print_title_rows == "$1:$1"
    anchors = [chart.anchor._from.row for chart in simulation._charts]
    assert len(anchors) >= 4 and set(anchors[::2]) <= {b.id for b in simulation.row_breaks.brk}
    assert not set(anchors[1::2]) & {b.id for b in simulation.row_breaks.brk}


def test_a_scenario_of_a_sweep_without_an_optional_column_links_no_blank_cell(tmp_path):
    """A scenario sheet inherits the sweep's rows as links to the nominal sheet; a column the rows
    leave out (mean_batch) stays blank there, not a link that reads 0 where 'not measured' is meant."""
    doc = yaml.safe_load((ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml").read_text(encoding="utf-8"))
    doc["scenarios"] = {"surge": {"description": "a surge", "set": {"peak_arrival_rate": "30 req/s"}}}
    doc.pop("expect")
    path = tmp_path / "plans" / "surge.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    model = standard_model()
    plan = load(path, model)
    built = workbook_of(plan, evaluate_all(plan, model), model)
    listed = {(c.sheet, c.coordinate) for c in built.cells}
    workbook = load_workbook(io.BytesIO(to_bytes(built)))
    formulas = {(ws.title, c.coordinate) for ws in workbook.worksheets for row in ws.iter_rows() for c in row
                if c.data_type == "f"}
    assert formulas and formulas <= listed, sorted(formulas - listed)[:5]
    links = [c for c in built.cells if c.sheet == "surge" and c.role == "link" and c.quantity == "load_sweep.ttft_p95"]
    assert len(links) == 3                      # the rows the scenario inherits are still links


@pytest.mark.skipif(recalc.ssconvert() is None, reason=recalc.GNUMERIC_SKIP_REASON)
def test_gnumeric_keeps_every_cell_note(tmp_path):
    """Gnumeric prints 'Unhandled object of type Note' once per note (438 over out/), yet keeps
    every one: it reads a note's text from the comments part and has no object for the VML box
    Excel needs beside it (ObjectType="Note", as Excel itself writes it), so the warning is
    Gnumeric's, not a fault of the file."""
    book = ROOT / "out" / "llama3-8b-a100-chat-mix.xlsx"
    with zipfile.ZipFile(book) as z:
        notes = sum(z.read(n).decode().count("<comment ") for n in z.namelist() if n.startswith("xl/comments/"))
    target = tmp_path / "chat.gnumeric"
    done = subprocess.run([recalc.ssconvert(), str(book), str(target)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert notes > 100
    assert len(re.findall(r"<gnm:CellComment ", gzip.decompress(target.read_bytes()).decode())) == notes
    assert done.stderr.count("Unhandled object of type Note") == notes
