"""Goodput: the share of a run's requests that met every SLO, request by request.

vLLM's ``--goodput`` semantics (``benchmark_serving.py``, ``calculate_metrics``):
a successful request is *good* when its own TTFT, TPOT and E2E latency are each
at most the SLO's limit (TPOT = (E2E - TTFT) / (output_len - 1), 0 for a
one-token output); failed and unfinished requests are never good. vLLM reports
good requests per second; the share here is good requests over the requests
sent, which is what "the share of requests meeting every SLO" means at one
rate. A limit applies to every request whatever the SLO's percentile: a p95
TTFT SLO of 1 s asks each good request for a TTFT of at most 1 s.
"""

from __future__ import annotations

from capplan.loading.sweeps.points import SweepPoint

METRICS = ("ttft", "tpot", "e2e")       # the per-request metrics vLLM's goodput checks


def compliant_share(point: SweepPoint, limits: dict[str, float]) -> float | None:
    """Good requests / requests sent, with ``limits`` per metric (ttft and tpot
    in ms, e2e in s; a metric without a limit is not checked); None when the
    run kept no per-request data."""
    if not point.per_request:
        return None
    checks = [(i, limits[m]) for i, m in enumerate(METRICS) if m in limits]
    good = sum(1 for request in point.per_request if all(request[i] <= limit for i, limit in checks))
    sent = point.sent or point.completed + point.failed
    return good / sent if sent else None
