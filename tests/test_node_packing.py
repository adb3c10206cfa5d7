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


def _six_gpu_replicas(base_plan, gpus_per_node: int, **inputs):
    """Five 6-GPU replicas: 4 active (ceil(10 req/s / 2.8), λ_safe = 4 × 0.7 = 2.8 req/s per replica) and a spare."""
    base_plan["inputs"].update({"gpus_per_replica": "6 GPU", "peak_arrival_rate": "10 req/s", **inputs})
    base_plan["tables"]["deployments"]["rows"] = [
        {"name": "node", "gpus_per_node": gpus_per_node, "node_hourly_cost": "40 USD/h"}]
    return base_plan


def test_five_six_gpu_replicas_on_eight_gpu_nodes_take_five_nodes(run_main, write_plan, base_plan):
    row = _deployments(run_main, write_plan, _six_gpu_replicas(base_plan, 8))["node"]
    # one 6-GPU replica per 8-GPU node: 5 replicas -> 5 nodes (not ceil(30 / 8) = 4), 40 GPUs rented
    assert row["replicas_per_node"] == 1
    assert row["nodes"] == 5
    assert row["deployed_gpus"] == 40
    # 2 GPUs of each node hold no replica: 10 idle, 10 / 8 x $40/h x 732 h = $36,600 a month
    assert row["idle_gpus"] == 10
    assert row["idle_gpu_cost"] == pytest.approx(36_600)
    # the nodes hold 5 replicas, not floor(40 / 6) = 6: safe capacity 5 x 2.8 = 14 req/s
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
    code, out, err = run_main("eval", write_plan(_six_gpu_replicas(base_plan, 4)))
    assert code == 1
    assert "a replica of 6 GPUs does not fit on the nodes of every deployment" in err
    assert ("choose nodes with at least 6 GPUs (or a per-GPU offer, gpus_per_node 1), "
            "or set max_nodes_per_replica") in err
    assert "Traceback" not in err


def test_a_replica_may_span_nodes_when_the_plan_allows_it(run_main, write_plan, base_plan):
    row = _deployments(run_main, write_plan, _six_gpu_replicas(base_plan, 4, max_nodes_per_replica=2))["node"]
    # a 6-GPU replica on 4-GPU nodes spans ceil(6 / 4) = 2 nodes: 5 replicas -> 10 nodes, 40 GPUs, 10 idle
    assert row["nodes_per_replica"] == 2
    assert row["nodes"] == 10
    assert row["node_replicas"] == 5
    assert row["idle_gpus"] == 10


def test_a_per_gpu_offer_takes_a_replicas_gpus_one_by_one(run_main, write_plan, base_plan):
    # gpus_per_node 1 is a per-GPU price (SPEC 3.3): the provider places a replica's GPUs together,
    # so a 6-GPU replica takes 6 "nodes" without max_nodes_per_replica; 5 replicas -> 30 GPUs, none idle
    row = _deployments(run_main, write_plan, _six_gpu_replicas(base_plan, 1))["node"]
    assert row["nodes_per_replica"] == 6
    assert row["nodes"] == 30 and row["deployed_gpus"] == 30
    assert row["idle_gpus"] == 0
