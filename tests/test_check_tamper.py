"""`capplan check` trusts nothing the pull request can write: out/, its manifest, its findings.

Each test starts from a built project, tampers as a pull request could, and runs
`check` with an empty cache of this machine's compiles (as CI on a fresh machine
does): it must fail, naming the file. The manifest's names are read confined
(no device, FIFO or file outside the repository is read), and plans whose
outputs would collide are refused naming both.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import BASE_PLAN, MAIN_PLAN, RETAIL_PLAN

from capplan import manifest

MAIN = f"plans/{MAIN_PLAN.name}"
STEM = MAIN_PLAN.stem


@pytest.fixture
def project(built_project, monkeypatch, tmp_path_factory):
    """The main and retail plans built, as the working folder of a git repository, checked
    with a cache of its own (empty: nothing computed on this machine yet)."""
    folder = built_project(MAIN_PLAN, RETAIL_PLAN)
    (folder / ".git").mkdir()
    monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    monkeypatch.chdir(folder)
    return folder


def _manifest(project) -> dict:
    return json.loads((project / "out" / manifest.NAME).read_text())


def _write_manifest(project, doc: dict) -> None:
    (project / "out" / manifest.NAME).write_text(json.dumps(doc, indent=1, sort_keys=True))


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_untouched_project_passes(project, run_main):
    code, out, err = run_main("check")
    assert code == 0, err
    assert out.startswith("capplan check: 2 plan(s) OK")


def test_a_changed_plan_with_its_manifest_hash_rewritten_fails(project, run_main):
    plan = project / MAIN
    plan.write_text(plan.read_text().replace("value: 60 req/s, range: 45 to 80 req/s", "value: 90 req/s, range: 45 to 120 req/s", 1))
    doc = _manifest(project)
    doc["plans"][STEM]["inputs"][MAIN] = _sha(plan)
    _write_manifest(project, doc)
    code, _, err = run_main("check")
    assert code == 1
    assert (f"  - {MAIN}: out/{STEM}.holds.svg is out of date; " in err
            and "though out/manifest.json records them as built from these inputs (edited by hand?): "
                f"run `capplan build --force {MAIN}`" in err)
    assert "expect active_gpus: expected 9, got 13 GPUs" in err          # the expectation it hid
    # this machine now knows better than the manifest: a plain build rebuilds and repairs it
    code, out, _ = run_main("build")
    assert code == 0 and f"{MAIN}: wrote out/{STEM}." in out
    assert _manifest(project)["plans"][STEM]["outputs"][f"{STEM}.md"] == _sha(project / "out" / f"{STEM}.md")


def test_edited_outputs_with_rewritten_hashes_fail(project, run_main):
    record = project / "out" / f"{STEM}.md"
    record.write_text(record.read_text().replace("9 GPUs", "7 GPUs"))
    data = project / "out" / f"{STEM}.json"
    data.write_text(data.read_text().replace('"active_gpus"', '"active_gpus" ', 1))
    doc = _manifest(project)
    doc["plans"][STEM]["outputs"].update({record.name: _sha(record), data.name: _sha(data)})
    _write_manifest(project, doc)
    code, _, err = run_main("check")
    assert code == 1
    assert f"out/{STEM}.json is out of date; out/{STEM}.md is out of date" in err


def test_emptied_findings_and_a_future_price_date_in_the_manifest_change_nothing(project, run_main):
    doc = _manifest(project)
    for entry in doc["plans"].values():
        entry["findings"]["pending"] = []
        for price in entry["findings"]["prices"]:
            price["as_of"] = "2099-01-01"
    _write_manifest(project, doc)
    code, _, err = run_main("check", "--strict")
    assert code == 1
    assert f"warning: {MAIN}: 2 pending measurements" in err
    assert "its record of" in err and "(findings differ): run `capplan build --force" in err


def test_an_invented_plan_with_outputs_copied_from_another_fails(project, run_main):
    invented = copy.deepcopy(BASE_PLAN)
    invented["inputs"]["peak_arrival_rate"] = "300 req/s"
    (project / "plans" / "invented.yaml").write_text(yaml.safe_dump(invented))
    doc = _manifest(project)
    for name in list(os.listdir(project / "out")):
        if name.startswith(RETAIL_PLAN.stem + "."):
            copied = name.replace(RETAIL_PLAN.stem, "invented", 1)
            shutil.copy(project / "out" / name, project / "out" / copied)
    entry = copy.deepcopy(doc["plans"][RETAIL_PLAN.stem])
    entry["file"] = "plans/invented.yaml"
    entry["inputs"] = {"plans/invented.yaml": _sha(project / "plans" / "invented.yaml")}
    entry["outputs"] = {k.replace(RETAIL_PLAN.stem, "invented", 1): v for k, v in entry["outputs"].items()}
    doc["plans"]["invented"] = entry
    _write_manifest(project, doc)
    code, _, err = run_main("check")
    assert code == 1
    assert "  - plans/invented.yaml: out/invented." in err and "out/invented.md is out of date" in err


def test_a_file_no_plan_makes_and_a_deleted_plans_outputs_fail(project, run_main):
    (project / "out" / "fake.md").write_text("# All is well\n")
    (project / RETAIL_PLAN.relative_to(RETAIL_PLAN.parents[1])).unlink()
    code, _, err = run_main("check")
    assert code == 1
    assert "  - out/fake.md is no output of any plan in plans/: remove it" in err
    assert f"  - out/{RETAIL_PLAN.stem}.md is no output of any plan in plans/" in err
    assert f"out/manifest.json records plans/{RETAIL_PLAN.name}, which is no plan any more" in err
    # a build of the whole project removes the deleted plan's outputs (the fake file is the author's to remove)
    code, out, _ = run_main("build")
    assert code == 0 and f"plans/{RETAIL_PLAN.name}: no such plan any more; removed {RETAIL_PLAN.stem}." in out
    assert not list((project / "out").glob(f"{RETAIL_PLAN.stem}.*"))
    (project / "out" / "fake.md").unlink()
    assert run_main("check")[0] == 0


def test_a_forged_gone_plan_cannot_make_a_build_delete_a_current_output(project, run_main):
    doc = _manifest(project)
    doc["plans"]["gone"] = dict(doc["plans"][STEM], file="plans/gone.yaml")
    _write_manifest(project, doc)
    code, out, _ = run_main("build")
    assert code == 0 and "plans/gone.yaml: no such plan any more; no outputs left" in out
    assert (project / "out" / f"{STEM}.md").exists()


@pytest.mark.parametrize("name", ["/dev/zero", "fifo", "/etc/passwd", "../outside.txt"])
def test_manifest_inputs_that_are_no_regular_file_in_the_repository_are_never_read(project, run_main, name):
    if name == "fifo":
        os.mkfifo(project / "fifo")
    if name == "../outside.txt":
        (project.parent / "outside.txt").write_text("secret")
    doc = _manifest(project)
    doc["plans"][STEM]["inputs"][name] = hashlib.sha256(b"").hexdigest()
    doc["plans"][STEM]["imports"]["/**/*"] = "0" * 64
    _write_manifest(project, doc)
    code, _, err = run_main("check")                 # a FIFO read would hang here: the test's timeout says so
    assert code == 1 and f"{MAIN}: outputs current, but out/{manifest.NAME} has no record of them" in err
    assert run_main("build")[0] == 0
    assert _manifest(project)["plans"][STEM]["inputs"] == {MAIN: _sha(project / MAIN)}   # repaired by the build
    assert run_main("check")[0] == 0


def test_a_manifest_that_is_a_device_or_a_fifo_is_not_read(project, run_main):
    path = project / "out" / manifest.NAME
    path.unlink()
    os.mkfifo(path)
    code, _, err = run_main("check")                     # not read, so no hang: the record counts as missing
    assert code == 1 and f"{MAIN}: outputs current, but out/{manifest.NAME} has no record of them" in err
    assert run_main("build")[0] == 0 and path.is_file()
    assert run_main("check")[0] == 0


def test_an_edited_config_json_is_a_change(project, run_main):
    (project / "plans" / "models").mkdir()
    config = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096, "intermediate_size": 14336,
              "vocab_size": 128256, "torch_dtype": "bfloat16"}
    (project / "plans" / "models" / "config.json").write_text(json.dumps(config))
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = {"config": "models/config.json"}
    plan["inputs"]["parameter_count"] = 8_030_261_248
    (project / "plans" / "configured.yaml").write_text(yaml.safe_dump(plan))
    assert run_main("build")[0] == 0
    assert "plans/models/config.json" in _manifest(project)["plans"]["configured"]["inputs"]
    assert run_main("check")[0] == 0
    config["num_key_value_heads"] = 32
    (project / "plans" / "models" / "config.json").write_text(json.dumps(config))
    code, _, err = run_main("check")
    assert code == 1
    assert "plans/configured.yaml: out/configured." in err and "plans/models/config.json changed" in err
    code, out, _ = run_main("build")
    assert code == 0 and "plans/configured.yaml: wrote out/configured." in out


@pytest.mark.parametrize("other", ["plans/{stem}.yml", "more/{stem}.yaml"])
def test_plans_whose_outputs_collide_are_refused_naming_both(project, run_main, other):
    other = other.format(stem=RETAIL_PLAN.stem)
    (project / other).parent.mkdir(exist_ok=True)
    shutil.copy(RETAIL_PLAN, project / other)
    given = () if other.startswith("plans/") else (f"plans/{RETAIL_PLAN.name}", other)
    for command in ("build", "check"):
        code, out, err = run_main(command, *given)
        assert (code, out) == (1, "")
        assert f"plans/{RETAIL_PLAN.name} and {other} would both write out/{RETAIL_PLAN.stem}.*" in err


def test_a_cache_folder_inside_the_repository_is_not_used(project, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(project / ".cache"))
    assert run_main("check")[0] == 0
    assert not (project / ".cache").exists()


def test_a_warm_cache_is_used_and_vouches_only_for_unchanged_inputs(project, run_main, monkeypatch):
    from capplan import build as builder

    assert run_main("check")[0] == 0                     # computes, fills the cache
    with monkeypatch.context() as m:
        m.setattr(builder, "compile_plan", lambda *a, **k: pytest.fail("evaluated despite the cache"))
        assert run_main("check")[0] == 0
    record = project / "out" / f"{STEM}.md"
    record.write_text(record.read_text() + "\n")
    code, _, err = run_main("check")                     # the cache's hashes, not the manifest's
    assert code == 1 and f"out/{STEM}.md is out of date" in err


def test_check_runs_as_a_command_with_its_children_gone(project):
    """The console command from a subprocess: the parallel compile leaves no process behind."""
    ran = subprocess.run([sys.executable, "-m", "capplan.cli", "check"], cwd=project, capture_output=True,
                         text=True, timeout=600, check=False)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "huge"])
def test_a_plan_that_is_no_regular_file_or_too_large_is_refused_unread(project, run_main, target):
    """A committed symlink to a device, a FIFO, or a plan file beyond the limit: one message, no hang."""
    link = project / "plans" / "odd.yaml"
    if target == "fifo":
        os.mkfifo(project / "fifo")
        link.symlink_to(project / "fifo")
    elif target == "huge":
        link.write_bytes(b"a: 1\n" * (1 + 4 * 2 ** 20 // 5))
    else:
        link.symlink_to(target)
    for command in ("check", "build"):
        code, _, err = run_main(command)
        assert code == 1
        expected = "the file is larger than 4 MiB" if target == "huge" else \
            "cannot read file: not a regular file (a device, a FIFO or a folder)"
        named = "fifo" if target == "fifo" else "plans/odd.yaml"      # a link inside the project: its target
        assert f"{named}: {expected}" in err


@pytest.mark.parametrize("damage", ["deleted", "garbage", "another format"])
def test_a_missing_or_damaged_manifest_fails_check_naming_it(project, run_main, damage):
    """The manifest is part of what a fresh build writes (issue 37, item 11)."""
    path = project / "out" / manifest.NAME
    if damage == "deleted":
        path.unlink()
    else:
        path.write_text("{ not json" if damage == "garbage" else json.dumps({"format": 99, "plans": {}}))
    code, _, err = run_main("check")
    assert code == 1
    assert f"  - out/{manifest.NAME} is " in err
    assert f"{MAIN}: outputs current, but out/{manifest.NAME} has no record of them: run `capplan build {MAIN}`" in err
    assert run_main("build")[0] == 0 and run_main("check")[0] == 0


def test_a_scoped_check_names_the_files_of_out_it_does_not_look_at(project, run_main):
    """``check PLAN`` cannot tell another plan's output from a foreign file: it names both (item 10)."""
    (project / "out" / "extra.md").write_text("not made by any plan")
    code, out, err = run_main("check", MAIN)
    assert code == 0, err
    assert "checked the named plans' outputs only: out/ also holds " in err
    assert "extra.md" in err and f"{RETAIL_PLAN.stem}.md" in err
    assert "`capplan check` with no plans named checks all of out/" in err
    code, _, err = run_main("check")
    assert code == 1 and "out/extra.md is no output of any plan in plans/" in err


@pytest.mark.parametrize("what", ["folder", "too large"])
def test_an_output_that_is_there_is_never_called_missing(project, run_main, what):
    target = project / "out" / f"{STEM}.json"
    target.unlink()
    if what == "folder":
        target.mkdir()
    else:
        with open(target, "wb") as handle:               # sparse: no disk space taken
            handle.truncate(300 * 2 ** 20)
    code, _, err = run_main("check")
    assert code == 1 and f"out/{STEM}.json is missing" not in err
    said = "is no regular file" if what == "folder" else "holds 300 MiB, more than capplan reads (256 MiB)"
    assert f"out/{STEM}.json {said}" in err
