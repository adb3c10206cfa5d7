"""The dependency graph: which formula each node uses and in what order.

Nodes are the quantities and table columns that exist under a plan's
switches. A node is an *input* when the model gives it no formula or the
scenario pins it; otherwise its dependencies are the names its parsed formula
reads. The order is a topological sort (deterministic: ties broken by model
order); a cycle is an error that prints its path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import sympy

from capplan.language.formula import Formula, Nominal
from capplan.language.model import Model, Quantity
from capplan.errors import CapplanError
from capplan.names import nearest


@dataclass(frozen=True)
class Node:
    name: str
    quantity: Quantity
    formula: Formula | None          # None for inputs and pinned quantities
    deps: tuple[str, ...]

    @property
    def is_input(self) -> bool:
        return self.formula is None


@dataclass(frozen=True)
class Graph:
    switches: tuple[tuple[str, str], ...]
    nominal: bool                              # the nominal scenario's graph
    nodes: dict[str, Node]
    order: tuple[str, ...]
    check_deps: tuple[tuple[str, ...] | None, ...]   # per model check (None: not under these switches)

    def same_formulas(self, other: Graph) -> bool:
        """Whether two scenarios' graphs compute every node by the same formula (the same
        switches and pins; the nominal scenario's graph differs only in what nominal() reads)."""
        return self.switches == other.switches and self.nodes.keys() == other.nodes.keys() and all(
            (self.nodes[n].formula is None) == (other.nodes[n].formula is None) for n in self.order)

    def upstream(self, name: str) -> list[str]:
        """Every node ``name`` depends on, nearest first, each once."""
        seen, out, stack = set(), [], list(self.nodes[name].deps)
        while stack:
            dep = stack.pop(0)
            if dep not in seen:
                seen.add(dep)
                out.append(dep)
                stack.extend(self.nodes[dep].deps)
        return out

    def cut(self, names) -> Graph:
        """The graph evaluating only ``names``, the model's checks and what they are computed
        from, in the same order: an analysis that reads a few results need not compute a
        year-long traffic profile that none of them depends on."""
        wanted = {n for n in names if n in self.nodes} | {d for deps in self.check_deps if deps is not None for d in deps}
        for name in list(wanted):
            wanted.update(self.upstream(name))
        return replace(self, order=tuple(n for n in self.order if n in wanted))

    def split(self, names, sources) -> tuple[Graph, Graph]:
        """The formulas ``names`` are computed from (no model checks), in order, in two graphs:
        those no node of ``sources`` reaches, and those it does. Over many draws of ``sources``
        the first part is the same in every draw, so it is computed once (a ranking's monthly
        cost reads 9 formulas, of which λ* moves 6)."""
        wanted = {n for n in names if n in self.nodes}
        for name in list(wanted):
            wanted.update(self.upstream(name))
        moved = set(sources)
        for name in self.order:
            if name in wanted and not moved.isdisjoint(self.nodes[name].deps):
                moved.add(name)
        order = [n for n in self.order if n in wanted and n not in sources]
        return (replace(self, order=tuple(n for n in order if n not in moved)),
                replace(self, order=tuple(n for n in order if n in moved)))


def build(model: Model, switches: dict[str, str], pinned: frozenset[str] = frozenset(),
          nominal: bool = True) -> Graph:
    """The graph of one scenario. Outside the nominal scenario, names read only
    through ``nominal(...)`` come from the nominal results, so they are not
    dependencies here."""
    return _build(model, tuple(sorted(switches.items())), pinned, nominal)


@lru_cache(maxsize=4096)
def _nominal_only(formula: Formula) -> frozenset[str]:
    """The names ``formula`` reads only through ``nominal(...)``. Once a formula: every graph
    of a model (one a set of switches and pins) asks for the same ones, and rewriting a
    formula to find them costs more than building the graph; none without ``nominal()``."""
    if not formula.expr.has(Nominal):
        return frozenset()
    inside = {s.name for n in sympy.preorder_traversal(formula.expr) if isinstance(n, Nominal)
              for s in n.free_symbols}
    outside = {s.name for s in formula.expr.replace(lambda n: isinstance(n, Nominal),
                                                    lambda n: sympy.Integer(0)).free_symbols}
    return frozenset(inside - outside)


@lru_cache(maxsize=64)
def _build(model: Model, switch_items, pinned: frozenset[str], nominal: bool) -> Graph:
    switches = dict(switch_items)
    active = model.active(switches)
    present = set(active)
    nodes: dict[str, Node] = {}
    for name in active:
        q = model.quantities[name]
        formula = None if (q.is_input or name in pinned) else q.formula_for(switches)
        names = set(formula.names) if formula else set()
        if formula and not nominal:
            names -= _nominal_only(formula)
        deps = tuple(sorted(names))
        for dep in deps:
            _require(model, present, switches, name, dep)
        nodes[name] = Node(name, q, formula, deps)
    check_deps = []
    for check in model.checks:
        if not all(switches.get(sw) in cases for sw, cases in check.when):
            check_deps.append(None)            # not part of a plan with these switches
            continue
        for dep in check.require.names:
            _require(model, present, switches, f"check '{check.require.text}'", dep)
        check_deps.append(tuple(sorted(check.require.names)))
    order = _toposort(nodes, active)
    return Graph(switch_items, nominal, nodes, tuple(order), tuple(check_deps))


def _require(model, present, switches, user, dep) -> None:
    if dep in present:
        return
    if dep in model.quantities:
        raise CapplanError(f"{user} uses '{dep}', which exists only with {model.requirement(dep)}",
                           file=model.source)
    raise CapplanError(f"{user} uses unknown quantity '{dep}'{nearest(dep, model.quantities)}", file=model.source)


def _toposort(nodes: dict[str, Node], names) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}          # 1 visiting, 2 done
    for root in names:
        if state.get(root) == 2:
            continue
        stack = [(root, iter(nodes[root].deps))]
        path = [root]
        state[root] = 1
        while stack:
            name, deps = stack[-1]
            for dep in deps:
                if state.get(dep) == 1:
                    cycle = path[path.index(dep):] + [dep]
                    raise CapplanError("cycle in the model: " + " -> ".join(cycle))
                if state.get(dep) is None:
                    state[dep] = 1
                    stack.append((dep, iter(nodes[dep].deps)))
                    path.append(dep)
                    break
            else:
                stack.pop()
                path.pop()
                state[name] = 2
                order.append(name)
    return order
