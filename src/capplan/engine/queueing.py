"""The numbers behind the formula language's queueing functions.

``erlang_c(servers, load)`` and ``poisson_exceeds(count, mean)`` are functions
of the language (:mod:`capplan.engine.formula`); this module is their one
numeric form. Each works element-wise on floats and numpy arrays alike, so
the evaluator (scalars, table columns) and a vectorised sampler (one array of
samples per quantity) call the same code.

* :func:`erlang_c` — the Erlang-C probability that an arriving request waits
  in an M/M/c queue with ``servers`` servers and an offered ``load`` of
  λ/μ Erlangs, by the Erlang-B recursion ``B(k) = a·B(k-1) / (k + a·B(k-1))``,
  ``C = c·B / (c - a·(1 - B))``, which stays within a few ulps where the
  textbook sum of a^k/k! overflows. A load of ``servers`` or more is an
  unstable queue, in which every request waits: 1.
* :func:`poisson_exceeds` — ``P(N > count)`` for a Poisson count ``N`` of
  mean ``mean``, which is the regularized lower incomplete gamma function
  ``P(⌊count⌋ + 1, mean)``: a series below the peak, Lentz's continued
  fraction for the complement above it (Numerical Recipes 6.2), each scaled
  by the Poisson probability in Loader's saddle-point form, so a tail of 1e-30
  comes out as 1e-30 (not 1 − 0.999… = 0), to about 12 digits.

Neither function checks its arguments: the evaluator
(:class:`capplan.engine.evaluate.Numeric`) snaps ``servers`` to a whole number
and refuses negative values or fractional servers with a message first; a
caller of its own does the same.

Spreadsheets compute the same numbers with the Excel 2007 functions POISSON
and GAMMADIST (:mod:`capplan.rendering.excel`).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = 1e-17            # relative size of the last term kept (below a double's resolution)
_TINY = 1e-300
_MAX_TERMS = 10_000_000  # a bound, never reached: near its peak a count of n needs about 8·√n terms

# The exponentials and logarithms of the Poisson tail are the C library's (``math``), element by
# element: numpy's own SIMD versions differ between releases in the last bit, which a tail such as
# e^-480 amplifies to the 12th digit of the outputs; the C library's do not change with numpy.
_lgamma = np.frompyfunc(math.lgamma, 1, 1)


def _c_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:            # numpy's answer, not an exception
        return math.inf


def _c_log(v: float) -> float:
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


_exp = np.vectorize(_c_exp, otypes=[float])
_log = np.vectorize(_c_log, otypes=[float])


def erlang_c(servers, load):
    """P(wait) of an M/M/c queue; ``servers`` a whole number ≥ 0, ``load`` ≥ 0 (checked by the caller)."""
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=float), np.asarray(load, dtype=float))
    b = np.ones(c.shape)
    top = int(np.max(c, initial=0))
    for k in range(1, top + 1):
        step = k <= c
        b = np.where(step, a * b / (k + a * b), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        waits = c * b / (c - a * (1 - b))
    result = np.where(a >= c, 1.0, np.where(a > 0, waits, 0.0))
    return result if result.ndim else float(result)


def poisson_exceeds(count, mean):
    """P(N > count) for N ~ Poisson(mean); ``count`` and ``mean`` ≥ 0 (checked by the caller)."""
    k, m = np.broadcast_arrays(np.asarray(count, dtype=float), np.asarray(mean, dtype=float))
    shape = np.floor(k) + 1                       # N > count  <=>  N >= floor(count) + 1
    result = np.zeros(k.shape)
    series = (m > 0) & (m < shape + 1)
    fraction = m >= shape + 1
    if series.any():
        result[series] = _lower_series(shape[series], m[series])
    if fraction.any():
        result[fraction] = 1.0 - _upper_fraction(shape[fraction], m[fraction])
    return result if result.ndim else float(result)


def _poisson_pmf(s, x):
    """x^s e^-x / Γ(s+1), the Poisson probability of s at mean x, by Loader's saddle-point form
    (as R's dpois): exp(-stirlerr(s) - bd0(s, x)) / √(2πs). It keeps 15 digits where the
    logarithm x^s e^-x / Γ(s+1) is a difference of numbers of 10^4 and more."""
    return _exp(-_stirling_error(s) - _deviance(s, x)) / np.sqrt(2 * np.pi * s)


def _stirling_error(n):
    """ln Γ(n+1) - (n + 1/2) ln n + n - ln √(2π): the error of Stirling's formula."""
    small = n <= 15
    direct = _lgamma(np.where(small, n, 1.0) + 1).astype(float) - (n + 0.5) * _log(n) + n \
        - 0.5 * math.log(2 * math.pi)
    nn = n * n
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / 1188 / nn) / nn) / nn) / nn) / n
    return np.where(small, direct, series)


def _deviance(k, m):
    """k ln(k/m) + m - k, by a series where k is near m (the plain form cancels there)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = k * _log(k / m) + m - k
        v = (k - m) / (k + m)
    near = np.abs(k - m) < 0.1 * (k + m)
    total = (k - m) * v
    ej = 2 * k * v
    for j in range(1, 200):
        ej = ej * v * v
        step = ej / (2 * j + 1)
        total = total + np.where(near, step, 0.0)
        if np.all(~near | (np.abs(step) <= np.abs(total) * _EPS)):
            break
    return np.where(near, total, plain)


def _lower_series(s, x):
    """P(s, x) = x^s e^-x / Γ(s+1) · Σ x^n / ((s+1)…(s+n)), for x < s + 1. Each element
    stops at its own last term, as a single value would (100,000 draws run only the terms
    each one needs)."""
    total = np.ones(s.shape)
    live = np.arange(s.size)
    ss, xs, sums, term = s, x, total.copy(), np.ones(s.size)     # the live elements' own arrays
    n = 0
    while live.size and n < _MAX_TERMS:
        n += 1
        term = term * xs / (ss + n)
        sums = sums + term
        going = term > sums * _EPS
        if not going.all():
            total[live[~going]] = sums[~going]
            live, ss, xs, sums, term = live[going], ss[going], xs[going], sums[going], term[going]
    return np.minimum(1.0, _poisson_pmf(s, x) * total)


def _upper_fraction(s, x):
    """Q(s, x) = 1 - P(s, x) by the modified Lentz continued fraction, for x ≥ s + 1;
    each element stops when its own fraction has converged."""
    b = x + 1 - s
    c = np.full(s.shape, 1 / _TINY)
    d = 1 / b
    h = d.copy()
    live = np.arange(s.size)
    for i in range(1, _MAX_TERMS):
        an = -i * (i - s[live])
        b[live] = b[live] + 2
        d_live = an * d[live] + b[live]
        d_live = 1 / np.where(np.abs(d_live) < _TINY, _TINY, d_live)
        c_live = b[live] + an / c[live]
        c_live = np.where(np.abs(c_live) < _TINY, _TINY, c_live)
        delta = d_live * c_live
        d[live], c[live], h[live] = d_live, c_live, h[live] * delta
        live = live[np.abs(delta - 1) > _EPS * 10]
        if not live.size:
            break
    return s * _poisson_pmf(s, x) * h
