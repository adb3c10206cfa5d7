"""One way to walk a formula's sympy tree, shared by every backend.

The convention is sympy's printer's: a backend gives a node class its meaning
with a method ``_print_<NodeClass>``, looked up along the class's MRO, so
``_print_Relational`` covers every comparison, ``_print_PerUnit`` both
``per_token`` and ``per_gpu``, ``_print_Number`` integers, rationals and
floats. The plain element-wise functions (``ceiling``, ``floor``, ``Abs``,
``Max``, ``Min`` …) need no method: a backend lists them in its
``known_functions`` table (node class name → function of the walked
arguments). So adding a function to the formula language is one entry per
backend, and a backend without it says so clearly instead of guessing.

The lookup is cached per backend class and node class: dispatch costs one
dictionary read per node.
"""

from __future__ import annotations

from typing import ClassVar

import sympy

from capplan.errors import CapplanError

RELATIONS = {
    sympy.LessThan: "<=", sympy.StrictLessThan: "<", sympy.GreaterThan: ">=",
    sympy.StrictGreaterThan: ">", sympy.Equality: "==", sympy.Unequality: "!=",
}


class Walker:
    """Dispatch ``expr`` to ``self._print_<Class>(expr)`` for the first class of its MRO
    that has a method or a ``known_functions`` entry; numbers go to :meth:`number`."""

    known_functions: ClassVar[dict] = {}
    _dispatch: ClassVar[dict]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def walk(self, expr):
        kind = type(expr)
        method = self._dispatch.get(kind)
        if method is None:
            method = self._dispatch[kind] = self.handler(kind)
        return method(self, expr)

    visit = walk

    @classmethod
    def handler(cls, kind: type):
        """The function that gives nodes of class ``kind`` their meaning in this backend."""
        for klass in kind.__mro__:
            method = getattr(cls, "_print_" + klass.__name__, None)
            if method is not None:
                return method
            function = cls.known_functions.get(klass.__name__)
            if function is not None:
                return lambda self, expr, f=function: self.apply(f, expr)
        return cls._unsupported

    @classmethod
    def supports(cls, kind: type) -> bool:
        return cls.handler(kind) is not cls._unsupported

    def _unsupported(self, expr):
        raise CapplanError(f"formula element '{expr}' ({type(expr).__name__}) is not supported "
                           f"by the {type(self).__name__} backend")

    def apply(self, function, expr):
        """A ``known_functions`` entry on the walked arguments (a backend may walk them its own way)."""
        return function(*(self.walk(a) for a in expr.args))

    def number(self, value):
        """A constant of the formula, given as the sympy number (Integer, Rational, Float)."""
        raise NotImplementedError

    def _print_Number(self, expr):
        return self.number(expr)

    def _print_BooleanTrue(self, expr):
        return self.number(sympy.S.One)

    def _print_BooleanFalse(self, expr):
        return self.number(sympy.S.Zero)


def is_negation(term) -> bool:
    """``-x`` is stored as Mul(-1, x); the walkers report it as subtraction."""
    return isinstance(term, sympy.Mul) and len(term.args) == 2 and term.args[0] == -1


def is_reciprocal(factor) -> bool:
    """``1/x`` is stored as Pow(x, -1); the walkers report it as division."""
    return isinstance(factor, sympy.Pow) and factor.args[1] == -1
