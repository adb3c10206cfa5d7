"""``capplan diff --base`` with names git quotes, and with files too large to read.

git writes a name that is not plain ASCII quoted and escaped in its line
output (``"plans/\\303\\274 plan.yaml"``); read that way a changed plan looked
new and a deleted one vanished. Names are read NUL-separated, and every file
is copied out of git a chunk at a time after its size is checked.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import MAIN_PLAN

from capplan.review import diff


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:   # pragma: no cover
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    _git(tmp_path, "config", "core.quotepath", "true")         # git's default: quote non-ASCII names
    (tmp_path / "plans").mkdir()
    return tmp_path


def _commit(repo, message="c"):
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


def test_a_changed_plan_with_an_odd_name_shows_its_change_and_a_deleted_one_shows_as_removed(repo, run_main):
    plans = repo / "plans"
    text = MAIN_PLAN.read_text()
    (plans / "ü plan.yaml").write_text(text)
    (plans / "gone | plan.yaml").write_text(text)
    _commit(repo)
    (plans / "ü plan.yaml").write_text(text.replace("peak_arrival_rate: {value: 60 req/s",
                                                   "peak_arrival_rate: {value: 70 req/s"))
    (plans / "gone | plan.yaml").unlink()
    code, out, err = run_main("diff", "--base", "HEAD", "--format", "json", cwd=repo)
    assert code == 0, err
    import json
    doc = json.loads(out)
    by_file = {(p["old_file"], p["new_file"]): p for p in doc["plans"]}
    changed = by_file[("HEAD:plans/ü plan.yaml", "plans/ü plan.yaml")]
    assert changed["status"] == "changed"
    gpus = next(r for r in changed["key_results"] if r["quantity"] == "active_gpus")
    assert (gpus["old"], gpus["new"]) == (9, 10)
    removed = by_file[("HEAD:plans/gone | plan.yaml", None)]
    assert removed["status"] == "removed"
    assert len(doc["plans"]) == 2

    code, out, _ = run_main("diff", "--base", "HEAD", cwd=repo)
    assert code == 0
    assert "##### `plans/ü plan.yaml`" in out
    assert "##### HEAD:plans/gone \\| plan.yaml" in out and "Plan removed." in out      # escaped, not a code span


def test_a_file_above_the_limit_is_refused_by_name_before_it_is_read(repo, run_main, monkeypatch):
    plans = repo / "plans"
    (plans / "main.yaml").write_text(MAIN_PLAN.read_text())
    (plans / "big.bin").write_bytes(b"\0" * 5000)
    _commit(repo)
    monkeypatch.setattr(diff, "BLOB_LIMIT", 4096)
    code, _, err = run_main("diff", "--base", "HEAD", cwd=repo)
    assert code == 1
    assert "HEAD:plans/big.bin" in err and "capplan diff reads at most" in err


def test_files_are_copied_whole_in_chunks(repo, run_main, monkeypatch, tmp_path):
    plans = repo / "plans"
    (plans / "main.yaml").write_text(MAIN_PLAN.read_text())
    payload = bytes(range(256)) * 40
    (plans / "data.bin").write_bytes(payload)
    (plans / "link.yaml").symlink_to("main.yaml")
    _commit(repo)
    monkeypatch.setattr(diff, "CHUNK", 7)
    into = tmp_path / "copy"
    diff._extract("HEAD", ["plans"], repo, into)
    assert (into / "plans" / "data.bin").read_bytes() == payload
    assert (into / "plans" / "main.yaml").read_text() == MAIN_PLAN.read_text()
    assert (into / "plans" / "link.yaml").is_symlink()
