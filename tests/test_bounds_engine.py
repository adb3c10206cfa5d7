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
from capplan.engine.graph import build
from capplan.errors import CapplanError


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


# -- the simulation: chunks, memory, shares, draws that do not evaluate ---------------------------

def test_chunks_give_the_same_numbers_as_one_pass(monkeypatch):
    """The graph runs over the draws in chunks; a chunk of 7 draws gives every kept value,
    every draw's verdict and the summary exactly as chunks of thousands do."""
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo
    from capplan.analysis import simulation

    plan, evaluations = evaluate_plan(MAIN_PLAN)
    e = evaluations[0]
    whole = montecarlo.simulate(plan, e.model, e.values, samples=3_000, seed=5)
    monkeypatch.setattr(montecarlo, "CHUNK_BYTES", 1)          # one draw a chunk
    one = montecarlo.simulate(plan, e.model, e.values, samples=300, seed=5)
    monkeypatch.setattr(montecarlo, "CHUNK_BYTES", 7 * 8 * 2_000)
    small = montecarlo.simulate(plan, e.model, e.values, samples=3_000, seed=5)
    def every(sim, name):
        value = sim.values[name]
        return np.broadcast_to(value, (sim.samples, value.shape[1]))

    for name in whole.values:
        assert np.array_equal(every(whole, name), every(small, name), equal_nan=True), name
        assert np.array_equal(every(whole, name)[:300], every(one, name), equal_nan=True), name
    assert np.array_equal(whole.evaluates, small.evaluates)
    assert simulation.summarise(whole, e) == simulation.summarise(small, e)


def test_the_draws_asked_for_must_fit_in_memory(run_main):
    """10 million draws of the main plan would keep 4.5 GiB: refused at once with the largest
    number that fits; that number is accepted (checked without running it)."""
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo
    from capplan.analysis import simulation

    start = cpu_seconds()
    code, _, err = run_main("simulate", MAIN_PLAN, "--samples", "10000000")
    assert cpu_seconds() - start < 20
    assert code == 1 and "Traceback" not in err
    assert "10,000,000 draws would keep 480 bytes each (5 uncertain values, 17 results)" in err
    most = int(err.split("(--samples ")[1].split(")")[0])
    assert f"at most {most:,} draws" in err and most * 480 <= montecarlo.MEMORY_BYTES < (most + 1) * 480
    plan, evaluations = evaluate_plan(MAIN_PLAN)
    e = evaluations[0]
    keep = simulation.kept(e)
    rows = {t: len(d.rows) for t, d in plan.nominal.tables.items()}
    graph = build(e.model, plan.switches, frozenset(), nominal=False)
    montecarlo._fits(plan, plan.nominal, e.model, graph, rows, keep, most)             # no error


def _ranged_classes(n: int) -> str:
    text = MAIN_PLAN.read_text(encoding="utf-8")
    start, end = text.index("      - {name: short-chat,"), text.index("  load_sweep:")
    rows = "".join(f"      - {{name: c{i}, weight: {{value: {1 / n!r}, range: {0.5 / n!r} to {1.5 / n!r}}}, "
                   f"prompt_tokens: {32 + i}, output_tokens: 64}}\n" for i in range(n))
    text = text[:start] + rows + text[end:]
    return text[:text.index("\nscenarios:")] + "\n"


def test_ranged_class_weights_are_drawn_to_sum_to_one(write_plan):
    """Every weight ranged: each draw's weights are divided by their sum, so every draw
    evaluates (before, the weights check failed in all but a handful)."""
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo

    plan, evaluations = evaluate_plan(write_plan(_ranged_classes(20)))
    e = evaluations[0]
    sim = montecarlo.simulate(plan, e.model, e.values, samples=2_000)
    weights = np.array([u.drawn.values for u in sim.uncertain if u.quantity == "classes.weight"])
    assert weights.shape == (20, 2_000)
    assert np.allclose(weights.sum(axis=0), 1, rtol=0, atol=1e-12) and weights.std(axis=1).min() > 0
    assert sim.evaluates.all() and sim.causes == {}
    assert np.allclose(sim.column("class_weight_total"), 1, atol=1e-12)


def test_a_fixed_weight_is_rescaled_with_the_ranged_ones(base_plan, write_plan):
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo

    base_plan["tables"]["classes"]["rows"][0]["weight"] = {"value": 0.7, "range": "0.5 to 0.9", "dist": "uniform"}
    plan, evaluations = evaluate_plan(write_plan(base_plan))
    e = evaluations[0]
    sim = montecarlo.simulate(plan, e.model, e.values, samples=1_000)
    (u,) = sim.uncertain
    other = sim.column("classes.weight", 1)
    assert np.array_equal(sim.column("classes.weight", 0), u.drawn.values)
    assert np.allclose(other + u.drawn.values, 1, rtol=0, atol=1e-12) and other.min() < 0.3 < other.max()
    assert sim.evaluates.all()


def _failing_sweep(base_plan, low: float, high: float):
    """The first sweep row's TPOT drawn around the 25 ms SLO: a draw above it leaves no row passing."""
    base_plan["tables"]["load_sweep"]["rows"][0]["tpot_p95"] = {"value": f"{max(low, 12.1)} ms", "range": f"{low} to {high} ms",
                                                                "dist": "uniform"}
    return base_plan


def test_draws_that_do_not_evaluate_are_counted_by_cause(base_plan, write_plan, run_main):
    path = write_plan(_failing_sweep(base_plan, 10, 27.5))          # 2.5/17.5 = 14 % of draws fail
    code, out, _ = run_main("simulate", path, "--samples", "20000")
    assert code == 0
    line = next(x for x in out.splitlines() if "do not evaluate" in x)
    count = int(line.split("note: ")[1].split(" draws")[0].replace(",", ""))
    assert abs(count - 20_000 * 2.5 / 17.5) < 400
    assert "instance_max_rate = max_before_failure(" in line and "is not a number" in line
    assert f"the plan evaluates at {20_000 - count:,}" in out
    code, out, _ = run_main("simulate", path, "--samples", "2000", "--format", "json")
    doc = json.loads(out)
    assert doc["evaluated"] + doc["not_evaluated"][0]["draws"] == 2_000
    code, out, _ = run_main("simulate", path, "--samples", "2000", "--format", "markdown")
    assert f"The plan evaluates at {doc['evaluated']:,} draws" in out
    assert f"{doc['not_evaluated'][0]['draws']:,} draws do not evaluate: instance_max_rate = " in out


def test_a_simulation_that_mostly_does_not_evaluate_is_refused(base_plan, write_plan, run_main):
    path = write_plan(_failing_sweep(base_plan, 20, 40))            # 15/20 = 75 % of draws fail
    code, out, err = run_main("simulate", path, "--samples", "4000")
    assert code == 1 and out == "" and "Traceback" not in err
    assert "the plan evaluates at " in err and "of 4,000 draws" in err
    assert "fewer than the 50% a simulation needs" in err and "is not a number" in err


def test_500_ranged_classes_stay_within_the_memory_budget(write_plan):
    """500 classes, every weight ranged, at 100,000 draws: what the simulation keeps fits in
    its budget (the graph's values for 500 rows are never held over all draws at once)."""
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo
    from capplan.analysis import simulation

    plan, evaluations = evaluate_plan(write_plan(_ranged_classes(500)))
    e = evaluations[0]
    keep = simulation.kept(e)
    rows = {t: len(d.rows) for t, d in plan.nominal.tables.items()}
    graph = build(e.model, plan.switches, frozenset(), nominal=False)
    montecarlo._fits(plan, plan.nominal, e.model, graph, rows, keep, montecarlo.DEFAULT_SAMPLES)    # no error
    with pytest.raises(CapplanError, match="at most"):
        montecarlo._fits(plan, plan.nominal, e.model, graph, rows, keep, 2 * montecarlo.DEFAULT_SAMPLES)


def test_a_wide_rho_range_is_simulated_and_built_quickly(write_plan, run_main, tmp_path):
    """rho_target drawn from 0.001 to 0.9 (90 %): its tail reaches millions of replicas in some
    draws, where the old Erlang-B loop ran once per server over every draw (past 120 s)."""
    path = write_plan(_plan_text(**{RHO: "rho_target: {value: 0.7, range: 0.001 to 0.9, source: SRE headroom policy}"}))
    start = cpu_seconds()
    code, out, _ = run_main("simulate", path, "--samples", "20000")
    assert code == 0 and "rho_target" in out and "evaluates at 20,000 (100.0 %)" in out
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    assert cpu_seconds() - start < 60
    assert (tmp_path / "out" / "test-plan.simulation.svg").exists()
