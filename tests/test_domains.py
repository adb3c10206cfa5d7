"""Domains live in the model: every input declares the values it can take and why.

One declaration in ``model/quantities.yaml`` refuses a plan value on every
route (inputs, {value: ...}, scenario set:, pins, table cells, set: cells,
expect:, the catalog; the plan routes are "domain:" cases of
test_bad_input.py), bounds the JSON Schema and validates the workbook's input
cells, which LibreOffice keeps.
"""

from __future__ import annotations

import dataclasses
import io
import math

import pytest
import recalc
from conftest import MAIN_PLAN
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

from capplan.language import domains, units
from capplan.engine.evaluate import evaluate_all
from capplan.language.model import model_from_dict, standard_model
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.language import yamlfile
from capplan.loading.plan import load
from capplan.rendering.workbook import to_bytes
from capplan.review import schema
from plan_edits import workbook_of

GMU = "gpu_memory_utilization must be in (0, 1]: the engine cannot use more than the whole GPU"


# ---------------------------------------------------------------------------
# The declaration
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec, unit, words, inside, outside", [
    ({"range": "(0, 1]"}, "", "in (0, 1]", [1e-9, 0.5, 1], [0, 1.0000001, -1, math.nan]),
    ({"range": "[0, 1)"}, "", "in [0, 1)", [0, 0.999], [1, -1e-12]),
    ({"range": "positive"}, "req/s", "positive", [1e-12, 1e12], [0, -5]),
    ({"range": "non-negative", "integer": True}, "GPU", "a non-negative whole number", [0, 3], [-1, 0.5]),
    ({"range": "[1, inf)"}, "", "at least 1", [1, 1e300], [0.999]),
    ({"range": "(-inf, 0)"}, "", "less than 0", [-1], [0]),
    ({"range": "(0, 31] day"}, "day", "in (0, 31] day", [31, 0.5], [0, 31.5]),
    ({"range": "[1, 8]", "integer": True}, "", "a whole number in [1, 8]", [1, 8], [0, 9, 2.5]),
])
def test_a_domain_says_what_it_holds(spec, unit, words, inside, outside):
    domain = domains.parse(dict(spec, why="a reason"), unit)
    assert domain.words() == words
    assert all(domain.contains(v) for v in inside)
    assert not any(domain.contains(v) for v in outside)


@pytest.mark.parametrize("spec, unit, message", [
    ("(0, 1]", "", "domain must be a mapping {range: ..., integer: true|false, why: ...}"),
    ({"range": "(0, 1]"}, "", "domain needs 'why:'"),
    ({"range": "(0, 1]", "why": " "}, "", "domain needs 'why:'"),
    ({"range": "(0, 1]", "why": "x" * 200}, "", "domain 'why:' is 200 characters; keep it under 150"),
    ({"why": "w"}, "", "domain needs 'range:'"),
    ({"range": "0 to 1", "why": "w"}, "", "domain range '0 to 1' is not positive, non-negative or an interval"),
    ({"range": "[0, inf]", "why": "w"}, "", "an infinite end is open"),
    ({"range": "(1, 1]", "why": "w"}, "", "is empty or a single point"),
    ({"range": "(0, 1]", "integer": "yes", "why": "w"}, "", "domain 'integer:' must be true or false"),
    ({"range": "(0, 1]", "why": "w", "max": 2}, "", "unknown domain field(s) max"),
    ({"range": "(0, 31]", "why": "w"}, "day", "must name its unit, the quantity's display unit: \"(0, 31] day\""),
    ({"range": "(0, 744] h", "why": "w"}, "day", "is written in 'h'; write it in the quantity's display unit, 'day'"),
    ({"range": "(0, 1] s", "why": "w"}, "", "names a unit, but the quantity has none"),
])
def test_a_malformed_declaration_is_refused(spec, unit, message):
    with pytest.raises(CapplanError) as err:
        domains.parse(spec, unit)
    assert message in str(err.value)


def test_bounds_without_a_unit_need_none():
    """0 and inf mean the same in every unit, so 'positive' on a rate needs no unit."""
    assert domains.parse({"range": "[0, inf)", "why": "w"}, "GiB").words() == "at least 0"


# ---------------------------------------------------------------------------
# The model: every input has one; a new input cannot forget it
# ---------------------------------------------------------------------------

def test_every_input_and_input_column_declares_a_domain():
    model = standard_model()
    inputs = [q for q in model.quantities.values() if q.is_input and q.kind not in ("text", "bool")]
    assert len(inputs) > 40
    assert [q.name for q in inputs if q.domain is None] == []
    got = {n: model.quantities[n].domain.words() for n in
           ("gpu_memory_utilization", "rho_target", "classes.weight", "paged_tail_waste", "layers",
            "deployments.gpus_per_node", "failed_gpus", "redundancy_replicas", "instance_max_rate")}
    assert got == {"gpu_memory_utilization": "in (0, 1]", "rho_target": "in (0, 1]", "classes.weight": "in [0, 1]",
                   "paged_tail_waste": "in [0, 1)", "layers": "a positive whole number",
                   "deployments.gpus_per_node": "a positive whole number",
                   "failed_gpus": "a non-negative whole number", "redundancy_replicas": "a non-negative whole number",
                   "instance_max_rate": "positive"}


def test_every_catalog_value_lies_in_its_domain():
    model = standard_model()
    for kind in catalog.KINDS:
        for cid in catalog.ids(kind):
            for name, spec in catalog.lookup(kind, cid).values.items():
                q = model.quantities[name]
                domains.require(q, units.parse_value(spec["value"], q.unit), spec["value"])


MODEL_TEXT = """\
switches: {}
groups:
  g:
    quantities:
      share:
        unit: ""
        tag: policy
        default: 0.5
        description: A share.
{domain}
"""


@pytest.mark.parametrize("domain, message", [
    ("", ":5: quantities.share: an input must declare its domain"),
    ("        domain: {range: \"(0, 1]\"}", ":10: quantities.share.domain: domain needs 'why:'"),
    ("        domain: {range: \"(0.6, 1]\", why: w}",
     ":8: quantities.share.default: default: share must be in (0.6, 1]: w; got 0.5"),
])
def test_the_model_loader_refuses_a_missing_or_bad_domain_with_its_line(domain, message):
    doc = yamlfile.parse(MODEL_TEXT.replace("{domain}", domain), "model/q.yaml")
    with pytest.raises(CapplanError) as err:
        model_from_dict(doc.data, source=doc.file, lines=doc.lines)
    assert str(err.value).startswith("model/q.yaml" + message), str(err.value)


def test_text_and_derived_quantities():
    base = {"n": {"unit": "", "tag": "fact", "domain": {"range": "positive", "why": "w"}},
            "d": {"unit": "", "formula": "n * 2"}}
    model = model_from_dict({"groups": {"g": {"quantities": base}}})
    assert model.quantities["d"].domain is None       # a derived quantity may go without one
    with pytest.raises(CapplanError, match="a bool quantity takes no domain"):
        model_from_dict({"groups": {"g": {"quantities": dict(base, b={
            "unit": "", "kind": "bool", "formula": "n > 1", "domain": {"range": "positive", "why": "w"}})}}})


# ---------------------------------------------------------------------------
# A plan (each refused route is a "domain:" case of test_bad_input.py)
# ---------------------------------------------------------------------------

def test_values_inside_the_domain_pass_in_any_unit(base_plan, write_plan):
    base_plan["inputs"].update(days_per_month="732 h", gpu_memory_utilization=1, failed_gpus="0 GPU")
    plan = load(write_plan(base_plan), standard_model())
    assert plan.nominal.inputs["days_per_month"].value == 732 * 3600


def test_a_catalog_value_outside_its_domain_names_the_catalog(base_plan, write_plan, monkeypatch):
    real = catalog.lookup

    def broken(kind, cid):
        entry = real(kind, cid)
        if kind != "model":
            return entry
        return dataclasses.replace(entry, values=dict(entry.values, layers={"value": 31.5}))

    monkeypatch.setattr(catalog, "lookup", broken)
    with pytest.raises(CapplanError) as err:
        load(write_plan(base_plan), standard_model())
    assert str(err.value) == ("model/catalog/models.yaml: llama-3-8b.values.layers: layers must be a positive "
                              "whole number: a model has whole layers; got 31.5")


# ---------------------------------------------------------------------------
# The JSON Schema: the same rule for the number form of a value
# ---------------------------------------------------------------------------

def test_the_schema_refuses_what_the_domain_refuses(base_plan):
    base_plan["inputs"]["gpu_memory_utilization"] = 1.5
    base_plan["tables"]["classes"]["rows"][1]["weight"] = -0.3
    base_plan["scenarios"] = {"s": {"set": {"failed_gpus": 0.5, "deployments[node8].gpus_per_node": 0,
                                            "rho_target": {"value": 1.01, "source": "x"}}}}
    assert schema.validate(base_plan) == [
        f"inputs.gpu_memory_utilization: {GMU}; got 1.5",
        ("scenarios.s.set.deployments[node8].gpus_per_node: deployments.gpus_per_node must be a positive whole "
         "number: a node holds whole GPUs; got 0"),
        "scenarios.s.set.failed_gpus: failed_gpus must be a non-negative whole number: GPUs fail whole; got 0.5",
        ("scenarios.s.set.rho_target.value: rho_target must be in (0, 1]: a share of measured capacity; above 1 "
         "queues grow without bound; got 1.01"),
        "tables.classes.rows.1.weight: classes.weight must be in [0, 1]: a share of all requests; got -0.3",
    ]


def test_a_value_with_a_unit_is_left_to_the_loader(base_plan, write_plan):
    """JSON Schema cannot range-check '-60 req/s' (a string); the schema says so, the loader refuses it."""
    base_plan["inputs"]["peak_arrival_rate"] = "-60 req/s"
    assert schema.validate(base_plan) == []
    assert "a value with a unit is checked against the quantity's domain when capplan loads the plan" in \
        schema.generate()["definitions"]["number_with_unit"]["description"]
    with pytest.raises(CapplanError, match="peak_arrival_rate must be positive"):
        load(write_plan(base_plan), standard_model())


def test_schema_and_loader_refuse_the_same_numbers(base_plan, write_plan):
    """For every input of the test plan: its first number outside the domain, through both."""
    model = standard_model()
    plan = load(write_plan(base_plan), model)
    names = [n for n in model.active(plan.switches) if model.quantities[n].table is None
             and model.quantities[n].is_input and model.quantities[n].kind != "text"]
    assert len(names) > 25
    for name in names:
        domain = model.quantities[name].domain
        outside = domain.low if domain.low_open else domain.low - 1
        broken = dict(base_plan, inputs=dict(base_plan["inputs"], **{name: outside}))
        assert schema.validate(broken) == [f"inputs.{name}: {domain.sentence(name)}; got {outside!r}"]
        with pytest.raises(CapplanError) as err:
            load(write_plan(broken), model)
        assert f"{domain.sentence(name)}; got " in str(err.value)


# ---------------------------------------------------------------------------
# The workbook: a data validation on every input cell whose quantity has a domain
# ---------------------------------------------------------------------------

def _rules(wb) -> dict:
    """(sheet, cell) -> the data validation that covers it."""
    out = {}
    for ws in wb.worksheets:
        for rule in ws.data_validations.dataValidation:
            for cells in rule.sqref.ranges:
                for row in range(cells.min_row, cells.max_row + 1):
                    for col in range(cells.min_col, cells.max_col + 1):
                        out[(ws.title, f"{get_column_letter(col)}{row}")] = rule
    return out


@pytest.fixture(scope="module")
def chat_workbook():
    model = standard_model()
    plan = load(MAIN_PLAN, model)
    return workbook_of(plan, evaluate_all(plan, model), model)


def test_every_input_cell_with_a_domain_is_validated(chat_workbook):
    model = standard_model()
    built = chat_workbook
    rules = _rules(load_workbook(io.BytesIO(to_bytes(built))))
    inputs = [c for c in built.cells if c.role in ("input", "override", "pinned", "link")
              and model.quantities[c.quantity].domain is not None]
    assert len({c.role for c in inputs}) == 4 and len(inputs) > 300
    for c in inputs:
        rule = rules.pop((c.sheet, c.coordinate))
        domain = model.quantities[c.quantity].domain
        assert rule.error == domain.sentence(c.quantity) + "." and rule.showErrorMessage
        assert rule.errorStyle == "stop" and rule.errorTitle == c.quantity
    assert rules == {}, f"validations on cells that are no domain input: {sorted(rules)[:5]}"


def test_the_rule_matches_the_domain(chat_workbook):
    rules = _rules(chat_workbook.workbook)

    def rule(quantity, row=None):
        return rules[chat_workbook.cell("nominal", quantity, row).sheet, chat_workbook.cell("nominal", quantity, row).coordinate]

    cell = chat_workbook.cell("nominal", "gpu_memory_utilization").coordinate
    gmu = rule("gpu_memory_utilization")
    assert (gmu.type, gmu.formula1) == ("custom", f"AND(ISNUMBER({cell}),{cell}>0,{cell}<=1)")
    weight = rule("classes.weight", 0)
    assert (weight.type, weight.operator, weight.formula1, weight.formula2) == ("decimal", "between", "0", "1")
    nodes = rule("deployments.gpus_per_node", 1)
    assert (nodes.type, nodes.operator, nodes.formula1) == ("whole", "greaterThan", "0")


def _summary(wb) -> set:
    """What a user meets when typing into a cell, per cell: kind, bounds, message."""
    out = set()
    for (sheet, cell), rule in _rules(wb).items():
        operator = None if rule.type == "custom" else rule.operator
        second = rule.formula2 if operator == "between" else None
        out.add((sheet, cell, rule.type, operator, rule.formula1, second, rule.error, rule.errorStyle,
                 bool(rule.showErrorMessage)))
    return out


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_libreoffice_keeps_every_validation(chat_workbook, tmp_path):
    source = tmp_path / "src" / "chat.xlsx"
    source.parent.mkdir()
    source.write_bytes(to_bytes(chat_workbook))
    converted = recalc.recalc([source], tmp_path)[source]
    ours, theirs = _summary(chat_workbook.workbook), _summary(load_workbook(converted))
    assert len(ours) > 300
    assert theirs == ours
