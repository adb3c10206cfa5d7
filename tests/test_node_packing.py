"""Replicas fit their nodes (issue #23, item 3): whole replicas per node, the GPUs no
replica fits on shown as packing waste with their price, and a replica larger
than a node refused unless the plan lets it span nodes."""

from __future__ import annotations

import json

import pytest


def _deployments(run_main, write_plan, plan) -> dict:
    code, out, err = run_main("eval", write_plan(plan), "--json")
    assert code == 0, err
    rows = json.loads(out)["scenarios"]["nominal"]["tables"]["deployments"]["rows"]
    return {r["name"]: r for r in rows}


def _four_gpu_replicas(base_plan, gpus_per_node: int, **inputs):
    """Five 4-GPU replicas: 4 active (ceil(10 req/s / 2.8), λ_safe = 4 × 0.7 = 2.8 req/s per replica) and a spare."""
    base_plan["inputs"].update({"gpus_per_replica": "4 GPU", "peak_arrival_rate": "10 req/s", **inputs})
    base_plan["tables"]["deployments"]["rows"] = [
        {"name": "node", "gpus_per_node": gpus_per_node, "node_hourly_cost": "40 USD/h"}]
    return base_plan


def test_five_four_gpu_replicas_on_six_gpu_nodes_take_five_nodes(run_main, write_plan, base_plan):
    row = _deployments(run_main, write_plan, _four_gpu_replicas(base_plan, 6))["node"]
    # one 4-GPU replica per 6-GPU node: 5 replicas -> 5 nodes (not ceil(20 / 6) = 4), 30 GPUs rented
    assert row["replicas_per_node"] == 1
    assert row["nodes"] == 5
    assert row["deployed_gpus"] == 30
    # 2 GPUs of each node hold no replica: 10 idle, 10 / 6 x $40/h x 732 h = $48,800 a month
    assert row["idle_gpus"] == 10
    assert row["idle_gpu_cost"] == pytest.approx(48_800)
    # the nodes hold 5 replicas, not floor(30 / 4) = 7: safe capacity 5 x 2.8 = 14 req/s
    assert row["node_replicas"] == 5
    assert row["safe_capacity"] == pytest.approx(14)


def test_replicas_pack_several_to_a_node(run_main, write_plan, base_plan):
    base_plan["inputs"].update({"gpus_per_replica": "2 GPU", "peak_arrival_rate": "10 req/s"})
    row = _deployments(run_main, write_plan, base_plan)["node8"]
    # 4 replicas of 2 GPUs per 8-GPU node; 4 active + 1 spare = 5 replicas -> 2 nodes, 6 GPUs of room left
    assert row["replicas_per_node"] == 4
    assert row["nodes"] == 2
    assert row["node_replicas"] == 8 and row["idle_gpus"] == 0


def test_a_replica_larger_than_a_node_is_refused_with_the_fix(run_main, write_plan, base_plan):
    code, out, err = run_main("eval", write_plan(_four_gpu_replicas(base_plan, 3)))
    assert code == 1
    assert "tables.deployments.rows[0]: deployments row node: a replica of 4 GPUs does not fit on one of its nodes" in err
    assert "choose nodes with at least 4 GPUs, or set max_nodes_per_replica" in err
    assert "Traceback" not in err


def test_a_replica_may_span_nodes_when_the_plan_allows_it(run_main, write_plan, base_plan):
    row = _deployments(run_main, write_plan, _four_gpu_replicas(base_plan, 3, max_nodes_per_replica=2))["node"]
    # a 4-GPU replica on 3-GPU nodes spans ceil(4 / 3) = 2 nodes: 5 replicas -> 10 nodes, 30 GPUs, 10 idle
    assert row["nodes_per_replica"] == 2
    assert row["nodes"] == 10
    assert row["node_replicas"] == 5
    assert row["idle_gpus"] == 10


def test_a_per_gpu_offer_is_no_tensor_parallel_group(run_main, write_plan, base_plan):
    """Rented single GPUs (gpus_per_node 1, SPEC 3.3) are not one tensor-parallel group: a replica of
    several is refused, naming the row, unless the plan lets a replica span that many (issue 37, item 16)."""
    plan = _four_gpu_replicas(base_plan, 1)
    plan["tables"]["deployments"]["rows"].insert(0, {"name": "node8", "gpus_per_node": 8,
                                                     "node_hourly_cost": "40 USD/h"})
    path = write_plan(plan)
    code, out, err = run_main("eval", path)
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "name: node" == l.strip("- "))
    assert code == 1
    assert (f"test-plan.yaml:{line}: tables.deployments.rows[1]: deployments row node: a replica of 4 GPUs "
            "does not fit on one of its nodes: it would span nodes, which the plan allows up to 1 (a per-GPU offer, "
            "gpus_per_node 1, rents single GPUs, not one tensor-parallel group)") in err
    assert "node8" not in err


def test_a_per_gpu_offer_takes_a_replicas_gpus_one_by_one_where_the_plan_allows_it(run_main, write_plan, base_plan):
    # max_nodes_per_replica 4: a 4-GPU replica takes 4 one-GPU "nodes"; 5 replicas -> 20 GPUs, none idle
    row = _deployments(run_main, write_plan, _four_gpu_replicas(base_plan, 1, max_nodes_per_replica=4))["node"]
    assert row["nodes_per_replica"] == 4
    assert row["nodes"] == 20 and row["deployed_gpus"] == 20
    assert row["idle_gpus"] == 0


def test_a_candidate_larger_than_a_per_gpu_offers_node_is_infeasible(write_plan, base_plan):
    from capplan.analysis import candidates as batch
    from capplan.analysis.pipeline import evaluate_plan

    base_plan["candidates"] = {"gpus": ["a100-sxm4-80gb"], "tp": [1, 4], "offers": [
        {"name": "per-gpu", "gpu": "a100-sxm4-80gb", "gpus_per_node": 1, "node_hourly_cost": "2 USD/h"}]}
    _, evaluations = evaluate_plan(write_plan(base_plan))
    ev = batch.evaluate(evaluations)
    reasons = {c.tp: r for c, r in zip(ev.candidates, ev.reasons)}
    assert reasons == {1: "", 4: "a replica of 4 GPUs does not fit a node of 1 GPU (max_nodes_per_replica)"}
