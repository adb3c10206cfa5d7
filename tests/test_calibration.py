"""Rows 1-6 of the calibration set (shared/reference/vllm-kv-calibration.md), predicted from the configuration.

Each row is one logged vLLM start. capplan gets what the operator configured
(GPU, model, tensor parallelism, gpu_memory_utilization, max_num_batched_tokens,
max_num_seqs) and what the log says about the engine's own environment that
the configuration cannot (the runtime's memory total where the GPU's is not in
the catalog, the sampler path, measured non-torch memory), and must land
within 5 % of the KV memory per GPU and, where logged, of the KV cache tokens.
"""

from __future__ import annotations

import pytest
from test_memory_engine import engine_plan, evaluated

GiB = 2 ** 30
TOLERANCE = 0.05

# case: (gpu, model, inputs, tensor parallelism, logged KV GiB per GPU, logged tokens, source)
ROWS = {
    # Qwen2-7B-Instruct has Qwen2.5-7B's widths; vLLM 0.10.1.1 logs "Using FlashInfer for top-p & top-k
    # sampling" (about 14 B per logit); OpenAI-server defaults on an A100: 2,048 tokens, 256 sequences.
    "1 qwen2-7b a100 tp1": ("a100-sxm4-80gb", "qwen2.5-7b", {
        "gpu_memory_utilization": 0.5, "max_num_batched_tokens": 2048, "max_num_seqs": 256,
        "sampler_bytes_per_logit": "14 B"}, 1, 24.83, 464_848,
        "dennislee22/vLLM-benchmarking@b474d1e:log/vllm-7B-1gpuA10080GB-0.5GRAM.log"),
    "2 qwen2-7b a100 tp2": ("a100-sxm4-80gb", "qwen2.5-7b", {
        "gpu_memory_utilization": 0.5, "max_num_batched_tokens": 2048, "max_num_seqs": 256,
        "sampler_bytes_per_logit": "14 B", "gpus_per_replica": "2 GPU"}, 2, 31.83, 1_192_160,
        "dennislee22/vLLM-benchmarking@b474d1e:log/vllm-7B-2gpuA10080GB-0.5GRAM-same-node.log"),
    # V0 engine, chunked prefill off: the profile pass runs max_model_len = 20,000 tokens; the log gives the
    # RTX 3090's runtime total (23.58 GiB, not in the catalog) and its non-torch memory (0.35 GiB).
    "3 llama-3.1-8b rtx3090 tp1": ("a100-sxm4-80gb", "llama-3.1-8b", {
        "gpu_memory_runtime": "23.58 GiB/GPU", "gpu_memory_utilization": 0.9, "max_num_batched_tokens": 20000,
        "max_num_seqs": 256, "non_torch_memory": "0.35 GiB/GPU"}, 1, 3.81, 31_232,
        "vllm-project/vllm#10517 (comment of 2024-12-02)"),
    # Hybrid: 12 full-attention and 36 Gated DeltaNet layers. vLLM 0.10.2 defaults on an H200 (8,192 tokens,
    # 1,024 sequences); the log's runtime total 139.81 GiB (the catalog's H200 total is unconfirmed).
    "4 qwen3-next-80b h200 tp2": ("h200-sxm-141gb", "qwen3-next-80b-a3b", {
        "gpu_memory_runtime": "139.81 GiB/GPU", "gpu_memory_utilization": 0.9, "max_num_batched_tokens": 8192,
        "max_num_seqs": 1024, "gpus_per_replica": "2 GPU"}, 2, 44.59, 973_760,
        "reference data row 4: a public Qwen3-Next-80B-A3B-Instruct deployment log, vLLM 0.10.2"),
}


def predicted(case, write_plan):
    gpu, model, inputs, tp, *_ = ROWS[case]
    e = evaluated(engine_plan(write_plan, gpu=gpu, model=model, name=case.replace(" ", "-"), **inputs))
    return e.display("kv_pool") / tp, e.display("kv_token_capacity")


@pytest.mark.parametrize("case", ROWS)
def test_kv_memory_per_gpu_and_tokens_within_5_percent(case, write_plan):
    *_, kv_logged, tokens_logged, _source = ROWS[case]
    kv, tokens = predicted(case, write_plan)
    assert abs(kv - kv_logged) / kv_logged < TOLERANCE, f"{case}: {kv:.2f} GiB vs logged {kv_logged} GiB"
    assert abs(tokens - tokens_logged) / tokens_logged < TOLERANCE, f"{case}: {tokens:,.0f} vs logged {tokens_logged:,}"


def test_row_4_reports_what_vllm_reports_for_a_hybrid_model(write_plan):
    """vLLM pads each layer group to one page and reports num_blocks / 4 groups x block_size: 44.59 GiB /
    973,760 tokens = 49,152 B per GPU = 12 layers x 2 x 1 KV head x 256 x 2 B x 4 groups, which is capplan's
    kv_bytes_per_token over all 48 layers; the context the pool holds is 4 x that, less each request's state."""
    e = evaluated(engine_plan(write_plan, gpu="h200-sxm-141gb", model="qwen3-next-80b-a3b", name="row4",
                              **ROWS["4 qwen3-next-80b h200 tp2"][2]))
    assert e.display("kv_bytes_per_token") * 1024 / 2 == 49_152 == 12 * 2 * 1 * 256 * 2 * 4
    # a request of the mix keeps a quarter of its context per layer, plus 36 states of 1,072 KiB
    context = e.display("avg_context_tokens")
    state = 36 * 1072 / e.display("kv_bytes_per_token")
    assert e.display("avg_cached_tokens") == pytest.approx(context / 4 + state)
    # the log's concurrency at max_model_len 262,144: 14.77 requests of 3 GiB of KV and 36 padded states each
    per_request = 262_144 * e.display("kv_bytes_per_token") / 4 + 36 * 1072          # KiB on the replica
    assert 2 * 44.59 * GiB / 1024 / per_request == pytest.approx(14.77, abs=0.01)


# gemma-3-4b-it's text widths as third-party code quotes its config.json (no copy of the file itself is in a
# public repository the catalog can cite, so it has no catalog entry): the plan gives them as its own config.json
GEMMA_3_4B = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "torch_dtype": "bfloat16",
              "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                              "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4,
                              "head_dim": 256, "vocab_size": 262208, "sliding_window": 1024,
                              "sliding_window_pattern": 6}}


def test_row_5_gemma_3_from_its_widths_and_the_logged_weights(write_plan, tmp_path):
    """vllm-project/vllm PR #21489: `vllm bench latency --model google/gemma-3-4b-it` (the LLM class: 16,384
    batched tokens and 1,024 sequences at 70 GiB or more) on a GPU of 178.36 GiB, u = 0.9; 8.58 GiB of weights,
    9.96 GiB peak activation, 0.07 GiB non-torch, 0.65 GiB of graphs, and --kv-cache-memory 141.11 GiB suggested
    to fit (0.9 x 178.36 - 8.58 - 9.96 - 0.07 - 0.65 = 141.27). The weights come from the log: the checkpoint's
    vision tower and projector are not in the text widths."""
    import json
    (tmp_path / "plans").mkdir(exist_ok=True)
    (tmp_path / "plans" / "gemma-3-4b.json").write_text(json.dumps(GEMMA_3_4B))
    e = evaluated(engine_plan(write_plan, gpu="b200-hgx", model={"config": "gemma-3-4b.json"}, name="row5",
                              parameter_count=4_606_000_000, gpu_memory_runtime="178.36 GiB/GPU",
                              max_num_batched_tokens=16384, max_num_seqs=1024, non_torch_memory="0.07 GiB/GPU",
                              cuda_graph_memory="0.65 GiB/GPU"))
    assert e.display("weight_memory") == pytest.approx(8.58, abs=0.005)
    assert abs(e.display("activation_memory") - 9.96) / 9.96 < TOLERANCE        # the sampler: 1,024 x 262,208 logits
    assert abs(e.display("kv_pool") - 141.11) / 141.11 < TOLERANCE


def test_row_6_is_qwen3_30b_a3b_in_fp8_by_its_geometry(write_plan):
    """48 layers and 4 KV heads with 29.09 GiB of weights: Qwen3-30B-A3B's FP8 checkpoint (48 layers, 4 KV heads
    of 128; 30.53 B parameters at 1.021 B = 29.03 GiB). The log names neither GPU nor gpu_memory_utilization, so
    the pool cannot be predicted; the tokens its 10.55 GiB hold with an FP8 cache can: 48 x 2 x 4 x 128 x 1 B."""
    e = evaluated(engine_plan(write_plan, gpu="h100-sxm5-80gb", model={"id": "qwen3-30b-a3b", "weights": "fp8"},
                              name="row6", kv_bytes_per_element="1 B", kv_pool="10.55 GiB"))
    assert e.display("weight_memory") == pytest.approx(29.09, rel=0.005)
    assert e.display("kv_bytes_per_token") == 48
    assert abs(e.display("kv_token_capacity") - 230_528) / 230_528 < 0.001
