"""Draw the samples of a plan's uncertain values, inside their domains.

Each uncertain value (:mod:`capplan.loading.uncertain`) gets its own random
stream, seeded by the run's seed and the value's label, so adding a range to
one input does not change the draws of another and a fixed seed gives the
same numbers on every machine (numpy's PCG64 and its normal, uniform and
triangular algorithms are stable across versions).

A domain applies to every sample as it applies to every written value: a
lognormal ``gpu_memory_utilization`` may not exceed 1, a count must be whole.
A count is rounded to the nearest whole number; a sample outside the domain
is redrawn (the distribution truncated to the domain), and the number of
redrawn samples is reported so the record can say so.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from capplan.language import units
from capplan.loading.uncertain import Distribution

Z95 = 1.6448536269514722        # the standard normal's 95th percentile: a 90 % interval is ±Z95 σ
_REDRAWS = 200                  # rounds of redrawing; a range inside the domain needs a handful


@dataclass(frozen=True)
class Drawn:
    """One uncertain value's samples (base units) and how many were redrawn into its domain."""

    label: str
    values: np.ndarray
    truncated: int


def stream(seed: int, label: str) -> np.random.Generator:
    """The random stream of one uncertain value: fixed by the seed and its label."""
    return np.random.default_rng([seed, zlib.crc32(label.encode("utf-8"))])


def draw(dist: Distribution, q, label: str, seed: int, n: int) -> Drawn:
    """``n`` samples of ``dist`` for quantity ``q``, truncated to its domain."""
    rng = stream(seed, label)
    values = _shape(dist, rng, n, q)
    inside = _inside(values, q)
    truncated = int(n - np.count_nonzero(inside))
    for _ in range(_REDRAWS):
        if inside.all():
            break
        missing = np.flatnonzero(~inside)
        values[missing] = _shape(dist, rng, missing.size, q)
        inside[missing] = _inside(values[missing], q)
    else:
        values[~inside] = dist.mode         # unreachable for a range inside the domain; keeps the point
    return Drawn(label, values, truncated)


def _shape(dist: Distribution, rng: np.random.Generator, n: int, q) -> np.ndarray:
    if dist.kind == "lognormal":
        mu, sigma = (math.log(dist.low) + math.log(dist.high)) / 2, (math.log(dist.high) - math.log(dist.low)) / (2 * Z95)
        values = np.exp(mu + sigma * rng.standard_normal(n))
    elif dist.kind == "normal":
        values = (dist.low + dist.high) / 2 + (dist.high - dist.low) / (2 * Z95) * rng.standard_normal(n)
    elif dist.kind == "uniform":
        values = rng.uniform(dist.low, dist.high, n)
    else:
        values = rng.triangular(dist.low, dist.mode, dist.high, n)
    if q.domain is not None and q.domain.integer:
        factor = units.factor(q.unit)
        values = np.round(values / factor) * factor
    return values


def _inside(values: np.ndarray, q) -> np.ndarray:
    """Which base-unit samples lie in ``q``'s domain (compared in its display unit, as the loader does)."""
    d = q.domain
    if d is None:
        return np.isfinite(values)
    shown = values / units.factor(q.unit)
    above = shown > d.low if d.low_open else shown >= d.low
    below = shown < d.high if d.high_open else shown <= d.high
    return above & below & np.isfinite(shown)
