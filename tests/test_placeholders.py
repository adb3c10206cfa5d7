"""A plan's TODOs are findings (issue 37, item 15): ``check`` warns about each until it is replaced.

``capplan init`` writes its placeholders as texts that start with the word TODO: the
owner, the sources of the traffic forecast and the SLOs, the class mix's source and
the placeholder price's row. Each is recorded among the plan's findings with its file,
line and key, so ``check`` reports it (and ``--strict`` fails) without evaluating the
plan again; the same rule holds for a TODO in any plan, and the reference plans hold none.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import ROOT

from capplan import manifest
from capplan.analysis import pipeline
from capplan.review import check

TODO_TEXT = re.compile(r'"(TODO[^"]*)"')


def _warnings(err: str) -> list[str]:
    return [line.split("warning: ", 1)[1] for line in err.splitlines() if line.startswith("  - warning: ")]


def test_every_todo_init_writes_is_a_check_warning_until_replaced(tmp_path, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    assert run_main("init", "--name", "first", cwd=tmp_path)[0] == 0
    plan = tmp_path / "plans" / "first.yaml"
    text = plan.read_text()
    written = [(number, TODO_TEXT.search(line).group(1)) for number, line in enumerate(text.splitlines(), 1)
               if TODO_TEXT.search(line)]
    assert len(written) == 9              # owner, 2 traffic and 3 SLO sources, decode's, the mix's, the price's
    assert run_main("build", cwd=tmp_path)[0] == 0

    code, out, err = run_main("check", cwd=tmp_path)
    assert code == 0, err
    placeholders = [w for w in _warnings(err) if "a placeholder, not yet replaced" in w]
    assert len(placeholders) == len(written)
    for (number, todo), warning in zip(written, placeholders):
        assert warning.startswith(f"plans/first.yaml:{number}: ") and json.dumps(todo[:60])[1:-1] in warning
    assert {w.split(": ")[1] for w in placeholders} >= {
        "owner", "inputs.ttft_p95_slo.source", "inputs.tpot_p95_slo.source", "inputs.e2e_p99_slo.source",
        "tables.classes.source", "tables.deployments.rows[0].source"}
    assert run_main("check", "--strict", cwd=tmp_path)[0] == 1

    plan.write_text(text.replace('"TODO: ', '"Ours: '))
    assert run_main("build", cwd=tmp_path)[0] == 0
    code, out, err = run_main("check", cwd=tmp_path)
    assert code == 0 and "is a placeholder" not in err and "pending measurements" in err


def test_the_readme_says_what_init_writes(tmp_path, run_main):
    assert run_main("init", "--name", "first", cwd=tmp_path)[0] == 0
    inputs = yaml.safe_load((tmp_path / "plans" / "first.yaml").read_text())["inputs"]
    readme = (ROOT / "README.md").read_text()
    first_hour = readme[readme.index("`capplan init` writes"):readme.index("`gpu:` and `model:` take")]
    for slo in ("ttft_p95_slo", "tpot_p95_slo", "e2e_p99_slo"):
        assert f"`{slo}` {inputs[slo]['value']}" in first_hour
    assert "none has a default" not in first_hour and "starts with the word TODO" in first_hour


def test_a_todo_anywhere_in_a_plan_is_a_placeholder(base_plan, write_plan):
    base_plan["owner"] = "TODO"
    base_plan["inputs"]["peak_arrival_rate"] = {"value": "60 req/s", "note": "  TODO ask sales\nfor a number"}
    base_plan["tables"]["deployments"]["rows"][0]["note"] = "TODO: a quote"
    base_plan["scenarios"] = {"busy": {"set": {"peak_arrival_rate": {"value": "90 req/s", "source": "TODO"}}}}
    base_plan["description"] = "Not a TODO: the word must lead."
    plan = pipeline.load_plan(write_plan(base_plan))
    found = check.placeholders(plan)
    assert [w.split(": ")[1] for w in found] == ["inputs.peak_arrival_rate.note", "tables.deployments.rows[0].note",
                                                 "owner", "scenarios.busy.set.peak_arrival_rate.source"]  # file order
    assert found[0].endswith(': "  TODO ask sales\\nfor a number" is a placeholder, not yet replaced')


@pytest.mark.parametrize("path", sorted((ROOT / "plans").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_reference_plans_hold_no_placeholder(path):
    assert check.placeholders(pipeline.load_plan(path)) == []


def test_a_manifest_entry_without_its_placeholders_is_not_believed(tmp_path):
    entry = manifest.record("plans/p.yaml", "0" * 64, [], {}, {"p.md": b"x"},
                            {"failed_expectations": [], "pending": [], "placeholders": ["p.yaml:1: owner: …"],
                             "decision": ["p.yaml:2: decision: no approver stated; …"], "routing": [], "prices": [],
                             "price_age": 90})
    assert manifest.well_formed(entry)
    for key in ("placeholders", "decision", "routing"):
        kept = entry["findings"][key]
        for bad in (None, "plans/p.yaml:1: owner", [3]):
            entry["findings"][key] = bad
            assert not manifest.well_formed(entry)
        entry["findings"][key] = kept
