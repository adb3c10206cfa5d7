"""What a decision chooses among and what can change it: the rows of the record's first screen.

:class:`Option` and :class:`Risk` are plain formatted rows, in a module of
their own so that every analysis's view (the candidates' ranking, the demand
curve's strategies) builds them without importing the first screen, which
reads those views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from capplan import formatting
from capplan.loading.plan.data import NOMINAL


@dataclass(frozen=True)
class Option:
    """One option the reader chooses among, every field already formatted."""

    name: str
    monthly_cost: str
    cost_per_million: str
    holds: str              # '✓ holds in every scenario', '✗ breaks in surge_50 and context_x2'
    note: str = ""


def holds_across(broken: int, scenarios: int, names: Sequence[str] = ()) -> str:
    """An option's Holds cell in words, from the number of scenarios its fleet breaks in (and their
    ``names``, where known): '✓ holds in every scenario', '✓ holds at the plan's peak' (the only
    scenario), '✗ breaks at the plan's peak' (the nominal scenario), '✗ breaks in surge_50 and
    context_x2', '✗ breaks in 1 of its 2 scenarios' (the deployments and the candidates alike)."""
    if not broken:
        return "✓ holds in every scenario" if scenarios > 1 else "✓ holds at the plan's peak"
    if NOMINAL in names or broken == scenarios == 1:
        return "✗ breaks at the plan's peak"
    if broken == scenarios:
        return "✗ breaks in every scenario"
    if names:
        return f"✗ breaks in {formatting.and_list(names)}"
    return f"✗ breaks in {broken} of its {scenarios} scenarios"


@dataclass(frozen=True)
class Risk:
    """One thing that can change the decision: ``name`` (an input, a table) and
    ``what`` happens to it, how far that is (``distance``, relative to today; 0 for
    what is already past a policy; None for a whole step of a count), what
    ``changes``, and the weak ``evidence`` under it. Plain text: the record escapes it."""

    name: str
    what: str
    changes: str
    distance: float | None = 0.0
    evidence: tuple[str, ...] = ()

    @property
    def order(self) -> tuple:
        return (self.distance is None, self.distance or 0.0)
