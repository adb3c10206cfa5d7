"""Fold replicated runs at one arrival rate into one sweep row.

A team runs each rate several times; the row capplan sizes from is the median
of the runs, with the median absolute deviation beside it so the record shows
how much the runs disagreed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from capplan.loading.sweeps.delivery import delivery_text
from capplan.loading.sweeps.goodput import compliant_share
from capplan.loading.sweeps.points import SweepPoint


@dataclass(frozen=True)
class SweepRow:
    """Replicates at one arrival rate combined: medians and MADs."""

    arrival_rate: float
    latency: dict[str, float]      # SLO column -> median over the runs
    spread: dict[str, float]       # SLO column -> MAD over the runs
    output_throughput: float
    runs: int
    completed: int
    failed: int
    sent: int
    achieved_rate: float
    files: tuple[str, ...]
    goodput_share: float | None = None   # median over the runs with per-request data
    unmeasured: bool = False             # no run completed a request: the latency cells are 0, not measured

    def table_row(self, slos) -> dict:
        """The row of the plan's ``load_sweep`` table: its columns (one per SLO
        and its MAD), and a note that says in words what the point delivered."""
        row = {"arrival_rate": self.arrival_rate,
               **{s.column: self.latency[s.column] for s in slos},
               "output_throughput": self.output_throughput, "completed": self.completed,
               "failed": self.failed, "sent": self.sent, "achieved_rate": self.achieved_rate,
               "runs": self.runs, **{s.spread: self.spread[s.column] for s in slos}}
        if self.goodput_share is not None:
            row["goodput_share"] = self.goodput_share
        note = delivery_text(row)
        if self.unmeasured:
            note += ("; no request completed, so no latency was measured (the latency cells show 0): "
                     "the point fails because it delivered nothing")
        return {**row, "note": note}


def _median(values: list[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def _mad(values: list[float], centre: float) -> float:
    """Unscaled median absolute deviation (inf - inf counts as 0)."""
    deviations = [0.0 if v == centre else abs(v - centre) for v in values]
    return _median(deviations)


def combine_replicates(points: Iterable[SweepPoint], limits: dict[str, float] | None = None) -> list[SweepRow]:
    """Group by arrival_rate (open-loop only: math.inf points are excluded here),
    median + MAD, sorted by rate; with SLO ``limits`` (see
    :func:`~capplan.loading.sweeps.goodput.compliant_share`) the median goodput
    share of the runs that keep per-request data.

    The MAD is the raw median of |x - median| (not scaled by 1.4826); one run
    gives 0. A run that completed no request measured no latency (inf): the
    medians are over the runs that did, and a rate where none did shows 0 and
    says so in its note; it fails on delivery (completed / sent is 0). ``completed``, ``failed`` and ``sent`` are summed over the runs;
    ``achieved_rate`` is the median of the runs that measured it (0 if none
    did); ``files`` lists the distinct files in the order the points came.
    """
    groups: dict[float, list[SweepPoint]] = {}
    for point in points:
        rate = float(point.arrival_rate)
        if not math.isfinite(rate):
            continue
        groups.setdefault(rate, []).append(point)
    rows = []
    for rate in sorted(groups):
        group = groups[rate]
        latency, spread = {}, {}
        for name in group[0].latency:       # a run that completed nothing has inf: it measured no latency
            values = [float(p.latency[name]) for p in group if math.isfinite(p.latency[name])]
            latency[name] = _median(values) if values else 0.0
            spread[name] = _mad(values, latency[name]) if values else 0.0
        measured = [p.achieved_rate for p in group if p.achieved_rate > 0]
        shares = [s for s in (compliant_share(p, limits) for p in group) if s is not None] if limits else []
        rows.append(SweepRow(
            arrival_rate=rate, latency=latency, spread=spread,
            output_throughput=_median([float(p.output_throughput) for p in group]),
            runs=len(group),
            completed=sum(p.completed for p in group),
            failed=sum(p.failed for p in group),
            sent=sum(p.sent for p in group),
            achieved_rate=_median(measured) if measured else 0.0,
            files=tuple(dict.fromkeys(p.file for p in group)),
            goodput_share=_median(shares) if shares else None,
            unmeasured=not any(math.isfinite(v) for p in group for v in p.latency.values()),
        ))
    return rows
