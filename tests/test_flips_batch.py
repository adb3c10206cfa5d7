"""The flip search's float bracketing runs its grid as one batch of the float backend (#27 item 6).

Where a decision has no closed form, the search scans a grid of the variable
and bisects each change. The grid is one pass of the batch backend, not one
scalar evaluation per point; the flips found must be exactly those the scalar
engine finds point by point.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from conftest import MAIN_PLAN

from capplan.analysis.flips import probe as probe_module
from capplan.artifacts.answers import UNDEFINED, Target
from capplan.analysis.flips.floats import batch_at
from capplan.analysis.pipeline import evaluate_plan
from capplan.analysis.holds import PlanHolds


@pytest.fixture(scope="module")
def main_plan():
    return evaluate_plan(MAIN_PLAN)[1]


def _bracketed_probe(evaluations, name):
    """A probe of the nominal scenario forced onto the float engine (as if no closed form existed)."""
    probe, _, _ = PlanHolds(evaluations).probe(evaluations[0], Target(name))
    probe.expressions = probe.functions = None
    return probe


def _counting(monkeypatch):
    calls = [0]
    scalar = probe_module.evaluate_at

    def counted(*args, **kwargs):
        calls[0] += 1
        return scalar(*args, **kwargs)
    monkeypatch.setattr(probe_module, "evaluate_at", counted)
    return calls


def test_the_grid_is_one_batch_and_finds_the_scalar_engines_flips(main_plan, monkeypatch):
    calls = _counting(monkeypatch)
    batched = _bracketed_probe(main_plan, "peak_arrival_rate")
    lo, hi = batched.today, batched.today * Fraction(3, 2)
    walk = batched.walk(lo, hi)
    with_batch = calls[0]
    scalar = _bracketed_probe(main_plan, "peak_arrival_rate")
    monkeypatch.setattr(scalar, "_engine_grid", lambda points: None)      # every point a scalar evaluation
    calls[0] = 0
    expected = scalar.walk(lo, hi)
    assert walk == expected and len(walk.flips) == 4 and all(not f.exact for f in walk.flips)
    assert with_batch * 3 < calls[0]          # the grid's 257 points cost no scalar evaluation


def test_a_grid_point_the_plan_does_not_evaluate_at_is_left_to_the_scalar_engine(main_plan, monkeypatch):
    """A zero efficiency divides by zero: the batch marks the point, the scalar engine says UNDEFINED."""
    probe = _bracketed_probe(main_plan, "hbm_efficiency")
    values, ok = batch_at(probe.e, probe.variable, [0.0, float(probe.today)], probe.nominal)
    assert ok.tolist() == [False, True]
    probe._engine_grid([Fraction(0), probe.today])
    assert Fraction(0) not in probe._engine_known
    assert probe.at(Fraction(0)) == (UNDEFINED,) * len(probe.targets)
    batch = probe._engine_known.pop(probe.today)
    assert probe.at(probe.today) == batch          # the scalar engine's own values, bit for bit
