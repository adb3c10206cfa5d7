"""Load a plan file into inputs, tables, scenarios and expectations.

Everything a plan says is validated here against the model, so that a bad
plan fails with one message naming the file, the key and its line. Values are
converted to base units on the way in (``units.parse_value``).

Where a value comes from, in order of precedence: the scenario's ``set:``,
the plan's ``inputs:``, the catalog entry (``gpu:``, ``model:``), the model's
default. An ``inputs:`` or ``set:`` entry that names a *derived* quantity pins
it: its formula is replaced by the given value, shown as an override.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from capplan import names
from capplan.language import domains, units
from capplan.language.model import TAGS, Model
from capplan.errors import CapplanError
from capplan.loading import catalog, hf_config, tablestatus, uncertain
from capplan.language import yamlfile
from capplan.loading import sweeps as sweep_import
from capplan.names import nearest

PLAN_KEYS = ("title", "owner", "description", "gpu", "model", "sizing", "memory_accounting", "inputs",
             "tables", "scenarios", "expect", "notes")
PLAN_SWITCHES = ("sizing", "memory_accounting")   # the model's switches a plan chooses by key
INPUT_KEYS = ("value", "source", "status", "tag", "date", "note", *uncertain.FIELDS)
CELL_KEYS = ("value", *uncertain.FIELDS)      # a table cell written as a mapping: an uncertain cell
TABLE_KEYS = ("rows", "import", "select", "source", "as_of", "units", "note", "status")
IMPORTABLE = ("load_sweep",)     # tables that can be read from benchmark result files
ROW_META = ("source", "as_of", "note")
SCENARIO_KEYS = ("title", "description", "set", "expect")
NOMINAL = "nominal"


@dataclass(frozen=True)
class Input:
    """A value that enters the graph, with where it came from."""

    name: str
    value: float                 # base units
    tag: str
    origin: str                  # 'plan', 'catalog', 'default' or a scenario name
    source: str | None = None
    status: str | None = None    # 'pending'
    date: str | None = None
    note: str | None = None
    pinned: bool = False         # replaces a derived quantity's formula
    line: int | None = None
    uncertain: uncertain.Distribution | None = None   # what capplan simulate draws (value stays the point)

    @property
    def pending(self) -> bool:
        return self.status == "pending"


@dataclass
class TableData:
    name: str
    rows: list[dict]             # column -> base-unit float or text
    meta: list[dict]             # per row: source, as_of, note
    source: str | None = None
    as_of: str | None = None
    note: str | None = None
    lines: list[int] = field(default_factory=list)
    imported: tuple[sweep_import.SweepFile, ...] = ()   # benchmark files the rows came from
    runs: tuple = ()             # the imported runs the rows combine (SweepPoint), for goodput per scenario
    uncertain: dict[tuple[int, str], uncertain.Distribution] = field(default_factory=dict)  # (row, column)
    status: tablestatus.TableStatus | None = None    # measured or illustrative, and the runs per row

    def key_index(self, key_column: str, key: str) -> int | None:
        for i, row in enumerate(self.rows):
            if str(row.get(key_column)) == key or _same_number(row.get(key_column), key):
                return i
        return None


@dataclass(frozen=True)
class Expectation:
    target: str                  # quantity name or 'table[row].column'
    raw: object
    expected: float | bool       # in `unit`
    unit: str
    tolerance: float
    line: int | None


@dataclass
class Scenario:
    name: str
    title: str
    description: str
    inputs: dict[str, Input]
    tables: dict[str, TableData]
    expect: list[Expectation]
    changes: list[str]           # what the scenario sets, as written


@dataclass
class Plan:
    path: Path
    file: str                    # as shown in messages
    name: str
    title: str
    owner: str
    description: str
    gpu: catalog.Entry
    model_entry: catalog.Entry
    switches: dict[str, str]
    scenarios: list[Scenario]    # nominal first
    doc: yamlfile.Document | None = None
    notes: str = ""
    slos: tuple[tuple[str, str], ...] = ()   # the SLOs the plan names, (metric, key); see Model.with_slos

    def line(self, key: str) -> int | None:
        """Line of a dotted key in the plan file ('tables.classes'), if written there."""
        if self.doc is None:
            return None
        path = tuple(key.split("."))
        return self.doc.lines.get(path) or self.doc.lines.get(("inputs",) + path)

    @property
    def nominal(self) -> Scenario:
        return self.scenarios[0]


def load(path: Path, model: Model, display: str | None = None) -> Plan:
    doc = yamlfile.read(path, display)
    return _PlanReader(doc, model, path).read()


def _same_number(value, key: str) -> bool:
    try:
        return isinstance(value, float) and math.isclose(value, float(key))
    except ValueError:
        return False


class _PlanReader:
    def __init__(self, doc: yamlfile.Document, model: Model, path: Path):
        self.doc = doc
        self.model = model
        self.path = path
        self.data = doc.data

    def err(self, message, *path) -> CapplanError:
        return self.doc.error(message, tuple(path))

    def read(self) -> Plan:
        if not isinstance(self.data, dict):
            raise self.err("a plan must be a YAML mapping (title:, gpu:, model:, inputs:, tables:, …)")
        for key in self.data:
            if key not in PLAN_KEYS:
                raise self.err(f"unknown key '{key}'{nearest(str(key), PLAN_KEYS)} (plan keys: {', '.join(PLAN_KEYS)})", key)
        for key in ("gpu", "model"):
            if key not in self.data:
                raise self.err(f"missing '{key}:' (a catalog id such as {catalog.ids(key)[0]})")
        gpu = self._entry("gpu")
        model_entry = self._entry("model")
        switches = self.model.default_switches()
        for key in PLAN_SWITCHES:
            chosen = self.data.get(key, switches[key])
            if not isinstance(chosen, str) or chosen not in self.model.switches[key]["cases"]:
                raise self.err(f"{key} must be one of {', '.join(self.model.switches[key]['cases'])}, got '{chosen}'", key)
            switches[key] = chosen
        switches["attention"] = model_entry.attention or switches["attention"]
        self.switches = switches
        self.slos = self._slos()
        self.model = self.model.with_slos(self.slos)
        self.active = set(self.model.active(switches))

        inputs = self._defaults()
        inputs.update(self._catalog(gpu))
        inputs.update(self._catalog(model_entry))
        inputs.update(self._inputs(self.data.get("inputs") or {}, ("inputs",), origin="plan"))
        self._require_from_plan(model_entry, inputs)
        self._require_inputs(inputs)
        self.inputs = inputs
        tables = self._tables()
        nominal = Scenario(NOMINAL, "Nominal", "The plan as written.", inputs, tables,
                           self._expect(self.data.get("expect") or {}, ("expect",)), [])
        scenarios = [nominal] + self._scenarios(nominal)
        return Plan(path=self.path, file=self.doc.file, name=self.path.stem,
                    title=self._text(self.data.get("title"), "title") or self.path.stem,
                    owner=self._text(self.data.get("owner"), "owner") or "",
                    description=(self._text(self.data.get("description"), "description") or "").strip(), gpu=gpu,
                    model_entry=model_entry, switches=switches, scenarios=scenarios, doc=self.doc,
                    notes=(self._text(self.data.get("notes"), "notes") or "").strip(), slos=self.slos)

    def _slos(self) -> tuple[tuple[str, str], ...]:
        """The SLOs the plan's inputs name (``ttft_p99_slo`` -> ('ttft', 'p99'));
        a metric it names none of keeps the model's default."""
        given = self.data.get("inputs")
        names = self.model.slo_inputs()
        return tuple(names[n] for n in given if n in names) if isinstance(given, dict) else ()

    def _text(self, value, *path) -> str | None:
        """A text field (title, source, note, a date, a row name): a scalar, never a mapping or list."""
        if value is None:
            return None
        if isinstance(value, (dict, list)):
            raise self.err(f"expected text, got {_kind(value)}", *path)
        return value.isoformat() if isinstance(value, dt.date) else str(value)

    # -- catalog and defaults ---------------------------------------------
    def _entry(self, kind) -> catalog.Entry:
        spec = self.data[kind]
        if kind == "model" and isinstance(spec, dict):
            return self._config_entry(spec)
        try:
            return catalog.lookup(kind, str(spec))
        except CapplanError as err:
            raise self.err(err.message, kind) from None

    def _config_entry(self, spec: dict) -> catalog.Entry:
        """``model: {config: path}`` (a Hugging Face config.json) or ``{id: ..., weights: ...}`` (a checkpoint's format)."""
        if set(spec) in ({"id"}, {"id", "weights"}):
            try:
                return catalog.with_weights(catalog.lookup("model", str(spec["id"])), spec.get("weights"))
            except CapplanError as err:
                raise self.err(err.message, "model") from None
        if set(spec) != {"config"}:
            raise self.err("expected a catalog id, {id: catalog id, weights: format} or {config: path/to/config.json}",
                           "model")
        try:
            return hf_config.load(self.path.parent, spec["config"])
        except CapplanError as err:
            raise self.err(err.message, "model", "config") from None

    def _require_from_plan(self, entry: catalog.Entry, inputs: dict[str, Input]) -> None:
        for name in entry.required:
            if name in self.active and (name not in inputs or inputs[name].origin == "default"):
                raise self.err(f"{entry.file} does not say {name} ({self.model.quantities[name].description}); "
                               f"give it under inputs:", "model", "config")

    def _defaults(self) -> dict[str, Input]:
        out = {}
        for name in self.active:
            q = self.model.quantities[name]
            if q.is_input and q.table is None and q.default is not None:
                out[name] = Input(name, units.parse_value(q.default, q.unit), q.tag, "default",
                                  source=q.source or "capplan standard model", status=q.status)
        return out

    def _catalog(self, entry: catalog.Entry) -> dict[str, Input]:
        out = {}
        for name, spec in entry.values.items():
            if name not in self.model.quantities:
                raise CapplanError(f"catalog value '{name}' is not a model quantity{nearest(name, self.model.quantities)}",
                                   file=entry.file, key=f"{entry.id}.values.{name}")
            if name not in self.active:
                continue
            q = self.model.quantities[name]
            try:
                value = units.parse_value(spec.get("value"), q.unit)
                domains.require(q, value, spec.get("value"))
            except CapplanError as err:
                raise err.located(file=entry.file, key=f"{entry.id}.values.{name}") from None
            cited = spec.get("source", "") if entry.status == "config" else f"catalog {entry.id}: {spec.get('source', '')}"
            out[name] = Input(name, value, q.tag or "fact", "catalog", source=cited.strip(),
                              note=spec.get("note"), pinned=not q.is_input)
        return out

    # -- inputs -------------------------------------------------------------
    def _inputs(self, raw: dict, path: tuple, origin: str) -> dict[str, Input]:
        if not isinstance(raw, dict):
            raise self.err("expected a mapping of quantity names to values", *path)
        out = {}
        for name, spec in raw.items():
            out[name] = self._input(str(name), spec, path + (name,), origin)
        return out

    def _input(self, name: str, spec, path: tuple, origin: str) -> Input:
        q = self.model.quantities.get(name)
        flag = names.engine_flag(name)
        if q is None or q.table is not None:
            hint = f": {flag}" if flag else nearest(name, self.model.scalars())
            raise self.err(f"unknown quantity '{name}'{hint}", *path)
        if name not in self.active:
            raise self.err(f"'{name}' is not part of a plan with {self._switch_text(q)}"
                           + (f"; {flag}" if flag else ""), *path)
        if q.kind == "bool":
            raise self.err(f"'{name}' is a pass/fail result and cannot be set", *path)
        fields = spec if isinstance(spec, dict) else {"value": spec}
        for key in fields:
            if key not in INPUT_KEYS:
                raise self.err(f"unknown field '{key}'{nearest(str(key), INPUT_KEYS)} (fields: {', '.join(INPUT_KEYS)})", *path, key)
        if "value" not in fields:
            raise self.err("missing 'value:'", *path)
        tag = fields.get("tag") or q.tag or "assumption"
        if tag not in TAGS:
            raise self.err(f"tag must be one of {', '.join(TAGS)}, got '{tag}'", *path, "tag")
        status = fields.get("status")
        if status not in (None, "pending", "measured"):
            raise self.err(f"status must be 'pending' or 'measured', got '{status}'", *path, "status")
        try:
            value = units.parse_value(fields["value"], q.unit)
            domains.require(q, value, fields["value"])
        except CapplanError as err:
            raise self.err(f"{err.message}", *path) from None
        date = fields.get("date")
        return Input(name, value, tag, origin, source=self._text(fields.get("source"), *path, "source"),
                     status=status if status == "pending" else None, date=self._text(date, *path, "date"),
                     note=self._text(fields.get("note"), *path, "note"), pinned=not q.is_input, line=self.doc.line(path),
                     uncertain=self._distribution(fields, q, value, path))

    def _distribution(self, fields: dict, q, value: float, path: tuple) -> uncertain.Distribution | None:
        try:
            return uncertain.parse(fields, q, value)
        except CapplanError as err:
            raise self.err(err.message, *path, err.key) from None

    def _cell(self, raw, q, unit: str, path: tuple) -> tuple[float, uncertain.Distribution | None]:
        """A numeric table cell: a value, or ``{value: ..., range: ...}`` (an uncertain cell)."""
        fields = raw if isinstance(raw, dict) else {"value": raw}
        for key in fields:
            if key not in CELL_KEYS:
                raise self.err(f"unknown field '{key}'{nearest(str(key), CELL_KEYS)} (a cell takes "
                               f"{', '.join(CELL_KEYS)})", *path, key)
        try:
            value = units.parse_value(fields.get("value"), unit)
            domains.require(q, value, fields.get("value"))
        except CapplanError as err:
            raise self.err(err.message, *path) from None
        return value, self._distribution(fields, q, value, path)

    def _switch_text(self, q) -> str:
        return ", ".join(f"{sw}: {self.switches[sw]}" for sw, _ in self.model.when(q.name)) or "these settings"

    def _require_inputs(self, inputs: dict[str, Input]) -> None:
        """Every input the plan still lacks, in one message: a new plan learns them all in one run."""
        missing = [self.model.quantities[name] for name in self.model.active(self.switches)
                   if name not in inputs and self.model.quantities[name].is_input
                   and self.model.quantities[name].table is None]
        if len(missing) == 1:
            q = missing[0]
            raise self.err(f"missing input '{q.name}' ({q.description} Unit: {q.unit or 'none'}); "
                           f"add it under inputs:", "inputs")
        if missing:
            listed = "; ".join(f"'{q.name}' ({q.description} Unit: {q.unit or 'none'})" for q in missing)
            raise self.err(f"missing {len(missing)} inputs, none of which has a default; add each under "
                           f"inputs: {listed}", "inputs")

    # -- tables ---------------------------------------------------------------
    def _tables(self) -> dict[str, TableData]:
        raw = self.data.get("tables") or {}
        if not isinstance(raw, dict):
            raise self.err("expected a mapping of table names", "tables")
        wanted = [t for t in self.model.tables if self.model.exists(t, self.switches)]
        for name in raw:
            if name not in self.model.tables:
                raise self.err(f"unknown table '{name}'{nearest(str(name), self.model.tables)}", "tables", name)
            if name not in wanted:
                raise self.err(f"table '{name}' is not part of a plan with sizing: {self.switches['sizing']}", "tables", name)
        out = {}
        for name in wanted:
            if name not in raw:
                t = self.model.tables[name]
                raise self.err(f"missing table '{name}' ({t.description})", "tables")
            out[name] = self._table(name, raw[name], ("tables", name))
        return out

    def _table(self, name: str, spec, path: tuple) -> TableData:
        table = self.model.tables[name]
        if isinstance(spec, list):
            spec = {"rows": spec}
        if not isinstance(spec, dict):
            raise self.err("expected 'rows:' (a list of rows)", *path)
        for key in spec:
            if key not in TABLE_KEYS:
                raise self.err(f"unknown key '{key}'{nearest(str(key), TABLE_KEYS)}", *path, key)
        given_units = spec.get("units") or {}
        if not isinstance(given_units, dict):
            raise self.err("expected a mapping of column: unit (units: {e2e_p99: s})", *path, "units")
        inputs = {self.model.quantities[c].column: self.model.quantities[c] for c in table.columns
                  if self.model.quantities[c].is_input}
        for col, unit_text in given_units.items():
            if col not in inputs:
                raise self.err(f"unknown column '{col}'{nearest(str(col), inputs)}", *path, "units", col)
            try:
                if units.dimensions(str(unit_text)) != units.dimensions(inputs[col].unit):
                    raise CapplanError(f"unit '{unit_text}' has dimensions {units.describe(units.dimensions(str(unit_text)))}, "
                                       f"column '{col}' needs {units.describe(units.dimensions(inputs[col].unit))}")
            except CapplanError as err:
                raise self.err(err.message, *path, "units", col) from None
        imported, runs = (), ()
        if "import" in spec:
            if name not in IMPORTABLE:
                raise self.err(f"table '{name}' cannot be imported (only {', '.join(IMPORTABLE)})", *path, "import")
            if "rows" in spec:
                raise self.err("give either 'rows:' or 'import:', not both", *path)
            imported, runs, rows_raw = self._import(spec["import"], path + ("import",), spec.get("select"))
        else:
            if "select" in spec:
                raise self.err("'select:' picks one series of imported files; this table has no 'import:'",
                               *path, "select")
            rows_raw = spec.get("rows")
        if not isinstance(rows_raw, list) or not rows_raw:
            raise self.err(f"table '{name}' has no rows", *path)
        rows, meta, lines, drawn = [], [], [], {}
        for i, row in enumerate(rows_raw):
            rpath = path + ("rows", i)
            if not isinstance(row, dict):
                raise self.err("a row must be a mapping of column: value", *rpath)
            values, extra = {}, {}
            for col, raw in row.items():
                if col in ROW_META:
                    extra[col] = self._text(raw, *rpath, col)
                    continue
                q = inputs.get(col)
                if q is None:
                    computed = f"{name}.{col}" in self.model.quantities
                    why = " is computed, not given" if computed else f" is unknown{nearest(str(col), inputs)}"
                    raise self.err(f"column '{col}'{why}", *rpath, col)
                if q.kind == "text":
                    values[col] = str(self._text(raw, *rpath, col))
                    continue
                values[col], dist = self._cell(raw, q, str(given_units.get(col, q.unit)), rpath + (col,))
                if dist is not None:
                    drawn[(i, col)] = dist
            for col, q in inputs.items():
                if col not in values:
                    if not q.optional:
                        raise self.err(f"row is missing column '{col}' ({q.description})", *rpath)
                    values[col] = math.nan if q.default is None else units.parse_value(q.default, q.unit)
            rows.append(values)
            meta.append(extra)
            lines.append(self.doc.line(rpath))
        data = TableData(name, rows, meta, source=self._text(spec.get("source"), *path, "source"),
                         as_of=self._text(spec.get("as_of"), *path, "as_of"),
                         note=self._text(spec.get("note"), *path, "note"), lines=lines,
                         imported=imported, runs=runs, uncertain=drawn,
                         status=tablestatus.read(spec.get("status"), rows, lambda m: self.err(m, *path, "status")))
        self._check_keys(table, data, path)
        return data

    def _import(self, patterns, path, select=None) -> tuple[tuple, tuple, list[dict]]:
        """Read benchmark files (globs relative to the plan, inside its repository) into sweep rows.

        Replicated runs at one rate become one row (median, with the MAD in
        the *_mad columns); closed-burst runs (rate infinity) stay with the
        file for the record but are no open-loop point. A refused pattern is
        named at its own line.
        """
        listed = isinstance(patterns, list)
        if not listed:
            patterns = [patterns]
        if not all(isinstance(p, str) for p in patterns):
            raise self.err("expected a file pattern or a list of them (relative to the plan)", *path)
        try:
            files = sweep_import.read_sweep(self.path.parent, patterns, self.model.slos)
        except sweep_import.PatternError as err:
            raise self.err(err.message, *path, *([err.index] if listed else [])) from None
        except sweep_import.MissingPercentile as err:
            slo = err.slo
            line = self.doc.line(("inputs", slo.limit))
            where = f"line {line}, " if line else ""
            raise self.err(f"{err.file}: {err.message}. The plan's SLO {slo.limit} ({where}"
                           f"inputs: {slo.limit}) asks for {slo.text}; name another percentile "
                           f"of {slo.label} there (inputs: {slo.metric}_<p50|p90|p95|p99|p999>_slo)",
                           *path) from None
        except CapplanError as err:
            where = f"{err.file}: " if err.file else ""
            raise self.err(f"{where}{err.message}", *path) from None
        points = self._series([p for f in files for p in f.points], select, path[:-1])
        rows = [r.table_row(self.model.slos)
                for r in sweep_import.combine_replicates(points, self._goodput_limits(self.inputs))]
        if not rows:
            raise self.err("the imported files hold no open-loop run (only closed bursts)", *path)
        return tuple(files), tuple(points), rows

    def _goodput_limits(self, inputs: dict) -> dict[str, float]:
        """Per metric, the tightest of the plan's SLOs (display unit): what a request must meet to count."""
        limits: dict[str, float] = {}
        for slo in self.model.slos:
            value = units.to_display(inputs[slo.limit].value, slo.unit)
            limits[slo.metric] = min(limits.get(slo.metric, value), value)
        return limits

    def _recount_goodput(self, nominal: Scenario, inputs: dict, tables: dict, set_tables: set[str]) -> None:
        """An imported sweep's goodput at the scenario's own SLO limits: a scenario that tightens
        the TTFT SLO counts the requests that meet the tighter one (where the files keep each
        request). A table whose goodput cells the scenario sets itself keeps them."""
        limits = self._goodput_limits(inputs)
        if limits == self._goodput_limits(nominal.inputs):
            return
        for name, data in tables.items():
            runs = nominal.tables[name].runs
            if not runs or name in set_tables:
                continue
            for row, combined in zip(data.rows, sweep_import.combine_replicates(runs, limits)):
                if "goodput_share" in row:
                    row["goodput_share"] = combined.table_row(self.model.slos).get("goodput_share", 0.0)

    def _series(self, points: list, select, path: tuple) -> list:
        """The runs of one configuration (model, TP, concurrency cap, server
        settings): runs of different ones are separate series, never replicates.
        Several in the files: ``select: {max_concurrency: 16}`` picks one."""
        if select is not None:
            if not isinstance(select, dict) or not select:
                raise self.err("expected a mapping of configuration key: value (select: {max_concurrency: 16})",
                               *path, "select")
            wanted = {str(k): json.dumps(v) for k, v in select.items()}
            points = [p for p in points if wanted.items() <= dict(p.config).items()]
            if not points:
                raise self.err(f"no imported run has {', '.join(f'{k}={v}' for k, v in wanted.items())}",
                               *path, "select")
        series = sorted({p.series for p in points})
        if len(series) > 1:
            listed = "; ".join(f"{{{s}}}" for s in series)
            raise self.err(f"the files hold {len(series)} series of different configurations, which are never "
                           f"combined as replicates: {listed}; pick one with select: (e.g. select: "
                           f"{{{_differing(points)}}}) under this table", *path)
        return points

    def _check_keys(self, table, data: TableData, path) -> None:
        key = table.key
        seen = {}
        for i, row in enumerate(data.rows):
            value = row.get(key)
            if value in seen:
                raise self.err(f"rows {seen[value] + 1} and {i + 1} have the same {key} '{_show(value)}'; "
                               f"each row needs its own {key}", *path, "rows", i)
            seen[value] = i
        if self.model.quantities[f"{table.name}.{key}"].kind != "text":
            values = [row[key] for row in data.rows]
            for i in range(1, len(values)):
                if values[i] <= values[i - 1]:
                    raise self.err(f"rows must be in increasing {key}: row {i + 1} ({_show(values[i])}) "
                                   f"follows {_show(values[i - 1])}", *path, "rows", i)

    # -- scenarios and expectations ----------------------------------------------
    def _scenarios(self, nominal: Scenario) -> list[Scenario]:
        raw = self.data.get("scenarios") or {}
        if not isinstance(raw, dict):
            raise self.err("expected a mapping of scenario names", "scenarios")
        out = []
        for name, spec in raw.items():
            path = ("scenarios", name)
            if name == NOMINAL:
                raise self.err("'nominal' is the plan itself; name the scenario otherwise", *path)
            spec = spec or {}
            if not isinstance(spec, dict):
                raise self.err("a scenario is a mapping (title:, set:, expect:), got "
                               f"{_kind(spec)}", *path)
            for key in spec:
                if key not in SCENARIO_KEYS:
                    raise self.err(f"unknown key '{key}'{nearest(str(key), SCENARIO_KEYS)}", *path, key)
            inputs = dict(nominal.inputs)
            tables = {k: TableData(v.name, [dict(r) for r in v.rows], v.meta, v.source, v.as_of, v.note, v.lines,
                                   uncertain=dict(v.uncertain))
                      for k, v in nominal.tables.items()}
            changes, set_goodput = [], set()
            changed = spec.get("set") or {}
            if not isinstance(changed, dict):
                raise self.err(f"'set:' is a mapping of quantity: value, got {_kind(changed)}", *path, "set")
            for target, value in changed.items():
                tpath = path + ("set", target)
                cell = names.cell(target)
                if cell:
                    self._set_cell(tables, cell, value, tpath)
                    if cell[2] == "goodput_share":
                        set_goodput.add(cell[0])
                else:
                    inputs[target] = self._input(str(target), value, tpath, origin=str(name))
                changes.append(f"{target} = {value['value'] if isinstance(value, dict) else value}")
            if not changes:
                raise self.err("a scenario needs 'set:' with at least one change", *path)
            self._recount_goodput(nominal, inputs, tables, set_goodput)
            out.append(Scenario(str(name), self._text(spec.get("title"), *path, "title") or str(name),
                                (self._text(spec.get("description"), *path, "description") or "").strip(),
                                inputs, tables, self._expect(spec.get("expect") or {}, path + ("expect",)), changes))
        return out

    def _set_cell(self, tables, cell, value, path) -> None:
        tname, key, col = cell
        if tname not in tables:
            raise self.err(f"unknown table '{tname}'{nearest(tname, tables)}", *path)
        table = self.model.tables[tname]
        q = self.model.quantities.get(f"{tname}.{col}")
        if q is None or not q.is_input or q.kind == "text":
            raise self.err(f"'{col}' is not an input column of {tname}", *path)
        index = tables[tname].key_index(self.model.quantities[f"{tname}.{table.key}"].column, key)
        if index is None:
            keys = [_show(r[table.key]) for r in tables[tname].rows]
            raise self.err(f"{tname} has no row '{key}'{nearest(key, keys)}", *path)
        tables[tname].rows[index][col], dist = self._cell(value, q, q.unit, path)
        tables[tname].uncertain.pop((index, col), None)
        if dist is not None:
            tables[tname].uncertain[(index, col)] = dist

    def _expect(self, raw, path) -> list[Expectation]:
        if not isinstance(raw, dict):
            raise self.err("expected a mapping of quantity: value", *path)
        out = []
        for target, value in raw.items():
            tpath = path + (target,)
            cell = names.cell(target)
            q = self.model.quantities.get(f"{cell[0]}.{cell[2]}" if cell else str(target))
            if q is None or (not cell and q.table):
                raise self.err(f"unknown quantity '{target}'{nearest(str(target), self.model.quantities)}", *tpath)
            if q.kind == "bool":
                if not isinstance(value, bool):
                    raise self.err("expected true or false", *tpath)
                out.append(Expectation(str(target), value, value, "", 0.0, self.doc.line(tpath)))
                continue
            try:
                base = units.parse_value(value, q.unit)
                written = units.written(value if isinstance(value, str) else repr(value), q.unit)
                domains.require(q, base, value)      # an expectation outside it can never hold
            except CapplanError as err:
                raise self.err(err.message, *tpath) from None
            unit_text = written.unit or q.unit
            tolerance = written.resolution / 2
            out.append(Expectation(str(target), value, units.to_display(base, unit_text), unit_text,
                                   tolerance, self.doc.line(tpath)))
        return out


def _differing(points) -> str:
    """'max_concurrency: 16': a key whose value differs between the series, with the first value."""
    configs = [dict(p.config) for p in points]
    for key in configs[0]:
        if len({c.get(key) for c in configs}) > 1:
            return f"{key}: {configs[0][key]}"
    return "..."


def _kind(value) -> str:
    return {dict: "a mapping", list: "a list"}.get(type(value), f"'{value}'")


def _show(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


__all__ = ["NOMINAL", "Expectation", "Input", "Plan", "Scenario", "TableData", "load", "replace"]
