"""Windowed attention caps what a layer keeps; mixture-of-experts weighs all experts.

Hand values: a layer with a window of W tokens keeps min(S, W) tokens of a
request of context S; a full-attention layer keeps S. A short-context mix
gains nothing from windows, a long-context mix gains much.
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import BASE_PLAN

from capplan.engine.evaluate import evaluate
from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading.plan import load

GiB = 2 ** 30


def run(write_plan, rows, model="gemma-2-9b", name="windows", **inputs):
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = model
    plan["inputs"].update(inputs)
    plan["tables"]["classes"]["rows"] = rows
    model_ = standard_model()
    loaded = load(write_plan(plan, name), model_)
    return evaluate(loaded, loaded.nominal, model_)


def one_class(context, prompt=None):
    prompt = prompt or context // 2
    return [{"name": "only", "weight": 1.0, "prompt_tokens": prompt, "output_tokens": context - prompt}]


def test_gemma_style_interleaved_layers(write_plan):
    """gemma-2-9b: 42 layers, 21 of them slide over 4,096 tokens; 336 KiB per token in all layers."""
    e = run(write_plan, one_class(32768), kv_pool="100 GiB")
    assert e.display("kv_bytes_per_token") == 336                      # 2 x 42 x 8 x 256 x 2 B
    assert e.display("kv_token_capacity") == 312_076                   # floor(100 GiB / 336 KiB)
    # per layer a 32k request keeps (21 x 32,768 + 21 x 4,096) / 42 = 18,432 tokens
    assert e.display("avg_cached_tokens") == 18_432
    assert e.display("max_concurrency_worst") == 16                    # floor(312,076 / 18,432), not 9
    assert e.display("mix_token_capacity") == 554_801                  # floor(312,076 x 32,768 / 18,432)
    short = run(write_plan, one_class(2048), name="short", kv_pool="100 GiB")
    assert short.display("avg_cached_tokens") == 2048                  # inside the window: no gain
    assert short.display("mix_token_capacity") == short.display("kv_token_capacity")


def test_gpt_oss_style_alternating_128_token_windows(write_plan, tmp_path):
    """A gpt-oss-style config.json: 36 layers alternating sliding (128) and full; 8 KV heads of 64."""
    config = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 36,
              "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "hidden_size": 2880,
              "intermediate_size": 2880, "num_local_experts": 128, "num_experts_per_tok": 4,
              "vocab_size": 201088, "sliding_window": 128,
              "layer_types": ["sliding_attention", "full_attention"] * 18,
              "quantization_config": {"quant_method": "mxfp4"}}
    (tmp_path / "plans" / "oss").mkdir(parents=True)
    (tmp_path / "plans" / "oss" / "config.json").write_text(json.dumps(config))
    mix = [{"name": "chat", "weight": 0.5, "prompt_tokens": 64, "output_tokens": 64},
           {"name": "rag", "weight": 0.5, "prompt_tokens": 7936, "output_tokens": 256}]
    e = run(write_plan, mix, model={"config": "oss/config.json"}, parameter_count=100_000_000_000,
            weight_bytes_per_param="0.5 B", kv_pool="64 GiB")
    assert e.display("kv_bytes_per_token") == 72                       # 2 x 36 x 8 x 64 x 2 B
    assert e.display("windowed_layers") == 18 and e.display("attention_window") == 128
    assert e.display("kv_token_capacity") == 932_067                   # floor(64 GiB / 72 KiB)
    # chat (128 tokens) fits the window; rag (8,192) keeps 8,192 in 18 layers and 128 in 18
    assert e.display("max_cached_tokens") == (18 * 8192 + 18 * 128) / 36 == 4160
    assert e.display("avg_cached_tokens") == pytest.approx(0.5 * 128 + 0.5 * 4160)     # 2,144
    assert e.display("max_concurrency_worst") == 224                   # floor(932,067 / 4,160)
    assert e.display("max_concurrency_avg") == 419                     # floor(932,067 / (2,144 x 1.036))


def test_window_layout_is_checked_against_the_model(write_plan):
    with pytest.raises(CapplanError, match="windowed_layers is 50, more than the model's 42 layers"):
        run(write_plan, one_class(1024), windowed_layers=50)
    with pytest.raises(CapplanError, match="32 windowed layers need an attention_window above 0"):
        run(write_plan, one_class(1024), model="llama-3-8b", name="nowindow", windowed_layers=32)


def test_mixture_of_experts_holds_every_expert_and_computes_with_the_active_ones(write_plan):
    """Mixtral-8x7B: all 46.7 B parameters in memory, 12.9 B (2 of 8 experts) per token."""
    e = run(write_plan, one_class(1024), model="mixtral-8x7b", name="moe", gpus_per_replica="4 GPU")
    assert e.display("weight_memory") == pytest.approx(46_702_792_704 * 2 / GiB)       # 86.99 GiB
    # prefill of the 512-token prompt: 2 FLOP x 12,879,921,152 active parameters x 512 tokens
    assert e.display("prefill_flops") == pytest.approx(2 * 12_879_921_152 * 512 / 1e12)


def test_llama_4_scout_chunked_layers_and_experts(write_plan):
    """Llama-4-Scout: 109 B parameters resident, 17 B active; 36 of 48 layers attend in 8,192-token chunks."""
    e = run(write_plan, one_class(32768), model="llama-4-scout", name="scout", gpus_per_replica="4 GPU")
    assert e.display("weight_memory") == pytest.approx(109e9 * 2 / GiB)                 # 203.0 GiB
    assert e.display("prefill_flops") == pytest.approx(2 * 17e9 * 16384 / 1e12)
    # a 32k request keeps 32,768 tokens in the 12 global layers and 8,192 in the 36 chunked ones
    assert e.display("max_cached_tokens") == (12 * 32768 + 36 * 8192) / 48 == 14336
