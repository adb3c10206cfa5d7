"""One worksheet's XML part, written straight from a :class:`.sheetmodel.Sheet`.

Elements come in the order the schema (ECMA-376 CT_Worksheet) requires;
attributes in a fixed order; values in one spelling (numbers as Python's
shortest round-trip ``repr``, booleans 1/0), so the bytes depend only on the
content. A formula cell carries its cached value (``<v>``: a number to 12
significant digits, ``t="b"``
for a boolean, ``t="str"`` for text) so that a reader that does not
recalculate (a previewer, Excel's Protected View, ``openpyxl`` with
``data_only=True``) shows the engine's value.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from .sheetmodel import Run, Sheet, column_letter
from .stylesxml import MAIN_NS, StyleSheet
from .xmlescape import attr, text

R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
# Protected without a password: locked cells (formulas, labels) refuse an edit, unlocked
# ones (inputs) take it; columns and rows may still be resized, cells selected.
PROTECTION = ('<sheetProtection sheet="1" objects="1" scenarios="1" formatColumns="0" formatRows="0"/>')
EXCEL_CELL_CHARS = 32_767    # Excel's documented limit on the characters of a cell
VALIDATION_ORDER = ("type", "operator", "allowBlank", "showErrorMessage", "errorStyle", "errorTitle", "error")


def number(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _text_cell(ref: str, style: str, value: str) -> str:
    return f'<c r="{ref}"{style}{_text_tail(value)}'


def _within_excel(value: str) -> str:
    """``value``, which Excel can hold in a cell: a caller that writes longer text has
    broken a promise of its own (it should bound what it writes), so this is a ValueError."""
    if len(value) > EXCEL_CELL_CHARS:
        raise ValueError(f"a workbook text cell of {len(value):,} characters, more than Excel's "
                            f"{EXCEL_CELL_CHARS:,} (it begins '{value[:60]}')")
    return value


def _text_tail(value: str) -> str:
    space = ' xml:space="preserve"' if value != value.strip() else ""
    return f' t="inlineStr"><is><t{space}>{text(_within_excel(value))}</t></is></c>'


def constant_tail(kind: str, value) -> str:
    """A constant cell's XML after its reference and style: empty, text (``kind`` s),
    a boolean (b) or a number (n)."""
    if value is None or value == "":
        return "/>"
    if kind == "s":
        return _text_tail(value)
    if kind == "b":
        return f' t="b"><v>{number(value)}</v></c>'
    return f"><v>{number(value)}</v></c>"


def significant(value):
    """A cached number to 12 significant digits, a whole one as an int: a spreadsheet
    recalculates anyway, and the last bits of a float differ between library versions
    (7.000000000000001 for 7), which must not change the file's bytes."""
    if isinstance(value, float):
        value = float(f"{value:.12g}")
        if value.is_integer() and abs(value) < 2 ** 53:
            return int(value)
    return value


class _Slot:
    """A value left open in a sheet's XML (:meth:`CellXml.pieces`)."""


SLOT = _Slot()              # a formula's cached value left open
OPEN_TEXT = "\x03"         # a constant's value left open (no cell text holds a control character)


def _cached(value) -> tuple[str, str]:
    """(type attribute, <v> element) of a formula's cached value."""
    if value is None:
        return "", ""
    if isinstance(value, bool):
        return ' t="b"', f"<v>{number(value)}</v>"
    if isinstance(value, str):
        space = ' xml:space="preserve"' if value != value.strip() else ""
        return ' t="str"', f"<v{space}>{text(_within_excel(value))}</v>"
    if isinstance(value, float) and not math.isfinite(value):
        return "", ""
    return "", f"<v>{number(significant(value))}</v>"


class CellXml:
    """The cells of a workbook's sheets as XML. Scenario sheets repeat the same text
    and the same formula at the same place on every sheet, so each such cell (or a
    formula cell's part before its cached value) is spelled once and looked up after."""

    LIMIT = 200_000         # spellings kept; past it a cell is spelled each time

    def __init__(self, styles: StyleSheet):
        self.styles = styles
        self._style: dict[int, str] = {}        # a style's ' s="…"', by identity (cells share style objects)
        self._spelled: dict[tuple, object] = {}
        self._values: dict[tuple, tuple[str, str]] = {(_Slot, SLOT): ("\x01", "\x02")}   # a cached value's
        self.shapes: dict[int, list[str] | None] = {}     # spelling, by (type, value); pieces of shapes, by id
        self._rules: dict[int, tuple[str, str]] = {}       # a shape's conditional formats and validations

    def style(self, style) -> str:
        found = self._style.get(id(style))
        if found is None:                       # the style sheet keeps the style alive, so its id stays its own
            xf = self.styles.xf(style)
            found = self._style[id(style)] = f' s="{xf}"' if xf else ""
        return found

    def cached(self, value) -> tuple[str, str]:
        """:func:`_cached`, looked up: scenarios repeat most of their values. The type is
        part of the key (True == 1 == 1.0 spell differently); NaN is never found again."""
        key = (value.__class__, value)
        found = self._values.get(key)
        if found is None:
            found = _cached(value)
            if len(self._values) < self.LIMIT:
                self._values[key] = found
        return found

    def _keep(self, key: tuple, value):
        if len(self._spelled) < self.LIMIT:
            self._spelled[key] = value
        return value

    def rows(self, sheet: Sheet) -> str:
        """The <row> elements: each row's cells, and the cells its runs pass through
        (:class:`.sheetmodel.Run`), in column order; a sheet that shares its shape with
        others, as the shape's XML with its own values (:attr:`.Sheet.shape`)."""
        if sheet.shape is not None:
            found = sheet.shape.rows(self, sheet)
            if found is not None:
                return found
        return self.cell_rows(sheet)

    def pieces(self, shadow: Sheet, markers: list[str]) -> list[str] | None:
        """The XML of a sheet whose open cells (a formula caching :data:`SLOT`, a constant
        holding :data:`OPEN_TEXT`) are left out, in pieces around them: a formula's type
        attribute (marked \\x01 in ``markers``) and value (\\x02), a constant's XML after its
        style (\\x03). None if the sheet opens other places than ``markers`` says."""
        xml = self.cell_rows(shadow).replace(_text_tail(OPEN_TEXT), OPEN_TEXT)
        parts = re.split("([\x01\x02\x03])", xml)
        return parts[0::2] if parts[1::2] == markers else None

    def rules(self, sheet: Sheet) -> tuple[str, str]:
        """A sheet's conditional formats and data validations, spelled once for a shape's sheets
        (they share them: :attr:`.Sheet.shape`)."""
        if sheet.shape is None:
            return _conditional(sheet, self.styles), _validations(sheet)
        found = self._rules.get(id(sheet.shape))
        if found is None:
            found = self._rules[id(sheet.shape)] = (_conditional(sheet, self.styles), _validations(sheet))
        return found

    @staticmethod
    def fill(pieces: list[str], values: list[str]) -> str:
        """A sheet's XML from its shape's :meth:`pieces` and the spelling of each open place."""
        out = [""] * (len(pieces) + len(values))
        out[0::2], out[1::2] = pieces, values
        return "".join(out)

    def cell_rows(self, sheet: Sheet) -> str:
        """:meth:`rows`, from the sheet's cells and runs."""
        out: list[str] = []
        cells, heights = sheet.cells, sheet.heights
        rows: dict[int, list] = {}
        for key in sorted(cells):
            rows.setdefault(key[0], []).append(cells[key])
        passing: dict[int, list] = {}               # row -> the runs through it, by column
        for run in sorted(sheet.runs, key=lambda run: run.column):
            for r in range(run.first_row, run.last_row + 1):
                passing.setdefault(r, []).append(run)
        spelled: dict[int, list[str]] = {}          # a run's cells, by id(run), once its first row is reached
        for r in sorted(rows.keys() | heights.keys() | passing.keys()):
            height = heights.get(r)
            out.append(f'<row r="{r}" customHeight="1" ht="{height:g}">' if height else f'<row r="{r}">')
            here = rows.get(r, ())
            if r in passing:
                out.extend(self._merged(r, here, passing[r], spelled))
            else:
                out.extend(self._spell(r, here))
            out.append("</row>")
        return "".join(out)

    def _merged(self, r: int, here: list, runs: list, spelled: dict[int, list[str]]) -> list[str]:
        """Row ``r``'s cells and those of the runs through it, in column order. A run is
        spelled whole at its first row, where its style comes in the order of the cells (so
        styles are numbered as if each of its cells were a :class:`.sheetmodel.Cell`)."""
        if not here or here[-1].column < runs[0].column:       # as a rule: keys and inputs left of formulas
            ordered = [*here, *runs]
        else:
            columns = [c.column for c in here]
            if set(columns) & {run.column for run in runs}:
                raise ValueError(f"row {r} has a cell inside a run")
            ordered = [item for _, item in sorted([*zip(columns, here), *((run.column, run) for run in runs)],
                                                  key=lambda pair: pair[0])]
        out = []
        for item in ordered:
            if isinstance(item, Run):
                found = spelled.get(id(item))
                if found is None:
                    found = spelled[id(item)] = self._run(item)
                out.append(found[r - item.first_row])
            else:
                out.extend(self._spell(r, [item]))
        return out

    def _run(self, run: Run) -> list[str]:
        """A run's cells as XML, top to bottom: they differ in row, formula and value only."""
        letter, style, values, cached = column_letter(run.column), self.style(run.style), self._values, self.cached
        joined = "\x00".join(run.formulas)          # escaped at once, not cell by cell (no formula holds a NUL)
        escaped = text(joined)
        formulas = run.formulas if escaped is joined else escaped.split("\x00")
        return [f'<c r="{letter}{r}"{style}{tv[0]}><f>{formula}</f>{tv[1]}</c>'
                for r, formula, tv in zip(range(run.first_row, run.last_row + 1), formulas,
                                          [values.get((v.__class__, v)) or cached(v) for v in run.cached])]

    def _spell(self, r: int, cells: list) -> list[str]:
        """Row ``r``'s cells as XML. The loop runs once per cell of every sheet, so the
        lookups of :meth:`style`, :meth:`cached` and :meth:`_keep` are written inline."""
        out: list[str] = []
        write = out.append
        spelled, values, styles, limit = self._spelled, self._values, self._style, self.LIMIT
        for c in cells:
            kind, value = c.kind, c.value
            key = (r, c.column, id(c.style), kind, value) if kind == "f" or kind == "s" else None
            found = spelled.get(key) if key else None
            if kind == "f":
                cached = c.cached
                tv = values.get((cached.__class__, cached)) or self.cached(cached)
                if found is None:
                    style = styles.get(id(c.style))
                    found = (f'<c r="{column_letter(c.column)}{r}"'
                             f'{self.style(c.style) if style is None else style}', f"><f>{text(value)}</f>")
                    if len(spelled) < limit:
                        spelled[key] = found
                write(f"{found[0]}{tv[0]}{found[1]}{tv[1]}</c>")
                continue
            if found is not None:
                write(found)
                continue
            ref = f"{column_letter(c.column)}{r}"
            style = self.style(c.style)
            if kind == "s" and value:
                cell = _text_cell(ref, style, value)
            else:
                cell = f'<c r="{ref}"{style}{constant_tail(kind, value)}'
            write(self._keep(key, cell) if key else cell)
        return out


def _split(cell: str) -> tuple[int, int]:
    letters = cell.rstrip("0123456789")
    col = 0
    for ch in letters:
        col = col * 26 + ord(ch) - 64
    return col, int(cell[len(letters):])


def _view(sheet: Sheet, selected: bool) -> str:
    head = '<sheetView' + (' tabSelected="1"' if selected else "") + ' workbookViewId="0">'
    if not sheet.freeze or sheet.freeze == "A1":
        return head + '<selection activeCell="A1" sqref="A1"/></sheetView>'
    col, row = _split(sheet.freeze)
    x, y = col - 1, row - 1
    pane = "bottomRight" if x and y else ("bottomLeft" if y else "topRight")
    split = (f' xSplit="{x}"' if x else "") + (f' ySplit="{y}"' if y else "")
    return (f'{head}<pane{split} topLeftCell="{sheet.freeze}" activePane="{pane}" state="frozen"/>'
            f'<selection pane="{pane}" activeCell="{sheet.freeze}" sqref="{sheet.freeze}"/></sheetView>')


def _conditional(sheet: Sheet, styles: StyleSheet) -> str:
    groups: dict[str, list] = {}
    for ranges, rule in sheet.conditional:
        groups.setdefault(ranges, []).append(rule)
    out, priority = [], 0
    for ranges, rules in groups.items():
        out.append(f'<conditionalFormatting sqref="{ranges}">')
        for rule in rules:
            priority += 1
            operator = f' operator="{rule.operator}"' if rule.operator else ""
            out.append(f'<cfRule type="{rule.kind}" dxfId="{styles.dxf(rule.style)}" priority="{priority}"{operator}>'
                       f"<formula>{text(rule.formula)}</formula></cfRule>")
        out.append("</conditionalFormatting>")
    return "".join(out)


@lru_cache(maxsize=4096)
def _rule(items: tuple) -> tuple[str, str]:
    """A validation rule's attributes and formulas (sheets alike repeat their rules)."""
    rule = dict(items)
    attrs = "".join(f' {k}="{attr(str(rule[k]))}"' for k in VALIDATION_ORDER if k in rule)
    formulas = "".join(f"<{k}>{text(rule[k])}</{k}>" for k in ("formula1", "formula2") if k in rule)
    return attrs, formulas


def _validations(sheet: Sheet) -> str:
    if not sheet.validations:
        return ""
    out = [f'<dataValidations count="{len(sheet.validations)}">']
    for v in sheet.validations.values():
        attrs, formulas = _rule(tuple(v.rule.items()))
        out.append(f'<dataValidation{attrs} sqref="{" ".join(v.cells)}">{formulas}</dataValidation>')
    out.append("</dataValidations>")
    return "".join(out)


def _merged_cells(sheet: Sheet) -> str:
    """The ranges shown as one cell (the first holds the value), in the order written."""
    if not sheet.merged:
        return ""
    return (f'<mergeCells count="{len(sheet.merged)}">' + "".join(f'<mergeCell ref="{r}"/>' for r in sheet.merged)
            + "</mergeCells>")


def _page(sheet: Sheet) -> str:
    p = sheet.page
    margins = "".join(f' {k}="{p.margins[k]:g}"' for k in ("left", "right", "top", "bottom", "header", "footer"))
    attrs = (f' paperSize="{p.paper}"' if p.paper else "") + (f' scale="{p.scale}"' if p.scale else "")
    if p.fit_width is not None:
        attrs += f' fitToWidth="{p.fit_width}" fitToHeight="{p.fit_height}"'
    attrs += (' pageOrder="overThenDown"' if p.across_first else "") + f' orientation="{p.orientation}"'
    out = f"<pageMargins{margins}/><pageSetup{attrs}/>"
    if p.breaks:
        brk = "".join(f'<brk id="{r}" max="16383" man="1"/>' for r in p.breaks)
        out += f'<rowBreaks count="{len(p.breaks)}" manualBreakCount="{len(p.breaks)}">{brk}</rowBreaks>'
    return out


def sheet_xml(sheet: Sheet, cells: CellXml, selected: bool, drawing: str | None, comments: str | None) -> str:
    """The part; ``cells`` spells the cells (and holds the workbook's style sheet);
    ``drawing`` and ``comments`` are the relationship ids of the sheet's chart
    drawing and of its comments' VML drawing."""
    fit = '<pageSetUpPr fitToPage="1"/>' if sheet.page.fit_width is not None else ""
    widths = "".join(f'<col min="{i}" max="{i}" width="{w:g}" customWidth="1"/>' for i, w in sorted(sheet.widths.items()))
    parts = [f'<worksheet xmlns="{MAIN_NS}" xmlns:r="{R_NS}">',
             f"<sheetPr>{fit}</sheetPr>" if fit else "",
             f'<dimension ref="A1:{column_letter(sheet.max_column)}{sheet.max_row}"/>',
             f"<sheetViews>{_view(sheet, selected)}</sheetViews>",
             '<sheetFormatPr defaultRowHeight="15"/>',
             f"<cols>{widths}</cols>" if widths else "",
             f"<sheetData>{cells.rows(sheet)}</sheetData>",
             PROTECTION if sheet.protected else "",
             _merged_cells(sheet),
             *cells.rules(sheet),
             _page(sheet),
             f'<drawing r:id="{drawing}"/>' if drawing else "",
             f'<legacyDrawing r:id="{comments}"/>' if comments else "",
             "</worksheet>"]
    return "".join(parts)
