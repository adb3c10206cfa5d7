"""Prefill/decode disaggregation (#40): a prefill pool and a decode pool on the plan's GPU, sized
for the peak with the rate-matching derates and N+k spares each, the KV hand-off in the first
inter-token gap, the links' utilisation, and the two pools priced against the aggregated fleet on
the same forecast, worked by hand.

The base plan: an A100-80GB replica of one GPU serving Llama-3-8B, peak 60 req/s, λ* 4 req/s
measured at ρ 0.7: the aggregated fleet is 22 active + 1 spare = 23 replicas on 3 nodes of 8 GPUs
at $40/h, $87,840 a month (732 h). The classes average 0.7 × 32 + 0.3 × 128 = 60.8 prompt tokens;
the longest prompt is 128 tokens; Llama-3-8B caches 2 × 32 layers × 8 KV heads × 128 × 2 bytes
= 128 KiB a token.
"""

from __future__ import annotations

import copy
import re

import pytest
from conftest import ROOT
from test_demand import evaluated


MONTH_H = 732
KV_BYTES = 2 * 32 * 8 * 128 * 2


def disaggregated(base_plan, **inputs):
    """The base plan with its own GPU as its one candidate, split into a prefill pool of TP1
    replicas and a decode pool of the plan's TP1 replicas."""
    plan = copy.deepcopy(base_plan)
    plan["topology"] = "disaggregated"
    plan["candidates"] = {"gpus": ["a100-sxm4-80gb"], "tp": [1],
                          "offers": [{"name": "node8", "gpu": "a100-sxm4-80gb", "gpus_per_node": 8,
                                      "node_hourly_cost": "40 USD/h"}]}
    plan["inputs"].update({"prefill_gpus_per_replica": "1 GPU"}, **inputs)
    return plan


def _row(e, column):
    return e.display(f"deployments.{column}")[0]


def test_pool_sizes_and_cost_from_given_rates_by_hand(tmp_path, base_plan):
    """λ*_P 20 and λ*_D 6 req/s given: ⌈60 / (0.7 × 0.90 × 20)⌉ = ⌈4.76⌉ = 5 prefill replicas + 1,
    ⌈60 / (0.7 × 0.92 × 6)⌉ = ⌈15.53⌉ = 16 decode replicas + 1; 6 GPUs on 1 node and 17 on 3:
    4 nodes, $117,120 a month, $29,280 more than the aggregated fleet, so disaggregation does not pay."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="6 req/s"))
    assert (e.display("prefill_active_replicas"), e.display("prefill_resilient_replicas")) == (5, 6)
    assert (e.display("decode_active_replicas"), e.display("decode_resilient_replicas")) == (16, 17)
    assert e.display("disaggregated_gpus") == 23
    assert (_row(e, "prefill_nodes"), _row(e, "decode_nodes"), _row(e, "nodes")) == (1, 3, 3)
    assert _row(e, "disaggregated_monthly_cost") == pytest.approx(4 * 40 * MONTH_H)
    assert _row(e, "disaggregation_saving") == pytest.approx(-40 * MONTH_H)
    assert not _row(e, "disaggregation_pays")


def test_the_flip_a_faster_decode_pool_makes_disaggregation_pay(tmp_path, base_plan):
    """λ*_D 15 req/s: ⌈60 / (0.7 × 0.92 × 15)⌉ = ⌈6.21⌉ = 7 + 1 = 8 decode replicas on 1 node, with
    1 prefill node 2 nodes, $58,560 a month: $29,280 less than the aggregated fleet's 3 nodes."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s"))
    assert e.display("decode_resilient_replicas") == 8
    assert _row(e, "disaggregated_monthly_cost") == pytest.approx(2 * 40 * MONTH_H)
    assert _row(e, "disaggregation_saving") == pytest.approx(40 * MONTH_H)
    assert _row(e, "disaggregated_cost_per_million_tokens") == pytest.approx(
        2 * 40 * MONTH_H / (20 * MONTH_H * 3600 * (0.7 * 64 + 0.3 * 256) / 1e6))
    assert _row(e, "disaggregation_pays")


def test_kv_transfer_time_and_link_utilisation_by_hand(tmp_path, base_plan):
    """The longest prompt's KV, 128 tokens × 128 KiB, over one GPU's 50 GB/s link at 0.8: 0.419 ms;
    the peak's prompts, 60 req/s × 60.8 tokens × 128 KiB, over the 5 active prefill GPUs' links
    (fewer than the decode pool's 16): 0.24 % of 5 × 40 GB/s."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="6 req/s"))
    assert e.display("kv_transfer_time") == pytest.approx(128 * KV_BYTES / 40e9 * 1e3)
    assert e.display("link_utilisation") == pytest.approx(60 * 60.8 * KV_BYTES / (5 * 40e9))
    assert e.display("link_gate")
    assert e.display("first_token_gap") == pytest.approx(e.display("kv_transfer_time") + e.display("decode_peak_step"))


def test_a_slow_link_fails_the_handoff_and_the_links(tmp_path, base_plan):
    """At 0.01 GB/s a GPU the longest prompt's 16 MiB take 2.1 s to hand off, far past the 25 ms
    TPOT SLO, and the peak's prompts need 478 MB/s against 5 × 8 MB/s."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s",
                                             kv_link_bandwidth="0.01 GB/s/GPU"))
    assert e.display("kv_transfer_time") == pytest.approx(128 * KV_BYTES / 8e6 * 1e3)
    assert not e.display("handoff_gate") and not e.display("link_gate")
    assert not _row(e, "disaggregation_pays")


def test_estimated_prefill_rate_at_the_ttft_slo_by_hand(tmp_path, base_plan):
    """A prompt token costs 2 FLOP × N on 312 TFLOP/s × 0.45 (k); the longest prompt's bound is
    128 k, plus 20 ms of overhead; under processor sharing it stretches by 1 / (1 − λ 60.8 k)
    and must end within the 1 s TTFT SLO less the overhead: λ*_P = (1 − 128 k / 980 ms) / (60.8 k)."""
    _, e = evaluated(tmp_path, disaggregated(base_plan))
    k = 2 * e.display("parameter_count") / (312e12 * 0.45)                      # s a token
    assert e.display("prefill_token_time") == pytest.approx(k * 1e3)
    assert e.display("prefill_ttft_bound") == pytest.approx(128 * k * 1e3 + 20)
    assert e.display("prefill_max_rate") == pytest.approx((1 - 128 * k / 0.98) / (60.8 * k))


def test_estimated_decode_rate_is_the_estimate_without_the_prompts(tmp_path, base_plan):
    """The decode pool's step grows by n_dec r_KV + Ō k a request per second (the aggregated
    estimate's a less the prompt tokens' P̄ k), and its λ*_D meets the TPOT SLO or fills the KV pool."""
    _, e = evaluated(tmp_path, disaggregated(base_plan))
    d = e.display
    k, n_dec, r_kv = d("estimate_token_time"), d("estimate_steps_per_request"), d("estimate_request_kv_time")
    a_d = n_dec * r_kv + 121.6 * k
    assert d("decode_step_growth") == pytest.approx(a_d)
    assert d("estimate_step_growth") - a_d == pytest.approx(60.8 * k)
    f, r0, t = d("engine_step_factor"), d("estimate_weights_time"), d("decode_step_target")
    by_slo = (t - f * r0) / (f * t * a_d) * 1e3
    c = d("estimate_kv_concurrency")
    by_kv = c / (f * (n_dec * r0 + c * a_d)) * 1e3
    assert d("decode_max_rate") == pytest.approx(min(by_slo, by_kv))


def test_a_plan_without_topology_has_no_pools(tmp_path, base_plan):
    plan = disaggregated(base_plan)
    del plan["topology"], plan["inputs"]["prefill_gpus_per_replica"]
    p, e = evaluated(tmp_path, plan)
    assert "topology" not in p.switches
    assert "prefill_max_rate" not in e.values


def test_disaggregation_without_candidates_is_refused(write_plan, run_main, base_plan):
    plan = copy.deepcopy(base_plan)
    plan["topology"] = "disaggregated"
    code, _, err = run_main("build", str(write_plan(plan)))
    assert code == 1
    assert ("plans/test-plan.yaml:40: topology: topology: disaggregated sizes its prefill and decode pools from the "
            "candidates' throughput estimate, and the plan has no candidates: (list its own GPU and an offer "
            "there)") in err
    assert "Traceback" not in err


def test_the_record_has_the_section_only_for_a_disaggregated_plan(write_plan, run_main, base_plan):
    """The pools and the hand-off in their own section, each offer's two pools priced beside the
    aggregated fleet; a plan without topology: has no such section (not even its table's names)."""
    aggregated = write_plan(base_plan, name="aggregated")
    split = write_plan(disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s"), name="split")
    assert run_main("build", str(aggregated), str(split))[0] == 0
    out = aggregated.parent.parent / "out"
    assert "Prefill/decode disaggregation" not in (out / "aggregated.md").read_text(encoding="utf-8")
    record = (out / "split.md").read_text(encoding="utf-8")
    assert "## 7. Prefill/decode disaggregation" in record
    assert "| node8 | 1 | 1 | $58,560.00 |" in record
    assert "- `disaggregation_saving = monthly_cost - disaggregated_monthly_cost`" in record


def ranked(folder, plan):
    """The plan's candidates ranked (every scenario evaluated, no Monte Carlo draws)."""
    from capplan.analysis import candidates, ranking
    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from test_demand import write

    model = standard_model()
    evaluations = evaluate_all(load(write(folder, plan), model), model)
    return ranking.rank(evaluations, candidates.evaluate(evaluations), draws=0)


def _ranked_as(r):
    """(label, monthly cost, nodes, reason) of every candidate in the ranking's order."""
    ev = r.evaluated
    return [(ev.candidates[i].label, round(r.value("deployments.monthly_cost", i), 2), r.value("deployments.nodes", i),
             ev.reasons[i]) for i in r.order]


def test_the_disaggregated_candidate_wins_when_its_pools_take_fewer_nodes(tmp_path, base_plan):
    """λ*_P 20 and λ*_D 15 req/s: the pools take 1 + 1 nodes, $58,560 a month, against the aggregated
    fleet's 3 nodes, $87,840 (the first test's fleet): the one candidate ranked twice, the pools first."""
    r = ranked(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s"))
    assert _ranked_as(r) == [("a100-sxm4-80gb TP1, disaggregated", 2 * 40 * MONTH_H, 2, ""),
                             ("a100-sxm4-80gb TP1", 3 * 40 * MONTH_H, 3, "")]
    assert r.value("deployments.deployed_gpus", r.winner) == 16
    assert r.value("resilient_replicas", r.winner) == 6 + 8


def test_the_disaggregated_candidate_loses_when_its_pools_take_more_nodes(tmp_path, base_plan):
    """λ*_D 6 req/s: 17 decode replicas on 3 nodes and the prefill node, $117,120, rank after the
    aggregated fleet's $87,840."""
    r = ranked(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="6 req/s"))
    assert _ranked_as(r) == [("a100-sxm4-80gb TP1", 3 * 40 * MONTH_H, 3, ""),
                             ("a100-sxm4-80gb TP1, disaggregated", 4 * 40 * MONTH_H, 4, "")]


def growth(base_plan, *peaks):
    """The pools of the winning test (λ*_P 20, λ*_D 15 req/s) with a scenario at each of ``peaks``."""
    plan = disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s")
    plan["scenarios"] = {f"peak_{p}": {"title": f"Peak of {p} req/s", "set": {"peak_arrival_rate": f"{p} req/s"}}
                         for p in peaks}
    return plan


def test_the_nominal_pools_are_held_against_a_scenarios_peak_by_hand(tmp_path, base_plan):
    """The nominal pools, 5 + 1 prefill replicas at 0.7 × 0.90 × 20 = 12.6 req/s (75.6 req/s) and 7 + 1
    decode replicas at 0.7 × 0.92 × 15 = 9.66 req/s (77.28 req/s), hold a peak of 75 req/s and break at
    76 (the prefill pool) and at 78 (both); the aggregated fleet, 23 replicas at 0.7 × 4 = 2.8 req/s
    (64.4 req/s), breaks in all three."""
    r = ranked(tmp_path, growth(base_plan, 75, 76, 78))
    ev = r.evaluated
    pools, fleet = (next(i for i, c in enumerate(ev.candidates) if c.pooled == p) for p in (True, False))
    assert [bool(r.value("deployments.fleet_holds", pools, j)) for j in range(4)] == [True, True, False, False]
    assert [bool(r.value("deployments.fleet_holds", fleet, j)) for j in range(4)] == [True, False, False, False]
    assert [r.value("prefill_pool_headroom", pools, j) for j in (2, 3)] == pytest.approx([75.6 / 76, 75.6 / 78])
    assert [r.value("decode_pool_headroom", pools, j) for j in (2, 3)] == pytest.approx([77.28 / 76, 77.28 / 78])
    # re-sized for each peak, the pools stay the cheapest: 1 + 2 nodes at 76 req/s against the fleet's 4
    assert r.scenario_winners == [pools] * 4


def test_the_record_says_in_which_scenarios_the_pools_break(write_plan, run_main, base_plan):
    """The options table's row of the pools names the scenario whose peak its nominal pools cannot carry."""
    split = write_plan(growth(base_plan, 75, 76), name="split")
    assert run_main("build", str(split))[0] == 0
    record = (split.parent.parent / "out" / "split.md").read_text(encoding="utf-8")
    row = next(x for x in record.splitlines() if x.startswith("| ") and "TP1, disaggregated)" in x)
    assert "✗ breaks in 1 of its 3 scenarios" in row and row.endswith("breaks in peak_76 |")
    lines = {x.split(" | ")[0]: x for x in record.splitlines() if x.startswith("| Peak of 7") and "nominal fleet" in x}
    assert lines["| Peak of 75 req/s (peak_75)"].endswith(
        "; nominal pools 1.008× (prefill) and 1.03× (decode) the peak: hold |")
    assert lines["| Peak of 76 req/s (peak_76)"].endswith(
        "; nominal pools 0.9947× (prefill) and 1.017× (decode) the peak: **break** |")


def test_a_nominal_symbol_with_a_superscript_takes_nom_as_one_more_group(tmp_path, base_plan):
    """nominal(prefill_resilient_replicas) is N_{P}^{res} at the nominal plan: '{N_{P}^{res}}^{nom}', not the
    double superscript 'N_{P}^{res}^{nom}' KaTeX refuses."""
    from capplan.rendering.present import latex

    _, e = evaluated(tmp_path, disaggregated(base_plan))
    written = latex(e, e.graph.nodes["prefill_pool_headroom"].formula.expr)
    assert "{N_{P}^{res}}^{nom}" in written and "}^{res}^{nom}" not in written


def test_a_failing_handoff_makes_the_pools_infeasible_with_the_reason(tmp_path, base_plan):
    """At 0.01 GB/s a GPU the hand-off takes 2.1 s, past the 25 ms TPOT SLO: the pools, cheaper on paper,
    are infeasible and say why; the aggregated fleet wins."""
    r = ranked(tmp_path, disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s",
                                       kv_link_bandwidth="0.01 GB/s/GPU"))
    (label, *_, reason) = _ranked_as(r)[1]
    assert r.evaluated.candidates[r.winner].label == "a100-sxm4-80gb TP1"
    assert label == "a100-sxm4-80gb TP1, disaggregated"
    assert reason.startswith("the KV hand-off misses the TPOT SLO: the first inter-token gap is 2,")
    assert reason.endswith("over the TPOT SLO of 25 ms (handoff_gate)")


def test_the_chain_row_of_a_disaggregated_winner_multiplies_out(write_plan, run_main, base_plan):
    """The winner's chain row names both pools: 0.7 × 0.9 × 20 = 12.6 req/s, ⌈60 / 12.6⌉ = 5 + 1
    prefill replicas; 0.7 × 0.92 × 15 = 9.66 req/s, ⌈60 / 9.66⌉ = 7 + 1 decode replicas; 6 × 1 + 8 × 1
    = 14 GPUs; (1 + 1) nodes × $40/h × 732 h = $58,560; the headline rents the pools."""
    split = write_plan(disaggregated(base_plan, prefill_max_rate="20 req/s", decode_max_rate="15 req/s"), name="split")
    assert run_main("build", str(split))[0] == 0
    record = (split.parent.parent / "out" / "split.md").read_text(encoding="utf-8")
    row = next(x for x in record.splitlines() if x.startswith("| Winner a100-sxm4-80gb TP1, disaggregated on node8"))
    assert ("| prefill λ\\* 20 req/s × ρ 0.7 × 0.9 = 12.6 req/s; decode λ\\* 15 req/s × ρ 0.7 × 0.92 = 9.66 req/s "
            "| prefill ⌈60 / 12.6⌉ = 5, + 1 = 6; decode ⌈60 / 9.66⌉ = 7, + 1 = 8 | 6 × 1 + 8 × 1 = 14 "
            "| (1 + 1) × $40.00/h × 732 h = $58,560.00 |") in row
    assert record.startswith("# ") and ("**Rent node8 (a100-sxm4-80gb TP1, disaggregated: 6 prefill + 8 decode "
                                        "replicas): 16 GPUs on 2 nodes, $58,560.00 a month") in record
    assert "Prefill/decode pools instead" not in record


def test_the_reference_plan_ranks_the_pools_with_the_aggregated_fleets():
    """The reference plan's first screen recommends TP4 prefill and decode pools on 30 + 6 = 36 nodes of
    the $36.32/h offer, tied with the TP8 pools' 30 + 6 and two node-months (732 h) less than the
    cheapest aggregated fleet's 38 (TP4), whose decode steps carry the 8k prompts' chunks."""
    from capplan.build import compile_plan

    path = ROOT / "plans" / "llama3.3-70b-disaggregated.yaml"
    text = compile_plan(path).files[f"{path.stem}.md"].decode()
    screen = text[:text.index("> [!WARNING]")]
    node_month = 36.32 * 732
    assert screen.count("**Rent spheron-8x-h200-sxm (h200-sxm-141gb TP4, disaggregated: 60 prefill + 12 decode "
                        f"replicas): 288 GPUs on 36 nodes, ${36 * node_month:,.2f} a month") == 1
    assert screen.count("(30 + 6) × $36.32/h × 732 h") == 2            # the winner's pools and the TP8 pools'
    assert f"| 38 × spheron-8x-h200-sxm (h200-sxm-141gb TP4) | ✓ holds in every scenario | ${38 * node_month:,.2f} |" \
        in screen


MEASURED_P = {"value": "20 req/s", "source": "vLLM disaggregated benchmark, prefill pool TP1 (2026-11-02)"}
MEASURED_D = {"value": "15 req/s", "source": "vLLM disaggregated benchmark, decode pool TP1 (2026-11-02)"}


def test_measured_pool_rates_replace_the_estimate_by_hand(tmp_path, base_plan):
    """λ*_P 20 and λ*_D 15 req/s measured: the pools are sized on them as on the given rates above
    (⌈60 / 12.6⌉ = 5 + 1 prefill, ⌈60 / 9.66⌉ = 7 + 1 decode replicas), while the estimate stays beside
    them, (1 − 128 k / 980 ms) / (60.8 k) for the prefill pool."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_measured_rate=MEASURED_P,
                                             decode_measured_rate=MEASURED_D))
    k = 2 * e.display("parameter_count") / (312e12 * 0.45)
    assert (e.display("prefill_max_rate"), e.display("decode_max_rate")) == (20, 15)
    assert e.display("prefill_estimated_rate") == pytest.approx((1 - 128 * k / 0.98) / (60.8 * k))
    assert (e.display("prefill_resilient_replicas"), e.display("decode_resilient_replicas")) == (6, 8)
    assert e.scenario.inputs["prefill_measured_rate"].tag == "measurement"


def test_without_a_measurement_a_pool_rests_on_the_estimate(tmp_path, base_plan):
    """Only the prefill pool measured: the decode pool's λ*_D is its estimate."""
    _, e = evaluated(tmp_path, disaggregated(base_plan, prefill_measured_rate=MEASURED_P))
    assert e.display("prefill_max_rate") == 20
    assert e.display("decode_measured_rate") == 0
    assert e.display("decode_max_rate") == pytest.approx(e.display("decode_estimated_rate"))


def test_a_measured_pool_rate_stays_with_the_configuration_it_ran(tmp_path, base_plan):
    """Candidates TP1 and TP2 ranked as pools: both prefill pools are the plan's TP1 prefill replicas on
    its GPU, so both take the measured 20 req/s; only the TP1 decode pool is the measured one, so the
    TP2 decode pool keeps its estimate; each basis says which rate rests on what."""
    plan = disaggregated(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D)
    plan["candidates"]["tp"] = [1, 2]
    r = ranked(tmp_path, plan)
    ev = r.evaluated
    one, two = (next(i for i, c in enumerate(ev.candidates) if c.pooled and c.gpus == g) for g in (1, 2))
    assert (r.value("prefill_max_rate", one), r.value("decode_max_rate", one)) == (20, 15)
    assert r.value("prefill_max_rate", two) == 20
    assert r.value("decode_max_rate", two) == pytest.approx(r.value("decode_estimated_rate", two))
    assert r.value("decode_max_rate", two) != 15
    assert ("prefill λ*_P measured: vLLM disaggregated benchmark, prefill pool TP1 (2026-11-02); decode λ*_D "
            "measured: vLLM disaggregated benchmark, decode pool TP1 (2026-11-02)") in ev.basis[one]
    assert "decode λ*_D estimated at the TPOT SLO" in ev.basis[two]
    assert (ev.tags[one], ev.band[one]) == ("measured", 0)
    assert ev.tags[two] == "estimated"


def test_the_record_says_which_rate_each_pool_rests_on(write_plan, run_main, base_plan):
    """The winner's note reads 'measured λ* prefill 20 / decode 15 req/s' without a band, and section 7
    derives λ*_P from the measurement."""
    split = write_plan(disaggregated(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D),
                       name="split")
    assert run_main("build", str(split))[0] == 0
    record = (split.parent.parent / "out" / "split.md").read_text(encoding="utf-8")
    assert "| measured λ\\* prefill 20 / decode 15 req/s |" in record
    row = next(x for x in record.splitlines() if "`prefill_max_rate`" in x)
    assert re.search(r"rests on measurements: [^;]*\bprefill_measured_rate\b", row)


def test_a_measured_rate_at_its_default_0_is_no_measurement_a_row_rests_on(tmp_path, base_plan):
    """No pool measured (both rates at 0, the estimate stands): λ*_P, λ*_D and the rows after them do not
    say they rest on prefill_measured_rate or decode_measured_rate, and the inputs read 'not measured'."""
    from capplan.rendering.present import rests_on, shown, substituted

    _, e = evaluated(tmp_path, disaggregated(base_plan))
    for name in ("prefill_max_rate", "decode_max_rate", "first_token_gap", "disaggregated_gpus"):
        said = rests_on(e, name)
        assert "measured_rate" not in said, (name, said)
        assert said.startswith("measurements: "), (name, said)
    assert str(shown(e, "decode_measured_rate")) == "not measured"
    assert substituted(e, e.graph.nodes["decode_max_rate"].formula).startswith("if(0 req/s > 0, 0 req/s, ")


def test_pools_of_a_candidate_with_an_estimate_file_rest_on_the_built_in_estimate(tmp_path):
    """The chat candidates plan ranked as pools too: aiconfigurator's file predicts the H200 TP2 BF16
    replica aggregated, not its pools, so the pools' rates are the built-in estimate's and say so."""
    import shutil

    import yaml

    plan = yaml.safe_load((ROOT / "plans" / "llama3.3-70b-candidates.yaml").read_text(encoding="utf-8"))
    plan["topology"] = "disaggregated"
    plan["inputs"]["prefill_gpus_per_replica"] = "8 GPU"
    shutil.copytree(ROOT / "plans" / "estimates", tmp_path / "estimates")
    ev = ranked(tmp_path, plan).evaluated
    one, pools = (next(i for i, c in enumerate(ev.candidates) if c.label == label)
                  for label in ("h200-sxm-141gb TP2 bf16", "h200-sxm-141gb TP2 bf16, disaggregated"))
    assert ev.tag_text(one) == "estimated by aiconfigurator"
    assert ev.tag_text(pools) == "estimated for vLLM"
    assert ev.from_file(pools) is None


def test_the_chat_reference_plan_ranks_the_pools_behind_the_aggregated_fleet():
    """ShareGPT chat (213 in, 212 out) at 20 req/s on H200 TP2 FP8, every rate estimated: aggregated
    λ* 13.19 req/s, ⌈20 / (0.7 × 13.19)⌉ = ⌈2.17⌉ = 3 + 1 = 4 replicas, 8 GPUs on 1 node, 36.32 × 732 =
    $26,586.24; pooled λ*_P 58.16 and λ*_D 24.41 req/s, ⌈20 / (0.7 × 0.9 × 58.16)⌉ = 1 + 1 prefill and
    ⌈20 / (0.7 × 0.92 × 24.41)⌉ = ⌈1.27⌉ = 2 + 1 decode replicas, 4 + 6 GPUs on 1 + 1 nodes, $53,172.48:
    disaggregation costs $26,586.24 a month more, and the record says so."""
    from capplan.build import compile_plan

    path = ROOT / "plans" / "llama3.3-70b-chat-disaggregated.yaml"
    text = compile_plan(path).files[f"{path.stem}.md"].decode()
    node_month = 36.32 * 732
    assert text.count(f"**Rent spheron-8x-h200-sxm (h200-sxm-141gb TP2): 8 GPUs on 1 node, ${node_month:,.2f} a month") == 1
    assert (f"| 2 × spheron-8x-h200-sxm (h200-sxm-141gb TP2, disaggregated) | ✓ holds at the plan's peak "
            f"| ${2 * node_month:,.2f} |") in text
    assert "| spheron-8x-h200-sxm | 1 | 1 | $53,172.48 |" in text
    assert f"| spheron-8x-h200-sxm | $11.89 | -${node_month:,.2f} |" in text


H100_BF16 = 989e12          # catalog h100-sxm5-80gb, dense BF16 FLOP/s


def on_h100(base_plan, **inputs):
    """The disaggregated base plan with its prefill pool on H100 SXM nodes of 8 GPUs at $98.32/h."""
    plan = disaggregated(base_plan, prefill_node_hourly_cost="98.32 USD/h", prefill_gpus_per_node=8, **inputs)
    plan["prefill_gpu"] = "h100"
    return plan


def test_a_prefill_pool_on_another_gpu_computes_at_its_rate_by_hand(tmp_path, base_plan):
    """On the H100's 989 TFLOP/s at 0.45 a prompt token costs k_P = 2 N / (989 T × 0.45); the longest
    prompt's bound is 128 k_P + 20 ms, and λ*_P = (1 − 128 k_P / 980 ms) / (60.8 k_P), against the
    A100's 312 TFLOP/s, 3.17 times faster; the pools' ratio of tensor rates is 989 / 312."""
    _, e = evaluated(tmp_path, on_h100(base_plan))
    k = 2 * e.display("parameter_count") / (H100_BF16 * 0.45)
    assert e.display("prefill_compute_ratio") == pytest.approx(989 / 312)
    assert e.display("prefill_token_time") == pytest.approx(k * 1e3)
    assert e.display("prefill_ttft_bound") == pytest.approx(128 * k * 1e3 + 20)
    assert e.display("prefill_estimated_rate") == pytest.approx((1 - 128 * k / 0.98) / (60.8 * k))
    assert e.scenario.inputs["prefill_bf16_peak_flops"].source.startswith("catalog h100-sxm5-80gb: ")


def test_a_prefill_pool_on_its_own_offer_is_priced_at_it_by_hand(tmp_path, base_plan):
    """λ*_P 20 and λ*_D 15 req/s measured: 5 + 1 prefill replicas on 1 H100 node at $98.32/h and 7 + 1
    decode replicas on 1 A100 node at $40/h: (98.32 + 40) × 732 = $101,250.24 a month, $13,410.24 more
    than the aggregated fleet's 3 A100 nodes ($87,840)."""
    _, e = evaluated(tmp_path, on_h100(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D))
    assert (_row(e, "prefill_nodes"), _row(e, "decode_nodes")) == (1, 1)
    assert _row(e, "disaggregated_monthly_cost") == pytest.approx((98.32 + 40) * MONTH_H)
    assert _row(e, "disaggregation_saving") == pytest.approx((3 * 40 - 98.32 - 40) * MONTH_H)


def test_the_kv_hand_off_goes_over_the_slower_pools_links_by_hand(tmp_path, base_plan):
    """The prefill GPUs' links at 10 GB/s a GPU, the decode GPUs' at 50: one TP1 prefill replica sends
    128 tokens × 128 KiB over min(10 × 1, 50 × 1) × 0.8 = 8 GB/s: 2.097 ms."""
    _, e = evaluated(tmp_path, on_h100(base_plan, prefill_kv_link_bandwidth="10 GB/s/GPU"))
    assert e.display("kv_transfer_time") == pytest.approx(128 * KV_BYTES / 8e9 * 1e3)


def test_a_prefill_gpu_too_small_for_the_weights_makes_the_pools_infeasible(tmp_path, base_plan):
    """A prefill GPU of 16 GiB at 0.9 leaves 14.4 GiB, under Llama-3-8B's 14.96 GiB of weights and its
    longest prompt's 16 MiB of KV: the pools fail their memory gate, do not pay, and the ranking says why."""
    plan = on_h100(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D,
                   prefill_gpu_memory="16 GiB/GPU")
    _, e = evaluated(tmp_path, plan)
    assert e.display("prefill_usable_vram") == pytest.approx(16 * 0.9)
    assert not e.display("prefill_memory_gate")
    assert not _row(e, "disaggregation_pays")
    r = ranked(tmp_path, plan)
    pools = next(i for i, c in enumerate(r.evaluated.candidates) if c.pooled)
    assert r.evaluated.reasons[pools] == ("a prefill replica cannot hold the weights and the longest prompt's KV "
                                          "cache: it needs 14.97 GiB, more than its 14.4 GiB usable "
                                          "(prefill_memory_gate)")


def test_a_prefill_gpu_needs_the_disaggregated_topology(write_plan, run_main, base_plan):
    plan = copy.deepcopy(base_plan)
    plan["prefill_gpu"] = "h100"
    code, _, err = run_main("build", str(write_plan(plan)))
    assert code == 1
    assert "prefill_gpu: names the prefill pool's GPU, which only topology: disaggregated has" in err
    assert "Traceback" not in err


def test_a_prefill_gpu_the_catalog_gives_no_rate_for_is_refused_by_name(write_plan, run_main, base_plan):
    code, _, err = run_main("build", str(write_plan(on_h100(base_plan) | {"prefill_gpu": "mi355x"})))
    assert code == 1
    assert ("prefill_gpu: the catalog gives no bf16_peak_flops for mi355x; state prefill_bf16_peak_flops "
            "under inputs:") in err
    assert "Traceback" not in err


def test_a_prefill_gpu_needs_its_offer(write_plan, run_main, base_plan):
    """Another GPU's nodes are another offer: without its price the pools would be priced at the
    deployment's, so the plan must state it."""
    plan = disaggregated(base_plan)
    plan["prefill_gpu"] = "h100"
    code, _, err = run_main("build", str(write_plan(plan)))
    assert code == 1
    assert ("prefill_gpu: the prefill pool runs on h100-sxm5-80gb's nodes, not the deployments': state their "
            "price and GPUs as prefill_node_hourly_cost and prefill_gpus_per_node under inputs:") in err


def test_a_winner_with_its_prefill_pool_on_another_gpu_names_it_and_prices_each_pool(write_plan, run_main,
                                                                                      base_plan):
    """λ*_P 20 and λ*_D 15 req/s measured, the prefill pool on an H100 node at $30/h: 1 × $30 + 1 × $40 a
    node-hour, × 732 h = $51,240 a month against the aggregated fleet's 3 × $40 × 732 = $87,840; 8 + 8 GPUs."""
    plan = on_h100(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D)
    plan["inputs"]["prefill_node_hourly_cost"] = "30 USD/h"
    split = write_plan(plan, name="split")
    assert run_main("build", str(split))[0] == 0
    record = (split.parent.parent / "out" / "split.md").read_text(encoding="utf-8")
    assert record.startswith("# ") and ("**Rent node8 (a100-sxm4-80gb TP1, disaggregated, prefill on h100-sxm5-80gb: "
                                        "6 prefill + 8 decode replicas): 16 GPUs on 2 nodes, $51,240.00 a month") in record
    assert "| (1 × $30.00/h + 1 × $40.00/h) × 732 h = $51,240.00 |" in record


def test_a_measured_prefill_rate_on_the_prefill_gpu_holds_for_every_candidates_pools(tmp_path, base_plan):
    """With prefill_gpu: every candidate's prefill pool is the same H100 TP1 replicas, so the measured
    λ*_P 20 req/s holds for the H100 candidate's pools as for the A100's; the decode λ*_D only for the A100's."""
    plan = on_h100(base_plan, prefill_measured_rate=MEASURED_P, decode_measured_rate=MEASURED_D)
    plan["candidates"]["gpus"] = ["a100-sxm4-80gb", "h100"]
    plan["candidates"]["offers"].append({"name": "p5", "gpu": "h100", "gpus_per_node": 8,
                                         "node_hourly_cost": "98.32 USD/h"})
    r = ranked(tmp_path, plan)
    pools = {c.gpu.id: i for i, c in enumerate(r.evaluated.candidates) if c.pooled}
    assert [r.value("prefill_max_rate", pools[g]) for g in ("a100-sxm4-80gb", "h100-sxm5-80gb")] == [20, 20]
    assert r.value("decode_max_rate", pools["a100-sxm4-80gb"]) == 15
    assert r.value("decode_max_rate", pools["h100-sxm5-80gb"]) != 15


def prefill_candidates(base_plan, **inputs):
    """The disaggregated base plan whose candidates' pools prefill on the A100 (its own offer) or on
    H100 nodes of 8 GPUs at $30/h."""
    plan = disaggregated(base_plan, **inputs)
    plan["candidates"]["prefill_gpus"] = ["a100-sxm4-80gb", "h100"]
    plan["candidates"]["offers"].append({"name": "p5", "gpu": "h100", "gpus_per_node": 8,
                                         "node_hourly_cost": "30 USD/h"})
    return plan


def test_candidates_weigh_each_prefill_gpu_on_its_offer_by_hand(tmp_path, base_plan):
    """prefill_gpus: [a100, h100]: the A100 candidate is ranked aggregated, as pools on A100s, and as
    pools prefilling on the H100 at its 989 TFLOP/s (λ*_P = (1 − 128 k / 980 ms) / (60.8 k), k = 2 N /
    (989 T × 0.45)) and its offer's $30/h; λ*_D 15 req/s measured on the A100 holds for both pools, λ*_P
    20 measured on the A100 only for the A100's: the H100 pools take 1 H100 node and 1 A100 node,
    (30 + 40) × 732 = $51,240 a month."""
    r = ranked(tmp_path, prefill_candidates(base_plan, prefill_measured_rate=MEASURED_P,
                                            decode_measured_rate=MEASURED_D))
    ev = r.evaluated
    labels = [c.label for c in ev.candidates]
    assert labels == ["a100-sxm4-80gb TP1", "a100-sxm4-80gb TP1, disaggregated",
                      "a100-sxm4-80gb TP1, disaggregated, prefill on h100-sxm5-80gb (p5)"]
    h100 = 2
    n_params = 8.03e9
    k = 2 * n_params / (H100_BF16 * 0.45)
    assert r.value("prefill_max_rate", 1) == 20
    assert r.value("prefill_max_rate", h100) == pytest.approx((1 - 128 * k / 0.98) / (60.8 * k), rel=1e-3)
    assert r.value("decode_max_rate", h100) == 15
    assert r.value("deployments.monthly_cost", h100) == pytest.approx((30 + 40) * MONTH_H)
    assert ev.candidates[h100].prefill_offer.name == "p5"


def test_a_listed_prefill_gpu_without_an_offer_is_refused(write_plan, run_main, base_plan):
    plan = disaggregated(base_plan)
    plan["candidates"]["prefill_gpus"] = ["h100"]
    code, _, err = run_main("build", str(write_plan(plan)))
    assert code == 1
    assert ("candidates.prefill_gpus[0]: no offer rents h100-sxm5-80gb: list one under offers: for the prefill "
            "pools on it") in err
    assert "Traceback" not in err


def test_prefill_gpus_need_the_disaggregated_topology(write_plan, run_main, base_plan):
    plan = prefill_candidates(base_plan)
    del plan["topology"], plan["inputs"]["prefill_gpus_per_replica"]
    code, _, err = run_main("build", str(write_plan(plan)))
    assert code == 1
    assert "candidates.prefill_gpus: lists the prefill pools' GPUs, which only topology: disaggregated has" in err


def test_the_workbook_recalculates_the_nominal_pools_against_each_peak(write_plan, tmp_path, base_plan):
    """prefill_pool_headroom, decode_pool_headroom and pools_hold are live formulas (the nominal pools a
    link to the nominal sheet) that LibreOffice computes as capplan does in every scenario."""
    import recalc
    from plan_edits import quick_view

    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from capplan.rendering.workbook import build_workbook, to_bytes
    if recalc.soffice() is None:
        pytest.skip(recalc.SKIP_REASON)
    model = standard_model()
    plan = load(write_plan(growth(base_plan, 75, 76), name="book"), model)
    evs = evaluate_all(plan, model)
    built = build_workbook(plan, evs, model, quick_view(plan, evs))
    source = tmp_path / "book.xlsx"
    source.write_bytes(to_bytes(built))
    wb = recalc.values(recalc.recalc([source], tmp_path / "lo")[source])
    names = {"prefill_pool_headroom", "decode_pool_headroom", "pools_hold"}
    cells = [c for c in built.cells if c.quantity in names]
    assert {(c.quantity, c.scenario) for c in cells} >= {(n, s) for n in names for s in ("nominal", "peak_76")}
    assert [c.expected for c in cells if c.quantity == "pools_hold" and c.scenario == "peak_76"] == [False]
    assert not recalc.error_cells(wb) and not recalc.mismatches(cells, wb, limit=0)
