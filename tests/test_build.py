"""build / check / eval end to end: determinism, staleness, expectations, the record."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from conftest import MAIN_PLAN, RETAIL_PLAN


@pytest.fixture
def project(tmp_path):
    (tmp_path / "plans").mkdir()
    for plan in (MAIN_PLAN, RETAIL_PLAN):
        shutil.copy(plan, tmp_path / "plans" / plan.name)
    return tmp_path


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_build_twice_is_byte_identical(project, cli):
    assert cli("build")[0] == 0
    first = _snapshot(project / "out")
    assert {"llama3-8b-a100-chat-mix.md", "llama3-8b-a100-chat-mix.json",
            "llama3-8b-a100-retail-chatbot.md"} <= set(first)
    code, out, _ = cli("build")
    assert code == 0 and "unchanged" in out
    assert _snapshot(project / "out") == first


def test_committed_outputs_are_current(cli):
    from conftest import ROOT
    code, out, err = cli("check", cwd=ROOT)
    assert code == 0, err
    assert "3 plan(s) OK" in out


def test_check_reports_failed_expectations(project, cli):
    path = project / "plans" / "llama3-8b-a100-chat-mix.yaml"
    text = path.read_text().replace("  active_gpus: 9\n", "  active_gpus: 8\n")
    text = text.replace("decode_step_time_bound: 10.96 ms", "decode_step_time_bound: 10.9 ms")
    path.write_text(text)
    assert cli("build")[0] == 0          # build renders; check enforces expectations
    code, _, err = cli("check")
    assert code == 1
    assert "expect active_gpus: expected 8, got 9 GPUs (= active_replicas * gpus_per_replica)" in err
    assert "expect decode_step_time_bound: expected 10.9 ms, got 10.961322 ms (= decode_bytes_per_step / (hbm_bandwidth * gpus_per_replica * hbm_efficiency))" in err


def test_expectations_hold_to_the_digits_written(project, cli):
    path = project / "plans" / "llama3-8b-a100-chat-mix.yaml"
    plan = yaml.safe_load(path.read_text())
    plan["expect"] = {"decode_step_time_bound": "10.96 ms", "kv_pool": "54.98 GiB", "kv_token_capacity": 450379,
                      "deployments[aws-p4de.24xlarge].monthly_cost": "59,965.44 USD", "bandwidth_gate": True}
    plan["scenarios"]["surge_50"]["expect"] = {"active_gpus": 13}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    assert cli("build")[0] == 0
    assert cli("check")[0] == 0
    plan["scenarios"]["surge_50"]["expect"] = {"active_gpus": 12}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    cli("build")
    code, _, err = cli("check")
    assert code == 1 and "scenario surge_50: expect active_gpus: expected 12, got 13 GPUs" in err


def test_eval_json_contract(cli):
    code, out, _ = cli("eval", MAIN_PLAN, "--json")
    assert code == 0
    doc = json.loads(out)
    nominal = doc["scenarios"]["nominal"]
    item = nominal["quantities"]["safe_rate_per_replica"]
    assert item["value"] == pytest.approx(7.0)
    assert {k: v for k, v in item.items() if k != "value"} == {
        "unit": "req/s", "tag": "derived", "formula": "instance_max_rate * rho_target",
        "depends_on": ["e2e_p99_slo", "error_budget", "load_sweep", "min_delivered_share", "rho_target",
                       "tpot_p95_slo", "ttft_p95_slo"]}
    assert nominal["quantities"]["hbm_efficiency"]["pending"] is True
    assert nominal["quantities"]["decode_step_time_bound"]["pending_inputs"] == ["hbm_efficiency"]
    assert nominal["quantities"]["layers"] == {"value": 32, "unit": "", "tag": "fact", "origin": "catalog",
                                               "source": nominal["quantities"]["layers"]["source"]}
    assert nominal["tables"]["deployments"]["columns"]["nodes"]["formula"] == "ceil(resilient_gpus / gpus_per_node)"
    assert [r["meets_slo"] for r in nominal["tables"]["load_sweep"]["rows"]] == [True] * 5 + [False] * 2


def test_eval_unknown_scenario(cli):
    code, _, err = cli("eval", MAIN_PLAN, "--scenario", "surge_5")
    assert code == 1 and "no scenario 'surge_5'" in err and "surge_50" in err


def test_record_shows_derivations_tags_and_pending(cli, project):
    assert cli("build")[0] == 0
    text = (project / "out" / "llama3-8b-a100-chat-mix.md").read_text()
    assert "**Decision.** 9 GPUs carry the 60 req/s peak; 10 GPUs with redundancy." in text
    assert "$59,965.44 a month, $9.36 per 1M output tokens" in text
    # formula -> substituted numbers -> result, with tag
    assert ("| $t_{mem}$ `decode_step_time_bound` | **10.96 ms** ⚠ | $t_{mem} = \\frac{D_{step}}{BW_{peak} "
            "\\cdot G_{rep} \\cdot \\eta_{BW}}$<br>= 16.99 GB / (2,039 GB/s/GPU × 1 GPU × 0.76)"
            "<br><sub>rests on measurements: hbm_efficiency (pending); assumptions: classes</sub> | derived |") in text
    assert "| measurement ⚠ pending |" in text
    assert "`hbm_efficiency` = 0.76" in text
    assert "**Gate 2: memory bandwidth (decode): PASS** — 10.96 ms ≤ 25 ms." in text
    assert "`instance_max_rate` = 7.5 req/s (pins a derived quantity)" in text
    graph = text[text.index("```mermaid\nflowchart LR"):]
    for line in ('  subgraph memory["Gate 1: memory"]', '    hbm_efficiency["hbm_efficiency"]:::pending',
                 '    T_load_sweep["load_sweep (table)"]:::measurement', "  kv_pool --> kv_token_capacity",
                 "  T_load_sweep --> instance_max_rate", "  resilient_gpus --> T_deployments"):
        assert line + "\n" in graph
    for heading in ("7.1 Workload", "7.2 Physical", "7.3 Empirical", "7.4 Bin-packed", "7.5 Monthly TCO",
                    "7.6 Sensitivity", "Provenance of every input"):
        assert heading in text
    retail = (project / "out" / "llama3-8b-a100-retail-chatbot.md").read_text()
    assert "**Gate 2: memory bandwidth (decode): FAIL**" in retail
    assert "7.3 Empirical" in retail and "Little's-law sizing" in retail and "Load sweep" not in retail
