"""A ranked candidate as the plan it would be (#38, #41): the whole model evaluated for one candidate
agrees with the ranking's batch, names what the candidate changes, and carries the flip search."""

from __future__ import annotations

import pytest
from conftest import ROOT
from test_candidates import ranking_of, three

from capplan.analysis import variant
from capplan.analysis.flips import Search
from capplan.analysis.pipeline import run
from capplan.artifacts.answers import Target
from capplan.artifacts.ranking import MONTH

CHAIN = ("instance_max_rate", "safe_rate_per_replica", "active_replicas", "resilient_replicas", "active_gpus",
         "deployments.nodes", "deployments.deployed_gpus", MONTH, "deployments.cost_per_million_tokens")


def test_every_feasible_candidate_of_the_reference_plan_evaluates_as_the_ranking_has_it():
    done = run(ROOT / "plans" / "llama3.3-70b-candidates.yaml")
    r = done.artifacts.candidates
    for i in r.feasible:
        shown = variant.of_candidate(done.evaluations[0], r.evaluated, i)
        for name in CHAIN:
            got = float(shown.values[name][0] if name.startswith("deployments.") else shown.values[name])
            assert got == pytest.approx(r.value(name, i), rel=1e-12), (r.evaluated.candidates[i].name, name)


def test_the_variant_names_what_the_candidate_changes_and_where_its_lambda_comes_from(write_plan):
    evaluations, r = ranking_of(write_plan, three())
    by = {c.label: i for i, c in enumerate(r.evaluated.candidates)}
    shown = variant.of_candidate(evaluations[0], r.evaluated, by["h200-sxm-141gb TP1"])
    assert shown.scenario.title == "h200-sxm-141gb TP1"
    assert "hbm_bandwidth" in shown.scenario.changes and "gpus_per_replica" not in shown.scenario.changes
    assert shown.values["hbm_bandwidth"] == pytest.approx(4.8e12)
    assert shown.scenario.tables["deployments"].rows[0]["name"] == "p5e"
    lam = shown.scenario.inputs["instance_max_rate"]
    assert lam.pinned and lam.value == pytest.approx(9) and lam.tag == "assumption"
    assert shown.values[MONTH][0] == pytest.approx(73_200)           # 2 nodes × $50/h × 732 h


def test_the_runner_up_s_lambda_flip_is_a_flip_of_its_monthly_cost_found_by_the_search(write_plan):
    """The flip the ranking reports (12.2 req/s: 7 replicas at ρ 0.7 carry the 60 req/s peak on 1 node,
    $36,600 < $58,560) is where the flip search finds the runner-up's monthly cost falling."""
    evaluations, r = ranking_of(write_plan, three())
    shown = variant.of_candidate(evaluations[0], r.evaluated, r.runner_up)
    probe = Search([shown]).probe(shown.scenario.name, Target("instance_max_rate"), [Target(MONTH, 0)], 1)
    flip = probe.holds(probe.today, probe.today * 10).high
    assert flip is not None
    assert float(flip.value) == pytest.approx(60 / (7 * 0.7))
    assert float(flip.below[0]) == pytest.approx(73_200) and float(flip.above[0]) == pytest.approx(36_600)
    assert r.flips.runner_lambda == pytest.approx(float(flip.value))


def test_the_candidates_record_charts_the_recommendation_before_the_baseline():
    """#41: the candidates record's tornado is the winner's (H200 TP2 on one node: 3 active replicas of
    λ_safe = 10.9 × 0.7 carry the 20 req/s peak; a fourth is needed below λ* = 20 / (3 × 0.7) = 9.524 req/s,
    a second node at $26,586.24 a month), and it comes before the baseline's sections."""
    text = (ROOT / "out" / "llama3.3-70b-candidates.md").read_text(encoding="utf-8")
    ours, baseline = text.index("### How far the recommendation holds"), text.index("## Baseline: ")
    assert ours < baseline < text.index("## 1. ")
    assert "![Tornado chart" in text[ours:baseline] and "(llama3.3-70b-candidates.recommended.svg)" in text[ours:baseline]
    assert f"below {20 / (3 * 0.7):.4g} req/s: active GPUs 6 → 8" in text[ours:baseline]
    assert "nodes 1 → 2 (monthly cost +$26,586.24)" in text[ours:baseline]
    assert (ROOT / "out" / "llama3.3-70b-candidates.recommended.svg").read_text().count("instance_max_rate") == 1
