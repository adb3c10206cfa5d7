"""Which provenance each contender's λ* rests on, and who would win if every λ* came from one.

The three-candidate plan of test_candidates (peak 60 req/s, ρ 0.7, one spare replica, 8-GPU nodes,
732 h a month; h100 TP1 measured at 4 req/s, h100 TP2 given 15, h200 TP1 given 9): re-ranked with
every candidate's transferred λ* (from the measured h100 TP1), and with every one's built-in
estimate, each cost worked by hand from that λ*: replicas ⌈60 / (λ·0.7)⌉ + 1, 8 / TP a node,
nodes × price × 732 h.
"""

from __future__ import annotations

import math

import pytest
from test_candidates import ranking_of, three

from capplan.analysis import ranking as ranked
from capplan.rendering.candidates import CandidatesView

PRICE = {"h100-sxm5-80gb": 40.0, "h200-sxm-141gb": 50.0}


def by_hand(ev, lam) -> tuple[str, float]:
    """The cheapest candidate and its monthly cost when candidate i's λ* is lam[i]."""
    costs = {}
    for i, c in enumerate(ev.candidates):
        replicas = math.ceil(60 / (lam[i] * 0.7)) + 1
        nodes = math.ceil(replicas / (8 // c.tp))
        costs[c.label] = nodes * PRICE[c.gpu.id] * 732
    best = min(costs, key=lambda k: (costs[k], k))
    return best, costs[best]


def test_the_winner_if_every_lambda_came_from_one_provenance_by_hand(write_plan):
    evaluations, r = ranking_of(write_plan, three())
    ev = r.evaluated
    expected = {"transferred": by_hand(ev, ev.transferred), "estimated": by_hand(ev, ev.estimated)}
    got = {s.provenance: (ev.candidates[s.winner].label, s.monthly) for s in r.same_source}
    assert got.keys() == expected.keys()
    for provenance, (label, monthly) in expected.items():
        assert got[provenance][0] == label and got[provenance][1] == pytest.approx(monthly), provenance
    lines = CandidatesView(r, evaluations).same_source
    label, monthly = expected["estimated"]
    c = ev.candidates[[s.provenance for s in r.same_source].index("estimated")]
    assert any(line.startswith(f"If every λ* came from the built-in estimate (for vLLM), the cheapest would be "
                               f"{label} on ") and f"(${monthly:,.2f} a month)" in line for line in lines), lines
    assert any(line.startswith("If every λ* were transferred from the measured h100-sxm5-80gb TP1, the cheapest "
                               "would be ") for line in lines), lines


def test_without_a_measured_candidate_only_the_estimate_re_ranks(write_plan):
    plan = three()
    plan["candidates"].update(gpus=["h200"], tp=[1, 2], overrides=[], exclude=[])
    _, r = ranking_of(write_plan, plan)
    assert [s.provenance for s in r.same_source] == ["estimated"]
    assert r.same_source[0].winner == r.winner          # every λ* is the estimate already: the same winner


def test_the_options_table_says_which_provenance_each_contender_rests_on(write_plan):
    evaluations, r = ranking_of(write_plan, three())
    notes = [o.note for o in CandidatesView(r, evaluations).options()]
    assert [n.split(" λ*")[0] for n in notes] == ["given", "given", "measured"]
    assert r.value(ranked.MONTH, r.winner) == pytest.approx(58_560)
