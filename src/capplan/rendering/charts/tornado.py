"""The tornado chart of "How far the decision holds", as SVG text.

One bar per input, most fragile on top: from its first flip below today's
value to its first flip above, drawn as a share of today's value around a
centre line (today). The axis is a square-root scale of the relative change,
so a 5 % margin is still a visible bar next to a 100 % one; a bar with no
flip on a side runs to the edge and ends in an arrow. Each end is labelled
with the flip's value. The bytes depend only on the plan (no dates, fixed
number formats), so an unchanged plan writes an identical file; GitHub shows
it where the record links it. Drawn with :mod:`capplan.rendering.charts.svg`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.charts.svg import CHAR_WIDTH, Canvas, ink, tag_colours, text_width

if TYPE_CHECKING:
    from capplan.rendering.holds import InputHolds

LABEL_WIDTH, PLOT_WIDTH, RIGHT_MARGIN = 250, 480, 20     # LABEL_WIDTH: at least; wider for longer names
ROW_HEIGHT, TOP, BOTTOM = 30, 58, 64
TICKS = (0.05, 0.25, 0.5, 1.0)          # relative changes marked on the axis


def _x(share: float, left: float) -> float:
    """Horizontal position of a relative change (−1 … +1, clipped) on the square-root scale
    of a plot that starts at ``left``."""
    clipped = max(-1.0, min(1.0, share))
    return left + PLOT_WIDTH / 2 * (1 + math.copysign(math.sqrt(abs(clipped)), clipped))


def _label(h: InputHolds) -> str:
    return f"{h.name} = {h.value_text(h.today)}"


def svg(rows: list[InputHolds], title: str) -> str:
    """The chart for one scenario's inputs (as :class:`InputHolds`, already sorted)."""
    left = max([LABEL_WIDTH] + [math.ceil(text_width(_label(h), 12)) + 20 for h in rows])
    c = Canvas(left + PLOT_WIDTH + RIGHT_MARGIN, TOP + ROW_HEIGHT * max(len(rows), 1) + BOTTOM)
    c.title(title, "Each bar: how far an input can move from today's value before a decision flips "
                   "(first flip on each side)")
    bottom = TOP + ROW_HEIGHT * len(rows)
    for t in [-t for t in reversed(TICKS)] + list(TICKS):
        x = _x(t, left)
        c.line(x, TOP - 6, x, bottom, stroke=ink("grid"))
        c.text(x, bottom + 16, f"{'+' if t > 0 else '−'}{formatting.number(abs(t) * 100)} %", anchor="middle", fill=ink("muted"))
    for i, h in enumerate(rows):
        _bar(c, h, TOP + ROW_HEIGHT * i, left)
    centre = _x(0, left)
    c.line(centre, TOP - 6, centre, bottom, stroke=ink("rule"), width=1.5)
    c.text(centre, bottom + 32, "today", anchor="middle", fill=ink("rule"))
    c.width = max(c.width, math.ceil(_legend(c, rows, bottom + 54)) + 10)     # as wide as its legend
    return c.render()


def _style(h: InputHolds) -> tuple[str, str]:
    return tag_colours("pending" if h.pending else h.tag)


def _bar(c: Canvas, h: InputHolds, top: int, left: float) -> None:
    fill, stroke = _style(h)
    middle = top + ROW_HEIGHT / 2
    c.text(left - 8, middle + 4, _label(h), anchor="end")
    if h.below.margin is None:              # today's value is 0: no relative scale, say it in words
        words = "; ".join(h.where(side) for side in (h.below, h.above) if side.found)
        c.text(_x(0, left) + 6, middle + 4, f"today 0, flips {words}" if words else
               "today 0, no flip in the range searched", size=11, fill=ink("rule"))
        return
    ends = [(_x(-h.below.margin, left), h.below, -1), (_x(h.above.margin, left), h.above, 1)]
    (start, _, _), (end, _, _) = ends
    c.rect(start, top + 6, end - start, ROW_HEIGHT - 12, fill=fill, stroke=stroke)
    for x, side, sign in ends:
        if side.found:
            text = h.value_text(side.flip.value)
            c.line(x, top + 3, x, top + ROW_HEIGHT - 3, stroke=ink("ink"), width=2.0)
        elif side.domain_end:
            text = f"domain end {h.value_text(side.end)}"
        else:
            text = f"none to {h.value_text(side.end)}"
            if side.margin >= 1:             # beyond the axis: an arrow at the edge
                c.arrow(x, top + 6, top + ROW_HEIGHT - 6, sign, stroke)
        room = (x - left) if sign < 0 else (left + PLOT_WIDTH + RIGHT_MARGIN - x)
        outside = room > CHAR_WIDTH * len(text) + 10
        anchor = "end" if (sign < 0) == outside else "start"      # outside the bar when it fits, else inside
        c.text(x + (-5 if anchor == "end" else 5), middle + 4, text, size=11, anchor=anchor)


NO_FLIP = "no flip within the range searched"


def _legend(c: Canvas, rows: list[InputHolds], y: int) -> float:
    """One swatch per tag shown, and what the marks mean; returns where it ends."""
    tags = list(dict.fromkeys("pending" if h.pending else h.tag for h in rows))
    x = 10
    for tag in tags:
        fill, stroke = tag_colours(tag)
        c.rect(x, y - 10, 14, 12, fill=fill, stroke=stroke)
        word = {"pending": "pending measurement", "derived": "derived (pinned)"}.get(tag, tag)
        c.text(x + 19, y, word, size=11, fill=ink("rule"))
        x += 30 + int(CHAR_WIDTH * len(word))
    c.line(x + 10, y - 11, x + 10, y + 2, stroke=ink("ink"), width=2.0)
    c.text(x + 16, y, "a flip point", size=11, fill=ink("rule"))
    x += 100
    c.arrow(x, y - 10, y + 2, 1, ink("muted"))
    c.text(x + 12, y, NO_FLIP, size=11, fill=ink("rule"))
    return x + 12 + text_width(NO_FLIP, 11)
