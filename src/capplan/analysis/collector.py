"""Full garbage collections deferred while the flip search runs.

The search keeps what scenarios share (closed forms, walks, exact values, the caches
of its pieces): a 1,000-scenario plan holds about a million tracked objects when it
is done, fractions and sympy nodes that live to the end. CPython's full collection
walks every tracked object each time their number has grown by a quarter since the
last one: eight times over that search, a third of its CPU, to free almost nothing
(refcounting frees what the search drops; it makes few cycles). Inside
:func:`deferred`, the young generations are collected as usual and a full
collection waits until the search returns.
"""

from __future__ import annotations

import contextlib
import gc

PATIENCE = 1_000_000      # young collections between full ones, inside deferred(): in effect none


@contextlib.contextmanager
def deferred():
    """Full collections deferred for the ``with`` block (nested blocks restore in turn)."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, PATIENCE))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)
