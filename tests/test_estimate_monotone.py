"""λ* never falls as an SLO loosens (issue 39): the model's estimate over every candidate of the
candidates plan (GPUs, TPs, formats: the "plans" of the property), for SLOs drawn at random.

The old estimate capped λ* where the batch λ·Ō·T filled the KV pool at the step target T, so a
looser TPOT target gave less capacity (1.2-18× less at a 1 s TPOT); the model's
``estimate_kv_rate`` fills the pool at the step time the batch really takes, which no SLO moves.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from capplan.analysis import candidates
from capplan.analysis.pipeline import evaluate_plan

PLAN = ROOT / "plans" / "llama3.3-70b-candidates.yaml"
SLOS = ("ttft_p95_slo", "tpot_p95_slo", "e2e_p99_slo")


@pytest.fixture(scope="module")
def estimate():
    _, evaluations = evaluate_plan(PLAN)
    e = evaluations[0]
    cands = e.plan.candidates.candidates
    n = len(cands)

    def at(slos: list[dict[str, float]]) -> np.ndarray:
        """estimated_max_rate, ``(len(slos), C)``: every candidate at each set of SLOs (seconds)."""
        drawn = {name: np.repeat([s[name] for s in slos], n).reshape((-1, 1)) for name in SLOS}
        values = candidates.run_candidates(e, cands, np.ones(n * len(slos)), np.zeros(n * len(slos)), None,
                                           tile=len(slos), drawn=drawn)[0]
        return np.broadcast_to(values["estimated_max_rate"], (n * len(slos), 1)).reshape((len(slos), n))
    return at


seconds = st.floats(min_value=0.005, max_value=60, allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ttft=seconds, tpot=st.floats(min_value=0.005, max_value=2), e2e=seconds,
       which=st.sampled_from(SLOS), looser=st.floats(min_value=1, max_value=100))
@example(ttft=1.0, tpot=1.0, e2e=0.125, which="e2e_p99_slo", looser=2.0)   # an E2E below the TTFT bound: no λ*
def test_lambda_never_falls_as_an_slo_loosens(estimate, ttft, tpot, e2e, which, looser):
    base = {"ttft_p95_slo": ttft, "tpot_p95_slo": tpot, "e2e_p99_slo": e2e}
    loose = dict(base, **{which: base[which] * looser})
    tight_rate, loose_rate = estimate([base, loose])
    assert np.all(loose_rate >= tight_rate * (1 - 1e-12)), (which, looser, tight_rate, loose_rate)


def test_a_one_second_tpot_target_gives_at_least_the_best_targets_capacity(estimate):
    """The issue's case: λ* at a 1 s TPOT target against the best of a ladder of targets."""
    ladder = [{"ttft_p95_slo": 2.0, "tpot_p95_slo": t, "e2e_p99_slo": 600.0} for t in (0.02, 0.05, 0.1, 0.2, 1.0)]
    rates = estimate(ladder)
    assert np.all(np.diff(rates, axis=0) >= -1e-9)
    assert np.all(rates[-1] == rates.max(axis=0))
