"""Which flip points a change to a plan crosses, and which it comes near, in words.

``capplan diff`` shows what a change did; this adds what it *nearly* did, as
:mod:`capplan.analysis.crossings` finds it: "peak 60 → 64 req/s crosses 63
req/s: active GPUs 9 → 10", and "= 62 req/s is now 1.59 % from a flip point".
"""

from __future__ import annotations

from capplan import formatting
from capplan.analysis import crossings as found
from capplan.rendering.holds import InputHolds, unit_label
from capplan.rendering.view import PlanView


def crossings(old: PlanView, new: PlanView) -> dict:
    """``{"crossed": [...], "near": [...]}`` for the nominal scenarios, JSON-ready."""
    crossed, near = found.crossings(old.holds.nominal, new.holds.nominal)
    return {"crossed": [_crossed(c.old, c.new, c.side) for c in crossed],
            "near": [_near(n.new, n.side) for n in near]}


def _crossed(h: InputHolds, moved: InputHolds, side) -> dict:
    return {"input": h.name, "old_text": h.value_text(h.today), "new_text": h.value_text(moved.today),
            "flip": h.display(side.flip.value), "unit": h.quantity.unit,
            **_words(h.name, f"{_move(h, moved)} crosses {h.value_text(side.flip.value)}: "
                             f"{'; '.join(h.changes(side))}")}


def _near(h: InputHolds, side) -> dict:
    return {"input": h.name, "value_text": h.value_text(h.today), "margin": formatting.plain(side.margin),
            **_words(h.name, f"= {h.value_text(h.today)} is now {formatting.number(side.margin * 100, 3)} % "
                             f"from a flip point: {h.sentence(side)}")}


def _words(name: str, what: str) -> dict:
    """The sentence after the input's name (``what``, for the Markdown comment to
    escape apart from the name) and the whole sentence (``text``)."""
    return {"what": what, "text": f"{name} {what}"}


def _move(old: InputHolds, new: InputHolds) -> str:
    """'60 → 64 req/s'."""
    if old.quantity.kind == "money":
        return f"{old.value_text(old.today)} → {new.value_text(new.today)}"
    unit = unit_label(old.quantity)
    shown = f"{formatting.number(old.display(old.today))} → {formatting.number(new.display(new.today))}"
    return f"{shown} {unit}" if unit else shown
