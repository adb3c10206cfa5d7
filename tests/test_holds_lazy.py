"""A scenario's exact values are computed when a probe first reads them (analysis/flips/values.py
``ScenarioValues``), the outputs' words of a value are remembered (rendering/holds.py
``InputHolds.shown``), a walk computes each point's targets once (``Probe.at``), and full
garbage collections wait while the search runs (capplan/collector.py): the same numbers and
words as computed all at once, and less work."""

from __future__ import annotations

import gc
from fractions import Fraction

from conftest import MAIN_PLAN

from capplan import collector
from capplan.artifacts.answers import UNDEFINED
from capplan.analysis.flips.search import base_range
from capplan.analysis.flips.values import ScenarioValues, _identical, exact_values
from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run
from capplan.rendering import holds as worded
from capplan.engine.exact import Undefined
from capplan.rendering.holds import HoldsView, display


def _scenarios():
    return run(MAIN_PLAN).evaluations


def test_values_read_one_by_one_equal_the_values_computed_at_once():
    evaluations = _scenarios()
    found = PlanHolds(evaluations, decisions_only=True)
    nominal = found.search.nominal_values
    for e in evaluations[1:]:
        alike = e.graph.same_formulas(found.search.nominal.graph)
        whole = exact_values(e, nominal, base=nominal if alike else None)
        lazy = ScenarioValues(e, nominal, base=nominal if alike else None)
        for name in reversed(e.graph.order):            # the last first: its dependencies come with it
            assert _identical(lazy[name], whole[name]), (e.scenario.name, name)
            assert type(lazy[name]) is type(whole[name])


def test_a_scenario_computes_only_what_its_probes_read():
    evaluations = _scenarios()
    found = PlanHolds(evaluations, decisions_only=True)
    surge = next(e for e in evaluations[1:] if e.graph.same_formulas(evaluations[0].graph))
    found.of(surge.scenario.name)
    values = found.search.values(surge.scenario.name)
    assert isinstance(values, ScenarioValues)
    assert 0 < len(values) < len(surge.graph.order)        # the queueing figures, the costs: never read
    assert "peak_arrival_rate" in values and "wait_probability" not in values


def test_an_unchanged_node_is_the_nominal_value_itself_and_a_changed_one_is_not():
    evaluations = _scenarios()
    found = PlanHolds(evaluations, decisions_only=True)
    nominal = found.search.nominal_values
    surge = next(e for e in evaluations if e.scenario.name == "surge_50")
    values = found.search.values("surge_50")
    assert values["peak_arrival_rate"] != nominal["peak_arrival_rate"]
    untouched = next(n for n in surge.graph.order if surge.graph.nodes[n].formula is not None
                     and "peak_arrival_rate" not in surge.graph.upstream(n))
    assert values[untouched] is nominal[untouched]          # shared, not walked again
    assert values._same[untouched] and not values._same["peak_arrival_rate"]


def test_the_remembered_words_of_a_value_are_display_s_and_equal_values_share_them():
    evaluations = _scenarios()
    view = HoldsView(PlanHolds(evaluations, decisions_only=True))
    e = evaluations[0]
    h = view.nominal[0]
    for name, value in (("active_gpus", 9), ("active_gpus", Fraction(9)), ("active_gpus", Fraction(19, 2)),
                        ("deployments.fleet_holds", True), ("active_gpus", UNDEFINED)):
        assert h.shown(name, value) == display(e, name, value)
    assert len([k for k in view._shown if k[0] == "active_gpus" and k[1] == 9]) == 1     # 9 and 9/1: one entry
    other = view.of(evaluations[1].scenario.name)[0]
    assert other._shown is h._shown                          # one plan, one table of words


def test_the_json_with_remembered_words_is_the_json_without(monkeypatch):
    evaluations = _scenarios()[:3]
    remembered = HoldsView(PlanHolds(evaluations, decisions_only=True))
    monkeypatch.setattr(worded.InputHolds, "shown", lambda self, name, value: display(self.e, name, value))
    fresh = HoldsView(PlanHolds(evaluations, decisions_only=True))
    for e in evaluations:
        assert fresh.as_json(e.scenario.name) == remembered.as_json(e.scenario.name)


def test_full_collections_wait_inside_the_block_and_the_thresholds_come_back():
    before = gc.get_threshold()
    with collector.deferred():
        inside = gc.get_threshold()
        with collector.deferred():
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside
    assert gc.get_threshold() == before
    assert inside[:2] == before[:2] and inside[2] >= collector.PATIENCE


def test_leaving_the_outermost_block_collects_the_young_generation_alone(monkeypatch):
    asked = []
    monkeypatch.setattr(collector.gc, "collect", lambda generation=2: asked.append(generation) or 0)
    with collector.deferred():
        with collector.deferred():
            pass
        assert asked == []                                   # an inner block leaves it to the outermost
    assert asked == [0]


def test_a_failure_inside_the_block_still_gives_the_thresholds_back():
    before = gc.get_threshold()
    try:
        with collector.deferred():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.get_threshold() == before and collector._open == [0]


def test_the_search_of_a_scenario_runs_with_full_collections_deferred(monkeypatch):
    seen = []
    real = PlanHolds.inputs
    monkeypatch.setattr(PlanHolds, "inputs", lambda self, e: seen.append(gc.get_threshold()[2]) or real(self, e))
    evaluations = _scenarios()
    PlanHolds(evaluations, decisions_only=True).of(evaluations[1].scenario.name)
    assert seen == [max(gc.get_threshold()[2], collector.PATIENCE)]


def _fresh_probe(name: str):
    evaluations = _scenarios()
    found = PlanHolds(evaluations, decisions_only=True)
    e = evaluations[0]
    variable = next(v for v in found._variables(e) if v.name == name)
    probe, _, _ = found.probe(e, variable)
    return probe


def test_a_walk_computes_each_point_s_targets_once_and_finds_what_it_found_without():
    probe = _fresh_probe("peak_arrival_rate")
    calls = []
    probe.functions = [(lambda v, f=f, i=i: calls.append((i, v)) or f(v)) for i, f in enumerate(probe.functions)]
    lo, hi = base_range(probe.today, probe.quantity, Fraction(10))
    remembered = []
    for end in (hi, lo):
        calls.clear()
        remembered.append(probe._walk(probe.today, end, 3))
        assert calls and len(calls) == len(set(calls))      # a point's targets: once a walk
        assert probe._seen is None                          # the table lives for one walk

    def plain_at(self, v, count=None):
        out = []
        for f in self.functions[:count]:
            try:
                out.append(f(v))
            except (Undefined, ZeroDivisionError):
                out.append(UNDEFINED)
        return tuple(out)

    fresh = _fresh_probe("peak_arrival_rate")
    fresh.at = plain_at.__get__(fresh)
    assert [fresh._walk(fresh.today, end, 3) for end in (hi, lo)] == remembered
    assert sum(len(w.flips) for w in remembered) == 6
