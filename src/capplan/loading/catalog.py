"""The catalog of facts: GPUs and model architectures, each value sourced.

A plan names ``gpu:`` and ``model:`` by id; their values become inputs
tagged ``fact`` with the catalog's source, which the plan may override.

A model entry may list the weight formats its checkpoints ship in
(``weights: {bf16: ..., fp8: ...}``), each with its bytes per parameter and
source; the first is the one a plan gets unless it names another
(``model: {id: qwen3-32b, weights: fp8}``). A format is a published
checkpoint, not a generic cast: an FP8 or NVFP4 release keeps its norms,
router and often the embeddings in BF16, which its bytes per parameter say.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
    weights: dict[str, dict] = field(default_factory=dict)  # weight format -> {value, checkpoint, source, note}
    sha256: str | None = None       # of the file read, when the entry is a plan's own file (a config.json)


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
                         attention=spec.get("attention"), values=values, file=doc.file,
                         weights=dict(spec.get("weights") or {}))
    return out


def ids(kind: str) -> list[str]:
    return sorted(_load(kind))


def lookup(kind: str, cid: str) -> Entry:
    entries = _load(kind)
    if cid not in entries:
        hint = nearest(str(cid).lower(), entries, cutoff=0.5) or f"; known: {', '.join(sorted(entries))}"
        raise CapplanError(f"unknown {kind} '{cid}' in the catalog{hint}")
    return with_weights(entries[cid])


def with_weights(entry: Entry, fmt: str | None = None) -> Entry:
    """The entry with one weight format's bytes per parameter among its values (the first listed by default)."""
    if not entry.weights:
        if fmt is None:
            return entry
        raise CapplanError(f"model '{entry.id}' lists no weight formats; give weight_bytes_per_param under inputs:")
    chosen = next(iter(entry.weights)) if fmt is None else str(fmt)
    if chosen not in entry.weights:
        raise CapplanError(f"model '{entry.id}' has no weight format '{chosen}' in the catalog; "
                           f"known: {', '.join(entry.weights)}")
    spec = entry.weights[chosen]
    cited = {"value": spec["value"], "source": f"weights {chosen} ({spec['checkpoint']}): {spec['source']}"}
    if spec.get("note"):
        cited["note"] = spec["note"]
    return replace(entry, name=f"{entry.name} ({chosen.upper()})",
                   values={**entry.values, "weight_bytes_per_param": cited})
