"""Requests a GuideLLM window cut off: in flight when it closed, not left behind by a saturated replica.

GuideLLM measures each rate for a fixed window (``max_duration``) and then
cancels what is still running; the report counts those requests as
``incomplete``. At an open-loop rate λ a replica that keeps up still has about
λ x E2E requests in flight at any moment, so a 20 s window at 4 req/s and 1.2 s
latency ends with ~5 of 80 unfinished though nothing queued: counting them as
unfinished would call the point saturated (75/80 < 95 %) and drop λ*.

A request is cut off when it started within the window's last E2E (the
longest latency of a successful request of that window): had it been served
like the others it could not have finished before the close. GuideLLM 0.8
keeps the incomplete requests with their start times
(``requests.incomplete[i].info.timings.request_start``) and the window's end
(``end_time``), so each is classified; a request that started earlier and was
still running was left behind, a sign of saturation. Without that list the
count decides: all incomplete requests are cut off when they are no more than
ceil(λ x E2E) (what the rate and the latency leave in flight), else none is
(the shortfall is overload, as before).
"""

from __future__ import annotations

import math

from capplan.loading.sweeps.fields import dig, finite, short


def in_flight_at_close(bench: dict, metrics: dict, where: str, rate: float, incomplete: int) -> tuple[int, str]:
    """(how many of the ``incomplete`` requests the window cut off, how that was decided); (0, '') when
    none or the report cannot tell (no latency, or a stage that is not open-loop)."""
    if not incomplete or math.isinf(rate):
        return 0, ""
    longest, lkey = _longest_latency(metrics, where)
    if longest is None:
        return 0, ""
    starts = _incomplete_starts(bench, where, incomplete)
    if starts is not None:
        end = finite(bench["end_time"], f"{where}.end_time")
        left_behind = sum(1 for start in starts if start < end - longest)
        cut = max(incomplete - left_behind, 0)
        return cut, (f"started within the window's last {short(longest)} s ({lkey}, the longest completed "
                     f"request; {where}.requests.incomplete[].info.timings.request_start against "
                     f"{where}.end_time): in flight when it closed, not left behind"
                     + (f"; {left_behind} started earlier and were still unfinished" if left_behind else ""))
    expected = math.ceil(rate * longest)
    if incomplete <= expected:
        return incomplete, (f"no more than the {expected} = ceil({short(rate)} req/s x {short(longest)} s, "
                            f"{lkey}) a replica that keeps up has in flight: cut off by the window's close")
    return 0, (f"more than the {expected} = ceil({short(rate)} req/s x {short(longest)} s, {lkey}) a replica "
               "that keeps up has in flight: left behind, a sign of saturation")


def _longest_latency(metrics: dict, where: str) -> tuple[float | None, str]:
    """The longest E2E (s) of a successful request: the summary's max, else its p99."""
    for path in (("max",), ("percentiles", "p99")):
        value = dig(metrics, "request_latency", "successful", *path)
        if value is not None:
            key = f"{where}.metrics.request_latency.successful.{'.'.join(path)}"
            return finite(value, key), key
    return None, ""


def _incomplete_starts(bench: dict, where: str, incomplete: int) -> list[float] | None:
    """When each incomplete request started (s, GuideLLM's clock), where the report keeps them all with
    the window's end; a request never sent counts from when it was due (``targeted_start``)."""
    rows = dig(bench, "requests", "incomplete")
    if not isinstance(rows, list) or len(rows) < incomplete or bench.get("end_time") is None:
        return None     # a sampled list cannot tell about the requests it left out
    starts = []
    for j, row in enumerate(rows):
        timings = dig(row, "info", "timings")
        start = None
        if isinstance(timings, dict):
            start = timings.get("request_start")
            start = timings.get("targeted_start") if start is None else start
        if start is None:
            return None
        starts.append(finite(start, f"{where}.requests.incomplete[{j}].info.timings.request_start"))
    return starts
