"""Every unknown key a plan reader refuses gets the nearest known key, from one helper
(:func:`capplan.names.nearest`): a key spelled out finds the short key it abbreviates
(``tensor_parallel`` -> ``tp``), which spelling alone does not (issue 37, item 18)."""

from __future__ import annotations

import pytest
from test_candidates import three

from capplan.analysis.pipeline import load_plan
from capplan.errors import CapplanError
from capplan.names import nearest


def _offer(plan, **extra):
    plan["candidates"]["offers"][0].update(extra)


def _traffic(plan, key):
    plan["traffic"] = {"profile": [1.0] * 24, key: "x"}


CASES = {
    "candidates": (lambda p: p["candidates"].update(tensor_parallel=[1, 2]), "candidates.tensor_parallel", "tp"),
    "candidates flag": (lambda p: p["candidates"].update(tp_size=[1, 2]), "candidates.tp_size", "tp"),
    "candidates plural": (lambda p: p["candidates"].update(offer=[]), "candidates.offer", "offers"),
    "offer": (lambda p: _offer(p, hourly_cost="1 USD/h"), "candidates.offers[0].hourly_cost", "node_hourly_cost"),
    "exclude": (lambda p: p["candidates"].update(exclude=[{"tensor_parallel": 1}]),
                "candidates.exclude[0].tensor_parallel", "tp"),
    "override": (lambda p: p["candidates"].update(overrides=[{"matches": {"tp": 1}, "set": {}}]),
                 "candidates.overrides[0].matches", "match"),
    "evidence": (lambda p: p["candidates"].update(evidence=[{"import": "x.json", "tensor_parallel": 2}]),
                 "candidates.evidence[0].tensor_parallel", "tp"),
    "traffic": (lambda p: _traffic(p, "sorce"), "traffic.sorce", "source"),
    "engine": (lambda p: p.update(engine={"name": "vllm", "versoin": "0.21"}), "engine.versoin", "version"),
    "plan": (lambda p: p.update(scenario={}), "scenario", "scenarios"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_unknown_key_is_refused_with_the_nearest(write_plan, case):
    change, key, suggested = CASES[case]
    plan = three()
    change(plan)
    with pytest.raises(CapplanError) as err:
        load_plan(write_plan(plan))
    assert err.value.key == key
    assert f"did you mean {suggested}" in err.value.message


def test_an_abbreviation_is_found_by_its_words_and_only_by_them():
    assert nearest("tensor_parallel", ("gpus", "tp", "weights")) == "; did you mean tp?"
    assert nearest("tensor_parallel_size", ("gpus", "tp")) == "; did you mean tp?"
    assert nearest("tp_size", ("gpus", "tp")) == "; did you mean tp?"
    assert nearest("total_price", ("gpus", "tp")) == "; did you mean tp?"     # the initials are all it has
    assert nearest("throughput", ("gpus", "tp")) == ""                           # one word: no initials
    assert nearest("pipeline", ("gpus", "tp")) == ""
