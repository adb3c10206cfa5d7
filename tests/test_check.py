"""capplan check as a CI gate: problems fail (exit 1), warnings warn unless --strict."""

from __future__ import annotations

import pytest
import yaml
from conftest import BASE_PLAN, MAIN_PLAN

from capplan.cli import main

MAIN = f"plans/{MAIN_PLAN.name}"


@pytest.fixture
def project(built_project, monkeypatch):
    """A folder with the main plan and its built out/, as the working directory."""
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    return built_project(MAIN_PLAN)


def test_current_outputs_pass_with_warnings(project, run_main):
    code, out, err = run_main("check")
    assert code == 0, err
    assert out == "capplan check: 1 plan(s) OK (units, expectations, out/ current); 2 warning(s)\n"
    assert (f"warning: {MAIN}: 2 pending measurements, placeholders until measured: hbm_efficiency = 0.76 "
            "(line ") in err
    assert "tensor_efficiency = 0.45 (line " in err
    # the decision record names no approver yet (issue #41)
    assert (f"warning: {MAIN}:4: decision: no approver stated; the record shows it as not stated "
            "(name it under decision:)") in err


def test_strict_makes_warnings_fatal(project, run_main):
    code, out, err = run_main("check", "--strict")
    assert code == 1 and out == ""
    assert "capplan check: 2 warning(s) (fatal: --strict)" in err


def test_stale_output(project, run_main):
    record = project / "out" / "llama3-8b-a100-chat-mix.md"
    record.write_text(record.read_text().replace("9 GPUs", "8 GPUs"))
    (project / "out" / "llama3-8b-a100-chat-mix.json").unlink()
    code, _, err = run_main("check")
    assert code == 1
    assert "capplan check: 1 problem(s)" in err
    assert (f"  - {MAIN}: out/llama3-8b-a100-chat-mix.json is missing; out/llama3-8b-a100-chat-mix.md is out of "
            f"date, though out/manifest.json records them as built from these inputs (edited by hand?): "
            f"run `capplan build --force {MAIN}`") in err


def test_failed_expectation_shows_the_derivation(project, run_main):
    path = project / MAIN
    text = path.read_text()
    assert "\n  active_gpus: 9\n" in text
    path.write_text(text.replace("\n  active_gpus: 9\n", "\n  active_gpus: 8\n"))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    assert code == 1
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if l == "  active_gpus: 8")
    assert (f"  - {MAIN}:{line}: expect active_gpus: expected 8, got 9 GPUs (= active_replicas * gpus_per_replica)\n"
            "      derivation: active_gpus = active_replicas * gpus_per_replica = 9 × 1 GPU = 9 GPUs  [derived]\n"
            "      rests on measurements: load_sweep; assumptions: peak_arrival_rate\n"
            f"      full tree: capplan explain {MAIN} active_gpus\n") in err


def test_failed_cell_and_scenario_expectations(project, run_main):
    path = project / MAIN
    plan = yaml.safe_load(path.read_text())
    plan["expect"] = {"deployments[aws-p4de.24xlarge].monthly_cost": "59,000 USD"}
    plan["scenarios"]["surge_50"]["expect"] = {"active_gpus": 12}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    assert code == 1
    assert ("expect deployments[aws-p4de.24xlarge].monthly_cost: expected 59,000 USD, got 59,965.44 USD "
            "(= hourly_cost * hours_per_month)\n"
            "      derivation: deployments[aws-p4de.24xlarge].monthly_cost = hourly_cost * hours_per_month = "
            "$81.92/h × 732 h = $59,965.44  [derived]\n"
            f"      full tree: capplan explain {MAIN} 'deployments[aws-p4de.24xlarge].monthly_cost'") in err
    assert ("scenario surge_50: expect active_gpus: expected 12, got 13 GPUs (= active_replicas * gpus_per_replica)\n"
            "      derivation: active_gpus = active_replicas * gpus_per_replica = 13 × 1 GPU = 13 GPUs  [derived]") in err
    assert f"capplan explain {MAIN} active_gpus --scenario surge_50" in err


def test_unknown_key_fails(project, run_main):
    path = project / MAIN
    text = path.read_text()
    path.write_text(text.replace("\ninputs:\n", "\ninptus:\n", 1))
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if l == "inptus:")
    code, _, err = run_main("check")
    assert code == 1
    assert (f"  - {MAIN}:{line}: inptus: unknown key 'inptus'; did you mean inputs? (plan keys: ") in err


def test_unknown_quantity_fails(project, run_main):
    path = project / MAIN
    path.write_text(path.read_text().replace("  peak_arrival_rate: {", "  peak_arival_rate: {", 1))
    code, _, err = run_main("check")
    assert code == 1
    assert "inputs.peak_arival_rate: unknown quantity 'peak_arival_rate'; did you mean peak_arrival_rate" in err


def test_old_prices_warn(project, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_TODAY", "2027-06-01")
    code, _, err = run_main("check")
    assert code == 0
    line = next(i for i, l in enumerate((project / MAIN).read_text().splitlines(), 1) if l.strip().startswith("as_of:"))
    assert (f"warning: {MAIN}:{line}: tables.deployments.as_of: prices as of 2026-11-01 are 212 days old "
            "(limit 90, today 2027-06-01): re-check node_hourly_cost of aws-p4de.24xlarge, fractional-a100-80gb") in err
    code, _, err = run_main("check", "--max-price-age", "365")
    assert code == 0 and "days old" not in err
    code, _, err = run_main("check", "--strict")
    assert code == 1 and "212 days old" in err


def test_row_dates_and_undated_prices(tmp_path, run_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan["tables"]["deployments"]["rows"] = [
        {"name": "old", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h", "as_of": "2025-01-15"},
        {"name": "fresh", "gpus_per_node": 8, "node_hourly_cost": "30 USD/h", "as_of": "2026-11-20"},
        {"name": "undated", "gpus_per_node": 1, "node_hourly_cost": "2 USD/h"},
    ]
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "p.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    assert code == 0
    assert "tables.deployments.rows[0].as_of: prices as of 2025-01-15 are 685 days old" in err
    assert "of old" in err and "fresh" not in err.split("685 days old")[1].split("\n")[0]
    assert "tables.deployments: no as_of date for the prices of undated; add `as_of: YYYY-MM-DD`" in err


def test_usage_errors(project, run_main, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--max-price-age", "soon"])
    assert exit_.value.code == 2
    capsys.readouterr()
    monkeypatch.setenv("CAPPLAN_TODAY", "yesterday")
    code, _, err = run_main("check")
    assert code == 2 and "CAPPLAN_TODAY must be a date YYYY-MM-DD, got 'yesterday'" in err


def _offers_checked(tmp_path, run_main, monkeypatch, offers):
    """A plan of H100 TP1 candidates on ``offers``, built and checked on 2026-12-01: (path, exit code, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan["gpu"] = "h100-sxm5-80gb"
    plan["candidates"] = {"gpus": ["h100"], "tp": [1], "offers": offers}
    (tmp_path / "plans").mkdir()
    path = tmp_path / "plans" / "p.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    return path, code, err


def test_candidate_offers_prices_are_aged_too(tmp_path, run_main, monkeypatch):
    """A candidates: offer carries its own as_of; check ages it as it ages a deployment row, at the line of the offer."""
    path, code, err = _offers_checked(tmp_path, run_main, monkeypatch, [
        {"name": "stale", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "30 USD/h", "as_of": "2025-06-01"},
        {"name": "fresh", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "31 USD/h", "as_of": "2026-11-20"}])
    assert code == 0
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "name: stale" in l)
    assert (f"plans/p.yaml:{line}: candidates.offers[stale].as_of: prices as of 2025-06-01 are 548 days old "
            "(limit 90, today 2026-12-01): re-check node_hourly_cost of stale") in err
    assert "offers[fresh]" not in err
    assert "days old" not in run_main("check", "--max-price-age", "600")[2]


def test_a_free_price_is_a_finding_at_its_row(tmp_path, run_main, monkeypatch):
    """A deployment or an offer priced at 0 builds ($0.00 a month) and check warns, naming the file,
    the line of the price and the row; --strict fails (issue 37, item 17)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan["tables"]["deployments"]["as_of"] = "2026-11-20"
    plan["tables"]["deployments"]["rows"] = [
        {"name": "rented", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"},
        {"name": "owned", "gpus_per_node": 8, "node_hourly_cost": "0 USD/h"}]
    (tmp_path / "plans").mkdir()
    path = tmp_path / "plans" / "p.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    assert code == 0
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "0 USD/h" in l and "40" not in l)
    assert (f"warning: plans/p.yaml:{line}: tables.deployments.rows[1].node_hourly_cost: owned is priced at 0 "
            "(free: $0.00 a month, cheaper than any other); right only for hardware whose cost is sunk, else give "
            "its node_hourly_cost") in err
    assert "rented" not in err
    assert run_main("check", "--strict")[0] == 1


def test_a_free_offer_is_a_finding_at_its_offer(tmp_path, run_main, monkeypatch):
    path, code, err = _offers_checked(tmp_path, run_main, monkeypatch, [
        {"name": "owned", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "0 USD/h", "as_of": "2026-11-20"}])
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "name: owned" in l)
    assert code == 0 and f"plans/p.yaml:{line}: candidates.offers[owned].node_hourly_cost: owned is priced at 0" in err
