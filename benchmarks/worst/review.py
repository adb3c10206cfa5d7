"""The worst inputs of the review commands: flip points, goal seek, breakeven, diff --base.

- breakeven between 500 deployments (``eval --json`` computes it; the plan has no
  uncertain input, so no simulation runs and the time is the review work's);
- ``seek`` over 0 … 1e9: a count (failed GPUs, two flips), a rate with a flip
  every 7 req/s (the listing stops at 100 flips each way), goal seek over it; and
  a sawtooth (``ceil(50x / floor(2x))``: neither monotone nor few crossings) over
  2e-6 … 2e6, where the walk spends its work budget and says how far it got;
- ``diff --base`` where the base holds a 1.5 GB file (a sparse file of zeros) in
  the plans' folder: refused by name before a byte of it is read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import yaml

from benchmarks.worst.harness import Case

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"


def _offers(folder: Path) -> list[str]:
    doc = yaml.safe_load(MAIN.read_text())
    doc.pop("expect", None)
    for scenario in doc.get("scenarios", {}).values():
        scenario.pop("expect", None)
    for given in doc["inputs"].values():
        if isinstance(given, dict):
            given.pop("range", None)
            given.pop("dist", None)
    rows = []
    for i in range(500):
        gpus = (1, 2, 4, 8)[i % 4]
        rows.append({"name": f"offer-{i:03d}", "gpus_per_node": gpus,
                     "node_hourly_cost": f"{(2 + (i * 37 % 101) / 50) * gpus:.2f} USD/h"})
    doc["tables"]["deployments"] = {"as_of": "2026-11-01", "rows": rows}
    (folder / "offers.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return ["eval", "offers.yaml", "--json"]


def _seek(*args: str, plan: Path = MAIN):
    def setup(folder: Path) -> list[str]:
        shutil.copy(plan, folder / "plan.yaml")
        return ["seek", "plan.yaml", *args]
    return setup


def _big_blob(folder: Path) -> list[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)

    git("init", "-q")
    (folder / "plans").mkdir()
    shutil.copy(MAIN, folder / "plans" / "main.yaml")
    with (folder / "plans" / "zeros.bin").open("wb") as handle:
        handle.truncate(1536 * 2 ** 20)                     # sparse: 1.5 GB of zeros, no disk
    git("add", "-A")
    git("commit", "-q", "-m", "a plan and a 1.5 GB file")
    (folder / "plans" / "zeros.bin").unlink()
    return ["diff", "--base", "HEAD"]


CASES = [
    Case("review: eval --json, 500 deployments (breakeven)", _offers, budget_s=30, budget_mib=1024),
    Case("review: seek failed_gpus --range 0 1e9", _seek("failed_gpus", "--range", "0", "1e9"),
         budget_s=10, budget_mib=500),
    Case("review: seek peak_arrival_rate --range 1 1e9", _seek("peak_arrival_rate", "--range", "1", "1e9"),
         budget_s=15, budget_mib=500),
    Case("review: seek --target active_gpus=10000 over 1 … 1e9",
         _seek("peak_arrival_rate", "--range", "1", "1e9", "--target", "active_gpus=10000"),
         budget_s=10, budget_mib=500),
    Case("review: seek a sawtooth (retail e2e_p99_slo) --range 0.000002 2e6",
         _seek("e2e_p99_slo", "--range", "0.000002", "2e6", plan=ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml"),
         budget_s=30, budget_mib=500),
    Case("review: diff --base with a 1.5 GB file at the base", _big_blob, budget_s=10, budget_mib=500),
]
