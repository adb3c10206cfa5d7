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
