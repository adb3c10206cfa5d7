"""The catalog of 2026: sourced values, counts that follow from the widths, weight formats.

Hand values: a model's parameter count is its embeddings, untied LM head and
per-layer attention, feed-forward (or experts and router) and norms, each
the product of widths the catalog holds; a quantized checkpoint's bytes per
parameter weigh the quantized weights at their format's bytes and the
weights it leaves in BF16 at 2 B.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conftest import BASE_PLAN, ROOT

from capplan.engine.evaluate import evaluate
from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.plan import load

GiB = 2 ** 30
NEW_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "llama-4-scout", "llama-4-maverick", "qwen3-8b",
              "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b", "deepseek-r1",
              "mistral-small-3")
NEW_GPUS = ("gb200", "h20", "h200-nvl", "mi325x", "mi355x", "rtx-pro-6000-blackwell")
PINNED = re.compile(r"@[0-9a-f]{40}:|https://")
FP8_BLOCK = 1 + 4 / (128 * 128)     # one float32 scale per 128 x 128 block
NVFP4 = 0.5 + 1 / 16                # 4-bit values, one 8-bit scale per 16


def value(model_id, name):
    return catalog.lookup("model", model_id).values[name]["value"]


@pytest.mark.parametrize("kind,cid", [("model", m) for m in NEW_MODELS] + [("gpu", g) for g in NEW_GPUS])
def test_every_new_value_cites_a_pinned_file_or_a_url(kind, cid):
    entry = catalog.lookup(kind, cid)
    cited = {**entry.values, **{f"weights.{fmt}": spec for fmt, spec in entry.weights.items()}}
    for name, spec in cited.items():
        assert PINNED.search(spec.get("source", "")), f"{cid}.{name}: {spec.get('source')!r}"


def dense_count(m, qk_norm=False):
    """Embeddings + LM head (untied) + per layer: q, k, v, o, gate/up/down, two norms (+ q/k norms) + final norm."""
    h, L, hd = value(m, "hidden_size"), value(m, "layers"), value(m, "head_dim")
    heads = {"llama-3.1-8b": 32, "llama-3.1-70b": 64, "qwen3-8b": 32, "qwen3-32b": 64, "mistral-small-3": 32}[m]
    attention = 2 * h * heads * hd + 2 * h * value(m, "kv_heads") * hd
    layer = attention + 3 * h * value(m, "active_intermediate_size") + 2 * h + (2 * hd if qk_norm else 0)
    return L * layer + 2 * value(m, "vocab_size") * h + h


@pytest.mark.parametrize("model_id,qk_norm,card", [
    ("llama-3.1-8b", False, 8.03e9), ("llama-3.1-70b", False, 70.55e9), ("qwen3-8b", True, 8.19e9),
    ("qwen3-32b", True, 32.76e9), ("mistral-small-3", False, 23.57e9)])
def test_dense_parameter_counts_follow_from_the_widths(model_id, qk_norm, card):
    assert value(model_id, "parameter_count") == dense_count(model_id, qk_norm)
    assert value(model_id, "parameter_count") == pytest.approx(card, rel=5e-4)


QWEN3_30B = {"L": 48, "h": 2048, "heads": 32, "kv": 4, "hd": 128, "experts": 128, "per_token": 8, "width": 768,
             "vocab": 151936}


def qwen3_moe(L, h, heads, kv, hd, experts, per_token, width, vocab, active=False):
    """Total (every expert) or active (per_token experts) parameters of a Qwen3 MoE layout, by hand."""
    attention = 2 * h * heads * hd + 2 * h * kv * hd + 2 * hd
    kept = per_token if active else experts
    return L * (attention + h * experts + kept * 3 * h * width + 2 * h) + 2 * vocab * h + h


def test_mixture_of_experts_weighs_every_expert_and_computes_with_the_routed_ones(write_plan):
    """Qwen3-30B-A3B: 30.53 B parameters resident, 3.35 B (8 of 128 experts) per token."""
    total, active = qwen3_moe(**QWEN3_30B), qwen3_moe(**QWEN3_30B, active=True)
    assert (total, active) == (30_532_122_624, 3_353_032_704)
    assert value("qwen3-30b-a3b", "parameter_count") == total
    assert value("qwen3-30b-a3b", "active_parameter_count") == active
    assert value("qwen3-30b-a3b", "active_intermediate_size") == 8 * 768
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = "qwen3-30b-a3b"
    model = standard_model()
    loaded = load(write_plan(plan, "moe"), model)
    e = evaluate(loaded, loaded.nominal, model)
    assert e.display("weight_memory") == pytest.approx(total * 2 / GiB)          # 56.87 GiB, all experts
    assert e.display("kv_bytes_per_token") == 2 * 48 * 4 * 128 * 2 / 1024      # 96 KiB
    # prefill of the longest prompt (128 tokens): 2 FLOP x active parameters x tokens
    assert e.display("prefill_flops") == pytest.approx(2 * active * 128 / 1e12)
    assert e.display("prefill_flops") < 2 * total * 128 / 1e12 / 9              # a ninth of a dense 30 B


def quantized_bytes(quantized, kept_bf16, per_weight):
    return (quantized * per_weight + kept_bf16 * 2) / (quantized + kept_bf16)


def test_quantized_checkpoints_weigh_what_they_leave_in_bf16():
    """Each format's bytes per parameter from the widths and the config's list of unconverted modules."""
    total = qwen3_moe(**QWEN3_30B)
    # unconverted: embeddings + lm_head, 48 routers, norms (2 per layer + q/k norms + final)
    kept = 2 * 151936 * 2048 + 48 * 2048 * 128 + 48 * (2 * 2048 + 2 * 128) + 2048
    formats = catalog.lookup("model", "qwen3-30b-a3b").weights
    assert float(formats["fp8"]["value"].split()[0]) == pytest.approx(
        quantized_bytes(total - kept, kept, FP8_BLOCK), abs=5e-5)                # 1.0210 B
    assert float(formats["nvfp4"]["value"].split()[0]) == pytest.approx(
        quantized_bytes(total - kept, kept, NVFP4), abs=5e-5)                    # 0.5924 B
    # Llama-3.x-70B FP8: every linear layer but lm_head; the embeddings, lm_head and norms stay BF16
    llama = value("llama-3.1-70b", "parameter_count")
    kept = 2 * 128256 * 8192 + 80 * 2 * 8192 + 8192
    fp8 = quantized_bytes(llama - kept, kept, 1)
    assert catalog.lookup("model", "llama-3.1-70b").weights["fp8"]["value"] == f"{fp8:.4f} B"
    assert catalog.lookup("model", "llama-3.3-70b").weights["fp8"]["value"] == f"{fp8:.4f} B"
    # ... which vLLM measured: 67.72 GiB loaded for RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic at TP 1
    assert llama * fp8 / GiB == pytest.approx(67.72, abs=0.1)
    # gpt-oss: the model card's checkpoint size over its parameter count, below 1 B
    assert float(value("gpt-oss-120b", "weight_bytes_per_param").split()[0]) == pytest.approx(
        60.8 * GiB / 116.83e9, abs=5e-5)


def plan_with(write_plan, model, name="formats", **inputs):
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = model
    plan["inputs"].update(inputs)
    m = standard_model()
    loaded = load(write_plan(plan, name), m)
    return evaluate(loaded, loaded.nominal, m)


def test_a_plan_picks_a_weight_format_of_the_model(write_plan):
    bf16 = plan_with(write_plan, "qwen3-32b", "bf16")
    nvfp4 = plan_with(write_plan, {"id": "qwen3-32b", "weights": "nvfp4"}, "nvfp4")
    n = 32_762_123_264
    assert bf16.display("weight_memory") == pytest.approx(n * 2 / GiB)              # the first format listed
    assert nvfp4.display("weight_memory") == pytest.approx(n * 0.6308 / GiB)        # 19.25 GiB
    assert nvfp4.display("kv_pool") - bf16.display("kv_pool") == pytest.approx(n * (2 - 0.6308) / GiB)
    # a model without formats keeps the standard model's BF16 default; an input still wins over a format
    assert plan_with(write_plan, "llama-3-8b", "none").display("weight_bytes_per_param") == 2
    pinned = plan_with(write_plan, {"id": "qwen3-32b", "weights": "nvfp4"}, "pinned", weight_bytes_per_param="1 B")
    assert pinned.display("weight_memory") == pytest.approx(n / GiB)


@pytest.mark.parametrize("model,message", [
    ({"id": "qwen3-32b", "weights": "fp4"},
     "model: model 'qwen3-32b' has no weight format 'fp4' in the catalog; known: bf16, nvfp4"),
    ({"id": "llama-3-8b", "weights": "fp8"},
     "model: model 'llama-3-8b' lists no weight formats; give weight_bytes_per_param under inputs:"),
    ({"id": "qwen3-33b"}, "model: unknown model 'qwen3-33b' in the catalog; did you mean qwen3-32b"),
    ({"id": "qwen3-32b", "format": "fp8"},
     "model: expected a catalog id, {id: catalog id, weights: format} or {config: path/to/config.json, name: its Hugging Face id}"),
], ids=["an unknown format", "a model without formats", "an unknown id", "an unknown key"])
def test_a_weight_format_the_catalog_does_not_hold_is_refused(write_plan, model, message):
    with pytest.raises(CapplanError, match=re.escape(message)):
        plan_with(write_plan, model, "bad-format")


def test_decode_reads_only_the_window_of_a_windowed_layer(write_plan):
    """Gate 2 on gpt-oss-120b: a 32k-token request's KV read is (18 x 32,768 + 18 x 128) / 36 tokens per layer."""
    rows = [{"name": "long", "weight": 1.0, "prompt_tokens": 30720, "output_tokens": 2048}]
    plan = copy.deepcopy(BASE_PLAN)
    plan["model"] = "gpt-oss-120b"
    plan["tables"]["classes"]["rows"] = rows
    plan["inputs"].update(gpus_per_replica="2 GPU")
    m = standard_model()
    windowed = load(write_plan(plan, "windowed"), m)
    e = evaluate(windowed, windowed.nominal, m)
    weights = 116.83e9 * 0.5588                          # B
    per_token = 2 * 36 * 8 * 64 * 2                      # 73,728 B
    cached = (18 * 32768 + 18 * 128) / 36                # 16,448 tokens, not 32,768
    assert e.display("avg_cached_tokens") == cached
    assert e.display("decode_bytes_per_step") == pytest.approx((weights + 32 * cached * per_token) / 1e9)
    # 2 A100-80GB at 76 % of 2,039 GB/s each
    assert e.display("decode_step_time_bound") == pytest.approx(
        (weights + 32 * cached * per_token) / (2 * 2039e9 * 0.76) * 1e3)
    plan["inputs"].update(windowed_layers=0)
    full = load(write_plan(plan, "full"), m)
    f = evaluate(full, full.nominal, m)
    assert f.display("decode_bytes_per_step") == pytest.approx((weights + 32 * 32768 * per_token) / 1e9)


def test_the_gpt_oss_engine_plan_by_hand():
    """plans/gpt-oss-120b-b200-tp8-engine.yaml, every gate-1 step worked by hand."""
    path = ROOT / "plans" / "gpt-oss-120b-b200-tp8-engine.yaml"
    m = standard_model()
    plan = load(path, m, display=str(Path("plans") / path.name))
    e = evaluate(plan, plan.nominal, m)
    runtime = 183_359 / 1024 - 0.44                                  # nvidia-smi MiB less what CUDA keeps
    usable = 8 * runtime * 0.9
    weights = 116.83e9 * 0.5588 / GiB                                 # 60.80 GiB, the MXFP4 checkpoint
    sampler = (8192 * 2880 * 2 + 1024 * 201088 * 38.5) / GiB          # the sampler's peak beats the forward pass
    forward = 8192 * 3 * (2880 + 11520 / 8) * 2 / GiB
    assert sampler > forward
    non_kv = 8 * sampler + 8 * (0.15 + 7 * 0.40)                      # per GPU (its context, 7 peers' collective
                                                                      # buffers), summed over the 8 of the replica
    pool = usable - weights - non_kv
    assert e.display("usable_vram") == pytest.approx(usable)
    assert e.display("non_kv_memory") == pytest.approx(non_kv)
    assert e.display("kv_pool") == pytest.approx(pool)
    tokens = int(pool * GiB // (2 * 36 * 8 * 64 * 2))
    assert e.display("kv_token_capacity") == tokens == 16_635_315
    context = 215.312 + 197.144
    cached = (18 * context + 18 * 128) / 36                           # 270.228: half the layers keep 128
    assert e.display("avg_cached_tokens") == pytest.approx(cached)
    assert e.display("mix_token_capacity") == int(tokens * context / cached) == 25_390_912
    # gate 2 reads the KV cache of the 262 requests Little's law puts on the replica, not decode_batch's 256
    assert e.display("decode_bytes_per_step") == pytest.approx((116.83e9 * 0.5588 + 262 * cached * 73728) / 1e9)
    # Little's law on the measured 7,404.72 tok/s: 197.144 tokens in 7 s need 28.16 tok/s each
    assert e.display("slo_batch_limit") == int(7404.72 / (197.144 / 7)) == 262
    assert e.display("in_flight_requests") == 30 * 7
    assert e.display("active_replicas") == 1                          # 210 in flight < 262
