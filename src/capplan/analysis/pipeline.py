"""One pipeline from a plan file to what every output reads: load → evaluate → analyse.

``build``, ``check``, ``eval``, ``diff``, ``seek`` and ``simulate`` all start
here. :func:`run` reads a plan against the standard model, evaluates every
scenario (the engine's entry point checks units as one of its stages, before
any number is computed) and returns the plan, its evaluations and its
:class:`Artifacts`, the analyses the outputs read: the flip points and
breakevens (:mod:`capplan.analysis.holds`) and the simulation
(:mod:`capplan.analysis.simulation`). As dbt's runner computes models and the
docs only read them, the artifacts are computed here and rendering reads them.

Each analysis runs when first read, once: ``capplan eval`` reads none and
pays for none, and a build may hand the simulation to a child process
(``simulated``, :mod:`capplan.ahead`) and collect it when an output needs it.

This module is imported by ``capplan build`` before it knows whether any plan
changed, so the stages (pint and numpy for loading, sympy for the analyses)
are imported inside the functions that run them: an unchanged build never
loads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from capplan.errors import CapplanError

if TYPE_CHECKING:
    from capplan.analysis.holds import PlanHolds
    from capplan.analysis.ranking import Ranking
    from capplan.artifacts.demand import PowerFlip
    from capplan.artifacts.ranking import Overtaken
    from capplan.analysis.simulation import Simulated
    from capplan.engine.evaluate import Evaluation
    from capplan.language.model import Model
    from capplan.loading.plan import Plan


def display(path: Path) -> str:
    """A path as messages name it: relative to the working folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def must_be_utf8(path: Path) -> None:
    """Outputs name a plan and its benchmark files by their file names, so they must be text."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise CapplanError("the file name is not valid UTF-8; rename the file (the outputs name "
                           "a plan and its benchmark files by their file names)", file=shown) from None


def load_plan(path: Path, model: Model | None = None, needs=None) -> Plan:
    """A plan file read against the model, named as the user would name it (relative to here);
    ``needs``: what the caller evaluates, when not every quantity (:func:`capplan.loading.plan.load`)."""
    from capplan.language.model import standard_model    # deferred: pint and numpy (module docstring)
    from capplan.loading.plan import load

    path = Path(path)
    must_be_utf8(path)
    plan = load(path, model or standard_model(), display=display(path), needs=needs)
    for table in plan.nominal.tables.values():
        for imported in table.imported:
            must_be_utf8(Path(plan.file).parent / imported.path)
    return plan


def evaluate_plan(path: Path, model: Model | None = None, loaded: Plan | None = None) -> tuple[Plan, list[Evaluation]]:
    """``(plan, evaluations)``: every scenario of the plan, nominal first (``loaded``: the
    plan already read from ``path`` with the standard model)."""
    from capplan.engine.evaluate import evaluate_all      # deferred: sympy and pint (module docstring)
    from capplan.language.model import standard_model

    model = model or standard_model()
    plan = loaded or load_plan(path, model)
    return plan, evaluate_all(plan, model)


class Artifacts:
    """The analyses of one plan's evaluations, each computed when first read."""

    def __init__(self, evaluations: list[Evaluation], simulated: Callable[[], Simulated | None] | None = None):
        self.evaluations = evaluations
        self._simulated = simulated

    @cached_property
    def holds(self) -> PlanHolds:
        """The flip points of every scenario (each searched when first asked for) and the breakevens."""
        from capplan.analysis.holds import PlanHolds           # deferred: sympy (module docstring)

        return PlanHolds(self.evaluations, decisions_only=True)

    @cached_property
    def candidates(self) -> Ranking | None:
        """The plan's candidates ranked by the cost of serving its forecast (None without ``candidates:``)."""
        from capplan.analysis import candidates, ranking    # deferred: numpy (module docstring)

        evaluated = candidates.evaluate(self.evaluations)
        return ranking.rank(self.evaluations, evaluated) if evaluated is not None else None

    @cached_property
    def recommended(self) -> Evaluation | None:
        """The ranking's winner as the plan it would be (:mod:`capplan.analysis.variant`): the
        whole model evaluated for it (None without candidates, or with none feasible)."""
        from capplan.analysis import variant    # deferred: numpy (module docstring)

        ranked = self.candidates
        if ranked is None or ranked.winner is None:
            return None
        return variant.of_candidate(self.evaluations[0], ranked.evaluated, ranked.winner)

    @cached_property
    def recommended_holds(self) -> PlanHolds | None:
        """How far the recommendation holds: the flip points of the winner as the plan it would be."""
        from capplan.analysis.holds import PlanHolds           # deferred: sympy (module docstring)

        shown = self.recommended
        return None if shown is None else PlanHolds([shown], decisions_only=True)

    @cached_property
    def overtaken(self) -> list[Overtaken]:
        """Where another candidate overtakes the recommendation as the prompt length, the peak or a
        prefix hit rate moves (:mod:`capplan.analysis.overtaking`; none without candidates)."""
        from capplan.analysis import overtaking               # deferred: sympy (module docstring)

        ranked = self.candidates
        return [] if ranked is None else overtaking.of_ranking(self.evaluations[0], ranked)

    @cached_property
    def power_flips(self) -> list[PowerFlip]:
        """The electricity prices at which a traffic profile's recommended strategy changes, for a plan
        with an owned offer (:func:`capplan.analysis.overtaking.power_flips`; none without one)."""
        from capplan.analysis import overtaking               # deferred: sympy (module docstring)

        return overtaking.power_flips(self.evaluations[0])

    @cached_property
    def simulation(self) -> Simulated | None:
        """The nominal scenario's simulation (None for a plan without uncertain values): the one
        ``simulated`` delivers, when it does, else computed here."""
        from capplan.analysis.simulation import of_plan        # deferred: numpy (module docstring)

        done = self._simulated() if self._simulated else None
        return done if done is not None else of_plan(self.evaluations)


@dataclass
class Analysed:
    plan: Plan
    evaluations: list[Evaluation]      # nominal first
    artifacts: Artifacts


def run(path: Path, model: Model | None = None, loaded: Plan | None = None,
        simulated: Callable[[], Simulated | None] | None = None) -> Analysed:
    """Load, evaluate and (lazily) analyse one plan; ``simulated`` may deliver its simulation."""
    plan, evaluations = evaluate_plan(path, model, loaded)
    return Analysed(plan, evaluations, Artifacts(evaluations, simulated))


def simulate(plan: Plan) -> Simulated | None:
    """The plan's simulation as its outputs show it (what :func:`run`'s artifacts would
    compute), for a child process to compute ahead: only the nominal scenario is evaluated,
    the one a simulation reads (a plan's other thousand would delay it)."""
    from capplan.analysis.simulation import of_plan        # deferred: numpy (module docstring)
    from capplan.engine.evaluate import evaluate_nominal
    from capplan.language.model import standard_model

    return of_plan([evaluate_nominal(plan, standard_model())])
