"""The record's latency chart: the load sweep against each SLO, as SVG text.

One panel per latency SLO (TTFT, TPOT, E2E …), each in its own unit with
its limit drawn as a dashed line, so a reader sees how far each metric is
from its SLO at every swept rate. The x-axis is the arrival rate, on a log
scale when the sweep spans a factor of 8 or more (1, 4, 16 req/s are then
evenly spaced, as their ratios are), and says so. A point that misses its
panel's SLO is a red cross; the knee bracket (λ* to the first failing
rate) is shaded and λ* is a labelled line. Every number comes from the
sweep the view built (:func:`capplan.rendering.sweepview.sweep`); nothing
is computed here but positions.
"""

from __future__ import annotations

import math

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, in_turn, ink, linear_ticks, text_width

WIDTH, TOP, PANEL_HEIGHT, BOTTOM = 880, 84, 250, 104
LEFT, GAP, RIGHT = 62, 70, 16           # room for the y labels of the first panel, between panels, at the right
LOG_FROM = 8.0                          # a sweep spanning this factor or more gets a log x-axis


def drawable(chart: dict | None) -> bool:
    """Whether a sweep has a chart: two rates or more and a latency SLO."""
    return bool(chart and len(chart["rates"]) >= 2 and chart["series"])


def svg(chart: dict, title: str) -> str:
    """The chart of one sweep (``sweep["chart"]``, :func:`drawable`)."""
    series, rates = chart["series"], chart["rates"]
    c = Canvas(WIDTH, TOP + PANEL_HEIGHT + BOTTOM)
    c.title(title, _subtitle(chart))
    log = rates[0] > 0 and max(rates) / min(rates) >= LOG_FROM
    x_of = _x_scale(rates, log)
    width = (WIDTH - LEFT - RIGHT - GAP * (len(series) - 1)) / len(series)
    for i, s in enumerate(series):
        left = LEFT + i * (width + GAP)
        _panel(c, chart, s, left, width, lambda r, left=left: left + x_of(r) * width, in_turn("series", i))
    axis = f"arrival rate [{chart['rate_unit']}]" + (", log scale" if log else "")
    c.text(WIDTH / 2, TOP + PANEL_HEIGHT + 44, axis, size=13, anchor="middle", fill=ink("ink"))
    _legend(c, chart, TOP + PANEL_HEIGHT + 76)
    return c.render()


def _subtitle(chart: dict) -> str:
    if chart["star_pinned"]:
        return f"One panel per SLO, one replica. λ* is pinned at {chart['star_text']} in this plan; the sweep is evidence."
    if chart["knee"] is None:
        return f"One panel per SLO, one replica. Every swept rate meets every SLO: λ* ≥ {chart['star_text']}."
    return (f"One panel per SLO, one replica. λ* = {chart['star_text']}; "
            f"the knee lies between λ* and {chart['knee_text']}.")


def _x_scale(rates: list[float], log: bool):
    """Position (0 … 1 of a panel's width) of a rate, with a margin either side."""
    if log:
        low, high = math.log(min(rates)), math.log(max(rates))
        pad = (high - low) * 0.08
        return lambda r: (math.log(r) - low + pad) / (high - low + 2 * pad)
    high = max(rates)
    return lambda r: (r + high * 0.04) / (high * 1.08)


def _panel(c: Canvas, chart: dict, s: dict, left: float, width: float, x_of, colour: str) -> None:
    top, bottom = TOP, TOP + PANEL_HEIGHT
    values = [v for v in s["values"] if not math.isnan(v)]
    ticks = linear_ticks(max(values + [s["limit"]]) * 1.05)
    def y_of(v: float) -> float:
        return bottom - (v / ticks[-1]) * PANEL_HEIGHT
    if chart["knee"] is not None:                                   # the knee bracket, shaded
        c.rect(x_of(chart["star"]), top, x_of(chart["knee"]) - x_of(chart["star"]), PANEL_HEIGHT, fill=ink("knee"))
        c.text((x_of(chart["star"]) + x_of(chart["knee"])) / 2, top + 14, "knee", size=11, anchor="middle", fill=ink("fail"))
    for t in ticks:
        c.line(left, y_of(t), left + width, y_of(t), stroke=ink("grid"))
        c.text(left - 6, y_of(t) + 4, formatting.number(t), size=12, anchor="end", fill=ink("muted"))
    for r in chart["rates"]:
        c.line(x_of(r), bottom, x_of(r), bottom + 5, stroke=ink("muted"))
        c.text(x_of(r), bottom + 18, formatting.number(r), size=12, anchor="middle", fill=ink("muted"))
    c.rect(left, top, width, PANEL_HEIGHT, fill="none", stroke=ink("frame"))
    star = x_of(chart["star"])
    c.line(star, top, star, bottom, stroke=ink("ink"), width=1.5, dash="2,3")
    label = f"λ* = {chart['star_text']}"
    inside = star - left > text_width(label, 12) + 8          # left of the line, at the top, where it fits
    c.text(star - 4 if inside else star + 4, top + 15, label, size=12, anchor="end" if inside else "start",
           fill=ink("ink"), weight="bold")
    limit = y_of(s["limit"])
    c.line(left, limit, left + width, limit, stroke=ink("fail"), width=1.5, dash="7,4")
    below = limit - top < 36                                  # near the top the λ* label is there: go under the line
    c.text(left + 4, limit + 16 if below else limit - 5, f"SLO {s['limit_text']}", size=12, fill=ink("fail"), weight="bold")
    points = [(x_of(r), y_of(v), ok) for r, v, ok in zip(chart["rates"], s["values"], s["ok"]) if not math.isnan(v)]
    c.polyline([(x, y) for x, y, _ in points], stroke=colour)
    for x, y, ok in points:
        c.marker(x, y, ok, colour)
    c.text(left + width / 2, top - 8, f"{s['label']}: {s['column']} [{s['unit']}]", size=13, anchor="middle",
           weight="bold", fill=colour)


def _legend(c: Canvas, chart: dict, y: float) -> None:
    x = LEFT
    c.marker(x + 5, y - 4, True, ink("muted"))
    c.text(x + 16, y, "meets this SLO", size=11)
    x += 120
    c.marker(x + 5, y - 4, False, ink("muted"))
    c.text(x + 18, y, "misses this SLO", size=11)
    x += 125
    c.line(x, y - 4, x + 26, y - 4, stroke=ink("fail"), width=1.5, dash="7,4")
    c.text(x + 32, y, "the SLO's limit", size=11)
    x += 130
    c.line(x + 4, y - 12, x + 4, y + 3, stroke=ink("ink"), width=1.5, dash="2,3")
    c.text(x + 12, y, "λ*: highest rate with every SLO met", size=11)
    if chart["knee"] is not None:
        x += 225
        c.rect(x, y - 11, 16, 13, fill=ink("knee"))
        c.text(x + 22, y, "knee: λ* to the first failure", size=11)
