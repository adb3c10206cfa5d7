"""Candidates ranked by the cost of serving the forecast: values worked by hand.

The three-candidate plan: peak 60 req/s, ρ 0.7, one spare replica, 732 h a
month, 8-GPU nodes; the sweep's λ* is 4 req/s (6 req/s misses the TTFT SLO).

- h100 TP1 (measured, λ* 4): λ_safe 2.8, ceil(60/2.8) = 22 active + 1 = 23
  replicas, 8 a node: 3 nodes × $40/h × 732 h = $87,840;
- h100 TP2 (λ* given 15): λ_safe 10.5, ceil(5.71) = 6 + 1 = 7 replicas, 4 a
  node: 2 nodes × $40 × 732 = $58,560 — the winner;
- h200 TP1 (λ* given 9): λ_safe 6.3, ceil(9.52) = 10 + 1 = 11 replicas, 8 a
  node: 2 nodes × $50 × 732 = $73,200 — the runner-up, +25 %.

The runner-up wins below 58,560 / (2 × 732) = $40.00/h a node; the winner
loses above 73,200 / (2 × 732) = $50.00/h; the runner-up's one node holds 8
replicas, 7 active, so it wins from λ* = 60 / (7 × 0.7) = 12.2449 req/s.
"""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest
import yaml
from conftest import BASE_PLAN, ROOT

from capplan.analysis import candidates as batch
from capplan.analysis import ranking as ranked
from capplan.analysis.pipeline import evaluate_plan, load_plan
from capplan.artifacts import transfer
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.rendering import candidates as candidatesview
from capplan.rendering.candidates import CandidatesView

REFERENCE = ROOT / "plans" / "llama3.3-70b-candidates.yaml"


def three(h200_price="50 USD/h", h200_lambda="9 req/s", **extra):
    plan = copy.deepcopy(BASE_PLAN)
    plan["gpu"] = "h100"
    plan["candidates"] = {
        "gpus": ["h100", "h200"], "tp": [1, 2],
        "offers": [{"name": "p5", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"},
                   {"name": "p5e", "gpu": "h200", "gpus_per_node": 8, "node_hourly_cost": h200_price}],
        "exclude": [{"gpu": "h200", "tp": 2}],
        "overrides": [{"match": {"gpu": "h100", "tp": 2}, "set": {"instance_max_rate": "15 req/s"}},
                      {"match": {"gpu": "h200"}, "set": {"instance_max_rate": h200_lambda}}],
        **extra}
    return plan


def ranking_of(write_plan, plan):
    _, evaluations = evaluate_plan(write_plan(plan))
    return evaluations, ranked.rank(evaluations, batch.evaluate(evaluations), draws=50)


def test_three_candidates_ranked_by_hand(write_plan):
    _, r = ranking_of(write_plan, three())
    ev = r.evaluated
    labels = [ev.candidates[i].label for i in r.order]
    assert labels == ["h100-sxm5-80gb TP2", "h200-sxm-141gb TP1", "h100-sxm5-80gb TP1"]
    by = {c.label: i for i, c in enumerate(ev.candidates)}
    expected = {"h100-sxm5-80gb TP1": (4, 22, 23, 3, 87_840), "h100-sxm5-80gb TP2": (15, 6, 7, 2, 58_560),
                "h200-sxm-141gb TP1": (9, 10, 11, 2, 73_200)}
    for label, (lam, active, resilient, nodes, monthly) in expected.items():
        i = by[label]
        assert r.value("instance_max_rate", i) == pytest.approx(lam)
        assert r.value("active_replicas", i) == active
        assert r.value("resilient_replicas", i) == resilient
        assert r.value("deployments.nodes", i) == nodes
        assert r.value(ranked.MONTH, i) == pytest.approx(monthly)
    assert ev.tags[by["h100-sxm5-80gb TP1"]] == "measured"
    assert ev.tags[by["h200-sxm-141gb TP1"]] == "given"
    assert r.gap == pytest.approx(0.25)
    assert r.flips.runner_price * 3600 == pytest.approx(40.0)
    assert r.flips.winner_price * 3600 == pytest.approx(50.0)
    assert r.flips.runner_lambda == pytest.approx(60 / (7 * 0.7))
    sentence = candidatesview.sentence(r)
    assert sentence.startswith("Recommended: 2 × p5 (h100-sxm5-80gb TP2), $58,560.00 a month (given λ*); "
                               "runner-up h200-sxm-141gb TP1 on p5e at +25.0 %")
    assert "swaps if its price falls below $40.00/h or if its measured λ* reaches 12.2 req/s" in sentence


@pytest.mark.parametrize("price, winner", [("39.99 USD/h", "h200-sxm-141gb TP1"), ("40.01 USD/h", "h100-sxm5-80gb TP2")])
def test_the_flip_price_one_cent_on_each_side(write_plan, price, winner):
    _, r = ranking_of(write_plan, three(h200_price=price))
    assert r.evaluated.candidates[r.winner].label == winner


@pytest.mark.parametrize("lam, winner", [("12.25 req/s", "h200-sxm-141gb TP1"), ("12.2 req/s", "h100-sxm5-80gb TP2")])
def test_the_flip_lambda_on_each_side(write_plan, lam, winner):
    _, r = ranking_of(write_plan, three(h200_lambda=lam))
    assert r.evaluated.candidates[r.winner].label == winner


def test_a_replica_larger_than_the_offers_node_is_listed_with_its_reason(write_plan):
    plan = three()
    plan["candidates"]["tp"] = [1, 8]
    plan["candidates"]["offers"][1]["gpus_per_node"] = 4
    _, r = ranking_of(write_plan, plan)
    ev = r.evaluated
    i = next(i for i, c in enumerate(ev.candidates) if c.label == "h200-sxm-141gb TP1")
    assert not ev.reasons[i]
    j = next(i for i, c in enumerate(ev.candidates) if c.label == "h100-sxm5-80gb TP8")
    assert not ev.reasons[j]
    plan["candidates"]["exclude"] = []
    _, r = ranking_of(write_plan, plan)
    ev = r.evaluated
    k = next(i for i, c in enumerate(ev.candidates) if c.label == "h200-sxm-141gb TP8")
    assert ev.reasons[k] == "a replica of 8 GPUs does not fit a node of 4 GPUs (max_nodes_per_replica)"
    assert k in r.order and k not in r.feasible


def test_weights_that_do_not_fit_are_listed_with_their_reason():
    _, evaluations = evaluate_plan(REFERENCE)
    ev = batch.evaluate(evaluations)
    i = next(i for i, c in enumerate(ev.candidates) if c.label == "h100-sxm5-80gb TP1 bf16")
    assert ev.reasons[i] == "the weights do not fit: 131.4 GiB of weights in 71.68 GiB usable on 1 GPU(s)"


def test_a_transferred_lambda_is_the_measured_one_times_the_bandwidth_ratio():
    """B200 TP1 against the measured A100-40GB TP8 (decode-bound): a step reads the same bytes
    (one KV head per GPU at TP8 is eight at TP1), so the ratio is 7,700 GB/s × 1 / (1,555 × 8)."""
    _, evaluations = evaluate_plan(REFERENCE)
    ev = batch.evaluate(evaluations)
    i = next(i for i, c in enumerate(ev.candidates) if c.label == "b200-hgx TP1 bf16")
    ratio = 7700 / (1555 * 8)
    assert ev.tags[i] == "transferred"
    assert ev.values["instance_max_rate"][i, 0] == pytest.approx(4 * ratio, rel=1e-11)      # settled to 12 digits
    assert ev.basis[i].startswith(f"{ratio:.3g} × 4 req/s measured on a100-sxm4-40gb TP8 bf16 (decode-bound")
    assert ev.band[i] == pytest.approx(transfer.TRANSFER_BAND)
    assert ev.tags[ev.reference] == "measured"


def test_the_reference_plan_recommends_and_shows_every_tag_next_to_its_cost():
    plan, evaluations = evaluate_plan(REFERENCE)
    r = ranked.rank(evaluations, batch.evaluate(evaluations), draws=200)
    view = CandidatesView(r, evaluations)
    assert view.sentence.startswith("Recommended: ")
    options = view.options()
    assert options and options[0].monthly_cost.startswith("$") and "λ*" in options[0].note
    estimated = "estimated by aiconfigurator"
    assert {row.tag for row in view.rows} == {"measured", "transferred", estimated}
    assert sum(row.tag == estimated for row in view.rows) == 9      # H100, H200, B200 × TP2/4/8, BF16
    assert 0 <= r.stays <= 1
    doc = view.as_json()
    assert len(doc["candidates"]) == len(plan.candidates) and doc["winner"] == doc["ranking"][0]
    assert view.benchmarks and "vllm bench serve" in view.benchmarks[0]["bench"]


BAD = {
    "key": ({"gpu": ["h100"]}, "candidates.gpu", "unknown key 'gpu'"),
    "gpu": ({"gpus": ["h1000"]}, "candidates.gpus", "unknown gpu 'h1000'"),
    "tp": ({"tp": [0]}, "candidates.tp", "GPUs per replica must be a whole number of at least 1"),
    "weights": ({"weights": ["int3"]}, "candidates.weights", "no checkpoint format 'int3'", {"model": "llama-3.3-70b"}),
    "no formats": ({"weights": ["bf16"]}, "candidates.weights", "lists no checkpoint formats"),
    "kv": ({"kv_cache_dtype": ["fp4"]}, "candidates.kv_cache_dtype", "unknown KV-cache dtype 'fp4'"),
    "offer key": ({"offers": [{"name": "x", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "1 USD/h",
                               "price": 3}]}, "candidates.offers", "unknown key 'price'"),
    "offer missing": ({"offers": [{"name": "x", "gpu": "h100", "gpus_per_node": 8}]}, "candidates.offers",
                      "missing 'node_hourly_cost:'"),
    "offer twice": ({"offers": [{"name": "x", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "1 USD/h"}] * 2},
                    "candidates.offers", "two offers are named 'x'"),
    "offer gpu": ({"offers": [{"name": "x", "gpu": "nope", "gpus_per_node": 8, "node_hourly_cost": "1 USD/h"}]},
                  "candidates.offers", "unknown gpu 'nope'"),
    "offer price": ({"offers": [{"name": "x", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "-1 USD/h"}]},
                    "candidates.offers", "node_hourly_cost"),
    "offer date": ({"offers": [{"name": "x", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "1 USD/h",
                                "as_of": "soon"}]}, "candidates.offers", "as_of must be a date"),
    "offer row": ({"offers": ["x"]}, "candidates.offers", "an offer is a mapping"),
    "no offers": ({"offers": None}, "candidates", "missing 'offers:'"),
    "empty": ({"tp": []}, "candidates.tp", "an empty list"),
    "exclude": ({"exclude": {"gpu": "h100"}}, "candidates.exclude", "expected a list of mappings"),
    "exclude item": ({"exclude": ["h100"]}, "candidates.exclude", "expected a mapping of candidate keys"),
    "exclude key": ({"exclude": [{"gpus": "h100"}]}, "candidates.exclude", "unknown key 'gpus'"),
    "exclude gpu": ({"exclude": [{"gpu": "zz"}]}, "candidates.exclude", "unknown gpu 'zz'"),
    "exclude all": ({"exclude": [{"tp": 1}, {"tp": 2}]}, "candidates", "no candidate is left"),
    "overrides": ({"overrides": {"set": {}}}, "candidates.overrides", "expected a list of"),
    "override item": ({"overrides": [{"match": {}}]}, "candidates.overrides", "an override is"),
    "override key": ({"overrides": [{"when": {}, "set": {}}]}, "candidates.overrides[0].when", "unknown key 'when'"),
    "override pin": ({"overrides": [{"set": {"active_replicas": 3}}]}, "candidates.overrides",
                     "a candidate may pin only instance_max_rate"),
    "section": ("h100", "candidates", "expected a mapping"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_candidates_entry_is_one_message_naming_file_and_key(write_plan, case):
    change, key, words, *top = BAD[case]
    plan = three()
    plan.update(*top)
    if isinstance(change, dict):
        plan["candidates"].update(change)
        plan["candidates"] = {k: v for k, v in plan["candidates"].items() if v is not None}
    else:
        plan["candidates"] = change
    path = write_plan(plan)
    with pytest.raises(CapplanError) as err:
        load_plan(path)
    assert words in err.value.message
    assert err.value.key.startswith(key) and err.value.file.endswith("test-plan.yaml")


def test_candidates_need_a_sweep_plan(write_plan):
    plan = three()
    plan["sizing"] = "littles_law"
    plan["inputs"]["decode_throughput"] = "2000 token/s"
    del plan["tables"]["load_sweep"]
    with pytest.raises(CapplanError, match="sizing: littles_law does not have"):
        load_plan(write_plan(plan))


def test_diff_names_a_change_of_winner(write_plan, run_main):
    old = write_plan(three(), "old")
    new = write_plan(three(h200_price="39.99 USD/h"), "new")
    code, out, _ = run_main("diff", old, new)
    assert code == 0
    assert "Recommended candidate h100-sxm5-80gb TP2 on p5 → h200-sxm-141gb TP1 on p5e" in out
    code, out, _ = run_main("diff", old, old)
    assert "Recommended candidate" not in out


def test_gpus_all_expands_over_the_catalog_and_names_the_gpus_no_offer_rents(write_plan):
    from capplan.loading import catalog

    plan = three()
    plan["candidates"]["gpus"] = "all"
    loaded = load_plan(write_plan(plan))
    assert {c.gpu.id for c in loaded.candidates.candidates} == {"h100-sxm5-80gb", "h200-sxm-141gb"}
    assert set(loaded.candidates.unpriced) == set(catalog.ids("gpu")) - {"h100-sxm5-80gb", "h200-sxm-141gb"}


def test_the_catalog_lists_each_models_checkpoints_with_their_sources(run_main):
    code, out, _ = run_main("catalog", "models", "llama-3.3")
    assert code == 0
    assert out.splitlines()[0].split()[-1] == "checkpoints" and "bf16, fp8" in out.splitlines()[1]
    assert "weights fp8 (RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic, 1.0298 B/param): vLLM on an H100" in out
    code, out, _ = run_main("catalog", "models", "llama-3.3", "--json")
    assert '"bytes_per_param": 1.0298' in out


def test_the_peak_flip_is_where_the_fleets_steps_cross(write_plan):
    """h100 TP2 (λ_safe 10.5, 4 replicas a node, $29,280 a node-month) against h200 TP1 (λ_safe 6.3, 8 a
    node, $36,600). Below: at a peak of 44.1 (7 × 6.3) the h200's 7 + 1 replicas fit one node, $36,600,
    while the h100 TP2 needs ceil(44.1 / 10.5) + 1 = 6 replicas, 2 nodes, $58,560. Above: past 73.5
    (7 × 10.5) the h100 TP2 needs 8 + 1 replicas, 3 nodes, $87,840, the h200 ceil(73.5 / 6.3) + 1 = 13,
    still 2 nodes, $73,200."""
    _, r = ranking_of(write_plan, three())
    h200 = next(i for i, c in enumerate(r.evaluated.candidates) if c.label == "h200-sxm-141gb TP1")
    assert r.flips.peak_below.at == pytest.approx(44.1) and r.flips.peak_below.by == h200
    assert r.flips.peak_above.at == pytest.approx(73.5) and r.flips.peak_above.by == h200
    assert r.flips.peak_above.until > r.flips.peak_above.at and r.flips.peak_below.until < 44.1
    for peak, winner in (("44.1 req/s", "h200-sxm-141gb TP1"), ("44.2 req/s", "h100-sxm5-80gb TP2"),
                         ("73.5 req/s", "h100-sxm5-80gb TP2"), ("73.6 req/s", "h200-sxm-141gb TP1")):
        plan = three()
        plan["inputs"]["peak_arrival_rate"] = peak
        _, moved = ranking_of(write_plan, plan)
        assert moved.evaluated.candidates[moved.winner].label == winner, peak


def test_without_a_measured_candidate_every_lambda_is_estimated_with_its_band(write_plan):
    plan = three()
    plan["candidates"].update(gpus=["h200"], tp=[1], overrides=[], exclude=[])
    evaluations, r = ranking_of(write_plan, plan)
    ev = r.evaluated
    assert ev.tags == ["estimated"] and ev.reference is None
    band = float(catalog.lookup("engine", "vllm").values["estimate_band"]["value"])
    assert ev.band[0] == band and ev.values["instance_max_rate"][0, 0] > 0       # vLLM's estimate_band (engines.yaml)
    assert ev.basis[0].startswith("the mixed-batch roofline and Little's law at the engine's step factor (")
    assert ev.basis[0].endswith(f"predicted: ±{100 * band:.0f} % on the calibration points)")
    view = CandidatesView(r, evaluations)
    assert view.rests_on[0].endswith("its latencies are predicted means, not percentiles")


def test_p_winner_stays_draws_the_plans_uncertain_inputs_too(write_plan):
    plan = three()
    plan["inputs"]["peak_arrival_rate"] = {"value": "60 req/s", "range": "40 to 80 req/s"}
    _, r = ranking_of(write_plan, plan)
    assert r.draws == 50
    assert 0 < r.stays < 1        # the peak moves the fleets' whole-node steps (44.1 and 73.5 req/s)


def ranged_peak(write_plan):
    """The three candidates with the peak drawn too: the plan's evaluations and its candidates."""
    plan = three()
    plan["inputs"]["peak_arrival_rate"] = {"value": "60 req/s", "range": "40 to 80 req/s"}
    _, evaluations = evaluate_plan(write_plan(plan))
    return evaluations, batch.evaluate(evaluations)


def test_p_winner_stays_makes_every_draw_asked(write_plan):
    """70,000 draws of 3 contenders are 210,000 rows: all are drawn (they are evaluated in chunks)."""
    evaluations, evaluated = ranged_peak(write_plan)
    r = ranked.rank(evaluations, evaluated, draws=70_000)
    assert r.draws == 70_000
    assert 0 < r.stays < 1


def test_p_winner_stays_is_the_same_in_chunks_of_any_size(write_plan, monkeypatch):
    """Chunks draw the same random numbers in the same order: 7 rows a chunk (2 draws of the 3
    contenders, the last chunk shorter) give the one-chunk result."""
    evaluations, evaluated = ranged_peak(write_plan)
    whole = ranked.rank(evaluations, evaluated, draws=301)
    monkeypatch.setattr(ranked, "CHUNK_ROWS", 7)
    chunked = ranked.rank(evaluations, evaluated, draws=301)
    assert (chunked.stays, chunked.draws) == (whole.stays, whole.draws)
    assert 0 < whole.stays < 1


def test_the_drawn_cost_is_the_whole_batchs_to_the_last_bit(write_plan):
    """The cost of each contender-draw, evaluated from only what λ* and the drawn inputs move (the
    rest once per candidate), equals the monthly cost of every candidate's whole graph in one batch."""
    evaluations, evaluated = ranged_peak(write_plan)
    e, cands = evaluations[0], evaluated.candidates
    draws, n = 40, len(cands)
    rng = np.random.default_rng(7)
    lam = rng.uniform(1, 20, draws * n)
    peak = {"peak_arrival_rate": np.repeat(rng.uniform(40, 80, draws), n).reshape((-1, 1))}
    out, *_ = batch.run_candidates(e, cands, lam, np.zeros(draws * n), None, tile=draws, drawn=peak)
    whole = np.broadcast_to(out[ranked.MONTH], (draws * n, 1))
    drawn = batch.drawn_values(e, cands, np.zeros(n), ranked.MONTH, ("instance_max_rate", "peak_arrival_rate"))
    fast = drawn(draws, {"instance_max_rate": lam.reshape((-1, 1)), **peak})
    assert np.array_equal(np.broadcast_to(fast, (draws * n, 1)), whole)


def test_what_it_would_take_rho_and_tp(write_plan):
    """The runner-up h200 TP1 wins once its one node's 7 active replicas carry the peak: at λ* 9,
    ρ ≥ 60 / (7 × 9) = 0.952; an infeasible TP8 on a 4-GPU node is told which TP fits."""
    evaluations, r = ranking_of(write_plan, three())
    assert r.flips.runner_rho == pytest.approx(60 / (7 * 9))
    plan = three()
    plan["candidates"].update(tp=[1, 8], exclude=[])
    plan["candidates"]["offers"][1]["gpus_per_node"] = 4
    evaluations, r = ranking_of(write_plan, plan)
    view = CandidatesView(r, evaluations)
    assert any(line.startswith("h200-sxm-141gb TP8 on p5e: a replica of 8 GPUs does not fit") for line in view.near_misses)
    plan["candidates"]["tp"] = [1, 2]
    plan["model"] = "llama-3.3-70b"
    plan["inputs"]["gpus_per_replica"] = "2 GPU"
    plan["candidates"]["weights"] = ["bf16"]
    evaluations, r = ranking_of(write_plan, plan)
    view = CandidatesView(r, evaluations)
    line = next(x for x in view.near_misses if x.startswith("h100-sxm5-80gb TP1 on p5"))
    assert line.startswith("h100-sxm5-80gb TP1 on p5: the weights do not fit") and line.endswith("; TP2 fits (rank 1)")


def test_a_candidate_that_breaks_in_a_scenario_is_worded_as_a_deployment_row_is(tmp_path):
    """The first screen's Holds column counts the scenarios a candidate's fleet breaks in
    in plain words ('✗ breaks in 1 of its 2 scenarios'; issue #41) and the note names them."""
    shutil.copytree(ROOT / "plans", tmp_path / "plans")
    path = tmp_path / "plans" / REFERENCE.name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["scenarios"] = {"surge_x4": {"title": "Four times the peak", "set": {"peak_arrival_rate": "80 req/s"}}}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    _, evaluations = evaluate_plan(path)
    ranking = ranked.rank(evaluations, batch.evaluate(evaluations), draws=50)
    broken = [o for o in CandidatesView(ranking, evaluations).options() if o.holds.startswith("✗")]
    assert broken, "no candidate's nominal fleet breaks at four times the peak"
    for option in broken:
        assert option.holds == "✗ breaks in 1 of its 2 scenarios" and option.note.endswith(", breaks in surge_x4")


def test_a_free_offer_wins_and_the_others_are_priced_in_dollars(write_plan, run_main):
    """Owned hardware whose cost is sunk is priced at 0 USD/h: it ranks first, and the outputs
    say what the others cost more in dollars (a share of $0 is no number); issue 37, item 4."""
    plan = three()
    plan["candidates"]["offers"][0]["node_hourly_cost"] = "0 USD/h"
    _, r = ranking_of(write_plan, plan)
    ev = r.evaluated
    # both H100 candidates cost $0: the one that ties up fewer GPUs (TP2, 2 nodes) wins over TP1's 3
    assert [ev.candidates[i].label for i in r.order[:2]] == ["h100-sxm5-80gb TP2", "h100-sxm5-80gb TP1"]
    assert r.value(ranked.MONTH, r.winner) == 0 and r.gap is None
    text = candidatesview.sentence(r)
    assert ("runner-up h100-sxm5-80gb TP1 on p5 (measured λ*) ties on cost, behind it by the ranking's order "
            "($ per 1M output tokens, then GPUs rented, then name)") in text
    assert r.flips.runner_price is None           # one offer's price moves both: it cannot swap them
    code, out, err = run_main("build", write_plan(plan))
    assert code == 0, err
    record = (write_plan(plan).parents[1] / "out" / "test-plan.md").read_text()
    assert "h200-sxm-141gb TP1 on p5e: +$73,200.00 a month; no price wins: the winner is free" in record


@pytest.mark.parametrize("ratio, band, inside", [
    (0.04, 0.75, False), (0.32, 0.75, True), (1.8, 0.75, False), (1.75, 0.75, True),
    (0.6, 0.35, False), (1.4, 0.35, False), (1.3, 0.35, True)])
def test_a_band_is_checked_on_both_sides(ratio, band, inside):
    """'The transfer lies inside the tool's band for 12 of 12' counted only the low side (issue 39)."""
    from capplan.rendering.candidates import within_band

    assert within_band(ratio, band) is inside


def test_the_peak_flip_names_the_candidate_that_is_cheapest_over_an_interval():
    """Issue 41: "above 22.9 req/s b200 TP1 fp8 becomes the cheapest" held only between 22.899 and
    22.900 req/s (the runner-up against the winner alone); past 22.9 the H200 needs a second node and
    b200 TP2 bf16 is the cheapest of all, one node, up to 31.06 req/s."""
    _, evaluations = evaluate_plan(REFERENCE)
    r = ranked.rank(evaluations, batch.evaluate(evaluations), draws=20)
    above = r.flips.peak_above
    assert r.evaluated.candidates[above.by].label == "b200-hgx TP2 bf16"
    assert above.at == pytest.approx(22.9, abs=0.001) and above.until == pytest.approx(31.06, abs=0.01)
    assert above.until - above.at >= ranked.ROBUST * r.value("peak_arrival_rate", r.winner)
    text = "\n".join(CandidatesView(r, evaluations).flips)
    assert "b200-hgx TP2 bf16 on spheron-8x-b200 is the cheapest for a peak above 22.9 and up to 31.06 req/s" in text


def test_an_fp8_candidate_computes_at_the_gpus_fp8_rate():
    """The candidate batch gives each candidate its format's width (in the model's base unit): an FP8
    checkpoint on an H100 prefills at 1,979 TFLOP/s, BF16 at 989 (the same FLOPs); the width was once
    given in bits where the model counts bytes, and every FP8 candidate computed at the BF16 rate."""
    _, evaluations = evaluate_plan(REFERENCE)
    ev = batch.evaluate(evaluations)
    by = {c.label: i for i, c in enumerate(ev.candidates)}
    overhead = evaluations[0].values["prefill_overhead"]
    fp8, bf16 = (ev.values["ttft_bound"][by[f"h100-sxm5-80gb TP2 {w}"], 0] - overhead for w in ("fp8", "bf16"))
    assert bf16 / fp8 == pytest.approx(1979 / 989, rel=1e-9)
