"""The plan being read, shared by the section readers: its document (for the
file and line of each key), the model with the plan's SLOs, the switches it
chose and the inputs read so far; and the one way a reader reports a mistake
(:meth:`Context.err`: file, key path, line and message)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from capplan.errors import CapplanError
from capplan.language import yamlfile
from capplan.language.model import Model


# The longest text a plan may give, by key (docs/limits.md): each is far above any real one and
# keeps every workbook cell within Excel's 32,767 characters, the record and the JSON in proportion.
TEXT_LIMITS = {"title": 1_000, "name": 200, "owner": 200, "description": 20_000, "notes": 20_000}
TEXT_LIMIT = 2_000           # any other text: a source, a note, a date


class Context:
    def __init__(self, doc: yamlfile.Document, model: Model, path: Path):
        self.doc = doc
        self.model = model
        self.path = path
        self.data = doc.data
        self.switches: dict[str, str] = {}
        self.slos: tuple[tuple[str, str], ...] = ()
        self.active: set[str] = set()
        self.inputs: dict = {}       # the plan's own inputs, once read (imports count goodput at their SLOs)
        self.model_entry = None      # the catalog model the plan serves (imported evidence must match it)
        self.needs = None            # the quantities a caller evaluates (validate: a deployment); None: every one

    def err(self, message, *path) -> CapplanError:
        return self.doc.error(message, tuple(path))

    def text(self, value, *path, field: str | None = None) -> str | None:
        """A text field (title, source, note, a date, a row name): a scalar, never a mapping or list,
        no longer than its kind's limit (the last word of ``field``, by default the last key: ``title``,
        ``name``…)."""
        if value is None:
            return None
        if isinstance(value, (dict, list)):
            raise self.err(f"expected text, got {kind(value)}", *path)
        text = value.isoformat() if isinstance(value, dt.date) else str(value)
        field = field or str(path[-1])
        limit = TEXT_LIMITS.get(field.split()[-1], TEXT_LIMIT)
        if len(text) > limit:
            raise self.err(f"a {field} has at most {limit:,} characters, this one {len(text):,} "
                           f"(beginning '{text[:40]}…')", *path)
        return text

    def known_units(self) -> set[str]:
        """The units the model's quantities are shown in (a message's example picks among them)."""
        return {q.unit for q in self.model.quantities.values() if q.unit and q.kind not in ("text", "bool")}

    def switch_text(self, q) -> str:
        """The switches that make quantity ``q`` part of a plan ('sizing: littles_law')."""
        named = dict.fromkeys(sw for pairs in (self.model.when(q.name), *self.model.any_of(q.name)) for sw, _ in pairs)
        return ", ".join(f"{sw}: {self.switches[sw]}" if sw in self.switches else f"no {sw}: section"
                         for sw in named) or "these settings"


def kind(value) -> str:
    """A wrong value as a message names it: 'a mapping', 'a list' or the value quoted."""
    return {dict: "a mapping", list: "a list"}.get(type(value), f"'{value}'")


def show(value) -> str:
    """A table key as a message shows it (4.0 -> '4')."""
    return f"{value:g}" if isinstance(value, float) else str(value)
