"""The record's first screen: options another analysis supplies, price age against the plan's own dates,
the risks nearest first and the weak-evidence hook."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import MAIN_PLAN, ROOT

from capplan.analysis.pipeline import run
from capplan.rendering import firstscreen, record, view
from capplan.rendering.choices import Option, Risk
from capplan.rendering.firstscreen import first_screen

SHAREGPT = ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml"


def _view(path: Path) -> view.PlanView:
    done = run(path)
    return view.build(done.plan, done.evaluations, done.artifacts)


def test_another_analysis_supplies_its_options_and_sentence():
    v = _view(MAIN_PLAN)
    options = [Option("h100 × 4 (candidate)", "$20,000.00", "$3.10", "✓ every scenario", "from a transferred λ*"),
               Option("a100 × 10", "$18,226.80", "$2.84", "✗ breaks in 3 of 6")]
    screen = first_screen(v, options, "Rent a100 × 10 for $18,226.80 a month.", ask="Approve a100 × 10.")
    text = record.render(v, screen)
    assert text.index("**Rent a100 × 10 for $18,226.80 a month.**") < text.index("| Plan | GPU |")
    assert "| h100 × 4 (candidate) | ✓ every scenario | $20,000.00 | $3.10 | from a transferred λ\\* |" in text
    assert "**The ask:** Approve a100 × 10." in text
    assert record.first_screen_markdown(screen) in text            # the diff comment opens with the same text


def test_prices_age_against_the_plans_newest_date_not_the_clock():
    v = _view(SHAREGPT)             # prices as of 2024-12-31; the sweep's source is dated 2025-04-14
    assert max(firstscreen.plan_dates(v.nominal)).isoformat() == "2025-04-14"
    screen = first_screen(v)
    assert screen.reference == "2025-04-14"
    stale = screen.risks[0]
    assert (stale.name, stale.distance) == ("deployments", 0.0)
    assert stale.changes.startswith("104 days older than the plan's newest date, 2025-04-14 (policy: 90 days")


def test_a_plan_whose_prices_are_its_newest_date_has_no_stale_price(write_plan):
    plan = yaml.safe_load(MAIN_PLAN.read_text())
    plan.pop("expect")
    plan["tables"]["deployments"]["as_of"] = "2020-01-01"         # older than nothing else the plan dates
    screen = first_screen(_view(write_plan(plan)))
    assert not [r for r in screen.risks if r.name == "deployments"] and screen.reference == "2020-01-01"


def test_risks_are_nearest_first_and_carry_their_weak_evidence():
    screen = first_screen(_view(MAIN_PLAN))
    assert [r.name for r in screen.risks] == ["instance_max_rate", "peak_arrival_rate", "failed_gpus"]
    assert [round(r.distance, 4) for r in screen.risks[:2]] == [0.0476, 0.05] and screen.risks[2].distance is None
    assert screen.risks[0].evidence == ("the load_sweep table is illustrative, one run per rate",)
    assert [r.name for r in screen.farther] == ["hbm_efficiency", "tensor_efficiency"]
    assert screen.odds[0] == "active GPUs ≤ 9 GPUs: 61.1 %"


def test_an_evidence_check_added_to_the_hook_flags_its_input(monkeypatch):
    monkeypatch.setattr(firstscreen, "EVIDENCE", firstscreen.EVIDENCE + [
        lambda e, name: "λ* estimated from another GPU" if name == "instance_max_rate" else None])
    near = first_screen(_view(MAIN_PLAN)).risks[0]
    assert near.name == "instance_max_rate" and near.evidence[-1] == "λ* estimated from another GPU"
    assert Risk("x", "", "", None).order > Risk("y", "", "", 3.0).order      # a count's step after any share


def test_a_plan_with_candidates_opens_with_the_ranking_its_ask_and_what_swaps_it():
    v = _view(ROOT / "plans" / "llama3.3-70b-candidates.yaml")
    screen = first_screen(v)
    ranking = v.candidates.ranking
    # the lead rents the winner and says what it costs a month and a year; the ranking's sentence follows
    w = ranking.evaluated.candidates[ranking.winner]
    assert screen.sentence == (f"Rent {w.offer.name} ({w.label}): 8 GPUs on 1 node, $26,586.24 a month, "
                               "$319,034.88 a year.")
    assert screen.more == v.candidates.sentence and screen.more.startswith("Recommended: ")
    assert [o.name for o in screen.options][:1] == [f"{ranking.value('deployments.nodes', ranking.winner):g} × "
                                                     f"{ranking.evaluated.candidates[ranking.winner].offer.name} "
                                                     f"({ranking.evaluated.candidates[ranking.winner].label})"]
    assert screen.ask.startswith("Approve the benchmarks of ")       # the top λ* are transferred, their bands overlap
    # offers are aged against the newest date the plan states, an offer's own as_of included
    assert screen.reference == max(str(c.offer.as_of) for c in ranking.evaluated.candidates)
    stale = [r for r in screen.farther if r.what.startswith("price as of 2024-12-31")]
    assert stale and all(r.distance > screen.warn for r in stale)        # offers far from winning: folded
    # what swaps #1 and #2: near ones listed, the rest (weak evidence under them) folded
    near = [r for r in screen.risks if "becomes the cheapest" in r.changes]
    assert all(r.distance <= screen.warn for r in near)
    assert screen.farther and all(r.distance > screen.warn and r.evidence for r in screen.farther)
    assert screen.odds == [f"{ranking.evaluated.candidates[ranking.winner].label} stays the cheapest: "
                           f"{100 * ranking.stays:.3g} % of {ranking.draws:,} draws"]


def test_a_plan_with_a_traffic_profile_opens_with_its_recommended_strategy_and_the_other_offers_best():
    v = _view(ROOT / "plans" / "llama3-8b-a100-diurnal.yaml")
    screen = first_screen(v)
    assert screen.more == v.demand_sentence and screen.ask == v.demand_ask
    # a fleet that scales through the day: its GPUs and nodes at the peak, the strategy's cost a month and a year
    assert screen.sentence == ("Rent spot on runpod-a100-sxm: up to 10 GPUs on 10 nodes at the peak, $7,459.69 a month, "
                               "$89,516.28 a year.")
    assert screen.ask.startswith("Approve spot on runpod-a100-sxm at $")
    # the recommended strategy, the cheapest that holds on each other offer by cost, the fixed fleet it saves against
    assert [o.name for o in screen.options] == [
        "spot on runpod-a100-sxm", "owned on lambda-8x-a100-80gb", "base + burst on fractional-a100-80gb",
        "capacity blocks on aws-p4de.24xlarge", "fixed on runpod-a100-sxm"]
    costs = [float(o.monthly_cost.strip("$").replace(",", "")) for o in screen.options[:-1]]
    assert costs == sorted(costs)


def test_a_stale_price_of_an_offer_far_from_winning_leaves_the_candidates_box():
    """Issue 41: the candidates box opened with stale p4d and p5 prices whose candidates neither win
    nor come second; a stale price is now as far from the decision as its offer's cheapest candidate
    is dearer than the winner, so those two are folded with the evidence farther from a flip."""
    v = _view(ROOT / "plans" / "llama3.3-70b-candidates.yaml")
    screen = first_screen(v)
    assert not any("capacity-block" in r.name for r in screen.risks)
    far = {r.name: r for r in screen.farther}
    p4d = far["aws-p4d.24xlarge-capacity-block"]
    assert p4d.distance > 2 and p4d.changes.endswith("re-check it")
    assert p4d.evidence == ("its cheapest candidate, a100-sxm4-40gb TP4 bf16, costs 225 % more a month than the winner",)
