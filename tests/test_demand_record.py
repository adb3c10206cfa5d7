"""The demand curve in the outputs (#22): the strategies' table and recommendation in the
record, the options and sentence for its first screen, the chart with the short intervals
shaded, and every profile quantity in the JSON document."""

from __future__ import annotations

import json
import re

import pytest
from test_demand import NO_LAG, plan_data, write

from capplan.artifacts import demand
from capplan.build import compile_plan
from capplan.rendering import demand as rendering_demand
from capplan.rendering.choices import Option

LAG = {**NO_LAG, "scale_up_window": "60 s"}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("record")
    data = plan_data(reserved_price_ratio=0.6, **LAG)
    for row in data["inputs"].values():
        if isinstance(row, dict):
            row.pop("range", None)
    for row in data["tables"]["deployments"]["rows"]:
        row.pop("range", None)
    return compile_plan(write(folder, data))


def test_the_record_prices_each_strategy_and_recommends_one(compiled):
    text = compiled.files["demand.md"].decode()
    assert "### Strategies through the profile" in text
    # by hand (test_demand): the nine replicas started at hours 12 and 18 boot a minute and serve the
    # other 59 of the hour, so the day pays its 126 replica-hours; 30.5 days, $2.49/h
    assert f"| autoscaled on gpu | ${126 * 2.49 * 30.5:,.2f} |" in text
    assert f"| fixed on gpu | ${11 * 2.49 * 732:,.2f} |" in text
    assert "serve once the scale-up lag of 60 s has passed, 0 whole interval(s) and 2% of one later" in text
    assert ("2 interval(s) of the profile are short of capacity at λ*, for 120 s in all, which asking for replicas "
            "60 s ahead removes") in text
    assert "| base + burst on gpu |" in text and "| ✗ short for 120 s of the profile unless replicas are " \
                                                 "asked for 60 s ahead |" in text
    # the autoscaled fleets are short at hours 12 and 18: the fixed fleets hold, the cheaper all-reserved one wins
    assert re.search(r"\*\*Recommendation\.\*\* Through the traffic profile, all reserved on gpu is the cheapest "
                     r"that holds the SLO: \$12,029\.69 a month", text)
    assert "![The traffic profile" in text and "(demand.demand.svg)" in text


def test_the_first_screen_gets_options_and_a_sentence(compiled):
    from capplan.analysis.pipeline import run
    from capplan.rendering import view

    analysed = run(compiled.plan.path)
    shown = view.build(analysed.plan, analysed.evaluations, analysed.artifacts)
    options = shown.demand_options
    assert [o.name for o in options] == ["fixed on gpu", "autoscaled on gpu", "base + burst on gpu",
                                         "all reserved on gpu"]
    assert all(isinstance(o, Option) and all(isinstance(v, str) for v in vars(o).values()) for o in options)
    assert options[1].holds.startswith("✗ short for 120 s") and options[0].holds == "✓ holds in every interval"
    assert shown.demand_sentence.startswith("Through the traffic profile, all reserved on gpu")


@pytest.mark.parametrize("kind", [demand.FIXED, demand.RESERVED, demand.BLOCK, demand.OWNED])
def test_a_fleet_sized_for_the_peak_that_breaks_says_so_as_the_other_options_do(kind):
    """Fixed, reserved, block and owned fleets hold where the nominal fleet holds at the peak;
    one that does not reads '✗ …' on the first screen beside the deployments' '✗ breaks in …'."""
    broken = demand.Strategy(kind, "gpu", 1000.0, 2.0, holds=False)
    assert rendering_demand._holds(None, broken) == "✗ the fleet breaks at the peak"


def test_the_chart_shades_exactly_the_short_time(compiled):
    """Hours 12 and 18 are short for their first minute (the 60 s lag): a 60th of each hour is shaded,
    from its start."""
    svg = compiled.files["demand.demand.svg"].decode()
    knee = re.findall(r"<rect x='([\d.]+)' y='70.0' width='([\d.]+)' height='240.0' fill='#fbe3d6'/>", svg)
    hour = (880 - 62 - 16) / 24                 # the plot's width over the day's 24 intervals
    shaded = [(float(x), float(w)) for x, w in knee]
    assert shaded == [pytest.approx((62 + h * hour, hour / 60), abs=0.05) for h in (12, 18)]     # to 0.1 px


def test_the_json_holds_the_profile_and_its_results(compiled):
    doc = json.loads(compiled.files["demand.json"])
    nominal = doc["scenarios"]["nominal"]
    assert nominal["quantities"]["slo_risk_intervals"]["value"] == 2
    rows = nominal["tables"]["profile"]["rows"]
    assert len(rows) == 24 and [r["slo_risk"] for r in rows].count(True) == 2
    assert nominal["tables"]["profile"]["columns"]["serving_replicas"]["formula"] == \
        "window_min(target_replicas, scale_up_intervals)"
    assert "autoscaled_monthly_cost" in nominal["tables"]["deployments"]["columns"]


def test_diff_names_a_change_of_strategy(tmp_path):
    """A one-minute scale-up window leaves hours 12 and 18 short: base + burst no longer holds the SLO."""
    from capplan.review.diff import compare, load_file

    old = write(tmp_path, plan_data(reserved_price_ratio=0.7, **NO_LAG), "old.yaml")
    new = write(tmp_path, plan_data(reserved_price_ratio=0.7, **LAG), "new.yaml")
    doc = compare([(load_file(old), load_file(new))])
    plan = doc["plans"][0]
    assert plan["strategy"] == ("the demand curve's cheapest strategy that holds the SLO: base + burst on gpu → "
                                "all reserved on gpu")
    assert plan["headline"].endswith(plan["strategy"] + ".")
