"""Every bad plan gets one clear message, never a traceback (README "Exit codes").

Each case breaks one thing in a valid plan, runs `capplan build` in-process
and asserts exit 1 and a message that names the file, the key (and line where
YAML has it) and what is wrong; and that earlier outputs survive a failed
build. The later cases are input that once ended in exit 3, "a bug":
hostile units, numbers no float holds, results that overflow, mis-shaped
scenarios, and a zero divisor that must be traced to the input that is 0.
"""

from __future__ import annotations

import pytest
from shared_examples import VLLM_70B, example


def _input(name, value):
    return lambda plan: plan["inputs"].update({name: value})


def _expect(name, value):
    return lambda plan: plan.update({"expect": {name: value}})


CASES = {
    "unknown quantity, nearest name suggested": (
        lambda p: p["inputs"].update({"peak_arival_rate": "60 req/s"}),
        ["test-plan.yaml:", "inputs.peak_arival_rate", "unknown quantity 'peak_arival_rate'",
         "did you mean peak_arrival_rate"]),
    "unknown catalog id, nearest id suggested": (
        lambda p: p.update({"gpu": "a100-sxm-80gb"}),
        ["test-plan.yaml:2: gpu:", "unknown gpu 'a100-sxm-80gb'", "did you mean a100-sxm4-80gb"]),
    "unknown model id": (
        lambda p: p.update({"model": "llama3-8b"}),
        ["model:", "unknown model 'llama3-8b'", "llama-3-8b"]),
    "value with the wrong dimensions": (
        lambda p: p["inputs"].update({"gpu_memory_reported": "80 GB/s"}),
        ["inputs.gpu_memory_reported", "'80 GB/s' has dimensions [information] / [time]",
         "needs [information] / [gpu]"]),
    "unknown unit": (
        lambda p: p["inputs"].update({"peak_arrival_rate": "60 qps"}),
        ["inputs.peak_arrival_rate", "unknown unit 'qps'"]),
    "missing input": (
        lambda p: p["inputs"].pop("e2e_p99_slo"),
        ["inputs", "missing input 'e2e_p99_slo'", "Unit: s"]),
    "class weights not summing to 1": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"weight": 0.6}),
        ["tables.classes", "class weights sum to 0.9, not 1"]),
    "model does not fit in memory": (
        lambda p: p.update({"gpu": "l40s", "model": "llama-3-70b"}),
        ["test-plan.yaml:3: model:", "the model does not fit: weights 131.4 GiB + workspace 1.75 GiB > usable 40.49 GiB"]),
    "no sweep row meets the SLOs": (
        lambda p: p["inputs"].update({"ttft_p95_slo": "50 ms"}),
        ["instance_max_rate", "no load_sweep row meets every SLO", "2 req/s"]),
    "division by zero (a pin; an input's domain refuses 0 before this)": (
        lambda p: p["inputs"].update({"safe_rate_per_replica": "0 req/s"}),
        [":10: inputs.safe_rate_per_replica: active_replicas = ceil(peak_arrival_rate / safe_rate_per_replica)",
         "division by zero: safe_rate_per_replica is 0"]),
    "non-monotone sweep": (
        lambda p: p["tables"]["load_sweep"]["rows"].reverse(),
        ["tables.load_sweep.rows[1]", "rows must be in increasing arrival_rate"]),
    "empty sweep": (
        lambda p: p["tables"]["load_sweep"].update({"rows": []}),
        ["tables.load_sweep", "table 'load_sweep' has no rows"]),
    "missing table": (
        lambda p: p["tables"].pop("deployments"),
        ["tables", "missing table 'deployments'"]),
    "unknown plan key": (
        lambda p: p.update({"scenario": {}}),
        ["scenario:", "unknown key 'scenario'", "did you mean scenarios"]),
    "unknown column": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"prompt": 3}),
        ["tables.classes.rows[0].prompt", "column 'prompt' is unknown", "did you mean prompt_tokens"]),
    "computed column given": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"context_tokens": 3}),
        ["column 'context_tokens' is computed, not given"]),
    "bad tag": (
        lambda p: p["inputs"].update({"rho_target": {"value": 0.7, "tag": "guess"}}),
        ["inputs.rho_target.tag", "tag must be one of fact, policy, measurement, assumption"]),
    "input of the other sizing method": (
        lambda p: p["inputs"].update({"decode_throughput": "1000 tok/s"}),
        ["inputs.decode_throughput", "not part of a plan with sizing: load_sweep"]),
    "scenario names a missing row": (
        lambda p: p.update({"scenarios": {"x": {"set": {"classes[chatt].prompt_tokens": 5}}}}),
        ["scenarios.x.set.classes[chatt].prompt_tokens", "classes has no row 'chatt'", "did you mean chat"]),
    "scenario error says which scenario": (
        lambda p: p.update({"scenarios": {"tiny": {"set": {"gpu_memory_reported": "10 GiB/GPU"}}}}),
        ["scenario tiny:", "the model does not fit"]),
    # a value outside its declared domain (model/quantities.yaml), on every route a value takes
    "domain: input": (
        lambda p: p["inputs"].update({"gpu_memory_utilization": 1.5}),
        [(":10: inputs.gpu_memory_utilization: gpu_memory_utilization must be in (0, 1]: the engine cannot use "
          "more than the whole GPU; got 1.5")]),
    "domain: input with fields": (
        lambda p: p["inputs"].update({"gpu_memory_utilization": {"value": 0, "source": "x"}}),
        [":10: inputs.gpu_memory_utilization: gpu_memory_utilization must be in (0, 1]", "got 0"]),
    "domain: table cell": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"weight": -0.1}),
        [(":14: tables.classes.rows[0].weight: classes.weight must be in [0, 1]: a share of all requests; "
          "got -0.1")]),
    "domain: table cell in another unit, shown in the display unit": (
        lambda p: p["tables"]["load_sweep"].update({"units": {"ttft_p95": "s"}, "rows": [
            dict(p["tables"]["load_sweep"]["rows"][0], ttft_p95=-0.2)]}),
        [("tables.load_sweep.rows[0].ttft_p95: load_sweep.ttft_p95 must be non-negative: a latency cannot be "
          "negative; got -200 ms")]),
    "domain: scenario set": (
        lambda p: p.update({"scenarios": {"s": {"set": {"rho_target": 1.2}}}}),
        [(":43: scenarios.s.set.rho_target: rho_target must be in (0, 1]: a share of measured capacity; "
          "above 1 queues grow without bound; got 1.2")]),
    "domain: scenario set of a table cell, a count given as a fraction": (
        lambda p: p.update({"scenarios": {"s": {"set": {"deployments[node8].gpus_per_node": 2.5}}}}),
        [("scenarios.s.set.deployments[node8].gpus_per_node: deployments.gpus_per_node must be a positive "
          "whole number: a node holds whole GPUs; got 2.5 GPU")]),
    "domain: pin of a derived quantity": (
        lambda p: p["inputs"].update({"instance_max_rate": "0 req/s"}),
        [":10: inputs.instance_max_rate: instance_max_rate must be positive", "got 0 req/s"]),
    "domain: expect that can never hold": (
        lambda p: p.update({"expect": {"deployments[node8].gpus_per_node": "-1 GPU"}}),
        [(":41: expect.deployments[node8].gpus_per_node: deployments.gpus_per_node must be a positive whole "
          "number"), "got -1 GPU"]),
    "domain: a value in another unit, compared in the interval's unit": (
        lambda p: p["inputs"].update({"days_per_month": "800 h"}),
        [("inputs.days_per_month: days_per_month must be in (0, 31] day: a calendar month has at most 31 "
          "days; got 800 h (= 33.3333333333 day)")]),
    # -- hostile units: pint's parser raised TokenError, AssertionError, ZeroDivisionError or
    #    RecursionError on these, or never returned; capplan reads units with its own grammar
    "unit with an unclosed parenthesis (TokenError)": (
        _input("peak_arrival_rate", "60 (req/s"),
        [":5: inputs.peak_arrival_rate: unit '(req/s' has a '(' without its ')'"]),
    "unit in quotes (AssertionError)": (
        _input("peak_arrival_rate", "60 'req/s'"),
        [":5: inputs.peak_arrival_rate: unit ''req/s'' has an unexpected '''"]),
    "unit dividing by zero (ZeroDivisionError)": (
        _input("peak_arrival_rate", "60 req/(s*0)"),
        [":5: inputs.peak_arrival_rate: unit 'req/(s*0)' holds the number 0"]),
    "unit of 1,500 chained factors (RecursionError)": (
        _input("peak_arrival_rate", "60 req/s" + "*s/s" * 1500),
        [":5: inputs.peak_arrival_rate: a unit of 6,005 characters is too long"]),
    "unit of nested exponents (never returned)": (
        _input("peak_arrival_rate", "60 req/s**10**10**10"),
        [":5: inputs.peak_arrival_rate: unit 'req/s**10**10**10' has the exponent '10'"]),
    "unit of chained carets (never returned)": (
        _input("peak_arrival_rate", "60 s^9^9^9"),
        ["inputs.peak_arrival_rate: unit 's^9^9^9' gives an exponent an exponent"]),
    "'= 1' after the unit": (
        _input("peak_arrival_rate", "60 req/s = 1"), ["inputs.peak_arrival_rate: unit 'req/s = 1' has an unexpected '='"]),
    "';s/s' after the unit": (
        _input("peak_arrival_rate", "60 req/s;s/s"), ["inputs.peak_arrival_rate: unit 'req/s;s/s' has an unexpected ';'"]),
    "NUL after the unit": (
        _input("peak_arrival_rate", "60 req/s\0"),
        ["inputs.peak_arrival_rate: unit 'req/s\\x00' has an unexpected character U+0000"]),
    "Unicode minus": (
        _input("peak_arrival_rate", "\u221260 req/s"),
        ["inputs.peak_arrival_rate:", "U+2212 MINUS SIGN (write ASCII '-')"]),
    "decimal comma": (
        _input("rho_target", "0,7"), ["inputs.rho_target: '0,7': a comma separates thousands"]),
    "column units given as a list": (
        lambda p: p["tables"]["load_sweep"].update({"units": ["s"]}),
        ["tables.load_sweep.units: expected a mapping of column: unit"]),
    "exponent bomb in a column unit": (
        lambda p: p["tables"]["load_sweep"].update({"units": {"e2e_p99": "s**10**10**10"}}),
        ["tables.load_sweep.units.e2e_p99: unit 's**10**10**10' has the exponent '10'"]),
    # -- numbers no float holds (decimal.InvalidOperation and OverflowError once came from them)
    "value beyond 2^53": (
        _input("peak_arrival_rate", "1e308 req/s"),
        [":5: inputs.peak_arrival_rate: '1e308 req/s' is 1e+308 req/s, beyond ±2^53"]),
    "value that overflows to infinity": (
        _input("peak_arrival_rate", "1e999 req/s"), [":5: inputs.peak_arrival_rate: '1e999 req/s' is out of the range"]),
    "value that underflows to 0": (
        _input("workspace_reserve", "1e-330 GiB"), ["inputs.workspace_reserve: '1e-330 GiB' is out of the range"]),
    "400-digit integer in expect": (
        _expect("active_gpus", 10 ** 400), ["expect.active_gpus: a number of 401 characters is not a plan value"]),
    "'1e999' in expect": (
        _expect("active_gpus", "1e999"), ["expect.active_gpus: '1e999' is out of the range"]),
    "1e400 in expect": (
        _expect("active_gpus", "1e400 GPU"), ["expect.active_gpus: '1e400 GPU' is out of the range"]),
    # -- results no float holds: each names the input chain that caused it
    "tiny rate makes ceil() explode": (
        _input("rho_target", 1e-300),
        [(":10: inputs.rho_target: active_replicas = ceil(peak_arrival_rate / safe_rate_per_replica) is 1.5e+301, "
         "beyond ±2^53 (9,007,199,254,740,992)"), "it comes from rho_target = 1e-300 through safe_rate_per_replica"]),
    "count beyond 2^53 from a tiny KV footprint": (
        _input("kv_bytes_per_element", "1e-300 B"),
        ["inputs.kv_bytes_per_element: kv_token_capacity = floor(kv_pool / kv_bytes_per_token) is 9.059e+305 tokens",
         "it comes from kv_bytes_per_element = 1e-300 B through kv_bytes_per_token"]),
    "money amount beyond 2^53": (
        lambda p: p["tables"]["deployments"]["rows"][0].update({"node_hourly_cost": "1e15 USD/h"}),
        [(":37: tables.deployments.rows[0].node_hourly_cost: deployments.monthly_cost (row node8) = "
         "hourly_cost * hours_per_month is 2.196e+18 USD"), "it comes from deployments.node_hourly_cost = 1e+15 USD/h"]),
    "pinned rate that explodes a count, in a scenario": (
        lambda p: p.update({"scenarios": {"x": {"set": {"instance_max_rate": "1e-300 req/s"}}}}),
        ["scenarios.x.set.instance_max_rate: scenario x: active_replicas", "beyond ±2^53",
         "it comes from instance_max_rate = 1e-300 req/s"]),
    # -- plan shapes that once crashed
    "scenario body that is a number": (
        lambda p: p.update({"scenarios": {"x": 5}}),
        ["scenarios.x: a scenario is a mapping (title:, set:, expect:), got '5'"]),
    "set: given as a list": (
        lambda p: p.update({"scenarios": {"x": {"set": [1, 2]}}}),
        ["scenarios.x.set: 'set:' is a mapping of quantity: value, got a list"]),
    "sizing given as a list": (
        lambda p: p.update({"sizing": ["load_sweep"]}), ["sizing: sizing must be one of load_sweep, littles_law"]),
    "source: that is a mapping": (
        _input("peak_arrival_rate", {"value": "60 req/s", "source": {"a": 1}}),
        [":7: inputs.peak_arrival_rate.source: expected text, got a mapping"]),
    "row name that is a mapping": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"name": {"a": 1}}),
        ["tables.classes.rows[0].name: expected text, got a mapping"]),
    # -- a zero divisor names the input that is 0, at its line, through derived quantities
    "zero pin inside a product": (
        _input("monthly_requests", 0),
        [(":10: inputs.monthly_requests: deployments.energy_per_million_tokens = facility_power * hours_per_month / "
          "monthly_output_tokens: division by zero: monthly_output_tokens is 0, because monthly_requests is 0")]),
    "zero flowing through two derived quantities": (
        _input("avg_arrival_rate", "0 req/s"),
        [":10: inputs.avg_arrival_rate:", ("division by zero: monthly_output_tokens is 0, because monthly_requests "
                                           "is 0, because avg_arrival_rate is 0")]),
    "zero set by a scenario": (
        lambda p: p.update({"scenarios": {"s": {"set": {"avg_arrival_rate": "0 req/s"}}}}),
        [":43: scenarios.s.set.avg_arrival_rate: scenario s: deployments.energy_per_million_tokens",
         "division by zero: monthly_output_tokens is 0, because monthly_requests is 0, because avg_arrival_rate is 0"]),
    "zero that a floor() makes": (
        lambda p: (p.update({"sizing": "littles_law"}), p["tables"].pop("load_sweep"),
                   p["inputs"].update({"decode_throughput": "1 tok/s"})),
        [("active_replicas = ceil(in_flight_requests / slo_batch_limit): division by zero: slo_batch_limit is 0 "
          "(= floor(decode_throughput / required_token_rate))")]),
    # -- every other plan mistake the reader names (each a raise site of loading/plan.py)
    "missing model": (lambda p: p.pop("model"), ["missing 'model:' (a catalog id such as"]),
    "inputs given as a list": (lambda p: p.update({"inputs": [1]}), ["inputs: expected a mapping of quantity names to values"]),
    "a pass/fail result set as an input": (
        _input("memory_gate", True), ["inputs.memory_gate: 'memory_gate' is a pass/fail result and cannot be set"]),
    "input without value:": (_input("rho_target", {"source": "SRE"}), ["inputs.rho_target: missing 'value:'"]),
    "tables given as a list": (lambda p: p.update({"tables": [1]}), ["tables: expected a mapping of table names"]),
    "table of the other sizing method": (
        lambda p: (p.update({"sizing": "littles_law"}), p["inputs"].update({"decode_throughput": "1000 tok/s"})),
        ["tables.load_sweep: table 'load_sweep' is not part of a plan with sizing: littles_law"]),
    "table that is a number": (
        lambda p: p["tables"].update({"classes": 5}), ["tables.classes: expected 'rows:' (a list of rows)"]),
    "unit of an unknown column": (
        lambda p: p["tables"]["load_sweep"].update({"units": {"e2e": "s"}}),
        ["tables.load_sweep.units.e2e: unknown column 'e2e'; did you mean e2e_p99"]),
    "column unit of the wrong dimensions": (
        lambda p: p["tables"]["load_sweep"].update({"units": {"e2e_p99": "GiB"}}),
        ["tables.load_sweep.units.e2e_p99: unit 'GiB' has dimensions [information], column 'e2e_p99' needs [time]"]),
    "import of a table that cannot be imported": (
        lambda p: p["tables"]["classes"].update({"import": "x.csv"}),
        ["tables.classes.import: table 'classes' cannot be imported (only load_sweep)"]),
    "rows and import together": (
        lambda p: p["tables"]["load_sweep"].update({"import": "x.csv"}),
        ["tables.load_sweep: give either 'rows:' or 'import:', not both"]),
    "import pattern that is a number": (
        lambda p: p["tables"].update({"load_sweep": {"import": 5}}),
        ["tables.load_sweep.import: expected a file pattern or a list of them"]),
    "import pattern that matches nothing": (
        lambda p: p["tables"].update({"load_sweep": {"import": "sweeps/*.json"}}), ["tables.load_sweep.import: "]),
    "row that is a number": (
        lambda p: p["tables"]["classes"]["rows"].append(5),
        ["tables.classes.rows[2]: a row must be a mapping of column: value"]),
    "cell that is not a number": (
        lambda p: p["tables"]["classes"]["rows"][0].update({"weight": "abc"}),
        ["tables.classes.rows[0].weight: expected a number with a unit such as '0.5', got 'abc'"]),
    "two rows with one key": (
        lambda p: p["tables"]["classes"]["rows"][1].update({"name": "chat"}),
        ["tables.classes.rows[1]: rows 1 and 2 have the same name 'chat'"]),
    "scenarios given as a list": (lambda p: p.update({"scenarios": [1]}), ["scenarios: expected a mapping of scenario names"]),
    "scenario without a change": (
        lambda p: p.update({"scenarios": {"x": {"title": "t"}}}), ["scenarios.x: a scenario needs 'set:' with at least one change"]),
    "scenario cell of an unknown table": (
        lambda p: p.update({"scenarios": {"x": {"set": {"clases[chat].weight": 1}}}}),
        ["scenarios.x.set.clases[chat].weight: unknown table 'clases'; did you mean classes"]),
    "scenario cell of a computed column": (
        lambda p: p.update({"scenarios": {"x": {"set": {"classes[chat].context_tokens": 1}}}}),
        ["'context_tokens' is not an input column of classes"]),
    "scenario cell that is not a number": (
        lambda p: p.update({"scenarios": {"x": {"set": {"classes[chat].weight": "abc"}}}}),
        ["scenarios.x.set.classes[chat].weight: expected a number with a unit such as '0.5', got 'abc'"]),
    "expect given as a list": (lambda p: p.update({"expect": [1]}), ["expect: expected a mapping of quantity: value"]),
    "expect of a pass/fail result that is a number": (
        _expect("memory_gate", 5), ["expect.memory_gate: expected true or false"]),
    "model: a mapping other than {config:}": (
        lambda p: p.update({"model": {"name": "llama-3-8b"}}),
        ["model: expected a catalog id, {id: catalog id, weights: format} or {config: path/to/config.json, name: its Hugging Face id}"]),
    "model: a config.json that is missing": (
        lambda p: p.update({"model": {"config": "nope/config.json"}}), ["model.config: "]),
    # -- a value with a scale writes its unit (issue 23, item 5)
    "bare number for a quantity with a unit (0.8 meant as seconds)": (
        _input("ttft_p95_slo", 0.8),
        ["test-plan.yaml:7: inputs.ttft_p95_slo: write the unit, e.g. '0.8 s' or '800 ms'"]),
    "bare number as text, in an input's mapping": (
        _input("e2e_p99_slo", {"value": "30", "source": "contract"}),
        [":9: inputs.e2e_p99_slo: write the unit, e.g. '30 ms' or '0.03 s'"]),
    "bare number for a rate with no nearby unit": (
        _input("peak_arrival_rate", 60), [":5: inputs.peak_arrival_rate: write the unit, e.g. '60 req/s'"]),
    "bare table cell of a column without units:": (
        lambda p: p["tables"]["load_sweep"]["rows"][0].update({"ttft_p95": 85}),
        ["tables.load_sweep.rows[0].ttft_p95: write the unit, e.g. '85 s' or '85000 ms'"]),
    "bare number set by a scenario, on a table cell": (
        lambda p: p.update({"scenarios": {"s": {"set": {"deployments[node8].node_hourly_cost": 30}}}}),
        ["scenarios.s.set.deployments[node8].node_hourly_cost: write the unit, e.g. '30 USD/h'"]),
    "bare range for a quantity with a unit": (
        _input("peak_arrival_rate", {"value": "30 req/s", "range": "22 to 40"}),
        ["inputs.peak_arrival_rate.range: write the unit, e.g. '22 to 40 req/s'"]),
    "value outside its own 90 % range": (
        _input("peak_arrival_rate", {"value": "45 req/s", "range": "22 to 40 req/s"}),
        [":7: inputs.peak_arrival_rate.range: the value 45 req/s lies outside its own range 22 to 40 req/s "
         "(the 90 % interval of a lognormal); correct the value or the range"]),
    "value outside its own uniform range": (
        _input("rho_target", {"value": 0.9, "range": "0.5 to 0.8", "dist": "uniform"}),
        ["inputs.rho_target.range: the value 0.9 lies outside its own range 0.5 to 0.8 (the support of a uniform)"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_plan_gets_one_clear_message(case, base_plan, write_plan, run_main, tmp_path, monkeypatch):
    breaker, expected = CASES[case]
    breaker(base_plan)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main("build", write_plan(base_plan))
    assert code == 1, err
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("error: plans/test-plan.yaml")
    for fragment in expected:
        assert fragment in first, f"{fragment!r} not in {first!r}"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """Run the CLI from tmp_path, where write_plan puts plans/."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_malformed_yaml_names_the_line(write_plan, run_main, here):
    code, _, err = run_main("build", write_plan("title: x\ninputs:\n  a: [1, 2\n  b: 3\n"))
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: plans/test-plan.yaml:4: inputs.a: malformed YAML")


def test_duplicate_key_is_an_error(write_plan, run_main, here):
    code, _, err = run_main("build", write_plan("gpu: a100-sxm4-80gb\nmodel: llama-3-8b\ngpu: l40s\n"))
    assert code == 1
    assert "test-plan.yaml:3" in err and "duplicate key 'gpu'" in err


def test_missing_file(run_main, here):
    code, _, err = run_main("build", "plans/nope.yaml")
    assert code == 1 and "plans/nope.yaml" in err and "cannot read file" in err


def test_no_plans_to_build(run_main, here):
    assert run_main("build")[2].startswith("error: no plans given and no 'plans/' folder here")
    (here / "plans").mkdir()
    assert run_main("build")[2].startswith("error: no plans (*.yaml) in 'plans/'")


def test_sweep_of_closed_bursts_only(base_plan, write_plan, run_main, here):
    burst = example(*VLLM_70B, "qps_inf.json")
    (here / "plans").mkdir()
    (here / "plans" / "burst.json").write_bytes(burst.read_bytes())
    base_plan["tables"]["load_sweep"] = {"import": "burst.json"}
    code, _, err = run_main("build", write_plan(base_plan))
    assert code == 1
    assert "tables.load_sweep.import: the imported files hold no open-loop run (only closed bursts)" in err


def test_failed_build_leaves_previous_outputs_intact(base_plan, write_plan, run_main, here):
    path = write_plan(base_plan)
    assert run_main("build", path)[0] == 0
    before = {p.name: p.read_bytes() for p in (here / "out").iterdir()}
    assert "test-plan.md" in before
    base_plan["tables"]["classes"]["rows"][0]["weight"] = 0.1
    write_plan(base_plan)
    code, _, err = run_main("build", path)
    assert code == 1 and "previous outputs are untouched" in err
    after = {p.name: p.read_bytes() for p in (here / "out").iterdir()}
    assert after == before


def test_text_starting_with_equals_stays_text(base_plan, write_plan, run_main, here):
    base_plan["tables"]["deployments"]["rows"][0]["name"] = "=HYPERLINK(\"x\")"
    code, _, err = run_main("build", write_plan(base_plan))
    assert code == 0, err
    assert '=HYPERLINK(\\"x\\")' in (here / "out" / "test-plan.json").read_text()


def test_explain_of_a_cell_of_an_unknown_column(base_plan, write_plan, run_main, here):
    code, _, err = run_main("explain", write_plan(base_plan), "classes[chat].nope")
    assert code == 1 and "'classes[chat].nope'" in err


def test_diff_of_a_file_and_a_folder_is_a_usage_error(base_plan, write_plan, run_main, here):
    code, _, err = run_main("diff", write_plan(base_plan), here / "plans")
    assert code == 2 and "give two plan files or two folders of plans, not one of each" in err


@pytest.mark.parametrize("name, content, expected", [
    ("x.json", "{}", "x.json: "),
    ("x.json", "not json at all", "x.json:1: invalid JSON"),
    ("x.tsv", "a\tb\n", "tab-separated files are not supported"),
    ("x.yaml", "benchmarks: [", "x.yaml:2: malformed YAML"),
    ("x.csv", "", "x.csv: "),
    ("x.csv", "arrival_rate,ttft_p95\n1,\n", "x.csv:1: tpot_p95: the header lacks column(s)"),
    ("x.jsonl", "\n\n", "x.jsonl: "),
])
def test_import_of_a_file_that_is_no_benchmark(name, content, expected, base_plan, write_plan, run_main, here):
    (here / "plans").mkdir()
    (here / "plans" / name).write_text(content, encoding="utf-8")
    base_plan["tables"]["load_sweep"] = {"import": name}
    code, _, err = run_main("build", write_plan(base_plan))
    assert code == 1
    first = err.splitlines()[0]
    assert first.startswith("error: plans/test-plan.yaml:") and "tables.load_sweep.import: " in first
    assert expected in first


def test_model_config_that_is_a_list(base_plan, write_plan, run_main, here):
    (here / "plans").mkdir()
    (here / "plans" / "config.json").write_text("[1, 2]", encoding="utf-8")
    base_plan["model"] = {"config": "config.json"}
    code, _, err = run_main("build", write_plan(base_plan))
    assert code == 1 and "model.config: " in err and "a config.json is a JSON object" in err
