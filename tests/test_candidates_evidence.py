"""A candidate's λ* from ``candidates: evidence:`` files of its configuration, checked by hand.

The plan is the reference candidates plan (its own sweep: A100-40GB TP8, λ* 4 req/s; SLOs TTFT p95
1 s, TPOT p95 35 ms, E2E p99 30 s, goodput 0.99) cut to A100 and H100 at TP4 and TP8, BF16.

By hand from plans/estimates/llama-3.3-70b-sharegpt-h100-sxm5-80gb-tp4.estimate.yaml: its points
sorted by predicted rate are 0.311, 0.595, 1.197, 2.255, 4.342, 8.161, 14.502 req/s with TPOT
14.8-20.2 ms, then 17.683 req/s (concurrency 512, TPOT 56.6 ms > 35 ms: the first to miss), 22.271
(26.4 ms) and 25.602 (39.1 ms); TTFT stays under 242 ms and E2E under 12.2 s. So λ* is 14.5017
req/s, the last rate before the first miss. Tightened to TTFT 150 ms, the first miss is 14.502
(TTFT 158.5 ms) and λ* is 8.16056 req/s (the plan's own sweep, TTFT 64-127 ms, keeps its 4).
"""

from __future__ import annotations

import copy
import shutil

import pytest
import yaml
from conftest import ROOT
from shared_examples import VLLM_70B, example

from capplan.analysis import candidates as batch
from capplan.analysis import ranking as ranked
from capplan.analysis.pipeline import evaluate_plan
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.sweeps.files import read_sweep
from capplan.rendering.candidates import CandidatesView

REFERENCE = ROOT / "plans" / "llama3.3-70b-candidates.yaml"
ESTIMATES = ROOT / "plans" / "estimates"
H100_TP4 = "llama-3.3-70b-sharegpt-h100-sxm5-80gb-tp4.estimate.yaml"
H100_TP2 = "llama-3.3-70b-sharegpt-h100-sxm5-80gb-tp2.estimate.yaml"
H200_TP4 = "llama-3.3-70b-sharegpt-h200-sxm-141gb-tp4.estimate.yaml"
TOOL = "estimated by aiconfigurator"


def plan_with(evidence, tmp_path, files=(H100_TP4,), tps=(4, 8), **top):
    plan = yaml.safe_load(REFERENCE.read_text())
    plan["candidates"] = {**copy.deepcopy(plan["candidates"]), "gpus": ["a100-sxm4-40gb", "h100"], "tp": list(tps),
                          "weights": ["bf16"], "evidence": evidence}
    plan["candidates"].pop("exclude")
    plan.update(top)
    folder = tmp_path / "plans"
    (folder / "estimates").mkdir(parents=True, exist_ok=True)
    for name in files:
        shutil.copy(ESTIMATES / name, folder / "estimates" / name)
    path = folder / "evidence.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def evaluated(path):
    _, evaluations = evaluate_plan(path)
    return evaluations, batch.evaluate(evaluations)


def index(ev, label):
    return next(i for i, c in enumerate(ev.candidates) if c.label == label)


def test_a_candidate_is_estimated_from_its_estimate_file_by_hand(tmp_path):
    path = plan_with([{"import": f"estimates/{H100_TP4}"}], tmp_path,
                     scenarios={"tight": {"set": {"ttft_p95_slo": "150 ms"}}})
    evaluations, ev = evaluated(path)
    i = index(ev, "h100-sxm5-80gb TP4")
    assert ev.values["instance_max_rate"][i, 0] == pytest.approx(14.5017)
    assert ev.values["instance_max_rate"][i, 1] == pytest.approx(8.16056)      # the scenario's SLO, the same file
    assert ev.tags[i] == "estimated" and ev.tag_text(i) == TOOL
    assert ev.band[i] == catalog.lookup("engine", "vllm").tool_bands["aiconfigurator"]["value"]
    assert ev.values["deployments.cost_per_million_compliant_tokens"][i, 0] == 0   # no goodput is predicted
    digest = read_sweep(path.parent, [f"estimates/{H100_TP4}"])[0].sha256
    assert digest in ev.basis[i] and "not percentiles" in ev.basis[i]
    # the other candidates keep their provenance: the plan's sweep, a transfer
    assert ev.tags[index(ev, "a100-sxm4-40gb TP8")] == "measured"
    assert ev.tags[index(ev, "h100-sxm5-80gb TP8")] == "transferred"
    view = CandidatesView(ranked.rank(evaluations, ev, draws=20), evaluations)
    assert any(row.tag == TOOL for row in view.rows)
    assert any(H100_TP4 in line and digest in line for line in view.evidence)
    [compared] = view.comparison
    assert compared["candidate"] == "h100-sxm5-80gb TP4"
    assert compared["factor"] == pytest.approx(14.5017 / ev.transferred[i])
    doc = view.as_json()["candidates"][i]["lambda_star"]
    assert doc["shown"] == TOOL and doc["evidence"]["files"][0]["sha256"] == digest


def test_an_estimate_of_other_token_lengths_is_warned_of_beside_its_candidate(tmp_path):
    """Issue 37, item 6: the H100 TP4 estimate edited to 4,096-token prompts against the plan's mix of 213.3; the
    warning is the one a sweep gets, on the evidence line of the record and in the JSON (the other files match)."""
    path = plan_with([{"import": f"estimates/{H100_TP4}"}], tmp_path)
    copy = path.parent / "estimates" / H100_TP4
    copy.write_text(copy.read_text(encoding="utf-8").replace("isl: 213", "isl: 4096"), encoding="utf-8")
    evaluations, ev = evaluated(path)
    view = CandidatesView(ranked.rank(evaluations, ev, draws=20), evaluations)
    warning = ("⚠ Token mix: the estimate's requests averaged 4,096 prompt tokens against the plan's class mix 213 "
               "(+1,820%), more than ±25%: its latencies predict other requests than the plan's.")
    [line] = [text for text in view.evidence if H100_TP4 in text]
    assert line.endswith(warning), line
    doc = view.as_json()["candidates"][index(ev, "h100-sxm5-80gb TP4")]["lambda_star"]["evidence"]
    assert doc["note"] == warning
    path = plan_with([{"import": f"estimates/{H100_TP4}"}], tmp_path / "as-written")
    evaluations, ev = evaluated(path)
    view = CandidatesView(ranked.rank(evaluations, ev, draws=20), evaluations)
    assert not any("Token mix" in text for text in view.evidence)
    assert view.as_json()["candidates"][index(ev, "h100-sxm5-80gb TP4")]["lambda_star"]["evidence"]["note"] is None


def test_a_candidate_is_measured_from_a_matching_vllm_sweep(tmp_path):
    """The plan's own sweep files, named as the evidence of an H100 TP8 candidate (vLLM's files record the
    model but neither GPU nor TP, so the item gives them): the same rows, the same λ* as the plan's."""
    shared = example(*VLLM_70B)
    path = plan_with([{"import": ["sweeps/qps_*.json"], "gpu": "h100", "tp": 8}], tmp_path, files=(),
                     scenarios={"tight": {"set": {"e2e_p99_slo": "21.2 s"}}})
    plan = yaml.safe_load(path.read_text())
    plan["tables"]["load_sweep"] = {"import": ["sweeps/qps_0*.json", "sweeps/qps_16.json"]}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    (path.parent / "sweeps").mkdir()
    for name in ("qps_01.json", "qps_04.json", "qps_16.json"):
        shutil.copy(shared / name, path.parent / "sweeps" / name)
    evaluations, ev = evaluated(path)
    i = index(ev, "h100-sxm5-80gb TP8")
    assert ev.tags[i] == "measured" and ev.tag_text(i) == "measured"
    assert ev.values["instance_max_rate"][i, 0] == pytest.approx(4.0)    # 16 req/s misses the goodput SLO
    assert ev.band[i] == 0
    assert ev.values["deployments.cost_per_million_compliant_tokens"][i, 0] > 0   # goodput measured per request
    digests = {f.sha256 for f in read_sweep(path.parent, ["sweeps/qps_*.json"])}
    assert len(digests) == 3 and all(d in ev.basis[i] for d in digests)
    assert ev.tags[index(ev, "h100-sxm5-80gb TP4")] == "transferred"
    # a scenario's tighter E2E SLO recounts each file's goodput as it recounts the plan's own import
    own = evaluations[1].values
    assert ev.values["instance_max_rate"][i, 1] == pytest.approx(own["instance_max_rate"])
    assert ev.values["deployments.cost_per_million_compliant_tokens"][i, 1] == pytest.approx(
        ev.values["deployments.cost_per_million_tokens"][i, 1] / own["compliant_share"])
    assert own["compliant_share"] < evaluations[0].values["compliant_share"]


def _csv(path, rows="1,100,20,10,200\n2,120,30,12,380\n"):
    (path.parent / "sweep.csv").write_text("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n" + rows)


def test_a_benchmark_that_records_no_configuration_is_measured_where_the_item_says(tmp_path):
    """A CSV records nothing of its deployment: gpu and tp come from the item. No goodput SLO here,
    since a CSV keeps no per-request data; rows 1 and 2 req/s both hold, so λ* is 2."""
    path = plan_with([{"import": "sweep.csv", "gpu": "h100", "tp": 4}], tmp_path, files=())
    plan = yaml.safe_load(path.read_text())
    del plan["inputs"]["goodput_slo"]
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    _csv(path)
    _, ev = evaluated(path)
    i = index(ev, "h100-sxm5-80gb TP4")
    assert ev.tags[i] == "measured" and ev.values["instance_max_rate"][i, 0] == pytest.approx(2.0)


def refused(path) -> CapplanError:
    with pytest.raises(CapplanError) as info:
        evaluate_plan(path)
    return info.value


@pytest.mark.parametrize("item, files, where, words", [
    ({"import": f"estimates/{H100_TP4}", "gpu": "a100-sxm4-40gb"}, (H100_TP4,), "candidates.evidence[0].gpu",
     "records gpu h100-sxm5-80gb, which contradicts the gpu: a100-sxm4-40gb given here"),
    ({"import": f"estimates/{H100_TP4}", "tp": 8}, (H100_TP4,), "candidates.evidence[0].tp",
     "records tp 4, which contradicts the tp: 8 given here"),
    ({"import": f"estimates/{H100_TP4}", "weights": "fp8"}, (H100_TP4,), "candidates.evidence[0].weights",
     "records weights bf16, which contradicts the weights: fp8 given here"),
], ids=["gpu", "tp", "weights"])
def test_a_file_that_contradicts_its_item_is_refused(tmp_path, item, files, where, words):
    error = refused(plan_with([item], tmp_path, files=files))
    assert where in str(error) and words in error.message and H100_TP4 in error.message
    assert error.file.endswith("evidence.yaml") and error.line


def test_a_file_that_matches_no_candidate_is_refused(tmp_path):
    error = refused(plan_with([{"import": f"estimates/{H200_TP4}"}], tmp_path, files=(H200_TP4,)))
    assert "candidates.evidence[0].import" in str(error)
    assert f"estimates/{H200_TP4}: no candidate is h200-sxm-141gb TP4 with weights bf16" in error.message


def test_two_items_for_one_candidate_are_refused(tmp_path):
    error = refused(plan_with([{"import": f"estimates/{H100_TP4}"}] * 2, tmp_path))
    assert "candidates.evidence[1].import" in str(error) and "already has evidence" in error.message


def test_a_file_of_another_model_is_refused(tmp_path):
    path = plan_with([{"import": f"estimates/{H100_TP4}"}], tmp_path)
    text = (path.parent / "estimates" / H100_TP4).read_text().replace('model: "llama-3.3-70b"', 'model: "qwen3-32b"')
    (path.parent / "estimates" / H100_TP4).write_text(text)
    error = refused(path)
    assert "candidates.evidence[0].import" in str(error) and "model qwen3-32b, not the plan's llama-3.3-70b" in error.message


def test_one_item_is_one_configuration(tmp_path):
    error = refused(plan_with([{"import": "estimates/*.yaml"}], tmp_path, files=(H100_TP4, H100_TP2), tps=(2, 4)))
    assert "candidates.evidence[0]" in str(error)
    assert "the files hold 2 series of different configurations" in error.message


@pytest.mark.parametrize("evidence, where, words", [
    ({"import": "x.csv"}, "candidates.evidence", "expected a list of {import: <files>"),
    ([{"gpu": "h100"}], "candidates.evidence[0]", "an evidence item is {import: <files>"),
    ([{"import": "sweep.csv", "gpus": "h100"}], "candidates.evidence[0].gpus", "unknown key 'gpus'"),
    ([{"import": "sweep.csv", "gpu": "h1000"}], "candidates.evidence[0].gpu", "unknown gpu 'h1000'"),
    ([{"import": "sweep.csv", "gpu": "h100", "tp": 4, "kv_cache_dtype": "fp4"}],
     "candidates.evidence[0].kv_cache_dtype", "unknown KV-cache dtype 'fp4'"),
    ([{"import": "sweep.csv", "tp": 4}], "candidates.evidence[0]", "do not record the gpu they ran on; give gpu:"),
    ([{"import": "sweep.csv", "gpu": "h100", "tp": "four"}], "candidates.evidence[0].tp",
     "GPUs per replica must be a whole number of at least 1, got 'four'"),
], ids=["not a list", "no import", "key", "gpu", "kv", "no gpu", "tp"])
def test_a_bad_evidence_item_is_one_message_naming_file_and_key(tmp_path, evidence, where, words):
    path = plan_with(evidence, tmp_path, files=())
    _csv(path)
    error = refused(path)
    assert where in str(error) and words in error.message
