"""The workbook's style table (``xl/styles.xml``), built from the styles its cells use.

Fonts, fills, borders, number formats and cell formats get their index in the
order the serialiser first meets them (sheet by sheet, row by row), so the
same workbook always gives the same table. Index 0 of each list is the
spreadsheet default (Calibri 11, black; no fill, then the ``gray125`` fill every
reader expects second; no border).
"""

from __future__ import annotations

from .sheetmodel import PLAIN, Border, Fill, Font, Style
from .xmlescape import attr

MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
# Excel's built-in number formats met often; others get ids from 164.
BUILTIN_FORMATS = {"General": 0, "0": 1, "0.00": 2, "#,##0": 3, "#,##0.00": 4, "0%": 9, "0.00%": 10, "@": 49}
DEFAULT_FONT = '<font><name val="Calibri"/><family val="2"/><sz val="11"/></font>'


def _rgb(hex_rgb: str) -> str:
    return "00" + hex_rgb.lstrip("#").upper()


def font_xml(f: Font, complete: bool = True) -> str:
    """A font; ``complete`` names the default face and size where ``f`` leaves them
    open (a reader would otherwise pick its own default, e.g. a serif face)."""
    parts = ["<font>"]
    if f.name or complete:
        parts.append(f'<name val="{attr(f.name)}"/>' if f.name else '<name val="Calibri"/><family val="2"/>')
    if f.bold:
        parts.append('<b val="1"/>')
    if f.italic:
        parts.append('<i val="1"/>')
    if f.color:
        parts.append(f'<color rgb="{_rgb(f.color)}"/>')
    if f.size or complete:
        parts.append(f'<sz val="{f.size or 11:g}"/>')
    parts.append("</font>")
    return "".join(parts)


def fill_xml(f: Fill) -> str:
    c = _rgb(f.color)
    return f'<fill><patternFill patternType="solid"><fgColor rgb="{c}"/><bgColor rgb="{c}"/></patternFill></fill>'


def border_xml(b: Border, all_sides: bool = True) -> str:
    parts = ["<border>"]
    for name in ("left", "right", "top", "bottom"):
        side = getattr(b, name)
        if side is None:
            if all_sides:
                parts.append(f"<{name}/>")
        elif side.color:
            parts.append(f'<{name} style="{side.style}"><color rgb="{_rgb(side.color)}"/></{name}>')
        else:
            parts.append(f'<{name} style="{side.style}"/>')
    parts.append("<diagonal/></border>" if all_sides else "</border>")
    return "".join(parts)


class _Indexed:
    """Distinct items in first-seen order."""

    def __init__(self, *first):
        self.items: list = list(first)
        self.index = {item: i for i, item in enumerate(first)}

    def add(self, item) -> int:
        found = self.index.get(item)
        if found is None:
            found = self.index[item] = len(self.items)
            self.items.append(item)
        return found


class StyleSheet:
    def __init__(self):
        self.fonts = _Indexed(None)
        self.fills = _Indexed(None, "gray125")
        self.borders = _Indexed(None)
        self.formats = _Indexed()             # custom number formats
        self.xfs = _Indexed(PLAIN)
        self.dxfs = _Indexed()
        self._by_id: dict[int, tuple[int, Style]] = {}

    def xf(self, style: Style) -> int:
        """The cell-format index of a cell style. Cells share their style objects, so the
        index is looked up by identity first (hashing a nested style costs more)."""
        found = self._by_id.get(id(style))
        if found is None:
            found = self._by_id[id(style)] = (self.xfs.add(style), style)   # the style kept alive with its id
        return found[0]

    def dxf(self, style: Style) -> int:
        """The differential-format index of a conditional format's style."""
        return self.dxfs.add(style)

    def _number_format_id(self, code: str) -> int:
        builtin = BUILTIN_FORMATS.get(code)
        return builtin if builtin is not None else 164 + self.formats.add(code)

    def xml(self) -> str:
        xfs = []
        for s in self.xfs.items:
            font = 0 if s.font is None else self.fonts.add(s.font)
            fill = 0 if s.fill is None else self.fills.add(s.fill)
            border = 0 if s.border is None else self.borders.add(s.border)
            fmt = self._number_format_id(s.number_format)
            head = f'<xf borderId="{border}" fillId="{fill}" fontId="{font}" numFmtId="{fmt}" xfId="0"'
            a = s.alignment
            body = ""
            if a is not None:
                align = "".join(f' {k}="{v}"' for k, v in (("horizontal", a.horizontal), ("vertical", a.vertical),
                                                            ("wrapText", "1" if a.wrap else None)) if v)
                head += ' applyAlignment="1"'
                body += f"<alignment{align}/>"
            if not s.locked:
                head += ' applyProtection="1"'
                body += '<protection locked="0"/>'
            xfs.append(f"{head}>{body}</xf>" if body else head + "/>")
        fonts = [DEFAULT_FONT] + [font_xml(f) for f in self.fonts.items[1:]]
        fills = ['<fill><patternFill/></fill>', '<fill><patternFill patternType="gray125"/></fill>']
        fills += [fill_xml(f) for f in self.fills.items[2:]]
        borders = [border_xml(Border())] + [border_xml(b) for b in self.borders.items[1:]]
        dxfs = []
        for s in self.dxfs.items:
            body = (font_xml(s.font, complete=False) if s.font else "") + (fill_xml(s.fill) if s.fill else "") + \
                (border_xml(s.border, all_sides=False) if s.border else "")
            dxfs.append(f"<dxf>{body}</dxf>")
        formats = "".join(f'<numFmt formatCode="{attr(code)}" numFmtId="{164 + i}"/>'
                          for i, code in enumerate(self.formats.items))
        return (f'<styleSheet xmlns="{MAIN_NS}">'
                + (f'<numFmts count="{len(self.formats.items)}">{formats}</numFmts>' if formats else "")
                + f'<fonts count="{len(fonts)}">{"".join(fonts)}</fonts>'
                + f'<fills count="{len(fills)}">{"".join(fills)}</fills>'
                + f'<borders count="{len(borders)}">{"".join(borders)}</borders>'
                + '<cellStyleXfs count="1"><xf borderId="0" fillId="0" fontId="0" numFmtId="0"/></cellStyleXfs>'
                + f'<cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
                + '<cellStyles count="1"><cellStyle builtinId="0" name="Normal" xfId="0"/></cellStyles>'
                + f'<dxfs count="{len(dxfs)}">{"".join(dxfs)}</dxfs>'
                + '<tableStyles count="0" defaultPivotStyle="PivotStyleLight16" defaultTableStyle="TableStyleMedium9"/>'
                + "</styleSheet>")

