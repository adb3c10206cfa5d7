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
  non-empty ``errors`` entries, else ``num_prompts - completed``; ``sent`` =
  ``num_prompts`` (else completed + failed). ``achieved_rate`` is 0 (not
  measured): ``request_throughput`` is completed / duration with the drain
  after the last request in the duration, so it is below the offered rate
  even for a run that kept up (4 req/s offered, 3.18 achieved in the 70B files).
* ``goodput`` = ``request_goodput`` or the legacy ``"request_goodput:"``
  (``null`` -> ``None``).
"""

from __future__ import annotations

import math
from typing import Any

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
from capplan.loading.sweeps.points import SweepPoint

_RERUN_HINT = ("re-run with `vllm bench serve --save-result --percentile-metrics "
               "ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99` "
               "(or add --save-detailed to keep the per-request arrays)")


_VLLM_ARRAYS = ("ttfts", "itls", "latencies", "output_lens", "tpots", "errors")


def looks_like(obj: Any) -> bool:
    return (isinstance(obj, dict) and "request_rate" in obj
            and ("completed" in obj or "output_throughput" in obj))


def is_legacy(obj: dict) -> bool:
    return "request_goodput:" in obj or "failed" not in obj


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
        for name in sized:
            if len(present[name]) != self.n:
                lengths = ", ".join(f"{k} {len(present[k])}" for k in sized)
                raise err(f"per-request arrays differ in length ({lengths})", name, line)
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
        return [finite(v, f"{name}[{i}]", self.line)
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
                    raise err(f"expected a list of gaps, got {show(gaps)}",
                              f"itls[{i}]", self.line)
                e2e.append(ttft + sum(finite(g, f"itls[{i}]", self.line) for g in gaps))
            return e2e, "ttfts + sum(itls) (s; the file has no latencies)"
        return None


def _summary_ms(obj: dict, metric: str, p: int, line: int | None) -> tuple[float, str] | None:
    key = f"p{p}_{metric}_ms"
    if obj.get(key) is None:
        return None
    return finite(obj[key], key, line), key


def _vllm_rate(obj: dict, line: int | None) -> tuple[float, str]:
    strategy = obj.get("ramp_up_strategy")
    if strategy not in (None, "", False):
        raise err(f"a ramp-up run (ramp_up_strategy {show(strategy)}) has no single "
                  "arrival rate; it cannot be a sweep point", "ramp_up_strategy", line)
    if "request_rate" not in obj:
        raise err("missing key (the offered arrival rate)", "request_rate", line)
    raw = obj["request_rate"]
    rate = rate_from(raw, "request_rate", line)
    if math.isinf(rate):
        return rate, (f"arrival_rate: request_rate {show(raw)} = closed burst (every "
                      "request sent at once), not an open-loop point")
    burstiness = obj.get("burstiness")
    if burstiness is None or burstiness == 1 or burstiness == 1.0:
        process = "Poisson arrivals (burstiness 1.0)" if burstiness is not None \
            else "arrival process not recorded (no burstiness key)"
    else:
        process = f"gamma arrivals (burstiness {show(burstiness)}, not Poisson)"
    cap = obj.get("max_concurrency")
    cap_text = ("no client concurrency cap" if cap is None else
                f"client max_concurrency {show(cap)}: not purely open-loop")
    return rate, f"arrival_rate: request_rate {short(rate)} req/s, {process}, {cap_text}"


def parse(obj: dict, rel: str, line: int | None) -> SweepPoint:
    where = f" (object at line {line})" if line else ""
    methods: list[str] = []

    rate, how = _vllm_rate(obj, line)
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
            ttft = percentile(ttfts, 95) * 1000
            text = (f"ttft_p95: {NP} of the per-request ttfts (s) x 1000 over "
                    f"{success_text} (the summary has no p95_ttft_ms)")
            check = _summary_ms(obj, "ttft", 99, line)
            if check:
                text += (f"; check: p99 of the same array {short(percentile(ttfts, 99) * 1000)}"
                         f" ms vs summary p99_ttft_ms {short(check[0])} ms")
            methods.append(text)
        else:
            raise err("no p95 TTFT: the summary has no p95_ttft_ms and the file holds no "
                      f"per-request 'ttfts' array; {_RERUN_HINT}", "p95_ttft_ms", line)

        # E2E -----------------------------------------------------------------
        per_request_e2e = reqs.e2e() if reqs.mask is not None else None
        summary = _summary_ms(obj, "e2el", 99, line)
        if summary:
            e2e = summary[0] / 1000
            methods.append(f"e2e_p99: summary key {summary[1]} / 1000 (ms -> s)")
        elif per_request_e2e:
            values, source = per_request_e2e
            e2e = percentile(values, 99)
            methods.append(f"e2e_p99: {NP} of per-request E2E = {source} over "
                           f"{success_text} (the summary has no p99_e2el_ms)")
        else:
            raise err("no p99 E2E: the summary has no p99_e2el_ms and the file holds neither "
                      f"'latencies' nor 'ttfts' with 'itls'; {_RERUN_HINT}",
                      "p99_e2el_ms", line)

        # TPOT ----------------------------------------------------------------
        tpot, text = _vllm_tpot(obj, reqs, per_request_e2e, success_text, line)
        methods.append(text)

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

    return SweepPoint(arrival_rate=rate, ttft_p95=ttft, tpot_p95=tpot, e2e_p99=e2e,
                      output_throughput=throughput, completed=completed, failed=failed,
                      sent=sent, achieved_rate=0.0, goodput=goodput, file=rel, methods=tuple(methods))


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


def _vllm_tpot(obj: dict, reqs: _VllmRequests, per_request_e2e, success_text: str,
               line: int | None) -> tuple[float, str]:
    summary = _summary_ms(obj, "tpot", 95, line)
    if summary:
        return summary[0], f"tpot_p95: summary key {summary[1]}"

    check = _summary_ms(obj, "tpot", 99, line)

    def with_check(values: list[float], text: str) -> str:
        if check:
            text += (f"; check: p99 of the same values {short(percentile(values, 99) * 1000)}"
                     f" ms vs summary p99_tpot_ms {short(check[0])} ms")
        return text

    if "tpots" in reqs.arrays:
        values = [v for v in reqs.values("tpots") if v is not None]
        values = [finite(v, "tpots", line) for v in values]
        values = [v for v in values if v > 0]
        if values:
            return (percentile(values, 95) * 1000,
                    with_check(values, f"tpot_p95: {NP} of {len(values)} positive per-request "
                                       "tpots (s) x 1000 (the summary has no p95_tpot_ms)"))

    if per_request_e2e and reqs.has("ttfts") and reqs.has("output_lens"):
        e2e, source = per_request_e2e
        ttfts = reqs.seconds("ttfts")
        lens = [whole(v, "output_lens", line) for v in reqs.values("output_lens")]
        values = [(e - t) / (n - 1) for e, t, n in zip(e2e, ttfts, lens) if n > 1]
        if values:
            return (percentile(values, 95) * 1000,
                    with_check(values,
                               f"tpot_p95: {NP} x 1000 of per-request TPOT = (E2E - TTFT) / "
                               f"(output_len - 1), vLLM's definition, over the {len(values)} "
                               f"successful requests with output_len > 1 (E2E = {source}; "
                               "output_len from output_lens; the summary has no p95_tpot_ms)"))

    summary = _summary_ms(obj, "itl", 95, line)
    if summary:
        return summary[0], (f"tpot_p95: taken from ITL, summary key {summary[1]} (pooled "
                            "chunk gaps, not per-request TPOT): the file has neither "
                            "p95_tpot_ms nor the per-request arrays to compute TPOT")
    raise err("no p95 TPOT: the summary has no p95_tpot_ms (nor p95_itl_ms) and the file "
              "lacks the per-request arrays (ttfts, output_lens and latencies or itls) to "
              f"compute it; {_RERUN_HINT}", "p95_tpot_ms", line)
