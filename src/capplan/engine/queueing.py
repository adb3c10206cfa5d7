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
_FEW = 8                 # elements below which a Python loop beats numpy's cost per call

# The exponentials and logarithms of the Poisson tail are the C library's (``math``), element by
# element: numpy's own SIMD versions differ between releases in the last bit, which a tail such as
# e^-480 amplifies to the 12th digit of the outputs; the C library's do not change with numpy.
# Each is mapped over a plain list (about 50 ns an element) and only over the elements whose
# branch is taken, so 100,000 draws cost a few hundredths of a second, not a Python call apiece.
_EXP_LIMIT = 709.0      # math.exp overflows a little above 709.78; above this, element by element


def _elementwise(function, values: np.ndarray) -> np.ndarray:
    flat = np.ravel(values).tolist()
    return np.fromiter(map(function, flat), dtype=float, count=len(flat)).reshape(np.shape(values))


def _c_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:            # numpy's answer, not an exception
        return math.inf


def _exp(v: np.ndarray) -> np.ndarray:
    """e^v by the C library: inf above the largest double, as numpy would."""
    big = v > _EXP_LIMIT
    result = _elementwise(math.exp, np.where(big, 0.0, v))
    if big.any():
        result[big] = [_c_exp(x) for x in v[big].tolist()]
    return result


def _log(v: np.ndarray) -> np.ndarray:
    """ln v by the C library: -inf at 0 and NaN below, as numpy would."""
    positive = v > 0
    result = _elementwise(math.log, np.where(positive, v, 1.0))
    return np.where(positive, result, np.where(v == 0, -np.inf, np.nan))


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
    """ln Γ(n+1) - (n + 1/2) ln n + n - ln √(2π): the error of Stirling's formula; directly
    for n ≤ 15, by its asymptotic series above (the direct form cancels there)."""
    nn = n * n
    result = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / 1188 / nn) / nn) / nn) / nn) / n
    small = n <= 15
    if small.any():
        m = n[small]
        result[small] = _elementwise(math.lgamma, m + 1) - (m + 0.5) * _log(m) + m \
            - 0.5 * math.log(2 * math.pi)
    return result


def _deviance(k, m):
    """k ln(k/m) + m - k, by a series where k is near m (the plain form cancels there)."""
    with np.errstate(divide="ignore", invalid="ignore"):
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
    far = ~near
    if far.any():
        kf, mf = k[far], m[far]
        with np.errstate(divide="ignore", invalid="ignore"):
            total[far] = kf * _log(kf / mf) + mf - kf
    return total


def _lower_series(s, x):
    """P(s, x) = x^s e^-x / Γ(s+1) · Σ x^n / ((s+1)…(s+n)), for x < s + 1.

    Each element's sum is exactly what a single value's loop gives, which stops at the
    first term ≤ 1e-17 of its sum: that term and every later one (they only shrink,
    since x < s + 1 + n) are under half an ulp of the sum, so adding them leaves it as
    it is. Finished elements may therefore ride along; they are set aside when an
    eighth of those still in the loop have finished, to spare copying the arrays on
    every term (100,000 draws take about 90 terms). A few elements (the evaluator's
    scalars) loop in Python floats, the same IEEE operations in the same order
    without numpy's cost per call on a tiny array."""
    if s.size <= _FEW:
        sums = np.array([_series_sum(a, b) for a, b in zip(s.tolist(), x.tolist(), strict=True)])
        return np.minimum(1.0, _poisson_pmf(s, x) * sums)
    total = np.empty(s.shape)
    live = np.arange(s.size)
    ss, xs = s.copy(), x.copy()                                  # the live elements' own arrays
    sums, term = np.ones(s.size), np.ones(s.size)
    n = 0
    while live.size and n < _MAX_TERMS:
        n += 1
        term *= xs
        term /= ss + n
        sums += term
        done = term <= sums * _EPS
        finished = np.count_nonzero(done)
        if finished == live.size:
            total[live] = sums
            break
        if finished * 8 >= live.size:
            total[live[done]] = sums[done]
            going = ~done
            live, ss, xs, sums, term = live[going], ss[going], xs[going], sums[going], term[going]
    else:
        total[live] = sums
    return np.minimum(1.0, _poisson_pmf(s, x) * total)


def _series_sum(s: float, x: float) -> float:
    """Σ x^n / ((s+1)…(s+n)) for one element, term for term as :func:`_lower_series`."""
    total = term = 1.0
    n = 0
    while n < _MAX_TERMS:
        n += 1
        term = term * x / (s + n)
        total = total + term
        if term <= total * _EPS:
            break
    return total


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
