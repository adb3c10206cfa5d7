"""The engine release as an input: vllm_release selects the accounting rules that release applies."""

from __future__ import annotations

import pytest
from test_memory_engine import engine_plan, evaluated

GiB = 2 ** 30


def test_the_same_plan_on_vllm_0_11_and_0_21_differs_by_the_cuda_graph_estimate(write_plan):
    """From 0.21 the profiler estimates the CUDA graphs and subtracts them; before, they lived in the headroom."""
    old = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", name="v11", vllm_release=11, gpus_per_replica="2 GPU"))
    new = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", name="v21", vllm_release=21, gpus_per_replica="2 GPU"))
    # 67 graphs x 32 layers x 0.28 MiB = 600.3 MiB on each GPU
    estimate = 67 * 32 * 0.28 / 1024
    assert new.display("cuda_graph_estimate") == pytest.approx(estimate)
    assert old.display("cuda_graph_memory") == 0 and new.display("cuda_graph_memory") == pytest.approx(estimate)
    assert old.display("kv_pool") - new.display("kv_pool") == pytest.approx(2 * estimate)
    assert old.display("kv_token_capacity") > new.display("kv_token_capacity")


@pytest.mark.parametrize("gpu,release,tokens,seqs", [
    ("a100-sxm4-80gb", 10, 2048, 256),          # 80 GiB, but vLLM keeps the A100 on the small defaults
    ("l40s", 10, 2048, 256),                    # under 70 GiB
    ("h100-sxm5-80gb", 10, 8192, 1024),
    ("b200-hgx", 10, 8192, 1024),
    ("b200-hgx", 28, 16384, 1024),              # 160 GiB or more from 0.28
    ("h100-sxm5-80gb", 28, 8192, 1024),
])
def test_default_batch_by_gpu_memory_and_release(write_plan, gpu, release, tokens, seqs):
    e = evaluated(engine_plan(write_plan, gpu=gpu, name=f"{gpu}-{release}", vllm_release=release))
    assert (e.display("max_num_batched_tokens"), e.display("max_num_seqs")) == (tokens, seqs)


def test_a_plan_gives_the_batch_it_serves_with(write_plan):
    e = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", name="given", max_num_batched_tokens=4096,
                              max_num_seqs=128))
    assert (e.display("max_num_batched_tokens"), e.display("max_num_seqs")) == (4096, 128)


def _with_engine(write_plan, name, engine, **inputs):
    import yaml
    path = engine_plan(write_plan, gpu="h100-sxm5-80gb", name=name, gpus_per_replica="2 GPU", **inputs)
    plan = yaml.safe_load(path.read_text())
    plan["engine"] = engine
    return write_plan(plan, name)


def test_the_engine_key_names_the_release_the_plan_accounts_for(write_plan):
    """engine: {name: vllm, version: "0.21"} is vllm_release 21, with the key as its source."""
    keyed = evaluated(_with_engine(write_plan, "keyed", {"name": "vllm", "version": "0.21.1"}))
    given = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", name="given", vllm_release=21,
                                  gpus_per_replica="2 GPU"))
    assert keyed.display("vllm_release") == 21
    assert keyed.inputs["vllm_release"].source == "engine: vllm 0.21.1"
    assert keyed.display("kv_token_capacity") == given.display("kv_token_capacity")


@pytest.mark.parametrize("engine,inputs,message", [
    ("vllm 0.21", {}, "engine: unknown engine 'vllm 0.21'; did you mean vllm?"),
    ({"name": "vllm", "version": 0.10}, {},
     "engine.version: write the version as text, e.g. \"0.21\" or \"0.10.1\" (YAML reads 0.10 as the number 0.1), got '0.1'"),
    ({"name": "sglang", "version": "0.4"}, {}, "engine.name: the engine whose accounting capplan models is vllm, got 'sglang'"),
    ({"name": "vllm", "version": "1.2"}, {}, "engine.version: '1.2' is not a vLLM release (0.N or 0.N.M, e.g. \"0.21\")"),
    ({"name": "vllm", "version": "0.21", "build": "x"}, {}, "engine.build: unknown key 'build' (engine keys: name, version, source)"),
    ({"name": "vllm", "version": "0.21"}, {"vllm_release": 21},
     "engine: engine: and inputs: vllm_release both give the vLLM release; keep one"),
], ids=["text", "number", "engine", "version", "key", "twice"])
def test_a_wrong_engine_key_is_one_located_message(write_plan, run_main, engine, inputs, message):
    path = _with_engine(write_plan, "wrong", engine, **inputs)
    code, _, err = run_main("eval", path)
    assert code == 1 and "Traceback" not in err
    assert message in err, err


def test_the_engine_key_needs_the_engines_accounting(base_plan, write_plan, run_main):
    base_plan["engine"] = {"name": "vllm", "version": "0.21"}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1
    assert ("engine: engine: sets the release whose memory accounting gate 1 follows, which a plan with "
            "memory_accounting: reserve does not use; set memory_accounting: engine, or leave engine: out") in err, err
