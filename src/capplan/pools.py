"""``capplan pools PLAN FILE...``: the pools' measured rates from a disaggregated benchmark's sweep.

A disaggregated benchmark (vLLM's ``benchmarks/disagg_benchmarks``: x prefill and y decode
instances behind a proxy, swept with ``benchmark_serving.py`` at several request rates, one
``--save-result`` file a rate) offers every rate to both pools at once. Each pool gives way at
its own SLO: the prefill pool's queue shows in the TTFT, the decode pool's batch in the TPOT.
So the highest rate, below the first that misses, whose TTFT percentiles meet the plan's TTFT
SLOs bounds the prefill pool, λ*_P = that rate / x, and the highest whose TPOT percentiles meet
the TPOT SLOs the decode pool, λ*_D = that rate / y. A point that did not deliver its load
(completed or achieved under ``min_delivered_share``) fails both: the files cannot tell which
pool saturated. A pool that meets its SLO at the sweep's highest rate never gave way: its rate
is a lower bound, not the knee, and the output says so.

The files are read by the sweep importers (any format they know, percentiles computed from the
per-request arrays where the summary lacks them; replicated runs at one rate combined as an
import combines them), and the result is the ``inputs:`` block a plan pastes, as ``validate
--fit`` prints its block: ``prefill_measured_rate`` and ``decode_measured_rate``, tagged
measurement, the files and their SHA-256 their source. The plan stays declarative: it states
the rates; no build reads these files. Nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from capplan.analysis import pipeline
from capplan.errors import CapplanError
from capplan.language import units
from capplan.language.model import standard_model
from capplan.loading import sweeps as sweep_import
from capplan.loading.sweeps import evidence, files as sweep_files

# (pool, metric whose SLOs bound it, the plan input it measures, its symbol, the metadata key of its size)
POOLS = (("prefill", "ttft", "prefill_measured_rate", "λ*_P", "prefill_replicas"),
         ("decode", "tpot", "decode_measured_rate", "λ*_D", "decode_replicas"))


@dataclass(frozen=True)
class Pool:
    """One pool's rate as the sweep measured it."""

    name: str                    # 'prefill'
    input: str                   # 'prefill_measured_rate'
    symbol: str                  # 'λ*_P'
    slos: str                    # 'TTFT p95 ≤ 1000 ms'
    replicas: int                # the pool's size in the benchmark
    sweep_rate: float            # req/s the whole sweep carried within the pool's SLOs
    first_missed: float | None   # the lowest rate that missed them (None: none did)
    source: str

    @property
    def rate(self) -> float:
        """A replica's rate: the sweep's over the pool's replicas."""
        return self.sweep_rate / self.replicas

    @property
    def lower_bound(self) -> bool:
        return self.first_missed is None


@dataclass(frozen=True)
class Pools:
    plan: str
    files: tuple[tuple[str, str, str], ...]     # (path as given, tool, SHA-256)
    pools: tuple[Pool, ...]
    holds: str                   # the configuration the rates hold for, from the plan
    notes: tuple[str, ...]       # files of another model; an aggregated plan


def run(plan_path: Path, paths: list[Path], sizes: dict[str, int | None]) -> Pools:
    """Read the plan's SLOs and the files, and measure each pool; ``sizes`` maps each pool's
    metadata key to its size given on the command line (None: the files must record it)."""
    plan = pipeline.load_plan(plan_path)
    model = standard_model().with_slos(plan.slos)
    inputs = plan.nominal.inputs
    read = sweep_files.read_named(paths, model.slos)
    named = [(str(path), p) for path, f in zip(paths, read) for p in f.points]
    rows = sweep_import.combine_replicates([p for _, p in named])
    if not rows:
        raise CapplanError("no open-loop run (a request rate) in the files: a pool's rate is the highest "
                           "request rate within its SLO, which a closed burst or loop does not offer",
                           file=", ".join(map(str, paths)))
    share = float(inputs["min_delivered_share"].value if "min_delivered_share" in inputs
                  else model.quantities["min_delivered_share"].default)
    files = tuple((str(p), " ".join(f.tool).strip(), f.sha256) for p, f in zip(paths, read))
    pools = []
    for name, metric, field, symbol, key in POOLS:
        # every plan has a TTFT and a TPOT SLO (the model's default percentile where it names none)
        slos = [(s, units.to_display(inputs[s.limit].value, s.unit)) for s in model.slos if s.metric == metric]
        replicas = sizes.get(key) or _recorded(named, key, name)
        passed = [_meets(r, slos, share) for r in rows]
        pools.append(_pool(name, field, symbol, slos, replicas, rows, passed, files))
    notes = tuple(f"{path}: measured {wrong}" for path, f in zip(paths, read)
                  if (wrong := evidence.other_model(list(f.points), plan.model_entry)))
    return Pools(plan.file, files, tuple(pools), *_configuration(plan, notes))


def _configuration(plan, notes: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """What the rates hold for (a measured rate stays with the pools it ran: the model's
    prefill_measured_rate and decode_measured_rate say which), and the notes with one for an
    aggregated plan, which takes neither input."""
    inputs = plan.nominal.inputs
    if "prefill_gpus_per_replica" not in inputs:
        return "", notes + ("the plan is aggregated: these inputs take effect under topology: disaggregated, "
                            "for pools of the configuration the sweep ran",)
    prefill, decode = (round(inputs[k].value) for k in ("prefill_gpus_per_replica", "gpus_per_replica"))
    return (f"they hold for the plan's pools as the sweep must have run them: prefill on "
            f"{plan.prefill_gpu or plan.gpu.id}, prefill_gpus_per_replica {prefill}; decode on {plan.gpu.id}, "
            f"gpus_per_replica {decode}; the plan's model {plan.model_entry.id} and weights"), notes


def _recorded(named: list, key: str, pool: str) -> int:
    """The pool size every file records (``--metadata prefill_replicas=N``), refused where one records
    none or the files disagree."""
    found = {path: dict(p.config).get(key) for path, p in named}
    lacking = next((path for path, value in found.items() if value is None), None)
    if lacking is not None:
        raise CapplanError(f"the sweep records no {pool} pool size (vllm bench serve --metadata {key}=N) and "
                           f"--{key.replace('_', '-')} is not given: the rate it carried is divided among them",
                           file=lacking, key=key)
    values = sorted({json.loads(v) for v in found.values()}, key=str)
    if len(values) > 1:
        raise CapplanError(f"the files record {' and '.join(map(str, values))} {pool} replicas: a sweep measures "
                           "one pool size; give each size's files separately", file=", ".join(found), key=key)
    size = str(values[0])
    if not size.isdigit() or int(size) < 1:
        raise CapplanError(f"a pool size is a whole number of replicas, at least 1, got {json.dumps(values[0])}",
                           file=next(iter(found)), key=key)
    return int(size)


def _meets(row, slos, share: float) -> bool:
    """The row meets every one of ``slos`` (SLO, limit in its display unit) and delivered its load."""
    completed = row.completed / row.sent if row.sent else 1.0
    achieved = row.achieved_rate / row.arrival_rate if row.achieved_rate else 1.0
    return (not row.unmeasured and all(row.latency[s.column] <= limit for s, limit in slos)
            and completed >= share and achieved >= share)


def _pool(name, field, symbol, slos, replicas, rows, passed, files) -> Pool:
    """The pool's rate: the highest before the first row that misses ``slos``."""
    first = next((k for k, ok in enumerate(passed) if not ok), None)
    text = ", ".join(f"{s.text} ≤ {limit:g} {s.unit}" for s, limit in slos)
    if first == 0:
        raise CapplanError(f"the {name} pool misses {text} already at the sweep's lowest rate, "
                           f"{rows[0].arrival_rate:g} req/s: the sweep measures no rate for it (sweep lower "
                           "rates)", file=", ".join(path for path, _, _ in files))
    last = rows[-1 if first is None else first - 1].arrival_rate
    missed = None if first is None else rows[first].arrival_rate
    digests = "; ".join(f"{Path(path).name} (sha256 {digest})" for path, _, digest in files)
    how = (f"missed at {missed:g} req/s" if missed is not None else
           "met at the sweep's highest rate, so a lower bound, not the knee")
    source = (f"capplan pools: a disaggregated sweep of {replicas} {name} replica(s), {text} met up to "
              f"{last:g} req/s, {how}; {last:g} / {replicas} a replica; {files[0][1]}: {digests}")
    return Pool(name, field, symbol, text, replicas, last, missed, source)


def text(found: Pools) -> str:
    """Each pool's rate in words, then the ``inputs:`` block to paste."""
    lines = [f"capplan pools: {found.plan}"]
    lines += [f"  {path} ({tool}, sha256 {digest})" for path, tool, digest in found.files]
    for pool in found.pools:
        size = f"{pool.replicas} replica{'s' if pool.replicas != 1 else ''}"
        if pool.lower_bound:
            lines.append(f"{pool.name} pool ({size}): {pool.slos} met at every rate up to the sweep's highest, "
                         f"{pool.sweep_rate:g} req/s: {pool.symbol} ≥ {pool.sweep_rate:g} / {pool.replicas} = "
                         f"{_rate(pool.rate)} req/s, a lower bound (the pool never missed its SLO: sweep higher "
                         "rates to measure its knee)")
        else:
            lines.append(f"{pool.name} pool ({size}): {pool.slos} met up to {pool.sweep_rate:g} req/s, missed at "
                         f"{pool.first_missed:g} req/s: {pool.symbol} = {pool.sweep_rate:g} / {pool.replicas} = "
                         f"{_rate(pool.rate)} req/s")
    lines += [found.holds] if found.holds else []
    lines += [f"note: {note}" for note in found.notes]
    lines += ["", "inputs:"]
    for pool in found.pools:
        lines += [f"  {pool.input}:", f"    value: {_rate(pool.rate)} req/s", "    tag: measurement",
                  f"    source: {json.dumps(pool.source, ensure_ascii=False)}"]
    return "\n".join(lines) + "\n"


def as_json(found: Pools) -> dict:
    return {"plan": found.plan,
            "files": [{"path": p, "tool": t, "sha256": d} for p, t, d in found.files],
            "pools": [{"pool": p.name, "input": p.input, "slos": p.slos, "replicas": p.replicas,
                       "sweep_rate": p.sweep_rate, "first_missed": p.first_missed, "rate": p.rate,
                       "lower_bound": p.lower_bound, "source": p.source} for p in found.pools],
            "holds_for": found.holds, "notes": list(found.notes)}


def _rate(value: float) -> str:
    """A rate to 4 significant digits, as a plan writes it."""
    return f"{value:.4g}"
