"""Price models per offer (#22): a reserved node with upfront, term and hourly price, and spot
capacity topped up for its interruptions with the spares on demand, worked by hand on the
three-level day of tests/test_demand.py."""

from __future__ import annotations

import math

import pytest
from test_demand import NO_LAG, column, evaluated, plan_data, value


def _row(e, column):
    return e.display(f"deployments.{column}")[0]


def test_a_reserved_price_with_upfront_and_term(tmp_path):
    """$8,760 upfront for a year (8,760 h) and $0.49/h: $1.49/h effective, 0.598 of on-demand $2.49;
    ceil(24 × 0.598) = 15 intervals: the 15th largest count, 2 replicas, is reserved."""
    data = plan_data(**NO_LAG)
    data["tables"]["deployments"]["rows"][0].update(reserved_upfront="8760 USD", reserved_term="8760 h",
                                                     reserved_hourly="0.49 USD/h")
    _, e = evaluated(tmp_path, data)
    assert _row(e, "reserved_hourly_cost") == pytest.approx(1.49)
    assert _row(e, "reserved_ratio") == pytest.approx(1.49 / 2.49)
    assert _row(e, "reserved_replicas") == 2
    assert _row(e, "base_burst_monthly_cost") == pytest.approx((2 * 24 * 1.49 + 78 * 2.49) * 30.5)
    assert _row(e, "all_reserved_monthly_cost") == pytest.approx(11 * 24 * 1.49 * 30.5)


def test_spot_replicas_at_an_interruption_rate(tmp_path):
    """f = 10 % a month: h = −ln(0.9)/732 h per replica-hour. With no start lag nothing is lost, and
    spot carries every serving replica but the spare: 1, 5 and 10 replicas. With a 1-hour start an
    interruption costs an hour, h·L_up = 0.000144, so each count is topped up by one: ceil(r/(1 − hL))."""
    data = plan_data(spot_interruption_rate=0.1, **NO_LAG)
    data["tables"]["deployments"]["rows"][0]["spot_hourly_cost"] = "0.99 USD/h"
    _, e = evaluated(tmp_path, data)
    assert value(e, "spot_hazard") == pytest.approx(-math.log(0.9) / 732)
    assert column(e, "spot_replicas") == [1] * 12 + [5] * 6 + [10] * 6
    assert value(e, "spare_replica_hours") == 24
    assert _row(e, "spot_monthly_cost") == pytest.approx((102 * 0.99 + 24 * 2.49) * 30.5)
    data = plan_data(spot_interruption_rate=0.1, **{**NO_LAG, "engine_start_time": "3600 s"})
    data["tables"]["deployments"]["rows"][0]["spot_hourly_cost"] = "0.99 USD/h"
    _, e = evaluated(tmp_path, data)
    assert value(e, "spot_capacity_lost") == pytest.approx(-math.log(0.9) / 732)
    assert column(e, "spot_replicas")[-1] == 11


def test_capacity_blocks_price_the_peak_fleet_by_the_block(tmp_path):
    """A 24-hour block of one node at $40: $40 / 24 h a node, 11 nodes all month, no scaling inside."""
    data = plan_data(**NO_LAG)
    data["tables"]["deployments"]["rows"][0].update(block_price="40 USD", block_hours="24 h")
    _, e = evaluated(tmp_path, data)
    assert _row(e, "block_monthly_cost") == pytest.approx(11 * 40 / 24 * 732)


def test_an_offer_without_spot_or_blocks_lists_neither(tmp_path):
    from capplan.artifacts import demand

    _, e = evaluated(tmp_path, plan_data(**NO_LAG))
    assert [s.kind for s in demand.strategies(e)] == [demand.FIXED, demand.AUTOSCALED, demand.BASE_BURST,
                                                      demand.RESERVED]


def test_a_week_of_hourly_multipliers(tmp_path):
    week = ([0.1] * 12 + [0.5] * 6 + [1.0] * 6) * 5 + [0.1] * 48
    _, e = evaluated(tmp_path, plan_data(week, **NO_LAG))
    assert value(e, "profile_span") == 168 and value(e, "profile_repeats") == pytest.approx(732 / 168)
    assert value(e, "serving_replica_hours") == 126 * 5 + 2 * 48


def test_an_owned_node_by_hand(tmp_path):
    """$8,784 for a one-GPU node over 4 years with 8 % capital on half of it and 6 % maintenance:
    $8,784 × (0.25 + 0.04 + 0.06) a year of 8,784 h = $0.35/h; the A100 at its 400 W TDP and 100 W
    of host through a PUE of 1.5 at $0.10/kWh: 0.5 kW × 1.5 × 0.1 = $0.075/h. The 11 nodes sized for
    the peak, every hour of the month."""
    data = plan_data(host_power_per_gpu="100 W/GPU", power_usage_effectiveness=1.5,
                     electricity_price="0.1 USD/kWh", **NO_LAG)
    data["tables"]["deployments"]["rows"][0].update(owned_price="8784 USD", owned_years=4, owned_maintenance=0.06)
    _, e = evaluated(tmp_path, data)
    assert value(e, "gpu_tdp") == 400
    assert _row(e, "node_power") == pytest.approx(0.5)          # kW
    assert _row(e, "owned_hourly_cost") == pytest.approx(0.35 + 0.075)
    assert _row(e, "owned_monthly_cost") == pytest.approx(11 * 0.425 * 732)
    from capplan.artifacts import demand

    owned = [s for s in demand.strategies(e) if s.kind == demand.OWNED]
    assert len(owned) == 1 and owned[0].holds and owned[0].monthly_cost == pytest.approx(11 * 0.425 * 732)
