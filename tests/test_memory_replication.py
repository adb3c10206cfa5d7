"""KV heads under wide tensor parallelism: each GPU keeps at least one whole KV head.

vLLM gives each tensor-parallel rank max(1, kv_heads // TP) KV heads
(ModelConfig.get_num_kv_heads), so above TP = kv_heads the heads are replicated:
the bytes one token occupies on each GPU stop shrinking, and a replica's KV per
token grows with its GPUs. Token capacity and gate 2's bytes read per step follow.
"""

from __future__ import annotations

import pytest
from test_memory_engine import engine_plan, evaluated

KiB = 1024
GiB = 2 ** 30


def test_a_4_kv_head_model_at_tp8_by_hand(write_plan):
    """Qwen3-30B-A3B: 48 layers, 32 attention heads, 4 KV heads of 128, BF16 cache (TP8 divides the
    32 heads and is a multiple of the 4 KV heads: vLLM takes it and replicates each KV head twice)."""
    tp4 = evaluated(engine_plan(write_plan, model="qwen3-30b-a3b", name="tp4", gpus_per_replica="4 GPU"))
    tp8 = evaluated(engine_plan(write_plan, model="qwen3-30b-a3b", name="tp8", gpus_per_replica="8 GPU"))
    # TP4: one head per GPU, nothing replicated: 48 x 2 x 4 x 128 x 2 B = 98,304 B = 96 KiB per token
    assert tp4.display("kv_heads_per_gpu") == 1
    assert tp4.display("kv_bytes_per_token") == pytest.approx(96)
    # TP8: max(1, 4 / 8) = 1 head on each of 8 GPUs: 48 x 2 x 1 x 128 x 2 B = 24 KiB per GPU, 192 KiB per replica
    assert tp8.display("kv_heads_per_gpu") == 1
    per_gpu = 48 * 2 * 1 * 128 * 2
    assert per_gpu == 24 * KiB
    assert tp8.display("kv_bytes_per_token") == pytest.approx(8 * per_gpu / KiB)
    # the pool of each GPU holds the same tokens it would hold at TP4 (one head each), not twice as many
    pool_per_gpu = tp8.display("kv_pool") * GiB / 8
    assert tp8.display("kv_token_capacity") == int(pool_per_gpu // per_gpu)
    # gate 2 reads each GPU's copy of the replicated heads
    kv_read = tp8.display("decode_batch") * tp8.display("avg_cached_tokens") * 8 * per_gpu
    weights = tp8.display("weight_memory") * GiB
    assert tp8.display("decode_bytes_per_step") == pytest.approx((weights + kv_read) / 1e9)


def test_no_replication_while_the_gpus_do_not_exceed_the_kv_heads(write_plan):
    one = evaluated(engine_plan(write_plan, name="tp1"))
    eight = evaluated(engine_plan(write_plan, name="tp8", gpus_per_replica="8 GPU"))   # llama-3-8b: 8 KV heads
    assert one.display("kv_heads_per_gpu") == 8 and eight.display("kv_heads_per_gpu") == 1
    assert one.display("kv_bytes_per_token") == eight.display("kv_bytes_per_token") == 128


def test_mla_keeps_its_latent_on_every_gpu(write_plan):
    """DeepSeek-V3 at TP8: vLLM caches the 576-wide latent as one KV head on each rank."""
    e = evaluated(engine_plan(write_plan, gpu="h200-sxm-141gb", model="deepseek-v3", name="mla-tp8",
                              gpus_per_replica="8 GPU", weight_bytes_per_param="1 B"))
    assert e.display("kv_bytes_per_token") == pytest.approx(8 * 61 * (512 + 64) * 2 / KiB)
    # an FP8 cache halves it: 61 x 576 x 1 B = 35,136 B on each GPU
    fp8 = evaluated(engine_plan(write_plan, gpu="h200-sxm-141gb", model="deepseek-v3", name="mla-fp8",
                                gpus_per_replica="8 GPU", weight_bytes_per_param="1 B", kv_bytes_per_element="1 B"))
    assert fp8.display("kv_bytes_per_token") == pytest.approx(8 * 35_136 / KiB)
