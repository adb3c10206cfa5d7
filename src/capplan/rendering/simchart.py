"""The simulation's picture: one cumulative distribution per key result, as SVG text.

Small multiples, two to a row: each panel is the step CDF of one key result
over the draws (from its 0th to its 100th percentile), the band from P5 to
P95 shaded, and the point plan's value as a dashed line, so a reader sees at
once how likely the decided number is to be enough. Key results that do not
move across the draws are left out (a constant has no curve). Written the
way :mod:`capplan.rendering.tornado` writes its chart (fixed number formats,
no dates), so an unchanged plan writes identical bytes; kept in its own
module so a shared SVG helper can take it over.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from capplan import formatting
from capplan.rendering.simulation import ResultSpread, SimulationView

PANEL_WIDTH, PANEL_HEIGHT, COLUMNS = 360, 150, 2
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 40, 16, 26, 34     # inside a panel
TOP = 52
FONT = "font-family='Helvetica, Arial, sans-serif'"
CURVE, BAND, POINT = "#1f5fa8", "#dce8f5", "#c0392b"


def svg(view: SimulationView, title: str) -> str:
    panels = [r for r in view.results if r.spread]
    rows = max(1, -(-len(panels) // COLUMNS))
    width, height = PANEL_WIDTH * COLUMNS, TOP + PANEL_HEIGHT * rows + 24
    out = [(f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' {FONT} font-size='11'>"),
           f"<rect width='{width}' height='{height}' fill='#ffffff'/>",
           f"<text x='10' y='22' font-size='15' font-weight='bold'>{escape(title)}</text>",
           (f"<text x='10' y='40' fill='#555555' font-size='12'>Share of {view.samples:,} draws (seed {view.seed}) "
            "at or below each value; shaded P5 to P95; dashed: the point plan</text>")]
    for i, r in enumerate(panels):
        out += _panel(r, PANEL_WIDTH * (i % COLUMNS), TOP + PANEL_HEIGHT * (i // COLUMNS))
    if not panels:
        out.append(f"<text x='10' y='{TOP + 20}'>No key result moves across the draws.</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(r: ResultSpread, left: int, top: int) -> list[str]:
    x0, x1 = left + PLOT_LEFT, left + PANEL_WIDTH - PLOT_RIGHT
    y0, y1 = top + PANEL_HEIGHT - PLOT_BOTTOM, top + PLOT_TOP          # share 0 at y0, 1 at y1
    low, high = r.cdf[0], r.cdf[-1]

    def x(value: float) -> float:
        return x0 + (x1 - x0) * (value - low) / (high - low)

    def y(share: float) -> float:
        return y0 + (y1 - y0) * share

    p5, p95 = r.cdf[5], r.cdf[95]
    out = [f"<text x='{left + 10}' y='{top + 16}' font-weight='bold'>{escape(r.name)}</text>",
           f"<rect x='{x(p5):.1f}' y='{y1}' width='{max(x(p95) - x(p5), 1):.1f}' height='{y0 - y1}' fill='{BAND}'/>",
           f"<line x1='{x0}' y1='{y0}' x2='{x1}' y2='{y0}' stroke='#999999'/>",
           f"<line x1='{x0}' y1='{y0}' x2='{x0}' y2='{y1}' stroke='#999999'/>"]
    for share in (0.5, 1.0):
        out.append(f"<text x='{x0 - 4}' y='{y(share) + 4:.1f}' text-anchor='end' fill='#555555'>"
                   f"{int(share * 100)} %</text>")
    path = [f"M{x(r.cdf[0]):.1f},{y(0):.1f}"]
    for i, value in enumerate(r.cdf):          # a step up at each percentile
        path.append(f"L{x(value):.1f},{y(max(i - 1, 0) / 100):.1f} L{x(value):.1f},{y(i / 100):.1f}")
    out.append(f"<path d='{' '.join(path)}' fill='none' stroke='{CURVE}' stroke-width='1.5'/>")
    if isinstance(r.point, (int, float)) and low <= r.point <= high:
        px = x(r.point)
        out.append(f"<line x1='{px:.1f}' y1='{y0}' x2='{px:.1f}' y2='{y1}' stroke='{POINT}' "
                   "stroke-dasharray='4,3' stroke-width='1.5'/>")
    for value, anchor in ((low, "start"), (high, "end")):
        out.append(f"<text x='{x(value):.1f}' y='{y0 + 14}' text-anchor='{anchor}' fill='#555555'>"
                   f"{escape(formatting.quantity(value, r.key.unit, r.key.kind))}</text>")
    out.append(f"<text x='{(x0 + x1) / 2:.1f}' y='{y0 + 28}' text-anchor='middle' fill='{POINT}'>"
               f"point {escape(r.key.text)}</text>")
    return out
