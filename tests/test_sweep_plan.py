"""The load sweep inside a plan: λ* from real files, the rule's edge cases, replicas."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

REAL_PLAN = ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml"


def _eval(cli, path):
    code, out, err = cli("eval", path, "--json")
    assert code == 0, err
    return json.loads(out)["scenarios"]["nominal"]


def test_real_vllm_files_give_lambda_star_4_with_knee_below_16(cli):
    doc = _eval(cli, REAL_PLAN)
    assert doc["quantities"]["instance_max_rate"]["value"] == 4
    rows = doc["tables"]["load_sweep"]["rows"]
    assert [r["arrival_rate"] for r in rows] == [1, 4, 16]          # the closed burst is not a point
    assert [r["meets_slo"] for r in rows] == [True, True, False]
    assert [r["tpot_ok"] for r in rows] == [True, True, False]      # 16 req/s fails on TPOT only
    # p95 values computed from the per-request arrays (the files' summaries hold only p99)
    assert [round(r["ttft_p95"], 2) for r in rows] == [126.85, 64.28, 79.85]
    assert [round(r["tpot_p95"], 2) for r in rows] == [26.07, 27.73, 35.38]
    assert [round(r["e2e_p99"], 2) for r in rows] == [19.18, 21.06, 23.15]
    assert [r["completed"] for r in rows] == [200, 200, 200]
    # replicas of 8 GPUs: memory bounds use the replica's 8 x 40 GiB
    assert doc["quantities"]["usable_vram"]["value"] == pytest.approx(288)
    assert doc["quantities"]["active_gpus"]["value"] == 64
    assert doc["quantities"]["resilient_gpus"]["value"] == 72


def test_record_states_the_knee_and_the_evidence(cli, tmp_path):
    code, _, err = cli("build", REAL_PLAN, "--out", tmp_path / "o")
    assert code == 0, err
    text = (tmp_path / "o" / "llama3.3-70b-a100-40gb-tp8-sharegpt.md").read_text()
    assert ("λ* = 4 req/s: every SLO holds up to it. The knee lies between 4 and 16 req/s "
            "(first failure: TPOT 35.38 ms > 35 ms); sweep finer there.") in text
    assert "| 16 | 79.85 | 35.38 | 23.15 | 1,354 | 1 | 0 | ✓ TTFT ✗ TPOT ✓ E2E ✓ errors | FAIL |" in text
    assert "qps_inf.json: closed burst" in text and "not counted" in text
    assert "`sweeps/llama-3.3-70b-tp8/qps_04.json` | `4c9ece53c18d9fb0db0f37c5fbe5e23e301d802a568fb1ccaed5e9134b9ad19e`" in text
    assert "```mermaid\nxychart-beta" in text


def _sweep_plan(base_plan, rows):
    base_plan["tables"]["load_sweep"] = {"rows": rows}
    return base_plan


def row(rate, ttft=100, tpot=10, e2e=2.0):
    return {"arrival_rate": rate, "ttft_p95": ttft, "tpot_p95": tpot, "e2e_p99": e2e}


def test_noisy_pass_above_a_failure_does_not_count(base_plan, write_plan, cli):
    plan = _sweep_plan(base_plan, [row(2), row(4), row(6, ttft=1500), row(8)])
    doc = _eval(cli, write_plan(plan))
    assert doc["quantities"]["instance_max_rate"]["value"] == 4
    code, _, _ = cli("build", write_plan(plan))
    assert code == 0


def test_no_passing_row_is_a_clear_error(base_plan, write_plan, cli):
    plan = _sweep_plan(base_plan, [row(2, ttft=2000), row(4, ttft=3000)])
    code, _, err = cli("eval", write_plan(plan))
    assert code == 1 and "Traceback" not in err
    assert "no load_sweep row meets every SLO (the lowest arrival_rate, 2 req/s, already fails)" in err


def test_single_row_sweep(base_plan, write_plan, cli):
    doc = _eval(cli, write_plan(_sweep_plan(base_plan, [row(3)])))
    assert doc["quantities"]["instance_max_rate"]["value"] == 3


def test_failed_requests_count_against_the_slo(base_plan, write_plan, cli):
    rows = [dict(row(2), completed=1000, failed=0), dict(row(4), completed=990, failed=10)]
    doc = _eval(cli, write_plan(_sweep_plan(base_plan, rows)))
    assert doc["tables"]["load_sweep"]["rows"][1]["error_rate"] == pytest.approx(0.01)
    assert doc["quantities"]["instance_max_rate"]["value"] == 2


def test_duplicate_rates_in_typed_rows_are_refused(base_plan, write_plan, cli):
    code, _, err = cli("eval", write_plan(_sweep_plan(base_plan, [row(2), row(2)])))
    assert code == 1 and "rows 1 and 2 have the same arrival_rate '2'" in err


def _csv_plan(base_plan, write_plan, tmp_path, text):
    (tmp_path / "plans" / "sweep").mkdir(parents=True, exist_ok=True)
    (tmp_path / "plans" / "sweep" / "runs.csv").write_text(text)
    base_plan["tables"]["load_sweep"] = {"import": ["sweep/*.csv"], "source": "test runs"}
    return write_plan(base_plan)


def test_replicated_runs_are_combined_as_median_with_mad(base_plan, write_plan, cli, tmp_path):
    path = _csv_plan(base_plan, write_plan, tmp_path,
                     "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n"
                     "2,100,10,2.0,200\n2,120,11,2.2,210\n2,140,30,2.1,190\n"
                     "4,200,12,2.5,400\n4,220,13,2.6,390\n4,900,40,9.0,380\n")
    doc = _eval(cli, path)
    first, second = doc["tables"]["load_sweep"]["rows"]
    assert (first["runs"], first["ttft_p95"], first["ttft_p95_mad"], first["tpot_p95"]) == (3, 120, 20, 11)
    assert second["meets_slo"] is True          # the median of three runs, not the outlier
    assert doc["quantities"]["instance_max_rate"]["value"] == 4


def test_truncated_file_is_named(base_plan, write_plan, cli, tmp_path):
    (tmp_path / "plans" / "sweep").mkdir(parents=True)
    original = (ROOT / "plans" / "sweeps" / "llama-3.3-70b-tp8" / "qps_04.json").read_text()
    (tmp_path / "plans" / "sweep" / "qps_04.json").write_text(original[: len(original) // 2])
    base_plan["tables"]["load_sweep"] = {"import": "sweep/*.json"}
    code, _, err = cli("eval", write_plan(base_plan))
    assert code == 1 and "Traceback" not in err
    assert "tables.load_sweep.import" in err and "sweep/qps_04.json" in err


def test_empty_glob_is_named(base_plan, write_plan, cli):
    base_plan["tables"]["load_sweep"] = {"import": ["nothing/*.json"]}
    code, _, err = cli("eval", write_plan(base_plan))
    assert code == 1 and "nothing/*.json" in err


def test_sweep_files_travel_with_the_plan(tmp_path, cli):
    (tmp_path / "plans").mkdir()
    shutil.copy(REAL_PLAN, tmp_path / "plans")
    shutil.copytree(ROOT / "plans" / "sweeps", tmp_path / "plans" / "sweeps")
    assert _eval(cli, tmp_path / "plans" / REAL_PLAN.name)["quantities"]["instance_max_rate"]["value"] == 4
