"""What an output asks of a plan's analyses: the artifacts, each computed when first read.

:class:`capplan.analysis.pipeline.Artifacts` is the one implementation (the runner computes);
rendering names only this shape, so that it reads the artifacts without importing the analyses
and a caller decides whether they are computed here, ahead in a child process, or not at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from capplan.artifacts.holds import FlipPoints
    from capplan.artifacts.demand import PowerFlip
    from capplan.artifacts.ranking import Overtaken, Ranking
    from capplan.artifacts.simulation import Simulated


class Analyses(Protocol):
    @property
    def holds(self) -> FlipPoints: ...

    @property
    def candidates(self) -> Ranking | None: ...

    @property
    def simulation(self) -> Simulated | None: ...

    @property
    def recommended_holds(self) -> FlipPoints | None: ...

    @property
    def overtaken(self) -> list[Overtaken]: ...

    @property
    def power_flips(self) -> list[PowerFlip]: ...
