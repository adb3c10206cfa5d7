"""The search across a plan's scenarios, and the range it searches by default.

Scenarios of one plan share much: a :class:`Search` computes each scenario's
exact values once, and only where its changed inputs reach
(:mod:`capplan.analysis.flips.values`), and gives each scenario's probes one
store of closed forms and walks, so that a scenario that moves none of what a
closed form reads reuses another's. :func:`base_range` is the range around
today's value that the record and ``capplan seek`` search.
"""

from __future__ import annotations

import math
from fractions import Fraction

from capplan.artifacts.answers import Target
from capplan.analysis.flips.probe import Probe
from capplan.analysis.flips.values import ScenarioValues, exact_values, kept_nodes
from capplan.engine.evaluate import Evaluation, evaluate
from capplan.engine.exact import factor
from capplan.loading.plan import NOMINAL


class Search:
    """Every scenario of one plan in exact values, each computed once when first
    asked for; then one :class:`Probe` per scenario and variable."""

    def __init__(self, evaluations: list[Evaluation], wanted: frozenset[str] | None = None):
        """``wanted``: the only targets a probe will name (None: any node). Then only what
        they rest on is computed exactly: a traffic profile's thousands of rows, which no
        decision reads, are never walked in fractions."""
        self.evaluations = {e.scenario.name: e for e in evaluations}
        first = evaluations[0]
        self.nominal = first if first.scenario.name == NOMINAL else \
            evaluate(first.plan, first.plan.nominal, first.model)        # `eval --scenario S` passes S alone
        alike = all(e.graph.same_formulas(self.nominal.graph) for e in evaluations)
        self.keep = kept_nodes(self.nominal.graph, wanted) if wanted is not None and alike else None
        self.nominal_values = exact_values(self.nominal, None, keep=self.keep)
        self._values = {NOMINAL: self.nominal_values} if first.scenario.name == NOMINAL else {}
        self._shared: dict = {}        # what probes of scenarios alike share: closed forms, walks

    def values(self, scenario: str) -> dict:
        """Every node of one scenario as exact numbers, each computed when first read
        (:class:`ScenarioValues`): a probe reads only what its closed forms do not recompute
        in the symbol, and most of what a changed input reaches (the queueing figures, the
        costs) is recomputed by every probe. Where the scenario's graph has the nominal
        scenario's formulas, a node none of whose dependencies differs keeps the nominal value."""
        if scenario not in self._values:
            e = self.evaluations[scenario]
            alike = e.graph.same_formulas(self.nominal.graph)
            self._values[scenario] = ScenarioValues(e, self.nominal_values,
                                                    base=self.nominal_values if alike else None)
        return self._values[scenario]

    def probe(self, scenario: str, variable: Target, targets: list[Target], decisions: int) -> Probe:
        """The first ``decisions`` targets decide; the others are carried along (costs to report)."""
        e = self.evaluations[scenario]
        return Probe(e, self.nominal, self.values(scenario), self.nominal_values, variable, targets, decisions,
                     self._shared)

    def exact_at(self, scenario: str, variable: Target, value: Fraction) -> dict:
        """Every node of a scenario in exact numbers with ``variable`` set to
        ``value``: the graph walked again in fractions, a check on the closed
        forms that shares nothing with them but the walker. Raises
        :class:`Undefined` where the plan does not evaluate."""
        e = self.evaluations[scenario]
        base = self.values(scenario)[variable.name]
        given = value if variable.index is None else tuple(
            value if i == variable.index else v for i, v in enumerate(base))
        return exact_values(e, self.nominal_values, {variable.name: given}, keep=self.keep)


def base_range(today: Fraction, quantity, spread: Fraction) -> tuple[Fraction, Fraction]:
    """[today / spread, today × spread] within the quantity's domain (from 0 to
    ``spread`` display units when today is 0)."""
    unit = factor(quantity.unit)
    lo, hi = (today / spread, today * spread) if today > 0 else (Fraction(0), spread * unit)
    domain = quantity.domain
    if domain is not None:
        if math.isfinite(domain.low):
            lo = max(lo, Fraction(repr(domain.low)) * unit)
        if math.isfinite(domain.high):
            hi = min(hi, Fraction(repr(domain.high)) * unit)
    return lo, hi
