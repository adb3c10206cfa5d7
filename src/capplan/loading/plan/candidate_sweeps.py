"""``candidates: evidence:``: sweep files that measure (or a performance model's estimate files
that predict) candidates other than the plan's own configuration.

One list under the section, not an ``import:`` per candidate: a file is evidence
for a *configuration* (GPU, GPUs per replica, weights, KV dtype), which every
offer renting that GPU shares, so it is written once and matched to the
candidates, and a file that matches none is an error rather than a silent
no-op::

    candidates:
      evidence:
        - {import: estimates/llama-3.3-70b-sharegpt-h200-sxm-141gb-tp4.estimate.yaml}
        - {import: [sweeps/h100-tp2/qps_*.json], gpu: h100, tp: 2}   # vLLM files record no GPU

Each item is read as a ``load_sweep: import:`` is (every format
:mod:`capplan.loading.sweeps` reads, paths confined to the repository,
``select:`` for one series), so its rows pass the same SLO, goodput, error and
delivery checks and the same ``max_before_failure`` cutoff as the plan's own
sweep (:mod:`capplan.analysis.candidates` evaluates the model's ``load_sweep``
formulas on them). ``gpu``, ``tp``, ``weights`` and ``kv_cache_dtype`` give the
configuration the files ran on where they do not record it (an estimate file
records all four; a vLLM result only the model and TP); the plan's weights and
KV dtype where neither does. Refused, each naming the file and key: a file of
another model, a recorded GPU, TP, weights or KV dtype that contradicts the
item's, an item that matches no candidate, and two items for one candidate.
Files whose mean token lengths (an estimate file's ISL/OSL) lie more than 25 %
from the plan's class mix get the token-mix warning the plan's own sweep gets,
beside the candidate's evidence.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading import sweeps as sweep_import
from capplan.loading.plan import tables
from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import TableData
from capplan.loading.sweeps import estimate
from capplan.loading.sweeps.evidence import other_model, recorded, token_warning
from capplan.names import nearest

KEYS = ("import", "select", "gpu", "tp", "weights", "kv_cache_dtype", "source")
CONFIG = ("gpu", "tp", "weights", "kv_cache_dtype")
MEASURED, ESTIMATED = "measured", "estimated"


@dataclass(frozen=True)
class Evidence:
    """One ``evidence:`` item: its files, its load_sweep rows and the configuration they ran on."""

    index: int                     # position in candidates.evidence
    table: TableData               # the rows, in base units, as the plan's load_sweep holds them
    gpu: str                       # catalog id
    tp: int
    weights: str | None
    kv_bytes: float
    kind: str                      # measured (a benchmark) or estimated (a performance model's predictions)
    tool: str = ""                 # the estimating tool and its database ('' for a benchmark)
    source: str | None = None
    line: int | None = None
    note: str = ""                 # the token-mix warning when the files' token lengths are far from the plan's

    @property
    def files(self) -> tuple[sweep_import.SweepFile, ...]:
        return self.table.imported

    @property
    def tag(self) -> str:
        """'measured', or 'estimated by aiconfigurator': the tool by name, its release said once
        where the record lists the evidence (:attr:`tool`)."""
        return f"{self.kind} by {self.tool_name}" if self.tool else self.kind

    @property
    def tool_name(self) -> str:
        """The estimating tool's name without its release ('aiconfigurator')."""
        return self.tool.split()[0].rstrip(",") if self.tool else ""

    @property
    def names(self) -> str:
        return ", ".join(f.path for f in self.files)


def sweep_switches(switches: dict[str, str]) -> dict[str, str]:
    """The switches an evidence file is read and evaluated under: its rows are a load sweep's whatever
    the plan's own sizing (a plan with ``sizing: estimate`` has no sweep, yet may import files of its
    candidates, ``capplan estimate``'s among them)."""
    return {**switches, "sizing": "load_sweep"}


def attach(ctx: Context, raw, cands: list, plan_format: str | None, kv_bytes: dict, classes) -> list:
    """The candidates with each one's evidence item (``None`` where no file covers it); an item whose
    token lengths lie far from ``classes`` (the plan's class mix) carries the warning a sweep gets."""
    if raw is None:
        return cands
    path = ("candidates", "evidence")
    if not isinstance(raw, list):
        raise ctx.err(f"expected a list of {{import: <files>, gpu: ..., tp: ...}}, got {kind(raw)}", *path)
    out = list(cands)
    for i, item in enumerate(raw):
        ev = _read(ctx, item, path + (i,), plan_format, kv_bytes, classes)
        matched = [k for k, c in enumerate(out) if _covers(ev, c, plan_format, kv_bytes)]
        if not matched:
            raise ctx.err(f"{ev.names}: no candidate is {ev.gpu} TP{ev.tp} with weights {ev.weights or 'the plan’s'} "
                          f"and a KV cache of {ev.kv_bytes:g} B an element; add the configuration to the candidates "
                          "or remove the file", *path, i, "import")
        for k in matched:
            if out[k].evidence is not None:
                raise ctx.err(f"{ev.names}: candidate {out[k].label} already has evidence ({out[k].evidence.names}); "
                              "name each configuration's files once", *path, i, "import")
            out[k] = replace(out[k], evidence=ev)
    return out


def _covers(ev: Evidence, c, plan_format: str | None, kv_bytes: dict) -> bool:
    return (c.gpu.id == ev.gpu and c.tp == ev.tp and (c.weights or plan_format) == ev.weights
            and (kv_bytes.get(c.kv_cache_dtype) or kv_bytes["auto"]) == ev.kv_bytes)


def _read(ctx: Context, item, path: tuple, plan_format: str | None, kv_bytes: dict, classes) -> Evidence:
    if not isinstance(item, dict) or "import" not in item:
        raise ctx.err(f"an evidence item is {{import: <files>, gpu: ..., tp: ...}}, got {kind(item)}", *path)
    for key in item:
        if key not in KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), KEYS)} (evidence keys: {', '.join(KEYS)})", *path, key)
    given = {k: str(item[k]) for k in CONFIG if item.get(k) is not None}
    if "gpu" in given:
        try:
            given["gpu"] = catalog.lookup("gpu", given["gpu"]).id
        except CapplanError as err:
            raise ctx.err(err.message, *path, "gpu") from None
    if "kv_cache_dtype" in given and given["kv_cache_dtype"] not in kv_bytes:
        raise ctx.err(f"unknown KV-cache dtype '{given['kv_cache_dtype']}' (one of {', '.join(kv_bytes)})",
                      *path, "kv_cache_dtype")
    # read as the load_sweep import of a plan on the files' GPU (an estimate file must predict the GPU it is for)
    reader = copy.copy(ctx)
    reader.data = {**ctx.data, "gpu": _estimated_gpu(ctx, item) or given.get("gpu") or ctx.data.get("gpu")}
    reader.switches = sweep_switches(ctx.switches)
    reader.active = set(ctx.model.active(reader.switches))
    table = tables.read(reader, "load_sweep", {k: item[k] for k in ("import", "select") if k in item}, path)
    points = list(table.runs) or [p for f in table.imported for p in f.points]
    wrong = other_model(points, ctx.model_entry)
    if wrong:
        raise ctx.err(f"{_names(table)} measured {wrong}: it is no evidence for this plan's candidates", *path, "import")
    found = recorded(points)       # one value each: the import holds one series (one configuration)
    config = {}
    for key in CONFIG:
        values = found[key]
        if values and key in given and str(values[0]) != given[key]:
            raise ctx.err(f"{_names(table)} record{'s' if len(table.imported) == 1 else ''} {key} {values[0]}, which "
                          f"contradicts the {key}: {given[key]} given here", *path, key)
        config[key] = str(values[0]) if values else given.get(key)
    for key in ("gpu", "tp"):
        if config[key] is None:
            raise ctx.err(f"{_names(table)} do not record the {key} they ran on; give {key}: here", *path)
    if not config["tp"].isdigit() or int(config["tp"]) < 1:
        raise ctx.err(f"GPUs per replica must be a whole number of at least 1, got '{config['tp']}'", *path, "tp")
    estimated = any(f.format == estimate.FORMAT for f in table.imported)   # one series: all or none (imports)
    tool = next((f.release.split(" (")[0] for f in table.imported if f.format == estimate.FORMAT), "")
    kv = config["kv_cache_dtype"] or "auto"
    return Evidence(path[-1], table, config["gpu"], int(config["tp"]), config["weights"] or plan_format,
                    kv_bytes.get(kv) or kv_bytes["auto"], ESTIMATED if estimated else MEASURED, tool,
                    ctx.text(item.get("source"), *path, "source"), ctx.doc.line(path),
                    token_warning(points, classes))


def _estimated_gpu(ctx: Context, item: dict) -> str | None:
    """The GPU an estimate file among the item's files predicts (None when none is one, or it cannot be read:
    reading the item as an import then says what is wrong, located)."""
    patterns = item["import"] if isinstance(item["import"], list) else [item["import"]]
    try:
        files = sweep_import.read_sweep(ctx.path.parent, [str(p) for p in patterns], ctx.model.slos)
    except CapplanError:
        return None
    gpus = recorded([p for f in files if f.format == estimate.FORMAT for p in f.points])["gpu"]
    return gpus[0] if len(gpus) == 1 else None


def _names(table: TableData) -> str:
    return ", ".join(f.path for f in table.imported)


SCHEMA = {"type": "array", "description": "Sweep or estimate files for candidates other than the plan's own "
                                          "configuration, each with the configuration it ran on where the files "
                                          "do not record it.",
          "items": {"type": "object", "required": ["import"], "additionalProperties": False,
                    "properties": {"import": {"oneOf": [{"type": "string"},
                                                        {"type": "array", "items": {"type": "string"}}]},
                                   "select": {"type": "object"}, "gpu": {"type": "string"},
                                   "tp": {"type": "integer", "minimum": 1},
                                   "weights": {"type": "string"}, "kv_cache_dtype": {"type": "string"},
                                   "source": {"type": "string"}}}}
