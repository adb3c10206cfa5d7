"""The record's length (issue #41): the first screen is the decision and the record about three
screens more with its folds closed; the candidates record's first screen carries the winner's
sizing chain in one row a reviewer multiplies out by hand, and names the plan's own configuration
as the baseline it is."""

from __future__ import annotations

import math
import re

import pytest
from conftest import ROOT

from test_decision_record import PLANS, closed, first_screen
from test_github_math import rendered

CANDIDATES = ROOT / "plans" / "llama3.3-70b-candidates.yaml"

# Lines a reader sees with every fold closed, from the title to the appendices. Measured as GitHub
# renders them (1012 px column, 900 px screens), the references' visible bodies ran 71 to 100 lines,
# 3.2 to 4.5 screens in all, after the folding of issue #41 (157 to 272 lines and 8.5 to 16.5
# screens before): 110 lines is about four and a half screens, and a section that grows a visible
# table past it is one to fold.
VISIBLE_LINES = 110


def visible(markdown: str) -> str:
    """The record as a reader sees it with every fold closed, up to the appendices."""
    return closed(markdown[:markdown.index("\n## Appendices")])


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_the_first_screen_carries_the_gpus_the_month_the_year_and_the_ask(path):
    screen = first_screen(rendered(path))
    lead = next(p for p in screen.split("\n\n") if p.startswith("**"))     # a plan not ready says why first
    assert re.search(r"\d+ GPUs? on \d+ nodes?", lead), lead
    assert re.search(r"\$[\d,.]+ a month, \$[\d,.]+ a year", lead), lead
    assert "\n**The ask:** Approve " in screen


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_a_record_with_its_folds_closed_stays_within_its_line_budget(path):
    text = rendered(path)
    shown = visible(text)
    assert len(shown.splitlines()) <= VISIBLE_LINES, len(shown.splitlines())
    assert len(text.splitlines()) > 2 * VISIBLE_LINES        # folded, not deleted: the derivations are all there


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("$", ""))


def test_the_candidates_first_screen_carries_the_winners_sizing_chain_and_it_multiplies_out():
    screen = first_screen(rendered(CANDIDATES))
    rows = [line for line in screen.splitlines() if line.startswith("| Winner ") or line.startswith("| Runner-up ")]
    assert [r.split(" |")[0] for r in rows] == ["| Winner h200-sxm-141gb TP2 bf16 on spheron-8x-h200-sxm",
                                                "| Runner-up b200-hgx TP1 fp8 on spheron-8x-b200"]
    number = r"([\d,.]+)"
    chain = re.compile(
        rf"\| λ\\\* {number} req/s × ρ {number} = {number} req/s \| ⌈{number} / {number}⌉ = {number}, \+ {number} = "
        rf"{number} \| {number} × {number} = {number} \| {number} × \${number}/h × {number} h = "
        rf"\${number} \|$")
    for row in rows:
        found = chain.search(row)
        assert found, row
        lam, rho, safe, peak, safe_again, active, spare, replicas, replicas_again, per_replica, gpus, nodes, \
            price, hours, cost = map(_number, found.groups())
        assert safe == pytest.approx(lam * rho, rel=0.01) and safe_again == safe
        assert active == math.ceil(peak / safe) and replicas == active + spare == replicas_again
        assert gpus == replicas * per_replica
        assert cost == pytest.approx(nodes * price * hours, abs=0.01)
    assert "$26,586.24" in rows[0] and "| 4 × 2 = 8 |" in rows[0] and "732 h" in rows[0]


def test_the_candidates_record_names_its_plans_own_configuration_the_baseline_after_the_candidates():
    text = rendered(CANDIDATES)
    screen = first_screen(text)
    baseline = screen.index("## Baseline: the plan's own configuration")
    assert screen.index("| Winner ") < baseline < screen.index("| Plan | GPU |")
    assert baseline < screen.index("64 GPUs carry the 20 req/s peak")
    assert "## Baseline" not in first_screen(rendered(ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"))


def test_the_candidates_first_screen_says_what_the_recommendation_changes_against_the_plans_own():
    """#41: the change is the headline. The plan's own configuration (72 A100s on 9 p4d nodes at
    $97,173.00) against the winner (8 H200s, $26,586.24): −$70,586.76 a month, −72.6 %, −$847,041.12 a year."""
    screen = first_screen(rendered(CANDIDATES))
    line = next(x for x in screen.splitlines() if x.startswith("**Against the plan's own configuration**"))
    before, after = 97_173.00, 26_586.24
    assert "(a100-sxm4-40gb TP8 on aws-p4d.24xlarge-capacity-block)" in line      # what the baseline is
    assert "72 → 8 GPUs" in line and "$97,173.00 → $26,586.24 a month" in line
    assert f"−${before - after:,.2f}, −{100 * (before - after) / before:.1f} %" in line
    assert f"−${12 * (before - after):,.2f} a year" in line
    assert screen.index("**Against") < screen.index("**The ask:**")
