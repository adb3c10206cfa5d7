"""A comparison is peeled (analysis/flips/steps.py ``_peel``) without dividing the moving side by
its number coefficient: the coefficient is taken off as sympy keeps it (``as_coeff_Mul``), the
same expression that the division gives, without the division's flattening."""

from __future__ import annotations

import sympy
from conftest import MAIN_PLAN

from capplan.analysis.flips import steps
from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run

X = sympy.Symbol("x", real=True)


def test_peeling_a_number_coefficient_flattens_no_product(monkeypatch):
    h = sympy.Rational(3, 7) * sympy.ceiling(X / 5, evaluate=False) * (X + 2)
    expected = sympy.ceiling(X / 5, evaluate=False) * (X + 2)
    flattened = []
    real = sympy.Mul.flatten.__func__
    monkeypatch.setattr(sympy.Mul, "flatten", classmethod(lambda cls, seq: flattened.append(seq) or real(cls, seq)))
    peeled, bound = steps._peel(h, sympy.Integer(6), ">=", X)
    assert (peeled, bound) == (expected, 14)
    assert not [seq for seq in flattened if any(a.has(X) for a in seq)]


def _products(expr):
    """Every product under a comparison's side that :func:`steps._peel` may meet, with its coefficient."""
    return [m for m in sympy.preorder_traversal(expr) if isinstance(m, sympy.Mul)]


def test_a_coefficient_taken_off_is_the_division_by_it_for_every_product_of_the_main_plan():
    evaluations = run(MAIN_PLAN).evaluations
    holds = PlanHolds(evaluations, decisions_only=True)
    seen = 0
    for e in evaluations:
        for h in holds.of(e.scenario.name):
            for expr in h.probe.expressions or ():
                for m in _products(expr):
                    coefficient, rest = m.as_coeff_Mul()
                    if coefficient != 1 and steps.moves(m, h.probe.symbol):
                        assert sympy.srepr(rest) == sympy.srepr(m / coefficient), m
                        seen += 1
    assert seen > 10
