"""Goodput (issue 13, item 3, first part): the share of a run's requests that
met every SLO, request by request, with vLLM's ``--goodput`` semantics.

Pinned on the real Llama-3.3-70B TP8 sweep (per-request arrays, shared
examples) at the 70B plan's SLO limits, and recomputed here from the files'
own arrays with numpy, independently of the importer.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from shared_examples import VLLM_70B, example

from capplan.loading.sweeps import read_sweep
from capplan.loading.sweeps.goodput import compliant_share


@pytest.fixture
def base_plan(base_plan):
    """The test plan on the model the Llama-3.1-8B-Instruct benchmark files measured."""
    return {**base_plan, "model": "llama-3.1-8b"}


LIMITS = {"ttft": 1000.0, "tpot": 35.0, "e2e": 30.0}      # the 70B plan: ms, ms, s
PINNED = {1.0: 1.0, 4.0: 1.0, 16.0: 0.9, float("inf"): 0.355}


def _independent(path, limits=LIMITS) -> float:
    doc = json.loads(path.read_text())
    ok = np.array([not e for e in doc["errors"]])
    ttft = np.array(doc["ttfts"])[ok]
    e2e = np.array([t + sum(g) for t, g in zip(doc["ttfts"], doc["itls"])])[ok]
    n = np.array(doc["output_lens"])[ok]
    tpot = np.where(n > 1, (e2e - ttft) / np.maximum(n - 1, 1), 0.0)
    good = (ttft * 1000 <= limits["ttft"]) & (tpot * 1000 <= limits["tpot"]) & (e2e <= limits["e2e"])
    return float(good.sum()) / doc["num_prompts"]


def test_goodput_share_at_each_rate_of_the_70b_sweep():
    folder = example(*VLLM_70B)
    shares = {}
    for f in read_sweep(folder, ["qps_*.json"]):
        [point] = f.points
        shares[point.arrival_rate] = compliant_share(point, LIMITS)
        assert shares[point.arrival_rate] == pytest.approx(_independent(folder / f.path), abs=1e-12)
    assert shares == pytest.approx(PINNED, abs=1e-12)


def test_a_file_without_per_request_data_has_no_goodput():
    from test_sweep_percentiles import LEGACY_P99, P99_PLAN_SLOS
    files = read_sweep(LEGACY_P99, ["qps_*.json"], P99_PLAN_SLOS)
    assert [compliant_share(p, LIMITS) for f in files for p in f.points] == [None] * 4


def test_the_70b_record_shows_cost_per_million_compliant_tokens(run_main, tmp_path):
    """At λ* = 4 req/s every request met every SLO (share 1), so a compliant token costs what
    any output token costs; the check is the formula, cost / share, against the record's own numbers."""
    from conftest import ROOT
    plan = ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml"
    code, out, err = run_main("eval", plan, "--json")
    assert code == 0, err
    doc = json.loads(out)["scenarios"]["nominal"]
    assert doc["quantities"]["compliant_share"]["value"] == 1          # min share up to λ* = 4
    [row] = doc["tables"]["deployments"]["rows"]
    assert row["cost_per_million_compliant_tokens"] == pytest.approx(row["cost_per_million_tokens"] / 1.0)
    rows = doc["tables"]["load_sweep"]["rows"]
    assert [r["goodput_share"] for r in rows] == [PINNED[1.0], PINNED[4.0], PINNED[16.0]]
    assert [r["goodput_ok"] for r in rows] == [True, True, False]       # 0.9 < goodput_slo 0.99


def test_goodput_below_lambda_star_raises_the_cost_of_a_compliant_token(base_plan, write_plan, run_main):
    """Typed rows with goodput 0.98 at the λ* row: a compliant token costs cost / 0.98."""
    shares = [1.0, 0.98, 0.5]
    for row, share in zip(base_plan["tables"]["load_sweep"]["rows"], shares):
        row["goodput_share"] = share
    code, out, err = run_main("eval", write_plan(base_plan), "--json")
    assert code == 0, err
    doc = json.loads(out)["scenarios"]["nominal"]
    assert doc["quantities"]["instance_max_rate"]["value"] == 4
    assert doc["quantities"]["compliant_share"]["value"] == pytest.approx(0.98)
    [row] = doc["tables"]["deployments"]["rows"]
    assert row["cost_per_million_compliant_tokens"] == pytest.approx(row["cost_per_million_tokens"] / 0.98)
    base_plan["inputs"]["goodput_slo"] = 0.99                        # 0.98 at 4 req/s now fails
    code, out, err = run_main("eval", write_plan(base_plan), "--json")
    assert json.loads(out)["scenarios"]["nominal"]["quantities"]["instance_max_rate"]["value"] == 2


def test_goodput_from_a_guidellm_report_with_every_request(tmp_path):
    """GuideLLM keeps each request's TTFT (ms), inter-token latency (ms) and latency (s):
    a request is good when each is within its limit; errored and incomplete ones never are."""
    from test_sweep_import import guidellm_report, write_json
    write_json(tmp_path / "benchmarks.json", guidellm_report("v0.3"))
    [f] = read_sweep(tmp_path, ["benchmarks.json"])
    const = f.points[2]       # 10 successful, 1 errored, 2 cut off by the window's close (not sent): 11 sent
    rows = guidellm_report("v0.3")["benchmarks"][2]["requests"]["successful"]
    limits = {"ttft": 55.0, "tpot": 27.0, "e2e": 30.0}
    good = sum(r["time_to_first_token_ms"] <= 55 and (r["output_tokens"] == 1 or r["inter_token_latency_ms"] <= 27)
               for r in rows)
    assert good == 6                                    # i = 0..5
    assert const.sent == 11
    assert compliant_share(const, limits) == pytest.approx(good / 11)
    assert compliant_share(f.points[3], limits) is None   # no per-request list


def test_a_scenario_that_tightens_an_slo_recounts_goodput_from_the_requests(tmp_path, run_main):
    """The 70B plan importing its files, with a scenario at TTFT ≤ 150 ms: each rate's goodput is
    recounted at the scenario's limits from the files' own requests; the nominal keeps the plan's."""
    import shutil

    import yaml
    from conftest import ROOT

    folder = example(*VLLM_70B)
    shutil.copytree(folder, tmp_path / "plans" / "sweeps")
    plan = yaml.safe_load((ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml").read_text())
    sweep = plan["tables"]["load_sweep"]
    del sweep["rows"], sweep["note"]
    sweep["import"] = "sweeps/qps_*.json"
    plan["inputs"]["goodput_slo"] = 0                       # counted, not required, so every scenario evaluates
    plan["scenarios"] = {"ttft_150ms": {"set": {"ttft_p95_slo": "150 ms"}},
                         "goodput_typed": {"set": {"ttft_p95_slo": "150 ms", "load_sweep[4].goodput_share": 0.5}}}
    path = tmp_path / "plans" / "swept.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True))
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    scenarios = json.loads(out)["scenarios"]

    def shares(name):
        return [r["goodput_share"] for r in scenarios[name]["tables"]["load_sweep"]["rows"]]

    files = [folder / f"qps_{n:02d}.json" for n in (1, 4, 16)]
    tight = {**LIMITS, "ttft": 150.0}
    assert shares("nominal") == pytest.approx([_independent(f) for f in files], abs=1e-12)
    assert shares("ttft_150ms") == pytest.approx([_independent(f, tight) for f in files], abs=1e-12)
    assert shares("ttft_150ms") != shares("nominal")
    assert shares("goodput_typed")[1] == 0.5                # a cell the scenario sets is its own
