"""``candidates:``: the hardware a plan weighs, as a cross product of GPU types,
GPUs per replica (TP), checkpoint formats, KV-cache dtypes and offers.

Which GPU, which parallelism, on which offer: the plan states the forecast and
the SLOs once, and each candidate is the same plan with the GPU's catalog
facts, ``gpus_per_replica``, the weights' and the KV cache's bytes and one
offer's node price in place of the plan's own. :mod:`capplan.analysis.candidates`
evaluates them; this module only reads and expands the section::

    candidates:
      gpus: [h100, h200, b200]           # catalog ids or aliases, or `all`
      tp: [1, 2, 4, 8]                   # gpus_per_replica
      ep: [1, 8]                         # expert-parallel ranks, a mixture-of-experts model only (default: none)
      weights: [bf16, fp8]               # the model's checkpoint formats, or `all` (default: the plan's)
      kv_cache_dtype: [bf16, fp8]        # default: the plan's
      offers:                            # a deployment row and the GPU it rents
        - {name: aws-p5en.48xlarge, gpu: h200, gpus_per_node: 8, node_hourly_cost: 84.8 USD/h,
           as_of: 2026-05-01, source: ...}
      exclude: [{gpu: h100, tp: 1}]      # mappings matched against a candidate's keys
      overrides:                         # inputs set for the candidates a mapping matches
        - {match: {gpu: b200}, set: {hbm_efficiency: 0.8}}
      evidence:                          # sweep or estimate files of other configurations
        - {import: estimates/x-h200-sxm-141gb-tp4.estimate.yaml}
        - {import: [sweeps/h100-tp2/qps_*.json], gpu: h100, tp: 2}

A candidate's keys are ``gpu`` (catalog id), ``tp``, ``weights``,
``kv_cache_dtype`` and ``offer`` (the offer's name), and ``ep`` where the section lists
it: ``ep`` data-parallel attention ranks of ``tp`` GPUs each, the experts split over all
``tp`` x ``ep`` GPUs of the replica (expert parallelism, the model's ``expert_parallel``
switch; ``ep`` 1 is tensor parallelism alone). A GPU no offer rents
gives no candidate; the record names it. A TP the serving engine refuses for
the model (:mod:`capplan.loading.parallel`) is a candidate that is infeasible
with that reason. Under ``topology: disaggregated`` every candidate comes twice,
aggregated and disaggregated (a prefill pool at the plan's
``prefill_gpus_per_replica`` and a decode pool at the candidate's TP, both on its
GPU and offer): one list, ranked on the same forecast. Every bad key or value is one
message naming the file, the key and what is wrong.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field, replace

from capplan.errors import CapplanError
from capplan.loading import catalog, parallel
from capplan.loading.plan import candidate_sweeps
from capplan.loading.plan import inputs as input_reader
from capplan.loading.plan import values
from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import Input
from capplan.names import nearest

SECTION = "candidates"
ESTIMATE = "estimate"      # the sizing whose λ* is the estimate group's (the plan's own and every candidate's)
KEYS = ("gpus", "tp", "ep", "weights", "kv_cache_dtype", "offers", "exclude", "overrides", "evidence", "prefill_gpus")
OFFER_KEYS = ("name", "gpu", "gpus_per_node", "node_hourly_cost", "as_of", "source", "note")
MATCH_KEYS = ("gpu", "tp", "ep", "weights", "kv_cache_dtype", "offer")
OVERRIDE_KEYS = ("match", "set")
# bytes per cached K or V element of each KV-cache dtype vLLM's --kv-cache-dtype takes
AGGREGATED, DISAGGREGATED = "aggregated", "disaggregated"     # the model's topology cases a candidate is ranked as
KV_DTYPES = {"auto": None, "bf16": 2.0, "bfloat16": 2.0, "fp16": 2.0, "float16": 2.0,
             "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0}


def switch(ctx: Context) -> None:
    """``candidates: ranked`` when the plan has ``candidates:``, which brings in the model's
    estimate group (the λ* of a candidate no file measures); no such switch otherwise, so a
    plan without candidates is the same plan (and the same outputs) as before. ``sizing: estimate``
    reads the plan's own λ* from that group, so it needs the section."""
    if ctx.data.get(SECTION) is None:
        if ctx.switches.get("sizing") == ESTIMATE:
            raise ctx.err("sizing: estimate takes λ* from the candidates' throughput estimate, and the plan has no "
                          "candidates: (list its own GPU and an offer there, or use sizing: load_sweep or "
                          "littles_law)", "sizing")
        ctx.switches.pop(SECTION, None)
    else:
        ctx.switches[SECTION] = "ranked"


@dataclass(frozen=True)
class Offer:
    """One offer: a deployment row and the GPU it rents."""

    name: str
    gpu: str                       # catalog id
    gpus_per_node: float
    node_hourly_cost: float        # base units (USD/s)
    as_of: str | None
    source: str | None
    note: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Candidate:
    """One candidate: a GPU, its GPUs per replica, weight and KV formats and an offer."""

    gpu: catalog.Entry
    tp: int
    weights: str | None            # checkpoint format (None: the plan's model lists none)
    kv_cache_dtype: str            # 'auto' keeps the plan's
    offer: Offer
    overrides: tuple[Input, ...] = ()
    weights_label: str = field(default="", compare=False)   # shown when the section weighs several formats
    kv_label: str = field(default="", compare=False)
    evidence: candidate_sweeps.Evidence | None = field(default=None, compare=False)   # files that measure it
    refused: str = field(default="", compare=False)   # why the engine would refuse its TP ('' when it would not)
    topology: str = AGGREGATED     # ranked as one pool, or as prefill and decode pools (topology: disaggregated)
    ep: int | None = None          # expert-parallel ranks (None: the section lists no ep)
    prefill_gpu: str = ""          # the prefill pool's GPU where it is another ('': the candidate's)
    prefill_offer: Offer | None = None   # the offer its prefill pool rents (None: the plan's prefill price or its own)
    prefill_entry: catalog.Entry | None = field(default=None, compare=False)   # that GPU's facts (candidates: prefill_gpus)

    @property
    def keys(self) -> dict[str, object]:
        keys = {"gpu": self.gpu.id, "tp": self.tp, "weights": self.weights, "kv_cache_dtype": self.kv_cache_dtype,
                "offer": self.offer.name}
        return keys if self.ep is None else {**keys, "ep": self.ep}

    @property
    def gpus(self) -> int:
        """GPUs of one replica: ``ep`` ranks of ``tp`` GPUs each."""
        return self.tp * (self.ep or 1)

    @property
    def label(self) -> str:
        """'h200-sxm-141gb TP1' ('TP1 EP8' under expert parallelism; the weight and KV formats when they
        are not the plan's; ', disaggregated' for the prefill and decode pools, ', prefill on h100-sxm5-80gb'
        when the prefill pool's GPU is another, with its offer's name where the section lists prefill_gpus)."""
        extra = "".join(f" {v}" for v in (f"EP{self.ep}" if (self.ep or 1) > 1 else "", self.weights_label,
                                           self.kv_label) if v)
        pools = f", {DISAGGREGATED}" if self.pooled else ""
        offer = f" ({self.prefill_offer.name})" if self.prefill_offer is not None else ""
        prefill = f", prefill on {self.prefill_gpu}{offer}" if self.pooled and self.prefill_gpu else ""
        return f"{self.gpu.id} TP{self.tp}{extra}{pools}{prefill}"

    @property
    def pooled(self) -> bool:
        """Whether the candidate is ranked as a prefill pool and a decode pool."""
        return self.topology == DISAGGREGATED

    @property
    def name(self) -> str:
        return f"{self.label} on {self.offer.name}"


@dataclass(frozen=True)
class Candidates:
    """The expanded section: every candidate, and the GPUs no offer rents."""

    candidates: tuple[Candidate, ...]
    unpriced: tuple[str, ...]
    line: int | None = None

    def __len__(self) -> int:
        return len(self.candidates)


def read(ctx: Context, classes) -> Candidates | None:
    """The candidates, each with its evidence item; ``classes`` (the plan's class mix) is what an item's
    token lengths are compared with."""
    spec = ctx.data.get(SECTION)
    if spec is None:
        return None
    path = (SECTION,)
    if not isinstance(spec, dict):
        raise ctx.err(f"expected a mapping with {', '.join(KEYS)}, got {kind(spec)}", *path)
    for key in spec:
        if key not in KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), KEYS)} (candidates keys: {', '.join(KEYS)})",
                          *path, key)
    if ctx.switches.get("sizing") == "littles_law":
        raise ctx.err("candidates are ranked by their λ* (a measured, transferred or estimated sweep knee), "
                      "which a plan with sizing: littles_law does not have; use sizing: load_sweep, or "
                      "sizing: estimate before any sweep", *path)
    gpus = _gpus(ctx, spec.get("gpus"))
    tps = _tps(ctx, spec.get("tp"))
    eps = _eps(ctx, spec.get("ep"))
    if eps != [None] and spec.get("evidence") is not None:
        raise ctx.err("an evidence item names a GPU and a TP, not an expert-parallel size: beside ep: it would "
                      "stand for every EP of its TP; leave evidence: out of a plan that lists ep:", *path, "evidence")
    weights = _weights(ctx, spec.get("weights"))
    kvs = _kv_dtypes(ctx, spec.get("kv_cache_dtype"))
    offers = _offers(ctx, spec.get("offers"))
    exclude = _matches(ctx, spec.get("exclude"), path + ("exclude",))
    overrides = _overrides(ctx, spec.get("overrides"))
    several_w, several_kv = len(weights) > 1, len(kvs) > 1
    kv_heads = ctx.inputs["kv_heads"].value if "kv_heads" in ctx.inputs else None
    refused = {tp: parallel.refusal(ctx.model_entry, tp, kv_heads) for tp in tps}
    out = []
    for gpu, tp, ep, w, kv in itertools.product(gpus, tps, eps, weights, kvs):
        for offer in (o for o in offers if o.gpu == gpu.id):
            c = Candidate(gpu, tp, w, kv, offer, weights_label=w if several_w else "",
                          kv_label=f"KV {kv}" if several_kv else "", ep=ep)
            if any(_matches_keys(m, c.keys) for m in exclude):
                continue
            given = tuple(i for m, set_ in overrides if _matches_keys(m, c.keys) for i in set_)
            out.append(Candidate(c.gpu, tp, w, kv, offer, given, c.weights_label, c.kv_label, refused=refused[tp],
                                 ep=ep))
    if not out:
        raise ctx.err("no candidate is left: every GPU/offer combination is excluded, or no offer rents "
                      "one of the GPUs listed", *path)
    kv_bytes = {k: v or ctx.inputs["kv_bytes_per_element"].value for k, v in KV_DTYPES.items()}
    out = candidate_sweeps.attach(ctx, spec.get("evidence"), out, ctx.model_entry.weight_format, kv_bytes, classes)
    rented = {o.gpu for o in offers}
    prefill = _prefill_gpus(ctx, spec.get("prefill_gpus"), offers)
    return Candidates(tuple(_by_topology(ctx, out, prefill, offers)), tuple(g.id for g in gpus if g.id not in rented),
                      ctx.doc.line(path))


def _by_topology(ctx: Context, cands: list[Candidate], listed: list[catalog.Entry] | None,
                 offers: list[Offer]) -> list[Candidate]:
    """Under ``topology: disaggregated``, each candidate aggregated and then as prefill and decode pools,
    so that the ranking weighs both on the same forecast (the pools once for each prefill GPU ``listed``,
    on each offer of it, where the section lists them); the candidates as they are otherwise."""
    if ctx.switches.get("topology") != DISAGGREGATED:
        return cands
    if listed is None:
        prefill = catalog.lookup("gpu", str(ctx.data["prefill_gpu"])).id if "prefill_gpu" in ctx.data else ""
        return [replace(c, topology=t, prefill_gpu=prefill if t == DISAGGREGATED else "")
                for c in cands for t in (AGGREGATED, DISAGGREGATED)]
    out = []
    for c in cands:
        out.append(c)
        for gpu in listed:
            out.extend([replace(c, topology=DISAGGREGATED)] if gpu.id == c.gpu.id else
                       [replace(c, topology=DISAGGREGATED, prefill_gpu=gpu.id, prefill_offer=o, prefill_entry=gpu)
                        for o in offers if o.gpu == gpu.id])
    return out


def _prefill_gpus(ctx: Context, raw, offers: list[Offer]) -> list[catalog.Entry] | None:
    """``prefill_gpus:``, the GPUs the candidates' prefill pools may run on, each rented by an offer
    (None where the section lists none)."""
    if raw is None:
        return None
    if ctx.switches.get("topology") != DISAGGREGATED:
        raise ctx.err("lists the prefill pools' GPUs, which only topology: disaggregated has", SECTION, "prefill_gpus")
    gpus = _gpus(ctx, raw, "prefill_gpus")
    for i, gpu in enumerate(gpus):
        if not any(o.gpu == gpu.id for o in offers):
            raise ctx.err(f"no offer rents {gpu.id}: list one under offers: for the prefill pools on it",
                          SECTION, "prefill_gpus", i)
    return gpus


def _list(ctx: Context, raw, key: str, example: str) -> list:
    if raw is None:
        raise ctx.err(f"missing '{key}:' ({example})", SECTION)
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise ctx.err(f"an empty list ({example})", SECTION, key)
    return items


def _gpus(ctx: Context, raw, key: str = "gpus") -> list[catalog.Entry]:
    if raw == "all":
        return catalog.entries("gpu")
    found: list[catalog.Entry] = []
    for i, name in enumerate(_list(ctx, raw, key, "catalog ids or aliases, or all")):
        try:
            entry = catalog.lookup("gpu", str(name))
        except CapplanError as err:
            raise ctx.err(err.message, SECTION, key, i) from None
        if entry not in found:
            found.append(entry)
    return found


def _tps(ctx: Context, raw) -> list[int]:
    if raw is None:
        return [int(ctx.inputs["gpus_per_replica"].value)]
    return _counts(ctx, raw, "tp", "GPUs per replica", "e.g. [1, 2, 4, 8]")


def _eps(ctx: Context, raw) -> list[int | None]:
    """The expert-parallel ranks listed (``[None]`` when the section lists none); the plan's loader
    has refused them already for a dense model (:func:`capplan.loading.plan.document.expert_parallel`)."""
    if raw is None:
        return [None]
    return _counts(ctx, raw, "ep", "expert-parallel ranks", "e.g. [1, 8]")


def _counts(ctx: Context, raw, key: str, what: str, example: str) -> list[int]:
    """The whole numbers of at least 1 listed under ``key`` (``what`` they count), each once in the order given."""
    out = []
    for i, n in enumerate(_list(ctx, raw, key, f"{what}, {example}")):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ctx.err(f"{what} must be a whole number of at least 1, got {kind(n)}", SECTION, key, i)
        out.append(n)
    return list(dict.fromkeys(out))


def _weights(ctx: Context, raw) -> list[str | None]:
    formats = list(ctx.model_entry.weights)
    plan_format = ctx.model_entry.weight_format
    if raw is None:
        return [plan_format]
    if not formats:
        raise ctx.err(f"model '{ctx.model_entry.id}' lists no checkpoint formats in the catalog; leave "
                      f"weights: out (the plan's weight_bytes_per_param holds)", SECTION, "weights")
    if raw == "all":
        return formats
    return _chosen(ctx, raw, "weights", formats, f"the model's formats: {', '.join(formats)}, or all",
                   lambda fmt: f"model '{ctx.model_entry.id}' has no checkpoint format '{fmt}'; known: "
                               f"{', '.join(formats)}")


def _kv_dtypes(ctx: Context, raw) -> list[str]:
    if raw is None:
        return ["auto"]
    return _chosen(ctx, raw, "kv_cache_dtype", KV_DTYPES, f"one of {', '.join(KV_DTYPES)}",
                   lambda dtype: f"unknown KV-cache dtype '{dtype}'{nearest(str(dtype), KV_DTYPES)} (vLLM's "
                                 f"--kv-cache-dtype: {', '.join(KV_DTYPES)})")


def _chosen(ctx: Context, raw, key: str, known, example: str, unknown) -> list[str]:
    """The values listed under ``key``, each once in the order given, every one among ``known``
    (``unknown(value)`` words the refusal of one that is not)."""
    out = []
    for i, value in enumerate(_list(ctx, raw, key, example)):
        if str(value) not in known:
            raise ctx.err(unknown(value), SECTION, key, i)
        out.append(str(value))
    return list(dict.fromkeys(out))


def _offers(ctx: Context, raw) -> list[Offer]:
    rows = _list(ctx, raw, "offers", "rows like a deployment row plus gpu:")
    out: list[Offer] = []
    for i, row in enumerate(rows):
        path = (SECTION, "offers", i)
        if not isinstance(row, dict):
            raise ctx.err(f"an offer is a mapping ({', '.join(OFFER_KEYS)}), got {kind(row)}", *path)
        for key in row:
            if key not in OFFER_KEYS:
                raise ctx.err(f"unknown key '{key}'{nearest(str(key), OFFER_KEYS)} (offer keys: "
                              f"{', '.join(OFFER_KEYS)})", *path, key)
        for key in ("name", "gpu", "gpus_per_node", "node_hourly_cost"):
            if key not in row:
                raise ctx.err(f"missing '{key}:'", *path)
        name = ctx.text(row["name"], *path, "name")
        if any(o.name == name for o in out):
            raise ctx.err(f"two offers are named '{name}'", *path, "name")
        try:
            gpu = catalog.lookup("gpu", str(row["gpu"])).id
        except CapplanError as err:
            raise ctx.err(err.message, *path, "gpu") from None
        cells = {}
        for column in ("gpus_per_node", "node_hourly_cost"):
            q = ctx.model.quantities[f"deployments.{column}"]
            cells[column], _ = values.cell(ctx, row[column], q, q.unit, path + (column,))
        as_of = _date(row.get("as_of"))
        if as_of is False:
            raise ctx.err(f"as_of must be a date (YYYY-MM-DD), got {kind(row.get('as_of'))}", *path, "as_of")
        out.append(Offer(name, gpu, cells["gpus_per_node"], cells["node_hourly_cost"],
                         as_of.isoformat() if as_of else None, ctx.text(row.get("source"), *path, "source"),
                         ctx.text(row.get("note"), *path, "note"), ctx.doc.line(path)))
    return out


def _date(raw) -> dt.date | None | bool:
    """A date as YAML reads it or as quoted text; None when not given, False when not a date."""
    if raw is None or isinstance(raw, dt.date):
        return raw
    try:
        return dt.date.fromisoformat(str(raw))
    except ValueError:
        return False


def _matches(ctx: Context, raw, path: tuple) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ctx.err(f"expected a list of mappings such as {{gpu: h100, tp: 1}}, got {kind(raw)}", *path)
    return [_match(ctx, m, path + (i,)) for i, m in enumerate(raw)]


def _match(ctx: Context, raw, path: tuple) -> dict:
    if not isinstance(raw, dict) or not raw:
        raise ctx.err(f"expected a mapping of candidate keys ({', '.join(MATCH_KEYS)}), got {kind(raw)}", *path)
    out = {}
    for key, value in raw.items():
        if key not in MATCH_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), MATCH_KEYS)} (a candidate's keys: "
                          f"{', '.join(MATCH_KEYS)})", *path, key)
        if key == "gpu":
            try:
                value = catalog.lookup("gpu", str(value)).id
            except CapplanError as err:
                raise ctx.err(err.message, *path, key) from None
        out[key] = value
    return out


def _matches_keys(match: dict, keys: dict) -> bool:
    """Whether a candidate's keys hold every value of ``match`` (``ep`` matches nothing where the section lists none)."""
    return all(keys.get(k) == v or str(keys.get(k)) == str(v) for k, v in match.items())


def _overrides(ctx: Context, raw) -> list[tuple[dict, tuple[Input, ...]]]:
    path = (SECTION, "overrides")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ctx.err(f"expected a list of {{match: {{...}}, set: {{...}}}}, got {kind(raw)}", *path)
    out = []
    for i, item in enumerate(raw):
        where = path + (i,)
        for key in item if isinstance(item, dict) else ():
            if key not in OVERRIDE_KEYS:
                raise ctx.err(f"unknown key '{key}'{nearest(str(key), OVERRIDE_KEYS)} (an override's keys: "
                              f"{', '.join(OVERRIDE_KEYS)})", *where, key)
        if not isinstance(item, dict) or "set" not in item:
            raise ctx.err(f"an override is {{match: {{gpu: b200}}, set: {{input: value}}}}, got {kind(item)}",
                          *where)
        match = _match(ctx, item["match"], where + ("match",)) if item.get("match") is not None else {}
        given = input_reader.read_all(ctx, item["set"], where + ("set",), origin="candidate")
        for name, given_input in given.items():
            if given_input.pinned and name != "instance_max_rate":
                raise ctx.err(f"'{name}' is derived; a candidate may pin only instance_max_rate (its λ*)",
                              *where, "set", name)
        out.append((match, tuple(given.values())))
    return out


_LIST = {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}
_MATCH = {"type": "object", "properties": {k: {} for k in MATCH_KEYS}, "additionalProperties": False}
SCHEMA = {
    "type": "object",
    "description": "The hardware the plan weighs: GPU types × GPUs per replica × checkpoint formats × KV-cache "
                   "dtypes × offers, ranked by the monthly cost of serving the forecast.",
    "properties": {
        "gpus": {**_LIST, "description": "Catalog ids or aliases, or `all`."},
        "tp": {"type": "array", "items": {"type": "integer", "minimum": 1}, "description": "GPUs per replica."},
        "ep": {"type": "array", "items": {"type": "integer", "minimum": 1},
               "description": "Expert-parallel ranks (a mixture-of-experts model): ep ranks of tp GPUs each."},
        "weights": {**_LIST, "description": "The model's checkpoint formats, or `all`."},
        "kv_cache_dtype": {"oneOf": [{"type": "array", "items": {"type": "string", "enum": list(KV_DTYPES)}},
                                     {"type": "string", "enum": list(KV_DTYPES)}]},
        "offers": {"type": "array", "items": {
            "type": "object", "required": ["name", "gpu", "gpus_per_node", "node_hourly_cost"],
            "properties": {k: {} for k in OFFER_KEYS}, "additionalProperties": False}},
        "exclude": {"type": "array", "items": _MATCH},
        "evidence": candidate_sweeps.SCHEMA,
        "prefill_gpus": {**_LIST, "description": "With topology: disaggregated, the GPUs the prefill pools may run "
                                                 "on (catalog ids or aliases), each rented by an offer under offers: "
                                                 "every candidate's pools are weighed with each."},
        "overrides": {"type": "array", "items": {"type": "object", "required": ["set"],
                                                 "properties": {"match": _MATCH, "set": {"type": "object"}},
                                                 "additionalProperties": False}},
    },
    "required": ["gpus", "offers"],
    "additionalProperties": False,
}
