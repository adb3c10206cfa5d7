"""Cell styles: tag fills and fonts, borders, section bands, and number formats that show the unit.

openpyxl hashes every style object on assignment, which dominates the cost of
a large workbook; :meth:`Styles.apply` therefore caches the resulting style
array per (starting style, key) and copies it onto cells that start alike.
"""

from __future__ import annotations

import copy
import math
import re

from openpyxl.styles import Border, Font, PatternFill, Side

from capplan import formatting
from capplan.errors import CapplanError


def color(value) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9A-Fa-f]{6}", value):
        raise CapplanError(f"templates/workbook.yaml: colours are quoted 6-digit hex RGB strings, got {value!r}")
    return value.upper()


def fill(hex_rgb):
    hex_rgb = color(hex_rgb) if hex_rgb else None
    return PatternFill("solid", start_color=hex_rgb, end_color=hex_rgb) if hex_rgb else PatternFill()


def _decimals(values) -> int:
    """Decimals that show every value to about 4 significant digits (at least 2 if not whole).

    Values are first rounded to 12 significant digits: the engine's last bits
    differ between pint/numpy versions (7.999999999999999 for 8), and the
    format must not."""
    best = 0
    for v in values:
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v == 0:
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


def number_format(unit: str, kind: str, values) -> str:
    """A number format that shows the unit: ``#,##0.00" GiB"``, ``"$"#,##0.00"/h"``."""
    if kind == "bool":
        return "General"
    if kind == "text":
        return "@"
    if kind == "money":
        suffix = formatting.MONEY_SUFFIX.get(unit, " " + unit).replace('"', "")
        if unit == "USD/Mtoken":
            suffix = " /1M tok"
        return '"$"#,##0.00' + (f'"{suffix}"' if suffix else "")
    d = _decimals(values)
    body = "#,##0" + ("." + "0" * d if d else "")
    label = formatting.unit_label(unit).replace('"', "")
    return body + (f'" {label}"' if label else "")


class Styles:
    """The style objects of one workbook, built from ``templates/workbook.yaml``."""

    def __init__(self, cfg: dict):
        self.tag_style = {}
        for tag, spec in cfg["tags"].items():
            self.tag_style[tag] = (
                fill(spec.get("fill")),
                Font(color=color(spec.get("font", "000000")), bold=bool(spec.get("bold")),
                     italic=bool(spec.get("italic"))),
            )
        self.link_font_color = color(cfg["linked"]["font"])
        side = Side(style="thick", color=color(cfg["override"]["border"]))
        self.override_border = Border(left=side, right=side, top=side, bottom=side)
        thin = Side(style="thin", color="BFBFBF")
        self.thin_bottom = Border(bottom=Side(style="thin", color="000000"))
        self.box = Border(left=thin, right=thin, top=thin, bottom=thin)
        self.section_fill = fill(cfg["section"]["fill"])
        self.section_font = Font(bold=True, color=color(cfg["section"]["font"]), size=12)
        self.part_fill = fill(cfg["part"]["fill"])
        self.part_font = Font(bold=True, color=color(cfg["part"]["font"]))
        self.formula_font = Font(color=color(cfg["formula_font"]), italic=True, name="Consolas", size=9)
        self.pass_fill = fill(cfg["pass_fill"])
        self.fail_fill = fill(cfg["fail_fill"])
        self._cache: dict[tuple, object] = {}

    @staticmethod
    def key(tag: str | None, pending: bool) -> str:
        if tag is None:
            return "derived"
        return "pending" if pending else tag

    def apply(self, cell, key: str, *, linked=False, override=False) -> None:
        cache_key = (tuple(cell._style or ()), key, linked, override)
        cached = self._cache.get(cache_key)
        if cached is not None:
            cell._style = copy.copy(cached)
            return
        fill_, font = self.tag_style[key]
        cell.fill = fill_
        if linked:
            font = Font(color=self.link_font_color, bold=font.bold, italic=font.italic)
        elif override:
            font = Font(color=font.color, bold=True, italic=font.italic)
        cell.font = font
        cell.border = self.override_border if override else self.box
        self._cache[cache_key] = copy.copy(cell._style)
