"""The numbers behind the formula language's queueing functions.

``erlang_c(servers, load)`` and ``poisson_exceeds(count, mean)`` are functions
of the language (:mod:`capplan.language.formula`); this module is their one
numeric form. Each works element-wise on floats and numpy arrays alike, so
the float backend calls the same code for one evaluation (scalars, table
columns) and for a batch of draws.

* :func:`erlang_c` — the Erlang-C probability that an arriving request waits
  in an M/M/c queue with ``servers`` servers and an offered ``load`` of
  λ/μ Erlangs. Up to 64 servers by the Erlang-B recursion
  ``B(k) = a·B(k-1) / (k + a·B(k-1))``, which stays within a few ulps where
  the textbook sum of a^k/k! overflows; above, in closed form,
  ``B = P(N = c) / P(N ≤ c)`` for N ~ Poisson(a) (Loader's probability and
  the tail below), so a billion servers cost what ten do. Then
  ``C = c·B / ((c - a) + a·B)``. A load of ``servers`` or more is an
  unstable queue, in which every request waits: 1.
* :func:`poisson_exceeds` — ``P(N > count)`` for a Poisson count ``N`` of
  mean ``mean``, which is the regularized lower incomplete gamma function
  ``P(⌊count⌋ + 1, mean)``: a series below the peak, Lentz's continued
  fraction for the complement above it (Numerical Recipes 6.2), each scaled
  by the Poisson probability in Loader's saddle-point form, so a tail of 1e-30
  comes out as 1e-30 (not 1 − 0.999… = 0), to about 12 digits. Both need
  about 8·√count terms near the peak, so from a count of 100,000 on Temme's
  uniform asymptotic expansion takes over (DLMF 8.12): a fixed amount of
  work however large the count, to about 13 digits.

Neither function checks its arguments: the evaluator
(:class:`capplan.engine.evaluate.Numeric`) snaps ``servers`` to a whole number
and refuses negative values or fractional servers with a message first; a
caller of its own does the same.

Spreadsheets compute the same numbers with the Excel 2007 functions POISSON
and GAMMADIST (:mod:`capplan.rendering.workbook.formulaprinter`).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = 1e-17            # relative size of the last term kept (below a double's resolution)
_TINY = 1e-300
_MAX_TERMS = 10_000_000  # a bound, never reached: near its peak a count of n needs about 8·√n terms
_FEW = 8                 # elements below which a Python loop beats numpy's cost per call
_RECURSION = 64          # servers up to which Erlang B takes its recursion (the reference plans' bits)
_LARGE = 1e5             # the Poisson tail of a count from this on takes Temme's expansion

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
    few = c <= _RECURSION
    for k in range(1, int(np.max(c[few], initial=0)) + 1):
        b = np.where(k <= c, a * b / (k + a * b), b)
    many = ~few & (a > 0) & (a < c)
    if many.any():
        b[many] = _erlang_b(c[many], a[many])
    with np.errstate(divide="ignore", invalid="ignore"):
        waits = c * b / ((c - a) + a * b)          # c - a exact near the peak, where a·(1 - b) would round
    result = np.where(a >= c, 1.0, np.where(a > 0, waits, 0.0))
    return result if result.ndim else float(result)


def _erlang_b(c, a):
    """Erlang B for 0 < a < c: P(N = c) / P(N ≤ c), N ~ Poisson(a). Below the peak the
    tail P(N > c) is under about a half, so 1 minus it keeps its digits."""
    return _poisson_pmf(c, a) / (1.0 - poisson_exceeds(c, a))


def poisson_exceeds(count, mean):
    """P(N > count) for N ~ Poisson(mean); ``count`` and ``mean`` ≥ 0 (checked by the caller)."""
    k, m = np.broadcast_arrays(np.asarray(count, dtype=float), np.asarray(mean, dtype=float))
    shape = np.floor(k) + 1                       # N > count  <=>  N >= floor(count) + 1
    result = np.zeros(k.shape)
    large = (m > 0) & (shape >= _LARGE)
    series = (m > 0) & (m < shape + 1) & ~large
    fraction = (m >= shape + 1) & ~large
    if series.any():
        result[series] = _lower_series(shape[series], m[series])
    if fraction.any():
        result[fraction] = 1.0 - _upper_fraction(shape[fraction], m[fraction])
    if large.any():
        result[large] = _temme(shape[large], m[large])
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


# Temme's coefficients c0(η) and c1(η) (DLMF 8.12.8-9) as power series in η, for |η| < 1/2 where
# their closed forms cancel: c0 = 1/μ - 1/η, c1 = 1/η³ - 1/μ³ - 1/μ² - 1/(12μ), μ = λ - 1 given by
# η²/2 = μ - ln(1 + μ). Derived in exact fractions by Lagrange inversion (-1/3, 1/12, -2/135, 1/864,
# 1/2835, ... and -1/540, -1/288, 1/378, ... as DLMF 8.12.10 prints); tests/test_queueing.py checks
# both forms against each other and the whole expansion against mpmath.
_C0 = (-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073,
       0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05, -2.185448510679992e-06,
       -1.85406221071516e-06, 8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09,
       1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11,
       -5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12, 1.1004392031956135e-13,
       3.371763262400985e-13, -1.392388722418162e-13, 2.8534893807047445e-14, -5.139111834242572e-16,
       -1.9752288294349442e-15, 8.099521156704561e-16)
_C1 = (-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596,
       0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05, 7.64916091608111e-06,
       -1.6120900894563446e-06, 4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
       1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.162792991842583e-10,
       -8.56390702649298e-11, 6.067215101604758e-14, 7.1624989648114856e-12, -2.933186643771437e-12,
       5.996696365683689e-13, -2.1671786527323313e-16)
_SERIES_ETA = 0.5


def _horner(coefficients, x):
    total = np.zeros(x.shape)
    for c in reversed(coefficients):
        total = total * x + c
    return total


def _temme_terms(eta, mu):
    """c0(η) and c1(η): the power series near η = 0, the closed forms elsewhere."""
    near = np.abs(eta) < _SERIES_ETA
    with np.errstate(divide="ignore", invalid="ignore"):
        c0 = np.where(near, _horner(_C0, eta), 1 / mu - 1 / eta)
        c1 = np.where(near, _horner(_C1, eta), 1 / eta ** 3 - 1 / mu ** 3 - 1 / mu ** 2 - 1 / (12 * mu))
    return c0, c1


def _temme(s, x):
    """P(s, x) for a large shape s by Temme's uniform expansion (DLMF 8.12.3-4):
    Q = erfc(η·√(s/2))/2 + e^(-sη²/2)/√(2πs) · (c0(η) + c1(η)/s), P = 1 - Q, with
    sη²/2 = s ln(s/x) + x - s (Loader's deviance, exact where x is near s) and η of
    the sign of x - s. The smaller of P and Q is the one computed; the next term,
    c2/s², is below 1e-12 of it for s ≥ 100,000."""
    d = _deviance(s, x)
    z = np.sqrt(d)
    eta = np.sign(x - s) * np.sqrt(2 * d / s)
    c0, c1 = _temme_terms(eta, (x - s) / s)
    half = 0.5 * _elementwise(math.erfc, z)
    rest = _exp(-d) / np.sqrt(2 * np.pi * s) * (c0 + c1 / s)
    return np.where(x < s, half - rest, 1.0 - (half + rest))
