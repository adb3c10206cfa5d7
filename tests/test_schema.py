"""The plan JSON Schema: generated from the model, shipped, and as strict as the loader."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from conftest import BASE_PLAN, MAIN_PLAN, ROOT

from capplan.cli import main
from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading.plan import load
from capplan.review import schema

PLANS = sorted((ROOT / "plans").glob("*.yaml"))


def test_shipped_copy_is_current():
    assert schema.SHIPPED.exists(), "run `capplan schema --out src/capplan/plan.schema.json`"
    assert schema.SHIPPED.read_text(encoding="utf-8") == schema.text(), \
        "the shipped plan schema is stale: run `capplan schema --out src/capplan/plan.schema.json`"


def test_the_schema_is_a_valid_draft7_schema():
    jsonschema.Draft7Validator.check_schema(schema.generate())


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
def test_every_plan_validates_and_points_at_the_schema(path):
    assert schema.validate(yaml.safe_load(path.read_text())) == []
    first = path.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../src/capplan/plan.schema.json"
    target = path.parent / first.split("$schema=")[1]
    assert target.read_text(encoding="utf-8") == schema.text()      # the repository copy editors read


def test_misspelt_input_name_is_rejected():
    plan = yaml.safe_load(MAIN_PLAN.read_text())
    plan["inputs"]["peak_arival_rate"] = plan["inputs"].pop("peak_arrival_rate")
    errors = schema.validate(plan)
    assert ("inputs: Additional properties are not allowed ('peak_arival_rate' was unexpected); "
            "did you mean peak_arrival_rate") in errors[0]
    assert "inputs: 'peak_arrival_rate' is a required property" in errors


def test_descriptions_carry_units_and_tags():
    props = schema.generate()["definitions"]["inputs"]["properties"]
    assert "Unit: req/s" in props["peak_arrival_rate"]["description"]
    assert "Tag: assumption" in props["peak_arrival_rate"]["description"]
    assert props["gpu_memory_utilization"]["default"] == 0.9
    assert "pending measurement" in props["hbm_efficiency"]["description"]
    pin = props["instance_max_rate"]["description"]
    assert "Derived, unit req/s" in pin and "pins the value" in pin
    assert "load_sweep: instance_max_rate * rho_target" in props["safe_rate_per_replica"]["description"]


@pytest.mark.parametrize("value", [60, "60 req/s", "1,200 req/min", {"value": "60 req/s", "source": "forecast"},
                                   {"value": 0.76, "status": "pending", "tag": "measurement",
                                    "date": "2026-11-01", "note": "n"}])
def test_value_forms_are_accepted(value):
    plan = copy.deepcopy(BASE_PLAN)
    plan["inputs"]["peak_arrival_rate"] = value
    assert schema.validate(plan) == []


def _broken(change):
    plan = copy.deepcopy(BASE_PLAN)
    change(plan)
    return plan


CASES = {
    "top-level key": (lambda p: p.update(inptus={}), "Additional properties are not allowed ('inptus'"),
    "input field": (lambda p: p["inputs"].update(rho_target={"value": 0.7, "sorce": "x"}), "'sorce' was unexpected"),
    "status": (lambda p: p["inputs"].update(rho_target={"value": 0.7, "status": "done"}), "'done' is not one of"),
    "tag": (lambda p: p["inputs"].update(rho_target={"value": 0.7, "tag": "guess"}), "'guess' is not one of"),
    "value text": (lambda p: p["inputs"].update(rho_target="seventy"), "'seventy' is not a number with an optional unit"),
    "table column": (lambda p: p["tables"]["classes"]["rows"][0].update(wieght=1), "'wieght' was unexpected"),
    "table key": (lambda p: p["tables"]["classes"].update(sorce="x"), "'sorce' was unexpected"),
    "missing column": (lambda p: p["tables"]["classes"]["rows"][0].pop("weight"), "'weight' is a required property"),
    "unknown table": (lambda p: p["tables"].update(clases={"rows": []}), "'clases' was unexpected"),
    "missing table": (lambda p: p["tables"].pop("deployments"), "'deployments' is a required property"),
    "catalog id": (lambda p: p.update(gpu="a100"), "'a100' is not one of"),
    "scenario key": (lambda p: p.update(scenarios={"s": {"sett": {"peak_arrival_rate": 90}}}), "'sett' was unexpected"),
    "scenario set": (lambda p: p.update(scenarios={"s": {"set": {"peak_arival_rate": 90}}}),
                     "'peak_arival_rate' was unexpected"),
    "scenario named nominal": (lambda p: p.update(scenarios={"nominal": {"set": {"peak_arrival_rate": 90}}}),
                               "should not be valid"),
    "expect name": (lambda p: p.update(expect={"activ_gpus": 9}), "'activ_gpus' was unexpected"),
    "expect cell column": (lambda p: p.update(expect={"deployments[node8].node": 2}), "was unexpected"),
    "sizing switch": (lambda p: p.update(sizing="littles_law"),
                      "'load_sweep' does not exist in a plan with sizing: littles_law"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_schema_rejects_what_the_loader_rejects(name, tmp_path):
    change, message = CASES[name]
    plan = _broken(change)
    errors = schema.validate(plan)
    assert any(message in e for e in errors), errors
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    with pytest.raises(CapplanError):
        load(path, standard_model())


def test_cells_and_pins_in_scenarios_and_expect():
    plan = copy.deepcopy(BASE_PLAN)
    plan["scenarios"] = {"long": {"title": "Long prompts", "set": {
        "classes[chat].prompt_tokens": 2048,
        "instance_max_rate": {"value": "3 req/s", "tag": "assumption"}},
        "expect": {"active_gpus": 29, "deployments[node8].nodes": 4}}}
    plan["expect"] = {"active_gpus": 21, "bandwidth_gate": True, "deployments[node8].monthly_cost": "87,840 USD",
                      "load_sweep[2].meets_slo": True}
    assert schema.validate(plan) == []
    plan["expect"]["bandwidth_gate"] = "yes"
    assert any("bandwidth_gate" in e for e in schema.validate(plan))


def test_little_law_needs_its_inputs():
    plan = copy.deepcopy(BASE_PLAN)
    plan["sizing"] = "littles_law"
    del plan["tables"]["load_sweep"]
    assert "inputs: 'decode_throughput' is a required property" in schema.validate(plan)
    plan["inputs"]["decode_throughput"] = {"value": "1000 tok/s", "status": "pending"}
    assert schema.validate(plan) == []
    plan["inputs"]["rho_target"] = 0.7
    assert "inputs: 'rho_target' does not exist in a plan with sizing: littles_law" in schema.validate(plan)


def test_schema_command(tmp_path, capsys):
    target = tmp_path / "plan.schema.json"
    assert main(["schema", "--out", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == schema.text()
    assert main(["schema", "--check", "--out", str(target)]) == 0
    target.write_text("{}")
    capsys.readouterr()
    assert main(["schema", "--check", "--out", str(target)]) == 1
    assert "is out of date: run `capplan schema --out" in capsys.readouterr().err
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == schema.text()
