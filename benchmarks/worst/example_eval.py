"""A baseline: the reference plan's ``eval``, to read the other cases against."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks.worst.harness import Case

ROOT = Path(__file__).resolve().parents[2]


def _main_plan(folder: Path) -> list[str]:
    shutil.copy(ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml", folder / "plan.yaml")
    return ["eval", "plan.yaml"]


CASES = [Case("baseline: eval of the main plan", _main_plan, budget_s=10, budget_mib=500)]
