"""The formula language's row-window functions (#22): lag, window_max, window_min and
kth_largest, in every backend: floats (scalar and batch), exact fractions, units, Excel."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from capplan.engine.evaluate import Numeric
from capplan.engine.exact import Exact, NotClosedForm, Symbolic
from capplan.engine.unitcheck import UnitChecker
from capplan.errors import CapplanError
from capplan.language import units
from capplan.language.formula import parse
from capplan.rendering.workbook.formulaprinter import ExcelPrinter

X = [1.0, 5.0, 2.0, 2.0, 7.0, 1.0]


@pytest.mark.parametrize(("text", "want"), [
    ("lag(t.x, 0)", X),
    ("lag(t.x, 1)", [1, 1, 5, 2, 2, 7]),                  # before the first row, the first row's value
    ("lag(t.x, 9)", [1] * 6),
    ("window_max(t.x, 2)", [1, 5, 5, 5, 7, 7]),
    ("window_min(t.x, 1)", [1, 1, 2, 2, 2, 1]),
    ("window_min(window_max(t.x, 1), 1)", [1, 1, 5, 2, 2, 7]),
    ("kth_largest(t.x, 1)", 7), ("kth_largest(t.x, 2)", 5), ("kth_largest(t.x, 6)", 1),
])
def test_every_backend_agrees_by_hand(text, want):
    expr = parse(text).expr
    scalar = Numeric({"t.x": np.array(X)}).visit(expr)
    assert np.array_equal(scalar, np.array(want, dtype=float))
    batch = Numeric({"t.x": np.vstack([X, np.array(X) * 2])}, batch=True).visit(expr)
    assert np.array_equal(np.asarray(batch)[1], np.broadcast_to(np.array(want, dtype=float) * 2,
                                                                 np.asarray(batch)[1].shape))
    exact = Exact({"t.x": tuple(Fraction(v) for v in X)}, {}).visit(expr)
    assert (list(exact) if isinstance(exact, tuple) else exact) == want


def test_a_batch_member_with_its_own_count_of_rows():
    expr = parse("window_max(t.x, k)").expr
    got = Numeric({"t.x": np.array([X]), "k": np.array([[0.0], [2.0]])}, batch=True).visit(expr)
    assert got.tolist() == [X, [1, 5, 5, 5, 7, 7]]
    bad = Numeric({"t.x": np.array([X]), "k": np.array([[0.5], [1.0]])}, batch=True)
    bad.visit(expr)
    assert bad.failed.ravel().tolist() == [True, False]


@pytest.mark.parametrize(("text", "message"), [
    ("lag(t.x, -1)", r"Lag\(\) counts whole rows of at least 0, got -1"),
    ("window_max(t.x, 1.5)", r"WindowMax\(\) counts whole rows of at least 0, got 1.5"),
    ("kth_largest(t.x, 7)", r"kth_largest\(\) needs k from 1 to the 6 rows, got 7"),
])
def test_a_count_of_rows_that_is_no_count_is_refused(text, message):
    with pytest.raises(CapplanError, match=message):
        Numeric({"t.x": np.array(X)}).visit(parse(text).expr)


def test_the_symbol_in_a_count_of_rows_has_no_closed_form():
    with pytest.raises(NotClosedForm):
        Symbolic({"t.x": tuple(Fraction(v) for v in X), "k": sympy.Symbol("k")}, {}).visit(parse("lag(t.x, k)").expr)


def test_units_a_window_keeps_the_column_dimension_and_counts_rows_without_one():
    dims = {"t.x": units.dimensions("req/s"), "k": units.dimensions(""), "d": units.dimensions("s")}
    expr = parse("window_min(t.x, k)").expr
    assert UnitChecker("y", "window_min(t.x, k)", dims.get).visit(expr) == units.dimensions("req/s")
    with pytest.raises(CapplanError, match=r"y = lag\(t.x, d\): Lag\(\) counts rows with a dimensionless number"):
        UnitChecker("y", "lag(t.x, d)", dims.get).visit(parse("lag(t.x, d)").expr)


class _Refs:
    """A row formula in row 3 of a table whose column t.x is D12:D17 (defined name t_x)."""

    row = 3

    def scalar(self, name):
        return name

    def column(self, name):
        return name.replace(".", "_")

    def cell(self, name):
        return "D15"

    def is_bool(self, name):
        return False


@pytest.mark.parametrize(("text", "excel"), [
    ("lag(t.x, k)", "=OFFSET(D15,-MIN(k,3),0)"),
    ("window_max(t.x, k)", "=MAX(OFFSET(D15,-MIN(k,3),0,MIN(k,3)+1,1))"),
    ("window_min(t.x, 2)", "=MIN(OFFSET(D15,-MIN(2,3),0,MIN(2,3)+1,1))"),
    ("kth_largest(t.x, k)", "=LARGE(t_x,k)"),
    ("kth_largest(t.x * 2, k)", "=SUMPRODUCT(LARGE(t_x*2,k))"),
])
def test_the_workbook_reads_earlier_rows_by_offset(text, excel):
    assert ExcelPrinter(_Refs()).doprint(parse(text).expr) == excel


def test_a_window_over_no_column_of_the_row_has_no_workbook_form():
    with pytest.raises(CapplanError, match="a workbook reads earlier rows of a column of the row's own table"):
        ExcelPrinter(_Refs()).doprint(parse("lag(k, 1)").expr)


@pytest.mark.parametrize(("text", "want"), [
    ("sum_above(t.x, 2)", 3 + 5),                       # 5 and 7 above 2
    ("sum_above(t.x, 7)", 0),
    ("ln(t.x)", np.log(X)),
])
def test_sum_above_and_ln_by_hand(text, want):
    expr = parse(text).expr
    assert np.allclose(Numeric({"t.x": np.array(X)}).visit(expr), want)
    exact = Exact({"t.x": tuple(Fraction(v) for v in X)}, {}).visit(expr)
    assert np.allclose(np.array(exact, dtype=float), want)


def test_sum_above_and_kth_largest_take_a_level_per_row_of_another_table():
    """In a deployments row, one result per row: the levels 1 and 5, the ranks 1 and 3."""
    values = {"t.x": np.array(X), "d.l": np.array([1.0, 5.0]), "d.k": np.array([1.0, 3.0])}
    assert Numeric(values).visit(parse("sum_above(t.x, d.l)").expr).tolist() == [12, 2]
    assert Numeric(values).visit(parse("kth_largest(t.x, d.k)").expr).tolist() == [7, 2]
    batch = {k: v[None, :] for k, v in values.items()}
    assert Numeric(batch, batch=True).visit(parse("sum_above(t.x, d.l)").expr).tolist() == [[12, 2]]
    assert Numeric(batch, batch=True).visit(parse("kth_largest(t.x, d.k)").expr).tolist() == [[7, 2]]
    exact = {k: tuple(Fraction(v) for v in a) for k, a in values.items()}
    assert Exact(exact, {}).visit(parse("sum_above(t.x, d.l)").expr) == (12, 2)


def test_ln_of_a_dimension_and_sum_above_of_no_column_are_refused():
    dims = {"d": units.dimensions("s")}
    with pytest.raises(CapplanError, match=r"ln\(\) needs a dimensionless argument"):
        UnitChecker("y", "ln(d)", dims.get).visit(parse("ln(d)").expr)
    with pytest.raises(CapplanError, match="sum_above: its first argument must be a table column"):
        ExcelPrinter(_Refs()).doprint(parse("sum_above(k, 1)").expr)
    assert ExcelPrinter(_Refs()).doprint(parse("sum_above(t.x, k) + ln(k)").expr) == \
        "=SUMPRODUCT((--(t_x>k))*(t_x-k))+LN(k)"


@pytest.mark.parametrize("fn, reduce", [("window_max", max), ("window_min", min)])
def test_a_window_equals_the_rows_it_covers_for_any_length(fn, reduce):
    """Every window length from 0 to past the column, checked against the rows it covers."""
    x = np.random.default_rng(7).normal(size=37)
    for k in range(0, 45):
        got = Numeric({"t.x": x}).visit(parse(f"{fn}(t.x, {k})").expr)
        assert list(got) == [reduce(x[max(i - k, 0):i + 1]) for i in range(len(x))]


def test_a_long_window_over_a_long_profile_costs_n_log_n_not_n_times_k():
    """A 100,000-row profile with a window of every row: the rows one by one would take
    10^10 steps; by doubling windows about 17 passes. CPU time, with a wide margin."""
    import resource

    x = np.random.default_rng(3).normal(size=100_000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    got = Numeric({"t.x": x}).visit(parse("window_max(t.x, 99999)").expr)
    used = resource.getrusage(resource.RUSAGE_SELF).ru_utime - before
    assert np.array_equal(got, np.maximum.accumulate(x))
    assert used < 10, f"{used:.1f} s of CPU"
