"""Closed-loop runs: what a concurrency sweep can tell about λ*, and what it cannot.

``vllm bench serve --max-concurrency N`` (``request_rate`` inf), GuideLLM's
``concurrent`` and ``throughput`` stages and InferenceX's result files keep N
requests in flight and send the next one when one finishes. Their request rate
is an outcome, the throughput N clients reach (Little's law: N / mean E2E),
not a rate offered from outside; and with no arrivals in between there is no
Poisson queueing, so the latency at that throughput is better than an open-loop
point at the same rate would see. The highest throughput whose latencies meet
the plan's SLOs is therefore an optimistic upper bound on λ*, never a
measurement of the knee. capplan shows these runs with the files and derives
no λ* from them; a sweep of closed-loop runs only is refused with this bound
and the runs that would measure λ*.
"""

from __future__ import annotations

from capplan.loading.sweeps.fields import short


def closed_loop_refusal(points, slos, limits: dict[str, float]) -> str:
    """The message for an import without an open-loop run (``points``, its runs): what the runs are, the
    bound they give at the plan's SLOs (``limits``: per metric, the tightest limit in its display unit), the fix."""
    if not points:
        return "the imported files hold no run that counts (only summaries or warm-up runs)"
    loops = sorted({p.strategy for p in points}, key=lambda s: (len(s), s))
    kinds = "only closed bursts" if loops == ["burst"] else f"only closed-loop runs: {', '.join(loops)}"
    text = (f"the imported files hold no open-loop run ({kinds}): the request rate of a closed loop is an "
            "outcome (the throughput its clients reach), not an offered rate, and it has no Poisson queueing, "
            "so capplan derives no λ* from it")
    measured = [p for p in points if p.achieved_rate > 0]
    meeting = [p for p in measured if _meets(p, slos, limits)]
    if meeting:
        best = max(meeting, key=lambda p: p.achieved_rate)
        unchecked = [s.text for s in slos if s.column not in best.latency]
        text += (f". The highest throughput that meets the plan's SLOs is {short(best.achieved_rate)} req/s "
                 f"({best.file}, {best.strategy}"
                 + (f"; {', '.join(unchecked)} not in the file, unchecked" if unchecked else "")
                 + "): an optimistic upper bound on λ*, not λ* (an open-loop point at that rate queues)")
    elif measured:
        text += ". No run meets the plan's SLOs, so even the bound they give is below the lowest throughput, " \
                f"{short(min(p.achieved_rate for p in measured))} req/s"
    return text + (". Measure open-loop rates up to it and import those: vllm bench serve --request-rate R "
                   "without --max-concurrency, or guidellm run --profile kind=poisson (or kind=constant) "
                   "--override profile.rate R1,R2,...")


def _meets(point, slos, limits: dict[str, float]) -> bool:
    """Every percentile of the plan's SLOs the run has is within its limit (those it lacks are unchecked)."""
    return any(s.column in point.latency for s in slos) and all(
        point.latency[s.column] <= limits[s.metric] for s in slos if s.column in point.latency)
