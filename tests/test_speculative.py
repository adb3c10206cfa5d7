"""Speculative decoding and MTP (#40): a draft of k tokens per sequence and step, α of them
accepted on average (measured), the target verifying k + 1 tokens in one pass; worked by hand.

The base plan: Llama-3-8B on one A100 (2,039 GB/s at η 0.76, 312 TFLOP/s at η 0.45). With the
linear step model a step of B sequences takes R0 + B·(r + w·κ): R0 the weights' read, r one
sequence's KV read, κ one token's compute, w the tokens each sequence computes (1 plain, k + 1
verifying). A speculative token costs (R0 + T_d + B·(r + r_d + (k + 1)κ)) / (1 + α), T_d and r_d
the draft's reads; it pays while that is below R0 + B·(r + κ), i.e. below the batch
B* = (α·R0 − T_d) / ((k + 1)κ + r + r_d − (1 + α)(r + κ)).
"""

from __future__ import annotations

import pytest
from test_demand import evaluated

from capplan.analysis.holds import PlanHolds
from capplan.analysis.pipeline import run

GiB, KiB = 2 ** 30, 2 ** 10
EAGLE = {"spec_draft_tokens": 3, "measured_draft_tokens": 3,
         "spec_accepted_tokens": {"value": 2, "source": "EAGLE-3, vLLM spec-decode metrics on the chat mix"}}


def _plan(base_plan, **inputs):
    """The base plan served with speculation (``speculation: drafted``) and ``inputs``."""
    base_plan["speculation"] = "drafted"
    base_plan["inputs"].update(inputs)
    return base_plan


def _by_hand(e, batch: float) -> dict[str, float]:
    """The step model's terms (ms) from the plan's inputs, at a decode batch of ``batch``."""
    v = e.display
    bandwidth = v("hbm_bandwidth") * 1e9 * v("gpus_per_replica") * v("hbm_efficiency")      # B/s
    flops = v("tensor_peak_flops") * 1e12 * v("gpus_per_replica") * v("tensor_efficiency")
    k, alpha = v("spec_draft_tokens"), v("spec_accepted_tokens")
    r0 = v("parameter_count") * v("weight_bytes_per_param") / bandwidth * 1e3
    t_d = k * v("draft_weight_memory") * GiB / bandwidth * 1e3
    r = v("avg_cached_tokens") * v("kv_bytes_per_token") * KiB / bandwidth * 1e3
    r_d = k * v("avg_cached_tokens") * v("draft_kv_bytes_per_token") * KiB / bandwidth * 1e3
    kappa = v("flops_per_param_token") * v("active_parameter_count") / flops * 1e3
    plain = r0 + batch * (r + kappa)
    spec = (r0 + t_d + batch * (r + r_d + (k + 1) * kappa)) / (1 + alpha)
    cutoff = (alpha * r0 - t_d) / ((k + 1) * kappa + r + r_d - (1 + alpha) * (r + kappa))
    return {"plain": plain, "spec": spec, "cutoff": cutoff, "r0": r0, "r": r, "kappa": kappa}


def test_a_speculative_tokens_time_by_hand_at_a_small_batch(tmp_path, base_plan):
    """k = 3, α = 2 at a batch of 4: the weights' read (≈ 10.4 ms) dominates, so three tokens a
    step for one verify pass of four make a token cost little more than a third of a plain one."""
    _, e = evaluated(tmp_path, _plan(base_plan, **EAGLE, decode_batch=4))
    hand = _by_hand(e, 4)
    assert e.display("plain_step_time") == pytest.approx(hand["plain"])
    assert e.display("spec_token_time") == pytest.approx(hand["spec"])
    assert hand["spec"] < hand["plain"] / 2
    assert e.display("speculation_pays")
    # gate 2's TPOT bound is the memory-bound step over the 1 + α tokens it emits
    assert e.display("decode_token_time_bound") == pytest.approx(e.display("decode_step_time_bound") / 3)


def test_the_batch_past_which_speculation_stops_paying_by_hand(tmp_path, base_plan):
    """B* from the closed form; at B* the two costs of a token meet, and the verdict flips
    between a batch below and one above it."""
    _, e = evaluated(tmp_path, _plan(base_plan, **EAGLE))
    cutoff = _by_hand(e, 0)["cutoff"]
    assert e.display("spec_cutoff_batch") == pytest.approx(cutoff)
    at = _by_hand(e, cutoff)
    assert at["spec"] == pytest.approx(at["plain"])
    for batch, pays in ((int(cutoff), True), (int(cutoff) + 1, False)):
        _, e = evaluated(tmp_path, _plan(base_plan, **EAGLE, decode_batch=batch))
        assert bool(e.display("speculation_pays")) is pays


def test_without_speculation_the_plan_has_none_of_it(tmp_path, base_plan):
    """A plan that does not say ``speculation: drafted`` has no speculative quantity, no draft in its
    KV pool and gate 2 on the plain step; drafted with k = 0, the token bound is the plain step."""
    _, e = evaluated(tmp_path, base_plan)
    assert not any(n.startswith(("spec_", "draft_")) for n in e.values) and "speculation_pays" not in e.values
    assert e.graph.nodes["kv_pool"].formula.text == "usable_vram - weight_memory - non_kv_memory"
    assert "decode_step_time_bound" in e.graph.nodes["bandwidth_gate"].deps
    _, off = evaluated(tmp_path, _plan(base_plan))
    assert off.display("decode_token_time_bound") == off.display("decode_step_time_bound")
    assert off.display("kv_pool") == e.display("kv_pool") and off.display("speculation_pays")


def test_the_flip_search_finds_the_acceptance_below_which_speculation_stops_paying(write_plan, base_plan):
    """At the decode batch of 32, speculation pays while α·R0 > 32·((k+1)κ + r − (1 + α)(r + κ)),
    i.e. above α = 32·(kκ) / (R0 + 32·(r + κ)) (no draft reads)."""
    path = write_plan(_plan(base_plan, **EAGLE))
    holds = PlanHolds(run(path).evaluations, decisions_only=True)
    alpha = next(h for h in holds.nominal if h.name == "spec_accepted_tokens")
    hand = _by_hand(holds.evaluations[0], 32)
    flip = 32 * 3 * hand["kappa"] / (hand["r0"] + 32 * (hand["r"] + hand["kappa"]))
    assert float(alpha.below.flip.value) == pytest.approx(flip)


def test_a_draft_models_weights_and_kv_come_out_of_the_kv_pool(tmp_path, base_plan):
    """A 1B draft in BF16 (2.3 GiB) with 32 KiB of KV a token: the pool loses its weights, and each
    cached token takes 128 + 32 KiB."""
    _, plain = evaluated(tmp_path, base_plan)
    _, e = evaluated(tmp_path, _plan(base_plan, **EAGLE, draft_weight_memory="2.3 GiB",
                                     draft_kv_bytes_per_token="32 KiB/token"))
    assert e.display("kv_pool") == pytest.approx(plain.display("kv_pool") - 2.3)
    assert e.display("kv_token_capacity") == int(e.display("kv_pool") * GiB / ((128 + 32) * KiB))
    hand = _by_hand(e, 32)
    assert e.display("spec_token_time") == pytest.approx(hand["spec"])
    assert e.display("spec_cutoff_batch") == pytest.approx(hand["cutoff"])


def test_a_measured_lambda_needs_a_sweep_run_with_speculation(write_plan, run_main, base_plan):
    """λ* before: the sweep ran without speculation and the plan serves with it, so the plan is
    refused at the draft length; after: the plan states the sweep ran with the same draft, and
    λ* is the sweep's."""
    inputs = dict(EAGLE, measured_draft_tokens=0)
    path = write_plan(_plan(base_plan, **inputs))
    code, _, err = run_main("build", str(path))
    assert code == 1
    assert err.splitlines()[0] == (
        "error: plans/test-plan.yaml:10: inputs.spec_draft_tokens: the plan serves with a draft of 3 tokens a step "
        "(spec_draft_tokens), but its measurements ran with 0 tokens (measured_draft_tokens): a measured λ* must come "
        "from a benchmark run with speculation on, as served; rerun the load sweep with it and state the draft "
        "length it ran with as measured_draft_tokens")
    path = write_plan(_plan(base_plan, **EAGLE))
    code, _, _ = run_main("build", str(path))
    assert code == 0
    record = (path.parent.parent / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert "Speculative decoding" in record
    assert "λ* | 4 req/s" in record or "4 req/s" in record


@pytest.mark.parametrize("inputs, key, message", [
    ({"spec_draft_tokens": 3, "spec_accepted_tokens": 4}, "spec_accepted_tokens",
     "spec_accepted_tokens is 4 tokens, more than the 3 tokens drafted (spec_draft_tokens): "
     "a step accepts at most its draft"),
    ({"spec_accepted_tokens": -1}, "spec_accepted_tokens", "spec_accepted_tokens must be non-negative"),
    ({"spec_draft_tokens": 2.5}, "spec_draft_tokens", "spec_draft_tokens must be a non-negative whole number"),
])
def test_a_wrong_draft_is_one_located_message(write_plan, run_main, base_plan, inputs, key, message):
    path = write_plan(_plan(base_plan, **inputs))
    code, _, err = run_main("build", str(path))
    assert code == 1
    first = err.splitlines()[0]
    assert first.startswith("error: plans/test-plan.yaml:") and f": inputs.{key}: " in first
    assert message in first
    assert [line for line in err.splitlines() if line.startswith("error:")] == [first]
