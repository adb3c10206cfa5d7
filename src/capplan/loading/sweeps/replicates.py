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
from capplan.loading.sweeps.points import SweepPoint


@dataclass(frozen=True)
class SweepRow:
    """Replicates at one arrival rate combined: medians and MADs."""

    arrival_rate: float
    ttft_p95: float
    tpot_p95: float
    e2e_p99: float
    output_throughput: float
    ttft_p95_mad: float
    tpot_p95_mad: float
    e2e_p99_mad: float
    runs: int
    completed: int
    failed: int
    sent: int
    achieved_rate: float
    files: tuple[str, ...]

    def table_row(self) -> dict:
        """The row of the plan's ``load_sweep`` table: its columns, and a note
        that says in words what the point delivered."""
        row = {name: getattr(self, name) for name in TABLE_COLUMNS}
        return {**row, "note": delivery_text(row)}


TABLE_COLUMNS = ("arrival_rate", "ttft_p95", "tpot_p95", "e2e_p99", "output_throughput",
                 "completed", "failed", "sent", "achieved_rate", "runs",
                 "ttft_p95_mad", "tpot_p95_mad", "e2e_p99_mad")


def _median(values: list[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def _mad(values: list[float], centre: float) -> float:
    """Unscaled median absolute deviation (inf - inf counts as 0)."""
    deviations = [0.0 if v == centre else abs(v - centre) for v in values]
    return _median(deviations)


def combine_replicates(points: Iterable[SweepPoint]) -> list[SweepRow]:
    """Group by arrival_rate (open-loop only: math.inf points are excluded here),
    median + MAD, sorted by rate.

    The MAD is the raw median of |x - median| (not scaled by 1.4826); one run
    gives 0. ``completed``, ``failed`` and ``sent`` are summed over the runs;
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
        stats = {}
        for name in ("ttft_p95", "tpot_p95", "e2e_p99", "output_throughput"):
            values = [float(getattr(p, name)) for p in group]
            stats[name] = _median(values)
            stats[name + "_mad"] = _mad(values, stats[name])
        measured = [p.achieved_rate for p in group if p.achieved_rate > 0]
        rows.append(SweepRow(
            arrival_rate=rate,
            ttft_p95=stats["ttft_p95"], tpot_p95=stats["tpot_p95"],
            e2e_p99=stats["e2e_p99"], output_throughput=stats["output_throughput"],
            ttft_p95_mad=stats["ttft_p95_mad"], tpot_p95_mad=stats["tpot_p95_mad"],
            e2e_p99_mad=stats["e2e_p99_mad"],
            runs=len(group),
            completed=sum(p.completed for p in group),
            failed=sum(p.failed for p in group),
            sent=sum(p.sent for p in group),
            achieved_rate=_median(measured) if measured else 0.0,
            files=tuple(dict.fromkeys(p.file for p in group)),
        ))
    return rows
