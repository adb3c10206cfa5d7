"""The record's LaTeX of the formula language's own functions: the printer knows each node
(``_print_<Node>``), the nodes do not print themselves."""

from __future__ import annotations

import pytest
import sympy

from capplan.language.formula import (
    ErlangC,
    MaxBeforeFailure,
    MinFailure,
    Nominal,
    PerGpu,
    PerToken,
    PoissonExceeds,
    TableMax,
    TableMin,
    TableSum,
)
from capplan.rendering.present import _Latex

x, y, ok = sympy.symbols("x y ok")


@pytest.mark.parametrize("expr, text", [
    (TableSum(x * y), r"\sum_i x \cdot y"),
    (TableMax(x + y), r"\max_i \left(x + y\right)"),
    (TableMin(x), r"\min_i \left(x\right)"),
    (MaxBeforeFailure(x, ok), r"\max\{x : ok \text{ for all rates} \le x\}"),
    (MinFailure(x, ok), r"\min\{x : \lnot ok\}"),
    (Nominal(x), r"x^{nom}"),
    (ErlangC(x, y), r"C\left(x, y\right)"),
    (PoissonExceeds(x, y), r"P\left(\mathrm{Poisson}\left(y\right) > x\right)"),
    (PerToken(2 * x), r"2 \cdot x"),
    (PerGpu(y), "y"),
])
def test_each_function_of_the_formula_language_in_latex(expr, text):
    assert _Latex({}).doprint(expr) == text


def test_symbols_take_the_model_s_latex_names():
    assert _Latex({x: r"\lambda"}).doprint(TableSum(x)) == r"\sum_i \lambda"
