"""The large MoE models of late 2026: Kimi K2 and K2.5, MiniMax-M2.5, Qwen3-Coder-480B-A35B.

Hand values, as in test_catalog_2026.py: each parameter count is written out
from the config's widths (embeddings, untied LM head, per-layer attention,
routers, experts and norms), the active count the same with the routed experts
only; each quantized checkpoint's bytes per parameter weigh the converted weights
at the format's bytes and what its quantization config leaves out at 2 B. A
plan on each model loads and evaluates, and its KV bytes per token are worked
by hand.
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import BASE_PLAN
from test_catalog_2026 import FP8_BLOCK, NVFP4, PINNED, qwen3_moe, quantized_bytes

from capplan.engine.evaluate import evaluate
from capplan.language.model import standard_model
from capplan.loading import catalog
from capplan.loading.plan import load

GiB = 2 ** 30
KiB = 1024
MOE_MODELS = ("kimi-k2", "kimi-k2.5", "minimax-m2.5", "qwen3-coder-480b-a35b")


def value(model_id, name):
    return catalog.lookup("model", model_id).values[name]["value"]


def bytes_per_param(model_id, fmt):
    return float(catalog.lookup("model", model_id).weights[fmt]["value"].split()[0])


@pytest.mark.parametrize("model_id", MOE_MODELS)
def test_every_value_and_checkpoint_cites_a_pinned_file_or_a_url(model_id):
    entry = catalog.lookup("model", model_id)
    assert entry.status == ("derived" if model_id == "kimi-k2.5" else "confirmed")   # its vision encoder uncounted
    cited = {**entry.values, **{f"weights.{fmt}": spec for fmt, spec in entry.weights.items()}}
    for name, spec in cited.items():
        assert PINNED.search(spec.get("source", "")), f"{model_id}.{name}: {spec.get('source')!r}"


# ---------------------------------------------------------------------------
# Kimi K2: DeepSeek-V3's MLA and MoE layout, 384 experts, 64 heads, one dense layer
# ---------------------------------------------------------------------------

KIMI_K2 = {"L": 61, "dense": 1, "h": 7168, "heads": 64, "q_rank": 1536, "kv_rank": 512, "nope": 128, "rope": 64,
           "v": 128, "experts": 384, "per_token": 8, "shared": 1, "width": 2048, "dense_width": 18432,
           "vocab": 163840}
DEEPSEEK_V3 = dict(KIMI_K2, dense=3, heads=128, experts=256, vocab=129280)


def deepseek_v3_moe(L, dense, h, heads, q_rank, kv_rank, nope, rope, v, experts, per_token, shared, width,
                    dense_width, vocab, active=False):
    """Total (every expert) or active (per_token routed experts) parameters of a DeepSeek-V3 layout, by hand."""
    attention = (h * q_rank + q_rank + q_rank * heads * (nope + rope)       # q_a_proj, q_a_layernorm, q_b_proj
                 + h * (kv_rank + rope) + kv_rank                           # kv_a_proj_with_mqa, kv_a_layernorm
                 + kv_rank * heads * (nope + v) + heads * v * h)            # kv_b_proj, o_proj
    routed = per_token if active else experts
    moe = h * experts + experts + (routed + shared) * 3 * h * width       # router + correction bias, experts
    return L * (attention + 2 * h) + dense * 3 * h * dense_width + (L - dense) * moe + 2 * vocab * h + h


def test_kimi_k2_counts_follow_from_the_widths():
    """1,026.4 B resident (the README's '1T'), 32.86 B per token ('32B activated')."""
    total, active = deepseek_v3_moe(**KIMI_K2), deepseek_v3_moe(**KIMI_K2, active=True)
    assert (total, active) == (1_026_408_232_448, 32_861_500_928)
    assert value("kimi-k2", "parameter_count") == total
    assert value("kimi-k2", "active_parameter_count") == active
    assert total == pytest.approx(1e12, rel=0.03) and active == pytest.approx(32e9, rel=0.03)
    # the same formula on DeepSeek-V3's widths gives the 671 B its README states
    assert deepseek_v3_moe(**DEEPSEEK_V3) == 671_026_419_200
    assert deepseek_v3_moe(**DEEPSEEK_V3) == pytest.approx(value("deepseek-v3", "parameter_count"), rel=1e-4)
    assert value("kimi-k2", "active_intermediate_size") == (8 + 1) * 2048 == 18432
    assert (value("kimi-k2", "kv_lora_rank"), value("kimi-k2", "qk_rope_head_dim")) == (512, 64)
    # Kimi K2.5's language model (its config's text_config) has K2's widths, so K2's counts
    for name in ("parameter_count", "active_parameter_count", "layers", "kv_lora_rank", "qk_rope_head_dim",
                 "hidden_size", "active_intermediate_size", "experts_per_token", "expert_intermediate_size",
                 "vocab_size"):
        assert value("kimi-k2.5", name) == value("kimi-k2", name), name


# ---------------------------------------------------------------------------
# MiniMax-M2.5: full GQA, per-layer q/k norms over all heads, 256 experts, no shared one
# ---------------------------------------------------------------------------

MINIMAX_M25 = {"L": 62, "h": 3072, "heads": 48, "kv": 8, "hd": 128, "experts": 256, "per_token": 8,
               "width": 1536, "vocab": 200064}


def minimax_m2(L, h, heads, kv, hd, experts, per_token, width, vocab, active=False):
    """MiniMax-M2's layout by hand: q_norm spans all query heads, k_norm all KV heads (qk_norm_type per_layer)."""
    attention = 2 * h * heads * hd + 2 * h * kv * hd + heads * hd + kv * hd
    kept = per_token if active else experts
    return L * (attention + h * experts + experts + kept * 3 * h * width + 2 * h) + 2 * vocab * h + h


def test_minimax_m25_counts_follow_from_the_widths():
    """228.69 B resident (the M2 series' '230 billion'), 11.03 B per token ('10 billion active')."""
    total, active = minimax_m2(**MINIMAX_M25), minimax_m2(**MINIMAX_M25, active=True)
    assert (total, active) == (228_689_764_864, 11_030_553_088)
    assert value("minimax-m2.5", "parameter_count") == total
    assert value("minimax-m2.5", "active_parameter_count") == active
    assert total == pytest.approx(230e9, rel=0.01)
    assert active - 200064 * 3072 == pytest.approx(10e9, rel=0.05)      # 10.42 B without the input embedding
    assert value("minimax-m2.5", "active_intermediate_size") == 8 * 1536


# ---------------------------------------------------------------------------
# Qwen3-Coder-480B-A35B: the Qwen3 MoE layout of qwen3-235b-a22b, wider
# ---------------------------------------------------------------------------

QWEN3_CODER = {"L": 62, "h": 6144, "heads": 96, "kv": 8, "hd": 128, "experts": 160, "per_token": 8, "width": 2560,
               "vocab": 151936}


def test_qwen3_coder_counts_follow_from_the_widths():
    """480.15 B resident (the README's '480B'), 35.47 B per token ('35B active')."""
    total, active = qwen3_moe(**QWEN3_CODER), qwen3_moe(**QWEN3_CODER, active=True)
    assert (total, active) == (480_154_875_392, 35_474_765_312)
    assert value("qwen3-coder-480b-a35b", "parameter_count") == total
    assert value("qwen3-coder-480b-a35b", "active_parameter_count") == active
    assert total == pytest.approx(480e9, rel=1e-3) and active == pytest.approx(35e9, rel=0.02)
    assert value("qwen3-coder-480b-a35b", "active_intermediate_size") == 8 * 2560
    assert bytes_per_param("qwen3-coder-480b-a35b", "bf16") == 2


def test_quantized_checkpoints_weigh_what_they_leave_in_bf16():
    """Each format's bytes per parameter from the widths and what the checkpoint leaves unconverted."""
    # Kimi K2, block FP8: embeddings + lm_head, norms (2 per layer, q_a and kv_a norms, final), 60 routers + biases
    total = deepseek_v3_moe(**KIMI_K2)
    kept = 2 * 163840 * 7168 + 61 * (2 * 7168 + 1536 + 512) + 7168 + 60 * (384 * 7168 + 384)
    assert kept == 2_514_990_592
    assert bytes_per_param("kimi-k2", "fp8") == pytest.approx(quantized_bytes(total - kept, kept, FP8_BLOCK),
                                                              abs=5e-5)                        # 1.0027 B
    # Kimi K2.5, nvidia's NVFP4: every Linear but lm_head and self_attn*, i.e. the dense MLP and all experts
    experts = 3 * 7168 * 18432 + 60 * (384 + 1) * 3 * 7168 * 2048
    assert experts == 1_017_724_796_928
    assert bytes_per_param("kimi-k2.5", "nvfp4") == pytest.approx(quantized_bytes(experts, total - experts, NVFP4),
                                                                  abs=5e-5)                    # 0.5747 B
    # MiniMax-M2.5, block FP8: modules_to_not_convert gate, e_score_correction_bias, lm_head; embeddings, norms
    total = minimax_m2(**MINIMAX_M25)
    kept = 2 * 200064 * 3072 + 62 * (256 * 3072 + 256 + 2 * 3072 + 48 * 128 + 8 * 128) + 3072
    assert bytes_per_param("minimax-m2.5", "fp8") == pytest.approx(quantized_bytes(total - kept, kept, FP8_BLOCK),
                                                                   abs=5e-5)                   # 1.0058 B
    # ... its NVFP4 checkpoint excludes self_attn* as well: only the experts are converted
    experts = 62 * 256 * 3 * 3072 * 1536
    assert bytes_per_param("minimax-m2.5", "nvfp4") == pytest.approx(
        quantized_bytes(experts, total - experts, NVFP4), abs=5e-5)                            # 0.5877 B
    # MiniMax's vLLM guide: '220 GB for weights' (the FP8 checkpoint: 230.0 GB, 214.2 GiB)
    assert total * bytes_per_param("minimax-m2.5", "fp8") / GiB == pytest.approx(220, rel=0.05)


# ---------------------------------------------------------------------------
# A plan on each: loads, evaluates, KV bytes per token by hand
# ---------------------------------------------------------------------------

def evaluated(write_plan, model, gpu, gpus):
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(model=model, gpu=gpu)
    plan["inputs"]["gpus_per_replica"] = f"{gpus} GPU"
    m = standard_model()
    loaded = load(write_plan(plan, model), m)
    return evaluate(loaded, loaded.nominal, m)


@pytest.mark.parametrize("model,gpu,gpus,params,active,bytes_,kv_per_token", [
    # MLA: one 576-wide latent per layer, kept on each of the 8 GPUs (61 x 576 x 2 B = 70,272 B each)
    ("kimi-k2", "b200-hgx", 8, 1_026_408_232_448, 32_861_500_928, 1.0027, 8 * 61 * (512 + 64) * 2),
    ("kimi-k2.5", "b200-hgx", 4, 1_026_408_232_448, 32_861_500_928, 0.5747, 4 * 61 * (512 + 64) * 2),
    # GQA, 8 KV heads over 4 GPUs: 2 per GPU, nothing replicated: 2 x 62 x 8 x 128 x 2 B = 248 KiB
    ("minimax-m2.5", "h200-sxm-141gb", 4, 228_689_764_864, 11_030_553_088, 1.0058, 2 * 62 * 8 * 128 * 2),
    # GQA, 8 KV heads over 8 GPUs: one each, the same 248 KiB per replica
    ("qwen3-coder-480b-a35b", "b200-hgx", 8, 480_154_875_392, 35_474_765_312, 2, 2 * 62 * 8 * 128 * 2),
])
def test_a_plan_on_each_model_evaluates(write_plan, model, gpu, gpus, params, active, bytes_, kv_per_token):
    e = evaluated(write_plan, model, gpu, gpus)
    assert e.display("kv_bytes_per_token") == pytest.approx(kv_per_token / KiB)
    assert e.display("weight_memory") == pytest.approx(params * bytes_ / GiB)
    # prefill of the longest prompt (128 tokens): 2 FLOP x active parameters x tokens
    assert e.display("prefill_flops") == pytest.approx(2 * active * 128 / 1e12)
    assert e.display("kv_pool") > 0
    assert e.display("kv_token_capacity") == int(e.display("kv_pool") * GiB // kv_per_token)


def test_the_nvfp4_checkpoint_is_a_weight_format_a_plan_picks(write_plan):
    e = evaluated(write_plan, {"id": "minimax-m2.5", "weights": "nvfp4"}, "h200-sxm-141gb", 2)
    assert e.display("weight_memory") == pytest.approx(228_689_764_864 * 0.5877 / GiB)    # 125.2 GiB


def test_the_catalog_lists_the_new_models(run_main):
    code, out, err = run_main("catalog", "models", "--json")
    assert code == 0, err
    by_id = {e["id"]: e for e in json.loads(out)["entries"]}
    assert set(MOE_MODELS) <= set(by_id)
    assert by_id["kimi-k2"]["attention"] == "mla" and by_id["kimi-k2"]["weights"] == ["fp8"]
    assert by_id["minimax-m2.5"]["weights"] == ["fp8", "nvfp4"]
    assert by_id["qwen3-coder-480b-a35b"]["facts"]["layers"]["value"] == 62
    code, out, err = run_main("catalog", "models", "Qwen/Qwen3-Coder-480B-A35B-Instruct")
    assert code == 0 and out.splitlines()[1].split()[0] == "qwen3-coder-480b-a35b"
    for written, cid in [("moonshotai/Kimi-K2-Instruct", "kimi-k2"), ("moonshotai/Kimi-K2.5", "kimi-k2.5"),
                         ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5")]:
        assert catalog.lookup("model", written).id == cid
