"""Import a measured load sweep from raw benchmark files kept next to a plan.

A plan's ``load_sweep`` table can be imported instead of typed in. This module
reads the files (globs relative to the plan folder), recognises each file's
format from its content, and turns every benchmark run in it into a
:class:`SweepPoint` in capplan's canonical units. :func:`combine_replicates`
then folds repeated runs at one arrival rate into one :class:`SweepRow`
(median and median absolute deviation).

Units of a :class:`SweepPoint` (capplan's display units, SPEC 3.3):
``arrival_rate`` req/s (``math.inf`` for a run that is not open-loop),
``ttft_p95`` ms, ``tpot_p95`` ms, ``e2e_p99`` **s**, ``output_throughput``
tok/s, ``goodput`` req/s.

Formats (``SweepFile.format``)
------------------------------
``vllm-benchmark-serving``
    One JSON object written by the legacy ``benchmarks/benchmark_serving.py
    --save-result``. Recognised by the misspelt key ``"request_goodput:"`` or by
    the absence of a ``failed`` key. It always holds the per-request arrays
    ``ttfts``, ``itls``, ``output_lens``, ``errors`` (but no ``latencies``).
``vllm-bench-serve``
    One JSON object written by ``vllm bench serve --save-result`` (has
    ``failed`` and ``request_goodput``; per-request ``ttfts``/``itls``/
    ``output_lens``/``errors`` only with ``--save-detailed``; ``latencies``
    always at the snapshot the reference describes).
``vllm-bench-serve-jsonl``
    Several vLLM result objects one after another (``--append-result`` writes
    one per line), or any ``*.jsonl`` file. One point per object, in file order.
``guidellm-v0.3`` / ``guidellm-v0.4`` / ``guidellm-v0.5-v0.6`` / ``guidellm-v0.7+``
    A GuideLLM ``benchmarks.json`` report (``benchmarks.yaml`` is read too).
    v0.3: only ``benchmarks``, the strategy under ``benchmarks[i].args``;
    v0.4: top-level ``args``, strategy under ``benchmarks[i].config``;
    v0.5-v0.6: ``metadata.version`` 1; v0.7+: ``metadata.version`` 2 with a
    top-level ``config``. Other metadata versions are refused.
``csv``
    A plain CSV file (``*.csv``) with a header row, one run per row.

vLLM values
-----------
* ``arrival_rate`` = ``request_rate``; the string ``"inf"`` (current vLLM),
  ``Infinity`` (a JSON float from older versions) or ``inf`` is a closed burst
  and becomes ``math.inf``. A ramp-up run has no single rate and is refused.
  Gamma arrivals (``burstiness`` != 1) and a ``max_concurrency`` client cap are
  noted in ``methods``.
* A percentile present in the summary (``p95_ttft_ms``, ``p95_tpot_ms``,
  ``p99_e2el_ms``, all ms) is taken as is. A missing one is computed from the
  per-request arrays of the *successful* requests with
  ``numpy.percentile(..., method="linear")`` -- numpy's default and the method
  vLLM itself uses -- on the values in seconds, then x1000 for ms, exactly as
  vLLM does:

  - TTFT from ``ttfts`` (s);
  - E2E from ``latencies`` (s) if present, else per request
    TTFT + sum(ITL) from ``ttfts`` and ``itls`` (s);
  - TPOT from ``tpots`` (s) if a file has it, else vLLM's definition per
    request, (E2E - TTFT) / (output_len - 1) for output_len > 1, with
    ``output_lens``; as a last resort the summary ``p95_itl_ms`` (pooled
    chunk gaps, *not* TPOT), which ``methods`` then says.

  Successful requests are those with an empty ``errors`` entry (or, without
  that array, all of them when their number equals ``completed``, else those
  with a positive latency / output length); their number must equal
  ``completed``. With zero completed requests every latency is ``math.inf``
  (vLLM's summary reports 0 then, which would pass any SLO).
* ``completed`` = ``completed``; ``failed`` = ``failed`` if present, else the
  non-empty ``errors`` entries, else ``num_prompts - completed``.
* ``goodput`` = ``request_goodput`` or the legacy ``"request_goodput:"``
  (``null`` -> ``None``).

GuideLLM values
---------------
* ``arrival_rate`` = ``strategy.rate`` for ``constant`` (evenly spaced, the
  sweep default) and ``poisson`` stages; ``synchronous``, ``concurrent``,
  ``throughput`` and trace/replay stages are not open-loop at a rate and get
  ``math.inf`` (so :func:`combine_replicates` leaves them out).
* TTFT p95 = ``metrics.time_to_first_token_ms.successful.percentiles.p95``
  (ms); E2E p99 = ``metrics.request_latency.successful.percentiles.p99``
  (GuideLLM reports it in **seconds**); output tok/s =
  ``metrics.output_tokens_per_second.successful.mean``.
* TPOT p95: when the report holds every successful request
  (``requests.successful``), ``numpy.percentile`` (linear) of the per-request
  ``inter_token_latency_ms`` for output_tokens > 1 -- that is
  (last token - first token) / (output_tokens - 1), vLLM's TPOT. Otherwise the
  summary ``inter_token_latency_ms`` p95, which GuideLLM weights by tokens (an
  approximation of vLLM's TPOT; ``methods`` says so). GuideLLM's own
  ``time_per_output_token_ms`` includes the first token and is never used.
* ``completed`` = ``request_totals.successful``; ``failed`` =
  ``request_totals.errored`` (incomplete requests, cancelled when the run
  ended, are noted in ``methods`` but not counted). ``goodput`` is ``None``.

CSV convention
--------------
Header names are case-insensitive; unknown columns are ignored; blank lines and
lines starting with ``#`` are skipped. Required columns: ``arrival_rate``
(req/s; ``inf`` allowed), ``ttft_p95``, ``tpot_p95``, ``e2e_p99``,
``output_throughput`` (tok/s). Optional: ``completed``, ``failed`` (counts,
0 when absent), ``goodput`` (req/s, empty = none).

A bare column name is in capplan's display unit: **ttft_p95 and tpot_p95 in
ms, e2e_p99 in s**. A unit suffix states the unit explicitly and is converted:
``ttft_p95_ms``, ``ttft_p95_s``, ``tpot_p95_ms``, ``tpot_p95_s``,
``e2e_p99_s``, ``e2e_p99_ms``; also ``arrival_rate_req_s``,
``output_throughput_tok_s``, ``goodput_req_s``. Giving one quantity twice
(e.g. ``ttft_p95`` and ``ttft_p95_s``) is an error.

Files and errors
----------------
Patterns are expanded relative to the plan folder (``**`` allowed); all
matches are de-duplicated and sorted by their POSIX path, so the result does
not depend on the pattern order or the file system. vLLM's PyTorch-benchmark
sidecars (``*.pytorch.json``) are skipped. A pattern matching nothing, an
unreadable, non-UTF-8, empty, invalid or truncated file, an unknown format or a
missing or malformed field raises :class:`~capplan.errors.CapplanError` naming
the file (relative path), the key or line, and what is wrong.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

import numpy as np
import yaml

from capplan.errors import CapplanError

__all__ = [
    "SweepPoint",
    "SweepFile",
    "SweepRow",
    "read_sweep",
    "combine_replicates",
]

PERCENTILE_METHOD = "linear"   # numpy's default; vLLM calls np.percentile(x, p)
_NP = f"np.percentile (method='{PERCENTILE_METHOD}', as vLLM)"
_RERUN_HINT = ("re-run with `vllm bench serve --save-result --percentile-metrics "
               "ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99` "
               "(or add --save-detailed to keep the per-request arrays)")


# --------------------------------------------------------------------------- #
# Public data types
# --------------------------------------------------------------------------- #

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
    files: tuple[str, ...]


# --------------------------------------------------------------------------- #
# Small helpers
# --------------------------------------------------------------------------- #

def _fmt(x: float) -> str:
    """A short, deterministic rendering of a number for ``methods`` text."""
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.6g}"


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _err(message: str, key: str | None = None, line: int | None = None) -> CapplanError:
    return CapplanError(message, key=key, line=line)


def _number(value: Any, key: str, line: int | None = None, *,
            allow_negative: bool = False) -> float:
    """A finite JSON number (bools and strings refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err(f"expected a number, got {_show(value)}", key, line)
    result = float(value)
    if not math.isfinite(result):
        raise _err(f"expected a finite number, got {_show(value)}", key, line)
    if result < 0 and not allow_negative:
        raise _err(f"must not be negative, got {_fmt(result)}", key, line)
    return result


def _count(value: Any, key: str, line: int | None = None) -> int:
    result = _number(value, key, line)
    if result != int(result):
        raise _err(f"expected a whole number, got {_fmt(result)}", key, line)
    return int(result)


def _percentile(values: Iterable[float], q: float) -> float:
    arr = np.asarray(list(values), dtype=float)
    return float(np.percentile(arr, q, method=PERCENTILE_METHOD))


def _get(obj: Any, *path: str) -> Any:
    """Follow dict keys; ``None`` as soon as one is missing."""
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _rate_from(value: Any, key: str, line: int | None = None) -> float:
    """An offered rate: positive number, or inf given as float or string."""
    if isinstance(value, bool):
        raise _err(f"expected a rate in req/s or 'inf', got {_show(value)}", key, line)
    if isinstance(value, (int, float)):
        rate = float(value)
    elif isinstance(value, str):
        try:
            rate = float(value.strip())
        except ValueError:
            raise _err(f"expected a rate in req/s or 'inf', got {_show(value)}",
                       key, line) from None
    else:
        raise _err(f"expected a rate in req/s or 'inf', got {_show(value)}", key, line)
    if math.isnan(rate) or rate <= 0:
        raise _err(f"expected a positive rate in req/s or 'inf', got {_show(value)}",
                   key, line)
    return rate


# --------------------------------------------------------------------------- #
# vLLM
# --------------------------------------------------------------------------- #

_VLLM_ARRAYS = ("ttfts", "itls", "latencies", "output_lens", "tpots", "errors")


def _looks_like_vllm(obj: Any) -> bool:
    return (isinstance(obj, dict) and "request_rate" in obj
            and ("completed" in obj or "output_throughput" in obj))


def _vllm_is_legacy(obj: dict) -> bool:
    return "request_goodput:" in obj or "failed" not in obj


class _VllmRequests:
    """The per-request arrays of one vLLM result, restricted to successes."""

    def __init__(self, obj: dict, completed: int, line: int | None):
        self.line = line
        present = {name: obj[name] for name in _VLLM_ARRAYS
                   if isinstance(obj.get(name), list)}
        for name in _VLLM_ARRAYS:
            if name in obj and obj[name] is not None and name not in present:
                raise _err(f"expected a list, got {_show(obj[name])}", name, line)
        self.arrays = present
        sized = [n for n in ("ttfts", "latencies", "itls", "output_lens", "errors")
                 if n in present]
        self.n = len(present[sized[0]]) if sized else 0
        for name in sized:
            if len(present[name]) != self.n:
                lengths = ", ".join(f"{k} {len(present[k])}" for k in sized)
                raise _err(f"per-request arrays differ in length ({lengths})", name, line)
        self.mask: list[bool] | None = None
        self.mask_how = ""
        if sized and self.n:
            self._make_mask(completed)

    def _make_mask(self, completed: int) -> None:
        arrays, n = self.arrays, self.n
        if "errors" in arrays:
            mask = [not err for err in arrays["errors"]]
            how = "requests with an empty 'errors' entry"
        elif n == completed:
            mask = [True] * n
            how = f"all {n} entries (completed = {completed})"
        elif "latencies" in arrays:
            mask = [isinstance(v, (int, float)) and v > 0 for v in arrays["latencies"]]
            how = "requests with a positive latency"
        elif "output_lens" in arrays:
            mask = [isinstance(v, (int, float)) and v > 0 for v in arrays["output_lens"]]
            how = "requests with a positive output length"
        else:
            raise _err(f"cannot tell which of the {n} per-request entries succeeded "
                       f"(no 'errors' array and completed is {completed})", "errors",
                       self.line)
        if sum(mask) != completed:
            raise _err(f"per-request arrays hold {sum(mask)} successful requests "
                       f"({how}) but 'completed' is {completed}", "completed", self.line)
        self.mask = mask
        self.mask_how = how

    def has(self, name: str) -> bool:
        return name in self.arrays and self.mask is not None

    def values(self, name: str) -> list:
        """The successful entries of one array (``tpots`` as given if unaligned)."""
        arr = self.arrays[name]
        if self.mask is not None and len(arr) == self.n:
            return [v for v, ok in zip(arr, self.mask) if ok]
        return list(arr)

    def seconds(self, name: str) -> list[float]:
        return [_number(v, f"{name}[{i}]", self.line)
                for i, v in enumerate(self.values(name))]

    def e2e(self) -> tuple[list[float], str] | None:
        """Per-request E2E in s of the successful requests, and how."""
        if self.has("latencies"):
            return self.seconds("latencies"), "latencies (s)"
        if self.has("ttfts") and self.has("itls"):
            ttfts = self.seconds("ttfts")
            itls = self.values("itls")
            e2e = []
            for i, (ttft, gaps) in enumerate(zip(ttfts, itls)):
                if not isinstance(gaps, list):
                    raise _err(f"expected a list of gaps, got {_show(gaps)}",
                               f"itls[{i}]", self.line)
                e2e.append(ttft + sum(_number(g, f"itls[{i}]", self.line) for g in gaps))
            return e2e, "ttfts + sum(itls) (s; the file has no latencies)"
        return None


def _summary_ms(obj: dict, metric: str, p: int, line: int | None) -> tuple[float, str] | None:
    key = f"p{p}_{metric}_ms"
    if obj.get(key) is None:
        return None
    return _number(obj[key], key, line), key


def _vllm_rate(obj: dict, line: int | None) -> tuple[float, str]:
    strategy = obj.get("ramp_up_strategy")
    if strategy not in (None, "", False):
        raise _err(f"a ramp-up run (ramp_up_strategy {_show(strategy)}) has no single "
                   "arrival rate; it cannot be a sweep point", "ramp_up_strategy", line)
    if "request_rate" not in obj:
        raise _err("missing key (the offered arrival rate)", "request_rate", line)
    raw = obj["request_rate"]
    rate = _rate_from(raw, "request_rate", line)
    if math.isinf(rate):
        return rate, (f"arrival_rate: request_rate {_show(raw)} = closed burst (every "
                      "request sent at once), not an open-loop point")
    burstiness = obj.get("burstiness")
    if burstiness is None or burstiness == 1 or burstiness == 1.0:
        process = "Poisson arrivals (burstiness 1.0)" if burstiness is not None \
            else "arrival process not recorded (no burstiness key)"
    else:
        process = f"gamma arrivals (burstiness {_show(burstiness)}, not Poisson)"
    cap = obj.get("max_concurrency")
    cap_text = ("no client concurrency cap" if cap is None else
                f"client max_concurrency {_show(cap)}: not purely open-loop")
    return rate, f"arrival_rate: request_rate {_fmt(rate)} req/s, {process}, {cap_text}"


def _parse_vllm(obj: dict, rel: str, line: int | None) -> SweepPoint:
    where = f" (object at line {line})" if line else ""
    methods: list[str] = []

    rate, how = _vllm_rate(obj, line)
    achieved = obj.get("request_throughput")
    if isinstance(achieved, (int, float)) and not isinstance(achieved, bool):
        how += (f"; achieved request_throughput {_fmt(float(achieved))} req/s "
                "(completed / duration, includes the drain tail)")
    methods.append(how + where)

    if "completed" not in obj:
        raise _err("missing key (the number of successful requests)", "completed", line)
    completed = _count(obj["completed"], "completed", line)
    reqs = _VllmRequests(obj, completed, line)

    # failed ------------------------------------------------------------------
    if obj.get("failed") is not None:
        failed = _count(obj["failed"], "failed", line)
        methods.append(f"completed/failed: keys completed ({completed}) and failed ({failed})")
    elif "errors" in reqs.arrays:
        failed = sum(1 for e in reqs.arrays["errors"] if e)
        methods.append(f"completed/failed: key completed ({completed}); no 'failed' key "
                       f"(legacy layout): {failed} non-empty entries in errors")
    elif obj.get("num_prompts") is not None:
        failed = _count(obj["num_prompts"], "num_prompts", line) - completed
        if failed < 0:
            raise _err(f"num_prompts ({obj['num_prompts']}) is less than completed "
                       f"({completed})", "num_prompts", line)
        methods.append(f"completed/failed: key completed ({completed}); no 'failed' key: "
                       f"failed = num_prompts - completed = {failed}")
    else:
        failed = 0
        methods.append(f"completed/failed: key completed ({completed}); failures not "
                       "recorded in the file (0)")
    if reqs.mask is not None:
        methods[-1] += f"; successful requests in the per-request arrays: {reqs.mask_how}"
    success_text = f"the {completed} successful requests"

    if completed == 0:
        ttft = tpot = e2e = math.inf
        methods.append("ttft_p95/tpot_p95/e2e_p99: no request completed, so every latency "
                       "is taken as inf (fails any SLO); vLLM's summary shows 0 here")
    else:
        # TTFT ----------------------------------------------------------------
        summary = _summary_ms(obj, "ttft", 95, line)
        if summary:
            ttft = summary[0]
            methods.append(f"ttft_p95: summary key {summary[1]}")
        elif reqs.has("ttfts"):
            ttfts = reqs.seconds("ttfts")
            ttft = _percentile(ttfts, 95) * 1000
            text = (f"ttft_p95: {_NP} of the per-request ttfts (s) x 1000 over "
                    f"{success_text} (the summary has no p95_ttft_ms)")
            check = _summary_ms(obj, "ttft", 99, line)
            if check:
                text += (f"; check: p99 of the same array {_fmt(_percentile(ttfts, 99) * 1000)}"
                         f" ms vs summary p99_ttft_ms {_fmt(check[0])} ms")
            methods.append(text)
        else:
            raise _err("no p95 TTFT: the summary has no p95_ttft_ms and the file holds no "
                       f"per-request 'ttfts' array; {_RERUN_HINT}", "p95_ttft_ms", line)

        # E2E -----------------------------------------------------------------
        per_request_e2e = reqs.e2e() if reqs.mask is not None else None
        summary = _summary_ms(obj, "e2el", 99, line)
        if summary:
            e2e = summary[0] / 1000
            methods.append(f"e2e_p99: summary key {summary[1]} / 1000 (ms -> s)")
        elif per_request_e2e:
            values, source = per_request_e2e
            e2e = _percentile(values, 99)
            methods.append(f"e2e_p99: {_NP} of per-request E2E = {source} over "
                           f"{success_text} (the summary has no p99_e2el_ms)")
        else:
            raise _err("no p99 E2E: the summary has no p99_e2el_ms and the file holds neither "
                       f"'latencies' nor 'ttfts' with 'itls'; {_RERUN_HINT}",
                       "p99_e2el_ms", line)

        # TPOT ----------------------------------------------------------------
        tpot, text = _vllm_tpot(obj, reqs, per_request_e2e, success_text, line)
        methods.append(text)

    # throughput and goodput -----------------------------------------------------
    if obj.get("output_throughput") is None:
        raise _err("missing key (output tokens per second)", "output_throughput", line)
    throughput = _number(obj["output_throughput"], "output_throughput", line)
    methods.append("output_throughput: key output_throughput (tok/s)")

    goodput: float | None = None
    for key, label in (("request_goodput", "key request_goodput"),
                       ("request_goodput:", "legacy key 'request_goodput:' (trailing colon)")):
        if key in obj:
            if obj[key] is None:
                methods.append(f"goodput: {label} is null (no --goodput SLOs given) -> none")
            else:
                goodput = _number(obj[key], key, line)
                methods.append(f"goodput: {label} (req/s)")
            break
    else:
        methods.append("goodput: not in the file -> none")

    return SweepPoint(arrival_rate=rate, ttft_p95=ttft, tpot_p95=tpot, e2e_p99=e2e,
                      output_throughput=throughput, completed=completed, failed=failed,
                      goodput=goodput, file=rel, methods=tuple(methods))


def _vllm_tpot(obj: dict, reqs: _VllmRequests, per_request_e2e, success_text: str,
               line: int | None) -> tuple[float, str]:
    summary = _summary_ms(obj, "tpot", 95, line)
    if summary:
        return summary[0], f"tpot_p95: summary key {summary[1]}"

    check = _summary_ms(obj, "tpot", 99, line)

    def with_check(values: list[float], text: str) -> str:
        if check:
            text += (f"; check: p99 of the same values {_fmt(_percentile(values, 99) * 1000)}"
                     f" ms vs summary p99_tpot_ms {_fmt(check[0])} ms")
        return text

    if "tpots" in reqs.arrays:
        values = [v for v in reqs.values("tpots") if v is not None]
        values = [_number(v, "tpots", line) for v in values]
        values = [v for v in values if v > 0]
        if values:
            return (_percentile(values, 95) * 1000,
                    with_check(values, f"tpot_p95: {_NP} of {len(values)} positive per-request "
                                       "tpots (s) x 1000 (the summary has no p95_tpot_ms)"))

    if per_request_e2e and reqs.has("ttfts") and reqs.has("output_lens"):
        e2e, source = per_request_e2e
        ttfts = reqs.seconds("ttfts")
        lens = [_count(v, "output_lens", line) for v in reqs.values("output_lens")]
        values = [(e - t) / (n - 1) for e, t, n in zip(e2e, ttfts, lens) if n > 1]
        if values:
            return (_percentile(values, 95) * 1000,
                    with_check(values,
                               f"tpot_p95: {_NP} x 1000 of per-request TPOT = (E2E - TTFT) / "
                               f"(output_len - 1), vLLM's definition, over the {len(values)} "
                               f"successful requests with output_len > 1 (E2E = {source}; "
                               "output_len from output_lens; the summary has no p95_tpot_ms)"))

    summary = _summary_ms(obj, "itl", 95, line)
    if summary:
        return summary[0], (f"tpot_p95: taken from ITL, summary key {summary[1]} (pooled "
                            "chunk gaps, not per-request TPOT): the file has neither "
                            "p95_tpot_ms nor the per-request arrays to compute TPOT")
    raise _err("no p95 TPOT: the summary has no p95_tpot_ms (nor p95_itl_ms) and the file "
               "lacks the per-request arrays (ttfts, output_lens and latencies or itls) to "
               f"compute it; {_RERUN_HINT}", "p95_tpot_ms", line)


# --------------------------------------------------------------------------- #
# GuideLLM
# --------------------------------------------------------------------------- #

_GUIDELLM_OPEN = {
    "constant": "constant-rate arrivals (evenly spaced, GuideLLM's sweep default; "
                "not Poisson)",
    "poisson": "Poisson arrivals",
}
_GUIDELLM_CLOSED = {
    "synchronous": "closed loop, one request at a time",
    "concurrent": "closed loop at a fixed number of streams",
    "throughput": "closed burst, as many requests as allowed at once",
    "trace": "trace replay (no single rate)",
    "replay": "trace replay (no single rate)",
}


def _guidellm_format(doc: dict) -> str:
    metadata = doc.get("metadata")
    if metadata is not None:
        version = _get(metadata, "version")
        if version == 1:
            return "guidellm-v0.5-v0.6"
        if version == 2:
            return "guidellm-v0.7+"
        raise _err(f"GuideLLM report schema version {_show(version)} is not supported "
                   "(known: 1 for GuideLLM v0.5-v0.6, 2 for v0.7+)", "metadata.version")
    if "args" in doc:
        return "guidellm-v0.4"
    return "guidellm-v0.3"


def _parse_guidellm(doc: dict, rel: str) -> tuple[str, list[SweepPoint]]:
    fmt = _guidellm_format(doc)
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise _err(f"expected a list of benchmarks, got {_show(benchmarks)}", "benchmarks")
    if not benchmarks:
        raise _err("the GuideLLM report holds no benchmarks", "benchmarks")
    # v0.3 keeps the strategy under benchmarks[i].args, later versions under .config
    first, second = ("args", "config") if fmt == "guidellm-v0.3" else ("config", "args")
    return fmt, [_parse_guidellm_benchmark(bench, i, rel, fmt, first, second)
                 for i, bench in enumerate(benchmarks)]


def _summary(metrics: dict, name: str, where: str) -> dict:
    node = _get(metrics, name, "successful")
    if not isinstance(node, dict):
        raise _err("missing (a StatusDistributionSummary with a 'successful' part)",
                   f"{where}.metrics.{name}.successful")
    return node


def _summary_value(metrics: dict, name: str, where: str, *path: str) -> float:
    node = _summary(metrics, name, where)
    value = _get(node, *path)
    key = f"{where}.metrics.{name}.successful.{'.'.join(path)}"
    if value is None:
        raise _err("missing", key)
    return _number(value, key)


def _parse_guidellm_benchmark(bench: Any, i: int, rel: str, fmt: str,
                              first: str, second: str) -> SweepPoint:
    where = f"benchmarks[{i}]"
    if not isinstance(bench, dict):
        raise _err(f"expected an object, got {_show(bench)}", where)
    kind = bench.get("type_")
    if kind is not None and kind != "generative_benchmark":
        raise _err(f"type_ {_show(kind)} is not a generative benchmark", f"{where}.type_")
    methods: list[str] = []

    # arrival rate ------------------------------------------------------------------
    strategy = _get(bench, first, "strategy")
    if not isinstance(strategy, dict):
        strategy = _get(bench, second, "strategy")
    if not isinstance(strategy, dict):
        raise _err("missing (the scheduling strategy of this benchmark)",
                   f"{where}.{first}.strategy")
    stype = strategy.get("type_", strategy.get("type"))
    skey = f"{where}.{first}.strategy"
    if stype in _GUIDELLM_OPEN:
        if strategy.get("rate") is None:
            raise _err("missing (the offered rate of a constant/poisson stage)",
                       f"{skey}.rate")
        rate = _rate_from(strategy["rate"], f"{skey}.rate")
        cap = strategy.get("max_concurrency")
        cap_text = ("" if cap is None else
                    f", capped at max_concurrency {_show(cap)} (not purely open-loop)")
        methods.append(f"arrival_rate: {skey}.rate {_fmt(rate)} req/s, "
                       f"{_GUIDELLM_OPEN[stype]}{cap_text}")
    elif stype in _GUIDELLM_CLOSED:
        rate = math.inf
        methods.append(f"arrival_rate: {where} is a GuideLLM '{stype}' stage "
                       f"({_GUIDELLM_CLOSED[stype]}): no offered rate, recorded as inf "
                       "and not an open-loop point")
    else:
        raise _err(f"unknown GuideLLM strategy type {_show(stype)} (known: "
                   f"{', '.join(sorted({**_GUIDELLM_OPEN, **_GUIDELLM_CLOSED}))})",
                   f"{skey}.type_")

    metrics = bench.get("metrics")
    if not isinstance(metrics, dict):
        raise _err("missing (the benchmark's metrics)", f"{where}.metrics")

    # counts ------------------------------------------------------------------------
    totals = metrics.get("request_totals")
    tkey = f"{where}.metrics.request_totals"
    if not isinstance(totals, dict):
        totals, tkey = bench.get("request_totals"), f"{where}.request_totals"
    if not isinstance(totals, dict):
        raise _err("missing (successful/errored/incomplete request counts)",
                   f"{where}.metrics.request_totals")
    completed = _count(totals.get("successful"), f"{tkey}.successful")
    failed = _count(totals.get("errored", 0) or 0, f"{tkey}.errored")
    incomplete = _count(totals.get("incomplete", 0) or 0, f"{tkey}.incomplete")
    methods.append(f"completed/failed: {tkey}.successful ({completed}) and .errored "
                   f"({failed}); {incomplete} incomplete requests (cancelled when the run "
                   "ended) not counted")

    if completed == 0:
        ttft = tpot = e2e = math.inf
        methods.append("ttft_p95/tpot_p95/e2e_p99: no request succeeded, so every latency "
                       "is taken as inf (fails any SLO)")
    else:
        ttft = _summary_value(metrics, "time_to_first_token_ms", where, "percentiles", "p95")
        methods.append(f"ttft_p95: {where}.metrics.time_to_first_token_ms.successful."
                       "percentiles.p95 (ms; GuideLLM's percentile)")
        e2e = _summary_value(metrics, "request_latency", where, "percentiles", "p99")
        methods.append(f"e2e_p99: {where}.metrics.request_latency.successful.percentiles.p99 "
                       "(GuideLLM reports seconds)")
        tpot, text = _guidellm_tpot(bench, metrics, where, completed)
        methods.append(text)

    throughput = _summary_value(metrics, "output_tokens_per_second", where, "mean")
    methods.append(f"output_throughput: {where}.metrics.output_tokens_per_second."
                   "successful.mean (tok/s)")
    methods.append("goodput: not reported by GuideLLM -> none")
    return SweepPoint(arrival_rate=rate, ttft_p95=ttft, tpot_p95=tpot, e2e_p99=e2e,
                      output_throughput=throughput, completed=completed, failed=failed,
                      goodput=None, file=rel, methods=tuple(methods))


def _guidellm_tpot(bench: dict, metrics: dict, where: str, completed: int) -> tuple[float, str]:
    rows = _get(bench, "requests", "successful")
    if isinstance(rows, list) and len(rows) == completed and all(
            isinstance(r, dict) for r in rows):
        values = []
        for j, row in enumerate(rows):
            itl, n = row.get("inter_token_latency_ms"), row.get("output_tokens")
            if itl is None or n is None:
                continue
            key = f"{where}.requests.successful[{j}]"
            if _count(n, f"{key}.output_tokens") > 1:
                values.append(_number(itl, f"{key}.inter_token_latency_ms"))
        if values:
            return _percentile(values, 95), (
                f"tpot_p95: {_NP} of the per-request inter_token_latency_ms = (last token - "
                "first token) / (output_tokens - 1), vLLM's TPOT, over the "
                f"{len(values)} of {completed} successful requests with output_tokens > 1 "
                f"({where}.requests.successful)")
    value = _summary_value(metrics, "inter_token_latency_ms", where, "percentiles", "p95")
    return value, (f"tpot_p95: taken from ITL, {where}.metrics.inter_token_latency_ms."
                   "successful.percentiles.p95 (ms; GuideLLM weights each request's mean "
                   "inter-token latency by its tokens, so this approximates vLLM's "
                   "per-request TPOT percentile); the report lacks the full per-request list")


# --------------------------------------------------------------------------- #
# CSV
# --------------------------------------------------------------------------- #

# header -> (canonical name, factor to capplan's unit, unit text)
_CSV_HEADERS: dict[str, tuple[str, float, str]] = {
    "arrival_rate": ("arrival_rate", 1.0, "req/s"),
    "arrival_rate_req_s": ("arrival_rate", 1.0, "req/s"),
    "ttft_p95": ("ttft_p95", 1.0, "ms"),
    "ttft_p95_ms": ("ttft_p95", 1.0, "ms"),
    "ttft_p95_s": ("ttft_p95", 1000.0, "s -> ms"),
    "tpot_p95": ("tpot_p95", 1.0, "ms"),
    "tpot_p95_ms": ("tpot_p95", 1.0, "ms"),
    "tpot_p95_s": ("tpot_p95", 1000.0, "s -> ms"),
    "e2e_p99": ("e2e_p99", 1.0, "s"),
    "e2e_p99_s": ("e2e_p99", 1.0, "s"),
    "e2e_p99_ms": ("e2e_p99", 0.001, "ms -> s"),
    "output_throughput": ("output_throughput", 1.0, "tok/s"),
    "output_throughput_tok_s": ("output_throughput", 1.0, "tok/s"),
    "completed": ("completed", 1.0, "requests"),
    "failed": ("failed", 1.0, "requests"),
    "goodput": ("goodput", 1.0, "req/s"),
    "goodput_req_s": ("goodput", 1.0, "req/s"),
}
_CSV_REQUIRED = ("arrival_rate", "ttft_p95", "tpot_p95", "e2e_p99", "output_throughput")


def _parse_csv(text: str, rel: str) -> list[SweepPoint]:
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    columns: dict[str, tuple[int, str, float, str]] = {}
    points: list[SweepPoint] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in cells]
                for index, name in enumerate(header):
                    if name not in _CSV_HEADERS:
                        continue
                    canon, factor, unit = _CSV_HEADERS[name]
                    if canon in columns:
                        raise _err(f"{canon} is given twice (columns "
                                   f"{columns[canon][1]!r} and {name!r})", name, line)
                    columns[canon] = (index, name, factor, unit)
                missing = [c for c in _CSV_REQUIRED if c not in columns]
                if missing:
                    raise _err(f"the header lacks column(s) {', '.join(missing)} "
                               f"(found: {', '.join(header)})", missing[0], line)
                continue
            if len(cells) != len(header):
                raise _err(f"row has {len(cells)} cells, the header has {len(header)}",
                           None, line)
            points.append(_csv_row(cells, columns, rel, line))
    except csv.Error as exc:
        raise _err(f"malformed CSV: {exc}", None, reader.line_num) from None
    if header is None:
        raise _err("the CSV file has no header row")
    if not points:
        raise _err("the CSV file has a header but no data rows")
    return points


def _csv_row(cells: list[str], columns: dict, rel: str, line: int) -> SweepPoint:
    values: dict[str, Any] = {}
    methods: list[str] = []
    for canon, (index, name, factor, unit) in columns.items():
        raw = cells[index].strip()
        if canon == "arrival_rate":
            values[canon] = _rate_from(raw, name, line)
        elif raw == "":
            if canon in _CSV_REQUIRED:
                raise _err("empty cell", name, line)
            values[canon] = None
            continue
        else:
            try:
                number = float(raw)
            except ValueError:
                raise _err(f"expected a number, got {raw!r}", name, line) from None
            if canon in ("completed", "failed"):
                values[canon] = _count(number, name, line)
            else:
                values[canon] = _number(number, name, line) * factor
        methods.append(f"{canon}: CSV column {name} ({unit}), line {line}")
    for canon in ("completed", "failed"):
        if values.get(canon) is None:
            values[canon] = 0
            methods.append(f"{canon}: not given in the CSV (0)")
    if "goodput" not in columns:
        methods.append("goodput: not given in the CSV -> none")
    return SweepPoint(arrival_rate=values["arrival_rate"], ttft_p95=values["ttft_p95"],
                      tpot_p95=values["tpot_p95"], e2e_p99=values["e2e_p99"],
                      output_throughput=values["output_throughput"],
                      completed=values["completed"], failed=values["failed"],
                      goodput=values.get("goodput"), file=rel, methods=tuple(methods))


# --------------------------------------------------------------------------- #
# Files: globbing, reading, format detection
# --------------------------------------------------------------------------- #

def _expand(plan_dir: Path, pattern: str) -> list[str]:
    if not isinstance(pattern, str) or not pattern.strip():
        raise _err(f"a sweep file pattern must be a non-empty string, got {_show(pattern)}")
    matches = glob.glob(pattern, root_dir=str(plan_dir), recursive=True)
    found = []
    for match in matches:
        full = Path(match) if os.path.isabs(match) else plan_dir / match
        if not full.is_file():
            continue
        rel = os.path.relpath(full, plan_dir) if os.path.isabs(match) else match
        rel = PurePosixPath(Path(os.path.normpath(rel)).as_posix()).as_posix()
        found.append(rel)
    if not found:
        if any(ch in pattern for ch in "*?["):
            raise _err(f"sweep pattern {pattern!r} matches no file (relative to the plan "
                       "folder)")
        raise _err(f"sweep file {pattern!r} does not exist (relative to the plan folder)")
    kept = [rel for rel in found if not rel.endswith(".pytorch.json")]
    if not kept:
        raise _err(f"sweep pattern {pattern!r} matches only vLLM PyTorch-benchmark sidecar "
                   "files (*.pytorch.json), which are skipped; point it at the "
                   "--save-result JSON files")
    return kept


def _json_error(exc: json.JSONDecodeError, text: str, where: str) -> CapplanError:
    if exc.pos >= len(text.rstrip()):
        what = "truncated JSON: the file ends before the JSON value is complete"
    else:
        what = "invalid JSON"
    return _err(f"{what}{where} ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                None, exc.lineno)


def _load_json_documents(text: str, jsonl: bool) -> tuple[list[tuple[Any, int]], bool]:
    """Parse one JSON value, or several concatenated (JSON Lines).

    Returns ``[(value, line)]`` and whether the file was a sequence.
    """
    decoder = json.JSONDecoder()
    if not jsonl:
        try:
            return [(json.loads(text), 1)], False
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise _json_error(exc, text, "") from None
    documents = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, text, f" in the object starting on line {line}") from None
        documents.append((value, line))
    return documents, True


def _describe(value: Any) -> str:
    if isinstance(value, list):
        if value and isinstance(value[0], dict) and {"benchmark", "model"} <= set(value[0]):
            return ("a list of PyTorch-benchmark records (a vLLM *.pytorch.json sidecar; "
                    "use the --save-result JSON instead)")
        return "a JSON list"
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(str, value))[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {type(value).__name__}"


def _unknown(value: Any) -> CapplanError:
    return _err("unknown sweep file format: expected a vLLM --save-result object "
                "(request_rate, completed, ...), a GuideLLM report (benchmarks: [...]) "
                f"or a CSV file; found {_describe(value)}")


def _parse_file(data: bytes, rel: str) -> tuple[str, list[SweepPoint]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _err(f"not UTF-8 text (byte {exc.start}): not a benchmark result file") from None
    if not text.strip():
        raise _err("the file is empty")
    suffix = PurePosixPath(rel).suffix.lower()

    if suffix in (".csv", ".tsv"):
        if suffix == ".tsv":
            raise _err("tab-separated files are not supported; save the sweep as CSV")
        return "csv", _parse_csv(text, rel)

    if suffix in (".yaml", ".yml"):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc)
            raise _err(f"invalid YAML: {problem}", None, line) from None
        if isinstance(doc, dict) and "benchmarks" in doc:
            return _parse_guidellm(doc, rel)
        raise _unknown(doc)

    documents, sequence = _load_json_documents(text, jsonl=suffix == ".jsonl")
    if not sequence:
        doc = documents[0][0]
        if isinstance(doc, dict) and "benchmarks" in doc:
            return _parse_guidellm(doc, rel)
        if _looks_like_vllm(doc):
            fmt = "vllm-benchmark-serving" if _vllm_is_legacy(doc) else "vllm-bench-serve"
            return fmt, [_parse_vllm(doc, rel, None)]
        raise _unknown(doc)

    if not documents:
        raise _err("the file holds no JSON objects")
    points = []
    for doc, line in documents:
        if not _looks_like_vllm(doc):
            error = _unknown(doc)
            error.message += " (JSON Lines files must hold vLLM result objects)"
            error.line = line
            raise error
        points.append(_parse_vllm(doc, rel, line))
    return "vllm-bench-serve-jsonl", points


def _read_one(plan_dir: Path, rel: str) -> SweepFile:
    try:
        data = (plan_dir / rel).read_bytes()
    except OSError as exc:
        raise _err(f"cannot read the file: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    fmt, points = _parse_file(data, rel)
    return SweepFile(path=rel, sha256=digest, format=fmt, points=tuple(points))


def read_sweep(plan_dir: Path, patterns: list[str]) -> list[SweepFile]:
    """Expand globs relative to plan_dir (sorted, deterministic), detect each
    file's format, parse it."""
    plan_dir = Path(plan_dir)
    if isinstance(patterns, str):
        patterns = [patterns]
    if not patterns:
        raise _err("no sweep files given (the list of file patterns is empty)")
    paths: set[str] = set()
    for pattern in patterns:
        paths.update(_expand(plan_dir, pattern))
    files = []
    for rel in sorted(paths):
        try:
            files.append(_read_one(plan_dir, rel))
        except CapplanError as exc:
            raise exc.located(file=rel)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                ArithmeticError, RecursionError) as exc:   # malformed data we did not foresee
            raise CapplanError(f"cannot interpret the file: {type(exc).__name__}: {exc}",
                               file=rel) from None
    return files


# --------------------------------------------------------------------------- #
# Replicates
# --------------------------------------------------------------------------- #

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
    gives 0. ``completed`` and ``failed`` are summed over the runs; ``files``
    lists the distinct files in the order the points came.
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
        rows.append(SweepRow(
            arrival_rate=rate,
            ttft_p95=stats["ttft_p95"], tpot_p95=stats["tpot_p95"],
            e2e_p99=stats["e2e_p99"], output_throughput=stats["output_throughput"],
            ttft_p95_mad=stats["ttft_p95_mad"], tpot_p95_mad=stats["tpot_p95_mad"],
            e2e_p99_mad=stats["e2e_p99_mad"],
            runs=len(group),
            completed=sum(p.completed for p in group),
            failed=sum(p.failed for p in group),
            files=tuple(dict.fromkeys(p.file for p in group)),
        ))
    return rows
