"""Shared fixtures: the repository, a CLI runner, built projects and small plans to break."""

from __future__ import annotations

import contextlib
import copy
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MAIN_PLAN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"
RETAIL_PLAN = ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml"

# The longest modules (spreadsheet batches, builds of the main plan), started first: with
# one worker per CPU the suite then ends on short modules, not on one long module that
# started last while the other worker sat idle (pyproject.toml turns off xdist's own
# order, by number of tests, which put the two-test random-plan module last: 68 s
# instead of 57 s on two cores).
LONGEST_FIRST = ("test_workbook.py", "test_build.py", "test_workbook_random.py", "test_seek.py", "test_simulate.py")


def pytest_configure(config):
    """The suite's own cache of compiled plans (see capplan.cache), never the user's: entries
    are found by content, so tests share it safely; a test of the cache sets its own."""
    os.environ["CAPPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="capplan-test-cache-")


def pytest_unconfigure(config):
    shutil.rmtree(os.environ.get("CAPPLAN_CACHE_DIR", ""), ignore_errors=True)


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))      # stable: the rest keep their order

# A small valid plan; tests break one thing at a time.
BASE_PLAN = {
    "title": "Test plan",
    "gpu": "a100-sxm4-80gb",
    "model": "llama-3-8b",
    "inputs": {
        "peak_arrival_rate": "60 req/s",
        "peak_to_average_ratio": 3.0,
        "ttft_p95_slo": "1 s",
        "tpot_p95_slo": "25 ms",
        "e2e_p99_slo": "5 s",
    },
    "tables": {
        "classes": {"rows": [
            {"name": "chat", "weight": 0.7, "prompt_tokens": 32, "output_tokens": 64},
            {"name": "code", "weight": 0.3, "prompt_tokens": 128, "output_tokens": 256},
        ]},
        "load_sweep": {"rows": [
            {"arrival_rate": "2 req/s", "ttft_p95": "85 ms", "tpot_p95": "12.1 ms", "e2e_p99": "1.82 s"},
            {"arrival_rate": "4 req/s", "ttft_p95": "110 ms", "tpot_p95": "13.4 ms", "e2e_p99": "2.15 s"},
            {"arrival_rate": "6 req/s", "ttft_p95": "1500 ms", "tpot_p95": "15.2 ms", "e2e_p99": "2.68 s"},
        ]},
        "deployments": {"rows": [
            {"name": "node8", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"},
        ]},
    },
}


@pytest.fixture
def base_plan():
    return copy.deepcopy(BASE_PLAN)


@pytest.fixture
def write_plan(tmp_path):
    """Write a plan (dict or raw text) to tmp_path/plans/<name>.yaml; return its path."""
    def write(plan, name="test-plan"):
        folder = tmp_path / "plans"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.yaml"
        path.write_text(plan if isinstance(plan, str) else yaml.safe_dump(plan, sort_keys=False))
        return path
    return write


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Every test runs in its own empty folder, so a build never writes into the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def run_main(capsys, monkeypatch):
    """Run the CLI in-process (fast), in ``cwd`` if given; return (code, stdout, stderr).

    The real console entry point is exercised once, in test_build.test_console_entry_point.
    """
    from capplan.cli import main

    def run(*argv, cwd=None):
        with monkeypatch.context() as m:
            if cwd is not None:
                m.chdir(cwd)
            code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


@pytest.fixture(scope="session")
def _built_once(tmp_path_factory):
    """A project of these plans with its out/ built, once per session (a build costs a second)."""
    from capplan.cli import main

    cache: dict[tuple[Path, ...], Path] = {}

    def get(plans: tuple[Path, ...]) -> Path:
        if plans not in cache:
            folder = tmp_path_factory.mktemp("built")
            (folder / "plans").mkdir()
            for plan in plans:
                shutil.copy(plan, folder / "plans" / plan.name)
            here = os.getcwd()
            os.chdir(folder)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(["build"]) == 0
            finally:
                os.chdir(here)
            cache[plans] = folder
        return cache[plans]
    return get


@pytest.fixture
def built_project(tmp_path, _built_once):
    """``built_project(*plans)``: tmp_path holding plans/ with these plans and their
    built out/ (a copy: the out/manifest.json names files relative to the project)."""
    def make(*plans: Path) -> Path:
        shutil.copytree(_built_once(tuple(plans)), tmp_path, dirs_exist_ok=True)
        return tmp_path
    return make
