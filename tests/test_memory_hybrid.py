"""Hybrid models: linear-attention layers keep a fixed state per request, not a KV cache."""

from __future__ import annotations

import pytest
import recalc
from test_memory_engine import assert_workbook_recalculates, engine_plan, evaluated

from capplan.errors import CapplanError


def test_a_request_keeps_the_attention_layers_context_and_the_linear_layers_state(write_plan):
    """Qwen3-Next on one H200-class replica of 2 GPUs: 12 of 48 layers attend, 36 keep 1,072 KiB each."""
    e = evaluated(engine_plan(write_plan, gpu="h200-sxm-141gb", model="qwen3-next-80b-a3b", name="hybrid",
                              gpus_per_replica="2 GPU", gpu_memory_runtime="139.81 GiB/GPU"))
    per_token = e.display("kv_bytes_per_token")
    assert per_token == 2 * 48 * 1 * 2 * 256 * 2 / 1024          # 96 KiB: 2 GPUs x 1 of the 2 KV heads each
    worst = e.display("max_context_tokens")
    assert e.display("max_cached_tokens") == pytest.approx(worst * 12 / 48 + 36 * 1072 / per_token)
    # the mix holds about 4x the tokens a full-attention count gives, less what the states take
    assert e.display("mix_token_capacity") == pytest.approx(
        e.display("kv_token_capacity") * e.display("avg_context_tokens") / e.display("avg_cached_tokens"), abs=1)


def test_more_linear_and_windowed_layers_than_layers_is_refused(write_plan):
    with pytest.raises(CapplanError, match=r"linear_attention_layers \(40\) and windowed_layers \(0\) are more "
                                           r"than the model's 32 layers"):
        evaluated(engine_plan(write_plan, name="too-many", linear_attention_layers=40))


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_the_workbook_recalculates_hybrid_replicated_and_versioned_accounting(write_plan, tmp_path):
    """Qwen3-Next at TP 4 (2 KV heads: replicated), vLLM 0.21 (graphs subtracted), in LibreOffice."""
    path = engine_plan(write_plan, gpu="h200-sxm-141gb", model="qwen3-next-80b-a3b", name="hybrid-wb",
                       gpus_per_replica="4 GPU", vllm_release=21)
    nominal = assert_workbook_recalculates(path, tmp_path, {"kv_heads_per_gpu", "cuda_graph_memory",
                                                            "max_num_batched_tokens", "avg_cached_tokens"})
    assert nominal.display("kv_heads_per_gpu") == 1 and nominal.display("cuda_graph_memory") > 0
