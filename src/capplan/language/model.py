"""The standard model: quantity, table and check definitions from ``model/``.

``model/quantities.yaml`` declares every quantity a plan can hold, the way a
spreadsheet would: inputs (with a default tag, unit and maybe a default
value) and derived quantities (with a formula). Tables hold rows of inputs
and row-wise computed columns. A table column is a node of the same graph as
a scalar quantity, named ``table.column``.

This module only *reads* the definitions; which of them exist for a given
plan (the ``when:`` switches) is answered here too, because it is part of
the definition. Formulas are parsed into sympy on first use, not when the
model is read: ``capplan schema`` reads every definition but no formula, and
so never imports sympy. SLO percentiles are the plan's choice: a quantity
declared ``for_each_slo`` exists once per SLO (:class:`Slo`), and
:meth:`Model.with_slos` gives the model of a plan's SLOs (see the
``slo_percentiles`` section of the model file). Every input and input column must declare its domain
(:mod:`capplan.language.domains`), so a new input cannot forget to say which
values are impossible; a default outside its own domain is refused here,
before any plan is read.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from capplan.language import domains, units
from capplan.language.domains import Domain
from capplan.errors import CapplanError
from capplan.language import yamlfile
from capplan.resources import model_dir

if TYPE_CHECKING:
    from capplan.language.formula import Formula

TAGS = ("fact", "policy", "measurement", "assumption")
KINDS = ("number", "money", "bool", "text")


@dataclass(frozen=True)
class Quantity:
    """A scalar quantity or a table column (then ``table`` is set)."""

    name: str                      # 'kv_pool' or 'deployments.nodes'
    unit: str
    description: str
    symbol: str
    group: str
    tag: str | None = None         # None for a derived quantity
    kind: str = "number"
    default: object = None
    status: str | None = None      # 'pending' for a default awaiting measurement
    source: str | None = None
    when: tuple[tuple[str, frozenset[str]], ...] = ()
    any_of: tuple[tuple[tuple[str, frozenset[str]], ...], ...] = ()   # when: as a list: one of these holds too
    written: tuple[tuple[str | None, str], ...] = ()   # formulas as written: (case or None, text)
    switch: str | None = None      # the switch that picks among formulas
    fallback: str | None = None    # the case a plan without that switch reads (the switch's default)
    table: str | None = None
    optional: bool = False         # a table column rows may leave out
    unmeasured: float | None = None   # the value that means "not measured" (outputs say so, not the number)
    domain: Domain | None = None   # the values it can take (every input has one)
    columns: tuple[tuple[str, str], ...] = ()   # in a table: bare column name -> table.column
    defined_in: str = field(default="model", compare=False)   # the model file, for messages

    @property
    def is_input(self) -> bool:
        return not self.written

    @cached_property
    def formulas(self) -> tuple[tuple[str | None, Formula], ...]:
        """``(case or None, parsed formula)``, parsed on first use; a formula
        that does not parse is reported at its key in the model file."""
        key = f"tables.{self.name}" if self.table else f"quantities.{self.name}"
        return tuple((case, _parse(text, self.defined_in, f"{key}.formula" + (f".{self.switch}.{case}" if case else ""),
                                   dict(self.columns)))
                     for case, text in self.written)

    @cached_property
    def column(self) -> str:
        """The bare column name ('nodes' of 'deployments.nodes'); read per row per scenario, so kept."""
        return self.name.split(".", 1)[1] if self.table else self.name

    def formula_for(self, switches: dict[str, str]) -> Formula | None:
        """The formula under these switch values; a switch the plan does not have (one a section
        brings, as ``expert_parallel``) reads its default case, so such a plan keeps its formulas."""
        if not self.formulas:
            return None
        if self.switch is None:
            return self.formulas[0][1]
        wanted = switches.get(self.switch, self.fallback)
        for case, formula in self.formulas:
            if case == wanted:
                return formula
        raise CapplanError(f"quantity '{self.name}' has no formula for {self.switch}: {wanted}")


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    group: str
    tag: str
    key: str
    description: str
    columns: tuple[str, ...]       # qualified names, in declared order
    when: tuple[tuple[str, frozenset[str]], ...] = ()


@dataclass(frozen=True)
class Check:
    written: str                   # the condition as written
    key: str
    message: str
    where: str = ""                # its key in the model file ('checks[0]')
    defined_in: str = field(default="model", compare=False)
    by_row: bool = False           # holds row by row in its key's table: a failure names the rows
    when: tuple[tuple[str, frozenset[str]], ...] = ()   # the switches under which it is part of the model

    @cached_property
    def require(self) -> Formula:
        return _parse(self.written, self.defined_in, self.where)


def _parse(text: str, file: str, key: str, columns: dict[str, str] | None = None) -> Formula:
    from capplan.language.formula import parse

    try:
        return parse(text, columns=columns or None)
    except CapplanError as err:
        raise err.located(file=file, key=key) from None


@dataclass(frozen=True)
class Slo:
    """One SLO of a plan: a latency metric at a percentile, and the names it brings."""

    metric: str                    # 'ttft'
    key: str                       # 'p999' (in names)
    q: float                       # 99.9
    label: str                     # 'TTFT'
    unit: str                      # display unit of the limit and the column ('ms')
    limit: str                     # the plan input: 'ttft_p999_slo'
    column: str                    # the load_sweep column (bare): 'ttft_p999'
    spread: str                    # its MAD across replicated runs (bare): 'ttft_p999_mad'

    @property
    def p(self) -> str:
        """'p99.9', as the tools print it."""
        return f"p{self.q:g}"

    @property
    def text(self) -> str:
        """'TTFT p99.9'."""
        return f"{self.label} {self.p}"


@dataclass(frozen=True)
class Group:
    name: str
    title: str
    quantities: tuple[str, ...]


@dataclass(eq=False)
class Model:
    """The loaded model (hashed by identity, so graphs can be cached per model)."""

    switches: dict[str, dict]
    groups: dict[str, Group]
    quantities: dict[str, Quantity]          # scalars and columns
    tables: dict[str, Table]
    checks: tuple[Check, ...]
    source: str = "model/quantities.yaml"
    slos: tuple[Slo, ...] = ()               # the SLOs this model holds, in declared order
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)   # for_each_slo key -> names
    _definition: tuple = field(default=(), repr=False)       # (data, lines), to re-read for other SLOs
    _active_cache: dict = field(default_factory=dict, repr=False)
    _variants: dict = field(default_factory=dict, repr=False)

    def slo_inputs(self) -> dict[str, tuple[str, str]]:
        """Every SLO input name a plan may give -> (metric, key): ``ttft_p99_slo``."""
        if not self._definition:
            return {}
        data = self._definition[0]
        spec = data.get("slo_percentiles") or {}
        template = _template_of(data, spec.get("limit", ""))
        return {_Reader.fill(template, _Reader.fields(spec, m, k)): (m, k)
                for m in spec.get("metrics", {}) for k in spec.get("percentiles", {})}

    def with_slos(self, chosen: Iterable[tuple[str, str]]) -> Model:
        """The model of a plan whose SLOs are ``chosen`` ``(metric, key)`` pairs;
        a metric with none keeps its default. ``self`` when nothing changes."""
        if not self._definition:
            return self
        data, lines = self._definition
        wanted = _Reader.choose(data.get("slo_percentiles") or {}, chosen)
        if wanted == tuple((s.metric, s.key) for s in self.slos):
            return self
        if wanted not in self._variants:
            self._variants[wanted] = model_from_dict(data, self.source, lines, slos=wanted)
        return self._variants[wanted]

    def expand(self, names: Iterable[str]) -> list[str]:
        """Names as a layout lists them, with a ``for_each_slo`` key replaced by
        the names it stands for in this model (``slo_limits`` -> ``ttft_p95_slo``, ...)."""
        return [n for name in names for n in self.expansions.get(name, (name,))]

    def default_switches(self) -> dict[str, str]:
        return {name: spec["default"] for name, spec in self.switches.items()}

    def when(self, name: str) -> list[tuple[str, frozenset[str]]]:
        """The switch values a quantity, column or table exists under (its
        own ``when:`` and its table's): empty when it always exists."""
        if name in self.tables:
            return list(self.tables[name].when)
        q = self.quantities[name]
        return list(q.when) + (list(self.tables[q.table].when) if q.table else [])

    def any_of(self, name: str) -> tuple[tuple[tuple[str, frozenset[str]], ...], ...]:
        """The alternatives of a quantity whose ``when:`` is a list (one of them must hold as well as
        :meth:`when`): empty for the others. A fact two features read (the hidden width: the
        engine's memory accounting and the throughput estimate) exists in a plan with either."""
        return () if name in self.tables else self.quantities[name].any_of

    def requirement(self, name: str) -> str:
        """``'sizing: load_sweep'``: what :meth:`when` and :meth:`any_of` ask for, in words."""
        def words(pairs):
            return ", ".join(f"{sw}: {'/'.join(sorted(cases))}" for sw, cases in pairs)
        alternatives = " or ".join(words(alt) for alt in self.any_of(name))
        return ", ".join(part for part in (words(self.when(name)), alternatives) if part)

    def exists(self, name: str, switches: dict[str, str]) -> bool:
        """Whether a quantity, column or table exists under these switch values."""
        def holds(pairs):
            return all(switches.get(sw) in cases for sw, cases in pairs)
        alternatives = self.any_of(name)
        return holds(self.when(name)) and (not alternatives or any(holds(alt) for alt in alternatives))

    def active(self, switches: dict[str, str]) -> list[str]:
        """Names of the quantities and columns that exist, in declared order."""
        key = tuple(sorted(switches.items()))
        if key not in self._active_cache:
            self._active_cache[key] = [n for n in self.quantities if self.exists(n, switches)]
        return self._active_cache[key]

    def scalars(self) -> list[str]:
        return [n for n, q in self.quantities.items() if q.table is None]


@lru_cache(maxsize=None)
def standard_model() -> Model:
    doc = yamlfile.read(model_dir() / "quantities.yaml", display="model/quantities.yaml")
    return model_from_dict(doc.data, source=doc.file, lines=doc.lines)


def model_from_dict(data: dict, source: str = "model", lines: dict | None = None,
                    slos: tuple[tuple[str, str], ...] | None = None) -> Model:
    """Build a model from its YAML form (tests build small ones this way);
    ``lines`` (key path -> line) lets errors name their line; ``slos`` the
    ``(metric, key)`` SLOs it holds (else each metric's default)."""
    try:
        return _Reader(data, source, lines or {}, slos).read()
    except CapplanError as err:
        raise err.located(file=source) from None


def _template_of(data: dict, where: str) -> str:
    """The ``for_each_slo`` name template of ``quantity`` or ``table.column``."""
    table, _, column = where.rpartition(".")
    if table:
        spec = _dig_spec(data, "tables", table, "columns", column)
    else:
        spec = next((g.get("quantities", {}).get(column) for g in (data.get("groups") or {}).values()
                     if column in (g.get("quantities") or {})), None)
    if not isinstance(spec, dict) or "for_each_slo" not in spec:
        raise CapplanError(f"slo_percentiles names '{where}', which is no for_each_slo quantity",
                           key="slo_percentiles")
    return str(spec["for_each_slo"])


def _dig_spec(data: dict, *path: str):
    for part in path:
        data = (data or {}).get(part) if isinstance(data, dict) else None
    return data


class _Reader:
    def __init__(self, data: dict, source: str, lines: dict, slos: tuple | None = None):
        self.data = data
        self.source = source
        self.lines = lines
        self.switches = data.get("switches", {}) or {}
        self.slo_spec = data.get("slo_percentiles") or {}
        chosen = self.choose(self.slo_spec, ()) if slos is None else slos
        self.slo_fields = [self.fields(self.slo_spec, m, k) for m, k in chosen]
        self.expansions: dict[str, tuple[str, ...]] = {}
        self.macros = self._macros()

    # -- SLOs of the plan's choice -------------------------------------------
    @staticmethod
    def choose(spec: dict, chosen: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """The SLOs in declared order: the chosen ones, and each metric's
        default where none of that metric is chosen."""
        chosen = set(chosen)
        out = []
        for metric, mspec in (spec.get("metrics") or {}).items():
            keys = [k for k in spec.get("percentiles", {}) if (metric, k) in chosen]
            if not keys and mspec.get("default"):
                keys = [mspec["default"]]
            out += [(metric, k) for k in keys]
        return tuple(out)

    @staticmethod
    def fields(spec: dict, metric: str, key: str) -> dict[str, str]:
        m, q = spec["metrics"][metric], float(spec["percentiles"][key])
        nth = f"{q:g}" + ("st" if q % 10 == 1 else "nd" if q % 10 == 2 else "rd" if q % 10 == 3 else "th")
        what = str(m.get("what", metric))
        return {"metric": metric, "key": key, "p": f"p{q:g}", "q": f"{q:g}", "nth": nth,
                "label": str(m.get("label", metric)), "what": what, "What": what[:1].upper() + what[1:],
                "unit": str(m.get("unit", ""))}

    @staticmethod
    def fill(text: str, mapping: dict[str, str]) -> str:
        try:
            return string.Template(text).substitute(mapping)
        except KeyError as err:
            raise CapplanError(f"'{text}': unknown ${{{err.args[0]}}} (known: "
                               f"{', '.join(sorted(mapping))})") from None
        except ValueError as err:
            raise CapplanError(f"'{text}': {err}") from None

    def _macros(self) -> dict[str, str]:
        """``${ttft_slo}`` -> the plan's TTFT SLO (min of several); ``${slo_checks}``
        -> the pass/fail columns of every SLO joined with ``and``."""
        out: dict[str, str] = {}
        templates = {}
        for gspec in (self.data.get("groups") or {}).values():
            templates.update({k: v for k, v in (gspec.get("quantities") or {}).items()
                              if isinstance(v, dict) and "for_each_slo" in v})
        for tspec in (self.data.get("tables") or {}).values():
            templates.update({k: v for k, v in (tspec.get("columns") or {}).items()
                              if isinstance(v, dict) and "for_each_slo" in v})
        for key, spec in templates.items():
            out[key] = " and ".join(self.fill(str(spec["for_each_slo"]), f) for f in self.slo_fields)
        if self.slo_spec:
            limit = _template_of(self.data, self.slo_spec.get("limit", ""))
            for metric in self.slo_spec.get("metrics") or {}:
                names = [self.fill(limit, f) for f in self.slo_fields if f["metric"] == metric]
                if names:
                    out[f"{metric}_slo"] = _smallest(names)
        return out

    def _slos(self) -> tuple[Slo, ...]:
        if not self.slo_spec:
            return ()
        limit = _template_of(self.data, self.slo_spec["limit"])
        column = _template_of(self.data, self.slo_spec["column"])
        spread = _template_of(self.data, self.slo_spec["spread"])
        return tuple(Slo(f["metric"], f["key"], float(f["q"]), f["label"], f["unit"],
                         self.fill(limit, f), self.fill(column, f), self.fill(spread, f))
                     for f in self.slo_fields)

    def _each(self, items: dict, prefix: str = ""):
        """``(name, spec)`` of a group's quantities or a table's columns, a
        ``for_each_slo`` entry once per SLO (its text filled in)."""
        for name, spec in items.items():
            if not (isinstance(spec, dict) and "for_each_slo" in spec):
                yield name, spec
                continue
            if not self.slo_spec:
                raise CapplanError("for_each_slo needs a slo_percentiles section", key=f"{prefix}{name}")
            names = []
            for f in self.slo_fields:
                filled = _fill_all({k: v for k, v in spec.items() if k != "for_each_slo"}, {**self.macros, **f})
                names.append(self.fill(str(spec["for_each_slo"]), f))
                yield names[-1], filled
            self.expansions[f"{prefix}{name}"] = tuple(f"{prefix}{n}" for n in names)

    def read(self) -> Model:
        groups: dict[str, Group] = {}
        quantities: dict[str, Quantity] = {}
        for gname, gspec in (self.data.get("groups") or {}).items():
            names = []
            gwhen = self._when(gspec.get("when"), f"groups.{gname}")
            for qname, qspec in self._each(gspec.get("quantities") or {}):
                if qname in quantities:
                    raise CapplanError(f"quantity '{qname}' is defined twice", key=f"groups.{gname}.quantities.{qname}")
                quantities[qname] = self._quantity(qname, qspec, gname, gwhen, columns=None, table=None,
                                                   path=("groups", gname, "quantities", qname))
                names.append(qname)
            groups[gname] = Group(gname, gspec.get("title", gname), tuple(names))

        tables: dict[str, Table] = {}
        for tname, tspec in (self.data.get("tables") or {}).items():
            if tname in quantities:
                raise CapplanError(f"table '{tname}' has the name of a quantity", key=f"tables.{tname}")
            cols = dict(self._each(tspec.get("columns") or {}, f"{tname}."))
            qualified = {c: f"{tname}.{c}" for c in cols}
            for cname, cspec in cols.items():
                quantities[qualified[cname]] = self._quantity(
                    qualified[cname], cspec or {}, tspec.get("group", ""), (), columns=qualified, table=tname,
                    path=("tables", tname, "columns", cname))
            tag = tspec.get("tag", "assumption")
            self._check_tag(tag, f"tables.{tname}.tag")
            tables[tname] = Table(
                name=tname, title=tspec.get("title", tname), group=tspec.get("group", ""), tag=tag,
                key=tspec.get("key", "name"), description=tspec.get("description", ""),
                columns=tuple(qualified.values()), when=self._when(tspec.get("when"), f"tables.{tname}"))

        checks = []
        for i, cspec in enumerate(self.data.get("checks") or []):
            checks.append(Check(written=str(cspec["require"]).strip(), key=cspec.get("key", ""),
                                message=cspec["message"], where=f"checks[{i}]", defined_in=self.source,
                                by_row=bool(cspec.get("by_row", False)),
                                when=self._when(cspec.get("when"), f"checks[{i}]")))
        return Model(switches=self.switches, groups=groups, quantities=quantities,
                     tables=tables, checks=tuple(checks), source=self.source, slos=self._slos(),
                     expansions=self.expansions, _definition=(self.data, self.lines))

    def _quantity(self, name, spec, group, inherited_when, columns, table, path) -> Quantity:
        try:
            return self._read_quantity(name, spec, group, inherited_when, columns, table, path)
        except CapplanError as err:
            raise err.located(line=self.lines.get(path)) from None

    def _read_quantity(self, name, spec, group, inherited_when, columns, table, path) -> Quantity:
        key = f"tables.{name}" if table else f"quantities.{name}"
        spec = dict(spec)
        unit = str(spec.pop("unit", "") or "")
        kind = spec.pop("kind", "number")
        if kind not in KINDS:
            raise CapplanError(f"kind must be one of {', '.join(KINDS)}, got '{kind}'", key=key)
        if kind != "text":
            try:
                units.unit(unit)
            except CapplanError as err:
                raise err.located(key=key + ".unit") from None
        formulas: tuple[tuple[str | None, str], ...] = ()
        switch = None
        written_when = spec.pop("when", None)
        any_of = tuple(self._when(alt, f"{key}.when[{i}]") for i, alt in enumerate(written_when)) \
            if isinstance(written_when, list) else ()
        when = inherited_when + (() if any_of else self._when(written_when, key))
        raw = _fill_all(spec.pop("formula", None), self.macros)
        if isinstance(raw, dict):
            if len(raw) != 1:
                raise CapplanError("a formula mapping must name exactly one switch", key=key + ".formula")
            switch, cases = next(iter(raw.items()))
            known = self.switches.get(switch, {}).get("cases", {})
            if switch not in self.switches:
                raise CapplanError(f"unknown switch '{switch}'", key=key + ".formula")
            # a case under which the quantity does not exist (its when:) needs no formula
            missing = [c for c in known if c not in cases and all(c in cs for sw, cs in when if sw == switch)
                       and (not any_of or any(all(c in cs for sw, cs in alt if sw == switch) for alt in any_of))]
            if missing:
                raise CapplanError(f"no formula for {switch}: {', '.join(missing)}", key=key + ".formula")
            formulas = tuple((case, str(text).strip()) for case, text in cases.items())
        elif raw is not None:
            formulas = ((None, str(raw).strip()),)
        tag = spec.pop("tag", None)
        if formulas and tag:
            raise CapplanError("a derived quantity takes no tag (it is 'derived')", key=key)
        if not formulas and kind != "text":
            tag = tag or ("assumption" if table is None else None)
            if tag:
                self._check_tag(tag, key + ".tag")
        if spec.get("default") is not None and formulas:
            raise CapplanError("a derived quantity takes no default (pin it in a plan instead)", key=key)
        q = Quantity(
            name=name, unit=unit, kind=kind, group=group, table=table, tag=tag,
            description=str(spec.pop("description", "")), symbol=str(spec.pop("symbol", name)),
            default=spec.pop("default", None), status=spec.pop("status", None),
            source=spec.pop("source", None), optional=bool(spec.pop("optional", False)),
            unmeasured=self._unmeasured(spec.pop("unmeasured", None), key), when=when, any_of=any_of, written=formulas,
            switch=switch,
            fallback=self.switches[switch]["default"] if switch else None, columns=tuple(sorted((columns or {}).items())),
            defined_in=self.source,
            domain=self._domain(spec.pop("domain", None), unit, kind, not formulas, key, path))
        if spec:
            raise CapplanError(f"unknown field(s) {', '.join(sorted(spec))}", key=key)
        if q.default is not None and q.kind != "text":
            try:
                domains.require(q, units.parse_value(q.default, q.unit), q.default)
            except CapplanError as err:
                raise CapplanError(f"default: {err.message}", key=key + ".default",
                                   line=self.lines.get(path + ("default",))) from None
        return q

    @staticmethod
    def _unmeasured(raw, key: str) -> float | None:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise CapplanError(f"expected the number that means 'not measured', got {raw!r}",
                               key=key + ".unmeasured")
        return float(raw)

    def _domain(self, spec, unit, kind, is_input, key, path) -> Domain | None:
        """The declared domain: required of every numeric input (a plan may
        give it any value), optional for a derived quantity (checks a pin)."""
        if kind in ("text", "bool"):
            if spec is not None:
                raise CapplanError(f"a {kind} quantity takes no domain", key=key + ".domain")
            return None
        if spec is None:
            if is_input:
                raise CapplanError("an input must declare its domain, e.g. "
                                   "domain: {range: positive, why: ...} (see model/quantities.yaml's header)",
                                   key=key)
            return None
        try:
            return domains.parse(spec, unit)
        except CapplanError as err:
            raise err.located(key=key + ".domain", line=self.lines.get(path + ("domain",))) from None

    def _when(self, spec, key):
        if not spec:
            return ()
        out = []
        for sw, cases in spec.items():
            if sw not in self.switches:
                raise CapplanError(f"unknown switch '{sw}' in when:", key=key)
            out.append((sw, frozenset(cases if isinstance(cases, list) else [cases])))
        return tuple(out)

    @staticmethod
    def _check_tag(tag, key):
        if tag not in TAGS:
            raise CapplanError(f"tag must be one of {', '.join(TAGS)}, got '{tag}'", key=key)


def _smallest(names: list[str]) -> str:
    """``min(a, b, ...)`` of several names (min() takes at most 4 arguments: nested)."""
    if len(names) == 1:
        return names[0]
    if len(names) <= 4:
        return f"min({', '.join(names)})"
    return f"min({', '.join(names[:3])}, {_smallest(names[3:])})"


def _fill_all(value, mapping: dict[str, str]):
    """``${...}`` filled in every text of a spec (a formula, or a whole for_each_slo entry)."""
    if isinstance(value, str):
        return _Reader.fill(value, mapping) if "$" in value else value
    if isinstance(value, dict):
        return {k: _fill_all(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_all(v, mapping) for v in value]
    return value
