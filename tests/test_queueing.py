"""The queueing check of the headroom: Erlang C, the Poisson tail, and the
model's quantities built on them, against hand values and independent
computations (a textbook Erlang-C table, the Erlang-C sum written out in exact
fractions, mpmath's incomplete gamma function)."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import recalc
from openpyxl import Workbook
from openpyxl.workbook.defined_name import DefinedName

from capplan.engine import queueing
from capplan.engine.evaluate import Numeric, evaluate_all
from capplan.language.formula import parse
from capplan.language.model import standard_model
from capplan.engine.unitcheck import check_formula
from capplan.language.units import dimensions
from capplan.errors import CapplanError
from capplan.loading.plan import load
from capplan.rendering.workbook.formulaprinter import to_excel
from capplan.rendering.workbook.lint import lint_formula
from plan_edits import full_view

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"
RETAIL = ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml"


def erlang_c_exact(c: int, a: Fraction) -> Fraction:
    """The textbook Erlang-C formula, in exact fractions:
    (a^c/c! · c/(c-a)) / (Σ_{k<c} a^k/k! + a^c/c! · c/(c-a))."""
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def value(text: str) -> float:
    return Numeric({}).visit(parse(text).expr)


@pytest.fixture(scope="module")
def chat():
    model = standard_model()
    return {e.scenario.name: e for e in evaluate_all(load(CHAT, model), model)}


# -- the functions ------------------------------------------------------------------------

def test_erlang_c_textbook_table():
    """Two servers at one Erlang wait with probability 1/3 (Kleinrock, Queueing Systems I:
    C(2, 1) = a²/(2(2-a)) / (1 + a + a²/(2(2-a))) = (1/2)/(3/2)); ten at eight, 0.4092
    (Erlang-C tables)."""
    assert value("erlang_c(2, 1)") == pytest.approx(1 / 3, rel=1e-14)
    assert value("erlang_c(10, 8)") == pytest.approx(0.4092, abs=5e-5)
    assert value("erlang_c(1, 0.7)") == pytest.approx(0.7, rel=1e-14)        # M/M/1: P(wait) = rho


@pytest.mark.parametrize("c, a", [(1, "1/2"), (3, "5/2"), (9, "6"), (16, "6"), (40, "71/2"), (120, "100")])
def test_erlang_c_equals_the_exact_sum(c, a):
    assert queueing.erlang_c(c, float(Fraction(a))) == pytest.approx(float(erlang_c_exact(c, Fraction(a))), rel=1e-12)


def test_erlang_c_edges_and_arrays():
    assert queueing.erlang_c(5, 0) == 0.0                 # no traffic: nobody waits
    assert queueing.erlang_c(5, 5) == 1.0                 # the load reaches the servers: everyone waits
    assert queueing.erlang_c(5, 7.5) == 1.0
    got = queueing.erlang_c(np.array([9, 16, 2, 3]), np.array([6, 6, 1, 4]))
    assert got.shape == (4,)
    assert got == pytest.approx([float(erlang_c_exact(9, Fraction(6))), float(erlang_c_exact(16, Fraction(6))),
                                 1 / 3, 1.0], rel=1e-12)


@pytest.mark.parametrize("k", [0, 1, 9.5, 60, 89, 600, 900, 1600])
@pytest.mark.parametrize("mean", [0.1, 5, 60, 90, 600, 899.5, 1600])
def test_poisson_tail_equals_the_incomplete_gamma_function(k, mean):
    """P(N > k) = P(⌊k⌋+1, mean), the regularized lower incomplete gamma function, to 1e-12
    even 250 orders of magnitude down the tail (where 1 - CDF would be 0)."""
    with mpmath.workdps(50):
        want = float(mpmath.gammainc(math.floor(k) + 1, 0, mean, regularized=True))
    assert queueing.poisson_exceeds(k, mean) == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_poisson_tail_by_hand_and_on_arrays():
    assert value("poisson_exceeds(0, 2)") == pytest.approx(1 - math.exp(-2), rel=1e-14)
    assert value("poisson_exceeds(1, 2)") == pytest.approx(1 - 3 * math.exp(-2), rel=1e-14)
    assert value("poisson_exceeds(3, 0)") == 0.0
    got = queueing.poisson_exceeds(np.array([0.0, 1.0, 1.9]), 2.0)
    assert got == pytest.approx([1 - math.exp(-2), 1 - 3 * math.exp(-2), 1 - 3 * math.exp(-2)], rel=1e-14)


@pytest.mark.parametrize("text, message", [
    ("erlang_c(2.5, 1)", "erlang_c() needs a whole number of servers and a value of at least 0, got 2.5 and 1"),
    ("erlang_c(3, -1)", "got 3 and -1"),
    ("poisson_exceeds(-1, 4)", "poisson_exceeds() needs a count and a value of at least 0, got -1 and 4"),
], ids=["servers not whole", "negative load", "negative count"])
def test_arguments_outside_the_domain_are_refused(text, message):
    with pytest.raises(CapplanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        value(text)


def test_the_functions_are_unit_checked():
    dims = {"rate": dimensions("req/s"), "n": dimensions(""), "count": dimensions("request"),
            "tokens": dimensions("token")}.__getitem__
    check_formula("p", "", parse("erlang_c(n, n)"), dims)
    check_formula("p", "", parse("poisson_exceeds(count, count)"), dims)
    with pytest.raises(CapplanError, match=r"erlang_c\(\) needs dimensionless arguments"):
        check_formula("p", "", parse("erlang_c(n, rate)"), dims)
    with pytest.raises(CapplanError, match=r"poisson_exceeds\(\) needs operands of one dimension"):
        check_formula("p", "", parse("poisson_exceeds(count, tokens)"), dims)
    with pytest.raises(CapplanError, match="declared in 'ms'"):
        check_formula("p", "ms", parse("erlang_c(n, n)"), dims)


def test_the_functions_are_parsed_not_evaluated():
    with pytest.raises(CapplanError, match=r"erlang_c\(\) takes 2 argument"):
        parse("erlang_c(9)")


# -- the model's quantities -----------------------------------------------------------------

def test_hand_values_of_the_main_plan(chat):
    """Issue #11: c = 9 active replicas at λ/μ = 60/10 = 6 Erlangs wait with P = 0.19598 and
    W_q = P/(cμ - λ) = 0.19598/30 s = 6.53 ms; the 16 deployed p4de GPUs, P = 0.000535."""
    e = chat["nominal"]
    assert e.display("active_replicas") == 9 and e.display("offered_load") == 6
    assert round(e.display("wait_probability"), 5) == 0.19598
    assert round(e.display("mean_queue_wait"), 2) == 6.53
    fleet = dict(zip(e.display("deployments.name"), e.display("deployments.fleet_wait_probability")))
    assert round(fleet["aws-p4de.24xlarge"], 6) == 0.000535
    assert dict(zip(e.display("deployments.name"), e.display("deployments.fleet_replicas"))) == \
        {"aws-p4de.24xlarge": 16, "fractional-a100-80gb": 10}


def test_service_time_variation_allen_cunneen_and_kingman(chat):
    """Outputs 64, 256, 256 tokens at weights 0.7, 0.2, 0.1: E[O] = 121.6, E[O²] = 22,528,
    C_s² = 22528/121.6² - 1 = 0.52355; Allen-Cunneen multiplies W_q by (1 + C_s²)/2;
    Kingman per replica: ρ/(1-ρ) · (1 + C_s²)/2 / μ with ρ = 6/9."""
    e = chat["nominal"]
    scv = 22528 / 121.6 ** 2 - 1
    assert e.display("service_time_scv") == pytest.approx(scv, rel=1e-12)
    wq = float(erlang_c_exact(9, Fraction(6))) / 30 * 1000
    assert e.display("allen_cunneen_wait") == pytest.approx(wq * (1 + scv) / 2, rel=1e-12)
    assert e.display("kingman_wait") == pytest.approx((2 / 3) / (1 / 3) * (1 + scv) / 2 / 10 * 1000, rel=1e-12)


def test_burst_check(chat):
    """600 arrivals expected in 10 s against 900 carried: P(N > 900), about 1.7e-30."""
    e = chat["nominal"]
    assert (e.display("window_arrivals"), e.display("window_capacity")) == (600, 900)
    with mpmath.workdps(50):
        want = float(mpmath.gammainc(901, 0, 600, regularized=True))
    assert e.display("burst_overflow_probability") == pytest.approx(want, rel=1e-12)


def test_pooling_allows_a_higher_utilisation(chat):
    """Sakasegawa: P_wait ≈ ρ^(√(2(c+1)) - 1), so the pooled ρ that waits as often as M/M/1 at
    0.70 is 0.7^(1/(√20 - 1)) = 0.9024 for c = 9, 0.20 above the policy; the exact Erlang C
    there is within 0.01 of the 0.70 aimed at."""
    e = chat["nominal"]
    rho = 0.7 ** (1 / (math.sqrt(20) - 1))
    assert e.display("pooled_rho_equivalent") == pytest.approx(rho, rel=1e-12)
    assert e.display("pooled_rho_gain") == pytest.approx(rho - 0.7, rel=1e-12)
    assert round(e.display("pooled_rho_equivalent"), 4) == 0.9024
    assert abs(e.display("pooled_rho_wait_probability") - 0.7) < 0.01


def test_scenarios_check_the_nominal_fleet(chat):
    """surge_50: 90 req/s on the 10 fractional GPUs sized for 60 (a = 9, c = 10); n_minus_1:
    one GPU lost leaves 9 of them at a = 6, the active fleet's own numbers."""
    surge = chat["surge_50"]
    fleet = dict(zip(surge.display("deployments.name"), surge.display("deployments.fleet_wait_probability")))
    assert fleet["fractional-a100-80gb"] == pytest.approx(float(erlang_c_exact(10, Fraction(9))), rel=1e-12)
    lost = chat["n_minus_1"]
    assert lost.display("deployments.fleet_replicas") == [15, 9]
    assert lost.display("deployments.fleet_wait_probability")[1] == pytest.approx(0.1959809126957457, rel=1e-12)


def test_an_unstable_queue_says_so():
    """Little's-law sizing keeps no headroom: the retail plan's 25 replicas at 25 Erlangs
    form an unstable queue, in which every request waits and no mean wait exists."""
    model = standard_model()
    (e,) = evaluate_all(load(RETAIL, model), model)
    assert (e.display("offered_load"), e.display("active_replicas")) == (25, 25)
    assert e.display("queue_stable") is False
    assert e.display("wait_probability") == 1
    assert e.display("mean_queue_wait") == 0 and e.display("kingman_wait") == 0
    with mpmath.workdps(50):
        assert e.display("burst_overflow_probability") == pytest.approx(
            float(mpmath.gammainc(501, 0, 500, regularized=True)), rel=1e-12)


def test_excel_forms_use_functions_every_spreadsheet_has():
    """Excel 2007's POISSON and GAMMADIST (LibreOffice and Gnumeric have both, no _xlfn.
    prefix): C = P/(P + (1 - a/c)·F); the tail as the incomplete gamma function. The
    workbook tests recalculate them in LibreOffice against the engine."""

    class Refs:
        def scalar(self, name):
            return name

        def is_bool(self, name):
            return False

    def xl(text):
        return to_excel(parse(text).expr, Refs())

    assert xl("erlang_c(c, a)") == ("=IF(a>=c,1,POISSON(c,a,FALSE)/(POISSON(c,a,FALSE)+(1-a/c)*POISSON(c-1,a,TRUE)))")
    assert xl("erlang_c(n + m, x * y)") == (
        "=IF(x*y>=n+m,1,POISSON(n+m,x*y,FALSE)/(POISSON(n+m,x*y,FALSE)+(1-x*y/(n+m))*POISSON(n+m-1,x*y,TRUE)))")
    assert xl("poisson_exceeds(k, m)") == "=GAMMADIST(m,FLOOR(k,1)+1,1,TRUE)"
    for text in ("erlang_c(servers, load)", "poisson_exceeds(count, mean)"):
        assert lint_formula(xl(text), {"servers", "load", "count", "mean"}) == []


def test_the_record_says_what_pooling_means_for_rho():
    """The queueing section says which way and by how much, from the model's quantities; a plan
    whose queue is unstable says that instead."""
    model = standard_model()
    notes = {}
    for path in (CHAT, RETAIL):
        plan = load(path, model)
        sections = full_view(plan, evaluate_all(plan, model)).sections
        section = next(s for s in sections if s["title"] == "Queueing check of the headroom")
        notes[path] = " ".join(p["note"] for p in section["parts"] if p["note"])
    assert "with 9 replicas pooled, the same probability of waiting allows a higher utilisation, ρ ≈ 0.9024 " \
           "(0.2024 above the policy" in notes[CHAT]
    assert "make a request wait with probability 0.196, 6.533 ms/request on average" in notes[CHAT]
    assert "the queue is unstable, every request waits" in notes[RETAIL]
    assert "ρ ≈" not in notes[RETAIL]                    # Little's-law sizing has no rho_target to compare


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_libreoffice_computes_the_excel_forms_element_wise(tmp_path):
    """Inside a table function the forms work on whole columns (SUMPRODUCT evaluates POISSON
    and GAMMADIST element-wise); LibreOffice's results equal the engine's, and the
    textbook C(2, 1) = 1/3 comes out of the spreadsheet too."""
    class Refs:
        def scalar(self, name):
            return name

        def column(self, name):
            return name.replace(".", "_")

        def cell(self, name):
            return None

        def is_bool(self, name):
            return False

    servers, loads = [9, 16, 3, 2], [6, 6, 3.5, 1]
    texts = ["sum(erlang_c(t.c, t.a))", "sum(poisson_exceeds(t.c * 10, t.a * 10))", "max(erlang_c(t.c, t.a))",
             "erlang_c(two, one)"]
    wb = Workbook()
    ws = wb.active
    ws.title = "S"
    for i, (c, a) in enumerate(zip(servers, loads), 1):
        ws.cell(i, 1, c)
        ws.cell(i, 2, a)
    ws["C1"], ws["C2"] = 2, 1
    for name, ref in (("t_c", "S!$A$1:$A$4"), ("t_a", "S!$B$1:$B$4"), ("two", "S!$C$1"), ("one", "S!$C$2")):
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    values = {"t.c": np.array(servers, float), "t.a": np.array(loads, float), "two": 2.0, "one": 1.0}
    for row, text in enumerate(texts, 1):
        ws.cell(row, 4, to_excel(parse(text).expr, Refs()))
    source = tmp_path / "queueing.xlsx"
    wb.save(source)
    got = recalc.values(recalc.recalc([source], tmp_path / "out")[source])["S"]
    for row, text in enumerate(texts, 1):
        assert got.cell(row, 4).value == pytest.approx(Numeric(values).visit(parse(text).expr), rel=1e-12), text
    assert got.cell(4, 4).value == pytest.approx(1 / 3, rel=1e-14)


def test_the_series_gives_the_same_bits_one_element_at_a_time_and_by_the_array():
    """The evaluator's scalars take a Python loop, the simulation's arrays numpy: the
    same IEEE operations in the same order, so the same bits (20,000 random cases)."""
    rng = np.random.default_rng(7)
    s = np.floor(rng.uniform(1, 3000, 20_000)) + 1
    x = np.minimum(s * rng.uniform(0.01, 1.0, s.size), s + 0.999)
    by_array = queueing._lower_series(s, x)
    one_by_one = np.concatenate([queueing._lower_series(s[i:i + 1], x[i:i + 1]) for i in range(s.size)])
    assert s.size > queueing._FEW and np.array_equal(by_array, one_by_one)
