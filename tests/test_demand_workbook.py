"""The traffic profile in the workbook (#22): one row per interval with live formulas, which
LibreOffice and Gnumeric recalculate to the engine's values, and an edit of a multiplier and
of the scale-up lag made in the workbook recomputes the fleet and the costs as the engine does."""

from __future__ import annotations

import pytest
import recalc
from openpyxl import load_workbook
from plan_edits import quick_view, with_cell, with_input
from test_demand import NO_LAG, plan_data, write

from capplan.engine.evaluate import evaluate_all
from capplan.language.model import standard_model
from capplan.loading.plan import load
from capplan.rendering.workbook import build_workbook, to_bytes

# quiet, a morning ramp, a peak, an evening fall: one-interval lag and delay both bite
PROFILE = [0.2] * 7 + [0.5, 0.8, 1.0, 1.0, 0.9] + [0.7] * 6 + [0.4, 0.3] + [0.2] * 4


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demand")
    model = standard_model()
    data = plan_data(PROFILE, reserved_price_ratio=0.6, **{**NO_LAG, "scale_up_window": "60 s",
                                                           "scale_down_delay": "30 min"})
    data["tables"]["deployments"]["rows"].append(
        {"name": "node", "gpus_per_node": 8, "node_hourly_cost": "14.32 USD/h", "reserved_upfront": "40000 USD",
         "reserved_term": "8760 h", "reserved_hourly": "4 USD/h", "spot_hourly_cost": "6 USD/h",
         "owned_price": "150000 USD", "owned_maintenance": 0.05})
    plan = load(write(folder, data), model)
    evs = evaluate_all(plan, model)
    book = build_workbook(plan, evs, model, quick_view(plan, evs))
    source = folder / "demand.xlsx"
    source.write_bytes(to_bytes(book))
    # the edit, in the workbook: hour 3 at the peak, and a start of 2 h (two intervals)
    hour = book.cell("nominal", "profile.multiplier", 3)
    boot = book.cell("nominal", "engine_start_time")
    wb = load_workbook(source)
    wb[hour.sheet][hour.coordinate].value = 1
    wb[boot.sheet][boot.coordinate].value = 7200
    edited = folder / "demand-edited.xlsx"
    wb.save(edited)
    # ... and the same edit made to the plan
    changed = with_input(with_cell(plan, "profile", 3, "multiplier", "1"), "engine_start_time", "7200 s")
    changed_evs = evaluate_all(changed, model)
    expected = build_workbook(changed, changed_evs, model, quick_view(changed, changed_evs))
    return folder, book, source, edited, expected, evs[0], changed_evs[0], plan, model


def test_the_profile_is_one_row_per_interval_with_formulas(built):
    _, book, *_ = built
    rows = [c for c in book.cells if c.quantity == "profile.serving_replicas"]
    assert len(rows) == 24 and all(c.role == "derived" for c in rows)
    # the price-model inputs are cells of the deployment rows, the costs formulas of them
    assert {c.role for c in book.cells if c.quantity == "deployments.reserved_upfront"} == {"input"}
    for cost in ("deployments.spot_monthly_cost", "deployments.owned_monthly_cost"):
        roles = [c.role for c in book.cells if c.quantity == cost]
        assert set(roles) == {"derived", "summary"} and roles.count("summary") == 1     # the Summary links it
    # the price is an input (its flip, under how far the recommendation holds, is capplan's as of the build)
    assert {c.role for c in book.cells if c.quantity == "electricity_price"} == {"input", "holds"}


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_spreadsheet_engines_recalculate_the_profile(built, engine, tmp_path):
    folder, book, source, edited, expected, before, after, *_ = built
    out = engine.recalc([source, edited], tmp_path)
    wb = recalc.values(out[source])
    assert not recalc.error_cells(wb)
    assert not recalc.mismatches(book.cells, wb, limit=0, engine=engine)
    # the edit flows through: hour 3 now needs the peak's fleet, and the boot takes two intervals
    assert after.display("scale_up_intervals") == 3 and before.display("scale_up_intervals") == 1
    assert after.display("slo_risk_intervals") > before.display("slo_risk_intervals")
    changed = recalc.values(out[edited])
    assert not recalc.error_cells(changed)
    # the flips found as of the build (role holds) stay as built: a rebuild moves them, not an edit
    assert not recalc.mismatches([c for c in expected.cells if c.role != "holds"], changed, limit=0, engine=engine)


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_the_summary_recommends_the_record_s_strategy_and_a_price_edit_moves_it(built, engine, tmp_path):
    """The Summary's first block is the strategies through the profile, and its recommendation the
    record's (the cheapest strategy that holds the SLO: owning the node); recalculated, it names that
    strategy, and after the node's purchase price is edited in the workbook, the strategy the engine
    recommends for the plan with that price."""
    from capplan.artifacts import demand

    folder, book, source, _, _, before, _, plan, model = built
    node = list(before.display("deployments.name")).index("node")
    price = book.cell("nominal", "deployments.owned_price", node)
    wb = load_workbook(source)
    wb[price.sheet][price.coordinate].value = 10_000_000
    dearer = folder / "demand-owned-dearer.xlsx"
    wb.save(dearer)
    changed = with_cell(plan, "deployments", node, "owned_price", "10000000 USD")
    changed_evs = evaluate_all(changed, model)
    expected = build_workbook(changed, changed_evs, model, quick_view(changed, changed_evs))
    out = engine.recalc([source, dearer], tmp_path)
    said = {}
    for path, e, made in ((source, before, book), (dearer, changed_evs[0], expected)):
        cell = next(c for c in made.cells if c.quantity == "strategies.recommendation")
        assert cell.expected == f"Recommended: {demand.recommended(demand.strategies(e)).name}"
        said[path] = recalc.values(out[path])[cell.sheet][cell.coordinate].value
        assert said[path] == cell.expected
        assert not recalc.mismatches([c for c in made.cells if c.role == "summary"], recalc.values(out[path]),
                                     limit=0, engine=engine)
    assert said[source] == "Recommended: owned on node" != said[dearer]
