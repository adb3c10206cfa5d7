"""The checkpoint formats the published benchmarks serve, as catalog formats.

MLPerf's llama2-70b runs Llama-2-70b-chat-hf (FP16, and FP8 in the submissions); TensorRT-LLM's
performance tables run NVIDIA's FP8 and NVFP4 checkpoints of Llama-3.1-8B, Llama-3.3-70B and
Llama-3.1-405B. Hand values as in test_catalog_2026.py: each quantized checkpoint quantizes "the
weights and activations of the linear operators within transformer blocks" (its model card), so
its bytes per parameter weigh those at the format's bytes and the embeddings, untied LM head and
norms at 2 B.
"""

from __future__ import annotations

import pytest
from test_catalog_2026 import NVFP4, PINNED, plan_with, quantized_bytes

from capplan.loading import catalog

GiB = 2 ** 30


def kept_bf16(model_id):
    """Embeddings and LM head (untied), two norms per layer and the final one."""
    values = catalog.lookup("model", model_id).values
    h, layers, vocab = (values[name]["value"] for name in ("hidden_size", "layers", "vocab_size"))
    return 2 * vocab * h + 2 * layers * h + h


# model -> {format: (checkpoint, bytes per quantized weight or None for an unquantized checkpoint)}
FORMATS = {
    "llama-2-70b": {"fp16": ("meta-llama/Llama-2-70b-chat-hf", None),
                    "fp8": ("amd/Llama-2-70b-chat-hf-FP8-MLPerf-fp8_attn_quark_format", 1)},
    "llama-3.1-8b": {"bf16": ("meta-llama/Llama-3.1-8B-Instruct", None),
                     "fp8": ("nvidia/Llama-3.1-8B-Instruct-FP8", 1),
                     "nvfp4": ("nvidia/Llama-3.1-8B-Instruct-FP4", NVFP4)},
    "llama-3.3-70b": {"bf16": ("meta-llama/Llama-3.3-70B-Instruct", None),
                      "fp8": ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 1),
                      "nvfp4": ("nvidia/Llama-3.3-70B-Instruct-FP4", NVFP4)},
    "llama-3.1-405b": {"bf16": ("meta-llama/Llama-3.1-405B-Instruct", None),
                       "fp8": ("nvidia/Llama-3.1-405B-Instruct-FP8", 1),
                       "nvfp4": ("nvidia/Llama-3.1-405B-Instruct-FP4", NVFP4)},
}


@pytest.mark.parametrize("model_id", FORMATS)
def test_each_benchmark_checkpoint_is_a_format_with_its_repository(model_id):
    formats = catalog.lookup("model", model_id).weights
    assert list(formats) == list(FORMATS[model_id])                # the first is the plan's default
    for fmt, (checkpoint, _) in FORMATS[model_id].items():
        assert formats[fmt]["checkpoint"] == checkpoint
        assert PINNED.search(formats[fmt]["source"]), f"{model_id}.{fmt}"


@pytest.mark.parametrize("model_id,fmt", [(m, f) for m, fs in FORMATS.items() for f in fs])
def test_bytes_per_parameter_weigh_what_the_checkpoint_leaves_in_16_bit(model_id, fmt):
    total = catalog.lookup("model", model_id).values["parameter_count"]["value"]
    per_weight = FORMATS[model_id][fmt][1]
    kept = kept_bf16(model_id)
    expected = 2 if per_weight is None else quantized_bytes(total - kept, kept, per_weight)
    given = float(catalog.lookup("model", model_id).weights[fmt]["value"].split()[0])
    assert given == pytest.approx(expected, abs=5e-5)


def test_the_tensorrt_llm_checkpoints_by_hand():
    """Llama-3.1-405B NVFP4: 401.65 B linear weights at 0.5625 B and 4.21 B at 2 B, 0.5774 B a parameter."""
    total = 405_853_388_800
    kept = 2 * 128_256 * 16_384 + 2 * 126 * 16_384 + 16_384
    assert kept == 4_206_837_760
    assert (401_646_551_040 * 0.5625 + kept * 2) / total == pytest.approx(0.5774, abs=5e-5)
    # Llama-3.1-8B FP8: its 1.05 B embedding and head weigh 13 % of the checkpoint at 2 B each
    assert (6_979_321_856 + 2 * 1_050_939_392) / 8_030_261_248 == pytest.approx(1.1309, abs=5e-5)


def test_a_plan_names_the_nvfp4_checkpoint_and_its_weights_shrink(write_plan):
    """Llama-3.3-70B NVFP4: 39.77 GiB of weights against 131.42 GiB in BF16, and the name says which."""
    e = plan_with(write_plan, {"id": "llama-3.3-70b", "weights": "nvfp4"}, "nvfp4", gpus_per_replica="2 GPU")
    assert e.display("weight_memory") == pytest.approx(70_553_706_496 * 0.6053 / GiB)
    entry = next(m for m in catalog.entries("model") if m.id == "llama-3.3-70b")
    assert catalog.with_weights(entry, "nvfp4").name == "Llama-3.3-70B-Instruct (NVFP4)"
