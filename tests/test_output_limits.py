"""Outputs are bounded by limits the inputs are held to (issue 37, item 3).

A traffic profile's intervals, a plan's scenarios and their product are
refused at load, before anything is evaluated, with the limit and where it is
stated; whatever else makes an output large meets the output budget
(``capplan.build.MAX_OUTPUT_BYTES``), refused before a byte is written.
"""

from __future__ import annotations

import re

import yaml
from conftest import BASE_PLAN

from capplan import build as builder


def _plan(**changes) -> dict:
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan.update(changes)
    return plan


def _traffic_plan(tmp_path, rows: int, scenarios: int = 0) -> dict:
    (tmp_path / "plans").mkdir(exist_ok=True)
    lines = "".join(f"{h},{10 + h % 24}\n" for h in range(rows))
    (tmp_path / "plans" / "year.csv").write_text("time,arrival_rate\n" + lines, encoding="utf-8")
    plan = _plan(traffic={"file": "year.csv", "source": "a test"})
    del plan["inputs"]["peak_arrival_rate"], plan["inputs"]["peak_to_average_ratio"]
    plan["scenarios"] = {f"s{i}": {"set": {"rho_target": 0.6}} for i in range(scenarios)}
    return plan


def test_a_profile_longer_than_an_hourly_year_is_refused_naming_the_limit(tmp_path, write_plan, run_main):
    write_plan(_traffic_plan(tmp_path, 8_761), name="p")
    code, out, err = run_main("eval", "plans/p.yaml")
    assert (code, out) == (1, "")
    assert "traffic.file: year.csv: more than 8,760 rows, the intervals of an hourly year a profile may have" in err
    assert "resample it to a longer step" in err


def test_an_hourly_year_in_five_evaluations_is_refused_before_any_is_evaluated(tmp_path, write_plan, run_main):
    write_plan(_traffic_plan(tmp_path, 8_760, scenarios=4), name="p")
    code, _, err = run_main("build")
    assert code == 1
    assert ("traffic: 8,760 intervals in each of 5 evaluations (the plan and its scenarios) make 43,800 interval "
            "rows, more than the 35,040 a plan may have (docs/limits.md)") in err
    assert not (tmp_path / "out" / "p.xlsx").exists()


def test_more_scenarios_than_a_plan_may_have_are_refused(write_plan, run_main):
    write_plan(_plan(scenarios={f"s{i}": {"set": {"rho_target": 0.6}} for i in range(1_000)}), name="p")
    code, _, err = run_main("eval", "plans/p.yaml")
    assert code == 1 and "scenarios: 1,000 scenarios, more than the 999 a plan may have (docs/limits.md)" in err


def test_an_output_over_the_budget_is_refused_and_nothing_is_written(tmp_path, write_plan, run_main, monkeypatch):
    write_plan(_plan(), name="p")
    assert run_main("build")[0] == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    write_plan(_plan(title="A plan with another title"), name="p")
    monkeypatch.setattr(builder, "MAX_OUTPUT_BYTES", 2 ** 20 // 50)
    code, _, err = run_main("build")
    assert code == 1
    assert re.search(r"plans/p\.yaml: out/p\.\w+ would hold [\d.]+ MiB, more than the 0\.02 MiB an output may hold "
                     r"\(docs/limits\.md\)", err), err
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == before
