"""GuideLLM 0.8 reports: requests in flight when a window closed are no saturation, an unreached
default concurrency cap is no closed loop, and the version is the file's own."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from capplan.loading.sweeps import read_sweep

REAL = Path(__file__).parent / "data" / "guidellm-0.8.1"


def _doc() -> dict:
    return json.loads((REAL / "benchmarks.json").read_text(encoding="utf-8"))


def _points(tmp_path, doc: dict):
    (tmp_path / "benchmarks.json").write_text(json.dumps(doc), encoding="utf-8")
    [f] = read_sweep(tmp_path, ["benchmarks.json"])
    return f.points


def test_the_real_run_cut_off_requests_are_not_sent(tmp_path):
    [f] = read_sweep(REAL, ["benchmarks.json"])
    assert f.tool == ("GuideLLM", "0.8.1")
    totals = [b["metrics"]["request_totals"] for b in _doc()["benchmarks"]]
    assert [(t["successful"], t["incomplete"]) for t in totals] == [(19, 1), (72, 8), (151, 10)]
    assert [(p.arrival_rate, p.completed, p.sent) for p in f.points] == [(1, 19, 19), (4, 72, 72), (8, 151, 151)]
    assert [p.achieved_rate for p in f.points] == pytest.approx([1.0, 4.0, 8.05])
    four = f.points[1]
    assert ("8 of them started within the window's last 2.251 s (benchmarks[1].metrics.request_latency.successful"
            ".max, the longest completed request; benchmarks[1].requests.incomplete[].info.timings.request_start "
            "against benchmarks[1].end_time): in flight when it closed, not left behind, so not counted as sent; "
            "sent = 72 + 0 + 0 = 72") in next(m for m in four.methods if m.startswith("completed/failed/sent"))
    arrival = next(m for m in four.methods if m.startswith("arrival_rate"))
    assert arrival.endswith("client max_concurrency 10240 never reached (at most 9 in flight, "
                            "benchmarks[1].metrics.request_concurrency.successful.max): open-loop")
    assert "not purely open-loop" not in arrival


def test_lambda_star_is_not_lowered_by_the_window_close(base_plan, write_plan, tmp_path, run_main):
    target = tmp_path / "plans" / "sweep"
    target.mkdir(parents=True)
    (target / "benchmarks.json").write_bytes((REAL / "benchmarks.json").read_bytes())
    base_plan["inputs"].update(tpot_p95_slo="50 ms")
    base_plan["tables"]["load_sweep"] = {"source": "GuideLLM 0.8.1 against a mock server", "import": "sweep/*.json",
                                         "transferred": {"ratio": 1, "reason": "a mock server, timings only"}}
    path = write_plan(base_plan)
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    nominal = json.loads(out)["scenarios"]["nominal"]
    rows = nominal["tables"]["load_sweep"]["rows"]
    assert [(r["arrival_rate"], r["completed_share"], r["delivered_ok"]) for r in rows] == [
        (1, 1.0, True), (4, 1.0, True), (8, 1.0, True)]
    assert nominal["quantities"]["instance_max_rate"]["value"] == 8
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert "GuideLLM" in record and "0.8.1" in record
    assert "v0.7+ (metadata.version 2)" not in record and "not purely open-loop" not in record


def test_without_the_request_list_the_count_decides(tmp_path):
    doc = _doc()
    for bench in doc["benchmarks"]:
        del bench["requests"]
    four = _points(tmp_path, doc)[1]
    assert (four.completed, four.sent) == (72, 72)
    assert ("8 of them no more than the 10 = ceil(4 req/s x 2.251 s, benchmarks[1].metrics.request_latency."
            "successful.max) a replica that keeps up has in flight: cut off by the window's close") in " ".join(
        four.methods)


def test_more_incomplete_than_the_rate_leaves_in_flight_is_saturation(tmp_path):
    doc = _doc()
    bench = doc["benchmarks"][1]
    del bench["requests"]
    bench["metrics"]["request_totals"].update(incomplete=30, total=102)
    four = _points(tmp_path, doc)[1]
    assert (four.completed, four.sent) == (72, 102)
    assert ("sent = their sum, 102 (more than the 10 = ceil(4 req/s x 2.251 s, benchmarks[1].metrics."
            "request_latency.successful.max) a replica that keeps up has in flight: left behind, a sign of "
            "saturation)") in " ".join(four.methods)


def test_requests_that_started_long_before_the_close_were_left_behind(tmp_path):
    doc = _doc()
    bench = doc["benchmarks"][1]
    for row in bench["requests"]["incomplete"][:3]:
        row["info"]["timings"]["request_start"] = bench["end_time"] - 10
    four = _points(tmp_path, doc)[1]
    assert (four.completed, four.sent) == (72, 75)
    assert "; 3 started earlier and were still unfinished" in " ".join(four.methods)


def test_a_reached_cap_is_still_a_closed_loop_note(tmp_path):
    doc = copy.deepcopy(_doc())
    doc["benchmarks"][1]["config"]["strategy"]["max_concurrency"] = 9
    arrival = next(m for m in _points(tmp_path, doc)[1].methods if m.startswith("arrival_rate"))
    assert arrival.endswith(", capped at max_concurrency 9 (not purely open-loop)")
