"""Whether a sweep point delivered the load it was offered, in words.

A point where requests did not complete, or whose achieved rate fell short of
the offered one, was overloaded whatever its percentiles say: they describe
only the requests that finished. The verdict is the model's
(``load_sweep.delivered_ok`` against the policy ``min_delivered_share``); this
module words the facts behind it, once, for an imported row's note and for the
record's explanation of a failing point.
"""

from __future__ import annotations

from collections.abc import Mapping

from capplan.loading.sweeps.fields import short


def delivery_text(row: Mapping) -> str:
    """'only 7 of 100 requests completed at 5 req/s (3 failed, 90 unfinished)' and/or
    '1.4 of 5 req/s achieved (28 %)'; empty when the row records neither
    (``sent`` and ``achieved_rate`` 0). Values in display units (req/s, counts)."""
    rate = float(row["arrival_rate"])
    parts = []
    sent, completed = int(row.get("sent") or 0), int(row.get("completed") or 0)
    if sent:
        text = f"{completed} of {sent} requests completed at {short(rate)} req/s"
        if completed < sent:
            failed = int(row.get("failed") or 0)
            lost = [f"{failed} failed"] if failed else []
            if sent - completed - failed > 0:
                lost.append(f"{sent - completed - failed} unfinished")
            text = "only " + text + (f" ({', '.join(lost)})" if lost else "")
        parts.append(text)
    achieved = float(row.get("achieved_rate") or 0)
    if achieved:
        parts.append(f"{short(achieved)} of {short(rate)} req/s achieved ({achieved / rate:.0%})")
    return "; ".join(parts)
