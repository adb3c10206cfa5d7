"""Cell styles: tag fills and fonts, borders, section bands, and number formats that show the unit.

Styles are immutable values (:mod:`.sheetmodel`); :meth:`Styles.dress` and
:meth:`Styles.apply` cache the style that results from a (starting style,
change) pair, so cells that start alike end alike at the cost of one lookup.
The cache knows styles by identity (hashing a nested style on every cell
cost more than the rest of a sheet): a cell's style is one the cache holds
(or the plain one), and the fonts, fills and borders passed are this
object's own, so every identity stays alive as long as the cache.
"""

from __future__ import annotations

import dataclasses
import math

from capplan import formatting
from capplan.rendering.palette import color, palette
from capplan.xlsx.sheetmodel import (
    STYLE_FIELD,
    Alignment,
    Border,
    Cell,
    Fill,
    Font,
    Side,
)
from capplan.resources import templates_dir


def fill(hex_rgb: str | None) -> Fill | None:
    return Fill(hex_rgb) if hex_rgb else None


def _decimals(numbers: list) -> int:
    """Decimals that show every number to about 4 significant digits (at least 2 if not whole).

    Values are first rounded to 12 significant digits: the engine's last bits
    differ between pint/numpy versions (7.999999999999999 for 8), and the
    format must not."""
    best = 0
    for v in set(numbers):          # scenarios repeat their values (equal values give equal decimals)
        if abs(v) < formatting.TINY:       # a tiny value shows as a power of ten
            continue
        v = float(f"{v:.12g}")
        if float(v).is_integer():
            continue
        exp = math.floor(math.log10(abs(v)))
        places = max(2, 3 - exp)
        text = f"{v:.{min(places + 3, 9)}f}".rstrip("0")
        exact = len(text.split(".")[1]) if "." in text else 0
        best = max(best, min(places, max(exact, 2)), 0)
    return min(best, 6)


# A truth value's own format, the one LibreOffice writes for its BOOLEAN format. Not
# "General": LibreOffice 7.4's PDF export aborts ("Unspecified Application Error")
# on a General-format boolean cell with a conditional format and a filled cell to its right.
BOOLEAN_FORMAT = '"TRUE";"TRUE";"FALSE"'


def number_format(unit: str, kind: str, values) -> str:
    """A number format that shows the unit: ``#,##0.00" GiB"``, ``"$"#,##0.00"/h"``."""
    if kind == "bool":
        return BOOLEAN_FORMAT
    if kind == "text":
        return "@"
    if kind == "money":
        suffix = formatting.MONEY_SUFFIX.get(unit, " " + unit).replace('"', "")
        if unit == "USD/Mtoken":
            suffix = " /1M tok"
        return '"$"#,##0.00' + (f'"{suffix}"' if suffix else "")
    numbers = [v for v in values if _number(v)]
    d = _decimals(numbers)
    label = formatting.unit_label(unit).replace('"', "")
    suffix = f'" {label}"' if label else ""
    body = "#,##0" + ("." + "0" * d if d else "") + suffix
    if not any(0 < abs(v) < formatting.TINY for v in numbers):
        return body
    power = "0.00E+00" + suffix         # formatting's rule: never 0.000000 for 3e-250
    return f"[=0]{body};[<{formatting.TINY:f}]{power};{body}" if min(numbers) >= 0 else power


def _number(v) -> bool:
    """Whether a cell value is a finite number a format acts on (not a truth value, text or blank)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)



class Styles:
    """The style objects of one workbook: tag colours from ``templates/palette.yaml``,
    everything else from ``templates/workbook.yaml``."""

    def __init__(self, cfg: dict):
        file = str(templates_dir() / "workbook.yaml")

        def rgb(*keys: str) -> str:
            value = cfg
            for k in keys:
                value = value[k]
            return color(value, file, ".".join(keys))

        tags = palette()["tags"]
        self.tag_style = {}
        for tag, spec in cfg["tags"].items():
            self.tag_style[tag] = (fill(tags[tag]["fill"]), Font(color=tags[tag]["text"], bold=bool(spec.get("bold")),
                                                                 italic=bool(spec.get("italic"))))
        self.link_font_color = rgb("linked", "font")
        self.input_fill = fill(rgb("input", "fill"))
        self.input_font = Font(color=rgb("input", "font"))
        side = Side("thick", rgb("override", "border"))
        self.override_border = Border(left=side, right=side, top=side, bottom=side)
        thin = Side("thin", rgb("lines", "box"))
        self.thin_bottom = Border(bottom=Side("thin", rgb("lines", "rule")))
        self.top_rule = Border(top=Side("thin", rgb("lines", "rule")))
        self.box = Border(left=thin, right=thin, top=thin, bottom=thin)
        self.section_fill = fill(rgb("section", "fill"))
        self.section_font = Font(bold=True, color=rgb("section", "font"), size=cfg["section"]["size"])
        self.part_fill = fill(rgb("part", "fill"))
        self.part_font = Font(bold=True, color=rgb("part", "font"))
        formula = cfg["formula_font"]
        self.formula_font = Font(color=rgb("formula_font", "color"), italic=True, name=formula["name"],
                                 size=formula["size"])
        self.pass_fill = fill(rgb("pass_fill"))
        self.fail_fill = fill(rgb("fail_fill"))
        text = cfg["text"]
        muted, small = rgb("text", "muted"), text["note_size"]
        self.title = Font(bold=True, size=text["title_size"])
        self.bold = Font(bold=True)
        self.italic = Font(italic=True)
        self.small = Font(size=small)                                # legend texts, scenario titles
        self.legend_label = Font(italic=True, size=small)
        self.note = Font(color=muted, size=small)                    # descriptions, units, helper values
        self.unit = Font(italic=True, color=muted, size=small)       # unit rows, helper labels
        self.muted = Font(italic=True, color=muted)                  # the Summary's subtitles
        self.changes = Font(size=text["changes_size"], color=muted)
        self.pending_derived = Font(color=tags["pending"]["text"], italic=True)
        self.failing_row_fill = fill(rgb("chart", "failing_row_fill"))
        self.chart_colors = rgb("chart", "ttft"), rgb("chart", "tpot")
        self.margin_colors = [color(c, file, "chart.margin_bars") for c in cfg["chart"]["margin_bars"]]
        self.knee_font = Font(bold=True)
        self.knee_border = Border(top=Side("medium"), bottom=Side("medium"))
        self.header_alignment = Alignment(wrap=True, vertical="bottom")
        self.header_right = Alignment(wrap=True, vertical="bottom", horizontal="right")   # over numbers
        self.center = Alignment(horizontal="center")
        self.left = Alignment(horizontal="left")
        self.right = Alignment(horizontal="right")
        self.top = Alignment(vertical="top")
        self.top_center_wrapped = Alignment(wrap=True, vertical="top", horizontal="center")
        self.top_wrapped = Alignment(wrap=True, vertical="top")
        self.wrapped = Alignment(wrap=True)                          # formulas and descriptions
        self._cache: dict[tuple, object] = {}

    @staticmethod
    def key(tag: str | None, pending: bool) -> str:
        if tag is None:
            return "derived"
        return "pending" if pending else tag

    def dress(self, cell: Cell, *objects, number_format: str | None = None) -> None:
        """Give a cell some of this object's fonts, fills, borders and alignments (and a number format)."""
        cache_key = (id(cell.style), *map(id, objects), number_format)
        cached = self._cache.get(cache_key)
        if cached is None:
            changes = {STYLE_FIELD[type(o)]: o for o in objects}
            if number_format is not None:
                changes["number_format"] = number_format
            cached = self._cache[cache_key] = dataclasses.replace(cell.style, **changes)
        cell.style = cached

    def editable(self, cell: Cell, *, override=False) -> None:
        """The one look of a cell a reader may edit (an input, a scenario's override):
        the input fill and font, boxed (a thick border for an override), unlocked
        so the sheet's protection lets it change."""
        cache_key = (id(cell.style), "input", override)
        cached = self._cache.get(cache_key)
        if cached is None:
            font = Font(color=self.input_font.color, bold=override)
            cached = self._cache[cache_key] = dataclasses.replace(
                cell.style, fill=self.input_fill, font=font, border=self.override_border if override else self.box,
                locked=False)
        cell.style = cached

    def swatch(self, cell: Cell, key: str) -> None:
        """A legend's sample of one look: input, override, linked, derived, or a tag."""
        if key in ("input", "override"):
            self.editable(cell, override=key == "override")
            cell.style = dataclasses.replace(cell.style, locked=True)     # a legend is not an input
        elif key == "linked":
            self.apply(cell, "derived", linked=True)
        else:
            self.apply(cell, key)

    def apply(self, cell: Cell, key: str, *, linked=False, override=False) -> None:
        """A tag's look (``key``: a tag, pending or derived): its fill and font, boxed;
        a link to the nominal sheet in the link colour, an override with a thick border."""
        cache_key = (id(cell.style), key, linked, override)
        cached = self._cache.get(cache_key)
        if cached is None:
            fill_, font = self.tag_style[key]
            if linked:
                font = Font(color=self.link_font_color, bold=font.bold, italic=font.italic)
            elif override:
                font = Font(color=font.color, bold=True, italic=font.italic)
            cached = self._cache[cache_key] = dataclasses.replace(
                cell.style, fill=fill_, font=font, border=self.override_border if override else self.box)
        cell.style = cached
