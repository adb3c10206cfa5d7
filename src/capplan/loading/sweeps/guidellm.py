"""GuideLLM ``benchmarks.json`` (or ``benchmarks.yaml``) reports.

``guidellm-v0.3`` / ``guidellm-v0.4`` / ``guidellm-v0.5-v0.6`` / ``guidellm-v0.7+``
    v0.3: only ``benchmarks``, the strategy under ``benchmarks[i].args``;
    v0.4: top-level ``args``, strategy under ``benchmarks[i].config``;
    v0.5-v0.6: ``metadata.version`` 1; v0.7+: ``metadata.version`` 2 with a
    top-level ``config``. Other metadata versions are refused.

Values
------
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
  ``request_totals.errored``; ``sent`` = successful + errored + incomplete
  (incomplete requests were cancelled unfinished when the run ended: a sign of
  overload). ``achieved_rate`` = ``metrics.requests_per_second.successful.mean``
  (0, not measured, when absent). ``goodput`` is ``None``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from capplan.loading.sweeps.cutoff import in_flight_at_close
from capplan.loading.sweeps.fields import (
    NP,
    dig,
    err,
    finite,
    percentile,
    rate_from,
    short,
    show,
    whole,
)
from capplan.loading.sweeps.points import MissingPercentile, SweepPoint, run_percentiles

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


_STRATEGY = {"constant": "constant", "poisson": "open-loop Poisson", "synchronous": "synchronous",
             "concurrent": "concurrent", "throughput": "burst", "trace": "trace replay", "replay": "trace replay"}


def _strategy(stype: str, strategy: dict) -> str:
    """'constant', 'concurrent (8 streams)', ...: how the stage offered its load."""
    streams = strategy.get("streams")
    if stype == "concurrent" and isinstance(streams, int) and not isinstance(streams, bool):
        return f"concurrent ({streams} streams)"
    return _STRATEGY.get(stype, str(stype))


def format_name(doc: dict) -> str:
    """The report's schema, as its format's name: each GuideLLM release range keeps the strategy elsewhere."""
    metadata = doc.get("metadata")
    if metadata is not None:
        version = dig(metadata, "version")
        if version == 1:
            return "guidellm-v0.5-v0.6"
        if version == 2:
            return "guidellm-v0.7+"
        raise err(f"GuideLLM report schema version {show(version)} is not supported "
                  "(known: 1 for GuideLLM v0.5-v0.6, 2 for v0.7+)", "metadata.version")
    if "args" in doc:
        return "guidellm-v0.4"
    return "guidellm-v0.3"


def _cap_text(cap, bench: dict, where: str) -> str:
    """How a client concurrency cap bears on an open-loop stage: a cap the stage reached made it
    partly a closed loop; one never reached (GuideLLM records its default, 10,240) did not."""
    if cap is None:
        return ""
    peak = dig(bench, "metrics", "request_concurrency", "successful", "max")
    if peak is not None and finite(peak, f"{where}.metrics.request_concurrency.successful.max") < finite(
            cap, f"{where}.config.strategy.max_concurrency"):
        return (f", client max_concurrency {show(cap)} never reached (at most {short(float(peak))} in flight, "
                f"{where}.metrics.request_concurrency.successful.max): open-loop")
    return f", capped at max_concurrency {show(cap)} (not purely open-loop)"


def release(doc: dict) -> str:
    """The GuideLLM version the report records (``metadata.guidellm_version``, from v0.5), else ''."""
    version = dig(doc, "metadata", "guidellm_version")
    return version.strip()[:40] if isinstance(version, str) else ""


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and "benchmarks" in doc


def parse_guidellm(doc: dict, rel: str, slos) -> list[SweepPoint]:
    fmt = format_name(doc)
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise err(f"expected a list of benchmarks, got {show(benchmarks)}", "benchmarks")
    if not benchmarks:
        raise err("the GuideLLM report holds no benchmarks", "benchmarks")
    # v0.3 keeps the strategy under benchmarks[i].args, later versions under .config
    first, second = ("args", "config") if fmt == "guidellm-v0.3" else ("config", "args")
    return [_parse_guidellm_benchmark(bench, i, rel, fmt, first, second, slos) for i, bench in enumerate(benchmarks)]


def _summary(metrics: dict, name: str, where: str) -> dict:
    node = dig(metrics, name, "successful")
    if not isinstance(node, dict):
        raise err("missing (a StatusDistributionSummary with a 'successful' part)",
                  f"{where}.metrics.{name}.successful")
    return node


def _summary_value(metrics: dict, name: str, where: str, *path: str) -> float:
    node = _summary(metrics, name, where)
    value = dig(node, *path)
    key = f"{where}.metrics.{name}.successful.{'.'.join(path)}"
    if value is None:
        raise err("missing", key)
    return finite(value, key)


def _parse_guidellm_benchmark(bench: Any, i: int, rel: str, fmt: str,
                              first: str, second: str, slos) -> SweepPoint:
    where = f"benchmarks[{i}]"
    if not isinstance(bench, dict):
        raise err(f"expected an object, got {show(bench)}", where)
    kind = bench.get("type_")
    if kind is not None and kind != "generative_benchmark":
        raise err(f"type_ {show(kind)} is not a generative benchmark", f"{where}.type_")
    methods: list[str] = []

    # arrival rate ------------------------------------------------------------------
    strategy = dig(bench, first, "strategy")
    if not isinstance(strategy, dict):
        strategy = dig(bench, second, "strategy")
    if not isinstance(strategy, dict):
        raise err("missing (the scheduling strategy of this benchmark)",
                  f"{where}.{first}.strategy")
    stype = strategy.get("type_", strategy.get("type"))
    skey = f"{where}.{first}.strategy"
    if not isinstance(stype, str):
        raise err(f"expected the strategy's type as text (constant, poisson, ...), got {show(stype)}",
                  f"{skey}.type_")
    for key in ("max_concurrency", "streams"):          # requests in flight: fewer than one is no stage
        if strategy.get(key) is not None:
            whole(strategy[key], f"{skey}.{key}", at_least=1)
    if stype in _GUIDELLM_OPEN:
        if strategy.get("rate") is None:
            raise err("missing (the offered rate of a constant/poisson stage)",
                      f"{skey}.rate")
        rate = rate_from(strategy["rate"], f"{skey}.rate")
        methods.append(f"arrival_rate: {skey}.rate {short(rate)} req/s, "
                       f"{_GUIDELLM_OPEN[stype]}{_cap_text(strategy.get('max_concurrency'), bench, where)}")
    elif stype in _GUIDELLM_CLOSED:
        rate = math.inf
        methods.append(f"arrival_rate: {where} is a GuideLLM '{stype}' stage "
                       f"({_GUIDELLM_CLOSED[stype]}): no offered rate, recorded as inf "
                       "and not an open-loop point")
    else:
        raise err(f"unknown GuideLLM strategy type {show(stype)} (known: "
                  f"{', '.join(sorted({**_GUIDELLM_OPEN, **_GUIDELLM_CLOSED}))})",
                  f"{skey}.type_")

    metrics = bench.get("metrics")
    if not isinstance(metrics, dict):
        raise err("missing (the benchmark's metrics)", f"{where}.metrics")

    # counts ------------------------------------------------------------------------
    totals = metrics.get("request_totals")
    tkey = f"{where}.metrics.request_totals"
    if not isinstance(totals, dict):
        totals, tkey = bench.get("request_totals"), f"{where}.request_totals"
    if not isinstance(totals, dict):
        raise err("missing (successful/errored/incomplete request counts)",
                  f"{where}.metrics.request_totals")
    completed = whole(totals.get("successful"), f"{tkey}.successful")
    failed = whole(totals.get("errored", 0) or 0, f"{tkey}.errored")
    incomplete = whole(totals.get("incomplete", 0) or 0, f"{tkey}.incomplete")
    cut, how = in_flight_at_close(bench, metrics, where, rate, incomplete) if completed else (0, "")
    sent = completed + failed + incomplete - cut
    methods.append(f"completed/failed/sent: {tkey}.successful ({completed}), .errored "
                   f"({failed}) and .incomplete ({incomplete}: cancelled unfinished when the "
                   f"window closed); " + (f"{cut} of them {how}, so not counted as sent; sent = "
                                          f"{completed} + {failed} + {incomplete - cut} = {sent}" if cut else
                                          f"sent = their sum, {sent}" + (f" ({how})" if how else "")))
    node = dig(metrics, "requests_per_second", "successful", "mean")
    if node is None:
        achieved = 0.0
        methods.append("achieved_rate: the report has no requests_per_second -> not measured (0)")
    else:
        achieved = finite(node, f"{where}.metrics.requests_per_second.successful.mean")
        methods.append(f"achieved_rate: {where}.metrics.requests_per_second.successful.mean "
                       "(req/s of successful requests over the run)"
                       + (f" x (completed + in flight at the close) / completed = {short(achieved)} x "
                          f"{completed + cut}/{completed}" if cut else ""))
        achieved *= (completed + cut) / completed if cut else 1

    latency, missing, sources = run_percentiles(
        slos, rate, completed, sent,
        lambda slo: _guidellm_percentile(bench, metrics, where, completed, slo),
        methods, "no request succeeded, so no latency was measured; the point fails on delivery")

    throughput = _summary_value(metrics, "output_tokens_per_second", where, "mean")
    methods.append(f"output_throughput: {where}.metrics.output_tokens_per_second."
                   "successful.mean (tok/s)")
    methods.append("goodput: not reported by GuideLLM -> none")
    return SweepPoint(arrival_rate=rate, latency=latency, output_throughput=throughput,
                      completed=completed, failed=failed, sent=sent,
                      achieved_rate=achieved, goodput=None, file=rel, methods=tuple(methods),
                      missing=missing, strategy=_strategy(stype, strategy), sources=sources,
                      per_request=_requests(bench, where, completed), config=_config(bench),
                      tokens=_tokens(metrics, where) if completed else None)


def _config(bench: dict) -> tuple[tuple[str, str], ...]:
    """The model the benchmark's backend named (GuideLLM 0.8: ``config.backend.model``)."""
    model = dig(bench, "config", "backend", "model")
    return (("model_id", json.dumps(model)),) if isinstance(model, str) and model else ()


def _tokens(metrics: dict, where: str) -> tuple[float, float] | None:
    """Mean prompt and output tokens of the successful requests (``prompt_token_count``, ``output_token_count``)."""
    means = [dig(metrics, name, "successful", "mean") for name in ("prompt_token_count", "output_token_count")]
    if any(m is None for m in means):
        return None
    prompt, output = (finite(m, f"{where}.metrics.{n}.successful.mean")
                      for m, n in zip(means, ("prompt_token_count", "output_token_count")))
    return prompt, output


_NODE = {"ttft": "time_to_first_token_ms", "tpot": "inter_token_latency_ms",
         "itl": "inter_token_latency_ms", "e2e": "request_latency"}


def _summary_key(q: float) -> tuple[str, ...]:
    """Where a GuideLLM distribution keeps the q-th percentile: ``median`` for
    50, else ``percentiles.p99`` / ``percentiles.p999`` (99.9)."""
    return ("median",) if q == 50 else ("percentiles", "p" + f"{q:g}".replace(".", ""))


def _guidellm_percentile(bench: dict, metrics: dict, where: str, completed: int,
                         slo) -> tuple[float, str]:
    """One SLO's percentile: TPOT from the per-request list when the report
    holds every request (GuideLLM's own TPOT differs from vLLM's), the others
    from the summary; what one lacks, the other gives."""
    node, col, path = _NODE[slo.metric], slo.column, _summary_key(slo.q)
    computed = _per_request(bench, where, completed, slo)
    if slo.metric == "tpot" and computed:
        return computed
    value = dig(_summary(metrics, node, where), *path)
    key = f"{where}.metrics.{node}.successful.{'.'.join(path)}"
    if value is not None:
        unit = "GuideLLM reports seconds" if slo.metric == "e2e" else "ms; GuideLLM's percentile"
        text = f"{col}: {key} ({unit})"
        if slo.metric == "tpot":
            text = (f"{col}: taken from ITL, {key} (ms; GuideLLM weights each request's mean "
                    "inter-token latency by its tokens, so this approximates vLLM's "
                    "per-request TPOT percentile); the report lacks the full per-request list")
        return finite(value, key), text
    if computed:
        return computed
    given = dig(_summary(metrics, node, where), "percentiles")
    have = sorted(map(str, given)) if isinstance(given, dict) else []
    raise MissingPercentile(f"no {slo.text}: {key} is missing and the report lacks the full "
                            f"per-request list to compute it; the summary holds "
                            f"{', '.join(have) or 'no percentiles'}", slo, key)


def _every_request(bench: dict, completed: int) -> list[dict] | None:
    """The report's list of successful requests when it holds every one of them."""
    rows = dig(bench, "requests", "successful")
    if isinstance(rows, list) and rows and len(rows) == completed and all(isinstance(r, dict) for r in rows):
        return rows
    return None


def _requests(bench: dict, where: str, completed: int) -> tuple[tuple[float, float, float], ...]:
    """(TTFT ms, TPOT ms, E2E s) of every successful request, for goodput; TPOT is the
    request's inter_token_latency_ms ((last - first token) / (output_tokens - 1), 0 for
    one token, as vLLM counts it); empty unless the report keeps every request."""
    rows = _every_request(bench, completed)
    out = []
    for j, row in enumerate(rows or ()):
        key = f"{where}.requests.successful[{j}]"
        values = [row.get(k) for k in ("time_to_first_token_ms", "inter_token_latency_ms", "request_latency",
                                       "output_tokens")]
        if any(v is None for v in values):
            return ()
        ttft, itl, e2e = (finite(v, f"{key}.{k}") for v, k in zip(values, ("time_to_first_token_ms",
                          "inter_token_latency_ms", "request_latency")))
        out.append((ttft, itl if whole(values[3], f"{key}.output_tokens") > 1 else 0.0, e2e))
    return tuple(out)


def _per_request(bench: dict, where: str, completed: int, slo) -> tuple[float, str] | None:
    rows = _every_request(bench, completed)
    if rows is None:
        return None
    node = _NODE[slo.metric]
    values = []
    for j, row in enumerate(rows):
        value, n = row.get(node), row.get("output_tokens")
        if value is None:
            continue
        key = f"{where}.requests.successful[{j}]"
        if slo.metric in ("tpot", "itl") and (n is None or whole(n, f"{key}.output_tokens") <= 1):
            continue
        values.append(finite(value, f"{key}.{node}"))
    if not values:
        return None
    if slo.metric == "tpot":
        what = ("per-request inter_token_latency_ms = (last token - first token) / "
                "(output_tokens - 1), vLLM's TPOT,")
    else:
        what = f"per-request {node}"
    return percentile(values, slo.q), (
        f"{slo.column}: {NP} of the {what} over the {len(values)} of {completed} successful "
        f"requests{' with output_tokens > 1' if slo.metric in ('tpot', 'itl') else ''} "
        f"({where}.requests.successful)")
