"""What the flip search asks first of any expression, and how many crossings it lists.

A decision can change only where one of its step atoms (``ceil``, ``floor``) or
branches (``max``, ``min``, ``if``, a comparison) does, and only where the
variable moves it: :func:`moves` and :func:`stepped` answer those two
questions for every other module of the search, cached, since its windows ask
them of the same subtrees again and again. An atom that crosses more than
:data:`MAX_CROSSINGS` integers in a window raises :class:`TooMany`, and the
walk cuts the window instead.
"""

from __future__ import annotations

import functools

import sympy


MAX_CROSSINGS = 64           # more integer crossings of one atom than this in a window: cut the window


CACHED = 65536      # entries of each search cache: a 1,000-scenario plan fills 16,384 and then recomputes what it evicted


class TooMany(Exception):
    """An atom crosses more integers in the range than are worth listing one by one."""


STEPS = (sympy.ceiling, sympy.floor)
BRANCHES = (sympy.Max, sympy.Min, sympy.Abs, sympy.Piecewise, sympy.core.relational.Relational,
             sympy.And, sympy.Or, sympy.Not)


@functools.lru_cache(maxsize=CACHED)
def moves(expr, x) -> bool:
    """Whether ``expr`` depends on ``x`` (cached: sympy walks the whole tree for
    ``free_symbols`` on every call, and the search asks of the same subtrees again and again)."""
    return isinstance(expr, sympy.Basic) and x in expr.free_symbols


@functools.lru_cache(maxsize=CACHED)
def stepped(expr) -> bool:
    """Whether ``expr`` holds a step or a branch anywhere (cached, as :func:`moves`)."""
    return any(isinstance(n, STEPS + BRANCHES) for n in sympy.preorder_traversal(expr))
