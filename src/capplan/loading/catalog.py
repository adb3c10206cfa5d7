"""The catalog of facts: GPUs and model architectures, each value sourced.

A plan names ``gpu:`` and ``model:`` by id; their values become inputs
tagged ``fact`` with the catalog's source, which the plan may override.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from capplan.errors import CapplanError
from capplan.loading import yamlfile
from capplan.names import nearest
from capplan.resources import model_dir

KINDS = {"gpu": "gpus.yaml", "model": "models.yaml"}


@dataclass(frozen=True)
class Entry:
    kind: str
    id: str
    name: str
    status: str
    attention: str | None
    values: dict[str, dict]        # quantity name -> {value, source, note}
    file: str
    required: tuple[str, ...] = ()  # inputs the plan must give itself (what a config.json cannot say)


@lru_cache(maxsize=None)
def _load(kind: str) -> dict[str, Entry]:
    path = model_dir() / "catalog" / KINDS[kind]
    doc = yamlfile.read(path, display=f"model/catalog/{KINDS[kind]}")
    out = {}
    for cid, spec in (doc.data or {}).items():
        values = {}
        for name, raw in (spec.get("values") or {}).items():
            values[name] = raw if isinstance(raw, dict) else {"value": raw}
        out[cid] = Entry(kind=kind, id=cid, name=spec.get("name", cid), status=spec.get("status", "unconfirmed"),
                         attention=spec.get("attention"), values=values, file=doc.file)
    return out


def ids(kind: str) -> list[str]:
    return sorted(_load(kind))


def lookup(kind: str, cid: str) -> Entry:
    entries = _load(kind)
    if cid not in entries:
        hint = nearest(str(cid).lower(), entries, cutoff=0.5) or f"; known: {', '.join(sorted(entries))}"
        raise CapplanError(f"unknown {kind} '{cid}' in the catalog{hint}")
    return entries[cid]
