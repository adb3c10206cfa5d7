"""Issue 37's sizing cases: a free offer, a tensor-parallel size the engine refuses, a replica
spread over one-GPU nodes, a free deployment, and a candidates key without its suggestion."""

from __future__ import annotations

import json
from pathlib import Path

from .common import capplan, expect, plan, said, write_plan

OFFERS = [{"name": "owned", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "0 USD/h"},
          {"name": "p5e", "gpu": "h200", "gpus_per_node": 8, "node_hourly_cost": "50 USD/h"}]


def free_offer(folder: Path) -> str:
    """Item 4: a candidate offer at 0 USD/h ranks (it wins) instead of exit 3."""
    write_plan(folder, plan(gpu="h100", candidates={"gpus": ["h100", "h200"], "tp": [1, 2], "offers": OFFERS}))
    done = capplan(folder, "build", "plans/p.yaml")
    expect(done.returncode == 0, done, "a free offer does not build")
    winner = json.loads((folder / "out" / "p.json").read_text(encoding="utf-8"))["candidates"]["winner"]
    expect(winner.endswith("on owned"), done, f"the free offer does not win ({winner})")
    return f"builds; the free offer wins ({winner})"


def suggested_key(folder: Path) -> str:
    """Item 18: ``candidates.tensor_parallel`` is refused with "did you mean tp?"."""
    offers = [dict(OFFERS[0], node_hourly_cost="30 USD/h")]
    write_plan(folder, plan(gpu="h100", candidates={"gpus": ["h100"], "tensor_parallel": [1, 2], "offers": offers}))
    done = capplan(folder, "build", "plans/p.yaml")
    expect(done.returncode == 1 and "did you mean tp?" in done.stderr, done, "no suggestion of tp")
    return said(done)


def free_deployment(folder: Path) -> str:
    """Item 17: a deployment row at 0 USD/h builds, and check warns naming file, line and row."""
    doc = plan()
    doc["tables"]["deployments"]["rows"] = [{"name": "owned", "gpus_per_node": 8, "node_hourly_cost": "0 USD/h"}]
    write_plan(folder, doc)
    built = capplan(folder, "build")
    expect(built.returncode == 0, built, "a free deployment does not build")
    done = capplan(folder, "check")
    warned = [line for line in done.stderr.splitlines() if "priced at 0" in line]
    expect(bool(warned) and "plans/p.yaml:" in warned[0] and "owned" in warned[0], done, "check says nothing")
    return f"exit {done.returncode}: {warned[0][:150]}"


CASES = [
    (4, "a free offer crashes the ranking", free_offer),
    (17, "a free deployment passes check silently", free_deployment),
    (18, "candidates.tensor_parallel gets no suggestion", suggested_key),
]
