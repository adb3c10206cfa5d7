"""Does an imported sweep measure the deployment the plan sizes?

A benchmark of another model or another parallelism says little about this
plan's λ*, and a token mix far from the plan's class mix measures other
requests. The files record what they measured (vLLM: ``model_id``,
``tensor_parallel_size``, ``pipeline_parallel_size``, token totals; GuideLLM
0.8: the backend's model and token counts), and :func:`match_plan` compares
it with the plan:

* a model that is not the plan's (through the catalog's ids, names,
  ``hf_id`` and aliases, so ``meta-llama/Llama-3.1-8B-Instruct`` is
  ``llama-3.1-8b``), or a TP x PP other than ``gpus_per_replica``, is an
  error naming both, unless the table declares the sweep
  ``transferred: {ratio: R, reason: ...}``: then the rates are scaled by R
  (the plan's deployment serves R times the benchmarked rate) and the
  record says so;
* a mean prompt or output length more than 25 % from the class mix's (an
  estimate file's ISL/OSL too) is a warning in the record with both numbers,
  for the plan's own sweep and for a candidate's evidence (:func:`token_warning`).

What each file measured is listed with it in the record's evidence. No
result file records the GPU or the server's engine version (vLLM's and
GuideLLM's results record neither), so neither can be compared; the
evidence says so.
"""

from __future__ import annotations

import json
from dataclasses import replace

from capplan.loading import catalog
from capplan.loading.sweeps.fields import short

TOKEN_TOLERANCE = 0.25      # the share by which a benchmark's mean token lengths may differ from the plan's


def match_plan(tables: dict, raw: dict, entry: catalog.Entry, inputs: dict, err) -> None:
    """Compare the imported ``load_sweep`` of ``tables`` (read from the plan's ``raw`` tables) with the plan's
    model ``entry``, ``gpus_per_replica`` and class mix; record what was measured and warn in the table's note.
    ``err(message, *path)`` makes the located error."""
    data = tables.get("load_sweep")
    spec = raw.get("load_sweep") if isinstance(raw, dict) else None
    given = spec.get("transferred") if isinstance(spec, dict) else None
    path = ("tables", "load_sweep")
    if data is None or not data.imported:
        if given is not None:
            raise err("transferred: declares imported benchmark files as evidence from another deployment; this "
                      "table has no import:", *path, "transferred")
        return
    transferred = _transferred(given, err, path) if given is not None else None
    points = list(data.runs) or [p for f in data.imported for p in f.points]     # the series the rows combine
    wrong = mismatches(points, entry, round(inputs["gpus_per_replica"].value))
    if wrong and transferred is None:
        raise err(f"the imported sweep measured {'; '.join(wrong)}: it is no evidence for this plan. Import "
                  "runs of the plan's deployment, or declare the sweep transferred: {ratio: R, reason: ...} (the "
                  "plan's deployment serves R times the benchmarked rate, and why)", *path, "import")
    notes = []
    if transferred is not None:
        ratio, reason = transferred
        for row in data.rows:
            for key in ("arrival_rate", "achieved_rate"):
                if key in row:
                    row[key] *= ratio
        notes.append(f"Transferred evidence: {'; '.join(wrong) or 'the benchmarked deployment'}; the "
                     f"benchmarked rates are scaled by {short(ratio)} ({reason}).")
    warning = token_warning(points, tables.get("classes"))
    if warning:
        notes.append(warning)
    data.imported = tuple(replace(f, evidence=f.evidence or _measured(f)) for f in data.imported)
    if notes:
        data.note = " ".join(([data.note] if data.note else []) + notes)


def _transferred(given, err, path) -> tuple[float, str]:
    ratio = given.get("ratio") if isinstance(given, dict) else None
    reason = given.get("reason") if isinstance(given, dict) else None
    if (not isinstance(given, dict) or set(given) != {"ratio", "reason"} or isinstance(ratio, bool)
            or not isinstance(ratio, (int, float)) or not 0 < ratio < 1e6 or not isinstance(reason, str)
            or not reason.strip()):
        raise err("expected transferred: {ratio: R, reason: ...}: R > 0, the rate the plan's deployment serves per "
                  "benchmarked req/s, and the reason in words", *path, "transferred")
    return float(ratio), reason.strip()


def _values(points, key: str) -> list:
    """The distinct values the runs record for a configuration key."""
    found = [json.loads(dict(p.config)[key]) for p in points if key in dict(p.config)]
    return list(dict.fromkeys(v for v in found if v is not None))


def mismatches(points, entry: catalog.Entry, gpus: int) -> list[str]:
    out = []
    wrong = other_model(points, entry)
    if wrong:
        out.append(wrong)
    tp, pp = _values(points, "tensor_parallel_size"), _values(points, "pipeline_parallel_size")
    sizes = {int(t) * int(p) for t in (tp or [1]) for p in (pp or [1])} if tp or pp else set()
    if sizes and sizes != {gpus}:
        out.append(f"{' or '.join(map(str, sorted(sizes)))} GPUs per replica (tensor_parallel_size "
                   f"{'/'.join(map(str, tp or [1]))} x pipeline_parallel_size {'/'.join(map(str, pp or [1]))}), "
                   f"not the plan's gpus_per_replica {gpus}")
    return out


def _same_model(name: str, entry: catalog.Entry) -> bool:
    """The benchmarked model is the plan's: the same catalog entry, or one of the entry's names."""
    return catalog.resolve("model", name) == entry.id or catalog.normal(name) in {
        catalog.normal(n) for n in catalog.names(entry)}


def token_warning(points, classes) -> str:
    """The warning (or '') for runs whose mean prompt or output tokens lie more than ±25 % from the class
    mix's (``classes``, the plan's table): the plan's own import and a candidate's evidence both get it.
    A run weighs by its completed requests; an estimate's point, which sent none, by one (each point of
    an estimate file is predicted for the same ISL/OSL)."""
    measured = [(p.tokens, p.completed or 1) for p in points if p.tokens]
    if not measured or classes is None:
        return ""
    estimated = all(p.completed == 0 for p in points if p.tokens)
    total = sum(n for _, n in measured)
    bench = [sum(t[i] * n for t, n in measured) / total for i in (0, 1)]
    off = [(name, b, m) for name, b, m in zip(("prompt", "output"), bench, mix_means(classes.rows))
           if m > 0 and abs(b - m) > TOKEN_TOLERANCE * m]
    if not off:
        return ""
    return (f"⚠ Token mix: the {'estimate' if estimated else 'benchmark'}'s requests averaged " + " and ".join(
        f"{b:,.0f} {name} tokens against the plan's class mix {m:,.0f} ({(b - m) / m:+,.0%})" for name, b, m in off)
        + f", more than ±{TOKEN_TOLERANCE:.0%}: its latencies {'predict' if estimated else 'measure'} other "
          "requests than the plan's.")


def mix_means(rows) -> list[float]:
    """The class mix's mean prompt and output tokens per request (the rows weighted by their weights):
    what a benchmark's token lengths are compared with, and what ``capplan estimate`` asks the tool for."""
    weights = sum(r["weight"] for r in rows) or 1
    return [sum(r["weight"] * r[c] for r in rows) / weights for c in ("prompt_tokens", "output_tokens")]


def _span(values: list[float]) -> str:
    """'213' or '200-230': the range of a mean over the runs."""
    low, high = f"{min(values):,.0f}", f"{max(values):,.0f}"
    return low if low == high else f"{low}-{high}"


def _measured(f) -> tuple[str, ...]:
    """What a file says it measured, for the record's evidence."""
    parts = []
    for key, label in (("model_id", "model"), ("tensor_parallel_size", "tensor parallel"),
                       ("pipeline_parallel_size", "pipeline parallel"), ("max_concurrency", "client max_concurrency")):
        values = _values(f.points, key)
        if values:
            parts.append(f"{label} {', '.join(map(str, values))}")
    tokens = [p.tokens for p in f.points if p.tokens]
    if tokens:
        prompt, output = (_span([t[i] for t in tokens]) for i in (0, 1))
        parts.append(f"mean {prompt} prompt and {output} output tokens per request")
    return (f"measured: {'; '.join(parts) or 'no model, parallelism or token counts recorded'}; GPU and engine "
            "version not recorded in the file",)



RECORDED = {"gpu": "gpu", "weights": "weight_dtype", "kv_cache_dtype": "kv_cache_dtype"}


def recorded(points) -> dict[str, list]:
    """What the runs record of the configuration they ran on, by a candidate's key (``tp``: tensor x
    pipeline parallel; ``gpu``, ``weights``, ``kv_cache_dtype`` where an estimate file names them):
    the distinct values, empty where no run records one."""
    tp, pp = _values(points, "tensor_parallel_size"), _values(points, "pipeline_parallel_size")
    out = {key: [str(v) for v in _values(points, field)] for key, field in RECORDED.items()}
    out["tp"] = sorted({int(t) * int(p) for t in (tp or [1]) for p in (pp or [1])}) if tp or pp else []
    return out


def other_model(points, entry: catalog.Entry) -> str:
    """'' when every run served the model of ``entry``, else what they served and the plan's model (its
    Hugging Face id; for a config.json without a name, how to name it), in words."""
    wrong = [str(m) for m in _values(points, "model_id") if not _same_model(str(m), entry)]
    if not wrong:
        return ""
    if entry.hf_id:
        ours = f" ({entry.hf_id})"
    elif entry.status == "config":
        ours = f" (name the model beside its file: model: {{config: {entry.file}, name: <its Hugging Face id>}})"
    else:
        ours = ""
    return f"model {', '.join(wrong)}, not the plan's {entry.id}{ours}"
