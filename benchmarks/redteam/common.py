"""What every red-team case needs: a scratch project, a plan in it, and the ``capplan`` command
run there as a user runs it (a child process, under a timeout).

A case is ``(item, title, run)``: ``item`` the number of issue 37's list it re-tries,
``run(folder)`` sets the case up in an empty folder and returns what capplan did, in a few
words; it raises :class:`Wrong` with what it saw when capplan still gives the wrong answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

SRC = Path(__file__).resolve().parents[2] / "src"
TIMEOUT = 120.0

PLAN = {
    "title": "Red-team plan",
    "gpu": "a100-sxm4-80gb",
    "model": "llama-3-8b",
    "inputs": {"peak_arrival_rate": "60 req/s", "peak_to_average_ratio": 3.0, "ttft_p95_slo": "1 s",
               "tpot_p95_slo": "25 ms", "e2e_p99_slo": "5 s"},
    "tables": {
        "classes": {"rows": [{"name": "chat", "weight": 0.7, "prompt_tokens": 32, "output_tokens": 64},
                             {"name": "code", "weight": 0.3, "prompt_tokens": 128, "output_tokens": 256}]},
        "load_sweep": {"rows": [
            {"arrival_rate": "2 req/s", "ttft_p95": "85 ms", "tpot_p95": "12.1 ms", "e2e_p99": "1.82 s"},
            {"arrival_rate": "4 req/s", "ttft_p95": "110 ms", "tpot_p95": "13.4 ms", "e2e_p99": "2.15 s"},
            {"arrival_rate": "6 req/s", "ttft_p95": "1500 ms", "tpot_p95": "15.2 ms", "e2e_p99": "2.68 s"}]},
        "deployments": {"rows": [{"name": "node8", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"}]},
    },
}


class Wrong(AssertionError):
    """capplan still gives the wrong answer the issue reported."""


def plan(**changes) -> dict:
    """A copy of the small valid plan with top-level keys replaced."""
    out = yaml.safe_load(yaml.safe_dump(PLAN))
    out.update(changes)
    return out


def write_plan(folder: Path, doc: dict | str, name: str = "p") -> Path:
    (folder / "plans").mkdir(exist_ok=True)
    path = folder / "plans" / f"{name}.yaml"
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def capplan(folder: Path, *args: str, timeout: float = TIMEOUT, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``capplan ARGS`` in ``folder`` with this checkout's code and a cache folder of the case's own
    (``cache``, by default beside the folder: one inside it would be the project's, which capplan
    does not use)."""
    cache = cache or folder.parent / f"{folder.name}.cache"
    env = dict(os.environ, PYTHONPATH=str(SRC), CAPPLAN_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-c", "from capplan.cli import command; command()", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def said(done: subprocess.CompletedProcess) -> str:
    """The exit code and the first line capplan printed (stderr first), for a case's outcome."""
    text = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return f"exit {done.returncode}: {text[0][:160] if text else '(nothing printed)'}"


def expect(condition: bool, done: subprocess.CompletedProcess | None, what: str) -> None:
    if not condition:
        raise Wrong(f"{what} ({said(done)})" if done is not None else what)
