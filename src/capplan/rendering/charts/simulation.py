"""The simulation's picture: one cumulative distribution per key result, as SVG text.

Small multiples, two to a row: each panel is the step CDF of one key result
over the draws (from its 0th to its 100th percentile), the band from P5 to
P95 shaded, and the point plan's value as a dashed line, so a reader sees at
once how likely the decided number is to be enough. Key results that do not
move across the draws are left out (a constant has no curve). Drawn on
the charts' shared canvas (:mod:`capplan.rendering.charts.svg`), so an unchanged plan
writes identical bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, ink

if TYPE_CHECKING:
    from capplan.rendering.simulation import ResultSpread, SimulationView

PANEL_WIDTH, PANEL_HEIGHT, COLUMNS = 360, 150, 2
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 40, 16, 26, 34     # inside a panel
TOP = 52


def svg(view: SimulationView, title: str) -> str:
    panels = [r for r in view.results if r.spread]
    rows = max(1, -(-len(panels) // COLUMNS))
    canvas = Canvas(PANEL_WIDTH * COLUMNS, TOP + PANEL_HEIGHT * rows + 24, font_size=11)
    canvas.title(title, f"Share of {view.samples:,} draws (seed {view.seed}) at or below each value; "
                        "shaded P5 to P95; dashed: the point plan")
    for i, r in enumerate(panels):
        _panel(canvas, r, PANEL_WIDTH * (i % COLUMNS), TOP + PANEL_HEIGHT * (i // COLUMNS))
    if not panels:
        canvas.text(10, TOP + 20, "No key result moves across the draws.")
    return canvas.render()


def _panel(canvas: Canvas, r: ResultSpread, left: int, top: int) -> None:
    x0, x1 = left + PLOT_LEFT, left + PANEL_WIDTH - PLOT_RIGHT
    y0, y1 = top + PANEL_HEIGHT - PLOT_BOTTOM, top + PLOT_TOP          # share 0 at y0, 1 at y1
    low, high = r.cdf[0], r.cdf[-1]

    def x(value: float) -> float:
        return x0 + (x1 - x0) * (value - low) / (high - low)

    def y(share: float) -> float:
        return y0 + (y1 - y0) * share

    p5, p95 = r.cdf[5], r.cdf[95]
    canvas.text(left + 10, top + 16, r.name, weight="bold")
    canvas.rect(x(p5), y1, max(x(p95) - x(p5), 1), y0 - y1, fill=ink("band"))
    canvas.line(x0, y0, x1, y0, stroke=ink("frame"))
    canvas.line(x0, y0, x0, y1, stroke=ink("frame"))
    for share in (0.5, 1.0):
        canvas.text(x0 - 4, y(share) + 4, f"{int(share * 100)} %", anchor="end", fill=ink("muted"))
    steps = [(x(r.cdf[0]), y(0))]
    for i, value in enumerate(r.cdf):          # a step up at each percentile
        steps += [(x(value), y(max(i - 1, 0) / 100)), (x(value), y(i / 100))]
    canvas.polyline(steps, stroke=ink("curve"), width=1.5)
    if isinstance(r.point, (int, float)) and low <= r.point <= high:
        canvas.line(x(r.point), y0, x(r.point), y1, stroke=ink("point"), width=1.5, dash="4,3")
    for value, anchor in ((low, "start"), (high, "end")):
        canvas.text(x(value), y0 + 14, formatting.quantity(value, r.key.unit, r.key.kind), anchor=anchor, fill=ink("muted"))
    canvas.text((x0 + x1) / 2, y0 + 28, f"point {r.key.text}", anchor="middle", fill=ink("point"))
