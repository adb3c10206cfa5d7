"""Which flip points a change to a plan crosses, and which it comes near.

``capplan diff`` shows what a change did; this adds what it *nearly* did.
For every input the record weighs (:mod:`capplan.rendering.holds`) whose
value moved — a forecast, a measurement, λ* after new sweep rows — the old
plan's flip points between the old and the new value are *crossed*: "peak 60
→ 64 req/s crosses 63 req/s: active GPUs 9 → 10". And every such input that
the new plan leaves within ``holds.near`` (5 %) of a flip, where the old plan
did not, is *near* one: the next small change will flip a decision.
"""

from __future__ import annotations

from capplan import formatting
from capplan.rendering.holds import InputHolds, spec, unit_label
from capplan.rendering.view import PlanView


def crossings(old: PlanView, new: PlanView) -> dict:
    """``{"crossed": [...], "near": [...]}`` for the nominal scenarios, JSON-ready."""
    before = {h.name: h for h in old.holds.nominal}
    after = {h.name: h for h in new.holds.nominal}
    crossed = []
    for name, h in before.items():
        moved = after.get(name)
        if moved is None or moved.today == h.today:
            continue
        for side in _crossed(h, moved.today):
            crossed.append({"input": name, "old_text": h.value_text(h.today), "new_text": h.value_text(moved.today),
                            "flip": h.display(side.flip.value), "unit": h.quantity.unit,
                            **_words(name, f"{_move(h, moved)} crosses {h.value_text(side.flip.value)}: "
                                           f"{'; '.join(h.changes(side))}")})
    near = []
    limit = spec()["near"]
    for name, h in after.items():
        was = before.get(name)
        for side in (h.below, h.above):
            if not side.found or side.margin is None or side.margin >= limit:
                continue
            if was is not None and was.fragility[1] < limit:
                continue                  # already this close before the change
            near.append({"input": name, "value_text": h.value_text(h.today), "margin": formatting.plain(side.margin),
                         **_words(name, f"= {h.value_text(h.today)} is now {formatting.number(side.margin * 100, 3)} % "
                                        f"from a flip point: {h.sentence(side)}")})
    return {"crossed": crossed, "near": near}


def _words(name: str, what: str) -> dict:
    """The sentence after the input's name (``what``, for the Markdown comment to
    escape apart from the name) and the whole sentence (``text``)."""
    return {"what": what, "text": f"{name} {what}"}


def _crossed(h: InputHolds, value) -> list:
    """The old plan's flips passed on the way from today's value to ``value``, nearest first."""
    today = h.today
    up = value > today
    step = abs(value - today)
    lo, hi = (today, value + step / 2) if up else (max(value - step / 2, 0), today)
    out = []
    for flip in h.probe.flips(lo, hi):
        passed = (today <= flip.value < value or (flip.value == value and flip.side == "above")) if up else \
            (value < flip.value <= today or (flip.value == value and flip.side == "below"))
        if passed and not (flip.value == today and (flip.side == "below") != up):
            out.append(h.side(flip, "above" if up else "below"))
    return out if up else out[::-1]


def _move(old: InputHolds, new: InputHolds) -> str:
    """'60 → 64 req/s'."""
    if old.quantity.kind == "money":
        return f"{old.value_text(old.today)} → {new.value_text(new.today)}"
    unit = unit_label(old.quantity)
    shown = f"{formatting.number(old.display(old.today))} → {formatting.number(new.display(new.today))}"
    return f"{shown} {unit}" if unit else shown
