"""The tornado chart of "How far the decision holds", as SVG text.

One bar per input, most fragile on top: from its first flip below today's
value to its first flip above, drawn as a share of today's value around a
centre line (today). The axis is a square-root scale of the relative change,
so a 5 % margin is still a visible bar next to a 100 % one; a bar with no
flip on a side runs to the edge and ends in an arrow. Each end is labelled
with the flip's value. The bytes depend only on the plan (no dates, fixed
number formats), so an unchanged plan writes an identical file; GitHub shows
it where the record links it.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from capplan import formatting
from capplan.rendering.holds import InputHolds
from capplan.rendering.palette import palette

LABEL_WIDTH, PLOT_WIDTH, RIGHT_MARGIN = 250, 480, 20
ROW_HEIGHT, TOP, BOTTOM = 30, 58, 64
TICKS = (0.05, 0.25, 0.5, 1.0)          # relative changes marked on the axis
FONT = "font-family='Helvetica, Arial, sans-serif'"
CHAR_WIDTH = 6.2                         # average width of an 11 px character, to place labels


def _x(share: float) -> float:
    """Horizontal position of a relative change (−1 … +1, clipped) on the square-root scale."""
    clipped = max(-1.0, min(1.0, share))
    return LABEL_WIDTH + PLOT_WIDTH / 2 * (1 + math.copysign(math.sqrt(abs(clipped)), clipped))


def svg(rows: list[InputHolds], title: str) -> str:
    """The chart for one scenario's inputs (as :class:`InputHolds`, already sorted)."""
    width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN
    height = TOP + ROW_HEIGHT * max(len(rows), 1) + BOTTOM
    out = [(f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' {FONT} font-size='12'>"),
           f"<rect width='{width}' height='{height}' fill='#ffffff'/>",
           f"<text x='10' y='22' font-size='15' font-weight='bold'>{escape(title)}</text>",
           ("<text x='10' y='40' fill='#555555'>Each bar: how far an input can move from today's value "
            "before a decision flips (first flip on each side)</text>")]
    bottom = TOP + ROW_HEIGHT * len(rows)
    for t in [-t for t in reversed(TICKS)] + list(TICKS):
        x = _x(t)
        out.append(f"<line x1='{x:.1f}' y1='{TOP - 6}' x2='{x:.1f}' y2='{bottom}' stroke='#e3e3e3'/>")
        out.append(f"<text x='{x:.1f}' y='{bottom + 16}' text-anchor='middle' fill='#555555'>"
                   f"{'+' if t > 0 else '−'}{formatting.number(abs(t) * 100)} %</text>")
    centre = _x(0)
    for i, h in enumerate(rows):
        out += _bar(h, TOP + ROW_HEIGHT * i)
    out.append(f"<line x1='{centre:.1f}' y1='{TOP - 6}' x2='{centre:.1f}' y2='{bottom}' stroke='#333333' "
               "stroke-width='1.5'/>")
    out.append(f"<text x='{centre:.1f}' y='{bottom + 32}' text-anchor='middle' fill='#333333'>today</text>")
    out += _legend(rows, bottom + 54)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _colours(tag: str) -> tuple[str, str]:
    """(fill, stroke) of a tag, from templates/palette.yaml (the workbook's and the record's colours)."""
    colours = palette()
    c = colours["tags"].get(tag, colours["tags"]["derived"])
    return f"#{(c['fill'] or colours['background']).lower()}", f"#{c['stroke'].lower()}"


def _style(h: InputHolds) -> tuple[str, str]:
    return _colours("pending" if h.pending else h.tag)


def _bar(h: InputHolds, top: int) -> list[str]:
    fill, stroke = _style(h)
    middle = top + ROW_HEIGHT / 2
    label = f"{h.name} = {h.value_text(h.today)}"
    out = [f"<text x='{LABEL_WIDTH - 8}' y='{middle + 4:.1f}' text-anchor='end'>{escape(label)}</text>"]
    if h.below.margin is None:              # today's value is 0: no relative scale, say it in words
        words = "; ".join(h.where(side) for side in (h.below, h.above) if side.found) or "no flip"
        return out + [(f"<text x='{_x(0) + 6:.1f}' y='{middle + 4:.1f}' font-size='11' fill='#333333'>"
                      f"today 0, flips {escape(words)}</text>")]
    ends = [(_x(-h.below.margin), h.below, -1), (_x(h.above.margin), h.above, 1)]
    (left, _, _), (right, _, _) = ends
    out.append(f"<rect x='{left:.1f}' y='{top + 6}' width='{right - left:.1f}' height='{ROW_HEIGHT - 12}' "
               f"fill='{fill}' stroke='{stroke}'/>")
    for x, side, sign in ends:
        if side.found:
            text = h.value_text(side.flip.value)
            out.append(f"<line x1='{x:.1f}' y1='{top + 3}' x2='{x:.1f}' y2='{top + ROW_HEIGHT - 3}' "
                       "stroke='#222222' stroke-width='2'/>")
        elif side.domain_end:
            text = f"domain end {h.value_text(side.end)}"
        else:
            text = f"none to {h.value_text(side.end)}"
            if side.margin >= 1:             # beyond the axis: an arrow at the edge
                tip = x + 6 * sign
                out.append(f"<path d='M{x:.1f},{top + 6} L{tip:.1f},{middle:.1f} L{x:.1f},{top + ROW_HEIGHT - 6} z' "
                           f"fill='{stroke}'/>")
        room = (x - LABEL_WIDTH) if sign < 0 else (LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN - x)
        outside = room > CHAR_WIDTH * len(text) + 10
        anchor = "end" if (sign < 0) == outside else "start"      # outside the bar when it fits, else inside
        dx = -5 if anchor == "end" else 5
        out.append(f"<text x='{x + dx:.1f}' y='{middle + 4:.1f}' text-anchor='{anchor}' font-size='11'>"
                   f"{escape(text)}</text>")
    return out


def _legend(rows: list[InputHolds], y: int) -> list[str]:
    """One swatch per tag shown, and what the marks mean."""
    tags = list(dict.fromkeys("pending" if h.pending else h.tag for h in rows))
    out, x = [], 10
    for tag in tags:
        fill, stroke = _colours(tag)
        out.append(f"<rect x='{x}' y='{y - 10}' width='14' height='12' fill='{fill}' stroke='{stroke}'/>")
        word = {"pending": "pending measurement", "derived": "derived (pinned)"}.get(tag, tag)
        out.append(f"<text x='{x + 19}' y='{y}' font-size='11' fill='#333333'>{word}</text>")
        x += 30 + int(CHAR_WIDTH * len(word))
    out.append(f"<line x1='{x + 10}' y1='{y - 11}' x2='{x + 10}' y2='{y + 2}' stroke='#222222' stroke-width='2'/>")
    out.append(f"<text x='{x + 16}' y='{y}' font-size='11' fill='#333333'>a flip point</text>")
    x += 100
    out.append(f"<path d='M{x},{y - 10} L{x + 6},{y - 4} L{x},{y + 2} z' fill='#555555'/>")
    out.append(f"<text x='{x + 12}' y='{y}' font-size='11' fill='#333333'>no flip within the range searched</text>")
    return out
