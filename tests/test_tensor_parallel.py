"""A tensor-parallel size the engine refuses is refused or infeasible, with vLLM's reason
(issue 37, item 5): in candidates, init --tp and a plan's own gpus_per_replica.

vLLM refuses a TP that does not divide the attention heads (ModelConfig.verify_with_parallel_config)
and one that neither divides the KV heads nor is a multiple of them (QKVParallelLinear)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
from conftest import BASE_PLAN

from capplan.analysis import candidates as batch
from capplan.analysis.pipeline import evaluate_plan, load_plan
from capplan.errors import CapplanError
from capplan.loading import catalog, parallel


def test_the_sizes_vllm_takes_by_hand():
    llama = catalog.lookup("model", "llama-3.3-70b")              # 64 attention heads, 8 KV heads
    assert [tp for tp in range(1, 65) if not parallel.refusal(llama, tp)] == [1, 2, 4, 8, 16, 32, 64]
    assert parallel.refusal(llama, 3) == (
        "vLLM refuses tensor parallel size 3 for llama-3.3-70b: its 64 attention heads are not divisible by 3 "
        "(ModelConfig.verify_with_parallel_config); sizes it takes: 1, 2, 4, 8, 16, 32, 64")
    qwen = catalog.lookup("model", "qwen2.5-7b")                  # 28 attention heads, 4 KV heads
    # 7 and 14 divide the 28 heads, but 4 KV heads can be neither split over 7 GPUs nor replicated onto them
    assert "its 4 KV heads can neither be split over 7 GPUs nor replicated onto them" in parallel.refusal(qwen, 7)
    assert [tp for tp in range(1, 29) if not parallel.refusal(qwen, tp)] == [1, 2, 4, 28]
    assert not parallel.refusal(qwen, 2, kv_heads=2) and parallel.refusal(qwen, 4, kv_heads=2) == ""
    # MLA keeps one latent every GPU holds whole: only the 128 attention heads are split
    deepseek = catalog.lookup("model", "deepseek-v3")
    assert not parallel.refusal(deepseek, 16) and "128 attention heads" in parallel.refusal(deepseek, 6)
    # a model whose heads capplan does not know is not checked
    assert parallel.refusal(replace(llama, attention_heads=None), 3) == ""


def test_every_catalog_model_knows_its_attention_heads():
    for entry in catalog.entries("model"):
        assert entry.attention_heads and parallel.refusal(entry, 1) == "", entry.id


def test_a_candidate_tp_vllm_refuses_is_infeasible_with_the_reason(write_plan):
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="b200", model="llama-3.3-70b")
    plan["inputs"]["gpus_per_replica"] = "8 GPU"
    plan["candidates"] = {"gpus": ["b200"], "tp": [3, 8], "offers": [
        {"name": "spheron-8x-b200", "gpu": "b200", "gpus_per_node": 8, "node_hourly_cost": "48.24 USD/h"}]}
    _, evaluations = evaluate_plan(write_plan(plan))
    ev = batch.evaluate(evaluations)
    reasons = {c.tp: r for c, r in zip(ev.candidates, ev.reasons)}
    assert reasons[8] == ""
    assert reasons[3].startswith("vLLM refuses tensor parallel size 3 for llama-3.3-70b: its 64 attention heads")


@pytest.mark.parametrize("where", ["inputs", "scenario"])
def test_a_plans_gpus_per_replica_vllm_refuses_is_refused_naming_the_key(write_plan, where):
    plan = copy.deepcopy(BASE_PLAN)            # llama-3-8b: 32 attention heads
    if where == "inputs":
        plan["inputs"]["gpus_per_replica"] = "3 GPU"
        key = "inputs.gpus_per_replica"
    else:
        plan["scenarios"] = {"three": {"set": {"gpus_per_replica": "3 GPU"}}}
        key = "scenarios.three.set.gpus_per_replica"
    with pytest.raises(CapplanError) as err:
        load_plan(write_plan(plan))
    assert err.value.key == key and err.value.line
    assert err.value.message.startswith("gpus_per_replica 3 GPU: vLLM refuses tensor parallel size 3 for llama-3-8b: "
                                        "its 32 attention heads are not divisible by 3")


def test_init_refuses_a_tp_vllm_refuses(tmp_path, run_main):
    code, out, err = run_main("init", "--model", "llama-3.3-70b", "--gpu", "b200", "--tp", "3", tmp_path)
    assert code == 1
    assert "--tp 3: vLLM refuses tensor parallel size 3 for llama-3.3-70b" in err and "sizes it takes: 1, 2, 4, 8" in err
    assert not (tmp_path / "plans").exists()
