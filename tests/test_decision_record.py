"""The record as a decision a reviewer signs (issue #41): the plan's ``decision:`` fields (status,
owner, approver, date, commitment, review trigger) on the first screen, their defaults, the
located errors of a wrong one and ``check --strict`` asking for those a plan leaves out."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from test_github_math import rendered

from capplan.analysis.pipeline import run
from capplan.rendering import record, view
from capplan.rendering.choices import holds_across
from capplan.rendering.firstscreen import Bill

PLANS = sorted((ROOT / "plans").glob("*.yaml"))

STATED = {"status": "approved", "owner": "inference-platform", "approver": "Dana Reyes (VP infrastructure)",
          "date": "2026-11-02", "commitment": "12 months reserved",
          "review_trigger": "peak above 75 req/s or a price change of 10 %"}


def closed(markdown: str) -> str:
    """``markdown`` as a reader sees it with every fold (``<details>``, nested or not) closed; a fold
    left open at the end (the text was cut inside it) is left out to the end."""
    out, depth, at = [], 0, 0
    for tag in re.finditer(r"</?details>", markdown):
        if depth == 0:
            out.append(markdown[at:tag.start()])
        depth += 1 if tag.group() == "<details>" else -1
        at = tag.end() + (depth == 0 and markdown[tag.end():tag.end() + 1] == "\n")   # the fold's own line
    return "".join(out) + (markdown[at:] if depth == 0 else "")


def first_screen(markdown: str) -> str:
    """What precedes the record's first numbered section, its folds (``<details>``) left out."""
    return closed(markdown[:markdown.index("\n## 1. ")])


def _record(path) -> str:
    done = run(path)
    return record.render(view.build(done.plan, done.evaluations, done.artifacts))


def test_a_plan_without_a_decision_section_is_proposed_by_its_owner_and_names_no_approver(write_plan, base_plan):
    base_plan["owner"] = "search-infra"
    screen = first_screen(_record(write_plan(base_plan)))
    assert ("**Status:** proposed · **Owner:** search-infra · **Approver:** not yet named · **Date:** not stated · "
            "**Commitment:** not stated · **Review if:** not stated") in screen


def test_the_decision_fields_a_plan_states_are_on_the_first_screen(write_plan, base_plan):
    base_plan["decision"] = dict(STATED)
    screen = first_screen(_record(write_plan(base_plan)))
    assert ("**Status:** approved · **Owner:** inference-platform · **Approver:** Dana Reyes (VP infrastructure) · "
            "**Date:** 2026-11-02 · **Commitment:** 12 months reserved · **Review if:** peak above 75 req/s or a "
            "price change of 10 %") in screen


@pytest.mark.parametrize("decision, message", [
    ({"stauts": "proposed"}, "decision.stauts: unknown key 'stauts'; did you mean status? (decision keys: status, owner, "
                             "approver, date, commitment, review_trigger)"),
    ({"status": "accepted"}, "decision.status: status must be one of proposed, approved, superseded, rejected, "
                             "got 'accepted'"),
    ({"date": "2026-13-01"}, "decision.date: '2026-13-01' is not a date (YYYY-MM-DD)"),
    ({"date": "next week"}, "decision.date: 'next week' is not a date (YYYY-MM-DD)"),
    ({"status": "approved"}, "decision.approver: an approved decision names who approved it"),
    ("proposed", "decision: expected a mapping of status, owner, approver, date, commitment, review_trigger, "
                 "got 'proposed'"),
    ({"approver": ["a", "b"]}, "decision.approver: expected text, got a list"),
], ids=["key", "status", "month", "words", "approved", "not a mapping", "list"])
def test_a_wrong_decision_field_is_one_message_naming_file_and_key(run_main, write_plan, base_plan, decision,
                                                                    message):
    base_plan["decision"] = decision
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1 and "Traceback" not in err
    assert message in err and "test-plan.yaml:" in err


def test_check_strict_asks_for_the_decision_fields_a_plan_leaves_out(run_main, write_plan, base_plan, tmp_path):
    base_plan["owner"] = "search-infra"
    base_plan["decision"] = {"status": "proposed", "commitment": "month to month"}
    write_plan(base_plan)
    assert run_main("build", cwd=tmp_path)[0] == 0
    code, _, err = run_main("check", "--strict", cwd=tmp_path)
    assert code == 1
    assert ("decision: no approver, date or review_trigger stated; the record shows them as not stated "
            "(name them under decision:)") in err


def test_check_asks_nothing_once_every_decision_field_is_stated(run_main, write_plan, base_plan, tmp_path):
    base_plan["decision"] = dict(STATED)
    write_plan(base_plan)
    assert run_main("build", cwd=tmp_path)[0] == 0
    code, _, err = run_main("check", cwd=tmp_path)
    assert code == 0 and "warning(s)" in err and "decision:" not in err


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_each_reference_record_s_first_screen_states_the_bill_the_ask_and_the_decision(path):
    screen = first_screen(rendered(path))
    assert screen.count(" a month") and screen.count(" a year")
    assert " GPUs on " in screen or "GPU on " in screen
    assert "**The ask:** " in screen
    assert "**Status:** proposed · **Owner:** inference-platform · **Approver:** not yet named" in screen
    assert "**Review if:** " in screen and "**Review if:** not stated" not in screen


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_verdicts_are_plain_english(path):
    text = rendered(path)
    for jargon in ("the only scenario", "breaks in 1 of 1", "breaks in nominal", "of 1 |", "✓ every scenario"):
        assert jargon not in text, jargon
    lead = first_screen(text).split("\n**")[1]
    assert lead.index(".**") < 160               # the bold lead is one short sentence


def test_holds_words_the_scenarios_a_fleet_breaks_in():
    assert holds_across(0, 6) == "✓ holds in every scenario"
    assert holds_across(0, 1) == "✓ holds at the plan's peak"
    assert holds_across(1, 1) == holds_across(2, 6, ["nominal", "surge_50"]) == "✗ breaks at the plan's peak"
    assert holds_across(2, 6, ["surge_50", "context_x2"]) == "✗ breaks in surge_50 and context_x2"
    assert holds_across(1, 2) == "✗ breaks in 1 of its 2 scenarios"


def test_the_lead_says_when_n_plus_k_raises_the_spend_by_more_than_a_quarter():
    gpt_oss = first_screen(rendered(ROOT / "plans" / "gpt-oss-120b-b200-tp8-engine.yaml"))
    assert ("**Rent aws-p6-b200.48xlarge-on-demand: 16 GPUs on 2 nodes, $166,797.62 a month, $2,001,571.43 a year.**"
            in gpt_oss)
    assert "**N+1 doubles the spend: 8 GPUs carry the peak, 16 are rented.**" in gpt_oss
    # 9 active GPUs, 10 rented on one-GPU nodes: the spare adds 11 %, not called out
    assert "the spend" not in first_screen(rendered(ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"))


def test_the_bill_counts_the_spares_share_in_nodes():
    bill = Bill("x", gpus=24, nodes=3, monthly=100.0, months_per_year=12, active_gpus=16, spares=1, bare_nodes=2)
    assert bill.text == "24 GPUs on 3 nodes, $100.00 a month, $1,200.00 a year"
    assert bill.redundancy == "N+1 raises the spend by 50 %: 16 GPUs carry the peak, 24 are rented."
