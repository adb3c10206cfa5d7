"""Scenarios of one plan share the flip search's closed forms and walks (analysis/flips/probe.py
``Probe._closed_forms``, ``Probe.walk``) where the values they read are the same: each scenario's
flips are those of a search over that scenario alone."""

from __future__ import annotations

import yaml
from conftest import MAIN_PLAN

from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run


def _plan(write_plan):
    """The main plan with scenarios that each change one input, three kinds as the scaling benchmark has."""
    plan = yaml.safe_load(MAIN_PLAN.read_text(encoding="utf-8"))
    plan.pop("expect", None)
    plan["scenarios"] = {
        **{f"rate_{r}": {"set": {"peak_arrival_rate": f"{r} req/s"}} for r in (45, 71, 90)},
        **{f"ttft_{t}": {"set": {"ttft_p95_slo": f"{t} ms"}} for t in (420, 640)},
        **{f"prompts_{n}": {"set": {"classes[summarization].prompt_tokens": n}} for n in (300, 2048)},
    }
    return write_plan(plan, "one-input")


def _found(holds: PlanHolds, scenario: str) -> list[tuple]:
    return [(h.name, h.found) for h in holds.of(scenario)]


def test_each_scenario_finds_the_flips_of_a_search_over_it_alone(write_plan):
    evaluations = run(_plan(write_plan)).evaluations
    together = PlanHolds(evaluations, decisions_only=True)
    for e in evaluations:
        alone = PlanHolds([e], decisions_only=True)
        assert _found(together, e.scenario.name) == _found(alone, e.scenario.name), e.scenario.name

