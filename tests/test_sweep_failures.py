"""Why a sweep row fails, check by check (issue 23, item 5): the words for max_before_failure's message.

Evaluated on a plan whose top row fails three checks, one of them
``delivered_ok`` (7 of 100 requests completed, as in a saturated GuideLLM run).
"""

from __future__ import annotations

import pytest

from capplan.analysis import pipeline
from capplan.engine.evaluate import _show
from capplan.engine.failing_row import why_row_fails


@pytest.fixture
def evaluation(base_plan, write_plan):
    base_plan["tables"]["load_sweep"]["rows"].append(
        {"arrival_rate": "8 req/s", "ttft_p95": "2000 ms", "tpot_p95": "30 ms", "e2e_p99": "2 s",
         "completed": 7, "sent": 100})
    _, evaluations = pipeline.evaluate_plan(write_plan(base_plan))
    return evaluations[0]


def _why(e, row):
    formulas = {name: node.formula for name, node in e.graph.nodes.items()}
    return why_row_fails(formulas, "load_sweep.meets_slo", row, e.values, lambda n, v: _show(n, v, e.model))


def test_a_row_that_passes_has_nothing_to_say(evaluation):
    assert _why(evaluation, 0) == ""


def test_one_failing_check_with_both_sides_and_the_gap(evaluation):
    assert _why(evaluation, 2) == "ttft_p95_ok: ttft_p95 = 1,500 ms > ttft_p95_slo = 1,000 ms, by 500 ms"


def test_every_failing_check_in_the_formulas_order_with_completed_and_sent(evaluation):
    assert _why(evaluation, 3) == (
        "ttft_p95_ok: ttft_p95 = 2,000 ms > ttft_p95_slo = 1,000 ms, by 1,000 ms; "
        "tpot_p95_ok: tpot_p95 = 30 ms > tpot_p95_slo = 25 ms, by 5 ms; "
        "delivered_ok: completed_share = 0.07 < min_delivered_share = 0.95, by 0.88 "
        "(completed 7 requests, sent 100 requests)")


def test_a_sweep_file_where_no_rate_passes_names_each_failed_check(base_plan, write_plan, run_main, tmp_path):
    """A benchmark file of our own making, as a saturated GuideLLM run reads: at the lowest
    rate only 7 of 100 requests completed (and those slowly); the error says so, check by check."""
    (tmp_path / "plans").mkdir(exist_ok=True)
    (tmp_path / "plans" / "saturated.csv").write_text(
        "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput,completed,sent\n"
        "1,900,20,4,200,7,100\n"
        "2,1800,40,9,210,9,200\n", encoding="utf-8")
    base_plan["tables"]["load_sweep"] = {"import": "saturated.csv", "source": "a run of our own making"}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1 and "Traceback" not in err
    assert ("no load_sweep row meets every SLO (the lowest arrival_rate, 1 req/s, already fails: "
            "delivered_ok: completed_share = 0.07 < min_delivered_share = 0.95, by 0.88 "
            "(completed 7 requests, sent 100 requests))") in err, err
