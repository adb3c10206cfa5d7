"""Compile a formula's sympy expression into Excel formula text.

The engine evaluates a formula in *base units* (bytes, seconds, USD…); a
workbook cell holds the magnitude in its *display unit* (GiB, ms, USD/h…).
Compilation therefore has two steps:

1. :func:`fold_units` rewrites the expression so that it reads display-unit
   magnitudes and yields the display-unit magnitude, folding the unit
   factors into as few constants as it can (``kv_token_capacity`` becomes
   ``floor(kv_pool/kv_bytes_per_token*1048576)``). The result is still a
   sympy expression over the same symbols, so the engine's own walker can
   evaluate it (the tests do).
2. :class:`ExcelPrinter` prints that expression as Excel 2010 formula text
   over defined names: ``=CEILING(peak_arrival_rate/safe_rate_per_replica,1)``.

Printing rules that differ from Python:

* unary minus binds tighter than ``^`` in Excel (``-x^2`` is ``(-x)^2``),
  so a negated power is printed ``-(x^2)``; ``^`` is left-associative, so a
  power in an exponent or a base is parenthesised;
* table functions (``sum``, ``max``, ``max_before_failure`` …) read whole
  columns as ranges; their row-wise arguments are evaluated as arrays inside
  ``SUMPRODUCT``, the one Excel 2010 function that does so without
  Ctrl+Shift+Enter; ``IF``/``MAX``/``AND`` do not work element-wise there, so
  they become exact arithmetic selections;
* the text must mean the same in every engine, not only in Excel and
  LibreOffice: Gnumeric hands ``MIN``/``MAX`` inside ``SUMPRODUCT`` one
  element (implicit intersection, ``#VALUE!``), so the smallest or largest
  element of an array is ``SMALL``/``LARGE(array,1)``, whose first argument
  every engine evaluates as an array, and ``abs`` of an array an exact
  selection (Gnumeric applies any scalar function, ABS, CEILING, to one
  element there; ``ceil``/``floor`` inside a table function have no such
  replacement and stay Excel and LibreOffice only); ``floor`` is ``INT``
  (``FLOOR(x,1)`` of a negative x is #NUM! in Gnumeric and Excel 2007);
  Excel and Gnumeric hold
  ``TRUE<>0`` and ``FALSE<>0`` (a boolean never equals a number) where
  LibreOffice compares 1 and 0, so a truth value is made a number (``--``)
  before it is compared with 0;
* only functions Excel 2007 knows are emitted (no ``_xlfn.`` needed): no
  MAXIFS, IFS, LET, XLOOKUP, no dynamic arrays, no structured references.

:func:`lint_formula` checks generated text for what LibreOffice would forgive
but Excel would not (unbalanced parentheses, unprefixed new functions, names
that read as cell addresses, unknown names).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Protocol

import sympy
from sympy.printing.printer import Printer

from capplan.language import units
from capplan.language.walker import RELATIONS, is_negation, is_reciprocal
from capplan.errors import CapplanError
from capplan.rendering.workbook.functions import FUNCTIONS

# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_R1C1 = re.compile(r"^[Rr]\[?-?\d*\]?([Cc]\[?-?\d*\]?)?$|^[Cc]\[?-?\d*\]?$")
_NAME_OK = re.compile(r"^[^\W\d][\w.]*$", re.UNICODE)
MAX_COLUMN = 16384
MAX_ROW = 1048576


def column_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def looks_like_cell(name: str) -> bool:
    """Whether Excel (A1 or R1C1 notation) would read ``name`` as a cell address."""
    match = _A1.match(name)
    if match and column_number(match.group(1)) <= MAX_COLUMN and 0 < int(match.group(2)) <= MAX_ROW:
        return True
    return bool(_R1C1.match(name))


def _reserved(name: str) -> bool:
    return name.upper() in FUNCTIONS or name.upper() in ("TRUE", "FALSE") or name.lower().startswith("_xl")


def excel_name(name: str, taken: set[str] | None = None) -> str:
    """A valid Excel defined name for a canonical quantity name.

    ``deployments.nodes`` -> ``deployments_nodes``; a name Excel would read as
    a cell (``kv1``, ``R1C1``, ``c``) or as a function/boolean gets a trailing
    underscore (``kv1_``); ``taken`` (lower-case names already used) keeps it
    unique.
    """
    text = re.sub(r"[^\w.]", "_", name.replace(".", "_"), flags=re.UNICODE)
    if not text or not _NAME_OK.match(text):
        text = "_" + text
    while looks_like_cell(text) or _reserved(text) or (taken is not None and text.lower() in taken):
        text += "_"
    if len(text) > 255:
        raise CapplanError(f"quantity name '{name}' is too long for an Excel name")
    if taken is not None:
        taken.add(text.lower())
    return text


# ---------------------------------------------------------------------------
# Unit folding
# ---------------------------------------------------------------------------

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


class _Folder:
    """Rewrite an expression over display magnitudes (see :func:`fold_units`)."""

    def __init__(self, factor_of: Callable[[str], sympy.Rational]):
        self.factor_of = factor_of

    def fold(self, expr, want=None) -> _Folded:
        if isinstance(expr, (sympy.Number, sympy.logic.boolalg.BooleanAtom)):
            return _Folded(expr, sympy.Integer(1))
        if isinstance(expr, sympy.Symbol):
            return _Folded(expr, self.factor_of(expr.name))
        if type(expr) in RELATIONS:
            parts, _ = self._common([self.fold(a) for a in expr.args], None)
            return _Folded(self._rebuild(expr, parts), sympy.Integer(1))
        method = getattr(self, "f_" + type(expr).__name__, None)
        if method is None:
            raise CapplanError(f"formula element '{expr}' ({type(expr).__name__}) cannot be compiled to Excel")
        return method(expr, want)

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
        parts, scale = self._common([self.fold(a, want) for a in expr.args], want)
        return _Folded(self._rebuild(expr, parts), scale)

    def _base(self, expr) -> sympy.Basic:
        """The expression rescaled to base units (for floor/ceil and exponents)."""
        f = self.fold(expr, sympy.Integer(1))
        return _times(f.expr, f.scale)

    def f_Add(self, expr, want):
        return self._same_scale(expr, want)

    def f_Mul(self, expr, want):
        parts = [self.fold(a) for a in expr.args]
        scale = sympy.Integer(1)
        for p in parts:
            scale = scale * p.scale
        return _Folded(self._rebuild(expr, [p.expr for p in parts]), scale)

    def f_Pow(self, expr, want):
        base, exponent = expr.args
        if isinstance(exponent, sympy.Number):
            b = self.fold(base)
            scale = b.scale ** exponent
            if not isinstance(scale, sympy.Rational):
                scale = sympy.Float(float(scale), 17)
            return _Folded(self._rebuild(expr, [b.expr, exponent]), scale)
        return _Folded(self._rebuild(expr, [self._base(base), self._base(exponent)]), sympy.Integer(1))

    def _rounding(self, expr, want):
        return _Folded(self._rebuild(expr, [self._base(expr.args[0])]), sympy.Integer(1))

    f_ceiling = f_floor = _rounding

    def f_Abs(self, expr, want):
        return self._same_scale(expr, want)

    f_Max = f_Min = f_Abs

    def f_Piecewise(self, expr, want):
        values = [self.fold(v, want) for v, _ in expr.args]
        conds = [c if isinstance(c, sympy.logic.boolalg.BooleanAtom) else self.fold(c).expr for _, c in expr.args]
        exprs, scale = self._common(values, want)
        if all(a is b for a, b in zip(exprs, [v for v, _ in expr.args])) and \
                all(a is b for a, b in zip(conds, [c for _, c in expr.args])):
            return _Folded(expr, scale)
        return _Folded(sympy.Piecewise(*zip(exprs, conds), evaluate=False), scale)

    def _logic(self, expr, want):
        return _Folded(self._rebuild(expr, [self.fold(a).expr for a in expr.args]), sympy.Integer(1))

    f_And = f_Or = f_Not = _logic

    def f_TableSum(self, expr, want):
        inner = self.fold(expr.args[0], want)
        return _Folded(self._rebuild(expr, [inner.expr]), inner.scale)

    f_TableMax = f_TableMin = f_TableSum

    def f_MaxBeforeFailure(self, expr, want):
        x = self.fold(expr.args[0], want)
        ok = self.fold(expr.args[1]).expr
        return _Folded(self._rebuild(expr, [x.expr, ok]), x.scale)

    f_MinFailure = f_MaxBeforeFailure

    def f_Nominal(self, expr, want):
        inner = self.fold(expr.args[0], want)
        return _Folded(self._rebuild(expr, [inner.expr]), inner.scale)

    f_PerToken = f_PerGpu = f_Nominal      # a unit annotation: same magnitude in base units

    def f_ErlangC(self, expr, want):
        """A queueing function reads dimensionless counts and gives a probability: no unit to fold."""
        return _Folded(self._rebuild(expr, [self._base(a) for a in expr.args]), sympy.Integer(1))

    f_PoissonExceeds = f_ErlangC


def fold_units(expr, factor_of: Callable[[str], sympy.Rational], target) -> sympy.Basic:
    """``expr`` (over base-unit values) rewritten over display-unit magnitudes.

    ``factor_of(name)`` is the exact number of base units in one display unit
    of that symbol; ``target`` the same for the result. Evaluating the result
    with display magnitudes gives the display magnitude of the quantity.
    """
    target = sympy.nsimplify(target) if not isinstance(target, sympy.Rational) else target
    folded = _Folder(factor_of).fold(expr, target)
    return _times(folded.expr, folded.scale / target)


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------

class Refs(Protocol):
    """How the printer names what a formula reads."""

    def scalar(self, name: str) -> str: ...          # a scalar quantity's cell (a defined name)
    def column(self, name: str) -> str: ...          # a table column's whole range
    def cell(self, name: str) -> str | None: ...     # this row's cell of a column (row formulas)
    def is_bool(self, name: str) -> bool: ...
    # nominal(x): x on the nominal scenario's sheet (scalar, this row's cell, or the
    # whole column when ``array``); None on the nominal sheet itself, where it is x
    def nominal(self, name: str, array: bool) -> str | None: ...


ATOM, NEG, POW, MUL, ADD, REL = 100, 90, 80, 70, 60, 40

EXCEL_RELATIONS = {"<=": "<=", "<": "<", ">=": ">=", ">": ">", "==": "=", "!=": "<>"}


def format_number(value: float) -> str:
    if not math.isfinite(value):
        raise CapplanError(f"the number {value} cannot be written in an Excel formula")
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(float(value))
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}E{sign}{abs(int(exponent)):02d}"
    return text


class ExcelPrinter(Printer):
    """Print a (unit-folded) formula expression as Excel 2010 formula text."""

    printmethod = "_excel"
    known_functions = {"ceiling": "CEILING", "floor": "INT", "Abs": "ABS", "Max": "MAX", "Min": "MIN",
                       "ErlangC": "POISSON", "PoissonExceeds": "GAMMADIST"}

    def __init__(self, refs: Refs):
        super().__init__()
        self.refs = refs
        self.array = False          # inside a table function: columns are ranges

    def doprint(self, expr) -> str:
        return "=" + self._print(expr)

    def emptyPrinter(self, expr):
        raise CapplanError(f"formula element '{expr}' ({type(expr).__name__}) cannot be compiled to Excel")

    # -- precedence ----------------------------------------------------------
    def prec(self, expr) -> int:
        if isinstance(expr, sympy.Number):
            if expr < 0:
                return NEG
            if isinstance(expr, sympy.Rational) and expr.q != 1:
                return MUL
            return ATOM
        if type(expr) in RELATIONS:
            return REL
        if isinstance(expr, sympy.Add):
            return ADD
        if isinstance(expr, sympy.Mul):
            neg, _ = self._split_negative(expr)
            return NEG if neg and len(expr.args) == 2 else MUL
        if isinstance(expr, sympy.Pow):
            return MUL if is_reciprocal(expr) else POW
        if self.array and isinstance(expr, sympy.And):
            return REL
        return ATOM

    def paren(self, expr, level: int) -> str:
        text = self._print(expr)
        return f"({text})" if self.prec(expr) < level else text

    @staticmethod
    def _split_negative(term):
        """(True, -term) when a term reads as a subtraction, else (False, term)."""
        if isinstance(term, sympy.Number) and term < 0:
            return True, -term
        if is_negation(term):
            return True, term.args[1]
        if isinstance(term, sympy.Mul) and isinstance(term.args[0], sympy.Number) and term.args[0] < 0:
            rest = term.args[1:]
            coeff = -term.args[0]
            args = rest if coeff == 1 else (coeff, *rest)
            return True, args[0] if len(args) == 1 else sympy.Mul(*args, evaluate=False)
        return False, term

    # -- atoms ---------------------------------------------------------------
    def _print_Symbol(self, expr):
        name = expr.name
        if "." not in name:
            return self.refs.scalar(name)
        if self.array:
            return self.refs.column(name)
        cell = self.refs.cell(name)
        if cell is None:
            raise CapplanError(f"column '{name}' is used outside a table function and outside its table")
        return cell

    def _print_Integer(self, expr):
        return str(int(expr))

    def _print_Rational(self, expr):
        return f"{int(expr.p)}/{int(expr.q)}"

    def _print_Float(self, expr):
        return format_number(float(expr))

    def _print_BooleanTrue(self, expr):
        return "TRUE"

    def _print_BooleanFalse(self, expr):
        return "FALSE"

    # -- arithmetic ----------------------------------------------------------
    def _print_Add(self, expr):
        out = []
        for i, term in enumerate(expr.args):
            neg, pos = self._split_negative(term)
            if i == 0:
                out.append("-" + self.paren(pos, ATOM) if neg else self.paren(term, ADD))
            elif neg:
                out.append("-" + self.paren(pos, MUL))
            else:
                out.append("+" + self.paren(term, MUL))
        return "".join(out)

    def _print_Mul(self, expr):
        neg, pos = self._split_negative(expr)
        if neg and isinstance(expr.args[0], sympy.Number) and expr.args[0] == -1:
            # -a*b reads as (-a)*b in Excel, which is the same number; but -a^2*b
            # would be (-a)^2*b, so anything but a plain first factor is bracketed
            if isinstance(pos, sympy.Mul) and self.prec(pos) == MUL and self.prec(pos.args[0]) == ATOM \
                    and not is_reciprocal(pos.args[0]):
                return "-" + self._print(pos)
            return "-" + self.paren(pos, ATOM)
        out = []
        for i, factor in enumerate(expr.args):
            if is_reciprocal(factor):
                denominator = factor.args[0]
                text = self._print(denominator)
                if self.prec(denominator) <= MUL or self.prec(denominator) == NEG:
                    text = f"({text})"
                out.append(("1/" if i == 0 else "/") + text)
            elif i == 0:
                out.append(self.paren(factor, MUL) if self.prec(factor) != NEG else self._print(factor))
            else:
                text = self._print(factor)
                out.append("*" + (f"({text})" if self.prec(factor) < MUL or self.prec(factor) == NEG else text))
        return "".join(out)

    def _print_Pow(self, expr):
        base, exponent = expr.args
        if exponent == 0:            # x^0 is 1, as the engine has it; Excel and Gnumeric make 0^0 #NUM!
            return "1"
        if is_reciprocal(expr):
            return "1/" + self.paren(base, POW)
        b = self._print(base)
        if self.prec(base) < ATOM:
            b = f"({b})"
        e = self._print(exponent)
        if self.prec(exponent) < ATOM:
            e = f"({e})"
        return f"{b}^{e}"

    def _print_Relational(self, expr):
        op = EXCEL_RELATIONS[RELATIONS[type(expr)]]
        lhs, rhs = (self.paren(a, ADD) for a in expr.args)
        return f"{lhs}{op}{rhs}"

    # -- functions -------------------------------------------------------------
    def _call(self, name, *args) -> str:
        return f"{name}({','.join(args)})"

    def _print_ceiling(self, expr):
        return self._call("CEILING", self._print(expr.args[0]), "1")

    def _print_floor(self, expr):
        # INT, not FLOOR(x,1): Gnumeric and Excel 2007 give #NUM! for FLOOR of a negative x
        # (a fleet smaller than the failed GPUs); INT rounds down in every engine
        return self._call("INT", self._print(expr.args[0]))

    def _print_Abs(self, expr):
        arg = self._print(expr.args[0])
        if self.array:       # Gnumeric applies ABS to one element of an array outside an array formula
            return "(" + self._select(f"({arg})>=0", arg, f"-({arg})") + ")"
        return self._call("ABS", arg)

    def _select(self, cond: str, a: str, b: str) -> str:
        """Element-wise IF as exact arithmetic (IF does not work element-wise in SUMPRODUCT)."""
        return f"({cond})*({a})+(1-({cond}))*({b})"

    def _extremum(self, expr, name, op):
        args = [self._print(a) for a in expr.args]
        if not self.array:
            return self._call(name, *args)
        # a truth value made a number first: Excel and Gnumeric rank TRUE and FALSE above every number
        args = [f"(--({text}))" if isinstance(a, sympy.logic.boolalg.Boolean) else text
                for a, text in zip(expr.args, args)]
        text = args[0]
        for other in args[1:]:
            text = "(" + self._select(f"({text}){op}({other})", text, other) + ")"
        return text

    def _print_Max(self, expr):
        return self._extremum(expr, "MAX", ">=")

    def _print_Min(self, expr):
        return self._extremum(expr, "MIN", "<=")

    def _print_Piecewise(self, expr):
        pieces = list(expr.args)
        text = None
        if pieces[-1][1] == sympy.true:
            text = self._print(pieces.pop()[0])
        else:
            text = "NA()"
        for value, cond in reversed(pieces):
            c, v = self._print(cond), self._print(value)
            text = f"({self._select(c, v, text)})" if self.array else self._call("IF", c, v, text)
        return text

    def _print_And(self, expr):
        args = [self._print(a) for a in expr.args]
        if self.array:
            return "(" + "*".join(f"({a})" for a in args) + "<>0)"
        return self._call("AND", *args)

    def _print_Or(self, expr):
        args = [self._print(a) for a in expr.args]
        if self.array:
            return "(" + "+".join(f"(--({a})<>0)" for a in args) + ">0)"
        return self._call("OR", *args)

    def _print_Not(self, expr):
        arg = self._print(expr.args[0])
        return f"(--({arg})=0)" if self.array else self._call("NOT", arg)

    def _print_Nominal(self, expr):
        arg = expr.args[0]
        if not isinstance(arg, sympy.Symbol):
            raise CapplanError(f"nominal() takes a quantity or column name, got '{arg}'")
        ref = getattr(self.refs, "nominal", lambda name, array: None)(arg.name, self.array)
        return self._print(arg) if ref is None else ref

    def _print_PerUnit(self, expr):
        return self._print(expr.args[0])      # a workbook cell has no unit to divide

    _print_PerToken = _print_PerGpu = _print_PerUnit

    # -- queueing functions (Excel 2007's POISSON and GAMMADIST; LibreOffice and Gnumeric have both) --
    def _print_ErlangC(self, expr):
        """C(c, a) = P / (P + (1 - a/c)·F) with P = POISSON(c, a, FALSE), F = POISSON(c-1, a, TRUE)
        (the Erlang-C sum divided through by e^a·a^c/c!); 1 when a ≥ c, as the engine has it."""
        c, a = expr.args
        cs, as_ = self.paren(c, ADD), self.paren(a, ADD)
        pmf = self._call("POISSON", self._print(c), self._print(a), "FALSE")
        cdf = self._call("POISSON", f"{cs}-1", self._print(a), "TRUE")
        waits = f"{pmf}/({pmf}+(1-{self.paren(a, MUL)}/{self.paren(c, POW)})*{cdf})"
        unstable = f"{as_}>={cs}"
        return f"({self._select(unstable, '1', waits)})" if self.array else self._call("IF", unstable, "1", waits)

    def _print_PoissonExceeds(self, expr):
        """P(N > k) = P(⌊k⌋+1, m), the regularized lower incomplete gamma: GAMMADIST(m, ⌊k⌋+1, 1, TRUE),
        accurate in the far tail where 1 - POISSON(k, m, TRUE) would round to 0."""
        k, m = expr.args
        return self._call("GAMMADIST", self._print(m), self._call("FLOOR", self._print(k), "1") + "+1", "1", "TRUE")

    # -- table functions -------------------------------------------------------
    def is_bool(self, expr) -> bool:
        if isinstance(expr, sympy.Symbol):
            return self.refs.is_bool(expr.name)
        return type(expr) in RELATIONS or isinstance(expr, (sympy.And, sympy.Or, sympy.Not))

    @staticmethod
    def _column(expr) -> bool:
        return isinstance(expr, sympy.Symbol) and "." in expr.name

    def _in_array(self, expr, numeric: bool = True) -> str:
        saved, self.array = self.array, True
        try:
            text = self._print(expr)
        finally:
            self.array = saved
        if numeric and self.is_bool(expr):
            return f"--({text})" if not self._column(expr) else f"--{text}"
        return text

    def _print_TableSum(self, expr):
        arg = expr.args[0]
        numeric_col = self._column(arg) and not self.is_bool(arg)
        if numeric_col:
            return self._call("SUM", self._in_array(arg))
        # always one array argument, never SUMPRODUCT(a,b): Gnumeric sums the two forms
        # differently (in long double), so sum(w*x) and sum(w*(32*x))/32 would differ
        # in the last bit and a floor() of their ratio would lose 1
        return self._call("SUMPRODUCT", self._in_array(arg))

    def _array_extremum(self, name: str, array: str) -> str:
        """MIN or MAX of an array expression: ``SUMPRODUCT(SMALL(array,1))``.

        SUMPRODUCT makes Excel and LibreOffice evaluate the array without
        Ctrl+Shift+Enter; SMALL/LARGE's first argument makes Gnumeric do so
        (MIN/MAX there would see one element, by implicit intersection).
        """
        return self._call("SUMPRODUCT", self._call({"MIN": "SMALL", "MAX": "LARGE"}[name], array, "1"))

    def _table_extremum(self, expr, name):
        arg = expr.args[0]
        if self._column(arg) and not self.is_bool(arg):
            return self._call(name, self._in_array(arg))
        return self._array_extremum(name, self._in_array(arg))

    def _print_TableMax(self, expr):
        return self._table_extremum(expr, "MAX")

    def _print_TableMin(self, expr):
        return self._table_extremum(expr, "MIN")

    def _failure_parts(self, expr):
        x, ok = expr.args
        if not self._column(x):
            raise CapplanError(f"{type(expr).__name__}: its first argument must be a table column in a workbook, got '{x}'")
        xs = self._in_array(x)
        oks = self._in_array(ok, numeric=False)
        if not self.is_bool(ok):
            oks = f"(({oks})<>0)"
        elif not self._column(ok):
            oks = f"({oks})"
        # the smallest failing x, or MAX(x)+1 when every row passes (exact selection)
        first_failure = self._array_extremum("MIN", f"{oks}*(MAX({xs})+1)+(1-{oks})*{xs}")
        return xs, oks, first_failure

    def _print_MaxBeforeFailure(self, expr):
        # the k-th smallest x, k = rows below the first failure; k = 0 gives #NUM!
        xs, _, first_failure = self._failure_parts(expr)
        return f"SMALL({xs},SUMPRODUCT(--({xs}<{first_failure})))"

    def _print_MinFailure(self, expr):
        xs, oks, first_failure = self._failure_parts(expr)
        return f"IF(SUMPRODUCT(1-{oks})=0,MAX({xs}),{first_failure})"


def to_excel(expr, refs: Refs) -> str:
    """Excel formula text (with the leading '=') for an already unit-folded expression."""
    return ExcelPrinter(refs).doprint(expr)


# ---------------------------------------------------------------------------
# Lint
# ---------------------------------------------------------------------------

_CELL_REF = re.compile(
    r"^(?:(?:'[^']+'|[A-Za-z_][\w.]*)!)?\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?$")
_SHEET_NAME = re.compile(r"^(?:('[^']+'|[A-Za-z_][\w.]*)!)?(.+)$")
DYNAMIC_ARRAY = {"FILTER", "SORT", "SORTBY", "UNIQUE", "SEQUENCE", "RANDARRAY", "LET", "LAMBDA",
                 "XLOOKUP", "XMATCH", "MAP", "REDUCE", "SCAN", "MAKEARRAY", "BYROW", "BYCOL",
                 "VSTACK", "HSTACK", "TOCOL", "TOROW", "TAKE", "DROP", "CHOOSECOLS", "CHOOSEROWS"}


EXCEL_MAX_FORMULA = 8192        # characters: Excel's specifications and limits
TOO_LONG = f"longer than Excel's {EXCEL_MAX_FORMULA:,} characters"

# The tokens of a formula, as the lint needs them: a function call's name and its
# parenthesis, a bracket, an operand that is a reference or a name (optionally on a
# named sheet, optionally a range), and everything else (numbers, text, errors,
# operators) as "other". tests/test_excel_printer.py checks it against openpyxl's
# tokenizer on every formula of every workbook in out/.
_TOKEN = re.compile(r"""
      (?P<text>"(?:[^"]|"")*")
    | (?P<function>[A-Za-z_][\w.]*)\(
    | (?P<operand>(?:(?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?\$?[A-Za-z_][\w.$]*(?::\$?[A-Za-z]{1,3}\$?\d+)?)
    | (?P<other>(?:\d+\.?\d*|\.\d+)(?:[Ee][+-]?\d+)?|\#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A)
                |<=|>=|<>|[-+*/^&=<>,;%\s])
    | (?P<open>[({])
    | (?P<close>[)}])
    """, re.VERBOSE)
_LOGICAL = {"TRUE", "FALSE"}


def formula_tokens(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` for each token of a formula (without its '='); kind is
    'function', 'open', 'close', 'operand' or 'other'. Raises ValueError at a
    character no token starts with."""
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise ValueError(f"unreadable at character {at + 1}: {text[at:at + 20]!r}")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "text" or (kind == "operand" and value.upper() in _LOGICAL):
            kind = "other"
        tokens.append((kind, value))
        at = match.end()
    return tokens


def lint_formula(text: str, names: set[str] | None = None) -> list[str]:
    """Problems Excel would have with a formula that LibreOffice may forgive.

    ``names``: the defined names (lower-case) the formula may use; ``None``
    skips the unknown-name check.
    """
    problems = []
    if not text.startswith("="):
        return [f"not a formula: {text}"]
    if len(text) > EXCEL_MAX_FORMULA:
        problems.append(f"{TOO_LONG}: {len(text):,} characters")
    if "[" in text:
        return problems + [f"structured reference or external link in {text}"]
    try:
        tokens = formula_tokens(text[1:])
    except ValueError as err:
        return problems + [f"{err} in {text}"]
    depth = 0
    for kind, value in tokens:
        if kind in ("function", "open"):
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth < 0:
                problems.append(f"unbalanced parentheses in {text}")
                depth = 0
        if kind == "function":
            fn = value.upper()
            bare = fn.split(".", 1)[1] if fn.startswith(("_XLFN.", "_XLWS.")) else fn
            if bare in DYNAMIC_ARRAY:
                problems.append(f"dynamic-array function {bare} in {text}")
            elif not fn.startswith(("_XLFN.", "_XLWS.", "_XLUDF.")) and fn not in FUNCTIONS:
                problems.append(f"{fn} is unknown to Excel 2007 and needs the _xlfn. prefix in {text}")
        if kind == "operand":
            if _CELL_REF.match(value):
                continue
            match = _SHEET_NAME.match(value)
            name = match.group(2)
            if match.group(1) and re.match(r"[A-Za-z]{1,3}\d", name):
                problems.append(f"sheet-qualified name '{value}' starts like a cell address "
                                f"(LibreOffice reads it as a cell) in {text}")
            elif looks_like_cell(name):
                problems.append(f"name '{name}' reads as a cell address in {text}")
            elif names is not None and name.lower() not in names:
                problems.append(f"unknown name '{name}' in {text}")
    if depth:
        problems.append(f"unbalanced parentheses in {text}")
    return problems
