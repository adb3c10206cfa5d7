"""The Excel formula printer: a unit-folded sympy expression as Excel 2010 formula text.

The text reads defined names: ``=CEILING(peak_arrival_rate/safe_rate_per_replica,1)``. Printing rules that
differ from Python:

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
"""

from __future__ import annotations

import math
from typing import Protocol

import sympy
from sympy.printing.printer import Printer

from capplan.errors import CapplanError
from capplan.language.walker import RELATIONS, is_negation, is_reciprocal

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

    # the formula language's plain functions and the Excel function each prints as
    # (floor is INT, not FLOOR(x,1): Gnumeric and Excel 2007 give #NUM! for FLOOR of a
    # negative x, a fleet smaller than the failed GPUs; INT rounds down in every engine)
    known_functions = {"ceiling": "CEILING", "floor": "INT", "Abs": "ABS", "Max": "MAX", "Min": "MIN"}

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

    def _known(self, expr, *args: str) -> str:
        """A plain function called by its Excel name (:attr:`known_functions`)."""
        return self._call(self.known_functions[type(expr).__name__], *args)

    def _plain_call(self, expr, *extra: str) -> str:
        """The call with the node's arguments printed, then ``extra`` ones (CEILING's 1)."""
        return self._known(expr, *(self._print(a) for a in expr.args), *extra)

    _print_floor = _plain_call

    def _print_ceiling(self, expr):
        return self._plain_call(expr, "1")          # CEILING's significance

    def _print_Abs(self, expr):
        arg = self._print(expr.args[0])
        if self.array:       # Gnumeric applies ABS to one element of an array outside an array formula
            return "(" + self._select(f"({arg})>=0", arg, f"-({arg})") + ")"
        return self._known(expr, arg)

    def _select(self, cond: str, a: str, b: str) -> str:
        """Element-wise IF as exact arithmetic (IF does not work element-wise in SUMPRODUCT)."""
        return f"({cond})*({a})+(1-({cond}))*({b})"

    def _extremum(self, expr, op):
        args = [self._print(a) for a in expr.args]
        if not self.array:
            return self._known(expr, *args)
        # a truth value made a number first: Excel and Gnumeric rank TRUE and FALSE above every number
        args = [f"(--({text}))" if isinstance(a, sympy.logic.boolalg.Boolean) else text
                for a, text in zip(expr.args, args)]
        text = args[0]
        for other in args[1:]:
            text = "(" + self._select(f"({text}){op}({other})", text, other) + ")"
        return text

    def _print_Max(self, expr):
        return self._extremum(expr, ">=")

    def _print_Min(self, expr):
        return self._extremum(expr, "<=")

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

    # -- row windows: earlier rows of the same table, by OFFSET from this row's cell --
    def _rows_back(self, expr) -> tuple[str, str]:
        """This row's cell of the column and the rows to reach back, no further than the first
        row (``MIN(k,row)``: before the start the first row's value holds, as the engine has it)."""
        x, k = expr.args
        row = getattr(self.refs, "row", None)
        if not self._column(x) or self.array or row is None:
            raise CapplanError(f"{type(expr).__name__}: a workbook reads earlier rows of a column of the row's "
                               f"own table, got '{x}'")
        back = f"MIN({self._print(k)},{row})"
        return self._print(x), back

    def _print_Lag(self, expr):
        cell, back = self._rows_back(expr)
        return f"OFFSET({cell},-{back},0)"

    def _window(self, expr, name: str) -> str:
        cell, back = self._rows_back(expr)
        return f"{name}(OFFSET({cell},-{back},0,{back}+1,1))"

    def _print_WindowMax(self, expr):
        return self._window(expr, "MAX")

    def _print_WindowMin(self, expr):
        return self._window(expr, "MIN")

    # -- table functions -------------------------------------------------------
    def _print_KthLargest(self, expr):
        x, k = expr.args
        if self._column(x) and not self.is_bool(x):
            return self._call("LARGE", self._in_array(x), self._print(k))
        return self._call("SUMPRODUCT", self._call("LARGE", self._in_array(x), self._print(k)))

    def _print_SumAbove(self, expr):
        """Σ max(x − level, 0): SUMPRODUCT of an exact selection, the level read in this row."""
        x, level = expr.args
        if not self._column(x):
            raise CapplanError(f"sum_above: its first argument must be a table column in a workbook, got '{x}'")
        xs, lv = self._in_array(x), self.paren(level, ATOM)
        return self._call("SUMPRODUCT", f"(--({xs}>{lv}))*({xs}-{lv})")

    def _print_log(self, expr):
        return self._call("LN", self._print(expr.args[0]))

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
