"""vLLM ``--save-result`` files: legacy ``benchmark_serving.py`` and ``vllm bench serve``.

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

Values
------
* ``arrival_rate`` = ``request_rate``; the string ``"inf"`` (current vLLM),
  ``Infinity`` (a JSON float from older versions) or ``inf`` is a closed burst
  and becomes ``math.inf``. A ramp-up run has no single rate and is refused.
  Gamma arrivals (``burstiness`` != 1) and a ``max_concurrency`` client cap are
  noted in ``methods``; a cap below one request in flight is refused.
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
  ``completed``. With zero completed requests no latency was measured: each
  is ``math.inf`` here (vLLM's summary reports 0, which would pass any SLO),
  the latency medians of :func:`combine_replicates` leave the run out and the
  point fails on delivery (0 of ``sent`` completed). A run that records no
  request at all (nothing completed, failed or sent) is refused.
* ``completed`` = ``completed``; ``failed`` = ``failed`` if present, else the
  non-empty ``errors`` entries, else ``num_prompts - completed``; ``sent`` =
  ``num_prompts`` (else completed + failed). ``achieved_rate`` is 0 (not
  measured): ``request_throughput`` is completed / duration with the drain
  after the last request in the duration, so it is below the offered rate
  even for a run that kept up (4 req/s offered, 3.18 achieved in the 70B files).
* ``goodput`` = ``request_goodput`` or the legacy ``"request_goodput:"``
  (``null`` -> ``None``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from capplan.loading.sweeps import reading
from capplan.loading.sweeps.fields import (
    NP,
    err,
    finite,
    percentile,
    rate_from,
    short,
    show,
    whole,
)
from capplan.loading.sweeps.points import MissingPercentile, SweepPoint, run_percentiles

_RERUN_HINT = ("re-run with `vllm bench serve --save-result --percentile-metrics "
               "ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99` "
               "(or add --save-detailed to keep the per-request arrays)")


_VLLM_ARRAYS = ("ttfts", "itls", "latencies", "output_lens", "tpots", "errors")


def looks_like(obj: Any) -> bool:
    return (isinstance(obj, dict) and "request_rate" in obj
            and ("completed" in obj or "output_throughput" in obj))


def is_legacy(obj: dict) -> bool:
    return "request_goodput:" in obj or "failed" not in obj


def is_legacy_result(obj: Any) -> bool:
    """A result of the legacy ``benchmark_serving.py`` (``vllm-benchmark-serving``)."""
    return looks_like(obj) and is_legacy(obj)


def is_warm_up(obj: Any) -> bool:
    """A ``vllm bench sweep serve`` warm-up run (``run_number`` -1): recorded, never counted."""
    return looks_like(obj) and "run_number" in obj and obj["run_number"] == -1


def is_sweep_run(obj: Any) -> bool:
    """One run of a ``vllm bench sweep serve`` folder (``<combination>/run=N.json``)."""
    return looks_like(obj) and "run_number" in obj


def is_summary(value: Any) -> bool:
    """The ``summary.json`` of a ``vllm bench sweep serve`` folder: a list of the results beside it."""
    return isinstance(value, list) and bool(value) and all(looks_like(d) for d in value)


class _VllmRequests:
    """The per-request arrays of one vLLM result, restricted to successes."""

    def __init__(self, obj: dict, completed: int, line: int | None):
        self.line = line
        present = {name: obj[name] for name in _VLLM_ARRAYS
                   if isinstance(obj.get(name), list)}
        for name in _VLLM_ARRAYS:
            if name in obj and obj[name] is not None and name not in present:
                raise err(f"expected a list, got {show(obj[name])}", name, line)
        self.arrays = present
        sized = [n for n in ("ttfts", "latencies", "itls", "output_lens", "errors")
                 if n in present]
        self.n = len(present[sized[0]]) if sized else 0
        if self.n > reading.MAX_REQUESTS:
            raise err(f"the per-request arrays hold {self.n:,} requests; a run may hold at most "
                      f"{reading.MAX_REQUESTS:,} (see docs/limits.md)", sized[0], line)
        gaps = sum(len(row) for row in present.get("itls", ()) if isinstance(row, list))
        if gaps > reading.MAX_GAPS:
            raise err(f"the per-request itls hold {gaps:,} inter-token gaps; a run may hold at most "
                      f"{reading.MAX_GAPS:,} (see docs/limits.md)", "itls", line)
        for name in sized:
            if len(present[name]) != self.n:
                lengths = ", ".join(f"{k} {len(present[k])}" for k in sized)
                raise err(f"per-request arrays differ in length ({lengths})", name, line)
        self.mask: list[bool] | None = None
        self.mask_how = ""
        self._seconds: dict[str, list[float]] = {}
        self._e2e: tuple[list[float], str] | None | bool = False      # False: not computed yet
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
            raise err(f"cannot tell which of the {n} per-request entries succeeded "
                      f"(no 'errors' array and completed is {completed})", "errors",
                      self.line)
        if sum(mask) != completed:
            raise err(f"per-request arrays hold {sum(mask)} successful requests "
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
        """The successful entries of one array as checked numbers (read once: the percentiles,
        TPOT and goodput each ask again)."""
        if name not in self._seconds:
            self._seconds[name] = [finite(v, f"{name}[{i}]", self.line) for i, v in enumerate(self.values(name))]
        return self._seconds[name]

    def e2e(self) -> tuple[list[float], str] | None:
        """Per-request E2E in s of the successful requests, and how (computed once)."""
        if self._e2e is False:
            self._e2e = self._compute_e2e()
        return self._e2e

    def _compute_e2e(self) -> tuple[list[float], str] | None:
        if self.has("latencies"):
            return self.seconds("latencies"), "latencies (s)"
        if self.has("ttfts") and self.has("itls"):
            ttfts = self.seconds("ttfts")
            itls = self.values("itls")
            e2e = []
            for i, (ttft, gaps) in enumerate(zip(ttfts, itls)):
                if not isinstance(gaps, list):
                    raise err(f"expected a list of gaps, got {show(gaps)}",
                              f"itls[{i}]", self.line)
                e2e.append(ttft + sum(finite(g, f"itls[{i}]", self.line) for g in gaps))
            return e2e, "ttfts + sum(itls) (s; the file has no latencies)"
        return None


_VLLM_METRIC = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e": "e2el"}
_SUMMARY_KEY = re.compile(r"^(?:p([0-9.]+)|(median))_(ttft|tpot|itl|e2el)(?:_ms)?$")
_METRIC_OF = {v: k for k, v in _VLLM_METRIC.items()}


def _summary_ms(obj: dict, metric: str, q: float, line: int | None) -> tuple[float, str] | None:
    """The summary percentile ``p{q}_{metric}_ms`` (vLLM's key; ``median_..`` for p50), in ms; else the
    same key without ``_ms``, in seconds (InferenceX's result files)."""
    keys = [f"p{q:g}_{metric}_ms"] + ([f"median_{metric}_ms"] if q == 50 else [])
    for key in keys:
        if obj.get(key) is not None:
            return finite(obj[key], key, line), key
        bare = key.removesuffix("_ms")
        if obj.get(bare) is not None:
            return finite(obj[bare], bare, line) * 1000, f"{bare} (s) x 1000"
    return None


def in_seconds(obj: dict) -> bool:
    """A result whose summary percentiles are in seconds, without the ``_ms`` suffix (InferenceX)."""
    return any(_SUMMARY_KEY.match(str(k)) and not str(k).endswith("_ms") for k in obj)


def is_inferencex(obj: Any) -> bool:
    """An InferenceX result: a vLLM result with its summary percentiles in seconds."""
    return looks_like(obj) and in_seconds(obj)


def summary_percentiles(obj: dict) -> str:
    """The percentiles a vLLM summary holds, per metric: 'TTFT p99, TPOT p99, E2E p99'."""
    found: dict[str, list[float]] = {}
    for key, value in obj.items():
        match = _SUMMARY_KEY.match(str(key))
        if match and value is not None:
            found.setdefault(_METRIC_OF[match[3]], []).append(50.0 if match[2] else float(match[1]))
    return ", ".join(f"{m.upper()} " + "/".join(f"p{q:g}" for q in sorted(set(found[m])))
                     for m in _VLLM_METRIC if m in found) or "none"


def _vllm_rate(obj: dict, line: int | None) -> tuple[float, str, str]:
    strategy = obj.get("ramp_up_strategy")
    if strategy not in (None, "", False):
        raise err(f"a ramp-up run (ramp_up_strategy {show(strategy)}) has no single "
                  "arrival rate; it cannot be a sweep point", "ramp_up_strategy", line)
    if "request_rate" not in obj:
        raise err("missing key (the offered arrival rate)", "request_rate", line)
    raw = obj["request_rate"]
    rate = rate_from(raw, "request_rate", line)
    cap = obj.get("max_concurrency")         # vLLM writes null without --max-concurrency
    if cap is not None:                      # a cap of 0 or -4 requests in flight is no run
        cap = whole(cap, "max_concurrency", line, at_least=1)
    if math.isinf(rate):
        strategy = "burst" if cap is None else f"concurrent ({show(cap)} streams)"
        return rate, (f"arrival_rate: request_rate {show(raw)} = closed burst (every "
                      "request sent at once), not an open-loop point"), strategy
    burstiness = obj.get("burstiness")
    if burstiness is None or burstiness == 1 or burstiness == 1.0:
        process = "Poisson arrivals (burstiness 1.0)" if burstiness is not None \
            else "arrival process not recorded (no burstiness key)"
        strategy = "open-loop Poisson"
    else:
        process = f"gamma arrivals (burstiness {show(burstiness)}, not Poisson)"
        strategy = f"open-loop gamma (burstiness {show(burstiness)})"
    cap_text = ("no client concurrency cap" if cap is None else
                f"client max_concurrency {show(cap)}: not purely open-loop")
    if cap is not None:
        strategy += f", at most {show(cap)} concurrent"
    return rate, f"arrival_rate: request_rate {short(rate)} req/s, {process}, {cap_text}", strategy


def parse(obj: dict, rel: str, line: int | None, slos) -> SweepPoint:
    where = f" (object at line {line})" if line else ""
    methods: list[str] = []

    rate, how, strategy = _vllm_rate(obj, line)
    achieved = obj.get("request_throughput")
    if isinstance(achieved, (int, float)) and not isinstance(achieved, bool):
        how += (f"; achieved request_throughput {short(float(achieved))} req/s "
                "(completed / duration, includes the drain tail)")
    methods.append(how + where)

    if "completed" not in obj:
        raise err("missing key (the number of successful requests)", "completed", line)
    completed = whole(obj["completed"], "completed", line)
    reqs = _VllmRequests(obj, completed, line)

    # failed ------------------------------------------------------------------
    if obj.get("failed") is not None:
        failed = whole(obj["failed"], "failed", line)
        methods.append(f"completed/failed: keys completed ({completed}) and failed ({failed})")
    elif "errors" in reqs.arrays:
        failed = sum(1 for e in reqs.arrays["errors"] if e)
        methods.append(f"completed/failed: key completed ({completed}); no 'failed' key "
                       f"(legacy layout): {failed} non-empty entries in errors")
    elif obj.get("num_prompts") is not None:
        failed = whole(obj["num_prompts"], "num_prompts", line) - completed
        if failed < 0:
            raise err(f"num_prompts ({obj['num_prompts']}) is less than completed "
                      f"({completed})", "num_prompts", line)
        methods.append(f"completed/failed: key completed ({completed}); no 'failed' key: "
                       f"failed = num_prompts - completed = {failed}")
    else:
        failed = 0
        methods.append(f"completed/failed: key completed ({completed}); failures not "
                       "recorded in the file (0)")
    if reqs.mask is not None:
        methods[-1] += f"; successful requests in the per-request arrays: {reqs.mask_how}"
    sent = _sent(obj, completed, failed, line, methods)
    methods.append("achieved_rate: not measured (0). vLLM's request_throughput is completed / "
                   "duration, and the duration runs until the last request finishes, so a finite "
                   "run that kept up still shows less than the offered rate; a vLLM run's "
                   "overload shows as completed < num_prompts and in its latencies")
    per_request_e2e = reqs.e2e() if reqs.mask is not None and completed else None
    latency, missing, sources = run_percentiles(
        slos, rate, completed, sent,
        lambda slo: _vllm_percentile(obj, reqs, per_request_e2e, slo, f"the {completed} successful requests", line),
        methods, "no request completed, so no latency was measured (vLLM's summary shows 0 here, which "
                 "would pass any SLO); the point fails on delivery", line)

    # throughput and goodput -----------------------------------------------------
    if obj.get("output_throughput") is None:
        raise err("missing key (output tokens per second)", "output_throughput", line)
    throughput = finite(obj["output_throughput"], "output_throughput", line)
    methods.append("output_throughput: key output_throughput (tok/s)")

    goodput: float | None = None
    for key, label in (("request_goodput", "key request_goodput"),
                       ("request_goodput:", "legacy key 'request_goodput:' (trailing colon)")):
        if key in obj:
            if obj[key] is None:
                methods.append(f"goodput: {label} is null (no --goodput SLOs given) -> none")
            else:
                goodput = finite(obj[key], key, line)
                methods.append(f"goodput: {label} (req/s)")
            break
    else:
        methods.append("goodput: not in the file -> none")

    achieved = 0.0
    if math.isinf(rate) and obj.get("max_concurrency") is not None and isinstance(obj.get("request_throughput"),
                                                                                   (int, float)):
        achieved = finite(obj["request_throughput"], "request_throughput", line)
        methods.append(f"throughput: request_throughput {short(achieved)} req/s, what this closed loop "
                       "completed (an outcome of its concurrency, not an offered rate)")
    return SweepPoint(arrival_rate=rate, latency=latency, output_throughput=throughput,
                      completed=completed, failed=failed, sent=sent, achieved_rate=achieved,
                      goodput=goodput, file=rel, methods=tuple(methods), missing=missing,
                      per_request=_per_request(reqs, line), config=configuration(obj),
                      strategy=strategy, sources=sources, tokens=_tokens(obj, completed, line))


def _tokens(obj: dict, completed: int, line: int | None) -> tuple[float, float] | None:
    """Mean prompt and output tokens per completed request (total_input_tokens, total_output_tokens)."""
    given = [obj.get(k) for k in ("total_input_tokens", "total_output_tokens")]
    if not completed or any(v is None for v in given):
        return None
    prompt, output = (finite(v, k, line) for v, k in zip(given, ("total_input_tokens", "total_output_tokens")))
    return prompt / completed, output / completed


# what a run measured beside the load: the model, its parallelism, the client's
# concurrency cap, the server settings `vllm bench sweep serve` varies and a disaggregated
# benchmark's pool sizes (--metadata prefill_replicas=N decode_replicas=M: capplan pools)
CONFIG_KEYS = ("model_id", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
               "max_concurrency", "max_num_seqs", "max_num_batched_tokens", "prefill_replicas", "decode_replicas")


def configuration(obj: dict) -> tuple[tuple[str, str], ...]:
    """The run's configuration, ``(key, JSON text)`` of the CONFIG_KEYS it records."""
    return tuple((k, json.dumps(obj[k])) for k in CONFIG_KEYS if k in obj)


def _per_request(reqs: _VllmRequests, line: int | None) -> tuple[tuple[float, float, float], ...]:
    """(TTFT ms, TPOT ms, E2E s) of each successful request, as vLLM's goodput
    reads them; empty without ttfts, output_lens and a per-request E2E."""
    if reqs.mask is None or not (reqs.has("ttfts") and reqs.has("output_lens")):
        return ()
    e2e = reqs.e2e()
    if e2e is None:
        return ()
    ttfts = reqs.seconds("ttfts")
    lens = [whole(v, "output_lens", line) for v in reqs.values("output_lens")]
    return tuple((t * 1000, (e - t) / (n - 1) * 1000 if n > 1 else 0.0, e)
                 for t, e, n in zip(ttfts, e2e[0], lens))


def _sent(obj: dict, completed: int, failed: int, line: int | None, methods: list[str]) -> int:
    """Requests sent: ``num_prompts`` (a run whose completed falls short of it was overloaded)."""
    if obj.get("num_prompts") is None:
        methods.append(f"sent: no num_prompts key -> completed + failed = {completed + failed}")
        return completed + failed
    sent = whole(obj["num_prompts"], "num_prompts", line)
    if sent < completed + failed:
        raise err(f"num_prompts ({sent}) is less than completed + failed "
                  f"({completed} + {failed})", "num_prompts", line)
    methods.append(f"sent: key num_prompts ({sent})")
    return sent


def _vllm_percentile(obj: dict, reqs: _VllmRequests, per_request_e2e, slo, success_text: str,
                     line: int | None) -> tuple[float, str]:
    """One SLO's percentile of a run: the summary key, else computed from the
    per-request arrays as vLLM computes it; else :class:`MissingPercentile`."""
    name, q, col = _VLLM_METRIC[slo.metric], slo.q, slo.column
    scale = 1 / 1000 if slo.metric == "e2e" else 1.0          # summary ms -> the column's unit
    summary = _summary_ms(obj, name, q, line)
    if summary:
        return summary[0] * scale, f"{col}: summary key {summary[1]}" + (" / 1000 (ms -> s)" if scale != 1 else "")
    computed = _computed(obj, reqs, per_request_e2e, slo, success_text, line)
    if computed:
        return computed
    if slo.metric == "tpot":
        itl = _summary_ms(obj, "itl", q, line)
        if itl:
            return itl[0], (f"{col}: taken from ITL, summary key {itl[1]} (pooled chunk gaps, not "
                            f"per-request TPOT): the file has neither p{q:g}_tpot_ms nor the "
                            "per-request arrays to compute TPOT")
    arrays = ", ".join(n for n in _VLLM_ARRAYS if n in reqs.arrays) or "none"
    raise MissingPercentile(
        f"no {slo.text}: the summary has no p{q:g}_{name}_ms and the per-request arrays needed "
        f"to compute it are missing (arrays in the file: {arrays}); the summary holds "
        f"{summary_percentiles(obj)}. Set the plan's SLO to a percentile the file has, or "
        f"{_RERUN_HINT}", slo, f"p{q:g}_{name}_ms", line)


def _computed(obj: dict, reqs: _VllmRequests, per_request_e2e, slo, success_text: str,
              line: int | None) -> tuple[float, str] | None:
    q, col, name = slo.q, slo.column, _VLLM_METRIC[slo.metric]
    why = f"(the summary has no p{q:g}_{name}_ms)"
    if slo.metric == "ttft" and reqs.has("ttfts"):
        ttfts = reqs.seconds("ttfts")
        return (percentile(ttfts, q) * 1000,
                f"{col}: {NP} of the per-request ttfts (s) x 1000 over {success_text} {why}")
    if slo.metric == "e2e" and per_request_e2e:
        values, source = per_request_e2e
        return (percentile(values, q),
                f"{col}: {NP} of per-request E2E = {source} over {success_text} {why}")
    if slo.metric == "itl" and reqs.has("itls"):
        gaps = [finite(g, f"itls[{i}]", line) for i, row in enumerate(reqs.values("itls"))
                for g in (row if isinstance(row, list) else [])]
        if gaps:
            return (percentile(gaps, q) * 1000,
                    (f"{col}: {NP} x 1000 of every gap in the per-request itls (s) of "
                    f"{success_text}, pooled as vLLM pools them {why}"))
    if slo.metric == "tpot":
        return _vllm_tpot(reqs, per_request_e2e, slo, why, line)
    return None


def _vllm_tpot(reqs: _VllmRequests, per_request_e2e, slo, why: str,
               line: int | None) -> tuple[float, str] | None:
    q, col = slo.q, slo.column
    if "tpots" in reqs.arrays:
        values = [v for v in reqs.values("tpots") if v is not None]
        values = [finite(v, "tpots", line) for v in values]
        values = [v for v in values if v > 0]
        if values:
            return (percentile(values, q) * 1000,
                    f"{col}: {NP} of {len(values)} positive per-request tpots (s) x 1000 {why}")
    if per_request_e2e and reqs.has("ttfts") and reqs.has("output_lens"):
        e2e, source = per_request_e2e
        ttfts = reqs.seconds("ttfts")
        lens = [whole(v, "output_lens", line) for v in reqs.values("output_lens")]
        values = [(e - t) / (n - 1) for e, t, n in zip(e2e, ttfts, lens) if n > 1]
        if values:
            return (percentile(values, q) * 1000,
                    (f"{col}: {NP} x 1000 of per-request TPOT = (E2E - TTFT) / (output_len - 1), "
                    f"vLLM's definition, over the {len(values)} successful requests with "
                    f"output_len > 1 (E2E = {source}; output_len from output_lens) {why}"))
    return None
