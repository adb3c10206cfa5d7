"""A walk solves its range from the start outwards (analysis/flips/probe.py ``Probe._outwards``): the
nearest flip costs the crossings before it, not every crossing of the first halving of the range,
and the flips, their sides and what changes there are those of the range solved whole."""

from __future__ import annotations

from fractions import Fraction

from conftest import ROOT

from capplan.analysis.flips import roots, steps
from capplan.analysis.flips.probe import MAX_FLIPS, Probe
from capplan.analysis.flips.search import base_range
from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run

MAIN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"


def _walks(monkeypatch, whole: bool) -> tuple[list, int]:
    """Every probed input's walks from today to each end of a hundredfold range, to the nearest flip
    and to the hundredth, and the crossings of steps computed for the nearest flips (``whole``:
    each range handed to ``_windows`` at once, as before)."""
    steps.step_points.cache_clear()
    levels = []
    real = roots._levels
    monkeypatch.setattr(roots, "_levels", lambda *a: levels.append(real(*a)) or levels[-1])
    if whole:
        monkeypatch.setattr(Probe, "_outwards", Probe._windows)
    holds = PlanHolds(run(MAIN).evaluations, decisions_only=True)
    out, nearest = [], None
    for most in (1, MAX_FLIPS):
        for h in holds.nominal:
            probe = h.probe
            lo, hi = base_range(probe.today, probe.quantity, Fraction(100))
            probe.shared.clear()
            for end in (lo, hi):
                walk = probe.walk(probe.today, end, most)
                out.append((h.name, end, most, walk.reached,
                            [(f.value, f.side, f.exact, f.below, f.above) for f in walk.flips]))
        nearest = sum(len(found) for found in levels) if nearest is None else nearest
    monkeypatch.undo()
    return out, nearest


def test_the_walk_outwards_finds_the_flips_of_the_whole_range_with_fewer_crossings(monkeypatch):
    outwards, work = _walks(monkeypatch, whole=False)
    whole, whole_work = _walks(monkeypatch, whole=True)
    assert outwards == whole
    assert sum(len(w[-1]) for w in outwards) > 100            # many flips over a hundredfold range
    assert work < whole_work * 3 / 4                          # 157 against 255 when written
