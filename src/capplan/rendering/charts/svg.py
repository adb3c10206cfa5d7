"""A small SVG writer the record's charts share (tornado, latency, scenarios, simulation).

Each chart is a file next to the record that GitHub shows where the record
links it. They must be byte-deterministic (``capplan check`` compares them
byte for byte), so coordinates are written with one decimal and the element
order is the order of the calls; no dates, ids or dict order from outside.
The helpers below are the pieces every chart needs: the canvas with its
title, text, lines, boxes and markers, nice axis ticks, and the colours of
``templates/palette.yaml`` (its ``charts`` inks and the tag colours): a chart
module names an ink, never a colour.
"""

from __future__ import annotations

import math
import re

from capplan.rendering.palette import palette

FONT = "font-family='Helvetica, Arial, sans-serif'"
CHAR_WIDTH = 6.2            # average width of an 11 px character, to place labels
BOLD = 1.08                 # a bold character is about this much wider


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;"}


def escape(text, quote: bool = False) -> str:
    """Text from a plan (a row or input name, a title) as XML character data, or with
    ``quote`` as a single-quoted attribute value: the markup characters as entities, a
    character XML cannot hold at all (a control character, a lone surrogate) as U+FFFD."""
    text = _NOT_XML.sub("\ufffd", str(text))
    return re.sub("[&<>']" if quote else "[&<>]", lambda m: _ENTITIES[m.group(0)], text)


def _n(v: float) -> str:
    """A coordinate: one decimal, no '-0.0'."""
    text = f"{v:.1f}"
    return "0.0" if text == "-0.0" else text


def _attrs(**attrs) -> str:
    """Attributes in call order; ``None`` left out, underscores as dashes, floats with one decimal."""
    out = []
    for key, value in attrs.items():
        if value is None:
            continue
        value = _n(value) if isinstance(value, float) else escape(value, quote=True)
        out.append(f"{key.rstrip('_').replace('_', '-')}='{value}'")
    return " ".join(out)


class Canvas:
    """An SVG document built element by element; :meth:`render` gives its text."""

    def __init__(self, width: int, height: int, font_size: int = 12):
        self.width, self.height, self.font_size = width, height, font_size     # the size may grow until render
        self.items: list[str] = []
        self.heading: list[str] = []        # a title of more lines than a chart's layout leaves room for
        self.shift = 0.0                    # pushes the rest down by this much (render)

    def title(self, text: str, subtitle: str = "") -> None:
        """The chart's title (bold, top left) and a grey line under it saying how to read it, each
        wrapped, never cut: a chart lays out under a title of one line and a subtitle of one, and
        every line more moves the chart down (:meth:`render`)."""
        titles = wrap(text, self.width - 20, 15, BOLD)
        subtitles = wrap(subtitle, self.width - 20, self.font_size)
        items, self.items = self.items, self.heading
        for i, line in enumerate(titles):
            self.text(10, 22 + 19 * i, line, size=15, weight="bold")
        for i, line in enumerate(subtitles):
            self.text(10, 40 + 19 * (len(titles) - 1) + 17 * i, line, fill=ink("muted"))
        self.items = items
        self.shift = 19.0 * (len(titles) - 1) + 17.0 * max(len(subtitles) - 1, 0)

    def wrapped_title(self, text: str, subtitle: str = "") -> float:
        """The chart's title in full, wrapped over as many lines as it needs, and the
        subtitle, also wrapped; returns where the chart's content may start."""
        y = 4.0
        for line in wrap(text, self.width - 20, 15, BOLD):
            y += 19
            self.text(10, y, line, size=15, weight="bold")
        for line in wrap(subtitle, self.width - 20, self.font_size):
            y += 17
            self.text(10, y, line, fill=ink("muted"))
        return y + 12

    def text(self, x: float, y: float, text: str, size: int | None = None, anchor: str | None = None,
             fill: str | None = None, weight: str | None = None, rotate: bool = False) -> None:
        turn = f"rotate(-90 {_n(x)} {_n(y)})" if rotate else None
        self.items.append(f"<text {_attrs(x=float(x), y=float(y), text_anchor=anchor, font_size=size, fill=fill, font_weight=weight, transform=turn)}>"
                          f"{escape(text)}</text>")

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str | None = None,
             width: float | None = None, dash: str | None = None) -> None:
        stroke = stroke or ink("ink")
        self.items.append(f"<line {_attrs(x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), stroke=stroke, stroke_width=width, stroke_dasharray=dash)}/>")

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None,
             opacity: float | None = None, dash: str | None = None, width: float | None = None) -> None:
        self.items.append(f"<rect {_attrs(x=float(x), y=float(y), width=float(w), height=float(h), fill=fill, stroke=stroke, fill_opacity=opacity, stroke_dasharray=dash, stroke_width=width)}/>")

    def path(self, d: str, fill: str = "none", stroke: str | None = None, width: float | None = None) -> None:
        self.items.append(f"<path {_attrs(d=d, fill=fill, stroke=stroke, stroke_width=width)}/>")

    def polyline(self, points: list[tuple[float, float]], stroke: str, width: float = 2.0) -> None:
        d = " ".join(f"{'M' if i == 0 else 'L'}{_n(x)},{_n(y)}" for i, (x, y) in enumerate(points))
        self.path(d, stroke=stroke, width=width)

    def marker(self, x: float, y: float, passed: bool, colour: str) -> None:
        """A measured point: a filled circle where it passes, a red cross in a white ring where it fails."""
        if passed:
            self.items.append(f"<circle {_attrs(cx=float(x), cy=float(y), r=4.5, fill=colour, stroke=ink('page'))}/>")
            return
        self.items.append(f"<circle {_attrs(cx=float(x), cy=float(y), r=7.0, fill=ink('page'), stroke=ink('fail'), stroke_width=1.5)}/>")
        self.path(f"M{_n(x - 4)},{_n(y - 4)} L{_n(x + 4)},{_n(y + 4)} M{_n(x - 4)},{_n(y + 4)} L{_n(x + 4)},{_n(y - 4)}",
                  stroke=ink("fail"), width=2.5)

    def arrow(self, x: float, top: float, bottom: float, sign: int, fill: str) -> None:
        """A triangle pointing left (sign −1) or right (+1) from x: "runs on past the axis"."""
        tip = x + 6 * sign
        self.path(f"M{_n(x)},{_n(top)} L{_n(tip)},{_n((top + bottom) / 2)} L{_n(x)},{_n(bottom)} z", fill=fill)

    def render(self) -> str:
        w, h = self.width, math.ceil(self.height + self.shift)
        head = [(f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' "
                 f"viewBox='0 0 {w} {h}' {FONT} font-size='{self.font_size}'>"),
                f"<rect width='{w}' height='{h}' fill='{ink('page')}'/>"]
        body = ([f"<g transform='translate(0,{_n(self.shift).removesuffix('.0')})'>", *self.items, "</g>"]
                if self.shift else self.items)
        return "\n".join(head + self.heading + body + ["</svg>"]) + "\n"


def text_width(text: str, size: int = 11) -> float:
    """About how wide a label is drawn, to keep it inside the plot."""
    return CHAR_WIDTH * size / 11 * len(text)


def wrap(text: str, width: float, size: int = 11, weight: float = 1.0) -> list[str]:
    """``text`` in lines no wider than ``width`` px at ``size`` (words kept whole; a word
    longer than a line stands alone on its line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size) * weight <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def linear_ticks(top: float, count: int = 5) -> list[float]:
    """Round ticks from 0 to at least ``top`` (1, 2, 2.5 or 5 times a power of ten apart)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def ink(name: str) -> str:
    """One of the charts' inks (``templates/palette.yaml``, ``charts``) as SVG spells it: ``#rrggbb``, lower case."""
    return "#" + palette()["charts"][name].lower()


def in_turn(cycle: str, i: int) -> str:
    """The ``i``-th colour of a cycle (``series``, ``bars``), from the first again after the last."""
    colours = palette()["charts"][cycle]
    return "#" + colours[i % len(colours)].lower()


def tag_colours(tag: str) -> tuple[str, str]:
    """(fill, stroke) of a tag, from templates/palette.yaml (the workbook's and the record's colours)."""
    colours = palette()
    c = colours["tags"].get(tag, colours["tags"]["derived"])
    return f"#{(c['fill'] or colours['background']).lower()}", f"#{c['stroke'].lower()}"
