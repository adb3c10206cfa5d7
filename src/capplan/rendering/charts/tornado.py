"""The tornado chart of "How far the decision holds", as SVG text.

One row per input, most fragile on top: its full name and today's value
(wrapped, never cut) over a bar from its first flip below today's value to
its first flip above. The axis is linear and labelled as what it is, the
change from today's value in per cent, from −100 % to +100 %; a bar that
runs further is capped at the edge and marked so ("capped: +900 %"). Each
end names its value and what flips there ("63 req/s: active GPUs 9 → 10");
an end where nothing flips within the range searched is drawn open and
dashed ("no flip to 200 ms"), distinct from a flip at today's value itself,
which is a red mark on the centre line. The bytes depend only on the plan
(no dates, fixed number formats), so an unchanged plan writes an identical
file; GitHub shows it where the record links it. Drawn with
:mod:`capplan.rendering.charts.svg`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, ink, tag_colours, text_width, wrap

if TYPE_CHECKING:
    from capplan.rendering.holds import InputHolds

LEFT, PLOT_WIDTH, RIGHT = 40, 760, 40
BAR, GAP, LINE = 18, 20, 15           # bar height, space between rows, a label line
TICKS = (-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0)
WIDTH = LEFT + PLOT_WIDTH + RIGHT


def _x(share: float) -> float:
    """Where a relative change (clipped to ±1) lies on the linear axis."""
    return LEFT + PLOT_WIDTH / 2 * (1 + max(-1.0, min(1.0, share)))


def _label(h: InputHolds) -> str:
    return f"{h.name} = {h.value_text(h.today)}" + (" (pending measurement)" if h.pending else "")


def end_text(h: InputHolds, side) -> str:
    """What one end of a bar says: '63 req/s: active GPUs 9 → 10 (+2 more)', 'no flip to 200 ms',
    'domain end 1: no flip'."""
    if side.found:
        changes = h.changes(side)
        more = f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""
        return f"{h.value_text(side.flip.value)}: {changes[0] if changes else 'a decision flips'}{more}"
    if side.domain_end:
        return f"no flip to the domain's end, {h.value_text(side.end)}"
    return f"no flip to {h.value_text(side.end)}"


def svg(rows: list[InputHolds], title: str) -> str:
    """The chart for one scenario's inputs (as :class:`InputHolds`, already sorted)."""
    c = Canvas(WIDTH, 100)
    top = c.wrapped_title(title, "Each bar: how far an input can move from today's value before a decision "
                                 "flips, the first flip on each side named at its end")
    y = top + 8
    first = len(c.items)
    for h in rows:
        y = _row(c, h, y)
    bottom = y
    drawn, c.items = c.items[first:], c.items[:first]       # the grid goes under the rows
    for t in TICKS:
        x = _x(t)
        c.line(x, top, x, bottom, stroke=ink("grid") if t else ink("rule"), width=None if t else 1.5)
        c.text(x, bottom + 16, "today" if t == 0 else f"{'+' if t > 0 else '−'}{formatting.number(abs(t) * 100)} %",
               anchor="middle", fill=ink("rule") if t == 0 else ink("muted"))
    c.items += drawn
    c.text(WIDTH / 2, bottom + 34, "change from today's value (linear); bars beyond ±100 % are capped at the edge",
           anchor="middle", fill=ink("muted"), size=11)
    c.height = math.ceil(bottom + 70)
    _legend(c, rows, bottom + 58)
    return c.render()


def _row(c: Canvas, h: InputHolds, y: float) -> float:
    """One input: its title line(s), then its bar; returns where the next row starts."""
    for line in wrap(_label(h), PLOT_WIDTH, 12):
        c.text(LEFT, y + 12, line, weight="bold", size=12)
        y += LINE
    top = y + 4
    middle = top + BAR / 2
    fill, stroke = tag_colours("pending" if h.pending else h.tag)
    if h.below.margin is None:              # today's value is 0: no relative scale, say it in words
        words = "; ".join(f"{h.where(side)}: {'; '.join(h.changes(side))}" for side in (h.below, h.above)
                          if side.found)
        said = f"today 0, so no relative scale; flips {words}" if words else "today 0; no flip in the range searched"
        for line in wrap(said, PLOT_WIDTH, 11):
            c.text(LEFT, top + 12, line, size=11, fill=ink("ink"))
            top += LINE
        return top + GAP
    start, end = _x(-h.below.margin), _x(h.above.margin)
    if end - start < 0.5:                    # flips at today's value on both sides
        c.line(_x(0), top - 2, _x(0), top + BAR + 2, stroke=ink("fail"), width=4.0)
        c.text(_x(0) + 6, middle + 4, "flips at today's value", size=11, fill=ink("fail"))
        return top + BAR + GAP
    c.rect(start, top, end - start, BAR, fill=fill, stroke=stroke)
    ends = []
    for x, side, sign in ((start, h.below, -1), (end, h.above, 1)):
        if side.found:
            c.line(x, top - 3, x, top + BAR + 3, stroke=ink("ink"), width=2.0)
        else:                                # open end: nothing flips there
            c.line(x, top, x, top + BAR, stroke=ink("page"), width=2.0)
            c.line(x, top, x, top + BAR, stroke=stroke, width=1.0, dash="3,2")
        text = end_text(h, side)
        if side.margin > 1:
            c.arrow(x, top, top + BAR, sign, stroke)
            text += f" (capped: {'−' if sign < 0 else '+'}{formatting.number(side.margin * 100, 3)} %)"
        room = (x - LEFT) if sign < 0 else (LEFT + PLOT_WIDTH - x)
        ends.append((x, sign, text, side.found, room > text_width(text, 11) + 8))
    inside = [e for e in ends if not e[4]]
    crowded = sum(text_width(e[2], 11) + 12 for e in inside) > end - start
    under = 0
    for x, sign, text, found, outside in ends:
        colour = ink("ink") if found else ink("muted")
        if outside:
            c.text(x + 5 * sign, middle + 4, text, size=11, anchor="end" if sign < 0 else "start", fill=colour)
        elif not crowded:
            c.text(x - 5 * sign, middle + 4, text, size=11, anchor="start" if sign < 0 else "end", fill=colour)
        else:                                # no room beside or inside: a line under the bar, inside the plot
            width = text_width(text, 11)
            at = max(LEFT, x - width) if sign < 0 else min(LEFT + PLOT_WIDTH - width, x)
            under += LINE
            c.text(at, top + BAR + under - 2, text, size=11, fill=colour)
    return top + BAR + GAP + under


NO_FLIP = "open dashed end: no flip within the range searched"


def _legend(c: Canvas, rows: list[InputHolds], y: float) -> None:
    """One swatch per tag shown, and what the marks mean."""
    tags = list(dict.fromkeys("pending" if h.pending else h.tag for h in rows))
    x = LEFT
    for tag in tags:
        fill, stroke = tag_colours(tag)
        c.rect(x, y - 10, 14, 12, fill=fill, stroke=stroke)
        word = {"pending": "pending measurement", "derived": "derived (pinned)"}.get(tag, tag)
        c.text(x + 19, y, word, size=11, fill=ink("rule"))
        x += 30 + math.ceil(text_width(word, 11))
    c.line(x, y - 11, x, y + 2, stroke=ink("ink"), width=2.0)
    c.text(x + 6, y, "a flip point", size=11, fill=ink("rule"))
    x += 90
    c.line(x, y - 11, x, y + 2, stroke=ink("muted"), width=1.0, dash="3,2")
    c.text(x + 6, y, NO_FLIP, size=11, fill=ink("rule"))
    c.width = max(c.width, math.ceil(x + 6 + text_width(NO_FLIP, 11)) + 10)
