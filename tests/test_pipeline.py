"""One pipeline, load → evaluate → analyses: the artifacts are computed in the
analysis layer, once, and the view only reads what it is given."""

from __future__ import annotations

import pytest

from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan.analysis import holds, pipeline
from capplan.analysis import simulation as simulating
from capplan.rendering import jsonout, view


def test_run_gives_plan_evaluations_and_artifacts_computed_when_first_read():
    analysed = pipeline.run(MAIN_PLAN)
    assert analysed.plan.name == MAIN_PLAN.stem
    assert [e.scenario.name for e in analysed.evaluations] == [s.name for s in analysed.plan.scenarios]
    artifacts = analysed.artifacts
    assert "holds" not in vars(artifacts) and "simulation" not in vars(artifacts)       # nothing run yet
    found = artifacts.holds
    assert isinstance(found, holds.PlanHolds) and artifacts.holds is found           # once
    nominal = found.nominal
    assert nominal and all(isinstance(h, holds.InputInterval) for h in nominal)
    assert [h.fragility for h in nominal] == sorted(h.fragility for h in nominal)   # the most fragile first


def test_the_view_reads_the_artifacts_it_is_given_and_computes_none():
    """A plan with uncertain values, given artifacts that say it has no simulation: the view
    shows none rather than running one; its flip points are the artifacts' own."""
    analysed = pipeline.run(MAIN_PLAN)
    artifacts = pipeline.Artifacts(analysed.evaluations, simulated=None)
    vars(artifacts)["simulation"] = None
    shown = view.build(analysed.plan, analysed.evaluations, artifacts)
    assert shown.simulation is None and shown.simulation_charts() == {}
    assert "simulation" not in jsonout.document(shown)
    assert shown.holds.found is artifacts.holds


def test_a_simulation_delivered_ahead_is_the_one_shown_and_none_means_compute_here():
    plan, evaluations = pipeline.evaluate_plan(MAIN_PLAN)
    e = evaluations[0]
    few = simulating.run(e, e.values, samples=500, seed=3)
    delivered = pipeline.Artifacts(evaluations, simulated=lambda: few)
    assert delivered.simulation is few
    shown = view.build(plan, evaluations, delivered).simulation
    assert (shown.samples, shown.seed) == (500, 3) and shown.results
    assert {r.key.id for r in shown.results} <= {s.slot.id for s in few.spreads}
    retail = pipeline.run(RETAIL_PLAN, simulated=lambda: None)
    assert retail.artifacts.simulation is None                   # no uncertain values: nothing to simulate


def test_the_child_s_simulation_is_what_the_outputs_compute():
    plan = pipeline.load_plan(RETAIL_PLAN)
    assert pipeline.simulate(plan) is None
    assert pipeline.simulate(pipeline.load_plan(MAIN_PLAN)) == pipeline.run(MAIN_PLAN).artifacts.simulation


def test_the_child_s_simulation_evaluates_the_nominal_scenario_alone(monkeypatch):
    """A simulation reads the nominal scenario only: a child computing it ahead does not wait
    for the plan's other scenarios (a thousand of them in a parameter study)."""
    from capplan.engine import evaluate as engine

    plan = pipeline.load_plan(MAIN_PLAN)
    assert len(plan.scenarios) > 1
    seen, real = [], engine.evaluate
    monkeypatch.setattr(engine, "evaluate", lambda plan, scenario, *a, **k: seen.append(scenario.name)
                        or real(plan, scenario, *a, **k))
    monkeypatch.setattr(engine, "evaluate_all", lambda *a, **k: pytest.fail("every scenario evaluated"))
    assert pipeline.simulate(plan) is not None
    assert seen == [plan.nominal.name]
