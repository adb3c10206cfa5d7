"""Flip points: the exact values of one input at which a plan's decisions change.

A sizing decision is a step function of each input: GPUs are a ``ceil``,
gates and the fixed-fleet check are comparisons. So "how wrong can the
forecast be before the answer changes?" has exact answers: with λ_safe =
10 × 0.7 = 7 req/s, a 10th GPU is needed *above* 63 req/s, and 63 itself
still needs 9. This package finds them.

For one scenario and one *variable* (an input, a pinned derived quantity such
as ``instance_max_rate``, or a table cell), every other value is held at the
plan's exact value (:mod:`capplan.engine.exact`), the scenario's nominal
fleet at the size today's nominal plan buys, and each target quantity becomes
a sympy expression of the variable. Then:

1. **Closed forms.** Where a target can change is where one of its step
   atoms does: a ``ceil``/``floor`` argument crossing an integer, the two
   sides of a comparison crossing, a ``max``/``if`` switching branch. Each
   atom is a rational function of the variable, so the crossings are roots
   of polynomials, found exactly. A comparison of a ``floor`` with a number
   is first *peeled* (``floor(u) >= 32`` ⟺ ``u >= 32``) so that the
   450,379-token floor under the memory gate does not become 450,379
   candidates.
2. **Bracketing**, where an atom has no closed form or too many crossings:
   a grid scan of the exact targets, each change bisected down to two
   adjacent floats. Where no target has a closed form, the float engine's
   grid is one pass of its batch backend (one member per grid point).
3. **Classification.** Each candidate is kept only if the targets differ
   just below and just above it (evaluated exactly between candidates); the
   value at the candidate itself says which side the boundary belongs to.

:func:`evaluate_at` evaluates the same change with the float engine, so
tests and users can check a flip point against the tool's own evaluation.

Scenarios of one plan share much: a :class:`Search` walks each scenario's
exact values again only where its changed inputs reach, and its probes share
closed forms (and the walks over them) with any other scenario's probe that
reads the same values.

One module a job: ``search`` (the scenarios of one plan), ``values`` (one
scenario in exact numbers), ``probe`` (one scenario and variable: the closed
forms, the walk over them and step 3), ``steps`` and ``roots`` (step 1: where
the step atoms change, and the roots of the rational pieces between),
``enclosures`` and ``monotone`` (the windows shown to hold no flip),
``bracketing`` (step 2), ``goalseek`` (where a target reaches a value),
``floats`` (the float engine at chosen values) and ``atoms`` (what is asked first
of any expression); what a search is asked and answers is the artifacts'
(:mod:`capplan.artifacts.answers`).
"""

from capplan.analysis.flips.floats import batch_at, evaluate_at
from capplan.analysis.flips.probe import MAX_FLIPS, Probe
from capplan.analysis.flips.search import Search, base_range
from capplan.analysis.flips.values import ScenarioValues, exact_values

__all__ = ["MAX_FLIPS", "Probe", "ScenarioValues", "Search", "base_range", "batch_at", "evaluate_at", "exact_values"]
