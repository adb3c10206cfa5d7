"""``capplan catalog gpus|models [QUERY]``: the catalog's entries, as a newcomer looks for them.

The ids a plan names were found by reading ``model/catalog/*.yaml``; this lists
them with the few facts that tell parts and models apart, every fact's source,
and the other names each entry answers to. A query keeps the entries whose id,
name, alias or Hugging Face id contains it (case, spacing and an organisation
prefix ignored, as a plan's ``gpu:`` is read). Entries come in id order, so the
output is the same on every run; ``--json`` gives scripts the same content.
"""

from __future__ import annotations

from capplan import formatting
from capplan.language import units
from capplan.errors import CapplanError
from capplan.loading import catalog

# Per kind: the facts shown, each (quantity, display unit, column heading).
FACTS = {
    "gpu": (("gpu_memory_reported", "GiB/GPU", "memory GiB"), ("hbm_bandwidth", "GB/s/GPU", "HBM GB/s"),
            ("bf16_peak_flops", "TFLOP/s/GPU", "BF16 TFLOP/s")),
    "model": (("parameter_count", "", "parameters"), ("layers", "", "layers"), ("kv_heads", "", "KV heads"),
              ("head_dim", "", "head_dim")),
}
KINDS = {"gpus": "gpu", "models": "model"}


def entries(kind: str, query: str | None = None) -> list[dict]:
    """The entries of ``kind`` a query matches (all without one), each as plain data."""
    chosen = [e for e in catalog.entries(kind) if query is None or _matches(e, query)]
    if not chosen:
        near = catalog.suggestions(kind, query or "")
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise CapplanError(f"no {kind} in the catalog matches '{query}'{hint} (`capplan catalog {kind}s` lists "
                           "them all)")
    return [_entry(e) for e in chosen]


def _matches(entry: catalog.Entry, query: str) -> bool:
    wanted = catalog.normal(query)
    return catalog.resolve(entry.kind, query) == entry.id or any(
        wanted in catalog.normal(name) for name in catalog.names(entry))


def _entry(entry: catalog.Entry) -> dict:
    facts = {}
    for name, unit, _heading in FACTS[entry.kind]:
        spec = entry.values.get(name)
        if spec is None:
            facts[name] = None          # not in the catalog: a plan on this entry gives it under inputs:
            continue
        value = units.to_display(units.parse_value(spec.get("value"), unit), unit)
        facts[name] = {"value": value, "unit": unit, "source": spec.get("source", ""),
                       **({"note": spec["note"]} if spec.get("note") else {})}
    out = {"id": entry.id, "name": entry.name, "status": entry.status,
           "aliases": [n for n in catalog.names(entry) if n not in (entry.id, entry.name)], "facts": facts}
    if entry.kind == "model":
        out["attention"] = entry.attention or "gqa"
        out["weights"] = list(entry.weights)
        out["checkpoints"] = {fmt: {"bytes_per_param": units.parse_value(spec.get("value"), "B"),
                                    "checkpoint": spec.get("checkpoint", ""), "source": spec.get("source", "")}
                              for fmt, spec in entry.weights.items()}
    out["file"] = entry.file
    return out


def text(kind: str, rows: list[dict]) -> str:
    """A table of ids, names and facts, then each fact's source under its entry."""
    headings = ["id", "name", *(h for _n, _u, h in FACTS[kind])] + (["attention", "checkpoints"] if kind == "model"
                                                                    else [])
    table = [headings]
    for row in rows:
        cells = [row["id"], row["name"]]
        cells += [_number(row["facts"][name]) for name, _u, _h in FACTS[kind]]
        cells += [row["attention"], ", ".join(row["weights"]) or "—"] if kind == "model" else []
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(headings))]
    numeric = range(2, 2 + len(FACTS[kind]))
    lines = ["  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in table]
    lines.append("")
    lines.append(f"Sources ({rows[0]['file']}):")
    for row in rows:
        also = f" (also: {', '.join(row['aliases'])})" if row["aliases"] else ""
        lines.append(f"{row['id']}{also}")
        for name, _u, _h in FACTS[kind]:
            fact = row["facts"][name]
            lines.append(f"  {name}: {fact['source'] if fact else 'not in the catalog; give it under inputs:'}")
        for fmt, spec in row.get("checkpoints", {}).items():
            lines.append(f"  weights {fmt} ({spec['checkpoint']}, {spec['bytes_per_param']:g} B/param): {spec['source']}")
    return "\n".join(lines) + "\n"


def _number(fact: dict | None) -> str:
    if fact is None:
        return "—"
    return formatting.number(fact["value"])
