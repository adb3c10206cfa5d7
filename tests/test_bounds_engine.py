"""Bounded work in the engine and the simulation (issue 25): every input inside its
domain is answered, or refused with its cause, with work that does not grow with the
numbers written. Work is measured by CPU time with a wide margin (the old loops took
minutes where the new forms take milliseconds), never by the wall clock.

The queueing functions at huge counts are checked against mpmath: the Poisson tail as
the integral of the gamma density by Gauss-Legendre quadrature at 40 digits (mpmath's
own incomplete gamma function gives up above a count of about 20,000), which is
independent of the expansion the engine uses.
"""

from __future__ import annotations

import json
import math
import resource
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import MAIN_PLAN

from capplan.engine import queueing
from capplan.engine.evaluate import FLEET_LIMIT


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def tail_reference(count: float, mean: float) -> float:
    """P(N > count), N ~ Poisson(mean): ∫ t^(s-1) e^-t / Γ(s) over [0, mean] (or 1 minus it
    over [mean, ∞)), s = ⌊count⌋ + 1, split into pieces of the integrand's own width."""
    with mpmath.workdps(40):
        s, x = mpmath.floor(mpmath.mpf(count)) + 1, mpmath.mpf(mean)
        lg = mpmath.loggamma(s)

        def density(t):
            return mpmath.exp((s - 1) * mpmath.log(t) - t - lg) if t > 0 else mpmath.mpf(0)

        width = min(mpmath.sqrt(s), x / abs(s - x)) if s != x else mpmath.sqrt(s)
        if x < s:
            points = sorted({max(mpmath.mpf(0), x - width * j) for j in range(160)})
            return float(mpmath.quad(density, points, method="gauss-legendre"))
        return float(1 - mpmath.quad(density, [x + width * j for j in range(160)], method="gauss-legendre"))


def erlang_c_reference(c: float, a: float) -> float:
    """C = B / (1 - ρ(1 - B)), B = P(N = c) / P(N ≤ c), in 40 digits."""
    with mpmath.workdps(40):
        cm, am = mpmath.mpf(c), mpmath.mpf(a)
        tail = mpmath.gammainc(cm + 1, 0, am, regularized=True) if c < 20_000 else tail_reference(c, a)
        b = mpmath.exp(cm * mpmath.log(am) - am - mpmath.loggamma(cm + 1)) / (1 - tail)
        return float(b / (1 - am / cm * (1 - b)))


def relative_error(got: float, want: float) -> float:
    return abs(got - want) / want if want > 1e-300 else abs(got)


# -- Erlang C and the Poisson tail at any size -----------------------------------------------

def test_the_reference_agrees_with_mpmaths_incomplete_gamma_where_that_converges():
    for count, mean in ((9_999, 7_000), (9_999, 10_400), (15_000, 15_000)):
        with mpmath.workdps(40):
            want = float(mpmath.gammainc(count + 1, 0, mean, regularized=True))
        assert tail_reference(count, mean) == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("s", [1e5, 1e6, 1e9, 1e12, 1e15])
def test_the_poisson_tail_at_huge_counts_equals_mpmath(s):
    """Temme's expansion from a count of 100,000 on: to 1e-12 across the peak and 30
    standard deviations into either tail (values down to 1e-200), and far from the peak."""
    worst = 0.0
    for mean in [s + f * math.sqrt(s) for f in (-30, -8, -3, -1, -0.3, -0.01, 0, 0.01, 0.3, 1, 3, 8, 30)] + \
            [s * r for r in (0.1, 0.5, 0.9, 1.1, 2)]:
        got = queueing.poisson_exceeds(s - 1, mean)
        worst = max(worst, relative_error(got, tail_reference(s - 1, mean)))
    assert worst < 1e-12


@pytest.mark.parametrize("c", [65, 1_000, 99_999, 100_000, 1e6, 1e9])
def test_erlang_c_at_huge_server_counts_equals_mpmath(c):
    """Above 64 servers Erlang C is P(N = c) / P(N ≤ c) in closed form: to 1e-12 from a
    vanishing load to one within a tenth of a standard deviation of the servers."""
    for rho in (1e-9, 1e-3, 0.3, 0.7, 0.9, 0.99, 1 - 1 / math.sqrt(c), 1 - 0.1 / math.sqrt(c)):
        a = c * rho
        assert relative_error(queueing.erlang_c(c, a), erlang_c_reference(c, a)) < 1e-12, (c, rho)


def test_the_recursion_and_the_closed_form_meet():
    """Up to 64 servers the Erlang-B recursion runs (the reference plans' numbers stay to the
    bit); the closed form gives the same there to 1e-13, and the exact fractions agree above."""
    for c in (2, 9, 30, 64):
        for rho in (0.01, 0.5, 0.9, 0.999):
            a = np.array([c * rho])
            recursion = queueing.erlang_c(c, c * rho)
            b = queueing._erlang_b(np.array([float(c)]), a)[0]
            assert c * b / ((c - c * rho) + c * rho * b) == pytest.approx(recursion, rel=1e-13), (c, rho)
    c, a = 120, Fraction(100)
    top = a ** c / math.factorial(c) * c / (c - a)
    exact = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    assert queueing.erlang_c(c, 100.0) == pytest.approx(float(exact), rel=1e-13)


def test_the_series_and_the_expansion_meet():
    """Just below 100,000 the series answers, from it the expansion: both agree there; and
    Temme's coefficients, as power series and in closed form, agree where one hands over."""
    s = np.full(5, queueing._LARGE - 1)
    x = s + np.array([-300.0, -30, 0, 30, 300])
    assert queueing._temme(s, x) == pytest.approx(queueing._lower_series(s, x), rel=1e-12)
    eta = np.array([-queueing._SERIES_ETA, queueing._SERIES_ETA])
    mu = np.array([_mu(e) for e in eta])
    series = [queueing._horner(queueing._C0, eta), queueing._horner(queueing._C1, eta)]
    closed = [1 / mu - 1 / eta, 1 / eta ** 3 - 1 / mu ** 3 - 1 / mu ** 2 - 1 / (12 * mu)]
    assert series[0] == pytest.approx(closed[0], rel=1e-14)
    assert series[1] == pytest.approx(closed[1], rel=1e-11)


def _mu(eta: float) -> float:
    """λ - 1 with η²/2 = μ - ln(1 + μ), of η's sign (mpmath's root finder)."""
    with mpmath.workdps(40):
        return float(mpmath.findroot(lambda m: m - mpmath.log1p(m) - mpmath.mpf(eta) ** 2 / 2, eta * 1.2))


def test_work_does_not_grow_with_the_count():
    """A billion servers near saturation and a tail at a count of 1e15: milliseconds (the
    old loop ran once per server, minutes; the old series about 8·√count terms)."""
    start = cpu_seconds()
    for _ in range(10):
        queueing.erlang_c(1e9, 1e9 - 3e4)
        queueing.erlang_c(np.array([1e9, 5e15, 70.0]), np.array([0.9e9, 5e15 - 1e8, 69.0]))
        queueing.poisson_exceeds(1e15, 1e15 + 3e7)
    assert cpu_seconds() - start < 2.0


def test_one_element_and_the_array_give_the_same_bits_at_huge_counts():
    rng = np.random.default_rng(11)
    c = np.floor(10 ** rng.uniform(1, 12, 2_000))
    a = c * rng.uniform(0.0, 1.2, c.size)
    together = queueing.erlang_c(c, a)
    assert np.array_equal(together, [queueing.erlang_c(x, y) for x, y in zip(c.tolist(), a.tolist())])
    tails = queueing.poisson_exceeds(c, a)
    assert np.array_equal(tails, [queueing.poisson_exceeds(x, y) for x, y in zip(c.tolist(), a.tolist())])


# -- absurd fleets: answered fast, refused with their cause ---------------------------------------

def _plan_text(**replace: str) -> str:
    text = MAIN_PLAN.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return text


RHO = "rho_target: {value: 0.70, source: SRE headroom policy}"


@pytest.mark.parametrize("edit, cause", [
    ({RHO: "rho_target: {value: 0.0000001, source: SRE headroom policy}"}, "it comes from rho_target = 1e-07"),
    ({RHO: RHO + "\n  safe_rate_per_replica: {value: 0.000001 req/s, tag: assumption}"},
     "it comes from safe_rate_per_replica = 1e-06 req/s"),
], ids=["rho_target 1e-7", "pinned rate 1e-6 req/s"])
def test_an_absurd_fleet_is_refused_fast_with_its_cause(edit, cause, write_plan, run_main):
    path = write_plan(_plan_text(**edit))
    start = cpu_seconds()
    code, _, err = run_main("eval", path)
    assert cpu_seconds() - start < 20          # minutes before: erlang_c looped over 60 million servers
    assert code == 1 and "Traceback" not in err
    assert "active_gpus = active_replicas * gpus_per_replica is 6e+07 GPUs, more than the 1,000,000 GPUs" in err
    assert cause in err and "active_replicas = 6e+07" in err


def test_a_large_fleet_below_the_limit_is_answered_exactly(write_plan, run_main):
    """rho_target 1e-4: 60,000 replicas, whose pooled wait (at ρ ≈ 0.97, near saturation, 4e-11)
    takes the closed form and equals mpmath's."""
    path = write_plan(_plan_text(**{RHO: "rho_target: {value: 0.0001, source: SRE headroom policy}"}))
    start = cpu_seconds()
    code, out, _ = run_main("eval", path, "--json")
    assert cpu_seconds() - start < 20
    assert code == 0
    q = {name: v["value"] for name, v in json.loads(out)["scenarios"]["nominal"]["quantities"].items()}
    assert q["active_replicas"] == 60_000 < FLEET_LIMIT and q["wait_probability"] == 0
    pooled = erlang_c_reference(60_000, 60_000 * q["pooled_rho_equivalent"])
    assert pooled > 1e-12 and q["pooled_rho_wait_probability"] == pytest.approx(pooled, rel=1e-9)
