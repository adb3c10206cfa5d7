"""``capplan estimate`` with the real aiconfigurator (issue 20, item 2): where the tool is installed, the
committed estimate file of Llama-3.1-8B on one H100 is what the tool writes today, byte for byte.

The tool is an optional extra (``pip install 'capplan[estimate]'``, about 850 MB); the test looks for it
in ``$CAPPLAN_ESTIMATE_PYTHON`` (an interpreter of another virtual environment) or in this one, and is
skipped with that reason where neither has it."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
from conftest import ROOT

PYTHON = os.environ.get("CAPPLAN_ESTIMATE_PYTHON") or sys.executable
FILE = ROOT / "tests" / "data" / "estimates" / "llama-3.1-8b-1024-256-h100-sxm5-80gb-tp1.estimate.yaml"


def _has_tool(python: str) -> bool:
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('aiconfigurator') is None)"
    try:
        return subprocess.run([python, "-I", "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(not _has_tool(PYTHON), reason=(
    f"aiconfigurator is not installed for {PYTHON}: pip install 'capplan[estimate]', or set "
    "CAPPLAN_ESTIMATE_PYTHON to an interpreter that has it"))


def test_the_tool_writes_the_committed_estimate_byte_for_byte(base_plan, write_plan, tmp_path, run_main):
    base_plan.update(gpu="h100-sxm5-80gb", model="llama-3.1-8b")
    base_plan["tables"]["classes"]["rows"] = [{"name": "chat", "weight": 1.0, "prompt_tokens": 1024,
                                               "output_tokens": 256}]
    path = write_plan(base_plan, name="llama-3.1-8b-1024-256")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", PYTHON)
    assert code == 0, err
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before < 120      # measured 14.5 CPU-s
    written = tmp_path / "plans" / "estimates" / FILE.name
    assert written.read_text(encoding="utf-8") == FILE.read_text(encoding="utf-8")
