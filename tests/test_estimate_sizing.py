"""``sizing: estimate`` (issue 39): a plan with candidates sizes from the model's throughput estimate, with
no measurement at all. The plan's own λ* is ``estimated_max_rate`` (the estimate group's mixed-batch
roofline), tagged as an estimate: λ_safe, replicas, cost, the candidates' ranking (every candidate
estimated) and the record follow, and the record says it is no measurement."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from test_candidates import three
from test_estimate import ANSWER, L8, _plan, _tool
from test_memory_engine import assert_workbook_recalculates

from capplan.analysis import candidates as batch
from capplan.analysis import ranking as ranked
from capplan.analysis.pipeline import evaluate_plan, load_plan
from capplan.errors import CapplanError
from capplan.loading import catalog


VLLM_BAND = float(catalog.lookup("engine", "vllm").values["estimate_band"]["value"])    # engines.yaml


def estimated(**changes):
    """The three-candidate plan with no sweep and no given λ*: every λ* is the model's estimate."""
    plan = three()
    plan["sizing"] = "estimate"
    del plan["tables"]["load_sweep"]
    plan["candidates"].update(overrides=[], exclude=[])
    plan.update(changes)
    return plan


def test_the_plans_lambda_is_the_estimate_formula_by_hand(write_plan):
    """λ* = min(λ_T, λ_KV) of the estimate group, from its building blocks: R_0 the weights' read time,
    a the step's growth per req/s, T the step target, C the KV pool's requests, n_dec the decode steps."""
    _, evaluations = evaluate_plan(write_plan(estimated()))
    e = evaluations[0]
    v = {n: float(e.values[n]) for n in ("weight_memory", "hbm_bandwidth", "gpus_per_replica", "hbm_efficiency",
                                         "estimate_step_growth", "estimate_step_target", "engine_step_factor",
                                         "estimate_kv_concurrency", "avg_output_tokens", "instance_max_rate",
                                         "rho_target", "safe_rate_per_replica", "peak_arrival_rate",
                                         "active_replicas")}
    r0 = v["weight_memory"] / (v["hbm_bandwidth"] * v["gpus_per_replica"] * v["hbm_efficiency"])
    a, t, f, c, n = (v["estimate_step_growth"], v["estimate_step_target"], v["engine_step_factor"],
                     v["estimate_kv_concurrency"], v["avg_output_tokens"])
    slo_rate = (t - f * r0) / (f * t * a)
    kv_rate = c / (f * (n * r0 + c * a))
    assert v["instance_max_rate"] == pytest.approx(min(slo_rate, kv_rate), rel=1e-12)
    assert v["safe_rate_per_replica"] == pytest.approx(v["instance_max_rate"] * v["rho_target"], rel=1e-12)
    assert v["active_replicas"] == -(-v["peak_arrival_rate"] // v["safe_rate_per_replica"])


def test_every_candidate_is_estimated_and_the_plans_own_has_the_plans_lambda(write_plan):
    _, evaluations = evaluate_plan(write_plan(estimated()))
    r = ranked.rank(evaluations, batch.evaluate(evaluations), draws=50)
    ev = r.evaluated
    assert ev.tags == ["estimated"] * 4 and ev.reference is None and (ev.band == VLLM_BAND).all()   # vLLM's held-out band
    own = next(i for i, c in enumerate(ev.candidates) if c.label == "h100-sxm5-80gb TP1")
    assert ev.values["instance_max_rate"][own, 0] == pytest.approx(float(evaluations[0].values["instance_max_rate"]))
    assert ev.feasible.all()


def test_the_rankings_draws_move_every_estimated_lambda_in_its_band(write_plan):
    """The ranking draws every estimated λ* in its band (lognormal, the band its 90 % interval). On
    one-GPU nodes each replica moves the cost (the h100 TP1 winner, λ* 70.4, needs a third active replica
    below 60 / (2 × 0.7) = 42.9 req/s; the others fewer replicas when theirs is drawn high), so the
    winner does not stay in every draw."""
    plan = estimated()
    for offer in plan["candidates"]["offers"]:
        offer["gpus_per_node"] = 1
    _, evaluations = evaluate_plan(write_plan(plan))
    r = ranked.rank(evaluations, batch.evaluate(evaluations), draws=200)
    assert r.evaluated.candidates[r.winner].label == "h100-sxm5-80gb TP1"
    assert 0 < r.stays < 1


def test_the_record_says_lambda_is_estimated_on_its_first_screen(write_plan, run_main, tmp_path):
    write_plan(estimated())
    code, _, err = run_main("build")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    first = record.split("\n## ")[0]
    assert ("λ\\* is estimated, not measured: the plan sizes from the model's throughput estimate for vLLM "
            f"(±{100 * VLLM_BAND:.0f} %") in first
    baseline = record[record.index("\n## Baseline"):record.index("\n## 1. ")]       # the plan's own, after the candidates
    assert "| from the throughput estimate (lambda\\* of the mixed-batch roofline, estimated, not measured" in baseline
    assert "- `instance_max_rate` = " in first                # first of the pending measurements
    assert "rests on the throughput estimate: instance_max_rate (λ* estimated, not measured)" in record


@pytest.mark.skipif(__import__("recalc").soffice() is None, reason=__import__("recalc").SKIP_REASON)
def test_the_workbook_recalculates_the_estimate(write_plan, tmp_path):
    nominal = assert_workbook_recalculates(write_plan(estimated()), tmp_path,
                                           {"instance_max_rate", "estimated_max_rate", "safe_rate_per_replica"})
    assert nominal.display("instance_max_rate") == nominal.display("estimated_max_rate")


def test_capplan_estimate_writes_the_files_of_an_estimated_plan(write_plan, run_main, tmp_path):
    tool = _tool(tmp_path, f"echo '{json.dumps(ANSWER)}'")
    path = write_plan(estimated(model="llama-3.1-8b"))
    code, out, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool)
    assert code == 0, err
    written = tmp_path / "plans" / "estimates" / "test-plan-h100-sxm5-80gb-tp1.estimate.yaml"
    assert f"wrote {written}; import it under candidates: evidence:" in out.splitlines()
    assert yaml.safe_load(written.read_text(encoding="utf-8"))["tensor_parallel_size"] == 1


def test_an_estimate_file_is_a_candidates_evidence_with_the_knee_a_sweep_import_finds(base_plan, write_plan,
                                                                                         tmp_path):
    """The file ``capplan estimate`` writes, imported under candidates: evidence: of a plan with no sweep,
    gives its candidate the λ* the same file gives as a load_sweep plan's own (the plan's SLO checks)."""
    plan = estimated(model="llama-3.1-8b")
    plan["candidates"]["evidence"] = [{"import": "est.estimate.yaml"}]
    path = write_plan(plan)
    shutil.copy(L8, path.parent / "est.estimate.yaml")
    _, evaluations = evaluate_plan(path)
    ev = batch.evaluate(evaluations)
    own = next(i for i, c in enumerate(ev.candidates) if c.label == "h100-sxm5-80gb TP1")
    assert ev.tag_text(own) == "estimated by aiconfigurator" and ev.band[own] == catalog.lookup("engine", "vllm").tool_bands["aiconfigurator"]["value"]
    swept = _plan(base_plan, write_plan, tmp_path)          # the same file as a load_sweep plan's sweep
    _, sweep_evaluations = evaluate_plan(swept)
    assert ev.values["instance_max_rate"][own, 0] == float(sweep_evaluations[0].values["instance_max_rate"])


@pytest.mark.parametrize("change, words, key", [
    (lambda p: p.pop("candidates"), "sizing: estimate takes λ* from the candidates' throughput estimate, "
                                    "and the plan has no candidates:", "sizing"),
    (lambda p: p["tables"].update(load_sweep={"rows": [{"arrival_rate": "2 req/s", "ttft_p95": "85 ms",
                                                        "tpot_p95": "12.1 ms", "e2e_p99": "1.82 s"}]}),
     "table 'load_sweep' is not part of a plan with sizing: estimate", "tables.load_sweep"),
    (lambda p: p["inputs"].pop("tpot_p95_slo"), "missing input 'tpot_p95_slo'", "inputs"),
], ids=["no candidates", "a sweep", "no tpot slo"])
def test_what_an_estimated_plan_needs_is_one_message(write_plan, change, words, key):
    plan = estimated()
    change(plan)
    with pytest.raises(CapplanError) as err:
        load_plan(write_plan(plan))
    assert words in err.value.message
    assert err.value.key.startswith(key) and err.value.file.endswith("test-plan.yaml")


def test_the_schema_asks_an_estimated_plan_for_its_candidates():
    from capplan.review import schema

    plan = estimated()
    assert schema.validate(plan) == []
    del plan["candidates"]
    assert schema.validate(plan) == ["(top): 'candidates' is a required property"]
