"""The data an importer produces: one run (:class:`SweepPoint`) and one file.

Units of a :class:`SweepPoint` are capplan's display units: ``arrival_rate``
req/s (``math.inf`` for a run that is not open-loop), ``ttft_p95`` ms,
``tpot_p95`` ms, ``e2e_p99`` **s**, ``output_throughput`` tok/s, ``goodput``
req/s.

``sent`` and ``achieved_rate`` say whether the point delivered the load it was
offered: a run where requests did not complete, or whose achieved rate falls
short of the offered one, was overloaded whatever its percentiles say (they
cover only the requests that finished). 0 means the file does not tell.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SweepPoint:
    """One benchmark run at one offered arrival rate, in capplan's units."""

    arrival_rate: float        # req/s; math.inf for a closed burst / closed loop
    ttft_p95: float            # ms
    tpot_p95: float            # ms
    e2e_p99: float             # s
    output_throughput: float   # output tok/s
    completed: int
    failed: int
    sent: int                  # requests sent (completed + failed + unfinished); 0 = not recorded
    achieved_rate: float       # req/s the tool measured as delivered; 0 = not measured
    goodput: float | None      # req/s if the file reports it, else None
    file: str                  # path relative to the plan folder (POSIX)
    methods: tuple[str, ...]   # how each value was obtained


@dataclass(frozen=True)
class SweepFile:
    """One imported file: where it is, its digest, format and runs."""

    path: str
    sha256: str
    format: str
    points: tuple[SweepPoint, ...]
