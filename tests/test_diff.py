"""capplan diff: headline, key results, changed inputs by tag, fleet flips, git mode."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan.review import diff


def _edited(tmp_path, name="new.yaml", peak=None, aws_price=None, memory=None, sweep_ttft_row2=None, edit=None):
    """A copy of the main plan with some inputs changed (YAML round trip: the
    text layout does not matter to capplan)."""
    plan = yaml.safe_load(MAIN_PLAN.read_text())
    if peak is not None:
        plan["inputs"]["peak_arrival_rate"].update(value=peak, range="45 to 120 req/s")    # the value inside its range
    if aws_price is not None:
        row = next(r for r in plan["tables"]["deployments"]["rows"] if r["name"] == "aws-p4de.24xlarge")
        row["node_hourly_cost"] = aws_price
    if memory is not None:
        value = str(plan["inputs"]["gpu_memory_reported"]["value"])
        plan["inputs"]["gpu_memory_reported"]["value"] = value.replace("79.65", memory)
    if sweep_ttft_row2 is not None:
        row = next(r for r in plan["tables"]["load_sweep"]["rows"] if r["arrival_rate"] == 2)
        row["ttft_p95"] = sweep_ttft_row2
    if edit:
        edit(plan)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True))
    return path



def test_peak_price_and_measurement_change(tmp_path, run_main):
    new = _edited(tmp_path, peak="90 req/s", aws_price="30 USD/h", memory="80", sweep_ttft_row2=90)
    code, out, err = run_main("diff", MAIN_PLAN, new)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == diff.MARKER
    # the new version's first screen, as its record opens: the recommendation, the ask, the options, the risks
    assert lines[3].startswith("**Rent fractional-a100-80gb: 14 GPUs on 14 nodes, $25,517.52 a month, "
                               "$306,210.24 a year.**")
    assert "**The ask:** Approve 14 nodes of fractional-a100-80gb" in out and "| Option | Holds |" in out
    # then the headline of the change: the biggest move first, both deployments, GPUs before -> after
    assert ("**What changed:** Monthly cost falls by $16,045 (−27 %) on aws-p4de.24xlarge and rises by $7,291 (+40 %) "
            "on fractional-a100-80gb; active GPUs 9 → 13; ") in out
    # the before/after table of key results
    assert "| **Active GPUs** | 9 GPUs | 13 GPUs | +4 GPUs (+44 %) |" in out
    assert "| **Resilient GPUs** | 10 GPUs | 14 GPUs | +4 GPUs (+40 %) |" in out
    assert "| aws-p4de.24xlarge: nodes | 2 | 2 |  |" in out
    assert "| **aws-p4de.24xlarge: monthly cost** | $59,965.44 | $43,920.00 | −$16,045.44 (−27 %) |" in out
    assert "| **fractional-a100-80gb: monthly cost** | $18,226.80 | $25,517.52 | +$7,290.72 (+40 %) |" in out
    assert "| λ_safe per replica | 7 req/s | 7 req/s |  |" in out
    # measurements and facts apart from policies and assumptions
    measured, chosen = out.split("**⚠ Measurements and facts changed**")[1].split("**Policies and assumptions changed:**")
    assert "- ⚠ measurement changed: `gpu_memory_reported`: 79.65 GiB" in measured
    assert "- ⚠ measurement changed: `load_sweep[2].ttft_p95`: 85 ms → **90 ms** (measurement)" in measured
    assert ("- ⚠ measurement changed: `deployments[aws-p4de.24xlarge].node_hourly_cost`: $40.96/h → **$30.00/h** "
            "(measurement)") in measured
    assert "peak_arrival_rate" not in measured
    chosen, flips = chosen.split("**Flip points**")
    chosen = chosen.split("**Fixed-fleet checks")[0]
    assert "- `peak_arrival_rate`: 60 req/s → **90 req/s** (assumption) — product forecast for peak hour" in chosen
    assert chosen.count("\n- ") == 1
    # the old plan's flip points the peak passed on its way from 60 to 90 req/s, nearest first
    assert "- crosses a flip point: `peak_arrival_rate` 60 → 90 req/s crosses 63 req/s: active GPUs 9 → 10" in flips
    assert flips.index("crosses 63 req/s") < flips.index("crosses 70 req/s") < flips.index("crosses 84 req/s")
    # details folded; the fleet check of the TTFT scenario flips
    assert "<details><summary>Details:" in out and "</details>" in out
    flip = next(line for line in lines if line.startswith("| `ttft_400ms` TTFT SLO tightened to 400 ms | aws-p4de.24xlarge |"))
    assert flip.endswith("83.2 req/s safe, 1.387× the peak: holds | 3 nodes, $65,880.00; nominal fleet 83.2 req/s safe, "
                         "0.9244× the peak: **breaks** |")
    assert "`kv_pool`" in out.split("<details><summary>Details:")[1]      # the memory change moves the KV pool


def test_json_format_lists_the_same_changes(tmp_path, run_main):
    new = _edited(tmp_path, peak="90 req/s", aws_price="30 USD/h", memory="80", sweep_ttft_row2=90)
    code, out, _ = run_main("diff", MAIN_PLAN, new, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["changed"] is True
    (p,) = doc["plans"]
    assert p["status"] == "changed"
    assert p["headline"].startswith("Monthly cost falls by $16,045 (−27 %) on aws-p4de.24xlarge")
    by_name = {c["name"]: c for c in p["inputs"]}
    assert set(by_name) == {"peak_arrival_rate", "gpu_memory_reported", "load_sweep[2].ttft_p95",
                            "deployments[aws-p4de.24xlarge].node_hourly_cost"}
    assert by_name["peak_arrival_rate"]["class"] == "policy"
    assert by_name["peak_arrival_rate"]["tag"] == "assumption"
    assert {by_name[n]["class"] for n in by_name if n != "peak_arrival_rate"} == {"measurement"}
    key = {(r["row"], r["quantity"]): r for r in p["key_results"]}
    assert (key[(None, "active_gpus")]["old"], key[(None, "active_gpus")]["new"]) == (9, 13)
    assert key[("aws-p4de.24xlarge", "deployments.monthly_cost")]["new"] == pytest.approx(43920)
    assert key[("fractional-a100-80gb", "deployments.nodes")]["new"] == 14
    flips = {(f["scenario"], f["row"]): f for f in p["fleet_flips"]}
    assert flips[("ttft_400ms", "aws-p4de.24xlarge")]["old"] is True
    assert flips[("ttft_400ms", "aws-p4de.24xlarge")]["new"] is False


def test_peak_only(tmp_path, run_main):
    new = _edited(tmp_path, peak="90 req/s")
    code, out, _ = run_main("diff", MAIN_PLAN, new)
    assert code == 0
    assert ("**What changed:** Monthly cost rises by $7,291 (+40 %) on fractional-a100-80gb; aws-p4de.24xlarge unchanged (2 nodes); "
            "active GPUs 9 → 13;") in out
    assert "Measurements and facts changed" not in out


def test_no_change_is_one_line(tmp_path, run_main):
    same = _edited(tmp_path)
    code, out, _ = run_main("diff", MAIN_PLAN, same)
    assert code == 0
    assert out == f"no change in results {diff.MARKER}\n"
    edited = _edited(tmp_path, "note.yaml",
                     edit=lambda p: p["inputs"]["peak_arrival_rate"].update(source="the 2027 forecast"))
    code, out, _ = run_main("diff", MAIN_PLAN, edited)
    assert out == f"no change in results (1 source or note edit) {diff.MARKER}\n"
    code, out, _ = run_main("diff", MAIN_PLAN, same, "--format", "json")
    assert json.loads(out)["changed"] is False


def test_table_rows_added_and_removed_and_scenarios(tmp_path, run_main):
    def edit(plan):
        rows = plan["tables"]["deployments"]["rows"]
        rows[:] = [r for r in rows if r["name"] != "fractional-a100-80gb"]
        rows.append({"name": "gcp-a2-ultragpu-8g", "gpus_per_node": 8, "node_hourly_cost": "40.55 USD/h"})
        plan["scenarios"]["surge_50"]["set"]["peak_arrival_rate"] = "100 req/s"
        del plan["scenarios"]["fp8_kv"]
    new = _edited(tmp_path, edit=edit)
    code, out, _ = run_main("diff", MAIN_PLAN, new, "--format", "json")
    assert code == 0
    (p,) = json.loads(out)["plans"]
    inputs = {c["name"]: c for c in p["inputs"]}
    assert inputs["deployments[gcp-a2-ultragpu-8g]"]["what"] == "row added"
    assert "node_hourly_cost $40.55/h" in inputs["deployments[gcp-a2-ultragpu-8g]"]["new_text"]
    assert inputs["deployments[fractional-a100-80gb]"]["what"] == "row removed"
    changes = {s["scenario"]: s for s in p["scenario_changes"]}
    assert changes["surge_50"]["new_text"] == "peak_arrival_rate = 100 req/s"
    assert changes["fp8_kv"]["what"] == "removed"
    key = [(r["row"], r["quantity"], r["change"]) for r in p["key_results"] if r["row"]]
    assert ("gcp-a2-ultragpu-8g", "deployments.monthly_cost", "new") in key
    assert ("fractional-a100-80gb", "deployments.monthly_cost", "removed") in key
    code, md, _ = run_main("diff", MAIN_PLAN, new)
    assert "**Scenarios changed:**" in md and "`fp8_kv` (FP8 KV cache) removed" in md


def test_usage_errors(tmp_path, run_main):
    code, _, err = run_main("diff", MAIN_PLAN)
    assert code == 2 and "give two plans" in err
    code, _, err = run_main("diff", MAIN_PLAN, tmp_path / "missing.yaml")
    assert code == 2 and "no such plan file" in err


def test_a_new_side_that_does_not_load_fails(tmp_path, run_main):
    bad = _edited(tmp_path, edit=lambda p: p["inputs"].update(peak_arival_rate="90 req/s"))
    code, _, err = run_main("diff", MAIN_PLAN, bad)
    assert code == 1 and "unknown quantity 'peak_arival_rate'" in err


def test_output_file(tmp_path, run_main):
    new = _edited(tmp_path, peak="90 req/s")
    target = tmp_path / "comment" / "diff.md"
    code, out, _ = run_main("diff", MAIN_PLAN, new, "--output", target)
    assert code == 0 and out == ""
    assert target.read_text().startswith(diff.MARKER + "\n")


def test_comment_stays_under_githubs_limit(tmp_path, monkeypatch):
    new = _edited(tmp_path, peak="90 req/s")
    doc = diff.compare(diff.pairs_from_paths(MAIN_PLAN, new))
    monkeypatch.setattr(diff, "COMMENT_LIMIT", 3000)
    text = diff.markdown(doc)
    assert "Details left out" in text and "Every result of the nominal scenario" not in text
    assert text.startswith(diff.MARKER)


# -- git mode ---------------------------------------------------------------------------------

def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=capplan-test", "-c", "user.email=test@example.invalid",
                    "-c", "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_base_revision_against_the_working_tree(tmp_path, run_main, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "plans").mkdir(parents=True)
    shutil.copy(MAIN_PLAN, repo / "plans" / MAIN_PLAN.name)
    shutil.copy(RETAIL_PLAN, repo / "plans" / RETAIL_PLAN.name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plans")
    # edit one plan, remove one, add one
    main_plan = repo / "plans" / MAIN_PLAN.name
    text = main_plan.read_text()
    assert "peak_arrival_rate: {value: 60 req/s" in text
    main_plan.write_text(text.replace("peak_arrival_rate: {value: 60 req/s, range: 45 to 80 req/s",
                                      "peak_arrival_rate: {value: 90 req/s, range: 45 to 120 req/s"))
    (repo / "plans" / RETAIL_PLAN.name).rename(repo / "plans" / "retail-copy.yaml")
    monkeypatch.chdir(repo)

    code, out, err = run_main("diff", "--base", "HEAD", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["base"] == "HEAD"
    status = {p["plan"]: (p["status"], p["old_file"], p["new_file"]) for p in doc["plans"]}
    assert status == {
        "llama3-8b-a100-chat-mix": ("changed", f"HEAD:plans/{MAIN_PLAN.name}", f"plans/{MAIN_PLAN.name}"),
        "llama3-8b-a100-retail-chatbot": ("removed", f"HEAD:plans/{RETAIL_PLAN.name}", None),
        "retail-copy": ("added", None, "plans/retail-copy.yaml"),
    }

    code, out, _ = run_main("diff", "--base", "HEAD")
    assert out.startswith(diff.MARKER + "\n")
    assert ("- `llama3-8b-a100-chat-mix`: **Monthly cost rises by $7,291 (+40 %) on fractional-a100-80gb; "
            "aws-p4de.24xlarge unchanged (2 nodes); active GPUs 9 → 13;") in out
    said = "25 GPUs are sized for the 50 req/s peak but do not carry it. Gate 2"
    assert f"- `llama3-8b-a100-retail-chatbot`: **Plan removed. It said: {said}" in out
    assert f"- `retail-copy`: **New plan: {said}" in out
    assert ("$4.33 per 1M output tokens. Today's fleet on aws-p4de.24xlarge breaks at the plan's own peak. Today's "
            "fleet on per-gpu-5usd, the cheaper ($95,160.00 a month), breaks at the plan's own peak. No scenario but the nominal one tests "
            "it (add scenarios to the plan). Pending measurements under the decisions: decode_throughput") in out
    assert "against `HEAD`" in out

    # one plan named; unchanged against itself once committed
    code, out, _ = run_main("diff", "--base", "HEAD", f"plans/{MAIN_PLAN.name}")
    assert "Monthly cost rises by $7,291" in out and "retail" not in out
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "edit")
    code, out, _ = run_main("diff", "--base", "HEAD")
    assert code == 0 and out == f"no change in results {diff.MARKER}\n"
    code, out, _ = run_main("diff", "--base", "HEAD~1", f"plans/{MAIN_PLAN.name}")
    assert "active GPUs 9 → 13" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_usage_errors(tmp_path, run_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main("diff", "--base", "HEAD")
    assert code == 2 and "not inside a git repository" in err
    _git(tmp_path, "init", "-q")
    (tmp_path / "plans").mkdir()
    shutil.copy(MAIN_PLAN, tmp_path / "plans" / MAIN_PLAN.name)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "plans")
    code, _, err = run_main("diff", "--base", "no-such-branch")
    assert code == 2 and "unknown git revision 'no-such-branch'" in err


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_an_old_version_that_no_longer_loads_is_reported(tmp_path, run_main, monkeypatch):
    repo = tmp_path
    (repo / "plans").mkdir()
    plan = repo / "plans" / MAIN_PLAN.name
    plan.write_text(MAIN_PLAN.read_text().replace("rho_target:", "rho_targt:", 1))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "broken")
    shutil.copy(MAIN_PLAN, plan)
    monkeypatch.chdir(repo)
    code, out, _ = run_main("diff", "--base", "HEAD", "--format", "json")
    assert code == 0
    (p,) = json.loads(out)["plans"]
    assert p["status"] == "base_error"
    assert p["base_error"].startswith(f"HEAD:plans/{MAIN_PLAN.name}:")
    assert "unknown quantity 'rho_targt'" in p["base_error"]
