"""The catalog of facts: GPUs and model architectures, each value sourced.

A plan names ``gpu:`` and ``model:`` by id; their values become inputs
tagged ``fact`` with the catalog's source, which the plan may override.

A model entry may list the weight formats its checkpoints ship in
(``weights: {bf16: ..., fp8: ...}``), each with its bytes per parameter and
source; the first is the one a plan gets unless it names another
(``model: {id: qwen3-32b, weights: fp8}``). A format is a published
checkpoint, not a generic cast: an FP8 or NVFP4 release keeps its norms,
router and often the embeddings in BF16, which its bytes per parameter say.

A plan may name an entry as people do: an entry's ``aliases:`` (``h100``,
``H100 SXM``), its name, or a model's Hugging Face id. Names are compared
after :func:`normal` (case, spaces, an organisation prefix, a trailing
``-instruct``: an instruct checkpoint has its base model's architecture);
the entry found keeps its canonical id, which the record names. A name
that is not one of them gets the entries it is close to as suggestions.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from capplan.errors import CapplanError
from capplan.language import yamlfile
from capplan.resources import model_dir

KINDS = {"gpu": "gpus.yaml", "model": "models.yaml", "engine": "engines.yaml"}


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
    aliases: tuple[str, ...] = ()   # other names a plan may use (``h100``), as the catalog writes them
    hf_id: str | None = None        # a model's Hugging Face id
    weight_format: str | None = None  # the format whose bytes per parameter ``values`` holds (with_weights)
    attention_heads: int | None = None  # a model's query heads: the tensor-parallel sizes vLLM takes (parallel)
    tool_bands: dict[str, dict] = field(default_factory=dict)  # an engine's: performance model -> {value, source}


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
                         weights=dict(spec.get("weights") or {}),
                         aliases=tuple(str(a) for a in spec.get("aliases") or ()), hf_id=spec.get("hf_id"),
                         attention_heads=spec.get("attention_heads"), tool_bands=dict(spec.get("tool_band") or {}))
    return out


_VENDOR = re.compile(r"^(nvidia|amd-instinct|amd)-")


def normal(text: str) -> str:
    """A name as compared: lower case, runs of spaces, ``_`` and ``:`` as one ``-``, without an
    organisation prefix (``meta-llama/``), a GPU vendor (``NVIDIA``) or a trailing ``-instruct``."""
    name = str(text).strip().lower().rpartition("/")[2]
    name = re.sub(r"[\s_:-]+", "-", name).strip("-")
    return _VENDOR.sub("", name).removesuffix("-instruct")


def names(entry: Entry) -> tuple[str, ...]:
    """Every name an entry answers to, as written: id, name, Hugging Face id, aliases."""
    return tuple(dict.fromkeys(n for n in (entry.id, entry.name, entry.hf_id, *entry.aliases) if n))


@lru_cache(maxsize=None)
def _index(kind: str) -> dict[str, tuple[str, ...]]:
    """Normalised name -> the ids it names (two when the catalog's names collide: then it is ambiguous)."""
    index: dict[str, tuple[str, ...]] = {}
    for cid, entry in sorted(_load(kind).items()):
        for name in names(entry):
            key = normal(name)
            if cid not in index.get(key, ()):
                index[key] = index.get(key, ()) + (cid,)
    return index


def resolve(kind: str, name: str) -> str | None:
    """The catalog id a name means, or None when it means none or several."""
    if name in _load(kind):
        return name
    found = _index(kind).get(normal(name), ())
    return found[0] if len(found) == 1 else None


def suggestions(kind: str, name: str, count: int = 4) -> list[str]:
    """The ids a name that resolves to none is close to: every entry with all of the name's words
    among its own (``h100`` -> both H100 parts), else the nearest by spelling."""
    key = normal(name)
    words = set(key.split("-"))
    index = _index(kind)
    containing = sorted({cid for k, ids_ in index.items() if words <= set(k.split("-")) for cid in ids_})
    if containing:
        return containing[:count]
    near = difflib.get_close_matches(key, index, n=count, cutoff=0.5)
    return list(dict.fromkeys(cid for k in near for cid in index[k]))[:count]


def ids(kind: str) -> list[str]:
    return sorted(_load(kind))


def entries(kind: str) -> list[Entry]:
    """Every entry of one kind, by id."""
    return [_load(kind)[cid] for cid in ids(kind)]


def lookup(kind: str, cid: str) -> Entry:
    """The entry a plan names by id, alias, name or Hugging Face id."""
    entries_ = _load(kind)
    found = resolve(kind, cid)
    if found is None:
        near = suggestions(kind, cid)
        hint = (f"; did you mean {', '.join(near)}?" if near else "") or f"; known: {', '.join(sorted(entries_))}"
        raise CapplanError(f"unknown {kind} '{cid}' in the catalog{hint} (`capplan catalog {kind}s` lists them)")
    return with_weights(entries_[found])


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
    values = {**entry.values, "weight_bytes_per_param": cited}
    if spec.get("tensor_bits"):
        values["tensor_format_bits"] = {"value": f"{spec['tensor_bits']} bit",
                                        "source": f"weights {chosen} ({spec['checkpoint']}), products in "
                                                  f"{spec['tensor_bits']}-bit numbers: {spec['source']}"}
    return replace(entry, name=f"{entry.name} ({chosen.upper()})", weight_format=chosen, values=values)
