"""The record's demand chart: the traffic profile and the fleet through it, as SVG text.

One panel over the profile's time (hours from its start): the arrival rate λₜ, the
capacity the autoscaler asks for and the capacity actually serving (replicas at their
measured rate λ*), both as steps, and the time the serving capacity is short of λₜ
shaded red (the start of an interval, while the replicas asked for boot): the scale-up
lag's SLO risk. The title says what the chart shows: that capacity covers demand in
every interval, or in how many it is short; the legend names the shading only where
some is drawn. A long profile (a year of hours) is
drawn in buckets, each the largest value of its intervals, so the chart keeps its size
and never hides a peak or a shortfall. Every number comes from the view
(:func:`capplan.rendering.demand.chart_data`); only positions are computed here.
"""

from __future__ import annotations

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, in_turn, ink, linear_ticks

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 880, 380, 62, 16, 70, 70
MAX_STEPS = 720          # intervals drawn one by one; more are bucketed


def _buckets(data: dict) -> tuple[list[float], dict[str, list[float]], float]:
    """Start of each bucket (h), the largest value of each series in it, and a bucket's length (h).
    The risk is the share of the bucket to shade: an interval's own share of it, and a whole
    bucket of many intervals where any of them is short (a share of one is no share of many)."""
    n = len(data["start"])
    size = -(-n // MAX_STEPS)
    out = {}
    for key in ("arrival", "requested", "serving", "risk"):
        values = [float(v) for v in data[key]]
        out[key] = [max(values[i:i + size]) for i in range(0, n, size)]
    if size > 1:
        out["risk"] = [1.0 if share > 0 else 0.0 for share in out["risk"]]
    return [data["start"][i] for i in range(0, n, size)], out, data["step"] * size


def headline(data: dict) -> str:
    """The chart's message: whether the serving capacity covers demand in every interval."""
    n, short = len(data["risk"]), sum(1 for share in data["risk"] if float(share) > 0)
    unit = "hour" if data["step"] == 1 else "interval"
    if not short:
        return f"Capacity covers demand in every {unit} of the profile"
    return f"Capacity is short of demand in {short} of {n} {unit}s, while the replicas asked for start"


def svg(data: dict, plan_title: str) -> str:
    starts, series, step = _buckets(data)
    shaded = any(share > 0 for share in series["risk"])
    c = Canvas(WIDTH, HEIGHT)
    c.title(headline(data), f"{plan_title}: arrival rate λₜ, capacity asked for and serving (replicas at λ*)"
                            + ("; red: short of λₜ (the scale-up lag)" if shaded else ""))
    left, right, top, bottom = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM
    span = starts[-1] + step - starts[0] or 1.0
    peak = max(max(series["arrival"]), max(series["requested"]), max(series["serving"])) or 1.0
    ticks = linear_ticks(peak)

    def x(t: float) -> float:
        return left + (t - starts[0]) / span * (right - left)

    def y(v: float) -> float:
        return bottom - v / ticks[-1] * (bottom - top)

    for t0, share in zip(starts, series["risk"]):
        if share > 0:          # the interval's start, while the replicas asked for boot
            c.rect(x(t0), top, x(t0 + share * step) - x(t0), bottom - top, fill=ink("knee"))
    for v in ticks:
        c.line(left, y(v), right, y(v), stroke=ink("grid"))
        c.text(left - 6, y(v) + 4, formatting.number(v, 3), size=11, anchor="end", fill=ink("muted"))
    c.line(left, top, left, bottom, stroke=ink("frame"))
    c.line(left, bottom, right, bottom, stroke=ink("frame"))
    for t in linear_ticks(span, 8):
        if t <= span:
            c.text(x(starts[0] + t), bottom + 16, formatting.number(starts[0] + t, 4), size=11, anchor="middle",
                   fill=ink("muted"))
    c.text((left + right) / 2, bottom + 36, "hours from the profile's start", size=13, anchor="middle")
    c.text(28, (top + bottom) / 2, "req/s", size=13, anchor="middle", rotate=True)
    names = (("arrival", "arrival rate λₜ"), ("requested", "capacity asked for"), ("serving", "capacity serving"))
    for i, (key, _) in enumerate(names):
        points = []
        for t0, v in zip(starts, series[key]):
            points += [(x(t0), y(v)), (x(t0 + step), y(v))]
        c.polyline(points, stroke=in_turn("series", i), width=2.0 if key != "requested" else 1.5)
    lx = left
    for i, (_, label) in enumerate(names):
        c.rect(lx, HEIGHT - 22, 16, 4, fill=in_turn("series", i))
        c.text(lx + 22, HEIGHT - 16, label, size=11)
        lx += 40 + 7 * len(label)
    if shaded:                  # no legend entry for a mark the chart does not draw
        c.rect(lx, HEIGHT - 27, 16, 13, fill=ink("knee"))
        c.text(lx + 22, HEIGHT - 16, "short of λₜ: SLO risk", size=11, fill=ink("fail"))
    return c.render()
