"""The committed workbooks read right where nothing recalculates.

Excel's Protected View, file previewers, pandas and ``openpyxl`` with
``data_only=True`` show a formula cell's cached value. Every formula cell of
every workbook in ``out/`` must carry the engine's value (the plan evaluated
again here, not numbers typed in the test), relative 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import recalc
from openpyxl import load_workbook

from capplan.engine.evaluate import evaluate_all
from capplan.engine.model import standard_model
from capplan.loading.plan import load
from capplan.rendering.workbook import build_workbook

ROOT = Path(__file__).resolve().parents[1]
PLANS = tuple(sorted((ROOT / "plans").glob("*.yaml")))


@pytest.mark.parametrize("plan_path", PLANS, ids=lambda p: p.stem)
def test_every_formula_cell_caches_the_engines_value(plan_path):
    model = standard_model()
    plan = load(plan_path, model)
    listed = build_workbook(plan, evaluate_all(plan, model), model).cells
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
    built = build_workbook(plan, evs, model)
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
