"""capplan explain: the derivation tree, in the terminal and as Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan.analysis import pipeline
from capplan.review import explain


def test_active_gpus_down_to_the_inputs(run_main):
    code, out, err = run_main("explain", MAIN_PLAN, "active_gpus")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "active_gpus — GPUs that carry the peak"
    root = next(line for line in lines if line.startswith("active_gpus = "))
    assert root.startswith("active_gpus = active_replicas * gpus_per_replica = 9 × 1 GPU = 9 GPUs  [derived]")
    # the chain, each with formula, numbers substituted, value, tag and source
    assert ("├── active_replicas = ceil(peak_arrival_rate / safe_rate_per_replica) = ceil(60 req/s / 7 req/s) = 9"
            "  [derived]") in out
    assert "│   ├── peak_arrival_rate = 60 req/s  [assumption]  product forecast for peak hour" in out
    assert ("│   └── safe_rate_per_replica = instance_max_rate * rho_target = 10 req/s × 0.7 = 7 req/s  [derived]"
            in out)
    assert ("│       ├── instance_max_rate = max_before_failure(load_sweep.arrival_rate, load_sweep.meets_slo) "
            "= 10 req/s  [derived]") in out
    assert "rho_target = 0.7  [policy]  SRE headroom policy" in out
    assert "└── gpus_per_replica = 1 GPU  [policy]" in out
    # table columns are one summary line each, never row by row
    assert "load_sweep.arrival_rate: 2, 4, 6, …, 14 req/s (7 rows)  [measurement column]" in out
    assert "load_sweep.meets_slo = " in out and "PASS ×5, then FAIL ×2 (7 rows)" in out
    assert "ttft_p95_slo = 1,000 ms  [policy]  product SLO contract" in out
    assert "1,450" not in out                       # no sweep row is printed in full


def test_pending_measurements_are_marked(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "decode_step_time_bound")
    assert code == 0
    root = next(line for line in out.splitlines() if line.startswith("decode_step_time_bound = "))
    assert "= 10.96 ms  [derived] ⚠ rests on pending hbm_efficiency" in root
    assert "hbm_efficiency = 0.76  [measurement] ⚠ pending  assumed; measure achieved decode bandwidth" in out
    assert out.rstrip().endswith("⚠ pending measurements in this derivation: hbm_efficiency")


def test_markdown(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "active_gpus", "--format", "markdown")
    assert code == 0
    assert out.startswith("#### `active_gpus` = 9 GPUs\n")
    assert ("- **`active_gpus`** = **9 GPUs** · derived<br>`active_replicas * gpus_per_replica` = `9 × 1 GPU`"
            in out)
    assert "  - **`active_replicas`** = **9** · derived<br>" in out
    assert "    - **`peak_arrival_rate`** = **60 req/s** · assumption · product forecast for peak hour" in out
    assert "├──" not in out


def test_a_table_cell_shows_its_row(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "deployments[aws-p4de.24xlarge].monthly_cost")
    assert code == 0
    assert ("deployments[aws-p4de.24xlarge].monthly_cost = hourly_cost * hours_per_month = $81.92/h × 732 h "
            "= $59,965.44  [derived]") in out
    assert ("deployments[aws-p4de.24xlarge].hourly_cost = nodes * node_hourly_cost = 2 × $40.96/h = $81.92/h"
            in out)
    assert "deployments[aws-p4de.24xlarge].node_hourly_cost = $40.96/h  [measurement]" in out
    assert "fractional" not in out                  # the other row stays out


def test_scenario_pin_is_a_leaf(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "instance_max_rate", "--scenario", "context_x2")
    assert code == 0
    assert "scenario context_x2" in out
    assert ("instance_max_rate = 7.5 req/s  [assumption, pinned; replaces max_before_failure(load_sweep.arrival_rate, "
            "load_sweep.meets_slo)]") in out
    assert "├──" not in out


def test_nominal_fleet_in_a_scenario(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "deployments[aws-p4de.24xlarge].fleet_safe_capacity",
                        "--scenario", "n_minus_1")
    assert code == 0
    assert "= 105 req/s" in out
    assert "failed_gpus = 1 GPU  [assumption]" in out


def test_repeated_quantities_and_depth(run_main):
    code, out, _ = run_main("explain", MAIN_PLAN, "resilient_gpus")
    assert out.count("gpus_per_replica = 1 GPU") == 1          # only a leaf: shown where it is used
    # safe_rate_per_replica feeds both the node count and the safe capacity: expanded once
    code, out, _ = run_main("explain", MAIN_PLAN, "deployments[aws-p4de.24xlarge].safe_capacity")
    assert out.count("safe_rate_per_replica = instance_max_rate * rho_target = 10 req/s × 0.7 = 7 req/s") == 2
    assert out.count("instance_max_rate = max_before_failure") == 1
    assert "= 7 req/s  [derived]  (see above)" in out
    code, out, _ = run_main("explain", MAIN_PLAN, "active_gpus", "--depth", "1")
    assert "active_replicas = ceil(60 req/s / 7 req/s)" not in out  # the formula, yes …
    assert "active_replicas = ceil(peak_arrival_rate / safe_rate_per_replica)" in out and "(…)" in out
    assert "peak_arrival_rate" not in out.split("active_replicas = ", 1)[1].split("\n", 1)[1]


def test_little_law_plan(run_main):
    code, out, _ = run_main("explain", RETAIL_PLAN, "active_gpus")
    assert code == 0
    assert "slo_batch_limit = floor(decode_throughput / required_token_rate) = floor(1,000 tok/s / 250 tok/s per request)" in out
    assert "decode_throughput = 1,000 tok/s  [measurement] ⚠ pending" in out


@pytest.mark.parametrize("name, expected", [
    ("activ_gpus", "unknown quantity 'activ_gpus'; did you mean active_gpus"),
    ("monthly_cost", "did you mean deployments.monthly_cost"),
    ("decode_throughput", "'decode_throughput' exists only in plans with sizing: littles_law"),
    ("deployments[aws].nodes", "deployments has no row 'aws'"),
])
def test_unknown_names(run_main, name, expected):
    code, out, err = run_main("explain", MAIN_PLAN, name)
    assert code == 1 and out == ""
    assert expected in err


def test_unknown_scenario(run_main):
    code, _, err = run_main("explain", MAIN_PLAN, "active_gpus", "--scenario", "surge_5")
    assert code == 1 and "no scenario 'surge_5'" in err and "surge_50" in err


def test_derivation_line_for_messages():
    _, evaluations = pipeline.evaluate_plan(Path(MAIN_PLAN))
    nominal = evaluations[0]
    assert explain.derivation(nominal, "active_gpus") == \
        "active_gpus = active_replicas * gpus_per_replica = 9 × 1 GPU = 9 GPUs  [derived]"
    assert explain.derivation(nominal, "peak_arrival_rate") == \
        "peak_arrival_rate = 60 req/s  [assumption]  product forecast for peak hour"


# -- a plan that loads but does not evaluate (issue 23, item 6) ---------------------------------

def _slo_typo(base_plan, write_plan):
    """The trap of issue 23: a TTFT SLO meant as 0.8 s, written as 0.8 ms; no sweep row passes."""
    base_plan["inputs"]["ttft_p95_slo"] = {"value": "0.8 ms", "source": "product SLO"}
    return write_plan(base_plan)


def test_explain_of_an_input_of_a_plan_that_does_not_evaluate(base_plan, write_plan, run_main):
    code, out, err = run_main("explain", _slo_typo(base_plan, write_plan), "ttft_p95_slo")
    assert code == 1 and err == ""
    assert out.splitlines()[:4] == ["ttft_p95_slo — Time to first token, 95th percentile, client-measured",
                                    "plans/test-plan.yaml, scenario nominal", "",
                                    "ttft_p95_slo = 0.8 ms  [policy]  product SLO  (plans/test-plan.yaml:7)"]
    assert out.splitlines()[-1] == (
        "The plan does not evaluate: plans/test-plan.yaml: instance_max_rate: instance_max_rate = "
        "max_before_failure(load_sweep.arrival_rate, load_sweep.meets_slo): no load_sweep row meets every SLO "
        "(the lowest arrival_rate, 2 req/s, already fails: ttft_p95_ok: ttft_p95 = 85 ms > ttft_p95_slo = 0.8 ms, "
        "by 84.2 ms), so it is undefined; sweep lower rates or revisit the SLOs")


def test_explain_of_a_result_lists_the_inputs_it_rests_on(base_plan, write_plan, run_main):
    code, out, _ = run_main("explain", _slo_typo(base_plan, write_plan), "instance_max_rate")
    assert code == 1
    assert ("instance_max_rate = max_before_failure(load_sweep.arrival_rate, load_sweep.meets_slo)  (not computed), "
            "from these inputs:") in out
    assert "\n  ttft_p95_slo = 0.8 ms  [policy]  product SLO  (plans/test-plan.yaml:7)\n" in out
    assert "\n  load_sweep.ttft_p95: 85, 110, 1,500 ms (3 rows)  [measurement column]  (plans/test-plan.yaml:" in out
    assert "\n  min_delivered_share = 0.95  [policy]  capplan's default;" in out
    assert "no load_sweep row meets every SLO" in out.splitlines()[-1]


def test_explain_of_a_cell_and_as_markdown(base_plan, write_plan, run_main):
    path = _slo_typo(base_plan, write_plan)
    code, out, _ = run_main("explain", path, "load_sweep[4].ttft_p95")
    assert code == 1 and "\nload_sweep[4].ttft_p95 = 110 ms  [measurement]  (plans/test-plan.yaml:" in out
    code, out, _ = run_main("explain", path, "active_gpus", "--format", "markdown")
    assert code == 1 and out.startswith("#### `active_gpus` is not computed: the plan does not evaluate\n")
    assert "- ttft_p95_slo = 0.8 ms [policy] product SLO (plans/test-plan.yaml:7)" in out
    assert out.rstrip().splitlines()[-1].startswith("> plans/test-plan.yaml: instance_max_rate:")


@pytest.mark.parametrize("args, expected", [
    (("nope",), "unknown quantity 'nope'"),
    (("decode_throughput",), "'decode_throughput' exists only in plans with sizing: littles_law"),
    (("load_sweep[5].ttft_p95",), "load_sweep has no row '5' (rows: 2, 4, 6)"),
    (("ttft_p95_slo", "--scenario", "nope"), "no load_sweep row meets every SLO"),   # the plan's own error
])
def test_explain_of_a_plan_that_does_not_evaluate_names_what_it_cannot_find(base_plan, write_plan, run_main,
                                                                           args, expected):
    code, out, err = run_main("explain", _slo_typo(base_plan, write_plan), *args)
    assert code == 1 and out == "" and expected in err
