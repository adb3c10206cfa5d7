"""build / check / eval end to end: determinism, the manifest (unchanged plans
skipped, changes named), all-or-nothing writes, expectations, the record, and
one run of the real console entry point."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from conftest import MAIN_PLAN, RETAIL_PLAN, ROOT
from shared_examples import VLLM_70B, example

from capplan import build as builder
from capplan import manifest

MAIN = f"plans/{MAIN_PLAN.name}"
STEM = MAIN_PLAN.stem


@pytest.fixture
def project(tmp_path):
    """The main and retail plans in tmp_path/plans (the working folder)."""
    (tmp_path / "plans").mkdir()
    for plan in (MAIN_PLAN, RETAIL_PLAN):
        shutil.copy(plan, tmp_path / "plans" / plan.name)
    return tmp_path


@pytest.fixture
def built(built_project):
    return built_project(MAIN_PLAN, RETAIL_PLAN)


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _never_evaluate(monkeypatch):
    def fail(*_args, **_kwargs):
        raise AssertionError("the plan was evaluated")
    monkeypatch.setattr(builder, "compile_plan", fail)


def test_console_entry_point(built):
    """The one run through the installed `capplan` script: arguments in, exit code out."""
    script = Path(sys.executable).with_name("capplan")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "capplan.cli"]
    ok = subprocess.run([*command, "check"], cwd=built, capture_output=True, text=True, timeout=300, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("capplan check: 2 plan(s) OK (units, expectations, out/ current)")
    empty = built / "empty"
    empty.mkdir()
    refused = subprocess.run([*command, "check"], cwd=empty, capture_output=True, text=True, timeout=300, check=False)
    assert (refused.returncode, refused.stderr) == (1, "error: no plans given and no 'plans/' folder here\n")


def test_the_command_exits_with_main_s_code_leaving_its_objects_to_the_system(monkeypatch):
    """``capplan`` (cli.command) freezes the collector before it exits: the interpreter's last
    collection then walks none of what the command kept."""
    import gc

    from capplan import cli

    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        with pytest.raises(SystemExit) as exited:
            cli.command()
        assert exited.value.code == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()



def test_a_plan_s_outputs_are_made_with_full_collections_deferred(monkeypatch):
    """compile_plan makes the outputs inside collector.deferred (the plan and its evaluations
    are not walked again by each full collection) and leaves the thresholds as they were."""
    import gc

    from capplan import collector

    seen = []
    real = builder._outputs
    monkeypatch.setattr(builder, "_outputs", lambda *a: seen.append(gc.get_threshold()) or real(*a))
    before = gc.get_threshold()
    compiled = builder.compile_plan(RETAIL_PLAN)
    assert compiled.files and gc.get_threshold() == before
    assert seen == [(*before[:2], max(before[2], collector.PATIENCE))]

HEAVY = ("sympy", "pint", "numpy", "jinja2", "openpyxl")


@pytest.mark.parametrize(("argv", "never"), [
    (["--help"], HEAVY),
    (["build"], ("sympy", "pint", "jinja2", "openpyxl")),           # nothing changed
    (["check"], ("sympy", "pint", "jinja2", "openpyxl")),
    (["eval", MAIN], ("jinja2", "openpyxl")),
    (["build", "--out", "fresh"], ("openpyxl",)),                     # the workbook is capplan's own XML
])
def test_each_command_imports_only_what_it_uses(built, argv, never):
    script = ("import sys\nfrom capplan.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
              f"print(' '.join(m for m in {never!r} if m in sys.modules))")
    ran = subprocess.run([sys.executable, "-c", script, *argv], cwd=built, capture_output=True, text=True,
                         timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "", f"capplan {' '.join(argv)} imported {ran.stdout.splitlines()[-1]}"


@pytest.mark.parametrize(("dest", "commands"), [
    ("plans", ("build", "check")),
    ("plan", ("eval", "explain", "seek", "simulate", "estimate")),
    ("scenario", ("seek", "simulate")),
    ("format", ("seek", "simulate")),
])
def test_an_argument_commands_share_is_declared_once(dest, commands):
    """A parent parser declares it, so its help and default are the same wherever it is taken."""
    from capplan.cli import _parser
    parsers = next(a for a in _parser()._actions if a.dest == "command").choices
    declared = {id(next(a for a in parsers[c]._actions if a.dest == dest)) for c in commands}
    assert len(declared) == 1, f"{dest} is declared {len(declared)} times for {commands}"


def test_build_twice_is_byte_identical(built, run_main):
    first = _snapshot(built / "out")
    assert {f"{STEM}.md", f"{STEM}.json", f"{STEM}.xlsx", f"{STEM}.holds.svg", "llama3-8b-a100-retail-chatbot.md",
            manifest.NAME} <= set(first)
    code, out, _ = run_main("build")
    assert code == 0
    retail = RETAIL_PLAN.stem
    version = metadata.version("capplan")
    assert out.splitlines() == [f"{MAIN}: current, not rebuilt (7 outputs as built from these inputs)",
                                f"plans/{RETAIL_PLAN.name}: current, not rebuilt (4 outputs as built from these inputs)",
                                f"capplan build: 2 plan(s) in out/: 2 already current (capplan {version}); "
                                "`capplan build --force` rebuilds them"]
    code, out, _ = run_main("build", "--force")
    assert code == 0 and out.splitlines() == [f"{MAIN}: rebuilt, every output as it was",
                                              f"plans/{retail}.yaml: rebuilt, every output as it was",
                                              f"capplan build: 2 plan(s) in out/: 2 rebuilt (capplan {version})"]
    assert _snapshot(built / "out") == first
    assert run_main("build", "--out", "again")[0] == 0          # a clean build elsewhere: the same bytes
    assert _snapshot(built / "again") == first


def test_manifest_records_inputs_outputs_and_versions(built):
    doc = json.loads((built / "out" / manifest.NAME).read_text())
    entry = doc["plans"][STEM]
    assert entry["file"] == MAIN
    assert entry["inputs"] == {MAIN: manifest.sha256(MAIN_PLAN.read_bytes())}
    assert entry["outputs"] == {name: manifest.sha256((built / "out" / name).read_bytes())
                                for name in (f"{STEM}.holds.svg", f"{STEM}.json", f"{STEM}.md", f"{STEM}.scenarios.svg",
                                             f"{STEM}.simulation.svg",
                                             f"{STEM}.sweep.svg", f"{STEM}.xlsx")}
    assert entry["toolchain"]["sympy"] == metadata.version("sympy") and "openpyxl" not in entry["toolchain"]
    assert entry["toolchain"]["capplan"] == metadata.version("capplan")
    assert entry["data"]["model/quantities.yaml"] == manifest.sha256((ROOT / "model" / "quantities.yaml").read_bytes())
    assert {"templates/record.md.j2", "model/catalog/gpus.yaml"} <= set(entry["data"])
    assert entry["findings"]["failed_expectations"] == []


def test_unchanged_plans_are_neither_evaluated_nor_written(built, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    _never_evaluate(monkeypatch)
    times = {p.name: p.stat().st_mtime_ns for p in (built / "out").iterdir()}
    code, out, _ = run_main("build")
    assert code == 0 and out.count(": current, not rebuilt (") == 2
    code, out, err = run_main("check")
    assert code == 0, err
    assert out == "capplan check: 2 plan(s) OK (units, expectations, out/ current); 4 warning(s)\n"
    assert f"warning: {MAIN}: 2 pending measurements" in err        # findings read back from this machine's cache
    assert {p.name: p.stat().st_mtime_ns for p in (built / "out").iterdir()} == times


def test_check_without_evaluating_still_fails_a_broken_expectation(project, run_main, monkeypatch):
    path = project / MAIN
    path.write_text(path.read_text().replace("  active_gpus: 9\n", "  active_gpus: 8\n"))
    assert run_main("build")[0] == 0
    _never_evaluate(monkeypatch)
    code, _, err = run_main("check")
    assert code == 1
    assert "expect active_gpus: expected 8, got 9 GPUs (= active_replicas * gpus_per_replica)" in err


def _edit_a_source(project):
    path = project / MAIN
    path.write_text(path.read_text().replace("product forecast for peak hour", "product forecast for peak hour (2027)"))


def test_a_changed_plan_is_rebuilt_and_check_names_it(built, run_main):
    _edit_a_source(built)
    code, _, err = run_main("check")
    assert code == 1
    assert f"out/{STEM}.md is out of date; " in err
    assert f": run `capplan build {MAIN}` (since the last build: {MAIN} changed)" in err
    code, out, _ = run_main("build")
    assert code == 0
    assert f"{MAIN}: wrote out/{STEM}.{{" in out and "retail-chatbot.yaml: current, not rebuilt (" in out
    assert run_main("check")[0] == 0


def test_an_edit_that_changes_no_output_fails_until_the_manifest_records_it(built, run_main):
    """out/manifest.json is an output too: a record of other inputs is not what a build writes."""
    path = built / MAIN
    path.write_text(path.read_text() + "# a comment changes the file, not the results\n")
    code, _, err = run_main("check")
    assert code == 1
    assert (f"  - {MAIN}: outputs current, but out/{manifest.NAME} records other inputs ({MAIN} changed): "
            f"run `capplan build {MAIN}`") in err
    assert run_main("build")[0] == 0 and run_main("check")[0] == 0


def test_check_names_the_library_version_that_differs(built, run_main):
    record = built / "out" / manifest.NAME
    doc = json.loads(record.read_text())
    doc["plans"][STEM]["toolchain"]["sympy"] = "1.11"
    record.write_text(json.dumps(doc))
    here = metadata.version("sympy")
    code, _, err = run_main("check")
    assert code == 0 and f"(sympy {here} here, out/ was built with 1.11)" in err
    workbook = built / "out" / f"{STEM}.xlsx"
    workbook.write_bytes(workbook.read_bytes() + b"\0")
    code, _, err = run_main("check")
    assert code == 1
    assert (f"  - {MAIN}: out/{STEM}.xlsx is out of date: run `capplan build {MAIN}` (since the last build: "
            f"sympy {here} here, out/ was built with 1.11)") in err


def test_a_damaged_manifest_means_re_evaluating_never_a_crash(built, run_main):
    record = built / "out" / manifest.NAME
    doc = json.loads(record.read_text())
    doc["plans"][STEM]["findings"]["prices"] = [{"where": "x"}]
    record.write_text(json.dumps(doc))
    code, _, err = run_main("check")
    assert code == 1
    assert (f"  - {MAIN}: outputs current, but out/{manifest.NAME} has no record of them: "
            f"run `capplan build {MAIN}`") in err
    assert "retail-chatbot.yaml: outputs current" not in err
    record.write_text("{ not json")
    code, out, err = run_main("build")
    assert code == 0 and out.count(": current, not rebuilt (") == 2       # this machine's cache vouches
    assert json.loads(record.read_text())["plans"].keys() == {STEM, RETAIL_PLAN.stem}


def test_a_new_benchmark_file_next_to_the_plan_is_noticed(tmp_path, run_main):
    folder = tmp_path / "plans" / "sweeps"
    shutil.copytree(example(*VLLM_70B), folder)
    plan = yaml.safe_load((ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml").read_text())
    sweep = plan["tables"]["load_sweep"]
    del sweep["rows"], sweep["note"]
    sweep["import"] = "sweeps/qps_*.json"
    (tmp_path / "plans" / "swept.yaml").write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True))
    assert run_main("build")[0] == 0
    shutil.copy(folder / "qps_16.json", folder / "qps_16_again.json")
    code, _, err = run_main("check")
    assert code == 1
    assert "  - plans/swept.yaml: out/swept." in err and "out/swept.md is out of date" in err
    assert (": run `capplan build plans/swept.yaml` (since the last build: "
            "the import sweeps/qps_*.json of plans/swept.yaml matches other files now)") in err


def test_a_write_failure_on_the_second_file_leaves_every_output_as_it_was(built, run_main, monkeypatch):
    before = _snapshot(built / "out")
    _edit_a_source(built)
    made, real_mkstemp, real_write = [], tempfile.mkstemp, os.write

    def mkstemp(*args, **kwargs):
        fd, name = real_mkstemp(*args, **kwargs)
        made.append((fd, name))
        return fd, name

    def write(fd, data):
        if len(made) == 2 and fd == made[1][0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with monkeypatch.context() as m:
        m.setattr(tempfile, "mkstemp", mkstemp)
        m.setattr(os, "write", write)
        code, _, err = run_main("build", MAIN)
    assert code == 1
    assert err == (f"error: cannot write out/{STEM}.md: No space left on device; the previous files are untouched\n"
                   "1 plan(s) failed; their previous outputs are untouched\n")
    assert len(made) == 2 and not any(Path(name).exists() for _, name in made)
    assert _snapshot(built / "out") == before                  # the .json written first was not renamed in either
    assert run_main("build", MAIN)[1].startswith(f"{MAIN}: wrote out/{STEM}.{{json,md,xlsx}}; 4 already current")


def test_outputs_that_cannot_be_written_are_plan_errors_not_bugs(project, run_main, monkeypatch):
    (project / "a-file").write_text("not a folder")
    code, _, err = run_main("build", MAIN, "--out", "a-file")
    assert code == 1 and "error: a-file is a file, not a folder; give a folder for the outputs\n" in err

    def refused(*_args, **_kwargs):
        raise PermissionError(errno.EROFS, os.strerror(errno.EROFS))

    with monkeypatch.context() as m:
        m.setattr(tempfile, "mkstemp", refused)
        code, _, err = run_main("build", MAIN, "--out", "read-only")
    assert code == 1
    assert f"error: cannot write read-only/{STEM}.holds.svg: Read-only file system; the previous files are untouched" in err

    code, out, err = run_main("diff", MAIN, MAIN, "-o", project)
    assert (code, out) == (1, "") and err == f"error: {project} is a folder; give a file name\n"


def test_a_file_name_that_is_not_utf8_is_refused_with_its_bytes(project, run_main):
    name = os.fsdecode(b"plans/caf\xe9.yaml")
    shutil.copy(RETAIL_PLAN, name)
    for command in ("build", "eval"):
        code, out, err = run_main(command, name)
        assert code == 1 and out == ""
        assert "error: plans/caf\\xe9.yaml: the file name is not valid UTF-8; rename the file" in err


def test_check_reports_failed_expectations(project, run_main):
    path = project / MAIN
    text = path.read_text().replace("  active_gpus: 9\n", "  active_gpus: 8\n")
    text = text.replace("decode_step_time_bound: 10.96 ms", "decode_step_time_bound: 10.9 ms")
    path.write_text(text)
    assert run_main("build")[0] == 0          # build renders; check enforces expectations
    code, _, err = run_main("check")
    assert code == 1
    assert "expect active_gpus: expected 8, got 9 GPUs (= active_replicas * gpus_per_replica)" in err
    assert "expect decode_step_time_bound: expected 10.9 ms, got 10.961322 ms (= decode_bytes_per_step / decode_read_bandwidth)" in err


def test_expectations_hold_to_the_digits_written(project, run_main):
    path = project / MAIN
    plan = yaml.safe_load(path.read_text())
    plan["expect"] = {"decode_step_time_bound": "10.96 ms", "kv_pool": "54.98 GiB", "kv_token_capacity": 450379,
                      "deployments[aws-p4de.24xlarge].monthly_cost": "59,965.44 USD", "bandwidth_gate": True}
    plan["scenarios"]["surge_50"]["expect"] = {"active_gpus": 13}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    assert run_main("build")[0] == 0
    assert run_main("check")[0] == 0
    plan["scenarios"]["surge_50"]["expect"] = {"active_gpus": 12}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    run_main("build")
    code, _, err = run_main("check")
    assert code == 1 and "scenario surge_50: expect active_gpus: expected 12, got 13 GPUs" in err


def test_committed_outputs_are_current(run_main):
    code, out, err = run_main("check", cwd=ROOT)
    assert code == 0, err
    assert f"{len(list((ROOT / 'plans').glob('*.yaml')))} plan(s) OK" in out     # every plan, out/ current


def test_eval_json_contract(run_main):
    code, out, _ = run_main("eval", MAIN_PLAN, "--json")
    assert code == 0
    doc = json.loads(out)
    nominal = doc["scenarios"]["nominal"]
    item = nominal["quantities"]["safe_rate_per_replica"]
    assert item["value"] == pytest.approx(7.0)
    assert {k: v for k, v in item.items() if k != "value"} == {
        "unit": "req/s", "tag": "derived", "formula": "instance_max_rate * rho_target",
        "depends_on": ["e2e_p99_slo", "error_budget", "goodput_slo", "load_sweep", "min_delivered_share", "rho_target",
                       "tpot_p95_slo", "ttft_p95_slo"]}
    assert nominal["quantities"]["hbm_efficiency"]["pending"] is True
    assert nominal["quantities"]["decode_step_time_bound"]["pending_inputs"] == ["hbm_efficiency"]
    assert nominal["quantities"]["layers"] == {"value": 32, "unit": "", "tag": "fact", "origin": "catalog",
                                               "source": nominal["quantities"]["layers"]["source"]}
    nodes = nominal["tables"]["deployments"]["columns"]["nodes"]["formula"]
    assert nodes == "ceil(resilient_replicas / max(replicas_per_node, 1)) * nodes_per_replica"
    assert [r["meets_slo"] for r in nominal["tables"]["load_sweep"]["rows"]] == [True] * 5 + [False] * 2


def test_eval_unknown_scenario(run_main):
    code, _, err = run_main("eval", MAIN_PLAN, "--scenario", "surge_5")
    assert code == 1 and "no scenario 'surge_5'" in err and "surge_50" in err


def test_record_shows_derivations_tags_and_pending(built):
    text = (built / "out" / f"{STEM}.md").read_text()
    assert "\n9 GPUs carry the 60 req/s peak; 10 GPUs with redundancy." in text
    assert "$59,965.44 a month, $9.36 per 1M output tokens" in text
    # formula -> substituted numbers -> result, with tag
    assert ("| $`t_{mem}`$ `decode_step_time_bound` | **10.96 ms** ⚠ | $`t_{mem} = \\frac{D_{step}}{BW_{dec}}`$"
            "<br>= 16.99 GB / 1,550 GB/s<br><sub>rests on measurements: hbm_efficiency (pending); assumptions: "
            "classes</sub> | derived |") in text
    assert ("`decode_read_bandwidth` | **1,550 GB/s** ⚠ | $`BW_{dec} = BW_{peak} \\cdot G_{rep} \\cdot \\eta_{BW}`$"
            "<br>= 2,039 GB/s/GPU × 1 GPU × 0.76") in text
    note = re.search(r"\| measurement ⚠ pending<sup>\[(\d+)\]\(#source-(\d+)\)</sup> \|", text)   # its source a note
    assert note and f'{note[1]}. <a name="source-{note[1]}"></a>' in text and note[1] == note[2]
    assert "`hbm_efficiency` = 0.76" in text
    assert "**Gate 2: memory bandwidth (decode): PASS** — 10.96 ms ≤ 25 ms." in text
    assert "`instance_max_rate` = 7.5 req/s (pins a derived quantity)" in text
    graph = text[text.index("A. Dependency graph"):]
    for line in ('  S1["<b>2. Memory</b><br/>12 quantities, 0 given<br/>hands on: weight_memory, kv_bytes_per_token<br/>avg_cached_tokens"]:::stage',
                 '3. Throughput: 23 quantities and what they are computed from.',    # #39: the tensor rate's four; #40: the read bandwidth
                 '  given_pending["pending measurements:<br/>hbm_efficiency, tensor_efficiency"]:::pending',
                 '  T_load_sweep["load_sweep (table)"]:::measurement', "  kv_pool --> kv_token_capacity",
                 "  T_load_sweep --> instance_max_rate", "  S3 --> T_deployments", "  S0 --> S1", "  S3 --> S4"):
        assert line + "\n" in graph
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## 1. Workload and SLO contract", "## 2. Physical boundary derivation",
                        "## 3. Empirical load-vs-SLO curve", "## 4. Bin-packed cluster sizing", "## 5. Monthly TCO",
                        "## 6. Power and space", "## 7. Queueing check of the headroom", "## 8. Sensitivity",
                        "## 9. How far the decision holds", "## 10. Uncertainty: 100,000 draws of the uncertain inputs",
                        "## Appendices"]
    retail = (built / "out" / "llama3-8b-a100-retail-chatbot.md").read_text()
    assert "**Gate 2: memory bandwidth (decode): FAIL**" in retail
    assert "## 3. Empirical" in retail and "Little's-law sizing" in retail and "Load sweep" not in retail


def test_an_output_the_plan_no_longer_makes_is_removed(built, run_main, monkeypatch):
    """A plan that loses its scenarios loses its scenarios chart: out/ holds what the manifest lists."""
    project = built
    chart = project / "out" / f"{STEM}.scenarios.svg"
    assert chart.is_file()
    plan = yaml.safe_load(MAIN_PLAN.read_text())
    del plan["scenarios"]
    (project / MAIN).write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True))
    (project / "out" / "unrelated.txt").write_text("kept")
    def refused(*_args, **_kwargs):                              # a file system that refuses the removal
        raise PermissionError(errno.EROFS, os.strerror(errno.EROFS))
    with monkeypatch.context() as m:
        m.setattr(Path, "unlink", refused)
        code, _, err = run_main("build", MAIN)
    assert code == 1 and (f"error: cannot remove out/{STEM}.scenarios.svg, an output the plan no longer makes: "
                          "Read-only file system\n") in err
    assert chart.is_file() and f"{STEM}.scenarios.svg" in (project / "out" / f"{STEM}.md").read_text()
    code, out, _ = run_main("build", MAIN)
    assert code == 0 and out.splitlines()[0].endswith(f"; removed {STEM}.scenarios.svg")
    assert not chart.exists() and (project / "out" / "unrelated.txt").read_text() == "kept"
    recorded = json.loads((project / "out" / manifest.NAME).read_text())["plans"][STEM]["outputs"]
    assert sorted(recorded) == sorted(p.name for p in (project / "out").glob(f"{STEM}.*"))


def test_an_edit_while_the_build_reads_the_plan_is_a_change_next_time(project, run_main, monkeypatch):
    """The manifest records the hash of the bytes before they were read: an edit that lands
    between the two makes the next build rebuild the plan, never skip it as unchanged."""
    original = builder.load_plan
    path = project / "plans" / RETAIL_PLAN.name
    before = manifest.sha256(path.read_bytes())

    def edited_meanwhile(plan_path, *args, **kwargs):
        plan = original(plan_path, *args, **kwargs)
        path.write_text(path.read_text() + "# saved by an editor during the build\n")
        return plan

    with monkeypatch.context() as m:
        m.setattr(builder, "load_plan", edited_meanwhile)
        assert run_main("build", f"plans/{RETAIL_PLAN.name}")[0] == 0
    entry = json.loads((project / "out" / manifest.NAME).read_text())["plans"][RETAIL_PLAN.stem]
    assert entry["inputs"] == {f"plans/{RETAIL_PLAN.name}": before}
    assert manifest.changes(entry, f"plans/{RETAIL_PLAN.name}") == [f"plans/{RETAIL_PLAN.name} changed"]
