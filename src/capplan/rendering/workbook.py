"""The Excel workbook: every derived quantity a live formula over named cells.

Layout (sections from ``templates/layout.yaml``, looks from
``templates/workbook.yaml``):

* **Summary** – the decisions per scenario (λ_safe, GPUs, and per deployment
  nodes, GPUs, monthly cost, $/1M tokens …), one column per scenario, each
  cell a link into that scenario's sheet; the tag legend; pending
  measurements; price dates.
* **one sheet per scenario** (nominal first), all with the same layout:
  ``Quantity | Value | Unit | Tag | Formula``, sections and parts in the
  record's order, tables as ranges (one record per row), the load-sweep chart.
  Every cell carries a *sheet-scoped* defined name equal to the canonical
  quantity name, so the same formula text works on every sheet:
  ``=CEILING(peak_arrival_rate/safe_rate_per_replica,1)``. Table columns are
  named ranges (``deployments_nodes``).

Inputs are the only constants. On the nominal sheet they are values styled
by tag, with their source and date as a cell comment. On a scenario sheet an
inherited input is a link (``='nominal'!$B$7``), so a change on the nominal
sheet flows into every scenario that does not override it; an overridden
input, or a derived quantity the scenario pins, is a value.

:func:`build_workbook` also returns a manifest (which cell holds which
quantity of which scenario, and the engine's value for it) that the tests use
to compare a recalculated workbook with the engine. :func:`render_workbook`
serialises byte-for-byte deterministically.
"""

from __future__ import annotations

import copy
import datetime as dt
import io
import math
import re
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache

import sympy
import yaml
from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.axis import NumericAxis
from openpyxl.comments import Comment
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.writer.excel import ExcelWriter

from capplan import formatting
from capplan.engine import units
from capplan.engine.evaluate import Evaluation
from capplan.engine.model import Model
from capplan.errors import CapplanError
from capplan.loading.plan import Plan
from capplan.rendering import present
from capplan.rendering.excel import (
    ExcelPrinter,
    exact_factor,
    excel_name,
    fold_units,
    lint_formula,
)
from capplan.rendering.layout import layout
from capplan.rendering.validation import validate_input
from capplan.rendering.view import declared
from capplan.resources import templates_dir

# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

COLUMNS = ("name", "value", "unit", "tag", "note")
LEGEND_ROW = 3
HEADER_ROW = 5
FIRST_ROW = 6
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
TAG_KEYS = ("fact", "policy", "measurement", "pending", "assumption", "derived")
REQUIRED_CONFIG = ("summary_sheet", "columns", "table_column_width", "tags", "linked", "override", "section",
                   "part", "pass_fill", "fail_fill", "formula_font", "chart")


@lru_cache(maxsize=None)
def config() -> dict:
    path = templates_dir() / "workbook.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise CapplanError(f"cannot read the workbook layout: {err}", file=str(path)) from None
    if not isinstance(data, dict):
        raise CapplanError("the workbook layout must be a YAML mapping", file=str(path))
    missing = [k for k in REQUIRED_CONFIG if k not in data]
    missing += [f"tags.{t}" for t in TAG_KEYS if t not in (data.get("tags") or {})]
    missing += [f"columns.{c}" for c in COLUMNS if c not in (data.get("columns") or {})]
    if missing:
        raise CapplanError(f"missing key(s) {', '.join(missing)}", file=str(path))
    return data


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CellInfo:
    """One value-bearing cell: what it holds and what the engine says it is."""

    sheet: str
    coordinate: str
    quantity: str          # canonical name ('kv_pool', 'deployments.nodes')
    scenario: str
    row: int | None        # table row index, None for a scalar
    role: str              # input | override | pinned | link | derived | summary | chart
    expected: object       # the engine's value in display units (float, bool or str)

    @property
    def ref(self) -> str:
        return f"{self.sheet}!{self.coordinate}"


@dataclass
class BuiltWorkbook:
    workbook: Workbook
    cells: list[CellInfo]
    sheets: dict[str, str]                 # scenario name -> sheet title
    names: dict[str, str]                  # canonical name -> Excel defined name
    positions: dict[str, dict] = field(default_factory=dict)   # sheet -> quantity/(column, row) -> cell

    def cell(self, scenario: str, quantity: str, row: int | None = None) -> CellInfo:
        """The scenario sheet's cell of a quantity (or of a table column's row)."""
        sheet = self.sheets[scenario]
        for info in self.cells:
            if info.sheet == sheet and info.quantity == quantity and info.row == row and \
                    info.role not in ("summary", "chart"):
                return info
        raise KeyError((scenario, quantity, row))

    def formulas(self) -> list[tuple[str, str]]:
        """(sheet!cell, formula) for every formula in the workbook."""
        out = []
        for ws in self.workbook.worksheets:
            for row in ws.iter_rows():
                for c in row:
                    if c.data_type == "f":
                        out.append((f"{ws.title}!{c.coordinate}", c.value))
        return out


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def render_workbook(plan: Plan, evaluations: list[Evaluation], model: Model) -> bytes:
    """The .xlsx bytes for a plan; identical input gives identical bytes."""
    return to_bytes(build_workbook(plan, evaluations, model).workbook)


def build_workbook(plan: Plan, evaluations: list[Evaluation], model: Model) -> BuiltWorkbook:
    if not evaluations:
        raise CapplanError("no scenario was evaluated, so there is no workbook to write", file=plan.file)
    if len(evaluations) != len(plan.scenarios) or any(
            e.scenario.name != s.name for e, s in zip(evaluations, plan.scenarios)):
        raise CapplanError("the workbook needs one evaluation per scenario, in the plan's order", file=plan.file)
    try:
        return _Builder(plan, evaluations, model).build()
    except CapplanError as err:
        raise err.located(file=plan.file) from None


def to_bytes(wb: Workbook) -> bytes:
    """Serialise deterministically: fixed document dates, fixed zip entry dates, sorted entries."""
    stamp = config().get("timestamp") or dt.datetime(2000, 1, 1)
    if isinstance(stamp, str):
        stamp = dt.datetime.fromisoformat(stamp)
    if isinstance(stamp, dt.date) and not isinstance(stamp, dt.datetime):
        stamp = dt.datetime(stamp.year, stamp.month, stamp.day)
    wb.properties.created = stamp
    wb.properties.modified = stamp
    wb.properties.creator = "capplan"
    wb.properties.lastModifiedBy = "capplan"
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).write_data()
    # Stored, not deflated, by default: deflate output depends on the zlib build
    # (zlib vs zlib-ng), and `capplan check` compares out/ byte for byte.
    method = zipfile.ZIP_DEFLATED if config().get("zip_compression") == "deflate" else zipfile.ZIP_STORED
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", method) as dst:
        names = sorted(src.namelist(), key=lambda n: (n != "[Content_Types].xml", n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            info.create_system = 0
            dst.writestr(info, src.read(name))
    return out.getvalue()


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

_SHEET_BAD = re.compile(r"[\[\]:*?/\\']")


def sheet_title(name: str, taken: set[str]) -> str:
    """A valid, unique sheet title for a scenario name (31 characters, no []:*?/\\')."""
    title = _SHEET_BAD.sub("_", ILLEGAL_CHARACTERS_RE.sub("", name)).strip() or "scenario"
    title = title[:31]
    base, n = title, 2
    while title.lower() in taken or title.lower() == "history":
        suffix = f"_{n}"
        title = base[:31 - len(suffix)] + suffix
        n += 1
    taken.add(title.lower())
    return title


def quote_sheet(title: str) -> str:
    return "'" + title.replace("'", "''") + "'"


def clean_text(value) -> str:
    return ILLEGAL_CHARACTERS_RE.sub("", str(value))


def set_text(cell, value) -> None:
    """Write plan text as text: never as a formula, whatever it starts with (=, +, -, @)."""
    cell.value = clean_text(value)
    cell.data_type = "s"


def cell_number(value: float):
    """A display value as written to a cell: 15 significant digits, whole numbers as int."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    value = float(f"{float(value):.15g}")
    if value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _decimals(values) -> int:
    """Decimals that show every value to about 4 significant digits (at least 2 if not whole)."""
    best = 0
    for v in values:
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v == 0:
            continue
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


def _color(value) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9A-Fa-f]{6}", value):
        raise CapplanError(f"templates/workbook.yaml: colours are quoted 6-digit hex RGB strings, got {value!r}")
    return value.upper()


def _fill(hex_rgb):
    hex_rgb = _color(hex_rgb) if hex_rgb else None
    return PatternFill("solid", start_color=hex_rgb, end_color=hex_rgb) if hex_rgb else PatternFill()


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


@lru_cache(maxsize=None)
def _factor(unit: str) -> sympy.Rational:
    return exact_factor(units.factor(unit))


# ---------------------------------------------------------------------------
# References for the formula printer
# ---------------------------------------------------------------------------


class _Refs:
    """What a formula on one sheet (and, for a row formula, one table row) reads."""

    def __init__(self, builder: "_Builder", sheet: "_Sheet", table: str | None = None, row: int | None = None):
        self.b = builder
        self.sheet = sheet
        self.table = table
        self.row = row

    def scalar(self, name: str) -> str:
        return self.b.names[name]

    def column(self, name: str) -> str:
        return self.b.names[name]

    def cell(self, name: str):
        q = self.b.model.quantities[name]
        if self.table is None or q.table != self.table:
            return None
        return self.sheet.table_cell(name, self.row)

    def is_bool(self, name: str) -> bool:
        return self.b.model.quantities[name].kind == "bool"

    def nominal(self, name: str, array: bool):
        """nominal(x): a cell reference into the nominal sheet (None on the nominal sheet itself).

        Cell references, not 'nominal'!name: LibreOffice misreads a sheet-qualified
        name that starts like a cell address ('nominal'!bf16_peak_flops)."""
        nominal = self.b.sheets[0]
        if self.sheet is nominal:
            return None
        qs = quote_sheet(nominal.ws.title)
        q = self.b.model.quantities[name]
        if q.table is None:
            return f"{qs}!{nominal.scalar_cell(name, absolute=True)}"
        if q.table not in nominal.tables:
            raise CapplanError(f"nominal({name}): the nominal scenario has no table {q.table}")
        if array or self.table != q.table:
            return f"{qs}!{nominal.column_range(name)}"
        if self.row >= nominal.tables[q.table].n_rows:
            raise CapplanError(f"nominal({name}): the nominal {q.table} table has no row {self.row + 1}")
        return f"{qs}!{nominal.table_cell(name, self.row, absolute=True)}"


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


@dataclass
class _TablePos:
    name: str
    header_row: int
    first_row: int
    n_rows: int
    columns: list[str]                 # qualified names
    col_index: dict[str, int]          # qualified name -> column number


class _Sheet:
    """Where one scenario's cells go."""

    def __init__(self, ev: Evaluation, ws):
        self.ev = ev
        self.ws = ws
        self.rows: list[tuple] = []              # (layout item, row)
        self.scalar_row: dict[str, int] = {}
        self.tables: dict[str, _TablePos] = {}

    def scalar_cell(self, name: str, absolute=False) -> str:
        r = self.scalar_row[name]
        return f"$B${r}" if absolute else f"B{r}"

    def table_cell(self, name: str, row: int, absolute=False) -> str:
        pos = self.tables[name.split(".", 1)[0]]
        letter = get_column_letter(pos.col_index[name])
        r = pos.first_row + row
        return f"${letter}${r}" if absolute else f"{letter}{r}"

    def column_range(self, name: str) -> str:
        pos = self.tables[name.split(".", 1)[0]]
        letter = get_column_letter(pos.col_index[name])
        return f"${letter}${pos.first_row}:${letter}${pos.first_row + pos.n_rows - 1}"


class _Builder:
    def __init__(self, plan: Plan, evaluations: list[Evaluation], model: Model):
        self.plan = plan
        self.evs = evaluations
        self.model = model
        self.cfg = config()
        self.layout = layout()
        self.cells: list[CellInfo] = []
        self.nominal = evaluations[0]
        self._folded: dict[tuple, sympy.Basic] = {}
        self._init_names()
        self._init_styles()

    # -- names ---------------------------------------------------------------
    def _init_names(self) -> None:
        taken: set[str] = set()
        self.names: dict[str, str] = {}
        active = [n for n in self.model.quantities if any(n in e.graph.nodes for e in self.evs)]
        for n in active:                       # scalars keep their names first
            if self.model.quantities[n].table is None:
                self.names[n] = excel_name(n, taken)
        for n in active:
            if self.model.quantities[n].table is not None:
                self.names[n] = excel_name(n, taken)
        self.name_set = {v.lower() for v in self.names.values()}

    def factor_of(self, name: str) -> sympy.Rational:
        q = self.model.quantities[name]
        if q.kind in ("bool", "text"):
            return sympy.Integer(1)
        return _factor(q.unit)

    def folded(self, name: str, formula) -> sympy.Basic:
        key = (name, formula.text)
        if key not in self._folded:
            self._folded[key] = fold_units(formula.expr, self.factor_of, self.factor_of(name))
        return self._folded[key]

    def compile(self, name: str, formula, refs: _Refs) -> str:
        text = ExcelPrinter(refs).doprint(self.folded(name, formula))
        problems = lint_formula(text, self.name_set)
        if problems:
            raise CapplanError(f"internal error compiling {name} = {formula.text} to Excel: {'; '.join(problems)}")
        return text

    # -- styles ----------------------------------------------------------------
    def _init_styles(self) -> None:
        cfg = self.cfg
        self.tag_style = {}
        for tag, spec in cfg["tags"].items():
            self.tag_style[tag] = (
                _fill(spec.get("fill")),
                Font(color=_color(spec.get("font", "000000")), bold=bool(spec.get("bold")),
                     italic=bool(spec.get("italic"))),
            )
        self.link_font_color = _color(cfg["linked"]["font"])
        side = Side(style="thick", color=_color(cfg["override"]["border"]))
        self.override_border = Border(left=side, right=side, top=side, bottom=side)
        thin = Side(style="thin", color="BFBFBF")
        self.thin_bottom = Border(bottom=Side(style="thin", color="000000"))
        self.box = Border(left=thin, right=thin, top=thin, bottom=thin)
        self.section_fill = _fill(cfg["section"]["fill"])
        self.section_font = Font(bold=True, color=_color(cfg["section"]["font"]), size=12)
        self.part_fill = _fill(cfg["part"]["fill"])
        self.part_font = Font(bold=True, color=_color(cfg["part"]["font"]))
        self.formula_font = Font(color=_color(cfg["formula_font"]), italic=True, name="Consolas", size=9)
        self.pass_fill = _fill(cfg["pass_fill"])
        self.fail_fill = _fill(cfg["fail_fill"])
        self._style_cache: dict[tuple, object] = {}

    @staticmethod
    def style_key(tag: str | None, pending: bool) -> str:
        if tag is None:
            return "derived"
        return "pending" if pending else tag

    def apply_style(self, cell, key: str, *, linked=False, override=False) -> None:
        # openpyxl hashes every style object on assignment; reuse the resulting
        # style array for cells that start from the same style (much faster)
        cache_key = (tuple(cell._style or ()), key, linked, override)
        cached = self._style_cache.get(cache_key)
        if cached is not None:
            cell._style = copy.copy(cached)
            return
        fill, font = self.tag_style[key]
        cell.fill = fill
        if linked:
            font = Font(color=self.link_font_color, bold=font.bold, italic=font.italic)
        elif override:
            font = Font(color=font.color, bold=True, italic=font.italic)
        cell.font = font
        cell.border = self.override_border if override else self.box
        self._style_cache[cache_key] = copy.copy(cell._style)

    # -- build -----------------------------------------------------------------
    def build(self) -> BuiltWorkbook:
        wb = Workbook()
        summary = wb.active
        summary.title = self.cfg.get("summary_sheet", "Summary")
        taken = {summary.title.lower()}
        self.sheets: list[_Sheet] = []
        for ev in self.evs:
            ws = wb.create_sheet(sheet_title(ev.scenario.name, taken))
            self.sheets.append(_Sheet(ev, ws))
        for sheet in self.sheets:
            self._plan_sheet(sheet)
        for sheet in self.sheets:
            self._write_sheet(sheet)
        self._write_summary(summary)
        wb.calculation.fullCalcOnLoad = True
        positions = {s.ws.title: {**{n: s.scalar_cell(n) for n in s.scalar_row},
                                  **{(n, i): s.table_cell(n, i) for t in s.tables.values()
                                     for n in t.columns for i in range(t.n_rows)}}
                     for s in self.sheets}
        return BuiltWorkbook(wb, self.cells, {s.ev.scenario.name: s.ws.title for s in self.sheets},
                             dict(self.names), positions)

    # -- layout ------------------------------------------------------------------
    def chart_rows(self) -> int:
        """Rows the chart covers (default row height 15 pt = 0.529 cm), plus one."""
        return math.ceil(self.cfg["chart"]["height_cm"] / 0.529) + 1

    def _plan_sheet(self, sheet: _Sheet) -> None:
        """Assign rows: sections and parts of layout.yaml, then whatever it does not place."""
        ev = sheet.ev
        nodes = ev.graph.nodes
        placed: set[str] = set()
        tables_placed: set[str] = set()
        items: list[tuple] = []
        for section in self.layout.get("sections", []):
            body = []
            for part in section.get("parts", []) or []:
                named = list(part.get("tables", []) or [])
                if isinstance(part.get("sweep"), str):       # the record's sweep part names its table so
                    named.append(part["sweep"])
                tables = [t for t in dict.fromkeys(named) if t in ev.scenario.tables and t not in tables_placed]
                quantities = [q for q in part.get("quantities", []) or []
                              if q in nodes and self.model.quantities[q].table is None and q not in placed]
                if not tables and not quantities:
                    continue
                body.append(("part", part.get("title", "")))
                for t in tables:
                    body.append(("table", t))
                    tables_placed.add(t)
                for q in quantities:
                    body.append(("quantity", q))
                    placed.add(q)
                body.append(("blank",))
            if body:
                items.append(("section", section.get("title", section.get("id", ""))))
                items.extend(body)
        rest_tables = [t for t in self.model.tables if t in ev.scenario.tables and t not in tables_placed]
        rest = [n for n in ev.graph.order if self.model.quantities[n].table is None and n not in placed]
        if rest or rest_tables:
            items.append(("section", "Other quantities"))
            items.append(("part", "Not placed by templates/layout.yaml"))
            items.extend(("table", t) for t in rest_tables)
            items.extend(("quantity", q) for q in rest)
            items.append(("blank",))
        row = FIRST_ROW
        for item in items:
            kind = item[0]
            if kind == "table":
                t = item[1]
                cols = [c for c in self.model.tables[t].columns if c in nodes]
                n = len(ev.scenario.tables[t].rows)
                sheet.tables[t] = _TablePos(t, row, row + 2, n, cols, {c: i + 1 for i, c in enumerate(cols)})
                computed = [c for c in cols if nodes[c].formula is not None]
                # the load sweep also holds the chart's SLO lines and, below them, the chart
                height = 2 + n + len(computed) + (4 + self.chart_rows() if t == "load_sweep" else 0) + 1
                sheet.rows.append((item, row))
                row += height
            else:
                sheet.rows.append((item, row))
                if kind == "quantity":
                    sheet.scalar_row[item[1]] = row
                row += 1

    # -- scenario sheet ------------------------------------------------------------
    def _write_sheet(self, sheet: _Sheet) -> None:
        ws, ev = sheet.ws, sheet.ev
        nominal = self.sheets[0]
        is_nominal = sheet is nominal
        cols = self.cfg["columns"]
        max_cols = max([len(t.columns) for t in sheet.tables.values()] + [len(COLUMNS)])
        widths = {i: cols[key]["width"] for i, key in enumerate(COLUMNS, start=1)}
        for i in range(len(COLUMNS) + 1, max_cols + 12):
            widths[i] = self.cfg["table_column_width"]
        for t in sheet.tables.values():       # a table header fits its column
            for c, col in enumerate(t.columns, start=1):
                widths[c] = max(widths[c], min(len(self.model.quantities[col].column) + 2, 30))
        for i, w in sorted(widths.items()):
            ws.column_dimensions[get_column_letter(i)].width = w

        title = ws.cell(1, 1)
        set_text(title, self.plan.title)
        title.font = Font(bold=True, size=14)
        sub = ws.cell(2, 1)
        scen = ev.scenario
        if is_nominal:
            set_text(sub, f"Scenario: nominal (the plan as written, {self.plan.file}). Inputs are edited on this sheet.")
        else:
            set_text(sub, f"Scenario: {scen.name} ({scen.title}); changes: {'; '.join(scen.changes)}. "
                          f"Green inputs follow the nominal sheet.")
        sub.font = Font(italic=True)
        self._legend_row(ws, LEGEND_ROW)
        for i, key in enumerate(COLUMNS, start=1):
            c = ws.cell(HEADER_ROW, i)
            set_text(c, cols[key]["title"])
            c.font = Font(bold=True)
            c.border = self.thin_bottom
        ws.freeze_panes = ws.cell(HEADER_ROW + 1, 1)

        bool_cells: list[str] = []
        for item, row in sheet.rows:
            kind = item[0]
            if kind in ("section", "part"):
                fill, font = (self.section_fill, self.section_font) if kind == "section" else \
                    (self.part_fill, self.part_font)
                for i in range(1, len(COLUMNS) + 1):
                    ws.cell(row, i).fill = fill
                c = ws.cell(row, 1)
                set_text(c, item[1])
                c.font = font
            elif kind == "quantity":
                self._write_scalar(sheet, item[1], row, nominal, is_nominal, bool_cells)
            elif kind == "table":
                self._write_table(sheet, item[1], nominal, is_nominal, bool_cells)
        if bool_cells:
            ranges = " ".join(bool_cells)
            ws.conditional_formatting.add(ranges, CellIsRule(operator="equal", formula=["TRUE"], fill=self.pass_fill))
            ws.conditional_formatting.add(ranges, CellIsRule(operator="equal", formula=["FALSE"], fill=self.fail_fill))
        # defined names, scoped to this sheet: the same formula text works on every sheet
        qs = quote_sheet(ws.title)
        for n, r in sheet.scalar_row.items():
            self._define(ws, self.names[n], f"{qs}!$B${r}")
        for t in sheet.tables.values():
            for c in t.columns:
                self._define(ws, self.names[c], f"{qs}!{sheet.column_range(c)}")
        self._page_setup(ws)

    @staticmethod
    def _page_setup(ws) -> None:
        ws.page_setup.orientation = "landscape"
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
        ws.sheet_properties.pageSetUpPr.fitToPage = True

    @staticmethod
    def _define(ws, name: str, target: str) -> None:
        ws.defined_names[name] = DefinedName(name, attr_text=target)

    def _write_scalar(self, sheet: _Sheet, name: str, row: int, nominal: _Sheet, is_nominal: bool,
                      bool_cells) -> None:
        ws, ev = sheet.ws, sheet.ev
        q = self.model.quantities[name]
        node = ev.graph.nodes[name]
        scen = ev.scenario.name
        set_text(ws.cell(row, 1), name)
        set_text(ws.cell(row, 3), formatting.unit_label(q.unit) if q.kind != "money" else q.unit)
        value_cell = ws.cell(row, 2)
        tag_cell = ws.cell(row, 4)
        note = ws.cell(row, 5)
        expected = ev.display(name)
        shown = [e.display(name) for e in self.evs if name in e.values]
        value_cell.number_format = number_format(q.unit, q.kind, shown)
        if node.formula is not None:
            value_cell.value = self.compile(name, node.formula, _Refs(self, sheet))
            self.apply_style(value_cell, "derived")
            pending = ev.pending_inputs(name)
            if pending:          # pending measurements are flagged wherever they flow
                set_text(tag_cell, "derived (pending)")
                tag_cell.font = Font(color=self.tag_style["pending"][1].color, italic=True)
                tag_cell.comment = self._make_comment("Rests on pending measurement(s): " + ", ".join(pending))
            else:
                set_text(tag_cell, "derived")
            set_text(note, node.formula.text)
            note.font = self.formula_font
            self.cells.append(CellInfo(ws.title, value_cell.coordinate, name, scen, None, "derived", expected))
        else:
            given = ev.inputs[name]
            nominal_input = nominal.ev.inputs.get(name)
            inherited = (not is_nominal and nominal_input == given and name in nominal.scalar_row
                         and nominal.ev.graph.nodes[name].formula is None)
            key = self.style_key(given.tag, given.pending)
            if inherited:
                # a cell reference, not 'nominal'!name: LibreOffice misreads a sheet-qualified
                # name that starts like a cell address ('nominal'!bf16_peak_flops)
                value_cell.value = f"={quote_sheet(nominal.ws.title)}!{nominal.scalar_cell(name, absolute=True)}"
                self.apply_style(value_cell, key, linked=True)
                role = "link"
            else:
                value_cell.value = cell_number(expected)
                self.apply_style(value_cell, key, override=not is_nominal or given.pinned)
                role = "pinned" if given.pinned else ("input" if is_nominal else "override")
                value_cell.comment = self._comment(given)
            validate_input(ws, value_cell, q)
            set_text(tag_cell, ("pending measurement" if given.pending else given.tag)
                     + (" (pinned)" if given.pinned else ""))
            self.apply_style(tag_cell, key)
            if given.pinned and q.formulas:
                set_text(note, f"pinned; replaces {q.formula_for(self.plan.switches).text}")
                note.font = self.formula_font
            else:
                set_text(note, q.description)
                note.font = Font(color="595959", size=9)
            self.cells.append(CellInfo(ws.title, value_cell.coordinate, name, scen, None, role, expected))
        if q.kind == "bool":
            bool_cells.append(value_cell.coordinate)

    def _comment(self, given) -> Comment:
        lines = []
        if given.source:
            lines.append(f"Source: {given.source}")
        if given.date:
            lines.append(f"Date: {given.date}")
        if given.pending:
            lines.append("Status: PENDING measurement (placeholder value)")
        if given.pinned:
            lines.append("Pinned: this value replaces the quantity's formula in this scenario")
        lines.append(f"Tag: {given.tag}; from: {given.origin}")
        if given.note:
            lines.append(f"Note: {given.note}")
        return self._make_comment("\n".join(lines))

    @staticmethod
    def _make_comment(text: str) -> Comment:
        text = clean_text(text)
        comment = Comment(text, "capplan")
        lines = sum(max(1, math.ceil(len(line) / 48)) for line in text.split("\n"))
        comment.width = 320
        comment.height = max(60, 15 * lines + 10)
        return comment

    def _write_table(self, sheet: _Sheet, tname: str, nominal: _Sheet, is_nominal: bool, bool_cells) -> None:
        ws, ev = sheet.ws, sheet.ev
        pos = sheet.tables[tname]
        table = self.model.tables[tname]
        data = ev.scenario.tables[tname]
        nodes = ev.graph.nodes
        nominal_data = nominal.ev.scenario.tables.get(tname)
        nominal_pos = nominal.tables.get(tname)
        same_shape = (not is_nominal and nominal_data is not None and nominal_pos is not None
                      and len(nominal_data.rows) == len(data.rows) and nominal_pos.columns == pos.columns)
        # header and unit rows
        for c, col in enumerate(pos.columns, start=1):
            q = self.model.quantities[col]
            h = ws.cell(pos.header_row, c)
            set_text(h, q.column)
            h.font = Font(bold=True)
            h.alignment = Alignment(wrap_text=True, vertical="bottom")
            h.border = self.thin_bottom
            u = ws.cell(pos.header_row + 1, c)
            set_text(u, formatting.unit_label(q.unit) if q.kind not in ("money", "bool", "text") else
                     (q.unit if q.kind == "money" else ""))
            u.font = Font(italic=True, color="595959", size=9)
            if nodes[col].formula is not None:
                h.fill = self.part_fill
        meta = [f"Table {tname}: {table.title}. {table.description}"]
        if data.source:
            meta.append(f"Source: {data.source}")
        if data.as_of:
            meta.append(f"As of: {data.as_of}")
        if data.note:
            meta.append(f"Note: {data.note}")
        meta.append(f"Tag: {table.tag}")
        ws.cell(pos.header_row, 1).comment = self._make_comment("\n".join(meta))
        for col in pos.columns:
            q = self.model.quantities[col]
            c_index = pos.col_index[col]
            node = nodes[col]
            values = ev.display(col)
            all_values = [v for e in self.evs if col in e.values for v in e.display(col)]
            fmt = number_format(q.unit, q.kind, all_values)
            for i in range(pos.n_rows):
                cell = ws.cell(pos.first_row + i, c_index)
                cell.number_format = fmt
                expected = values[i]
                if node.formula is not None:
                    cell.value = self.compile(col, node.formula, _Refs(self, sheet, tname, i))
                    self.apply_style(cell, "derived")
                    role = "derived"
                else:
                    raw = data.rows[i].get(q.column)
                    inherited = same_shape and _same(raw, nominal_data.rows[i].get(q.column))
                    if inherited:
                        cell.value = f"={quote_sheet(nominal.ws.title)}!{nominal.table_cell(col, i, absolute=True)}"
                        self.apply_style(cell, table.tag, linked=True)
                        role = "link"
                    else:
                        if q.kind == "text":
                            set_text(cell, raw)
                        else:
                            cell.value = cell_number(expected)
                        self.apply_style(cell, table.tag, override=not is_nominal)
                        role = "input" if is_nominal else "override"
                    validate_input(ws, cell, q)
                    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
                        continue      # an optional column the row leaves out: an empty cell
                self.cells.append(CellInfo(ws.title, cell.coordinate, col, ev.scenario.name, i, role, expected))
            if q.kind == "bool":
                bool_cells.append(f"{get_column_letter(c_index)}{pos.first_row}:"
                                  f"{get_column_letter(c_index)}{pos.first_row + pos.n_rows - 1}")
        # row sources as comments on the key cells
        for i, row_meta in enumerate(data.meta):
            lines = [f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in row_meta.items() if v]
            if lines and i < pos.n_rows:
                ws.cell(pos.first_row + i, 1).comment = self._make_comment("\n".join(lines))
        # formulas of the computed columns, readable under the table
        r = pos.first_row + pos.n_rows
        for col in pos.columns:
            if nodes[col].formula is not None:
                c = ws.cell(r, 1)
                set_text(c, f"{self.model.quantities[col].column} = {nodes[col].formula.text}")
                c.font = self.formula_font
                r += 1
        if tname == "load_sweep":
            self._sweep_extras(sheet, pos, r)

    def _sweep_extras(self, sheet: _Sheet, pos: _TablePos, r: int) -> None:
        """Conditional formatting of the sweep, SLO lines for the chart, the chart."""
        ws, ev = sheet.ws, sheet.ev
        last_col = get_column_letter(len(pos.columns))
        rows = f"A{pos.first_row}:{last_col}{pos.first_row + pos.n_rows - 1}"
        if "load_sweep.meets_slo" in pos.col_index:
            ok = get_column_letter(pos.col_index["load_sweep.meets_slo"])
            ws.conditional_formatting.add(rows, FormulaRule(formula=[f"${ok}{pos.first_row}=FALSE"],
                                                            fill=_fill("FCE4E4")))
        if "instance_max_rate" in ev.graph.nodes and "load_sweep.arrival_rate" in pos.col_index:
            x = get_column_letter(pos.col_index["load_sweep.arrival_rate"])
            ws.conditional_formatting.add(rows, FormulaRule(
                formula=[f"${x}{pos.first_row}={self.names['instance_max_rate']}"],
                font=Font(bold=True), border=Border(top=Side(style="medium"), bottom=Side(style="medium"))))
        needed = ("load_sweep.arrival_rate", "load_sweep.ttft_p95", "load_sweep.tpot_p95")
        if not all(n in pos.col_index for n in needed) or not all(
                n in ev.graph.nodes for n in ("ttft_p95_slo", "tpot_p95_slo")):
            return
        # SLO lines: two points each, from the lowest to the highest swept rate
        grey = Font(italic=True, color="595959", size=9)
        label = ws.cell(r, 1)
        set_text(label, "Chart: SLO lines")
        label.font = grey
        for j, h in enumerate(("arrival_rate", "ttft_p95_slo", "tpot_p95_slo"), start=2):
            c = ws.cell(r, j)
            set_text(c, h)
            c.font = grey
        xs = ev.display("load_sweep.arrival_rate")
        x_name = self.names["load_sweep.arrival_rate"]
        for k, (formula, expected) in enumerate(((f"=MIN({x_name})", min(xs)), (f"=MAX({x_name})", max(xs)))):
            rr = r + 1 + k
            ws.cell(rr, 2).value = formula
            self.cells.append(CellInfo(ws.title, f"B{rr}", "load_sweep.arrival_rate", ev.scenario.name, None,
                                       "chart", expected))
            for j, q in ((3, "ttft_p95_slo"), (4, "tpot_p95_slo")):
                ws.cell(rr, j).value = f"={self.names[q]}"
                ws.cell(rr, j).number_format = number_format(self.model.quantities[q].unit, "number", [])
                self.cells.append(CellInfo(ws.title, f"{get_column_letter(j)}{rr}", q, ev.scenario.name, None,
                                           "chart", ev.display(q)))
            for j in (2, 3, 4):
                ws.cell(rr, j).font = Font(color="595959", size=9)
        # the chart: p95 TTFT (left axis) and p95 TPOT (right axis) against the arrival rate
        first, last = pos.first_row, pos.first_row + pos.n_rows - 1
        xref = Reference(ws, min_col=pos.col_index["load_sweep.arrival_rate"], min_row=first, max_row=last)
        slo_x = Reference(ws, min_col=2, min_row=r + 1, max_row=r + 2)

        def series(col, row_from, row_to, title, xvalues, color, dash=None, marker=True):
            s = Series(Reference(ws, min_col=col, min_row=row_from, max_row=row_to), xvalues, title=title)
            s.graphicalProperties.line.solidFill = color
            s.graphicalProperties.line.width = 22000
            if dash:
                s.graphicalProperties.line.dashStyle = dash
            s.marker.symbol = "circle" if marker else "none"
            if marker:
                s.marker.size = 6
                s.marker.graphicalProperties.solidFill = color
                s.marker.graphicalProperties.line.solidFill = color
            s.smooth = False
            return s

        ttft = ScatterChart()
        ttft.title = f"Load sweep: p95 latency vs arrival rate ({ev.scenario.name})"
        ttft.style = 2
        ttft.x_axis.title = "arrival rate (req/s)"
        ttft.y_axis.title = "p95 TTFT (ms)"
        ttft.series.append(series(pos.col_index["load_sweep.ttft_p95"], first, last, "p95 TTFT", xref, "1F77B4"))
        ttft.series.append(series(3, r + 1, r + 2, "TTFT SLO", slo_x, "1F77B4", dash="dash", marker=False))
        tpot = ScatterChart()
        tpot.x_axis = NumericAxis(axId=300, crossAx=200, delete=True)   # the secondary group's own, hidden
        tpot.y_axis.axId = 200
        tpot.y_axis.crossAx = 300
        tpot.y_axis.title = "p95 TPOT (ms)"
        tpot.y_axis.crosses = "max"
        tpot.series.append(series(pos.col_index["load_sweep.tpot_p95"], first, last, "p95 TPOT", xref, "D62728"))
        tpot.series.append(series(4, r + 1, r + 2, "TPOT SLO", slo_x, "D62728", dash="dash", marker=False))
        for axis in (ttft.x_axis, ttft.y_axis, tpot.y_axis):
            axis.delete = False
        ttft.y_axis.majorGridlines = None
        ttft.x_axis.majorGridlines = None
        ttft += tpot
        ttft.legend.position = "b"
        ttft.width = self.cfg["chart"]["width_cm"]
        ttft.height = self.cfg["chart"]["height_cm"]
        ws.add_chart(ttft, f"A{r + 4}")

    # -- legend ----------------------------------------------------------------------
    def _legend_row(self, ws, row: int) -> None:
        """One-line legend on a scenario sheet: a swatch per style (the summary explains each)."""
        c = ws.cell(row, 1)
        set_text(c, "Legend (cell styles):")
        c.font = Font(italic=True, size=9)
        for i, key in enumerate(TAG_KEYS + ("linked", "override"), start=2):
            c = ws.cell(row, i)
            set_text(c, key)
            if key == "linked":
                self.apply_style(c, "assumption", linked=True)
            elif key == "override":
                self.apply_style(c, "assumption", override=True)
            else:
                self.apply_style(c, key)
            c.alignment = Alignment(horizontal="center")

    def _legend(self, ws, row: int, col: int) -> int:
        head = ws.cell(row, col)
        set_text(head, "Legend")
        head.font = Font(bold=True)
        r = row + 1
        for key in TAG_KEYS:
            c = ws.cell(r, col)
            set_text(c, key)
            self.apply_style(c, key)
            d = ws.cell(r, col + 1)
            set_text(d, self.cfg["tags"][key]["label"])
            d.font = Font(size=9)
            r += 1
        for key, kwargs in (("linked", {"linked": True}), ("override", {"override": True})):
            c = ws.cell(r, col)
            set_text(c, key)
            self.apply_style(c, "assumption", **kwargs)
            set_text(ws.cell(r, col + 1), self.cfg[key]["label"])
            ws.cell(r, col + 1).font = Font(size=9)
            r += 1
        return r

    # -- summary ------------------------------------------------------------------------
    def _write_summary(self, ws) -> None:
        plan = self.plan
        ncols = 2 + len(self.sheets)
        ws.column_dimensions["A"].width = 34
        ws.column_dimensions["B"].width = 14
        for i in range(len(self.sheets)):
            ws.column_dimensions[get_column_letter(3 + i)].width = 17
        c = ws.cell(1, 1)
        set_text(c, plan.title)
        c.font = Font(bold=True, size=14)
        sizing = plan.switches.get("sizing", "")
        set_text(ws.cell(2, 1), f"Plan {plan.file}; GPU {plan.gpu.id}; model {plan.model_entry.id}; sizing: {sizing}.")
        set_text(ws.cell(3, 1), "Every number below is a live formula over the scenario sheets. Edit inputs on the "
                                "'nominal' sheet (coloured cells); scenarios follow unless they override.")
        ws.cell(2, 1).font = ws.cell(3, 1).font = Font(italic=True, color="595959")
        row = 5
        head = ws.cell(row, 1)
        set_text(head, "Decisions by scenario")
        head.font = self.section_font
        for i in range(1, ncols + 1):
            ws.cell(row, i).fill = self.section_fill
        row += 1
        set_text(ws.cell(row, 1), "Quantity")
        set_text(ws.cell(row, 2), "Unit")
        for i, s in enumerate(self.sheets):
            set_text(ws.cell(row, 3 + i), s.ev.scenario.name)
        for i in range(1, ncols + 1):
            ws.cell(row, i).font = Font(bold=True)
            ws.cell(row, i).border = self.thin_bottom
            ws.cell(row, i).alignment = Alignment(horizontal="center" if i > 2 else "left")
        row += 1
        set_text(ws.cell(row, 1), "scenario")
        ws.cell(row, 1).alignment = Alignment(vertical="top")
        for i, s in enumerate(self.sheets):
            c = ws.cell(row, 3 + i)
            set_text(c, s.ev.scenario.title)
            c.alignment = Alignment(wrap_text=True, vertical="top", horizontal="center")
            c.font = Font(size=9)
        ws.row_dimensions[row].height = 40
        row += 1
        set_text(ws.cell(row, 1), "changes")
        ws.cell(row, 1).alignment = Alignment(vertical="top")
        for i, s in enumerate(self.sheets):
            c = ws.cell(row, 3 + i)
            set_text(c, "; ".join(s.ev.scenario.changes) or "(as written)")
            c.alignment = Alignment(wrap_text=True, vertical="top")
            c.font = Font(size=8, color="595959")
        ws.row_dimensions[row].height = 52
        row += 1
        bool_cells: list[str] = []
        tables: dict[str, list[str]] = {}
        for item in declared():             # the key results, as every summary shows them
            name = item["quantity"]
            if item["table"] is not None:
                tables.setdefault(item["table"], []).append(self.model.quantities[name].column)
            elif name in self.nominal.graph.nodes:
                row = self._summary_row(ws, row, name, None, name, bool_cells)
        for t, cols in tables.items():
            if t not in self.nominal.scenario.tables or t not in self.model.tables:
                continue
            table = self.model.tables[t]
            cols = [c for c in cols if f"{t}.{c}" in self.nominal.graph.nodes]
            keys = self.nominal.display(f"{t}.{table.key}")
            for i, k in enumerate(keys):
                if any(len(s.ev.scenario.tables[t].rows) <= i for s in self.sheets):
                    continue
                c = ws.cell(row, 1)
                set_text(c, f"{table.title}: {k}")
                c.font = self.part_font
                for j in range(1, ncols + 1):
                    ws.cell(row, j).fill = self.part_fill
                row += 1
                for col in cols:
                    row = self._summary_row(ws, row, f"{t}.{col}", i, f"  {col}", bool_cells)
        if bool_cells:
            ranges = " ".join(bool_cells)
            ws.conditional_formatting.add(ranges, CellIsRule(operator="equal", formula=["TRUE"], fill=self.pass_fill))
            ws.conditional_formatting.add(ranges, CellIsRule(operator="equal", formula=["FALSE"], fill=self.fail_fill))
        row += 1
        row = self._legend(ws, row, 1) + 1
        pending = sorted({n for e in self.evs for n, i in e.inputs.items() if i.pending})
        if pending:
            c = ws.cell(row, 1)
            set_text(c, "Pending measurements (results resting on them are provisional)")
            c.font = Font(bold=True)
            row += 1
            for n in pending:
                given = self.nominal.inputs.get(n) or next(e.inputs[n] for e in self.evs if n in e.inputs)
                set_text(ws.cell(row, 1), n)
                self.apply_style(ws.cell(row, 1), "pending")
                shown = present.shown(self.nominal, n).text if n in self.nominal.values else ""
                set_text(ws.cell(row, 2), f"{shown} - {given.source or 'no source'}")
                ws.cell(row, 2).font = Font(size=9)
                row += 1
        dated = [(t, d.as_of) for t, d in self.nominal.scenario.tables.items() if d.as_of]
        if dated:
            row += 1
            c = ws.cell(row, 1)
            set_text(c, "Prices and tables as of")
            c.font = Font(bold=True)
            row += 1
            for t, d in dated:
                set_text(ws.cell(row, 1), t)
                set_text(ws.cell(row, 2), d)
                row += 1
        ws.freeze_panes = "C7"
        self._page_setup(ws)

    def _summary_row(self, ws, row: int, name: str, index: int | None, label: str, bool_cells) -> int:
        q = self.model.quantities[name]
        set_text(ws.cell(row, 1), label)
        set_text(ws.cell(row, 2), formatting.unit_label(q.unit) if q.kind != "money" else q.unit)
        ws.cell(row, 2).font = Font(color="595959", size=9)
        values = []
        for s in self.sheets:
            if name in s.ev.values:
                v = s.ev.display(name)
                values.append(v if index is None else v[index])
        fmt = number_format(q.unit, q.kind, values)
        for i, s in enumerate(self.sheets):
            if name not in s.ev.values:
                continue
            c = ws.cell(row, 3 + i)
            qs = quote_sheet(s.ws.title)
            if index is None:
                c.value = f"={qs}!{s.scalar_cell(name, absolute=True)}"
                expected = s.ev.display(name)
            else:
                c.value = f"={qs}!{s.table_cell(name, index, absolute=True)}"
                expected = s.ev.display(name)[index]
            c.number_format = fmt
            self.apply_style(c, "derived")
            self.cells.append(CellInfo(ws.title, c.coordinate, name, s.ev.scenario.name, index, "summary", expected))
            if q.kind == "bool":
                bool_cells.append(c.coordinate)
        return row + 1
