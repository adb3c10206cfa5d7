"""One formula walker, number backends (#27): adding a function is one entry per backend.

Every walk of a formula tree dispatches the same way (sympy's printer
convention, ``_print_<Node>`` along the node class's MRO, and a
``known_functions`` table for the plain element-wise functions). A toy
function registered in the formula language and given one entry per backend
evaluates in floats (a scalar evaluation and a batch), in exact fractions and
in symbols; a backend without an entry says so; every function of the
language has an entry in every backend, the printers included.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy
from sympy.printing.latex import LatexPrinter

from capplan.engine.evaluate import Numeric
from capplan.engine.exact import Exact, Symbolic, compile_exact
from capplan.engine.unitcheck import UnitChecker
from capplan.errors import CapplanError
from capplan.language import formula
from capplan.language.formula import FUNCTIONS, parse
from capplan.language.walker import Walker
from capplan.rendering.workbook.formulaprinter import ExcelPrinter


class Twice(sympy.Function):
    """twice(x): a toy function of the formula language, 2x."""
    nargs = 1


@pytest.fixture
def twice(monkeypatch):
    """``twice`` registered as every function is: one line in FUNCTIONS, one entry per backend."""
    monkeypatch.setitem(formula.FUNCTIONS, "twice", (Twice, {1}))
    monkeypatch.setitem(Numeric.known_functions, "Twice", lambda x: 2.0 * x)
    monkeypatch.setitem(Exact.known_functions, "Twice", lambda ops, x: 2 * x)
    yield
    for backend in (Numeric, Exact, Symbolic, UnitChecker):
        backend._dispatch.pop(Twice, None)


def test_a_toy_function_needs_one_entry_per_backend(twice):
    expr = parse("twice(x) + 1").expr
    assert Numeric({"x": 2.5}).visit(expr) == 6.0                                  # a scalar: batch 1
    batch = Numeric({"x": np.array([[1.0], [2.0], [3.0]])}, batch=True).visit(expr)  # three members
    assert batch.shape == (3, 1) and batch[:, 0].tolist() == [3.0, 5.0, 7.0]
    assert Exact({"x": Fraction(1, 3)}, {}).visit(expr) == Fraction(5, 3)
    x = sympy.Symbol("x")
    symbolic = Symbolic({"x": x}, {}).visit(expr)
    assert sympy.simplify(symbolic - (2 * x + 1)) == 0
    assert compile_exact(symbolic, x)(Fraction(1, 4)) == Fraction(3, 2)
    with pytest.raises(CapplanError, match=r"formula element 'Twice\(x\)' \(Twice\) is not supported by the "
                                           r"UnitChecker backend"):
        UnitChecker("y", "twice(x) + 1", lambda name: ()).visit(expr)


def test_dispatch_follows_the_mro_and_is_cached_per_node_class():
    class Probe(Walker):
        def number(self, value):
            return "number"

        def _print_Relational(self, expr):
            return "relation"

    probe = Probe()
    x, y = sympy.symbols("x y")
    for relation in (sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge, sympy.Eq, sympy.Ne):
        assert probe.visit(relation(x, y, evaluate=False)) == "relation"
    assert probe.visit(sympy.Integer(3)) == probe.visit(sympy.Rational(1, 3)) == probe.visit(sympy.Float(0.5)) \
        == "number"
    assert Probe._dispatch[sympy.StrictLessThan] is Probe._print_Relational
    assert UnitChecker.handler(formula.PerToken) is UnitChecker.handler(formula.PerGpu) \
        is UnitChecker._print_PerUnit


def _nodes_of_every_function():
    """Each function of the formula language built with every arity it takes: its node class."""
    for name, (builder, arities) in sorted(FUNCTIONS.items()):
        for arity in sorted(arities):
            args = sympy.symbols(f"a0:{arity}") if arity > 1 else (sympy.Symbol("a0"),)
            yield f"{name}/{arity}", type(builder(*args))


def _printer_has(printer, kind) -> bool:
    return any(hasattr(printer, "_print_" + k.__name__) or k.__name__ in getattr(printer, "known_functions", {})
               for k in kind.__mro__)


@pytest.mark.parametrize(("function", "kind"), sorted(set(_nodes_of_every_function()), key=str))
def test_every_function_has_an_entry_in_every_backend(function, kind):
    for backend in (Numeric, Exact, Symbolic, UnitChecker):
        assert backend.supports(kind), f"{function}: {kind.__name__} has no entry in {backend.__name__}"
    assert _printer_has(ExcelPrinter, kind), f"{function}: {kind.__name__} has no Excel form"
    assert hasattr(kind, "_latex") or _printer_has(LatexPrinter, kind), f"{function}: no LaTeX form"


def test_scalar_and_batch_agree_bit_for_bit_on_every_function():
    """The same walker in both shapes: each batch member equals the scalar evaluation exactly."""
    xs = [0.3, 1.7, 7.000000000000001, 12.0]
    oks = [1.0, 1.0, 0.0, 1.0]
    texts = ["ceil(t.x * 3 / 7)", "floor(t.x / 0.1)", "abs(t.x - 5)", "max(t.x, 2)", "min(t.x, 2, 3)", "sum(t.x)",
             "max(t.x)", "min(t.x)", "if(t.x > 1, t.x, 0)", "max_before_failure(t.x, t.ok)",
             "min_failure(t.x, t.ok)", "per_token(t.x)", "per_gpu(t.x)", "erlang_c(4, t.x / 4)",
             "poisson_exceeds(3, t.x)", "t.x ** 2 + 1 >= 3 and not t.x < 1 or t.x == 12"]
    for text, scale in itertools.product(texts, (1.0, 1.5)):
        expr = parse(text).expr
        column = np.array(xs) * scale
        scalar = np.asarray(Numeric({"t.x": column, "t.ok": np.array(oks)}).visit(expr), dtype=float)
        batch = Numeric({"t.x": np.vstack([column, column * 2, column]), "t.ok": np.array([oks])},
                        batch=True).visit(expr)
        row = np.broadcast_to(np.asarray(batch, dtype=float), (3, len(xs)) if scalar.ndim else (3, 1))
        assert np.array_equal(row[0], np.broadcast_to(scalar, row[0].shape)), text
        assert np.array_equal(row[2], row[0]), text
