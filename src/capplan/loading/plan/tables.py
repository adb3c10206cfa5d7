"""``tables:``: each table of the model the plan's switches use, its rows
(written, or read from benchmark files by ``import:``, see
:mod:`capplan.loading.plan.imports`), the units its columns are written in
(``units:``; a bare number needs one, :mod:`capplan.loading.unitrule`, except
in imported rows, which the importer gives in display units) and its keys,
unique and, when numeric, increasing."""

from __future__ import annotations

import math

from capplan.errors import CapplanError
from capplan.language import units
from capplan.loading import sweeps as sweep_import
from capplan.loading import tablestatus
from capplan.loading.sweeps import estimate
from capplan.loading.plan import imports, values
from capplan.loading.plan.context import Context, show
from capplan.loading.plan.data import TableData
from capplan.names import nearest

TABLE_KEYS = ("rows", "import", "select", "transferred", "source", "as_of", "units", "note", "status")
ROW_META = ("source", "as_of", "note")
FROM_SECTIONS = {"profile": "traffic"}     # tables a section of their own writes, not tables:


def read_all(ctx: Context) -> dict[str, TableData]:
    raw = ctx.data.get("tables") or {}
    if not isinstance(raw, dict):
        raise ctx.err("expected a mapping of table names", "tables")
    wanted = [t for t in ctx.model.tables if ctx.model.exists(t, ctx.switches) and t not in FROM_SECTIONS]
    for name in raw:
        if name in FROM_SECTIONS:
            raise ctx.err(f"table '{name}' is written under {FROM_SECTIONS[name]}:, not tables:", "tables", name)
        if name not in ctx.model.tables:
            raise ctx.err(f"unknown table '{name}'{nearest(str(name), ctx.model.tables)}", "tables", name)
        if name not in wanted:
            raise ctx.err(f"table '{name}' is not part of a plan with sizing: {ctx.switches['sizing']}", "tables", name)
    out = {}
    for name in wanted:
        if name not in raw:
            if ctx.needs is not None and not ctx.needs & set(ctx.model.tables[name].columns):
                continue             # a table the caller does not read (validate: the plan's traffic)
            t = ctx.model.tables[name]
            raise ctx.err(f"missing table '{name}' ({t.description})", "tables")
        out[name] = read(ctx, name, raw[name], ("tables", name))
    sweep_import.match_plan(out, raw, ctx.model_entry, ctx.inputs, ctx.err)
    return out


def read(ctx: Context, name: str, spec, path: tuple) -> TableData:
    table = ctx.model.tables[name]
    if isinstance(spec, list):
        spec = {"rows": spec}
    if not isinstance(spec, dict):
        raise ctx.err("expected 'rows:' (a list of rows)", *path)
    for key in spec:
        if key not in TABLE_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), TABLE_KEYS)}", *path, key)
    inputs = {ctx.model.quantities[c].column: ctx.model.quantities[c] for c in table.columns
              if ctx.model.quantities[c].is_input}
    given_units = _column_units(ctx, spec, inputs, path)
    imported, runs = (), ()
    if "import" in spec:
        if name not in imports.IMPORTABLE:
            raise ctx.err(f"table '{name}' cannot be imported (only {', '.join(imports.IMPORTABLE)})", *path, "import")
        if "rows" in spec:
            raise ctx.err("give either 'rows:' or 'import:', not both", *path)
        imported, runs, rows_raw = imports.read(ctx, spec["import"], path + ("import",), spec.get("select"))
    else:
        if "select" in spec:
            raise ctx.err("'select:' picks one series of imported files; this table has no 'import:'",
                          *path, "select")
        rows_raw = spec.get("rows")
    if not isinstance(rows_raw, list) or not rows_raw:
        raise ctx.err(f"table '{name}' has no rows", *path)
    rows, meta, lines, drawn = [], [], [], {}
    for i, row in enumerate(rows_raw):
        rpath = path + ("rows", i)
        if not isinstance(row, dict):
            raise ctx.err("a row must be a mapping of column: value", *rpath)
        row_values, extra = {}, {}
        for col, raw in row.items():
            if col in ROW_META:
                extra[col] = ctx.text(raw, *rpath, col)
                continue
            q = inputs.get(col)
            if q is not None and q.name not in ctx.active:      # a price model of traffic: plans only
                raise ctx.err(f"column '{col}' is not part of a plan with {ctx.switch_text(q)}", *rpath, col)
            if q is None:
                computed = f"{name}.{col}" in ctx.model.quantities
                why = " is computed, not given" if computed else f" is unknown{nearest(str(col), inputs)}"
                raise ctx.err(f"column '{col}'{why}", *rpath, col)
            if q.kind == "text":
                row_values[col] = str(ctx.text(raw, *rpath, col))
                continue
            row_values[col], dist = values.cell(ctx, raw, q, str(given_units.get(col, q.unit)), rpath + (col,),
                                                  declared="import" in spec or col in given_units)
            if dist is not None:
                drawn[(i, col)] = dist
        for col, q in inputs.items():
            if col not in row_values:
                if not q.optional:
                    raise ctx.err(f"row is missing column '{col}' ({q.description})", *rpath)
                row_values[col] = math.nan if q.default is None else units.parse_value(q.default, q.unit)
        rows.append(row_values)
        meta.append(extra)
        lines.append(ctx.doc.line(rpath))
    data = TableData(name, rows, meta, source=ctx.text(spec.get("source"), *path, "source"),
                     as_of=ctx.text(spec.get("as_of"), *path, "as_of"),
                     note=ctx.text(spec.get("note"), *path, "note"), lines=lines,
                     imported=imported, runs=runs, uncertain=drawn,
                     status=tablestatus.read(spec.get("status"), rows, lambda m: ctx.err(m, *path, "status"),
                                             estimated=bool(imported) and all(f.format == estimate.FORMAT
                                                                              for f in imported)))
    _check_keys(ctx, table, data, path)
    return data


def _column_units(ctx: Context, spec: dict, inputs: dict, path: tuple) -> dict:
    """``units: {column: unit}``: the unit a column's cells are written in, of the column's dimensions."""
    given_units = spec.get("units") or {}
    if not isinstance(given_units, dict):
        raise ctx.err("expected a mapping of column: unit (units: {e2e_p99: s})", *path, "units")
    for col, unit_text in given_units.items():
        if col not in inputs:
            raise ctx.err(f"unknown column '{col}'{nearest(str(col), inputs)}", *path, "units", col)
        try:
            if units.dimensions(str(unit_text)) != units.dimensions(inputs[col].unit):
                raise CapplanError(f"unit '{unit_text}' has dimensions {units.describe(units.dimensions(str(unit_text)))}, "
                                   f"column '{col}' needs {units.describe(units.dimensions(inputs[col].unit))}")
        except CapplanError as err:
            raise ctx.err(err.message, *path, "units", col) from None
    return given_units


def _check_keys(ctx: Context, table, data: TableData, path) -> None:
    key = table.key
    seen = {}
    for i, row in enumerate(data.rows):
        value = row.get(key)
        if value in seen:
            raise ctx.err(f"rows {seen[value] + 1} and {i + 1} have the same {key} '{show(value)}'; "
                          f"each row needs its own {key}", *path, "rows", i)
        seen[value] = i
    if ctx.model.quantities[f"{table.name}.{key}"].kind != "text":
        keys = [row[key] for row in data.rows]
        for i in range(1, len(keys)):
            if keys[i] <= keys[i - 1]:
                raise ctx.err(f"rows must be in increasing {key}: row {i + 1} ({show(keys[i])}) "
                              f"follows {show(keys[i - 1])}", *path, "rows", i)
