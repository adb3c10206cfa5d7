"""JSON Schema for plan files, generated from the model so it never drifts.

Editors (VS Code with the YAML extension, any yaml-language-server client)
read it from a plan's first line::

    # yaml-language-server: $schema=../src/capplan/plan.schema.json

and then complete quantity names, show each one's unit, tag and description,
and underline a misspelt key (``peak_arival_rate``) as you type.

Everything in the schema comes from the model (``model/quantities.yaml``),
the catalog and the loader's own key lists (:mod:`capplan.loading.plan`): every
input and every derived quantity (which a plan may pin), with its unit in the
description; the value forms (a number in the display unit, a string with a
unit such as ``"60 req/s"``, or ``{value, source, status, tag, date, note}``);
tables with their input columns; scenarios; ``expect:`` keys (quantity names
or ``table[row].column``). ``additionalProperties: false`` wherever the
loader rejects an unknown key. Each quantity's declared domain bounds the
number form of its values (``minimum``, ``exclusiveMaximum``, ``multipleOf: 1``
for a count, …); a value written with a unit is a string the schema cannot
range-check, so the loader checks it (:mod:`capplan.language.domains`).
Quantities and tables that exist only under a switch (``sizing:
littles_law``, an MLA model) are allowed only there.

A generated copy ships in the package (:data:`SHIPPED`); a test checks that
it equals a fresh generation, and ``capplan schema --out FILE`` rewrites it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from capplan.language.model import TAGS, Model, Quantity, standard_model
from capplan.loading import catalog, uncertain
from capplan.loading import plan as plan_module
from capplan.loading.plan import candidates, decision
from capplan.loading.plan.context import TEXT_LIMITS
from capplan.loading.plan.tables import FROM_SECTIONS
from capplan.loading.plan.traffic import GIVEN_BY_TRAFFIC
from capplan.names import nearest

DRAFT = "http://json-schema.org/draft-07/schema#"
SHIPPED = Path(__file__).resolve().parent.parent / "plan.schema.json"
NUMBER_WITH_UNIT = r"^\s*[-+]?(\d[\d_,]*\.?\d*|\.\d+)([eE][-+]?\d+)?(\s*\S.*)?$"
_REF = "#/definitions/"
DOMAIN_KEYWORDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")


def generate(model: Model | None = None) -> dict:
    """The schema as a dict (deterministic: model order, catalog order)."""
    return _Generator(model or standard_model()).schema()


def dumps(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def text(model: Model | None = None) -> str:
    return dumps(generate(model))


def validate(data, schema: dict | None = None) -> list[str]:
    """Messages for every place ``data`` (a loaded plan) breaks the schema; [] if
    none. Needs the ``jsonschema`` package (a test extra)."""
    import jsonschema

    schema = schema or generate()
    data = as_json(data)
    validator = jsonschema.Draft7Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda err: [str(p) for p in err.absolute_path]):
        while err.context:                       # anyOf: the branch meant for this kind of value
            err = _closest(err.context)
        where = ".".join(str(p) for p in err.absolute_path) or "(top)"
        if err.validator == "pattern" and err.validator_value == NUMBER_WITH_UNIT:
            message = f"{err.instance!r} is not a number with an optional unit (e.g. 60, '60 req/s', '79.65 GiB')"
        elif err.validator in DOMAIN_KEYWORDS and "description" in err.schema:
            message = f"{err.schema['description']}; got {err.instance!r}"     # the loader's own words
        else:
            message = _forbidden(err, data, schema) or _unexpected(err) or err.message
        out.append(f"{where}: {message}")
    return out


def _closest(errors):
    """Among the errors of anyOf branches, those of a branch whose type fits
    the value (a mapping checked as a mapping, not 'is not of type number'),
    deepest first."""
    fitting = [e for e in errors if e.validator != "type"] or list(errors)
    return max(fitting, key=lambda e: (len(e.absolute_path), e.validator != "anyOf"))


def _unexpected(err) -> str | None:
    """'Additional properties are not allowed ('x' was unexpected); did you mean y?'
    (also where names may be table[row].column patterns)."""
    import re

    if err.validator != "additionalProperties" or not isinstance(err.instance, dict):
        return None
    known = err.schema.get("properties", {})
    patterns = err.schema.get("patternProperties", {})
    extra = [k for k in err.instance if k not in known and not any(re.search(p, k) for p in patterns)]
    if not extra:
        return None
    verb = "was" if len(extra) == 1 else "were"
    text = f"Additional properties are not allowed ({', '.join(repr(k) for k in extra)} {verb} unexpected)"
    return text + nearest(extra[0], known)


def _forbidden(err, data, schema) -> str | None:
    """A clear message for a key a switch rules out (a ``false`` subschema,
    whose error names neither the key nor the reason)."""
    path = list(err.schema_path)
    if err.validator is not None or not path or path[-1] != "properties":
        return None
    node, container = schema, data
    for step in path:
        node = node[step]
    for step in err.absolute_path:
        container = container[step]
    keys = [k for k, sub in node.items() if sub is False and isinstance(container, dict)
            and k in container and container[k] == err.instance]
    why = schema["allOf"][path[1]].get("$comment", "") if path[0] == "allOf" else ""
    return f"'{keys[0] if keys else '?'}' does not exist in a plan with {why or 'these settings'}"


def as_json(value):
    """YAML data as JSON sees it: dates become ISO strings (YAML 1.1 reads
    ``2026-11-01`` as a date; the language server, on YAML 1.2, as a string)."""
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def traffic_rules() -> list[dict]:
    """A traffic profile gives the peak-to-average ratio (and a CSV the peak too): without
    ``traffic:`` a plan states both, with ``profile:`` the peak that scales it."""
    def inputs(names):
        return {"properties": {"inputs": {"required": names}}, "required": ["inputs"]}
    return [{"$comment": "no traffic:", "if": {"not": {"required": ["traffic"]}},
             "then": inputs(list(GIVEN_BY_TRAFFIC))},
            {"$comment": "traffic: {profile: ...}",
             "if": {"properties": {"traffic": {"required": ["profile"]}}, "required": ["traffic"]},
             "then": inputs(["peak_arrival_rate"])}]


class _Generator:
    def __init__(self, model: Model):
        # every SLO a plan may name (ttft_p99_slo, its column ttft_p99, ...): the
        # model's SLO inputs are not required one by one (see slo_rules)
        every = model.with_slos(model.slo_inputs().values())
        self.slo_names = {n for s in every.slos for n in (s.limit, s.column, s.spread)}
        self.default_slos = model.slos
        self.model = model = every
        self.switch_cases = {name: list(spec["cases"]) for name, spec in model.switches.items()}
        self.defaults = model.default_switches()
        provided: set[str] = set()
        for kind in catalog.KINDS:
            for cid in catalog.ids(kind):
                provided.update(catalog.lookup(kind, cid).values)
        self.provided = provided

    # -- top level ---------------------------------------------------------------
    def schema(self) -> dict:
        m = self.model
        known = {
            "title": {"type": "string", "description": "Title of the plan (the record's heading)."},
            "owner": {"type": "string", "description": "Team that owns the plan."},
            "decision": decision.SCHEMA,
            "description": {"type": "string", "description": "What the plan decides, in prose (shown in the record)."},
            "notes": {"type": "string", "description": "Free notes, shown in the record."},
            "gpu": {"type": "string", "enum": _spellings("gpu"),
                    "description": "GPU by catalog id (or an alias, which names the same entry); its facts (memory, bandwidth, FLOP/s) come with sources. "
                                   + _catalog_list("gpu")},
            "prefill_gpu": {"type": "string", "enum": _spellings("gpu"),
                            "description": "With topology: disaggregated, the prefill pool's GPU by catalog id (else the "
                                           "plan's gpu): its tensor FLOP/s and memory; state its offer's "
                                           "prefill_node_hourly_cost and prefill_gpus_per_node under inputs."},
            "model": {"description": "Model architecture by catalog id (parameters, layers, KV heads, head dim), "
                                     "{id: catalog id, weights: format} for another of its checkpoints' weight "
                                     "formats (bf16, fp8, nvfp4, ...), "
                                     "or {config: path, name: Hugging Face id} to a Hugging Face config.json next to "
                                     "the plan (the name, which benchmarks of the model record, makes them its own "
                                     "evidence). "
                                     + _catalog_list("model"),
                      "anyOf": [{"type": "string", "enum": _spellings("model")},
                                {"type": "object", "properties": {"id": {"type": "string", "enum": _spellings("model")},
                                                                  "weights": {"type": "string"}},
                                 "required": ["id"], "additionalProperties": False},
                                {"type": "object", "properties": {"config": {"type": "string"},
                                                                  "name": {"type": "string",
                                                                           "maxLength": TEXT_LIMITS["name"]}},
                                 "required": ["config"], "additionalProperties": False}]},
            **{key: {"type": "string", "enum": self.switch_cases[key], "default": self.defaults[key],
                     "description": m.switches[key]["description"] + " " + "; ".join(
                         f"{case}: {text}" for case, text in m.switches[key]["cases"].items()) + "."}
               for key in plan_module.PLAN_SWITCHES},
            "engine": {"description": "The serving engine (vLLM when not given): its calibrated constants "
                                      "(engine_step_factor, estimate_band) reach the throughput estimate; for vLLM "
                                      "with memory_accounting: engine, the release whose start-up accounting gate 1 "
                                      "follows (sets the input vllm_release). " + _catalog_list("engine"),
                       "oneOf": [{"type": "string", "enum": _spellings("engine")},
                                 {"type": "object",
                                  "properties": {"name": {"type": "string", "enum": _spellings("engine")},
                                                 "version": {"type": "string", "pattern": r"^v?0\.\d{1,3}(\.\d{1,3}){0,2}(\.post\d+)?$",
                                                             "description": "vLLM's release as text, e.g. \"0.21\"."},
                                                 "source": {"type": "string", "description": "Where the release comes from."}},
                                  "required": ["name"], "additionalProperties": False}]},
            "traffic": {"type": "object", "description": "The arrival rate over time: profile (24 hourly or 168 "
                                                         "weekly multipliers of the peak, the largest 1) or file "
                                                         "(a CSV of time in hours, arrival_rate in req/s, inside the "
                                                         "plan's repository), with its source; the peak and PAR "
                                                         "follow from it and the autoscaled fleet is priced.",
                        "properties": {"profile": {"type": "array", "items": {"type": "number", "minimum": 0,
                                                                               "maximum": 1},
                                                   "minItems": 24, "maxItems": 168},
                                       "file": {"type": "string"}, "source": {"type": "string"},
                                       "note": {"type": "string"}},
                        "additionalProperties": False},
            "inputs": {"description": "Input values (and pins of derived quantities), by canonical name.",
                       "allOf": [{"$ref": _REF + "inputs"}]},
            "tables": {"$ref": _REF + "tables"},
            "candidates": candidates.SCHEMA,
            "scenarios": {"$ref": _REF + "scenarios"},
            "expect": {"description": "Results the plan must produce; `capplan check` enforces them to the "
                                      "digits written.", "allOf": [{"$ref": _REF + "expect"}]},
        }
        required = ["gpu", "model"]
        return {
            "$schema": DRAFT,
            "title": "capplan plan",
            "description": "An LLM-serving capacity plan for capplan (generated from the model by "
                           "`capplan schema`; do not edit).",
            "type": "object",
            "properties": {k: known.get(k, {}) for k in plan_module.PLAN_KEYS},
            "required": required,
            "additionalProperties": False,
            "allOf": self.switch_rules() + traffic_rules(),
            "definitions": self.definitions(),
        }

    def definitions(self) -> dict:
        defs = {
            "number_with_unit": {"type": "string", "pattern": NUMBER_WITH_UNIT,
                                 "description": "A number, optionally with a unit: '60 req/s', '79.65 GiB', "
                                                "'40.96 USD/h'. Without a unit it is read in the display unit. "
                                                "The schema range-checks only a plain number; a value with a "
                                                "unit is checked against the quantity's domain when capplan "
                                                "loads the plan."},
            "value": {"anyOf": [{"type": "number"}, {"$ref": _REF + "number_with_unit"}]},
            "input": {"anyOf": [{"$ref": _REF + "value"}, {"$ref": _REF + "input_fields"}]},
            "input_fields": self.input_fields(),
            "range": {"type": "string", "pattern": r"^\s*\S.*\sto\s+\S",
                      "description": "How far off the value may be, 'LOW to HIGH' with a unit ('45 to 80 req/s'): "
                                     "a 90 % interval for lognormal and normal, the whole support for uniform and "
                                     "triangular (whose mode is value). Used by capplan simulate; value stays the "
                                     "point of the record."},
            "dist": {"type": "string", "enum": list(uncertain.KINDS),
                     "description": "The range's distribution (default: lognormal for a quantity that must be "
                                    "positive, else normal)."},
            "cell": {"anyOf": [{"$ref": _REF + "value"},
                               {"type": "object", "properties": {"value": {"$ref": _REF + "value"},
                                                                 "range": {"$ref": _REF + "range"},
                                                                 "dist": {"$ref": _REF + "dist"}},
                                "required": ["value", "range"], "additionalProperties": False}],
                     "description": "A table cell: a value, or {value, range, dist} for an uncertain one."},
            "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}",
                     "description": "A date, YYYY-MM-DD."},
            "inputs": self.inputs(),
            "tables": self.tables(),
            "scenarios": self.scenarios(),
            "expect": self.expect(),
            "domains": {q.name: _domain_rule(q) for q in self.model.quantities.values() if q.domain},
        }
        for name in self.model.tables:
            defs[f"table_{name}"] = self.table(name)
            defs[f"row_{name}"] = self.row(name)
        return defs

    def input_fields(self) -> dict:
        known = {
            "value": {"$ref": _REF + "value"},
            "source": {"type": "string", "description": "Where the value comes from (a document, a run, a person)."},
            "status": {"type": "string", "enum": ["pending", "measured"],
                       "description": "'pending': a placeholder awaiting a measurement, flagged wherever it flows."},
            "tag": {"type": "string", "enum": list(TAGS),
                    "description": "fact, policy, measurement or assumption (default: the model's tag)."},
            "date": {"$ref": _REF + "date"},
            "note": {"type": "string"},
            "range": {"$ref": _REF + "range"},
            "dist": {"$ref": _REF + "dist"},
        }
        return {"type": "object", "properties": {k: known.get(k, {}) for k in plan_module.INPUT_KEYS},
                "required": ["value"], "additionalProperties": False}

    # -- inputs and pins -------------------------------------------------------------
    def settable(self) -> list[str]:
        return [n for n, q in self.model.quantities.items() if q.table is None and q.kind not in ("bool", "text")]

    def inputs(self) -> dict:
        props = {}
        for name in self.settable():
            props[name] = {"description": self.describe(name),
                           "allOf": [{"$ref": _REF + "input"}] + _domain(self.model.quantities[name])}
            q = self.model.quantities[name]
            if q.is_input and q.default is not None and isinstance(q.default, (int, float)):
                props[name]["default"] = q.default
        return {"type": ["object", "null"], "properties": props, "additionalProperties": False,
                "allOf": self.slo_rules()}

    def slo_rules(self) -> list[dict]:
        """A metric with a default SLO needs one SLO of that metric: its default
        (ttft_p95_slo) or any other percentile of it (ttft_p99_slo)."""
        rules = []
        for default in self.default_slos:
            names = sorted(s.limit for s in self.model.slos if s.metric == default.metric)
            rules.append({"$comment": f"an SLO of {default.label} (default {default.limit})",
                          "anyOf": [{"required": [n]} for n in names]})
        return rules

    def describe(self, name: str) -> str:
        q = self.model.quantities[name]
        unit = q.unit or "none (a plain number)"
        text = q.description.rstrip(".") + "."
        if q.is_input:
            text += f" Unit: {unit}." + (f" Tag: {q.tag}." if q.tag else "")
            if q.default is not None:
                text += f" Default: {q.default}" + (" (pending measurement)" if q.status == "pending" else "") + "."
            if name in self.provided:
                text += " Usually from the catalog (gpu:/model:); set here to override."
        else:
            formulas = "; ".join(f"{case}: {text}" if case else text for case, text in q.written)
            text += f" Derived, unit {unit}: {formulas}. Setting it pins the value (replaces the formula)."
        text += _domain_text(q)
        if self.model.when(name) or self.model.any_of(name):
            text += f" Exists only with {self.model.requirement(name)}."
        return text

    def excluded(self, name: str, switch: str, case: str) -> bool:
        def excludes(pairs):
            return any(sw == switch and case not in cases for sw, cases in pairs)
        alternatives = self.model.any_of(name)
        return excludes(self.model.when(name)) or bool(alternatives) and all(excludes(alt) for alt in alternatives)

    def required_inputs(self, sizing: str) -> list[str]:
        out = []
        for name, q in self.model.quantities.items():
            if q.table or not q.is_input or q.kind in ("bool", "text") or q.default is not None \
                    or name in self.slo_names:
                continue
            if name in self.provided or self.excluded(name, "sizing", sizing) or name in GIVEN_BY_TRAFFIC:
                continue
            if any(self.excluded(name, sw, c) for sw, cases in self.switch_cases.items() if sw != "sizing"
                   for c in cases):
                continue
            out.append(name)
        return out

    # -- tables --------------------------------------------------------------------------
    def tables(self) -> dict:
        props = {name: {"description": f"{t.title}: {t.description} Tag: {t.tag}.",
                        "$ref": _REF + f"table_{name}"} for name, t in self.model.tables.items()
                 if name not in FROM_SECTIONS}
        props = {name: {"description": spec["description"], "allOf": [{"$ref": spec["$ref"]}]}
                 for name, spec in props.items()}
        return {"type": ["object", "null"], "properties": props, "additionalProperties": False}

    def input_columns(self, table: str) -> list:
        return [self.model.quantities[c] for c in self.model.tables[table].columns
                if self.model.quantities[c].is_input]

    def table(self, name: str) -> dict:
        t = self.model.tables[name]
        cols = self.input_columns(name)
        rows = {"type": "array", "minItems": 1, "items": {"$ref": _REF + f"row_{name}"}}
        unit_props = {q.column: {"type": "string", "description": f"Unit of {q.column} (its dimensions: "
                                                                  f"like {q.unit or 'a plain number'})."}
                      for q in cols if q.kind != "text"}
        known = {
            "rows": dict(rows, description="One mapping per row."),
            "source": {"type": "string", "description": "Where the rows come from."},
            "as_of": {"$ref": _REF + "date"},
            "units": {"type": "object", "properties": unit_props, "additionalProperties": False,
                      "description": "Units the rows are written in, per column (default: each column's display unit)."},
            "note": {"type": "string"},
            "import": {"description": "Benchmark result files to read the rows from (globs relative to the plan's "
                                      "folder): vLLM --save-result JSON, GuideLLM benchmarks.json, or CSV.",
                       "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
            "select": {"type": "object", "minProperties": 1,
                       "description": "With import: the one configuration to read when the files hold several "
                                      "(runs of different model_id, tensor_parallel_size, max_concurrency, "
                                      "max_num_seqs, ... are separate series), e.g. {max_concurrency: 16}."},
            "transferred": {"type": "object", "required": ["ratio", "reason"], "additionalProperties": False,
                            "properties": {"ratio": {"type": "number", "exclusiveMinimum": 0}, "reason": {"type": "string"}},
                            "description": "With import: the files measured another deployment (model or "
                                           "parallelism); the plan's serves ratio x the benchmarked rate, for reason."},
        }
        props = {k: known.get(k, {}) for k in plan_module.TABLE_KEYS}
        if "as_of" in props and props["as_of"]:
            props["as_of"] = {"description": "The date the values (e.g. prices) were read; `capplan check` "
                                             "warns when it is old.", "allOf": [{"$ref": _REF + "date"}]}
        spec = {"type": "object", "properties": props, "additionalProperties": False}
        sources = [k for k in ("rows", "import") if k in props]
        if len(sources) == 1:
            spec["required"] = sources
        else:
            spec["anyOf"] = [{"required": [k]} for k in sources]
        return {"description": f"{t.title}: {t.description}", "anyOf": [rows, spec]}

    def row(self, name: str) -> dict:
        props, required = {}, []
        for q in self.input_columns(name):
            unit = q.unit or "none (a plain number)"
            if q.kind == "text":
                props[q.column] = {"type": ["string", "number"], "description": q.description}
            else:
                props[q.column] = {"description": f"{q.description}. Unit: {unit}." + (" Optional." if q.optional else "")
                                   + _domain_text(q), "allOf": [{"$ref": _REF + "cell"}] + _domain(q)}
            if q.column in self.slo_names:
                props[q.column]["description"] += " Required when the plan has this SLO."
            elif not q.optional:
                required.append(q.column)
        meta = {"source": {"type": "string", "description": "Where this row comes from."},
                "as_of": {"description": "Date of this row's values (overrides the table's as_of).",
                          "allOf": [{"$ref": _REF + "date"}]},
                "note": {"type": "string"}}
        for key in plan_module.ROW_META:
            props[key] = meta.get(key, {})
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}

    # -- scenarios and expectations ------------------------------------------------------------
    def cell_pattern(self, table: str, columns: list[str]) -> str:
        return rf"^{table}\[[^\]]+\]\.({'|'.join(columns)})$"

    def scenarios(self) -> dict:
        set_patterns = {}
        for name in self.model.tables:
            for q in self.input_columns(name):
                if q.kind != "text":
                    set_patterns[self.cell_pattern(name, [q.column])] = {
                        "description": f"A cell of {name}: {name}[row].{q.column}." + _domain_text(q),
                        "allOf": [{"$ref": _REF + "cell"}] + _domain(q)}
        set_schema = {"type": "object", "description": "Inputs this scenario changes (names as under inputs:, "
                                                       "or a table cell: table[row].column).",
                      "properties": {k: v for k, v in self.inputs()["properties"].items()},
                      "patternProperties": set_patterns, "additionalProperties": False, "minProperties": 1}
        known = {
            "title": {"type": "string"},
            "description": {"type": "string"},
            "set": set_schema,
            "expect": {"$ref": _REF + "expect"},
        }
        scenario = {"type": "object", "properties": {k: known.get(k, {}) for k in plan_module.SCENARIO_KEYS},
                    "required": ["set"], "additionalProperties": False}
        return {"type": ["object", "null"], "description": "What-if scenarios, each evaluated through the same graph.",
                "propertyNames": {"not": {"const": plan_module.NOMINAL}},
                "additionalProperties": scenario}

    def expect(self) -> dict:
        props = {}
        for name, q in self.model.quantities.items():
            if q.table or q.kind == "text":
                continue
            if q.kind == "bool":
                props[name] = {"type": "boolean", "description": f"{q.description.rstrip('.')} (true = PASS)."}
            else:
                props[name] = {"description": f"Expected {name} ({q.description.rstrip('.')}); unit "
                                              f"{q.unit or 'none'}; holds to the digits written.",
                               "allOf": [{"$ref": _REF + "value"}] + _domain(q)}
        patterns = {}
        for name, table in self.model.tables.items():
            cols = [self.model.quantities[c] for c in table.columns]
            numbers = [q for q in cols if q.kind not in ("bool", "text")]
            flags = [q.column for q in cols if q.kind == "bool"]
            free = [q.column for q in numbers if q.domain is None]
            if free:
                patterns[self.cell_pattern(name, free)] = {
                    "description": f"A cell of {name}: {name}[row].column.", "allOf": [{"$ref": _REF + "value"}]}
            for q in numbers:
                if q.domain is not None:
                    patterns[self.cell_pattern(name, [q.column])] = {
                        "description": f"A cell of {name}: {name}[row].{q.column}.",
                        "allOf": [{"$ref": _REF + "value"}] + _domain(q)}
            if flags:
                patterns[self.cell_pattern(name, flags)] = {"type": "boolean",
                                                            "description": f"A pass/fail cell of {name}."}
        return {"type": ["object", "null"], "properties": props, "patternProperties": patterns,
                "additionalProperties": False}

    # -- switch-dependent quantities -----------------------------------------------------------
    def switch_rules(self) -> list[dict]:
        """For each case of a switch the plan chooses (sizing:, or the model's
        attention via model:), forbid what does not exist there and require
        the inputs that must be given."""
        rules = []
        for key in plan_module.PLAN_SWITCHES:
            for case in self.switch_cases.get(key, []):
                condition = {"properties": {key: {"const": case}}}
                if case != self.defaults[key]:
                    condition["required"] = [key]
                restriction = self.restrict(key, case, required=key == "sizing")
                if (key, case) in (("sizing", candidates.ESTIMATE), ("topology", "disaggregated")):
                    # its λ* (the pools' rates) is the candidates' estimate
                    restriction["required"] = [*restriction.get("required", ()), candidates.SECTION]
                if restriction:
                    rules.append({"$comment": f"{key}: {case}", "if": condition, "then": restriction})
        for case in self.switch_cases.get("attention", []):
            ids = [cid for cid in catalog.ids("model")
                   if (catalog.lookup("model", cid).attention or self.defaults["attention"]) == case]
            restriction = self.restrict("attention", case, required=False)
            if ids and restriction:
                rules.append({"$comment": f"model: (one with {case} attention)",
                              "if": {"properties": {"model": {"enum": ids}}, "required": ["model"]},
                              "then": restriction})
        return rules

    def restrict(self, switch: str, case: str, required: bool) -> dict:
        absent_inputs = {n: False for n in self.settable() if self.excluded(n, switch, case)}
        absent_tables = {t: False for t in self.model.tables if self.excluded(t, switch, case)}
        present_tables = [t for t in self.model.tables if not self.excluded(t, switch, case)
                          and t not in FROM_SECTIONS]
        props: dict = {}
        inputs: dict = {}
        if absent_inputs:
            inputs["properties"] = absent_inputs
        if required and self.required_inputs(case):
            inputs["required"] = self.required_inputs(case)
        if inputs:
            props["inputs"] = inputs
        tables: dict = {}
        if absent_tables:
            tables["properties"] = absent_tables
        if required:
            tables["required"] = present_tables
        if tables:
            props["tables"] = tables
        if absent_inputs:
            props["scenarios"] = {"additionalProperties": {"properties": {"set": {"properties": absent_inputs}}}}
        if not props:
            return {}
        out = {"properties": props}
        if required:
            out["required"] = ["tables"] + (["inputs"] if self.required_inputs(case) else [])
        return out


def _domain(q: Quantity) -> list[dict]:
    """A reference to the quantity's domain rule ([] without a domain)."""
    return [{"$ref": _REF + "domains/" + q.name}] if q.domain else []


def _domain_rule(q: Quantity) -> dict:
    """The domain as keywords for the number form of a value; the same rule
    applies to ``value:`` of the ``{value, source, ...}`` form (keywords such
    as ``minimum`` ignore a mapping, ``properties`` ignores a number). The
    description is the loader's sentence, which :func:`validate` reuses as the message."""
    return {"description": q.domain.sentence(q.name), **q.domain.json_schema(),
            "properties": {"value": {"$ref": _REF + "domains/" + q.name}}}


def _domain_text(q: Quantity) -> str:
    if q.domain is None:
        return ""
    return f" Must be {q.domain.words()}: {q.domain.why} (checked here for a plain number)."


def _spellings(kind: str) -> list[str]:
    """The names a plan may give an entry as written: ids, names, aliases, Hugging Face ids (the
    loader also accepts them in other case and spacing, which an enum cannot say)."""
    return sorted({n for entry in catalog.entries(kind) for n in catalog.names(entry)})


def _catalog_list(kind: str) -> str:
    return "Known: " + ", ".join(f"{cid} ({catalog.lookup(kind, cid).name})" for cid in catalog.ids(kind)) + "."
