"""The throughput estimate's physics (issue 39): the tensor-parallel all-reduce, the experts a MoE
decode batch activates and each GPU's achieved bandwidth, each worked by hand from the plan's own
inputs against the estimate group's formulas (model/quantities.yaml, group ``estimate``)."""

from __future__ import annotations

import pytest
from test_estimate_sizing import estimated

from capplan.analysis.pipeline import evaluate_plan


def _values(write_plan, **changes) -> dict[str, float]:
    """The nominal scenario's values (base units: s, B, B/s) of the estimated plan with ``changes``."""
    plan = estimated(**changes)
    _, evaluations = evaluate_plan(write_plan(plan))
    return {n: v for n, v in evaluations[0].values.items() if getattr(v, "ndim", 0) == 0}


def _on(gpus: int, **inputs) -> dict:
    """The ``inputs:`` of the estimated plan with ``gpus`` GPUs a replica and ``inputs`` added."""
    plan_inputs = dict(estimated()["inputs"])
    plan_inputs.update(gpus_per_replica=f"{gpus} GPU", **inputs)
    return {"inputs": plan_inputs}


def test_tp8_all_reduces_twice_a_layer_over_the_nvlink_ring_by_hand(write_plan):
    """llama-3-8b on 8 H100s: 32 layers, hidden 4,096, BF16 activations. Per token, two all-reduces a
    layer of 8 KiB each, of which every GPU sends 2 (8 - 1) / 8 over its 450 GB/s link at 0.8; per
    step, 64 all-reduces at 6 µs whatever the batch."""
    v = _values(write_plan, **_on(8))
    ring = 2 * 7 / 8
    per_token = 2 * 32 * 4096 * 2 * ring / (450e9 * 0.8)                    # s a token
    assert v["allreduce_gpus"] == 8
    assert v["estimate_allreduce_token_time"] == pytest.approx(per_token, rel=1e-12)
    assert v["estimate_allreduce_fixed_time"] == pytest.approx(2 * 32 * 6e-6, rel=1e-12)
    read = v["weight_memory"] / (v["hbm_bandwidth"] * 8 * v["hbm_efficiency"])
    assert v["estimate_weights_time"] == pytest.approx(read + 2 * 32 * 6e-6, rel=1e-12)
    tokens = v["avg_uncached_prompt_tokens"] + v["avg_output_tokens"]
    kv = v["estimate_steps_per_request"] * v["estimate_request_kv_time"]
    assert v["estimate_step_growth"] == pytest.approx(kv + tokens * (v["estimate_token_time"] + per_token), rel=1e-12)


def test_one_gpu_all_reduces_nothing(write_plan):
    v = _values(write_plan, **_on(1))
    assert v["estimate_allreduce_token_time"] == 0 and v["estimate_allreduce_fixed_time"] == 0
    assert v["estimate_weights_time"] == pytest.approx(
        v["weight_memory"] / (v["hbm_bandwidth"] * v["hbm_efficiency"]), rel=1e-12)


def test_a_slower_link_and_a_longer_latency_lower_the_estimate(write_plan):
    """The same TP8 plan over PCIe-class links (64 GB/s) with 20 µs all-reduces: every term grows,
    so λ* falls."""
    fast = _values(write_plan, **_on(8))
    slow = _values(write_plan, **_on(8, gpu_link_bandwidth="64 GB/s/GPU", allreduce_latency="20 us"))
    assert slow["estimate_allreduce_token_time"] == pytest.approx(
        fast["estimate_allreduce_token_time"] * 450 / 64, rel=1e-12)
    assert slow["estimate_allreduce_fixed_time"] == pytest.approx(2 * 32 * 20e-6, rel=1e-12)
    assert slow["estimated_max_rate"] < fast["estimated_max_rate"]


def test_the_hidden_width_is_part_of_a_plan_with_either_feature_that_reads_it(write_plan, base_plan):
    """hidden_size exists under the engine's memory accounting or with candidates (the estimate's
    all-reduce), and a plan with neither is told which would bring it."""
    from capplan.errors import CapplanError

    assert "hidden_size" in _values(write_plan)                          # candidates, reserve accounting
    base_plan["inputs"]["hidden_size"] = 4096
    with pytest.raises(CapplanError, match="'hidden_size' is not part of a plan with memory_accounting: reserve, "
                                           "no candidates: section"):
        evaluate_plan(write_plan(base_plan, name="plain"))


def test_a_moe_decode_step_reads_the_experts_its_batch_activates_by_hand(write_plan):
    """Qwen3-30B-A3B: 48 MoE layers of 128 experts, 8 a token, each a gated MLP of 3 × 2,048 × 768
    parameters. A decode batch of B tokens activates 128 (1 − (1 − 8/128)^B) experts a layer on
    average: at the scheduler's 16, 1 − (15/16)^16 = 64 % of them; the step reads the rest of the
    weights and those experts, not all 128 (a 100 ms TPOT SLO: reading its 61 GB of BF16 weights on
    one H100 takes 24 ms, more than the base plan's 25 ms at vLLM's step factor)."""
    v = _values(write_plan, model="qwen3-30b-a3b", **_on(1, tpot_p95_slo="100 ms", estimate_max_seqs=16))
    batch = v["estimate_decode_batch"]
    assert batch == 16
    share = 1 - (1 - 8 / 128) ** batch
    assert v["estimate_expert_share"] == pytest.approx(share, rel=1e-12)
    experts = 48 * 128 * 3 * 2048 * 768 * v["weight_bytes_per_param"]          # bytes
    assert v["estimate_weight_read"] == pytest.approx(v["weight_memory"] - experts * (1 - share), rel=1e-12)
    bandwidth = v["hbm_bandwidth"] * v["gpus_per_replica"] * v["hbm_efficiency"]
    assert v["estimate_weights_time"] == pytest.approx(v["estimate_weight_read"] / bandwidth, rel=1e-12)


def test_a_small_batch_reads_few_experts_and_a_dense_model_reads_every_weight(write_plan):
    """At a batch of one token a step reads 8 of 128 experts; a dense model's share is 1."""
    one = _values(write_plan, model="qwen3-30b-a3b", **_on(1, estimate_max_seqs=1, tpot_p95_slo="100 ms"))
    assert one["estimate_decode_batch"] == 1 and one["estimate_expert_share"] == pytest.approx(8 / 128)
    dense = _values(write_plan)
    assert dense["estimate_expert_share"] == 1 and dense["estimate_weight_read"] == dense["weight_memory"]


def test_a_substituted_exponent_keeps_its_parentheses():
    """per_token(...) is dropped from the substituted text, but after ** (or /) the expression it
    wrapped stays one operand: (1 - k/E) ** (B × n_step), not (1 - k/E) ** B × n_step."""
    from capplan.rendering.present import _without_unit_annotations

    assert _without_unit_annotations("x ** per_token(a * b)") == "x ** (a * b)"
    assert _without_unit_annotations("x / per_gpu(g)") == "x / g"
    assert _without_unit_annotations("per_token(2 * layers) * y") == "2 * layers * y"


def test_the_workbook_recalculates_the_all_reduce_and_the_expert_share(write_plan, tmp_path):
    """A MoE plan on two GPUs a replica, recalculated in LibreOffice: the expert share's power and
    the all-reduce's terms are live formulas that give the engine's values."""
    import recalc
    from test_memory_engine import assert_workbook_recalculates

    if recalc.soffice() is None:
        pytest.skip(recalc.SKIP_REASON)
    path = write_plan(estimated(model="qwen3-30b-a3b", **_on(2, tpot_p95_slo="100 ms", estimate_max_seqs=16)),
                      name="moe-tp2")
    assert_workbook_recalculates(path, tmp_path, ["estimate_expert_share", "estimate_allreduce_token_time",
                                                  "estimate_allreduce_fixed_time", "estimate_weights_time"])
