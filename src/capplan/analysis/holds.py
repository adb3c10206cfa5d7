"""How far the decision holds: which inputs to probe, and their flip points.

For every scenario, every input the layout says the decisions rest on
(:func:`capplan.artifacts.declared.variables`) is probed with
:mod:`capplan.analysis.flips` for the nearest flip on each side of today's
value, within the layout's ``spread``; and every row of the priced table gets
the price at which it matches another row (its breakeven). These are the
artifacts (:mod:`capplan.artifacts.holds`); :mod:`capplan.rendering.holds` words them for the record, the
JSON document, ``capplan seek`` and ``capplan diff``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property

from capplan import collector
from capplan.analysis import flips
from capplan.artifacts.declared import Decision, declared, decisions, holds_spec, layout, row_keys, variables
from capplan.analysis.flips import Probe, Search
from capplan.artifacts.answers import Target
from capplan.artifacts.holds import Breakeven, InputInterval
from capplan.engine.evaluate import Evaluation

ALL_PAIRS = 6          # rows of the priced table up to which every ordered pair gets its breakeven


class PlanHolds:
    """The flip points of every relevant input of every scenario of a plan, and the
    breakevens. A scenario is searched when first asked for (:meth:`of`), once: the
    record and the workbook read the nominal scenario's alone, the JSON every one."""

    def __init__(self, evaluations: list[Evaluation], decisions_only: bool = False):
        """``decisions_only``: probes name only the declared decisions, costs and the breakeven's
        columns (the outputs' flip search), so only what those rest on is computed exactly;
        a goal seek names any quantity, and leaves it False."""
        self.evaluations = evaluations
        self.search = Search(evaluations, _targeted() if decisions_only else None)
        self._found: dict[str, list[InputInterval]] = {}
        self._decisions: dict[str, tuple[list[Decision], list[Decision]]] = {}
        self._probed: dict[tuple, list[Target]] = {}

    def probe(self, e: Evaluation, variable: Target) -> tuple[Probe, list[Decision], list[Decision]]:
        if e.scenario.name not in self._decisions:          # the same for every variable of a scenario
            self._decisions[e.scenario.name] = decisions(e)
        decided, costs = self._decisions[e.scenario.name]
        targets = [d.target for d in decided + costs]
        return self.search.probe(e.scenario.name, variable, targets, len(decided)), decided, costs

    def inputs(self, e: Evaluation) -> list[InputInterval]:
        """Every relevant input, the most fragile first."""
        spread = Fraction(holds_spec()["spread"])
        out = []
        for variable in self._variables(e):
            probe, decided, costs = self.probe(e, variable)
            lo, hi = flips.base_range(probe.today, probe.quantity, spread)
            out.append(InputInterval(e, probe, probe.holds(lo, hi), decided, costs))
        return sorted(out, key=lambda h: (*h.fragility, h.name))

    def _variables(self, e: Evaluation) -> list[Target]:
        """:func:`variables`, once per graph and set of inputs' tags: the scenarios of a plan
        mostly share both (the graph object lives as long as the evaluations)."""
        key = (id(e.graph), tuple((n, i.tag, i.pending) for n, i in e.inputs.items()))
        if key not in self._probed:
            self._probed[key] = variables(e)
        return self._probed[key]

    def of(self, scenario: str) -> list[InputInterval]:
        """One scenario's inputs (:meth:`inputs`), searched once (full garbage collections
        deferred: :mod:`capplan.collector`)."""
        if scenario not in self._found:
            with collector.deferred():
                self._found[scenario] = self.inputs(self.search.evaluations[scenario])
        return self._found[scenario]

    @property
    def nominal(self) -> list[InputInterval]:
        return self.of(self.evaluations[0].scenario.name)

    @cached_property
    def breakevens(self) -> list[Breakeven]:
        """For every ordered pair of rows of the priced table (the nominal
        scenario): the price of the first at which it matches the second on the
        compared quantity. Past :data:`ALL_PAIRS` rows, each row against the
        other row lowest on the compared quantity today, the one it has to match
        (500 offers would be 249,500 pairs).

        One probe per row: the row's own price moves only its own value of the
        compared quantity, and the probe solves it against every other row's
        (a constant, or — should rows be coupled — its own expression)."""
        wanted = holds_spec()["breakeven"]
        e = self.evaluations[0]
        table = wanted["table"]
        if table not in e.scenario.tables:
            return []
        price, compare = f"{table}.{wanted['price']}", f"{table}.{wanted['compare']}"
        keys = row_keys(e, table)
        named = next((d["label"] for d in declared() if d["quantity"] == compare), e.model.quantities[compare].column)
        today = self.search.values(e.scenario.name)[compare]
        out = []
        for a, key in enumerate(keys):
            others = [b for b in range(len(keys)) if b != a]
            if len(keys) > ALL_PAIRS:
                others = [min(others, key=lambda b: (today[b], b))] if others else []
            variable = Target(price, a)
            probe = self.search.probe(e.scenario.name, variable, [Target(compare, a)] +
                                      [Target(compare, b) for b in others], 0)
            _lo, hi = flips.base_range(probe.today, probe.quantity, Fraction(holds_spec()["spread"]) ** 2)
            at_today = probe.at(probe.today)
            for j, b in enumerate(others, 1):
                solutions = tuple(probe.solve(0, j, Fraction(0), hi))
                out.append(Breakeven(e, probe, key, keys[b], named, compare, at_today[j], solutions))
        return out

    def lowest_only(self) -> bool:
        """Whether the priced table has too many rows for every pair (each row meets the lowest)."""
        table = self.evaluations[0].scenario.tables.get(holds_spec()["breakeven"]["table"])
        return table is not None and len(table.rows) > ALL_PAIRS


def _targeted() -> frozenset[str]:
    """Every quantity a decision, a cost or a breakeven may name (:func:`decisions`, :attr:`PlanHolds.breakevens`)."""
    gates = {part["gate"] for section in layout()["sections"] for part in section.get("parts", []) if part.get("gate")}
    wanted = holds_spec()["breakeven"]
    priced = {f"{wanted['table']}.{wanted['price']}", f"{wanted['table']}.{wanted['compare']}"}
    return frozenset({d["quantity"] for d in declared()} | gates | priced)
