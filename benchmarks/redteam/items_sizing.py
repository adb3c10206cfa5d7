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


def refused_tp(folder: Path) -> str:
    """Item 5: TP3 on Llama-3.3-70B (64 heads) is infeasible in candidates, refused by init --tp 3,
    and a plan's gpus_per_replica 3 on llama-3-8b (32 heads) is refused naming the key."""
    offers = [{"name": "spheron-8x-b200", "gpu": "b200", "gpus_per_node": 8, "node_hourly_cost": "48.24 USD/h"}]
    doc = plan(gpu="b200", model="llama-3.3-70b", candidates={"gpus": ["b200"], "tp": [3, 8], "weights": ["fp8"],
                                                                "offers": offers})
    doc["inputs"]["gpus_per_replica"] = "8 GPU"
    write_plan(folder, doc)
    built = capplan(folder, "build", "plans/p.yaml")
    expect(built.returncode == 0, built, "the candidates plan does not build")
    found = json.loads((folder / "out" / "p.json").read_text(encoding="utf-8"))["candidates"]
    expect("TP3" not in (found["winner"] or ""), built, f"recommends {found['winner']}")
    tp3 = next(r for r in found["candidates"] if r["keys"]["tp"] == 3)
    expect(not tp3["feasible"] and "vLLM refuses" in (tp3["reason"] or ""), built, "TP3 is feasible")
    init = capplan(folder, "init", "--model", "llama-3.3-70b", "--gpu", "b200", "--tp", "3", "--name", "tp3")
    expect(init.returncode in (1, 2) and not (folder / "plans" / "tp3.yaml").exists(), init, "init writes a TP3 plan")
    own = plan()
    own["inputs"]["gpus_per_replica"] = "3 GPU"
    write_plan(folder, own, "own")
    done = capplan(folder, "build", "plans/own.yaml")
    expect(done.returncode == 1 and "gpus_per_replica" in done.stderr, done, "gpus_per_replica 3 GPU sizes a fleet")
    return f"TP3 infeasible ({tp3['reason'][:60]}…); init {said(init)[:50]}…; plan {said(done)[:70]}…"


def one_gpu_nodes(folder: Path) -> str:
    """Item 16: TP4 replicas on one-GPU "nodes" (max_nodes_per_replica 1): the deployment row is
    refused by name, and the candidate is infeasible with its reason."""
    doc = plan()
    doc["inputs"].update(gpus_per_replica="4 GPU", max_nodes_per_replica=1)
    doc["tables"]["deployments"]["rows"] = [{"name": "per-gpu", "gpus_per_node": 1, "node_hourly_cost": "2 USD/h"}]
    write_plan(folder, doc)
    done = capplan(folder, "build")
    expect(done.returncode == 1 and "deployments row per-gpu" in done.stderr, done, "the TP4 replica spans 1-GPU nodes")
    offers = [{"name": "per-gpu", "gpu": "a100-sxm4-80gb", "gpus_per_node": 1, "node_hourly_cost": "2 USD/h"}]
    write_plan(folder, plan(candidates={"gpus": ["a100-sxm4-80gb"], "tp": [1, 4], "offers": offers}))
    built = capplan(folder, "build")
    expect(built.returncode == 0, built, "the candidates plan does not build")
    rows = json.loads((folder / "out" / "p.json").read_text(encoding="utf-8"))["candidates"]["candidates"]
    tp4 = next(r for r in rows if r["keys"]["tp"] == 4)
    expect(not tp4["feasible"], built, "TP4 on one-GPU nodes is ranked")
    return f"{said(done)[:120]} …; candidate: {tp4['reason']}"


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
    (5, "a tensor-parallel size the engine refuses is recommended", refused_tp),
    (16, "a replica spread over one-GPU nodes", one_gpu_nodes),
    (17, "a free deployment passes check silently", free_deployment),
    (18, "candidates.tensor_parallel gets no suggestion", suggested_key),
]
