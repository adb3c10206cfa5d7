"""A plan writes the unit of every value with a scale (issue 23, item 5): what may stay bare.

The refusals, each with its message, are cases of test_bad_input.py; here the
values that must keep loading: counts and ratios, cells of a column whose
unit the table declares (and their ranges, read in that unit), imported
sweep rows, and every plan the project ships.
"""

from __future__ import annotations

import pytest
from conftest import ROOT

from capplan.language.model import standard_model
from capplan.loading import unitrule
from capplan.loading.plan import load


@pytest.mark.parametrize("unit, needs", [
    ("ms", True), ("s", True), ("GiB/GPU", True), ("B", True), ("req/s", True), ("token/s", True),
    ("USD/h", True), ("FLOP/token", True),
    ("", False), ("GPU", False), ("request", False), ("token", False), ("token/request", False),
])
def test_counts_and_ratios_need_no_unit(unit, needs):
    assert unitrule.needs_unit(unit) is needs


def test_bare_counts_and_ratios_load(base_plan, write_plan):
    base_plan["inputs"].update({"gpus_per_replica": 2, "rho_target": 0.6, "decode_batch": "16"})
    plan = load(write_plan(base_plan), standard_model())
    assert plan.nominal.inputs["gpus_per_replica"].value == 2
    assert plan.nominal.inputs["decode_batch"].value == 16
    assert plan.nominal.tables["classes"].rows[0]["prompt_tokens"] == 32         # token/request, bare


def test_a_column_with_declared_units_takes_bare_cells_and_ranges_in_that_unit(base_plan, write_plan):
    sweep = base_plan["tables"]["load_sweep"]
    sweep["units"] = {"ttft_p95": "s"}
    sweep["rows"][0]["ttft_p95"] = {"value": 0.085, "range": "0.08 to 0.09"}
    sweep["rows"][1]["ttft_p95"] = 0.11
    sweep["rows"][2]["ttft_p95"] = 1.5
    data = load(write_plan(base_plan), standard_model()).nominal.tables["load_sweep"]
    assert [r["ttft_p95"] for r in data.rows] == pytest.approx([0.085, 0.11, 1.5])      # base unit: s
    drawn = data.uncertain[(0, "ttft_p95")]
    assert (drawn.low, drawn.high) == pytest.approx((0.08, 0.09))


def test_a_range_borrows_the_unit_of_its_high_end(base_plan, write_plan):
    base_plan["inputs"]["peak_arrival_rate"] = {"value": "60 req/s", "range": "45 to 80 req/s"}
    drawn = load(write_plan(base_plan), standard_model()).nominal.inputs["peak_arrival_rate"].uncertain
    assert (drawn.low, drawn.high, drawn.text) == (45, 80, "lognormal, 90 % in 45 to 80 req/s")


def test_a_value_on_the_edge_of_its_range_is_inside(base_plan, write_plan):
    base_plan["inputs"]["peak_arrival_rate"] = {"value": "40 req/s", "range": "22 to 40 req/s"}
    assert load(write_plan(base_plan), standard_model()).nominal.inputs["peak_arrival_rate"].uncertain.high == 40


@pytest.mark.parametrize("plan", sorted((ROOT / "plans").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_plan_writes_its_units(plan):
    assert load(plan, standard_model()).nominal.inputs
