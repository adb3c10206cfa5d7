"""The sweep formats are one declared table (issue 38): a format is one module and one row.

:data:`capplan.loading.sweeps.formats.FORMATS` lists each format with its name,
what it is read from, how it is recognised, how it is parsed and the release it
records; the first row whose ``looks_like`` holds for a file wins, in the order
the if-chain of ``files._parse_file`` chose them before.
"""

from __future__ import annotations

import json

import pytest

from capplan.errors import CapplanError
from capplan.loading.sweeps import formats, read_sweep
from capplan.loading.sweeps.points import SweepPoint

LEGACY = {"request_rate": 2, "completed": 10}                      # no "failed": the legacy script's
CURRENT = {**LEGACY, "failed": 0}


def test_the_table_holds_the_formats_in_the_order_they_are_chosen():
    assert [(f.name, f.read_from) for f in formats.FORMATS] == [
        ("csv", ("csv",)),
        ("guidellm", ("yaml", "json")),
        ("capplan estimate", ("yaml",)),
        ("vllm-bench-sweep-serve warm-up run (not counted)", ("json",)),
        ("vllm-bench-sweep-serve run", ("json",)),
        ("inferencex", ("json",)),
        ("vllm-benchmark-serving", ("json",)),
        ("vllm-bench-serve", ("json",)),
        (formats.SUMMARY, ("json",)),
    ]


@pytest.mark.parametrize("doc, read_from, chosen", [
    ({"benchmarks": [], **CURRENT}, "json", "guidellm"),             # a report before a vLLM result
    ({**CURRENT, "run_number": -1}, "json", "vllm-bench-sweep-serve warm-up run (not counted)"),
    ({**CURRENT, "run_number": 0, "p99_ttft": 0.1}, "json", "vllm-bench-sweep-serve run"),
    ({**LEGACY, "p99_ttft": 0.1}, "json", "inferencex"),                # seconds before the legacy script
    (LEGACY, "json", "vllm-benchmark-serving"),
    (CURRENT, "json", "vllm-bench-serve"),
    ([CURRENT, CURRENT], "json", formats.SUMMARY),
    ({"capplan_estimate": 1}, "yaml", "capplan estimate"),
    ({"capplan_estimate": 1}, "json", None),                           # an estimate is a YAML file
    (CURRENT, "yaml", None),                                            # a vLLM result is JSON
])
def test_the_first_row_that_recognises_a_file_wins(doc, read_from, chosen):
    found = formats.choose(doc, read_from)
    assert (found and found.name) == chosen


def _toy(doc, rel, slos):
    return [SweepPoint(arrival_rate=float(doc["toy_rate"]), latency={}, output_throughput=1.0, completed=1, failed=0,
                       sent=1, achieved_rate=0.0, goodput=None, file=rel, methods=())]


def test_a_new_format_is_one_row(tmp_path, monkeypatch):
    toy = formats.Format("toy-bench", ("json",), lambda doc: isinstance(doc, dict) and "toy_rate" in doc, _toy,
                         release=lambda doc: "toy 1.0")
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, toy))
    (tmp_path / "toy.json").write_text(json.dumps({"toy_rate": 3}))
    [read] = read_sweep(tmp_path, ["toy.json"])
    assert (read.format, read.release, [p.arrival_rate for p in read.points]) == ("toy-bench", "toy 1.0", [3.0])


def test_a_file_no_row_recognises_is_refused_with_the_formats_it_could_be(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"toy_rate": 3}))
    with pytest.raises(CapplanError, match="unknown sweep file format: expected a vLLM --save-result object "
                                           r"\(request_rate, completed, ...\), a GuideLLM report"):
        read_sweep(tmp_path, ["x.json"])
