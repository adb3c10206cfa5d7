"""What a decision chooses among and what can change it: the rows of the record's first screen.

:class:`Option` and :class:`Risk` are plain formatted rows, in a module of
their own so that every analysis's view (the candidates' ranking, the demand
curve's strategies) builds them without importing the first screen, which
reads those views.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    """One option the reader chooses among, every field already formatted."""

    name: str
    monthly_cost: str
    cost_per_million: str
    holds: str              # '✓ every scenario', '✗ breaks in 3 of 6'
    note: str = ""


def holds_across(broken: int, scenarios: int) -> str:
    """An option's Holds cell from the number of scenarios its fleet breaks in: '✗ breaks in 3
    of 6', '✓ every scenario' or '✓ the only scenario' (the deployments and the candidates alike)."""
    if broken:
        return f"✗ breaks in {broken} of {scenarios}"
    return "✓ every scenario" if scenarios > 1 else "✓ the only scenario"


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
