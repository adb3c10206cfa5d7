"""``model: {config: path}``: the architecture read from a Hugging Face config.json."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from conftest import BASE_PLAN

from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading import hf_config
from capplan.loading.plan import load

DENSE = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "num_hidden_layers": 64,
         "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120,
         "intermediate_size": 25600, "vocab_size": 151936, "sliding_window": None,
         "use_sliding_window": False, "torch_dtype": "bfloat16"}


def entry(tmp_path, config, name="config.json"):
    (tmp_path / name).write_text(json.dumps(config))
    return hf_config.load(tmp_path, name)


def values(e):
    return {k: v["value"] for k, v in e.values.items()}


def test_a_dense_config_gives_the_architecture_with_its_file_and_hash(tmp_path):
    e = entry(tmp_path, DENSE)
    digest = hashlib.sha256((tmp_path / "config.json").read_bytes()).hexdigest()
    assert values(e) == {"layers": 64, "hidden_size": 5120, "vocab_size": 151936, "kv_heads": 8, "head_dim": 128,
                         "active_intermediate_size": 25600, "weight_bytes_per_param": 2}
    assert e.attention == "gqa" and e.required == ("parameter_count",)
    assert e.values["kv_heads"]["source"] == f"config.json (SHA-256 {digest}): num_key_value_heads"


def test_a_plan_names_its_config_and_must_give_the_parameter_count(tmp_path, write_plan):
    (tmp_path / "plans" / "models").mkdir(parents=True)
    (tmp_path / "plans" / "models" / "config.json").write_text(json.dumps(DENSE))
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = {"config": "models/config.json"}
    with pytest.raises(CapplanError, match=r"model\.config: models/config\.json does not say parameter_count"):
        load(write_plan(plan), standard_model())
    plan["inputs"]["parameter_count"] = 32_762_123_264
    loaded = load(write_plan(plan), standard_model())
    given = loaded.nominal.inputs["kv_heads"]
    assert given.value == 8 and given.source.startswith("models/config.json (SHA-256 ")


@pytest.mark.parametrize("missing", ["num_hidden_layers", "hidden_size", "vocab_size", "intermediate_size"])
def test_a_config_without_a_key_is_refused_naming_it(tmp_path, missing):
    config = {k: v for k, v in DENSE.items() if k != missing}
    with pytest.raises(CapplanError, match=f"config.json: cannot read the architecture: '{missing}' must be a whole "
                                           r"number \(it is missing\)"):
        entry(tmp_path, config)


def test_files_outside_the_plans_repository_and_non_json_are_refused(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "config.json").write_text(json.dumps(DENSE))
    with pytest.raises(CapplanError, match="outside|above"):
        hf_config.load(tmp_path / "repo", "../config.json")
    with pytest.raises(CapplanError, match="no wildcards"):
        hf_config.load(tmp_path, "*.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CapplanError, match="bad.json: not a JSON file"):
        hf_config.load(tmp_path, "bad.json")


def test_mla_and_shared_experts(tmp_path):
    """DeepSeek-style: MLA latent, 8 of 256 routed experts of 2048 plus one shared expert."""
    e = entry(tmp_path, {"num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
                         "hidden_size": 7168, "vocab_size": 129280, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                         "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
                         "moe_intermediate_size": 2048, "intermediate_size": 18432,
                         "quantization_config": {"quant_method": "fp8"}})
    assert e.attention == "mla"
    v = values(e)
    assert (v["kv_lora_rank"], v["qk_rope_head_dim"], v["weight_bytes_per_param"]) == (512, 64, 1)
    assert v["active_intermediate_size"] == 9 * 2048 and "kv_heads" not in v


def test_window_layouts(tmp_path):
    gemma2 = entry(tmp_path, {**DENSE, "model_type": "gemma2", "num_hidden_layers": 42, "sliding_window": 4096,
                              "use_sliding_window": None}, "g2.json")
    assert (values(gemma2)["windowed_layers"], values(gemma2)["attention_window"]) == (21, 4096)
    gemma3 = entry(tmp_path, {**DENSE, "num_hidden_layers": 62, "sliding_window": 1024, "use_sliding_window": None,
                              "sliding_window_pattern": 6}, "g3.json")
    assert values(gemma3)["windowed_layers"] == 52                    # 10 of 62 layers global
    llama4 = entry(tmp_path, {"text_config": {**DENSE, "model_type": "llama4_text", "num_hidden_layers": 48,
                                              "attention_chunk_size": 8192, "num_local_experts": 16,
                                              "num_experts_per_tok": 1, "intermediate_size": 8192}},
                   "l4.json")
    v = values(llama4)
    assert (v["windowed_layers"], v["attention_window"], v["active_intermediate_size"]) == (36, 8192, 16384)
    qwen = entry(tmp_path, {**DENSE, "sliding_window": 131072}, "q.json")   # use_sliding_window false
    assert "windowed_layers" not in values(qwen)


def test_mixed_quantization_leaves_the_bytes_per_parameter_to_the_plan(tmp_path):
    e = entry(tmp_path, {**DENSE, "quantization_config": {"quant_method": "mxfp4"}})
    assert "weight_bytes_per_param" not in e.values
    assert e.required == ("parameter_count", "weight_bytes_per_param")


# ai-dynamo/aiconfigurator@1b7cfb10a6fa06880ad7911db5ddb949882ff76a:
# src/aiconfigurator/model_configs/Qwen--Qwen3-Next-80B-A3B-Thinking_config.json, the keys capplan reads
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 48,
              "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048,
              "intermediate_size": 5120, "vocab_size": 151936, "full_attention_interval": 4,
              "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
              "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_experts": 512,
              "num_experts_per_tok": 10, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
              "use_sliding_window": False, "torch_dtype": "bfloat16"}


def test_a_hybrid_config_gives_its_linear_layers_and_their_state(tmp_path):
    """Qwen3-Next: every 4th layer attends, the other 36 keep a Gated DeltaNet state of
    (2 x 16 x 128 + 32 x 128) x 3 + 32 x 128 x 128 = 548,864 elements, 1,072 KiB in BF16; as the catalog."""
    v = values(entry(tmp_path, QWEN3_NEXT))
    from capplan.loading import catalog
    listed = {k: spec["value"] for k, spec in catalog.lookup("model", "qwen3-next-80b-a3b").values.items()}
    assert (v["linear_attention_layers"], v["recurrent_state_size"]) == (36, 1072)
    assert listed["recurrent_state_size"] == "1072 KiB/request"
    for name in ("layers", "linear_attention_layers", "kv_heads", "head_dim", "hidden_size",
                 "active_intermediate_size", "experts_per_token", "expert_intermediate_size", "vocab_size"):
        assert v[name] == listed[name], name
    # Qwen3.5 lists each layer's type instead
    listed_types = {**QWEN3_NEXT, "num_hidden_layers": 8, "full_attention_interval": None,
                    "layer_types": ["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3
                    + ["full_attention"]}
    assert values(entry(tmp_path, listed_types, "q35.json"))["linear_attention_layers"] == 6
    assert "linear_attention_layers" not in values(entry(tmp_path, DENSE, "dense.json"))


def test_a_hybrid_config_without_its_state_widths_is_refused(tmp_path):
    broken = {k: v for k, v in QWEN3_NEXT.items() if k != "linear_value_head_dim"}
    with pytest.raises(CapplanError, match="'linear_value_head_dim' must be a whole number \\(it is missing\\)"):
        entry(tmp_path, broken)


# DeepSeek-V2.5's config.json as Hugging Face ships it: MLA, 6 of 160 routed experts and 2 shared, no _name_or_path
DEEPSEEK_V25 = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "num_hidden_layers": 60,
                "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_size": 5120, "vocab_size": 102400,
                "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                "v_head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 2, "num_experts_per_tok": 6,
                "moe_intermediate_size": 1536, "intermediate_size": 12288, "torch_dtype": "bfloat16"}


def _deepseek_plan(tmp_path, write_plan, model: dict):
    """A DeepSeek-V2.5 plan on H200 TP8 importing two `vllm bench serve` results of that model."""
    (tmp_path / "plans" / "runs").mkdir(parents=True)
    (tmp_path / "plans" / "deepseek-v2.5-config.json").write_text(json.dumps(DEEPSEEK_V25))
    for rate in (1, 2):
        (tmp_path / "plans" / "runs" / f"qps_{rate}.json").write_text(json.dumps({
            "backend": "vllm", "model_id": "deepseek-ai/DeepSeek-V2.5", "tokenizer_id": "deepseek-ai/DeepSeek-V2.5",
            "tensor_parallel_size": 8, "num_prompts": 100, "request_rate": rate, "burstiness": 1.0,
            "max_concurrency": None, "duration": 60.0, "completed": 100, "total_input_tokens": 6000,
            "total_output_tokens": 12000, "request_throughput": rate, "output_throughput": 120.0 * rate,
            "p95_ttft_ms": 300.0 * rate, "p95_tpot_ms": 20.0, "p99_e2el_ms": 3000.0}))
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="h200", model=model)
    plan["inputs"].update(parameter_count=235_741_434_880, gpus_per_replica=8)
    plan["tables"]["load_sweep"] = {"source": "vllm bench serve", "import": "runs/qps_*.json"}
    return write_plan(plan)


def test_a_config_declared_model_named_by_its_hugging_face_id_takes_its_own_benchmark(tmp_path, write_plan,
                                                                                     run_main):
    path = _deepseek_plan(tmp_path, write_plan, {"config": "deepseek-v2.5-config.json",
                                                 "name": "deepseek-ai/DeepSeek-V2.5"})
    code, _, err = run_main("build", path)
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert "deepseek-ai/DeepSeek-V2.5 (`deepseek-v2.5-config.json`)" in record
    assert "measured: model deepseek-ai/DeepSeek-V2.5; tensor parallel 8" in record
    assert "Transferred evidence" not in record


def test_an_unnamed_config_model_is_told_to_name_itself(tmp_path, write_plan, run_main):
    code, _, err = run_main("eval", _deepseek_plan(tmp_path, write_plan, {"config": "deepseek-v2.5-config.json"}))
    assert code == 1
    assert ("measured model deepseek-ai/DeepSeek-V2.5, not the plan's deepseek-v2.5-config.json (name the model "
            "beside its file: model: {config: deepseek-v2.5-config.json, name: <its Hugging Face id>})") in err


@pytest.mark.parametrize("model, message", [
    ({"config": "deepseek-v2.5-config.json", "name": {"id": "x"}}, "model.name: expected text, got a mapping"),
    ({"config": "deepseek-v2.5-config.json", "name": "x" * 201}, "model.name: a name has at most 200 characters"),
    ({"config": "deepseek-v2.5-config.json", "weights": "fp8"},
     "model: expected a catalog id, {id: catalog id, weights: format} or {config: path/to/config.json, name: "),
])
def test_a_bad_model_name_is_refused_at_its_key(model, message, tmp_path, write_plan, run_main):
    code, _, err = run_main("eval", _deepseek_plan(tmp_path, write_plan, model))
    assert code == 1 and message in err, err
