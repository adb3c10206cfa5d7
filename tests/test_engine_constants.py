"""The engine a plan serves with is an input: ``engine:`` picks the estimate's calibrated constants
(model/catalog/engines.yaml), a plan's own measurement overrides them, and the prediction names
the engine it is for."""

from __future__ import annotations

import pytest
import yaml
from test_candidates import ranking_of, three

from capplan.loading import catalog
from capplan.rendering.candidates import CandidatesView
from capplan.resources import model_dir

ENGINES = yaml.safe_load((model_dir() / "catalog" / "engines.yaml").read_text(encoding="utf-8"))


def estimated(write_plan, engine=None, **inputs):
    """The one-candidate plan whose λ* is the built-in estimate (no measured candidate), serving with ``engine``."""
    plan = three()
    plan["candidates"].update(gpus=["h200"], tp=[1], overrides=[], exclude=[])
    if engine is not None:
        plan["engine"] = engine
    plan["inputs"].update(inputs)
    return ranking_of(write_plan, plan)


def _constant(engine: str, name: str) -> float:
    return float(ENGINES[engine]["values"][name]["value"])


@pytest.mark.parametrize("engine", ["vllm", "trt-llm", "sglang"])
def test_the_engine_picks_its_constants(write_plan, engine):
    evaluations, r = estimated(write_plan, engine)
    given = evaluations[0].scenario.inputs
    assert given["engine_step_factor"].value == _constant(engine, "engine_step_factor")
    assert r.evaluated.band[0] == _constant(engine, "estimate_band")
    name = ENGINES[engine]["name"]
    assert given["engine_step_factor"].source.startswith(f"{name} (engine: {engine}): ")


def test_trt_llm_predicts_more_than_vllm_by_its_smaller_step_factor(write_plan):
    """The same candidate at f 0.8 instead of 1.3: a shorter step, a higher λ̂*."""
    _, vllm = estimated(write_plan, "vllm")
    _, trt = estimated(write_plan, {"name": "TensorRT-LLM"})
    assert trt.value("instance_max_rate", 0) > vllm.value("instance_max_rate", 0)


def test_a_plan_without_engine_serves_with_vllm_and_says_so(write_plan):
    evaluations, r = estimated(write_plan)
    assert evaluations[0].scenario.inputs["engine_step_factor"].value == _constant("vllm", "engine_step_factor")
    assert r.evaluated.tag_text(0) == "estimated for vLLM"
    assert evaluations[0].scenario.inputs["estimate_band"].source.startswith(
        "vLLM (capplan's default engine; name yours with engine:): ")


def test_sglang_rests_on_vllms_constants_as_an_assumption(write_plan):
    evaluations, r = estimated(write_plan, "sglang")
    factor = evaluations[0].scenario.inputs["engine_step_factor"]
    assert ENGINES["sglang"]["values"] == {
        n: {**v, "tag": "assumption", "source": ENGINES["sglang"]["values"][n]["source"]}
        for n, v in ENGINES["vllm"]["values"].items()}
    assert factor.tag == "assumption" and "no SGLang point" in factor.source
    assert r.evaluated.tag_text(0) == "estimated for SGLang"


def test_the_plans_own_measurement_wins_over_the_engines(write_plan):
    measured = {"value": 1.1, "source": "capplan validate on our H200 (2026-11-30)"}
    evaluations, r = estimated(write_plan, "trt-llm", engine_step_factor=measured)
    factor = evaluations[0].scenario.inputs["engine_step_factor"]
    assert factor.value == 1.1 and factor.source == measured["source"] and factor.tag == "measurement"
    assert r.evaluated.band[0] == _constant("trt-llm", "estimate_band")


def test_the_table_and_the_first_screen_say_which_engine_a_prediction_is_for(write_plan):
    evaluations, r = estimated(write_plan, "trt-llm")
    view = CandidatesView(r, evaluations)
    band = round(100 * _constant("trt-llm", "estimate_band"))
    assert view.rows[0].tag == "estimated for TensorRT-LLM"
    assert view.options()[0].note.startswith(f"estimated for TensorRT-LLM λ* ")
    assert view.options()[0].note.endswith(f" ±{band} %")


@pytest.mark.parametrize("engine,message", [
    ("vlm", "engine: unknown engine 'vlm'; did you mean vllm? (engines capplan has constants for: sglang, "
            "trt-llm, vllm; model/catalog/engines.yaml)"),
    ({"name": "tensorrt"}, "engine.name: unknown engine 'tensorrt'; did you mean trt-llm?"),
    (["vllm"], "engine: expected an engine name (sglang, trt-llm, vllm) or a mapping such as "
               "{name: vllm, version: \"0.21\"}, got a list"),
], ids=["name", "mapping", "list"])
def test_an_unknown_engine_is_one_located_message(write_plan, run_main, engine, message):
    plan = three()
    plan["candidates"].update(gpus=["h200"], tp=[1], overrides=[], exclude=[])
    plan["engine"] = engine
    code, _, err = run_main("eval", write_plan(plan))
    assert code == 1 and "Traceback" not in err
    assert message in err, err


def test_validate_predicts_with_the_plans_engine(base_plan, write_plan):
    """A plan without candidates names its engine for ``capplan validate``: the step factor is the engine's."""
    from capplan.analysis import validation
    from capplan.analysis.pipeline import evaluate_plan
    base_plan["engine"] = "trt-llm"
    _, evaluations = evaluate_plan(write_plan(base_plan))
    assert validation.input_value(evaluations[0], "engine_step_factor") == _constant("trt-llm", "engine_step_factor")


def test_every_engine_gives_the_estimates_constants_with_a_source():
    for engine in catalog.ids("engine"):
        values = catalog.lookup("engine", engine).values
        assert set(values) == {"engine_step_factor", "estimate_band"}, engine
        assert all(v["source"] for v in values.values()), engine
