"""``capplan seek`` gives the same, right answers at any range.

A sampling grid over 0 … 1e9 stepped over the flips at 1 and 7 failed GPUs;
a range that left today's value out was printed as an interval around it;
goal seek answered one value that moved with ``--range``. The search now
cuts the range into windows that are solved in closed form, shown to hold no
flip (monotone decisions, equal at both ends) or cut again.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import sympy
from conftest import MAIN_PLAN

from capplan.analysis.pipeline import evaluate_plan
from capplan.analysis.flips import monotone, probe
from capplan.artifacts.answers import Target
from capplan.analysis.holds import PlanHolds


@pytest.fixture(scope="module")
def holds():
    _, evaluations = evaluate_plan(MAIN_PLAN)
    return PlanHolds(evaluations)


def _probe(holds, name):
    e = holds.evaluations[0]
    return holds.probe(e, Target(name))[0]


def _seek(run_main, *args):
    code, out, err = run_main("seek", MAIN_PLAN, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("high", ["20", "1000", "1e9"])
def test_failed_gpus_flip_at_1_and_7_in_any_range(run_main, high):
    doc = _seek(run_main, "failed_gpus", "--range", "0", high)
    assert [(f["value"], f["belongs_to"]) for f in doc["flips"]] == [(1, "below"), (7, "below")]
    assert doc["holds"]["text"] == "[0, 1] GPUs"
    assert doc["searched_to"] == {"low": 0, "high": float(high) if high != "20" else 20}
    assert doc["stopped"] == []


def test_the_nearest_flips_do_not_depend_on_the_range(holds):
    p = _probe(holds, "peak_arrival_rate")
    for hi in (Fraction(120), Fraction(10 ** 9)):
        h = p.holds(Fraction(1), hi)
        assert (h.low.value, h.high.value) == (56, 63)
    walk = p.walk(p.today, Fraction(10 ** 9))
    assert len(walk.flips) == probe.MAX_FLIPS and walk.reached == walk.flips[-1].value
    assert [f.value for f in walk.flips[:3]] == [63, 70, 77]


def test_failed_gpus_over_1e9_costs_few_windows(holds, monkeypatch):
    """The work is a count of windows, not of the range: a handful per flip and per
    halving of the range."""
    p = _probe(holds, "failed_gpus")
    cut = []
    original = probe.Probe._windows

    def counted(self, *args):
        cut.append(args[:2])
        yield from original(self, *args)

    monkeypatch.setattr(probe.Probe, "_windows", counted)
    assert [f.value for f in p.flips(Fraction(0), Fraction(10 ** 9))] == [1, 7]
    assert len(cut) < 200


def test_a_range_that_leaves_today_out_says_so(run_main):
    doc = _seek(run_main, "peak_arrival_rate", "--range", "100", "120")
    assert doc["today_in_range"] is False and doc["holds"] is None
    assert [f["value"] for f in doc["flips"]] == [105, 112, 119]
    code, out, _ = run_main("seek", MAIN_PLAN, "peak_arrival_rate", "--range", "100", "120")
    assert "Today's value lies below the range searched: no interval around it is claimed" in out
    assert "≤100" not in out and "holds on" not in out
    code, out, _ = run_main("seek", MAIN_PLAN, "peak_arrival_rate", "--range", "1", "30")
    assert "lies above the range searched" in out and "From 30 req/s down to 1 req/s" in out


@pytest.mark.parametrize("low, high", [("1", "1e9"), ("60", "80000"), ("69995", "1e6")])
def test_goal_seek_answers_the_interval(run_main, low, high):
    doc = _seek(run_main, "peak_arrival_rate", "--range", low, high, "--target", "active_gpus=10000")
    (s,) = doc["solutions"]
    first = max(69993, float(low))
    assert (s["low"], s["high"], s["exact"]) == (first, 70000, True)
    assert s["low_closed"] is (first != 69993) and s["high_closed"] is True


def test_goal_seek_of_a_count_is_a_run_of_whole_numbers(run_main):
    doc = _seek(run_main, "failed_gpus", "--range", "0", "1e9", "--target",
                "deployments[fractional-a100-80gb].nodes=10")
    assert [(s["low"], s["high"]) for s in doc["solutions"]] == [(0, 1e9)]


def test_a_walk_out_of_work_says_how_far_it_got(run_main, monkeypatch):
    monkeypatch.setattr(probe, "WORK", 3)
    doc = _seek(run_main, "peak_arrival_rate", "--range", "1", "1e9")
    assert doc["stopped"] and "its work limit" in doc["stopped"][0]
    assert doc["searched_to"]["high"] < 1e9
    assert all(f["value"] <= doc["searched_to"]["high"] for f in doc["flips"])


def test_direction_of_step_functions():
    x = sympy.Symbol("x", real=True)
    lo, hi = Fraction(0), Fraction(10 ** 9)
    assert monotone.direction(sympy.ceiling(x / 7), x, lo, hi) == 1
    assert monotone.direction(7 * sympy.Max(0, sympy.floor(16 - x)) >= 60, x, lo, hi) == -1
    assert monotone.direction(sympy.ceiling(60 / (10 * x)), x, Fraction(1, 10), hi) == -1
    assert monotone.direction((x - 3) ** 2, x, lo, hi) is None
    assert monotone.direction(sympy.ceiling(x) - sympy.floor(x / 2), x, lo, hi) is None


def test_a_goal_seek_beyond_its_work_limit_says_where_it_stopped(run_main, monkeypatch):
    monkeypatch.setattr(probe, "WORK", 0)
    code, out, err = run_main("seek", MAIN_PLAN, "peak_arrival_rate", "--range", "1", "1e9",
                              "--target", "active_gpus=10000")
    assert (code, out) == (1, "")
    assert "goal seek gave up after 0 windows between 1 and 1e+09" in err
