"""The flip search's exact functions of several decisions (engine/exact.py ``compile_shared``) and
its interval enclosures (analysis/flips/enclosures.py) compute a subtree the decisions share once per value
of the variable, and give what they give one by one: the same values, the same failures."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

from capplan.analysis.flips.enclosures import _enclosure, _Unbounded
from capplan.engine import exact
from capplan.engine.exact import Undefined, compile_exact, compile_shared

x = sympy.Symbol("x", real=True)
GPUS = sympy.ceiling(6 / x)
DECISIONS = [GPUS, GPUS + 1, sympy.ceiling(GPUS / 8 + sympy.Rational(1, 8)),
             sympy.And(sympy.Lt(3 / x, GPUS, evaluate=False), sympy.Ge(x, 2, evaluate=False)),
             1 / (x - 3), sympy.Integer(4), True]


def _each(functions, v):
    out = []
    for f in functions:
        try:
            out.append(f(v))
        except Undefined:
            out.append("undefined")
    return out


def test_the_shared_functions_give_what_each_gives_alone(monkeypatch):
    calls = []
    power = exact._power
    monkeypatch.setattr(exact, "_power", lambda b, e: calls.append(b) or power(b, e))
    shared = compile_shared(DECISIONS, x)
    alone = [compile_exact(d, x) for d in DECISIONS]
    for v in (Fraction(1, 3), Fraction(3), Fraction(3), Fraction(5, 2), Fraction(7)):
        calls.clear()
        got = _each(shared, v)
        once = len(calls)
        assert got == _each(alone, v)
        assert once < len(calls) - once                  # 6/x once for four decisions, not four times
    assert _each(shared, Fraction(3))[4] == "undefined"      # a failure is met again, not kept


def test_an_enclosure_kept_for_one_window_is_the_windows_own():
    enclosures = [_enclosure(d, x) for d in DECISIONS[:4]]
    for a, b in ((Fraction(1), Fraction(2)), (Fraction(5, 2), Fraction(4)), (Fraction(1), Fraction(2))):
        first = [f(a, b) for f in enclosures]
        assert [f(a, b) for f in enclosures] == first
        _enclosure.cache_clear()
        assert [_enclosure(d, x)(Fraction(a), Fraction(b)) for d in DECISIONS[:4]] == first
        enclosures = [_enclosure(d, x) for d in DECISIONS[:4]]
    with pytest.raises(_Unbounded):
        _enclosure(1 / (x - 3), x)(Fraction(2), Fraction(4))


def test_a_power_of_an_unchosen_branchs_nan_is_nan():
    """An if() branch not chosen may hold a division by zero's NaN (a dense model's 1 - k/E with
    E = 0, raised to the decode batch): its power is NaN too, not an error of Fraction(nan)."""
    import math

    assert math.isnan(exact._Numbers.power(math.nan, Fraction(1024)))
    assert math.isnan(exact._Numbers.power(Fraction(15, 16), math.nan))
    assert exact._Numbers.power(Fraction(15, 16), Fraction(2)) == Fraction(225, 256)


def test_one_to_a_power_of_the_symbol_is_one_so_a_dense_models_flips_keep_their_closed_form():
    """A dense model's expert share, if(E > 0, 1 - (1 - k / max(E, 1))^B, 1) with k = E = 0, raised to a
    decode batch B the flip variable moves: the branch not taken is 1 - 1^B, whose power must not cost
    the closed form (it did: the search fell back to bracketing the estimate's λ* against max_num_seqs)."""
    x = sympy.Symbol("x")
    assert exact._Symbols.power(Fraction(1), x) == 1
    assert exact._Symbols.power(math.nan, x) is sympy.nan
    assert exact._Symbols.power(x, Fraction(2)) == x ** 2
    with pytest.raises(exact.NotClosedForm):
        exact._Symbols.power(Fraction(15, 16), x)
