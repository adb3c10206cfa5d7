"""Prefix caching (issue 40): a class's token-weighted prefix hit rate h_i shortens what its requests
prefill, P_i (1 - h_i), and leaves what the KV cache holds alone (Dynamo's planner: reuse shrinks
the compute of prefill, not decode KV residency). Worked by hand from the plan's own inputs.

The base plan: Llama-3-8B on one A100 (312 TFLOP/s BF16 at tensor_efficiency 0.45), classes chat
(0.7, 32 prompt / 64 output tokens) and code (0.3, 128 / 256). A token costs 2 × 8.03 B FLOPs, so it
prefills in k = 2 N / (F η) ≈ 0.1144 ms and gate 3's bound is the longest prefill times k.
"""

from __future__ import annotations

import pytest
import recalc
import yaml
from test_demand import evaluated
from test_estimate_sizing import estimated
from test_memory_engine import assert_workbook_recalculates

from capplan.analysis import candidates as batch
from capplan.analysis import ranking as ranked
from capplan.analysis.pipeline import evaluate_plan, load_plan
from capplan.review import check

KV = ("kv_pool", "avg_cached_tokens", "max_cached_tokens", "max_concurrency_avg", "max_concurrency_worst")


def _with_hits(plan: dict, **hits) -> dict:
    for row in plan["tables"]["classes"]["rows"]:
        if row["name"] in hits:
            row["prefix_hit_rate"] = hits[row["name"]]
    return plan


def _token_time(e) -> float:
    """k, seconds of prefill per token: 2 N / (F_TC G η), from the plan's inputs (base units)."""
    v = {n: float(e.values[n]) for n in ("flops_per_param_token", "active_parameter_count", "tensor_peak_flops",
                                         "gpus_per_replica", "tensor_efficiency")}
    return (v["flops_per_param_token"] * v["active_parameter_count"]
            / (v["tensor_peak_flops"] * v["gpus_per_replica"] * v["tensor_efficiency"]))


@pytest.mark.parametrize("hits, longest", [
    ({}, 128),                                  # no hit rate: the 128-token code prompt
    ({"code": 0.5}, 64),                        # half of code's prompt cached: 64 tokens to prefill
    ({"code": 0.875}, 32),                      # 16 left of code; chat's 32 is now the longest
    ({"chat": 0.5}, 128)])                      # chat's hits leave the longest prefill, code's
def test_the_prefill_and_ttft_bounds_price_the_longest_uncached_prompt(tmp_path, base_plan, hits, longest):
    _, e = evaluated(tmp_path, _with_hits(base_plan, **hits))
    k = _token_time(e)
    assert float(e.values["max_uncached_prompt_tokens"]) == longest
    assert float(e.values["prefill_time_bound"]) == pytest.approx(longest * k, rel=1e-12)
    assert float(e.values["ttft_bound"]) == pytest.approx(longest * k + 0.020, rel=1e-12)     # + 20 ms overhead
    mean = 0.7 * 32 * (1 - hits.get("chat", 0)) + 0.3 * 128 * (1 - hits.get("code", 0))
    assert float(e.values["avg_uncached_prompt_tokens"]) == pytest.approx(mean, rel=1e-12)


def test_the_kv_pool_and_the_requests_it_holds_do_not_move_with_the_hit_rate(tmp_path, base_plan):
    """The cached prefix is still in the KV cache (read every decode step), so gate 1 is unchanged."""
    _, before = evaluated(tmp_path, base_plan)
    _, after = evaluated(tmp_path, _with_hits(base_plan, chat=0.6, code=0.9))
    for name in KV + ("avg_prompt_tokens", "max_prompt_tokens", "avg_context_tokens"):
        assert float(after.values[name]) == float(before.values[name]), name


def _rag(h: float) -> dict:
    """A prefill-heavy candidates plan sized by the estimate: one class of 8,000 prompt and 100 output tokens."""
    plan = estimated()
    plan["tables"]["classes"]["rows"] = [{"name": "rag", "weight": 1.0, "prompt_tokens": 8000, "output_tokens": 100,
                                          "prefix_hit_rate": h}]
    return plan


def _paced(h: float) -> dict:
    """:func:`_rag` with a TTFT SLO of 2 s, so the step target, not the queued TTFT, bounds its λ*: the
    hand-worked λ_T below (at 1 s the 8,000-token prefill's queue binds first with nothing cached)."""
    plan = _rag(h)
    plan["inputs"]["ttft_p95_slo"] = "2 s"
    return plan


def _estimate(write_plan, h: float):
    _, evaluations = evaluate_plan(write_plan(_paced(h), name=f"rag-{h}"))
    return evaluations[0]


def test_the_estimates_lambda_rises_with_the_hit_rate_by_hand(write_plan):
    """a = n_dec r_KV + (P (1 - h) + O) k, the step's growth per req/s; λ_T = (T - f R_0) / (f T a) and
    λ_KV = C / (f (n_dec R_0 + C a)), with C, the requests the KV pool holds, unchanged. Half the
    prompt cached takes 4,000 tokens off a, and λ* (here λ_T, which prefill binds) rises from about
    1.97 to 3.47 req/s (the all-reduce adds nothing at TP1)."""
    before, after = _estimate(write_plan, 0.0), _estimate(write_plan, 0.5)
    k = _token_time(before)
    v = {n: float(before.values[n]) for n in ("estimate_steps_per_request", "estimate_request_kv_time",
                                              "estimate_step_target", "engine_step_factor",
                                              "estimate_weights_time", "estimate_kv_concurrency")}
    n, r_kv, t, f, r0, c = v.values()
    for e, h in ((before, 0.0), (after, 0.5)):
        a = n * r_kv + (8000 * (1 - h) + 100) * k
        assert float(e.values["estimate_step_growth"]) == pytest.approx(a, rel=1e-12)
        assert float(e.values["estimate_slo_rate"]) == pytest.approx((t - f * r0) / (f * t * a), rel=1e-12)
        assert float(e.values["estimate_kv_rate"]) == pytest.approx(c / (f * (n * r0 + c * a)), rel=1e-12)
        assert float(e.values["instance_max_rate"]) == pytest.approx((t - f * r0) / (f * t * a), rel=1e-12)
    assert float(before.values["instance_max_rate"]) == pytest.approx(1.968, abs=1e-3)
    assert float(after.values["instance_max_rate"]) == pytest.approx(3.468, abs=1e-3)
    assert float(after.values["active_gpus"]) < float(before.values["active_gpus"])
    for name in KV + ("estimate_kv_concurrency", "estimate_resident_share", "estimate_request_kv_time"):
        assert float(after.values[name]) == float(before.values[name]), name


def test_every_candidates_estimated_lambda_rises_with_the_hit_rate(write_plan):
    """The candidates run the same formulas: each one's λ* rises as half the prompt is cached, and the
    plan's own (h100 TP1) is the plan's λ* worked above."""
    lambdas = []
    for h in (0.0, 0.5):
        _, evaluations = evaluate_plan(write_plan(_rag(h), name=f"rag-{h}"))
        ev = ranked.rank(evaluations, batch.evaluate(evaluations), draws=50).evaluated
        lambdas.append({c.label: float(ev.values["instance_max_rate"][i, 0]) for i, c in enumerate(ev.candidates)})
    assert lambdas[0].keys() == lambdas[1].keys() and len(lambdas[0]) == 4
    assert all(lambdas[1][label] > lambdas[0][label] for label in lambdas[0])
    assert lambdas[1]["h100-sxm5-80gb TP1"] == pytest.approx(3.468, abs=1e-3)


@pytest.mark.skipif(recalc.soffice() is None, reason=recalc.SKIP_REASON)
def test_the_uncached_prefill_is_live_in_the_workbook(write_plan, tmp_path):
    """The hit rate is an input cell; the uncached tokens, the bounds and λ* are formulas of it."""
    assert_workbook_recalculates(write_plan(_rag(0.5)), tmp_path,
                                 {"classes.prefix_hit_rate", "classes.uncached_prompt_tokens",
                                  "max_uncached_prompt_tokens", "avg_uncached_prompt_tokens", "prefill_time_bound",
                                  "estimate_step_growth", "instance_max_rate"})


def _routed(write_plan, base_plan, routing=None, **hits):
    if routing:
        base_plan["routing"] = routing
    return evaluate_plan(write_plan(_with_hits(base_plan, **hits)))[1]


def test_round_robin_over_several_replicas_is_warned_of_at_the_hit_rate(tmp_path, write_plan, base_plan, run_main,
                                                                         monkeypatch):
    """The base plan runs 23 replicas (22 active + 1 spare); routing is round_robin unless the plan says."""
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    path = write_plan(_with_hits(base_plan, code=0.6))
    assert run_main("build")[0] == 0
    code, _, err = run_main("check")
    assert code == 0
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "prefix_hit_rate" in text)
    assert (f"warning: plans/test-plan.yaml:{line}: tables.classes.rows[1].prefix_hit_rate: class code's prefix hit "
            "rate 0.6 needs each request at the replica that caches its prefix, but routing is round_robin over 23 "
            "replicas: a prefix one conversation or agent reuses is cached on about 1 replica in 23. State "
            "`routing: prefix_aware` if a router sends requests by their prefix (llm-d, the Dynamo KV router, "
            "SGLang's router), else lower the hit rate") in err
    assert run_main("check", "--strict")[0] == 1


@pytest.mark.parametrize("routing, hits, peak", [
    ("prefix_aware", {"code": 0.6}, "60 req/s"),      # the router keeps a prefix on its replica
    (None, {}, "60 req/s"),                           # no hit rate, nothing to achieve
    (None, {"code": 0.6}, "2 req/s")])                # one replica (and no spare): every prefix on it
def test_no_routing_warning_where_the_hit_rate_is_achievable(write_plan, base_plan, routing, hits, peak):
    base_plan["inputs"]["peak_arrival_rate"] = peak
    base_plan["inputs"]["redundancy_replicas"] = 0
    evaluations = _routed(write_plan, base_plan, routing, **hits)
    assert check.routing_warnings(evaluations) == []


def test_the_hit_rate_is_a_flip_variable_of_gate_3(write_plan, run_main, base_plan):
    """code's prompt of 4,096 tokens prefills in 4,096 k ≈ 468.5 ms, so gate 3 fails a 300 ms TTFT SLO
    (20 ms overhead); it passes once 4,096 (1 - h) k + 20 ms ≤ 300 ms, from h = 1 - 0.280 / (4,096 k)."""
    base_plan["inputs"]["ttft_p95_slo"] = "300 ms"
    base_plan["tables"]["classes"]["rows"][1]["prompt_tokens"] = 4096
    path = write_plan(base_plan)
    _, evaluations = evaluate_plan(path)
    k = _token_time(evaluations[0])
    code, out, err = run_main("seek", str(path), "classes[code].prefix_hit_rate", "--format", "json")
    assert code == 0, err
    doc = yaml.safe_load(out)
    assert doc["today"] == 0
    [flip] = doc["flips"]
    assert flip["value"] == pytest.approx(1 - 0.280 / (4096 * k), abs=1e-9) and flip["exact"]
    assert flip["decisions_before"]["compute_gate"] is False and flip["decisions_after"]["compute_gate"] is True


def test_the_hit_rate_at_which_the_estimated_fleet_loses_a_replica(write_plan, run_main):
    """With nothing cached the prefill-heavy plan needs ceil(60 / (0.7 λ*)) = 44 replicas; 43 carry the
    peak once λ* = λ_T reaches L = 60 / (0.7 × 43), i.e. once a = (T - f R_0) / (f T L), which the
    hit rate reaches at h = 1 - (a - n_dec r_KV - 100 k) / (8,000 k) (T is the 25 ms TPOT SLO at any h:
    the E2E SLO leaves (5 s - TTFT) / 100 steps, more)."""
    path = write_plan(_paced(0.0))
    e = evaluate_plan(path)[1][0]
    k = _token_time(e)
    n, r_kv, t, f, r0 = (float(e.values[q]) for q in ("estimate_steps_per_request", "estimate_request_kv_time",
                                                        "estimate_step_target", "engine_step_factor",
                                                        "estimate_weights_time"))
    a = (t - f * r0) / (f * t * (60 / (0.7 * 43)))
    code, out, err = run_main("seek", str(path), "classes[rag].prefix_hit_rate", "--format", "json")
    assert code == 0, err
    first = yaml.safe_load(out)["flips"][0]
    assert first["value"] == pytest.approx(1 - (a - n * r_kv - 100 * k) / (8000 * k), abs=1e-9)
    assert (first["decisions_before"]["active_gpus"], first["decisions_after"]["active_gpus"]) == (44, 43)


@pytest.mark.parametrize("h, got", [(1, "1"), (-0.1, "-0.1"), (1.5, "1.5")])
def test_a_hit_rate_outside_0_to_1_is_one_located_message(write_plan, run_main, base_plan, h, got):
    path = write_plan(_with_hits(base_plan, code=h))
    code, _, err = run_main("build", str(path))
    assert code == 1
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "prefix_hit_rate" in text)
    assert err.splitlines() == [
        f"error: plans/test-plan.yaml:{line}: tables.classes.rows[1].prefix_hit_rate: classes.prefix_hit_rate must be "
        f"in [0, 1): a share of the prompt's tokens; the engine computes at least a prompt's last token; got {got}",
        "1 plan(s) failed; their previous outputs are untouched"]


def test_an_unknown_routing_is_refused_with_the_cases(write_plan, base_plan):
    base_plan["routing"] = "random"
    with pytest.raises(Exception) as caught:
        load_plan(write_plan(base_plan))
    assert "routing must be one of round_robin, prefix_aware, got 'random'" in str(caught.value)
