"""The decision line tells the truth (issue #23, item 4): no "carry" while a gate or the
queue fails, the "holds" verdict includes the queue's stability, and illustrative or
single-run sweeps are flagged in the record beside the pending inputs."""

from __future__ import annotations

import json

import yaml
from conftest import MAIN_PLAN, RETAIL_PLAN
from plan_edits import full_view

from capplan.language.model import standard_model
from capplan.loading import plan as plan_module
from capplan.rendering import record
from capplan.engine.evaluate import evaluate_all


def _view(path):
    p = plan_module.load(path, standard_model())
    return full_view(p, evaluate_all(p, standard_model()))


def _retail(write_plan, **inputs):
    plan = yaml.safe_load(RETAIL_PLAN.read_text())
    plan.pop("expect")
    plan["inputs"].update(inputs)
    return write_plan(plan, "retail")


def test_retail_headline_names_gate_2_and_the_queue():
    headline = _view(RETAIL_PLAN).headline
    assert "carry the" not in headline
    # short sentences (issue #41): what fails, then what it would take
    assert headline.startswith("25 GPUs are sized for the 50 req/s peak but do not carry it. Gate 2 (memory "
                               "bandwidth) fails: one decode step at a batch of 4 requests takes at least 10.66 ms")
    # what it would take: the SLO, the fleet or the measurement
    assert "allows. It would take a TPOT SLO of at least 10.66 ms" in headline
    # the queue: 50 req/s at 2 req/s per replica is 25 Erlangs on 25 replicas, rho = 1
    assert ("The queue at peak is unstable: 25 Erlangs of work reach 25 active replicas (P(wait) = 1), and the wait "
            "grows without bound. It would take at least 26 active replicas (26 GPUs)") in headline


def test_a_plan_whose_gates_and_queue_hold_says_carry():
    assert _view(MAIN_PLAN).headline.startswith("9 GPUs carry the 60 req/s peak; 10 GPUs with redundancy.")


def test_a_failing_compute_gate_is_named_with_what_it_would_take(write_plan):
    # prefill of 500 tokens: 2 × 8.03 B × 500 = 8.03 TFLOP / (312 × 0.45 TFLOP/s) = 57.19 ms + 20 ms = 77.19 ms
    headline = _view(_retail(write_plan, ttft_p95_slo="50 ms")).headline
    assert ("Gate 3 (compute) fails: the unqueued TTFT of the longest prompt is at least 77.19 ms, more than the "
            "TTFT SLO allows. It would take a TTFT SLO of at least 77.19 ms") in headline


def test_holds_includes_the_queues_stability(run_main):
    # the nominal fleets carry 64 and 52 req/s at 2 req/s per replica, but the 25 active replicas the plan
    # sizes are offered 25 Erlangs: P(wait) = 1, so no fleet "holds" (the workbook's Summary links these cells)
    code, out, err = run_main("eval", RETAIL_PLAN, "--json")
    assert code == 0, err
    nominal = json.loads(out)["scenarios"]["nominal"]
    assert nominal["quantities"]["wait_probability"]["value"] == 1
    assert [r["fleet_holds"] for r in nominal["tables"]["deployments"]["rows"]] == [False, False]


def test_an_illustrative_sweep_is_flagged_beside_the_pending_inputs():
    text = record.render(_view(MAIN_PLAN))
    # on the first screen, beside the flip of the λ* it gives (4.76 % away)
    assert ("> 1. `instance_max_rate` 4.76 % lower (below 9.524 req/s; today 10 req/s): active GPUs 9 → 10; "
            "resilient GPUs 10 → 11; fractional-a100-80gb nodes 10 → 11 (monthly cost +$1,822.68) — ⚠ the "
            "load_sweep table is illustrative, one run per rate.") in text
    assert "<summary>Pending measurements and provisional tables (3)" in text
    assert ("- `load_sweep` table — illustrative: the plan says its rows stand in for measurements; replace them with "
            "measured runs; one run per rate") in text
    # the sweep's text says what was done, not "median of replicated runs"
    assert "(a rate run several times shows the median of its runs). Here: one run per rate, illustrative." in text


def test_a_measured_sweep_of_replicated_runs_is_not_flagged(write_plan, base_plan):
    for row in base_plan["tables"]["load_sweep"]["rows"]:
        row["runs"] = 3
    text = record.render(_view(write_plan(base_plan)))
    assert "Provisional" not in text
    assert "Here: 3 runs per rate." in text


def test_an_unknown_status_is_refused_at_its_key(run_main, write_plan, base_plan):
    base_plan["tables"]["load_sweep"]["status"] = "guessed"
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1
    assert "tables.load_sweep.status: status must be one of measured, illustrative, got 'guessed'" in err
