"""One scenario's nodes as exact numbers, each computed when a probe first reads it.

The flip search holds every value but the variable at the plan's exact value
(:mod:`capplan.engine.exact`). :class:`ScenarioValues` walks a scenario's graph
in fractions only as far as a probe reads, and keeps the nominal scenario's
value wherever nothing a node rests on differs. :func:`reach_of` says what a
variable moves and which values its closed forms read, :func:`as_key` makes
those values a key that probes of several scenarios share.
"""

from __future__ import annotations

from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import Exact, rational


def exact_values(e: Evaluation, nominal_values: dict | None, given: dict | None = None,
                 base: dict | None = None, keep: frozenset[str] | None = None) -> dict:
    """Every node of one scenario as exact numbers (a table column as a
    tuple); ``given`` sets some nodes (an input, or a derived quantity pinned).
    ``base``: another scenario's values under the same formulas; a formula none
    of whose dependencies differs from there keeps its value without a walk.
    ``keep``: the formulas to compute (None: all; see :func:`kept_nodes`)."""
    values = ScenarioValues(e, nominal_values, given, base)
    for name in e.graph.order:
        if keep is None or name in keep:
            values[name]
    return dict(values)


class ScenarioValues(dict):
    """One scenario's nodes as exact numbers (:func:`exact_values`), each computed when
    first read, its dependencies before it (a missing key is computed, so ``get`` and ``in``
    see only what has been read). Equal, node by node, to the values computed all at once."""

    def __init__(self, e: Evaluation, nominal_values: dict | None, given: dict | None = None,
                 base: dict | None = None):
        super().__init__()
        self.e, self.given, self.base = e, given or {}, base
        self._walker = Exact(self, self if nominal_values is None else nominal_values)
        self._same: dict[str, bool] = {}        # with a base: whether a node's value is base's
        self._rank: dict[str, int] | None = None   # each node's place in the graph's order

    def __missing__(self, name: str):
        graph = self.e.graph
        if name not in graph.nodes:
            raise KeyError(name)
        todo, stack = {name}, [name]
        while stack:                            # every node not yet computed that ``name`` rests on
            for d in graph.nodes[stack.pop()].deps:
                if d not in todo and not dict.__contains__(self, d):
                    todo.add(d)
                    stack.append(d)
        if self._rank is None:
            self._rank = {n: i for i, n in enumerate(graph.order)}
        for n in sorted(todo, key=self._rank.__getitem__):
            self._compute(n)
        return dict.__getitem__(self, name)

    def _compute(self, name: str) -> None:
        e, base = self.e, self.base
        node = e.graph.nodes[name]
        q = node.quantity
        if name in self.given:
            value = self.given[name]
        elif node.formula is not None:
            if base is not None and name in base and all(self._same[d] for d in node.deps):
                self[name] = base[name]
                self._same[name] = True
                return
            value = as_column(self._walker.visit(node.formula.expr), e, q)
        elif q.table:
            rows = e.scenario.tables[q.table].rows
            value = [r[q.column] for r in rows] if q.kind == "text" else \
                tuple(rational(r[q.column], q.unit) for r in rows)
        else:
            value = rational(e.inputs[name].value, q.unit)
        self[name] = value
        if base is not None:
            self._same[name] = _identical(value, base.get(name))


def kept_nodes(graph, wanted: frozenset[str]) -> frozenset[str]:
    """Every input, and the formulas ``wanted`` rest on, what they read through nominal() included."""
    kept = {n for n in graph.order if graph.nodes[n].formula is None}
    stack = [n for n in wanted if n in graph.nodes]
    while stack:
        name = stack.pop()
        if name in kept and graph.nodes[name].formula is not None:
            continue
        kept.add(name)
        formula = graph.nodes[name].formula
        stack.extend(d for d in (formula.names if formula is not None else ()) if d in graph.nodes and d not in kept)
    return frozenset(kept)


def _identical(a, b) -> bool:
    """Equal exact values of the same types (1 and Fraction(1) print alike, but keep them apart)."""
    if isinstance(a, tuple | list):
        return isinstance(b, type(a)) and len(a) == len(b) and all(map(_identical, a, b))
    return type(a) is type(b) and a == b


def as_column(value, e: Evaluation, q):
    """A table's computed column is a tuple even when its formula reads only scalars."""
    if q.table and not isinstance(value, tuple):
        return (value,) * len(e.scenario.tables[q.table].rows)
    return value


def reach_of(graph, start: str, wanted: tuple[str, ...]) -> tuple[frozenset, frozenset, tuple[str, ...]]:
    """What a variable moves (``below``), what the targets rest on (``needed``), and the
    values the targets' closed forms read besides the variable: the inputs of the walk."""
    below = {start}
    for name in graph.order:
        if any(d in below for d in graph.nodes[name].deps):
            below.add(name)
    needed = set(wanted)
    for name in reversed(graph.order):
        if name in needed:
            needed.update(graph.nodes[name].deps)
    walked = [n for n in graph.order if n != start and n in below and n in needed]
    reads = {d for n in walked for d in graph.nodes[n].deps if d not in below}
    reads |= {n for n in wanted if n not in below} | {start}
    return frozenset(below), frozenset(needed), tuple(sorted(reads))


def as_key(value):
    """A value as a key, each number with its type (1, True and Fraction(1) are equal keys
    otherwise), a column (a tuple, a text list) entry by entry."""
    if isinstance(value, tuple | list):
        return tuple(as_key(v) for v in value)
    return type(value), value
