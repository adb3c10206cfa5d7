"""Formula text -> sympy expression, without ``eval``.

A formula is a small arithmetic language:

* numbers, quantity names (``peak_arrival_rate``) and table columns
  (``classes.weight``; inside a table's own formulas a bare column name);
* ``+ - * / **``, comparisons ``< <= > >= == !=``, ``and or not``;
* the functions in :data:`FUNCTIONS`.

The text is read by Python's *parser* (``ast.parse``, which only builds a
syntax tree and runs nothing) and the tree is then translated node by node
into sympy; any node outside the whitelist is rejected. So a plan from an
untrusted pull request cannot run code: ``__import__('os').system('x')`` is
an error ("function calls on attributes are not allowed"), not a call.

sympy's own ``parse_expr``/``sympify`` are *not* used: they call ``eval``.
Expressions are built with ``evaluate=False`` so that a formula prints in the
order its author wrote it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import sympy

from capplan.errors import CapplanError

# --- table functions --------------------------------------------------------
# Each is a sympy Function that stays symbolic; the evaluator, the unit
# checker and the printers give them meaning.

class TableSum(sympy.Function):
    """Σ over the rows of a table of a row-wise expression."""
    nargs = 1



class TableMax(sympy.Function):
    """Largest value of a row-wise expression."""
    nargs = 1



class TableMin(sympy.Function):
    """Smallest value of a row-wise expression."""
    nargs = 1



class MaxBeforeFailure(sympy.Function):
    """The λ* rule: the highest x whose row passes *and* every lower x passes.

    ``max_before_failure(load_sweep.arrival_rate, load_sweep.meets_slo)``:
    a noisy pass above a failure does not count.
    """
    nargs = 2



class MinFailure(sympy.Function):
    """The lowest x whose row fails: the top of the knee bracket.

    When no row fails it is the highest x, so the bracket closes on the top
    of the sweep (the knee lies above it) instead of becoming infinite, which
    neither a record nor a spreadsheet cell can show.
    """
    nargs = 2



class Nominal(sympy.Function):
    """``nominal(x)``: x as the nominal scenario has it, inside any scenario.

    The fixed-fleet check asks whether the fleet sized for the nominal plan
    still carries a scenario's peak; its formula reads the nominal fleet with
    ``nominal(deployed_gpus)``. In the nominal scenario it is just x.
    """
    nargs = 1



class KthLargest(sympy.Function):
    """``kth_largest(x, k)``: the k-th largest value of a column (1 is its maximum):
    the base fleet of base plus burst is the largest count served in at least k rows."""
    nargs = 2


class SumAbove(sympy.Function):
    """``sum_above(x, level)``: Σ over the rows of column x of max(x − level, 0), what x holds above
    a level (the replica-hours above a reserved base; a level per row of another table gives one sum each)."""
    nargs = 2


TABLE_FUNCTIONS = {TableSum, TableMax, TableMin, MaxBeforeFailure, MinFailure, KthLargest, SumAbove}


# --- row-window functions -------------------------------------------------------
# A table whose rows are time intervals (the traffic profile) reads earlier rows:
# capacity requested at t arrives k rows later, and is released only after it has
# been unneeded for k rows. Before the first row, the first row's value holds (the
# profile starts with the fleet its first interval asks for). k is a whole number of
# rows, at least 0.

class RowWindow(sympy.Function):
    """A function of a column and a whole number of earlier rows."""
    nargs = 2


class Lag(RowWindow):
    """``lag(x, k)``: x in the row k rows earlier."""
    call = "lag"


class WindowMax(RowWindow):
    """``window_max(x, k)``: the largest x over this row and the k rows before it."""
    call = "window_max"


class WindowMin(RowWindow):
    """``window_min(x, k)``: the smallest x over this row and the k rows before it."""
    call = "window_min"


# --- queueing functions -------------------------------------------------------
# Dimensionless numbers in, a probability out; the numbers are computed in
# capplan.engine.queueing (one form for scalars, table columns and arrays of samples).

class ErlangC(sympy.Function):
    """``erlang_c(servers, load)``: the probability that a request waits in an
    M/M/c queue of ``servers`` servers offered ``load`` Erlangs (λ/μ); 1 when
    the load reaches the servers (the queue grows without bound)."""
    nargs = 2
    call = "erlang_c"



class PoissonExceeds(sympy.Function):
    """``poisson_exceeds(count, mean)``: P(N > count) for a Poisson count N of that mean."""
    nargs = 2
    call = "poisson_exceeds"



# --- unit annotations ---------------------------------------------------------
# Architecture widths (layers, heads, hidden size) are plain counts, so a count
# of bytes built from them has no "per token" or "per GPU" in it: the KV cache
# holds 2·L·H·d elements *for each token*, an activation of H elements *on each
# GPU*. ``per_token(x)`` and ``per_gpu(x)`` say so: the value is x, its
# dimension x's divided by one token or one GPU (both base units, so no number
# changes). Spreadsheets carry no units, so the workbook prints x alone.

class PerUnit(sympy.Function):
    """x per one ``unit`` (a base unit of the registry): same number, new dimension."""
    nargs = 1
    unit = ""



class PerToken(PerUnit):
    unit = "token"


class PerGpu(PerUnit):
    unit = "GPU"


def _if(cond, then, otherwise):
    return sympy.Piecewise((then, cond), (otherwise, True), evaluate=False)


def _max(*args):
    if len(args) == 1:
        return TableMax(args[0])
    return sympy.Max(*args, evaluate=False)


def _min(*args):
    if len(args) == 1:
        return TableMin(args[0])
    return sympy.Min(*args, evaluate=False)


# name -> (builder, allowed argument counts)
FUNCTIONS = {
    "ceil": (lambda x: sympy.ceiling(x, evaluate=False), {1}),
    "floor": (lambda x: sympy.floor(x, evaluate=False), {1}),
    "abs": (lambda x: sympy.Abs(x, evaluate=False), {1}),
    "max": (_max, {1, 2, 3, 4}),
    "min": (_min, {1, 2, 3, 4}),
    "sum": (TableSum, {1}),
    "if": (_if, {3}),
    "max_before_failure": (MaxBeforeFailure, {2}),
    "min_failure": (MinFailure, {2}),
    "nominal": (Nominal, {1}),
    "per_token": (PerToken, {1}),
    "per_gpu": (PerGpu, {1}),
    "erlang_c": (ErlangC, {2}),
    "poisson_exceeds": (PoissonExceeds, {2}),
    "lag": (Lag, {2}),
    "window_max": (WindowMax, {2}),
    "window_min": (WindowMin, {2}),
    "kth_largest": (KthLargest, {2}),
    "sum_above": (SumAbove, {2}),
    "ln": (lambda x: sympy.log(x, evaluate=False), {1}),
}

def _chain(kind, a, b):
    """a+b+c as one Add (not Add(Add(a, b), c)), so it prints as written."""
    left = a.args if isinstance(a, kind) else (a,)
    return kind(*left, b, evaluate=False)


_BINARY = {
    ast.Add: lambda a, b: _chain(sympy.Add, a, b),
    ast.Sub: lambda a, b: _chain(sympy.Add, a, sympy.Mul(-1, b, evaluate=False)),
    ast.Mult: lambda a, b: _chain(sympy.Mul, a, b),
    ast.Div: lambda a, b: _chain(sympy.Mul, a, sympy.Pow(b, -1, evaluate=False)),
    ast.Pow: lambda a, b: sympy.Pow(a, b, evaluate=False),
}
_COMPARE = {
    ast.Lt: sympy.StrictLessThan, ast.LtE: sympy.LessThan,
    ast.Gt: sympy.StrictGreaterThan, ast.GtE: sympy.GreaterThan,
    ast.Eq: sympy.Eq, ast.NotEq: sympy.Ne,
}


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its text, its sympy expression and what it reads."""

    text: str
    expr: sympy.Expr
    names: frozenset[str]          # quantity names and 'table.column' references

    def __str__(self) -> str:
        return self.text


def parse(text: str, *, columns: dict[str, str] | None = None) -> Formula:
    """Parse formula text.

    ``columns`` maps bare column names to ``table.column`` for formulas that
    live in a table (a row-wise computed column), so ``prompt_tokens`` inside
    the classes table reads ``classes.prompt_tokens``.
    """
    if not isinstance(text, str) or not text.strip():
        raise CapplanError(f"a formula must be non-empty text, got {text!r}")
    source = text.strip().replace("\n", " ")
    if source.startswith("="):          # spreadsheet habit: '=a*b'
        source = source[1:]
    # 'if' is a Python keyword; let authors write if(c, a, b).
    source = _rename_if(source)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        raise CapplanError(f"cannot parse formula '{text}': {err.msg} at column {err.offset}") from None
    builder = _Builder(text, columns or {})
    expr = builder.visit(tree.body)
    return Formula(text=text.strip(), expr=expr, names=frozenset(builder.names))


def _rename_if(source: str) -> str:
    import re
    return re.sub(r"\bif\s*\(", "if_(", source)


class _Builder:
    """Translate a whitelisted Python expression tree into sympy."""

    def __init__(self, text: str, columns: dict[str, str]):
        self.text = text
        self.columns = columns
        self.names: set[str] = set()

    def fail(self, what: str) -> CapplanError:
        return CapplanError(f"formula '{self.text}': {what}")

    def visit(self, node: ast.AST):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.fail(f"{_describe(node)} is not allowed in a formula")
        return method(node)

    def visit_Constant(self, node: ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise self.fail(f"constant {node.value!r} is not a number")
        if isinstance(node.value, int):
            return sympy.Integer(node.value)
        return sympy.Float(repr(node.value))

    def visit_Name(self, node: ast.Name):
        name = self.columns.get(node.id, node.id)
        if node.id.startswith("_"):
            raise self.fail(f"name '{node.id}' is not allowed")
        self.names.add(name)
        return sympy.Symbol(name)

    def visit_Attribute(self, node: ast.Attribute):
        if not isinstance(node.value, ast.Name) or node.value.id.startswith("_") or node.attr.startswith("_"):
            raise self.fail(f"'{ast.unparse(node)}' is not a table column (write table.column)")
        name = f"{node.value.id}.{node.attr}"
        self.names.add(name)
        return sympy.Symbol(name)

    def visit_BinOp(self, node: ast.BinOp):
        op = _BINARY.get(type(node.op))
        if op is None:
            raise self.fail(f"operator {type(node.op).__name__} is not allowed")
        return op(self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node: ast.UnaryOp):
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            if operand.is_Number:
                return -operand
            return sympy.Mul(-1, operand, evaluate=False)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return sympy.Not(operand)
        raise self.fail(f"operator {type(node.op).__name__} is not allowed")

    def visit_BoolOp(self, node: ast.BoolOp):
        parts = [self.visit(v) for v in node.values]
        return (sympy.And if isinstance(node.op, ast.And) else sympy.Or)(*parts, evaluate=False)

    def visit_Compare(self, node: ast.Compare):
        parts = []
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            rel = _COMPARE.get(type(op))
            if rel is None:
                raise self.fail(f"comparison {type(op).__name__} is not allowed")
            right = self.visit(right_node)
            parts.append(rel(left, right, evaluate=False))
            left = right
        return parts[0] if len(parts) == 1 else sympy.And(*parts, evaluate=False)

    def visit_Call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise self.fail(f"function calls on attributes are not allowed ('{ast.unparse(node.func)}')")
        name = "if" if node.func.id == "if_" else node.func.id
        if name not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise self.fail(f"unknown function '{name}' (known: {known})")
        if node.keywords:
            raise self.fail(f"{name}() takes no keyword arguments")
        builder, arities = FUNCTIONS[name]
        if len(node.args) not in arities:
            raise self.fail(f"{name}() takes {' or '.join(map(str, sorted(arities)))} argument(s), got {len(node.args)}")
        if name == "nominal" and not isinstance(node.args[0], (ast.Name, ast.Attribute)):
            raise self.fail("nominal() takes a quantity or column name")
        return builder(*(self.visit(a) for a in node.args))


def _describe(node: ast.AST) -> str:
    try:
        return f"'{ast.unparse(node)}' ({type(node).__name__})"
    except Exception:  # pragma: no cover - unparse handles every node we meet
        return type(node).__name__
