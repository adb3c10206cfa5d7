"""The simulation's picture, as SVG text: the decisions first, then the key results.

Its message is the chance that each decision of the point plan holds over
the uncertain inputs, so it leads with one bar per decision, P(holds) from
0 to 100 %, the number written at the bar's end. Below, at most the key
results that decide (the roles ``count`` and ``cost`` of layout.yaml) that
move across the draws, each on a linear axis in its own unit: the whisker
from P5 to P95, the box from the first to the third quartile with its
median, each quartile labelled, and the point plan as a diamond (said in
words when it lies outside the 90 % band; the record explains why). Drawn on
the charts' shared canvas (:mod:`capplan.rendering.charts.svg`), so an
unchanged plan writes identical bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, ink, text_width, wrap
from capplan.rendering.simulation import percent

if TYPE_CHECKING:
    from capplan.rendering.simulation import ResultSpread, SimulationView

WIDTH, LEFT, RIGHT = 760, 20, 20
LABELS = 300                 # the decisions' label column
BAR, STEP = 16, 24           # a decision's bar and row
SHOWN_ROLES = ("count", "cost")
MOST = 6                     # key results drawn at most
BOX_ROW = 98


def shown(view: SimulationView) -> list[ResultSpread]:
    """The key results the picture draws: those that decide (count, cost) and move."""
    moving = [r for r in view.results if r.spread]
    deciding = [r for r in moving if r.key.role in SHOWN_ROLES]
    return (deciding or moving)[:MOST]


def svg(view: SimulationView, title: str) -> str:
    c = Canvas(WIDTH, 100, font_size=11)
    y = c.wrapped_title(title, f"{view.samples:,} draws of the uncertain inputs (seed {view.seed}): how often "
                               "each decision of the point plan holds, then the spread of the key results")
    y = _decisions(c, view, y)
    results = shown(view)
    if results:
        c.text(LEFT, y + 16, "Key results over the draws: whisker P5–P95, box the quartiles, ◆ the point plan",
               weight="bold", size=12)
        y += 26
    for r in results:
        y = _box(c, r, y)
    c.height = int(y + 10)
    return c.render()


def _decisions(c: Canvas, view: SimulationView, y: float) -> float:
    c.text(LEFT, y + 14, "P(the decision holds): red where below 95 %", weight="bold", size=12)
    y += 24
    x0, x1 = LEFT + LABELS, WIDTH - RIGHT - 60
    for d in view.decisions:
        lines = wrap(d.text, LABELS - 12, 11)
        top = y + 4
        for i, line in enumerate(lines):
            c.text(x0 - 8, top + 12 + 13 * i, line, anchor="end")
        c.rect(x0, top, x1 - x0, BAR, fill=ink("page"), stroke=ink("grid"))
        colour = ink("curve") if d.probability >= 0.95 else ink("fail")
        c.rect(x0, top, max((x1 - x0) * d.probability, 1), BAR, fill=colour, opacity=0.75)
        c.text(x1 + 6, top + 12, percent(d.probability), weight="bold" if d.probability < 0.95 else None)
        y += max(STEP, 13 * len(lines) + 8)
    for share in (0.0, 0.5, 1.0):
        x = x0 + (x1 - x0) * share
        c.text(x, y + 10, f"{int(share * 100)} %", anchor="middle", fill=ink("muted"))
    return y + 18


def _box(c: Canvas, r: ResultSpread, y: float) -> float:
    """One key result: its name, then the box plot on its own linear axis."""
    q = r.cdf
    low, high = q[0], q[-1]
    x0, x1 = LEFT + 10, WIDTH - RIGHT - 10

    def x(value: float) -> float:
        return x0 + (x1 - x0) * (value - low) / (high - low)

    def text(value: float) -> str:
        return formatting.quantity(value, r.key.unit, r.key.kind)

    c.text(LEFT, y + 14, r.name, weight="bold")
    middle = y + 50
    c.line(x0, middle + 28, x1, middle + 28, stroke=ink("frame"))
    for value, anchor in ((low, "start"), (high, "end")):
        c.text(x(value), middle + 41, f"{'min' if value == low else 'max'} {text(value)}", anchor=anchor,
               fill=ink("muted"))
    c.line(x(q[5]), middle, x(q[95]), middle, stroke=ink("curve"))
    for p in (5, 95):
        c.line(x(q[p]), middle - 5, x(q[p]), middle + 5, stroke=ink("curve"))
    c.rect(x(q[25]), middle - 8, max(x(q[75]) - x(q[25]), 1), 16, fill=ink("band"), stroke=ink("curve"))
    c.line(x(q[50]), middle - 8, x(q[50]), middle + 8, stroke=ink("ink"), width=2.0)
    # the median a line above the box, the quartiles beside it, away from the median
    c.text(x(q[50]), middle - 24, f"median {text(q[50])}", anchor="middle", size=10)
    c.text(x(q[25]) - 2, middle - 11, f"Q1 {text(q[25])}", anchor="end", size=10)
    c.text(x(q[75]) + 2, middle - 11, f"Q3 {text(q[75])}", anchor="start", size=10)
    point = r.point
    if isinstance(point, (int, float)):
        px = x(min(max(point, low), high))
        c.path(f"M{px:.1f},{middle - 6:.1f} L{px + 6:.1f},{middle:.1f} L{px:.1f},{middle + 6:.1f} "
               f"L{px - 6:.1f},{middle:.1f} z", fill=ink("point"))
        outside = not q[5] <= point <= q[95]
        words = f"point plan {r.key.text}" + (" (outside P5–P95; see the record)" if outside else "")
        right = px + 10 + text_width(words, 10) < x1
        c.text(px + (10 if right else -10), middle + 21, words, anchor="start" if right else "end", size=10,
               fill=ink("point"))
    return y + BOX_ROW
