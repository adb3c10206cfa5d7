"""Sweep files stay inside the plan's repository (or its folder when there is none)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml
from conftest import BASE_PLAN

CSV = ("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n"
       "2,100,10,2.0,200\n4,120,11,2.2,400\n")


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """tmp/repo (a git repository: it holds .git) with plans/, data/runs.csv, and tmp/outside/runs.csv;
    run from tmp/cwd, so messages name the plans by their absolute paths."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "plans").mkdir()
    (repo / "data").mkdir()
    (repo / "data" / "runs.csv").write_text(CSV)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "runs.csv").write_text(CSV)
    return tmp_path


def _plan(folder, patterns):
    """A plan whose import list is written one pattern per line (block style)."""
    plan = json.loads(json.dumps(BASE_PLAN))
    plan["tables"]["load_sweep"] = {"source": "test", "import": patterns}
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False, default_flow_style=False))
    return path


def _line_of(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _refused(run_main, path, pattern_index, *fragments):
    code, _, err = run_main("eval", path)
    assert code == 1 and "Traceback" not in err
    assert f"{path}:" in err and f"tables.load_sweep.import[{pattern_index}]: " in err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_dotdot_inside_the_repository_is_fine(layout, run_main):
    path = _plan(layout / "repo" / "plans", ["../data/runs.csv"])
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    assert json.loads(out)["scenarios"]["nominal"]["quantities"]["instance_max_rate"]["value"] == 4


def test_absolute_path_is_refused_at_its_line(layout, run_main):
    target = str(layout / "outside" / "runs.csv")
    path = _plan(layout / "repo" / "plans", ["../data/runs.csv", target])
    err = _refused(run_main, path, 1, f"'{target}' is an absolute path",
                   "a plan imports only files inside the plan's repository")
    assert f"{path}:{_line_of(path, target)}: tables.load_sweep.import[1]: " in err


def test_dotdot_that_climbs_out_is_refused(layout, run_main):
    path = _plan(layout / "repo" / "plans", ["../../outside/runs.csv"])
    _refused(run_main, path, 0, "'../../outside/runs.csv' climbs with '..' above the plan's repository")


def test_double_star_is_refused(layout, run_main):
    path = _plan(layout / "repo" / "plans", ["../**/runs.csv"])
    _refused(run_main, path, 0, "uses '**', a walk of every folder below")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this system")
def test_symlink_to_a_file_outside_is_refused(layout, run_main):
    plans = layout / "repo" / "plans"
    (plans / "sweep").mkdir()
    (plans / "sweep" / "a.csv").write_text(CSV)
    (plans / "sweep" / "b.csv").symlink_to(layout / "outside" / "runs.csv")
    path = _plan(plans, ["sweep/*.csv"])
    _refused(run_main, path, 0, f"sweep/b.csv is a symlink to '{layout / 'outside' / 'runs.csv'}', "
             "a file outside the plan's repository", "does not follow the link")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this system")
def test_symlink_to_a_folder_outside_is_refused_before_it_is_listed(layout, run_main):
    plans = layout / "repo" / "plans"
    (plans / "sweep").symlink_to(layout / "outside", target_is_directory=True)
    path = _plan(plans, ["sweep/*.csv"])
    err = _refused(run_main, path, 0, f"sweep is a symlink to '{layout / 'outside'}', a folder outside "
                   "the plan's repository")
    assert "runs.csv" not in err          # nothing behind the link was listed


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this system")
def test_symlink_inside_the_repository_is_followed(layout, run_main):
    plans = layout / "repo" / "plans"
    (plans / "sweep").symlink_to(os.path.join("..", "data"), target_is_directory=True)
    code, _, err = run_main("eval", _plan(plans, ["sweep/runs.csv"]))
    assert code == 0, err


def test_without_a_repository_the_plan_folder_is_the_limit(layout, run_main):
    folder = layout / "outside" / "plans"
    folder.mkdir()
    path = _plan(folder, ["../runs.csv"])
    _refused(run_main, path, 0, "climbs with '..' above the plan's folder (it is in no git repository)")


def test_a_worktree_git_file_marks_the_root_and_a_single_pattern_is_located(layout, run_main):
    worktree = layout / "worktree"
    (worktree / "plans").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /somewhere/else\n")
    (worktree / "runs.csv").write_text(CSV)
    assert run_main("eval", _plan(worktree / "plans", ["../runs.csv"]))[0] == 0
    path = _plan(worktree / "plans", "../../repo/data/runs.csv")      # a string, not a list
    code, _, err = run_main("eval", path)
    assert code == 1
    assert (f"{path}:{_line_of(path, 'import:')}: tables.load_sweep.import: '../../repo/data/runs.csv' "
            "climbs with '..' above the plan's repository") in err


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=capplan-test", "-c", "user.email=test@example.invalid",
                    "-c", "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None or not hasattr(os, "symlink"),
                    reason="needs git and symlinks")
@pytest.mark.parametrize("target", ["absolute", "../../../outside/runs.csv"])
def test_diff_base_refuses_a_committed_symlink_out_of_the_repository(layout, run_main, monkeypatch, target):
    repo = layout / "repo"
    plans = repo / "plans"
    (plans / "sweep").mkdir()
    (plans / "sweep" / "runs.csv").write_text(CSV)
    _plan(plans, ["sweep/*.csv"])
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plan with its sweep")
    monkeypatch.chdir(repo)
    # the old side imports its sweep inside the extracted revision
    assert run_main("diff", "--base", "HEAD")[1].startswith("no change in results")

    link = plans / "sweep" / "link.csv"
    link.symlink_to(layout / "outside" / "runs.csv" if target == "absolute" else target)
    assert link.is_file()                 # it resolves: ../../../outside from plans/sweep/
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a link out")
    link.unlink()                         # the working tree is clean; the base is not
    code, out, err = run_main("diff", "--base", "HEAD")
    assert code == 1 and out == "" and "Traceback" not in err
    shown = str(layout / "outside" / "runs.csv") if target == "absolute" else target
    assert (f"HEAD:plans/sweep/link.csv: a committed symlink to '{shown}' points outside the "
            "repository; capplan does not follow links out of it") in err
