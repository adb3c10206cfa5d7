"""Full garbage collections deferred while a plan's outputs are made and its flip points searched.

The build keeps the plan and its evaluations to the end, and the search keeps what
scenarios share (closed forms, walks, exact values, the caches of its pieces): a
1,000-scenario plan holds about a million tracked objects when it is done, fractions
and sympy nodes that live to the end. CPython's full collection
walks every tracked object each time their number has grown by a quarter since the
last one: eight times over that search, a third of its CPU, to free almost nothing
(refcounting frees what the search drops; it makes few cycles). Inside
:func:`deferred`, the young generations are collected as usual and a full
collection waits until the outermost block is left (the build's outputs, or a search
run alone, as ``seek`` runs it).

Leaving the outermost block collects the youngest generation (a few hundred objects
at most): the next scenario's block then begins before enough objects are made to
start a collection, which would otherwise be the full one owed, in the few steps
between two scenarios.
"""

from __future__ import annotations

import contextlib
import gc

PATIENCE = 1_000_000      # young collections between full ones, inside deferred(): in effect none

_open = [0]               # deferred() blocks entered and not yet left


@contextlib.contextmanager
def deferred():
    """Full collections deferred for the ``with`` block (nested blocks defer with the outermost)."""
    if not _open[0]:
        saved = gc.get_threshold()
        gc.set_threshold(saved[0], saved[1], max(saved[2], PATIENCE))
    _open[0] += 1
    try:
        yield
    finally:
        _open[0] -= 1
        if not _open[0]:
            gc.set_threshold(*saved)
            gc.collect(0)
