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

LIMITS = {"ttft": 1000.0, "tpot": 35.0, "e2e": 30.0}      # the 70B plan: ms, ms, s
PINNED = {1.0: 1.0, 4.0: 1.0, 16.0: 0.9, float("inf"): 0.355}


def _independent(path) -> float:
    doc = json.loads(path.read_text())
    ok = np.array([not e for e in doc["errors"]])
    ttft = np.array(doc["ttfts"])[ok]
    e2e = np.array([t + sum(g) for t, g in zip(doc["ttfts"], doc["itls"])])[ok]
    n = np.array(doc["output_lens"])[ok]
    tpot = np.where(n > 1, (e2e - ttft) / np.maximum(n - 1, 1), 0.0)
    good = (ttft * 1000 <= LIMITS["ttft"]) & (tpot * 1000 <= LIMITS["tpot"]) & (e2e <= LIMITS["e2e"])
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
