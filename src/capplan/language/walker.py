"""One way to walk a formula's sympy tree, shared by every interpreter.

The unit checker (dimensions), the evaluator (numbers) and the record's
substitution printer each give the same node types their own meaning; this
base class only dispatches on the node type and says clearly when a formula
uses a node nobody gave a meaning to.
"""

from __future__ import annotations

import sympy

from capplan.errors import CapplanError

RELATIONS = {
    sympy.LessThan: "<=", sympy.StrictLessThan: "<", sympy.GreaterThan: ">=",
    sympy.StrictGreaterThan: ">", sympy.Equality: "==", sympy.Unequality: "!=",
}


class Walker:
    """Dispatch ``expr`` to ``self.<TypeName>(expr)``; numbers go to ``number``."""

    def visit(self, expr):
        if isinstance(expr, sympy.Number):
            return self.number(float(expr))
        if isinstance(expr, sympy.logic.boolalg.BooleanTrue):
            return self.number(1.0)
        if type(expr) in RELATIONS:
            return self.relation(expr, RELATIONS[type(expr)])
        method = getattr(self, type(expr).__name__, None)
        if method is None:
            raise CapplanError(f"formula element '{expr}' ({type(expr).__name__}) is not supported")
        return method(expr)


def is_negation(term) -> bool:
    """``-x`` is stored as Mul(-1, x); the walkers report it as subtraction."""
    return isinstance(term, sympy.Mul) and len(term.args) == 2 and term.args[0] == -1


def is_reciprocal(factor) -> bool:
    """``1/x`` is stored as Pow(x, -1); the walkers report it as division."""
    return isinstance(factor, sympy.Pow) and factor.args[1] == -1
