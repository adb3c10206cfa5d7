"""Unit folding: a formula over base-unit values rewritten over the display magnitudes cells hold.

The engine evaluates a formula in *base units* (bytes, seconds, USD…); a
workbook cell holds the magnitude in its *display unit* (GiB, ms, USD/h…).
:func:`fold_units` rewrites the expression so that it reads display-unit
magnitudes and yields the display-unit magnitude, folding the unit factors
into as few constants as it can (``kv_token_capacity`` becomes
``floor(kv_pool/kv_bytes_per_token*1048576)``). The result is still a sympy
expression over the same symbols, so the engine's own walker can evaluate it
(the tests do); :mod:`.formulaprinter` prints it.

The folder walks the tree by sympy's printer convention, like every other
walk of a formula tree: a ``_print_<Node>`` method looked up along the node
class's MRO, :meth:`UnitFolder.emptyPrinter` for a node it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import sympy
from sympy.printing.printer import Printer

from capplan.errors import CapplanError
from capplan.language import units
from capplan.language.walker import is_negation

def exact_factor(value: float) -> sympy.Rational:
    """The rational a float unit factor stands for (0.001 -> 1/1000, 1/3600 -> 1/3600)."""
    best = units.exact_ratio(value)
    return sympy.Rational(best.numerator, best.denominator)


def _is_terminating(q: sympy.Rational) -> bool:
    d = int(q.q)
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _decimal_text(q: sympy.Rational) -> str | None:
    """Exact decimal text of a rational with at most 15 significant digits."""
    if not _is_terminating(q):
        return None
    text = format(Fraction(int(q.p), int(q.q)).__float__(), ".15g")
    if Fraction(text) != Fraction(int(q.p), int(q.q)):
        return None
    return text


def factor_expr(k) -> sympy.Expr | None:
    """A constant factor as the node a reader understands best.

    Integers multiply (``*1048576``); reciprocals of integers divide
    (``/3600``); short exact decimals multiply (``*1.073741824``) or divide;
    anything else is a multiplication by ``p/q``. ``None`` for 1.
    """
    if k == 1:
        return None
    if isinstance(k, sympy.Rational):
        if k.q == 1:
            return sympy.Integer(k.p)
        if k.p == 1:
            return sympy.Pow(sympy.Integer(k.q), -1, evaluate=False)
        inv = 1 / k
        text = _decimal_text(k)
        inv_text = _decimal_text(inv)
        if inv.q == 1:
            return sympy.Pow(sympy.Integer(inv.p), -1, evaluate=False)
        if text is not None and (inv_text is None or len(text) <= len(inv_text)):
            return sympy.Float(text, 17) if "." in text or "e" in text else sympy.Integer(int(text))
        if inv_text is not None:
            return sympy.Pow(sympy.Float(inv_text, 17), -1, evaluate=False)
        return sympy.Mul(sympy.Integer(k.p), sympy.Pow(sympy.Integer(k.q), -1, evaluate=False), evaluate=False)
    return sympy.Float(float(k), 17)


def _times(expr, k):
    """expr * k, with k folded into an existing product where it reads naturally."""
    f = factor_expr(k)
    if f is None:
        return expr
    extra = f.args if (isinstance(f, sympy.Mul)) else (f,)
    if isinstance(expr, sympy.Mul) and not is_negation(expr):
        return sympy.Mul(*expr.args, *extra, evaluate=False)
    return sympy.Mul(expr, *extra, evaluate=False)


@dataclass(frozen=True)
class _Folded:
    expr: sympy.Basic
    scale: sympy.Expr          # base value = scale * value(expr)


class UnitFolder(Printer):
    """Rewrite an expression over display magnitudes (see :func:`fold_units`).

    ``_print(expr, want=scale)`` gives the :class:`_Folded` form of a node;
    ``want`` is the scale the caller would like the result in (it saves a
    factor where the node can take any scale: a sum, a selection).
    """

    def __init__(self, factor_of: Callable[[str], sympy.Rational]):
        super().__init__()
        self.factor_of = factor_of

    def emptyPrinter(self, expr):
        raise CapplanError(f"formula element '{expr}' ({type(expr).__name__}) cannot be compiled to Excel")

    def _print_Number(self, expr, want=None):
        return _Folded(expr, sympy.Integer(1))

    _print_BooleanAtom = _print_Number

    def _print_Symbol(self, expr, want=None):
        return _Folded(expr, self.factor_of(expr.name))

    def _print_Relational(self, expr, want=None):
        parts, _ = self._common([self._print(a) for a in expr.args], None)
        return _Folded(self._rebuild(expr, parts), sympy.Integer(1))

    @staticmethod
    def _rebuild(expr, args):
        if all(a is b for a, b in zip(args, expr.args)):
            return expr
        try:
            return expr.func(*args, evaluate=False)
        except TypeError:
            return expr.func(*args)

    @staticmethod
    def _common(folded: list[_Folded], want) -> tuple[list, sympy.Expr]:
        """Bring terms to one scale, choosing the one that needs fewest factors."""
        scales = [f.scale for f in folded]
        candidates = list(dict.fromkeys(scales + ([want] if want is not None else [])))

        def cost(s):
            return sum(1 for c in scales if c != s) + (1 if want is not None and s != want else 0)

        best = min(candidates, key=lambda s: (cost(s), candidates.index(s)))
        return [f.expr if f.scale == best else _times(f.expr, f.scale / best) for f in folded], best

    def _same_scale(self, expr, want):
        parts, scale = self._common([self._print(a, want=want) for a in expr.args], want)
        return _Folded(self._rebuild(expr, parts), scale)

    def _base(self, expr) -> sympy.Basic:
        """The expression rescaled to base units (for floor/ceil and exponents)."""
        f = self._print(expr, want=sympy.Integer(1))
        return _times(f.expr, f.scale)

    def _print_Add(self, expr, want=None):
        return self._same_scale(expr, want)

    def _print_Mul(self, expr, want=None):
        parts = [self._print(a) for a in expr.args]
        scale = sympy.Integer(1)
        for p in parts:
            scale = scale * p.scale
        return _Folded(self._rebuild(expr, [p.expr for p in parts]), scale)

    def _print_Pow(self, expr, want=None):
        base, exponent = expr.args
        if isinstance(exponent, sympy.Number):
            b = self._print(base)
            scale = b.scale ** exponent
            if not isinstance(scale, sympy.Rational):
                scale = sympy.Float(float(scale), 17)
            return _Folded(self._rebuild(expr, [b.expr, exponent]), scale)
        return _Folded(self._rebuild(expr, [self._base(base), self._base(exponent)]), sympy.Integer(1))

    def _rounding(self, expr, want=None):
        return _Folded(self._rebuild(expr, [self._base(expr.args[0])]), sympy.Integer(1))

    _print_ceiling = _print_floor = _rounding

    def _print_Abs(self, expr, want=None):
        return self._same_scale(expr, want)

    _print_Max = _print_Min = _print_Abs

    def _print_Piecewise(self, expr, want=None):
        values = [self._print(v, want=want) for v, _ in expr.args]
        conds = [c if isinstance(c, sympy.logic.boolalg.BooleanAtom) else self._print(c).expr for _, c in expr.args]
        exprs, scale = self._common(values, want)
        if all(a is b for a, b in zip(exprs, [v for v, _ in expr.args])) and \
                all(a is b for a, b in zip(conds, [c for _, c in expr.args])):
            return _Folded(expr, scale)
        return _Folded(sympy.Piecewise(*zip(exprs, conds), evaluate=False), scale)

    def _logic(self, expr, want=None):
        return _Folded(self._rebuild(expr, [self._print(a).expr for a in expr.args]), sympy.Integer(1))

    _print_And = _print_Or = _print_Not = _logic

    def _print_TableSum(self, expr, want=None):
        inner = self._print(expr.args[0], want=want)
        return _Folded(self._rebuild(expr, [inner.expr]), inner.scale)

    _print_TableMax = _print_TableMin = _print_TableSum

    def _print_MaxBeforeFailure(self, expr, want=None):
        x = self._print(expr.args[0], want=want)
        ok = self._print(expr.args[1]).expr
        return _Folded(self._rebuild(expr, [x.expr, ok]), x.scale)

    _print_MinFailure = _print_MaxBeforeFailure

    def _print_Nominal(self, expr, want=None):
        inner = self._print(expr.args[0], want=want)
        return _Folded(self._rebuild(expr, [inner.expr]), inner.scale)

    _print_PerToken = _print_PerGpu = _print_Nominal      # a unit annotation: same magnitude in base units

    def _print_ErlangC(self, expr, want=None):
        """A queueing function reads dimensionless counts and gives a probability: no unit to fold."""
        return _Folded(self._rebuild(expr, [self._base(a) for a in expr.args]), sympy.Integer(1))

    _print_PoissonExceeds = _print_ErlangC

    def _print_RowWindow(self, expr, want=None):
        """A column read in other rows keeps its scale; the count of rows is a plain number."""
        x = self._print(expr.args[0], want=want)
        return _Folded(self._rebuild(expr, [x.expr, self._base(expr.args[1])]), x.scale)

    _print_Lag = _print_WindowMax = _print_WindowMin = _print_KthLargest = _print_RowWindow

    def _print_SumAbove(self, expr, want=None):
        return self._same_scale(expr, want)

    _print_log = _rounding          # ln of a number: read in base units, a plain number out


def fold_units(expr, factor_of: Callable[[str], sympy.Rational], target) -> sympy.Basic:
    """``expr`` (over base-unit values) rewritten over display-unit magnitudes.

    ``factor_of(name)`` is the exact number of base units in one display unit
    of that symbol; ``target`` the same for the result. Evaluating the result
    with display magnitudes gives the display magnitude of the quantity.
    """
    target = sympy.nsimplify(target) if not isinstance(target, sympy.Rational) else target
    folded = UnitFolder(factor_of)._print(expr, want=target)
    return _times(folded.expr, folded.scale / target)
