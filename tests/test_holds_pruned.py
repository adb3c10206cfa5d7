"""The outputs' flip search computes in exact fractions only what the decisions rest on: a traffic
profile's rows, which no decision reads, are never walked, and the flip points are the same."""

from __future__ import annotations

from conftest import ROOT

from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run

DIURNAL = ROOT / "plans" / "llama3-8b-a100-diurnal.yaml"


def _intervals(holds: PlanHolds) -> list[tuple]:
    """Each probed input's today, its first flip each way and what flips there."""
    return [(h.name, h.today, h.below.end, h.above.end,
             [(f.value, f.side, f.below, f.above) for f in (h.below.flip, h.above.flip) if f])
            for h in holds.nominal]


def test_the_decisions_flip_search_skips_the_profile_and_finds_the_same_flips():
    evaluations = run(DIURNAL).evaluations
    pruned, full = PlanHolds(evaluations, decisions_only=True), PlanHolds(evaluations)
    assert "profile.serving_replicas" in full.search.nominal_values
    assert "profile.serving_replicas" not in pruned.search.nominal_values         # no decision reads it
    assert {"active_gpus", "deployments.monthly_cost", "deployments.fleet_holds"} <= set(pruned.search.nominal_values)
    assert _intervals(pruned) == _intervals(full)
    assert [(b.key, b.other, b.solutions) for b in pruned.breakevens] == [
        (b.key, b.other, b.solutions) for b in full.breakevens]


def test_the_probed_inputs_are_found_once_for_scenarios_alike(monkeypatch):
    """Scenarios with one graph and the same inputs' tags probe the same inputs: found once."""
    from capplan.analysis import holds as holds_module

    evaluations = run(DIURNAL).evaluations
    calls = []
    real = holds_module.variables
    monkeypatch.setattr(holds_module, "variables", lambda e: calls.append(e.scenario.name) or real(e))
    found = PlanHolds(evaluations, decisions_only=True)
    probed = [[h.name for h in found.of(e.scenario.name)] for e in evaluations]
    assert len(evaluations) > 2 and len(calls) < len(evaluations)
    assert [sorted(p) for p in probed] == [sorted(h.name for h in PlanHolds(evaluations).of(e.scenario.name))
                                          for e in evaluations]


def test_a_scenario_whose_input_is_pending_probes_it_though_another_does_not():
    """The probed inputs are shared only by scenarios with the same inputs' tags: a policy input
    marked pending in one scenario is probed there (if a decision rests on it) and not elsewhere."""
    import copy
    from dataclasses import replace

    from capplan.artifacts.declared import variables

    first, *_ = run(DIURNAL).evaluations
    pending = copy.copy(first)
    pending.inputs = dict(first.inputs)
    pending.inputs["rho_target"] = replace(first.inputs["rho_target"], status="pending")
    found = PlanHolds([first])
    assert found._variables(first) == variables(first)
    assert found._variables(pending) == variables(pending)
    assert "rho_target" in {t.name for t in variables(pending)} - {t.name for t in variables(first)}
