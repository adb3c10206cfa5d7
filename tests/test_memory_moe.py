"""The profiling peak of mixture-of-experts models: the fused-MoE workspace of the routed experts.

vLLM's fused_moe holds, for M tokens and topk experts each, intermediate_cache13 of
M x topk x max(2N, K) elements (the gate/up output, reused for the down output) and
intermediate_cache2 of M x topk x N (the activated half), N the expert width on each
GPU and K the hidden size; a dense or shared feed-forward holds three of its widths.
"""

from __future__ import annotations

import pytest
from test_memory_engine import engine_plan, evaluated

KiB = 1024
GiB = 2 ** 30


def test_qwen3_30b_a3b_workspace_by_hand(write_plan):
    """8 experts of 768 per token, hidden 2048, no shared expert."""
    one = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", model="qwen3-30b-a3b", name="tp1"))
    four = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", model="qwen3-30b-a3b", name="tp4",
                                 gpus_per_replica="4 GPU"))
    # TP1: 3 x 2048 hidden + 8 x (max(2 x 768, 2048) + 768) = 6,144 + 22,528 elements x 2 B = 57,344 B
    assert one.display("forward_activation_per_token") * KiB == 2 * (3 * 2048 + 8 * (2048 + 768))
    # TP4: the expert width splits to 192, the hidden width does not: 8 x (max(384, 2048) + 192)
    assert four.display("forward_activation_per_token") * KiB == 2 * (3 * 2048 + 8 * (2048 + 192))
    assert one.display("forward_activation_memory") == pytest.approx(8192 * 57_344 / GiB)


def test_a_shared_expert_counts_as_a_dense_feed_forward(write_plan):
    """DeepSeek-V3: 8 routed experts of 2048 and one shared of 2048 (active width 18,432), TP8."""
    e = evaluated(engine_plan(write_plan, gpu="h200-sxm-141gb", model="deepseek-v3", name="dsv3",
                              gpus_per_replica="8 GPU", weight_bytes_per_param="1 B"))
    shared = 18_432 - 8 * 2048
    per_token = 2 * (3 * (7168 + shared / 8) + 8 * (max(2 * 2048 / 8, 7168) + 2048 / 8))
    assert e.display("forward_activation_per_token") * KiB == pytest.approx(per_token)


def test_a_dense_model_keeps_three_feed_forward_widths(write_plan):
    e = evaluated(engine_plan(write_plan, name="dense"))
    assert e.display("forward_activation_per_token") == pytest.approx(3 * (4096 + 14336) * 2 / KiB)
