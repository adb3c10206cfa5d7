"""Why a sweep row fails: each check of its pass/fail column that does not hold, and by how much.

"No load_sweep row meets every SLO (the lowest arrival_rate, 5 req/s, already
fails)" leaves a user guessing which SLO, and whether the benchmark even
delivered its load (a GuideLLM run that completed 7 of 100 requests fails
``delivered_ok``, not a latency). :func:`why_row_fails` words it from the
model's own formulas, so a check the model adds is explained without a
change here: ``meets_slo`` is an ``and`` of named checks; each check is a
comparison (or an ``and`` of comparisons) whose two sides are shown with
their values, and a side that is itself computed (``completed_share``) with
the values it is computed from (``completed``, ``sent``).

It is meant for the message of ``max_before_failure`` when no row passes
(the engine builds that message); ``formulas`` maps a name to its formula
(``None`` for an input), ``values`` holds the evaluation's numbers in base
units (a column as an array) and ``show(name, value)`` formats one with its
display unit.
"""

from __future__ import annotations

import sympy


def why_row_fails(formulas, ok: str, row: int, values, show) -> str:
    """'ttft_p95_ok: ttft_p95 = 85 ms > ttft_p95_slo = 0.8 ms, by 84.2 ms; delivered_ok: …'
    for row ``row`` of the pass/fail column ``ok`` (empty when every check holds)."""
    checks = [c for c in _named(formulas[ok]) if not _at(values[c], row)]
    return "; ".join(f"{_column(c)}: {_relations(formulas, c, row, values, show)}" for c in checks)


def _named(formula) -> list[str]:
    """The checks an ``and`` names, in the order the formula writes them."""
    names = [s.name for s in formula.expr.free_symbols] if isinstance(formula.expr, sympy.And) else []
    return sorted(names, key=lambda n: formula.text.find(_column(n)))


def _relations(formulas, check: str, row: int, values, show) -> str:
    """The comparisons of ``check`` that fail at ``row``, each with both sides and the gap."""
    expr = formulas[check].expr
    parts = expr.args if isinstance(expr, sympy.And) else (expr,)
    out = []
    for rel in parts:
        left, right = (_value(side, row, values) for side in (rel.lhs, rel.rhs))
        holds = {"<=": left <= right, ">=": left >= right, "<": left < right, ">": left > right}.get(rel.rel_op, True)
        if holds:
            continue
        sign = ">" if rel.rel_op in ("<=", "<") else "<"
        lhs, rhs = rel.lhs.name, rel.rhs.name
        text = (f"{_column(lhs)} = {show(lhs, left)} {sign} {_column(rhs)} = {show(rhs, right)}, "
                f"by {show(lhs, abs(left - right))}")
        if formulas.get(lhs) is not None:
            inputs = sorted(formulas[lhs].names, key=lambda n: formulas[lhs].text.rfind(_column(n)))
            text += " (" + ", ".join(f"{_column(n)} {show(n, _value(sympy.Symbol(n), row, values))}"
                                     for n in inputs) + ")"
        out.append(text)
    return "; ".join(out)


def _value(symbol, row: int, values) -> float:
    return _at(values[symbol.name], row)


def _at(value, row: int) -> float:
    """A column's value at ``row``, or a scalar as it is."""
    return float(value[row]) if getattr(value, "ndim", 0) else float(value)


def _column(name: str) -> str:
    """'load_sweep.ttft_p95' -> 'ttft_p95' (a scalar keeps its name)."""
    return name.split(".", 1)[-1]
