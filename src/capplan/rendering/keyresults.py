"""The declared key results of each scenario, shown: what every output lists first.

Apart from :mod:`.view` (which gathers them with everything else a plan's outputs
show) so that a part of the view, such as the simulation's spreads beside each key
result (:mod:`.simulation`), can name them without importing the whole view.
"""

from __future__ import annotations

from dataclasses import dataclass

from capplan.artifacts.declared import Slot, key_slots
from capplan.engine.evaluate import Evaluation
from capplan.rendering.present import shown


@dataclass(frozen=True)
class KeyResult(Slot):
    """One declared key result in one scenario (:class:`capplan.artifacts.declared.Slot`), shown."""

    unit: str
    kind: str
    value: object           # display unit, JSON-ready
    text: str               # for humans

    def as_json(self) -> dict:
        return {"id": self.id, "quantity": self.quantity, "row": self.row, "label": self.label,
                "unit": self.unit, "value": self.value, "text": self.text}


@dataclass(frozen=True)
class ScenarioView:
    name: str
    title: str
    changes: tuple[str, ...]
    key_results: tuple[KeyResult, ...]

    def key(self, id_: str) -> KeyResult | None:
        return next((k for k in self.key_results if k.id == id_), None)

    def scalars(self) -> list[KeyResult]:
        return [k for k in self.key_results if k.row is None]

    def rows(self) -> dict[str, list[KeyResult]]:
        """Table key results grouped by row key, in table order."""
        out: dict[str, list[KeyResult]] = {}
        for k in self.key_results:
            if k.row is not None:
                out.setdefault(k.row, []).append(k)
        return out


def key_results(e: Evaluation) -> tuple[KeyResult, ...]:
    """The declared key results of one scenario (:func:`capplan.artifacts.declared.key_slots`), shown."""
    out = []
    for slot in key_slots(e):
        q = e.model.quantities[slot.quantity]
        s = shown(e, slot.quantity, slot.index)
        out.append(KeyResult(slot.id, slot.quantity, slot.row, slot.index, slot.label, slot.role, q.unit, q.kind,
                             s.value, s.text))
    return tuple(out)


def scenario_view(e: Evaluation) -> ScenarioView:
    return ScenarioView(e.scenario.name, e.scenario.title, tuple(e.scenario.changes), key_results(e))
