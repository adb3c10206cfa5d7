"""Power and space (#40): a GPU's power at its TDP or a cap, a node's and the fleet's power, the
site's budget and the racks' limit as a verdict, energy per 1M output tokens and the electricity a
month, worked by hand.

The base plan: an A100 (TDP 400 W), peak 60 req/s, PAR 3, λ* 4 req/s at ρ 0.7: 22 active + 1 spare
= 23 replicas on 3 nodes of 8 GPUs. With a 300 W cap, 100 W of host per GPU and a PUE of 1.5, a
node draws 8 × (300 + 100) W = 3.2 kW, the fleet 3 × 3.2 = 9.6 kW of IT power and 14.4 kW at the
facility. The class mix averages 0.7 × 64 + 0.3 × 256 = 121.6 output tokens a request.
"""

from __future__ import annotations

import pytest
from test_candidates import ranking_of, three
from test_demand import evaluated

POWER = {"gpu_power_cap": "300 W/GPU", "host_power_per_gpu": "100 W/GPU", "power_usage_effectiveness": 1.5,
         "electricity_price": "0.1 USD/kWh"}


def _plan(base_plan, **inputs):
    base_plan["inputs"].update(inputs)
    return base_plan


def _row(e, column):
    return e.display(f"deployments.{column}")[0]


def test_a_capped_fleets_power_energy_and_electricity_by_hand(tmp_path, base_plan):
    """Energy at the average load: 14.4 kW over 20 req/s × 121.6 tokens = 8,755.2 tokens/s, i.e.
    14.4 / (8,755.2 × 3,600 / 1e6) kWh per 1M tokens; at the peak the same over 60 req/s. The
    electricity: 14.4 kW × 732 h × $0.10/kWh."""
    _, e = evaluated(tmp_path, _plan(base_plan, **POWER))
    assert e.display("gpu_tdp") == 400 and e.display("gpu_power") == 300
    assert _row(e, "node_power") == pytest.approx(3.2)
    assert _row(e, "fleet_power") == pytest.approx(9.6)
    assert _row(e, "facility_power") == pytest.approx(14.4)
    assert _row(e, "energy_per_million_tokens") == pytest.approx(14.4 / (20 * 121.6 * 3600 / 1e6))
    assert _row(e, "peak_energy_per_million_tokens") == pytest.approx(14.4 / (60 * 121.6 * 3600 / 1e6))
    assert _row(e, "power_monthly_cost") == pytest.approx(14.4 * 732 * 0.1)
    assert _row(e, "power_fits")


def test_a_cap_above_the_tdp_leaves_the_tdp(tmp_path, base_plan):
    _, e = evaluated(tmp_path, _plan(base_plan, gpu_power_cap="500 W/GPU"))
    assert e.display("gpu_power") == 400


@pytest.mark.parametrize("limits, fits", [
    ({"site_power_budget": "15 kW"}, True),                      # 14.4 kW at the facility
    ({"site_power_budget": "14 kW"}, False),
    ({"rack_power_limit": "3.2 kW"}, True),                      # one node draws 3.2 kW
    ({"rack_power_limit": "3 kW"}, False),
    ({"site_power_budget": "1.2 MW", "rack_power_limit": "40 kW"}, True)])
def test_a_power_capped_site_is_a_verdict_of_each_deployment(tmp_path, base_plan, limits, fits):
    _, e = evaluated(tmp_path, _plan(base_plan, **POWER, **limits))
    assert bool(_row(e, "power_fits")) is fits


def test_a_fleet_over_the_sites_power_is_no_option(write_plan, run_main, base_plan):
    path = write_plan(_plan(base_plan, **POWER, site_power_budget="14 kW"))
    code, out, _ = run_main("build", str(path))
    assert code == 0
    record = (path.parent.parent / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert "Not ready to approve" in record
    assert "; its power does not fit: 14.4 kW at the facility against the site's budget of 14 kW." in record


def test_a_power_capped_site_makes_the_largest_fleet_infeasible(write_plan):
    """H100 and H200 draw 700 W; 100 W of host, PUE 1.5: an 8-GPU node 6.4 kW, 9.6 kW at the
    facility. h100 TP1 needs 3 nodes (28.8 kW), h100 TP2 and h200 TP1 need 2 (19.2 kW): under a
    25 kW budget only h100 TP1 is infeasible, and the winner stays."""
    plan = three()
    plan["inputs"].update(host_power_per_gpu="100 W/GPU", power_usage_effectiveness=1.5, site_power_budget="25 kW")
    _, r = ranking_of(write_plan, plan)
    ev = r.evaluated
    reasons = {c.label: ev.reasons[i] for i, c in enumerate(ev.candidates)}
    assert reasons["h100-sxm5-80gb TP1"] == (
        "its fleet of 3 nodes draws 28.8 kW at the facility, over the site's power budget of 25 kW "
        "(site_power_budget)")
    assert reasons["h100-sxm5-80gb TP2"] == reasons["h200-sxm-141gb TP1"] == ""
    assert ev.candidates[r.winner].label == "h100-sxm5-80gb TP2"


def test_a_node_over_the_rack_limit_is_infeasible_until_capped(write_plan):
    """A 6 kW rack takes no 6.4 kW node; at a 600 W cap the node draws 8 × 700 W = 5.6 kW."""
    plan = three()
    plan["inputs"].update(host_power_per_gpu="100 W/GPU", rack_power_limit="6 kW")
    _, r = ranking_of(write_plan, plan)
    assert set(r.evaluated.reasons) == {"a node draws 6.4 kW, over the rack power limit of 6 kW (rack_power_limit)"}
    plan["inputs"]["gpu_power_cap"] = "600 W/GPU"
    _, r = ranking_of(write_plan, plan)
    assert set(r.evaluated.reasons) == {""}


def test_a_negative_budget_is_one_message(write_plan, run_main, base_plan):
    path = write_plan(_plan(base_plan, site_power_budget="-1 MW"))
    code, _, err = run_main("build", str(path))
    assert code == 1
    assert err.splitlines()[0] == ("error: plans/test-plan.yaml:10: inputs.site_power_budget: site_power_budget must "
                                   "be non-negative: a site gives no negative power; 0 sets no budget; got -1 MW")


def test_a_budget_needs_the_gpus_power(write_plan, run_main, base_plan):
    plan = _plan(base_plan, site_power_budget="1.2 MW")
    plan["gpu"] = "l40s"
    path = write_plan(plan)
    code, _, err = run_main("build", str(path))
    assert code == 1
    assert "inputs.site_power_budget: a power budget is held against the GPUs' power, but the catalog gives " \
           "no TDP for l40s: state gpu_tdp or gpu_power_cap under inputs" in err
