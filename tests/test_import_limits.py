"""Imports under a hostile plan (issue 25): bounded, linear, and every refusal located.

Benchmark files and a model's ``config.json`` are read within stated limits
(docs/limits.md, "Imports"), never from a FIFO or device, in time linear in
their size; a malformed file is named at the field or config key that is
wrong, never through a derived quantity, and never as a bug (exit 3).
"""

from __future__ import annotations

import copy
import json
import os
import resource
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import BASE_PLAN, ROOT

from capplan.errors import CapplanError
from capplan.language import yamlevents
from capplan.loading import hf_config
from capplan.loading.sweeps import files, read_sweep, reading


@pytest.fixture
def base_plan(base_plan):
    """The test plan on the model the Llama-3.1-8B-Instruct benchmark files measured."""
    return {**base_plan, "model": "llama-3.1-8b"}


DATA = ROOT / "tests" / "data"
SWEEP_SERVE = DATA / "vllm-sweep-serve" / "20250601_120000"
GUIDELLM = DATA / "guidellm-overloaded" / "benchmarks.json"
RUN = json.loads((SWEEP_SERVE / "SERVE-max_num_seqs=64-BENCH-request_rate=4" / "run=0.json").read_text())
DENSE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "intermediate_size": 14336,
         "vocab_size": 128256, "torch_dtype": "bfloat16"}
MOE = {**DENSE, "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 2048}


def _run(**changes) -> dict:
    """A `vllm bench serve` result (run=0.json of the sweep fixture, without its run number)."""
    run = {k: v for k, v in RUN.items() if k not in ("run_number", "max_num_seqs")}
    return {**run, **changes}


def _plan(tmp_path, write_plan, table=None, model=None, **inputs):
    plan = {**copy.deepcopy(BASE_PLAN), "model": "llama-3.1-8b"}     # the model the files measured
    plan["inputs"].update({"tpot_p95_slo": "30 ms", "e2e_p99_slo": "30 s", **inputs})
    if table is not None:
        plan["tables"]["load_sweep"] = {"source": "benchmark files", **table}
    if model is not None:
        plan["model"] = model
        plan["inputs"]["parameter_count"] = 8.03e9
    return write_plan(plan)


def _refused(run_main, path, *wanted):
    code, out, err = run_main("eval", path)
    assert code == 1, (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in wanted:
        assert text in err, err
    return err


# -- config.json: every problem at its key ----------------------------------------------

BAD_CONFIGS = {
    "architectures not a list": ({**DENSE, "architectures": 5}, "'architectures' must be a list of class names, got 5"),
    "no heads, no head_dim": ({**DENSE, "num_attention_heads": 0},
                              "'num_attention_heads' must be a positive whole number of at most 1,000,000,000, got 0"),
    "head_dim not derivable": ({**DENSE, "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_size": 32},
                               "'head_dim' is missing, and hidden_size / num_attention_heads (32 / 64) is less than one"),
    "sliding_window_pattern 0": ({**DENSE, "sliding_window": 1024, "sliding_window_pattern": 0},
                                 "'sliding_window_pattern' must be a positive whole number"),
    "layers as text": ({**DENSE, "num_hidden_layers": "32"}, "'num_hidden_layers' must be a whole number, got \"32\""),
    "layers as a bool": ({**DENSE, "num_hidden_layers": True}, "'num_hidden_layers' must be a whole number, got true"),
    "negative expert width": ({**MOE, "moe_intermediate_size": -21504}, "'moe_intermediate_size' must be a positive"),
    "negative shared experts": ({**MOE, "n_shared_experts": -3}, "'n_shared_experts' must be a non-negative"),
    "more experts per token than experts": ({**MOE, "num_experts_per_tok": 9}, "'num_experts_per_tok' is 9, more than "
                                                                               "the 8 experts (num_local_experts)"),
    "a layer count beyond any model": ({**DENSE, "num_hidden_layers": 10 ** 30}, "at most 1,000,000,000, got 1"),
    "text_config not an object": ({"text_config": 5}, "'text_config' must be an object, got 5"),
    "text_config key named": ({"text_config": {**DENSE, "vocab_size": -1}}, "'text_config.vocab_size' must be a positive"),
    "layer_types not a list": ({**DENSE, "sliding_window": 1024, "layer_types": "sliding"}, "'layer_types' must be a list"),
    "layer_types longer than the layers": ({**DENSE, "sliding_window": 1024, "layer_types": ["sliding_attention"] * 33},
                                           "'layer_types' lists 33 layers, more than num_hidden_layers (32)"),
    "no_rope_layer_interval 0": ({**DENSE, "attention_chunk_size": 8192, "no_rope_layer_interval": 0},
                                 "'no_rope_layer_interval' must be a positive"),
    "no_rope_layers not a list": ({**DENSE, "attention_chunk_size": 8192, "no_rope_layers": 3},
                                  "'no_rope_layers' must be a list of 0/1 per layer, got 3"),
    "KV heads 0": ({**DENSE, "num_key_value_heads": 0}, "'num_key_value_heads' must be a positive"),
    "name not text": ({**DENSE, "_name_or_path": {"a": 1}}, "'_name_or_path' must be text, got dict"),
}


@pytest.mark.parametrize("config, message", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_a_malformed_config_json_is_named_at_its_key(tmp_path, write_plan, run_main, config, message):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "config.json").write_text(json.dumps(config))
    path = _plan(tmp_path, write_plan, model={"config": "config.json"})
    _refused(run_main, path, "model.config: config.json: ", message)


def test_a_config_json_nested_too_deep_or_with_a_huge_integer_is_refused_at_its_line(tmp_path):
    (tmp_path / "deep.json").write_text('{"hidden_size": 4096,\n "x": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(CapplanError, match=r"deep.json: the JSON nests 5,001 levels deep \(arrays and objects\) by line 2; at most 64 "):
        hf_config.load(tmp_path, "deep.json")
    (tmp_path / "big.json").write_text(json.dumps(DENSE)[:-1] + ',\n"vocab_size2": ' + "7" * 5000 + "}")
    with pytest.raises(CapplanError, match=r"big.json: an integer of 5,000 digits on line 2; numbers of at most 100 digits"):
        hf_config.load(tmp_path, "big.json")


def test_a_lone_surrogate_escape_is_refused_at_its_line_a_pair_is_text(tmp_path):
    """Valid JSON, but no Unicode text: it reached the record and failed its write (exit 3)."""
    text = json.dumps(DENSE)[:-1] + ',\n"_name_or_path": "x\\ud800"}'
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(CapplanError, match=r"config.json: a JSON string on line 2 holds \\ud800, half of a UTF-16"):
        hf_config.load(tmp_path, "config.json")
    (tmp_path / "config.json").write_text(text.replace("\\ud800", "\\ud83d\\ude00"))
    assert hf_config.load(tmp_path, "config.json").name.startswith("x\U0001f600")
    (tmp_path / "r.jsonl").write_text(json.dumps(_run()) + "\n" + json.dumps(_run(model_id="\ude00")))
    with pytest.raises(CapplanError, match=r"line 2 holds \\ude00") as caught:
        read_sweep(tmp_path, ["r.jsonl"])
    assert (caught.value.file, caught.value.line) == ("r.jsonl", 2)


def test_a_config_json_over_its_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps({**DENSE, "pad": "x" * 5000}))
    monkeypatch.setattr(hf_config, "MAX_BYTES", 4096)
    read = []
    monkeypatch.setattr(os, "read", lambda *a: read.append(a) or b"")
    with pytest.raises(CapplanError, match=r"config.json: the file holds 0.0 MiB; a config.json may hold at most 0 MiB"):
        hf_config.load(tmp_path, "config.json")
    assert read == []                      # refused on its fstat size: nothing read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_never_read(tmp_path):
    os.mkfifo(tmp_path / "config.json")
    (tmp_path / "runs").mkdir()
    os.mkfifo(tmp_path / "runs" / "run.json")
    with pytest.raises(CapplanError, match="config.json is not a regular file"):
        hf_config.load(tmp_path, "config.json")
    with pytest.raises(CapplanError, match="run.json is not a regular file"):
        read_sweep(tmp_path, ["runs/*.json"])
    with pytest.raises(CapplanError, match="not a regular file"):    # reached past the pattern (a race): fstat
        reading.read_limited(tmp_path / "runs" / "run.json", 1000, "a benchmark file")


def test_a_file_that_is_gone_or_grows_while_read_is_refused(tmp_path, monkeypatch):
    with pytest.raises(CapplanError, match="cannot read the file: No such file or directory"):
        reading.read_limited(tmp_path / "gone.json", 1000, "a benchmark file")
    (tmp_path / "run.json").write_text("x" * 2000)
    real = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 10, *real(fd)[7:])))
    with pytest.raises(CapplanError, match=r"the file holds 0.0 MiB; a benchmark file may hold at most 0 MiB"):
        reading.read_limited(tmp_path / "run.json", 1000, "a benchmark file")     # stat said 10 bytes


def test_json_depth_counts_brackets_outside_strings_in_one_pass():
    assert reading.json_depth(b'{"a": "[[[[", "b": [[1], {"c": "\\"]]"}]}') == (3, 1)
    assert reading.json_depth(b'[\n[\n[]]]') == (3, 3)


# -- benchmark files: limits -------------------------------------------------------------

def _write_runs(folder, count, name="runs.jsonl", first=1):
    """``count`` runs at the rates first, first + 1, first + 2, first, ..."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(_run(request_rate=first + i % 3)) + "\n" for i in range(count)))


def test_a_benchmark_file_over_its_size_limit_is_refused_naming_it(tmp_path, monkeypatch):
    _write_runs(tmp_path, 3)
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 1024)
    read = []
    monkeypatch.setattr(os, "read", lambda *a: read.append(a) or b"")
    with pytest.raises(CapplanError, match=r"a benchmark file may hold at most 0 MiB") as caught:
        read_sweep(tmp_path, ["runs.jsonl"])
    assert caught.value.file == "runs.jsonl" and read == []      # refused on its fstat size


def test_json_lines_and_csv_beyond_the_run_limit_are_refused_at_the_first_run_too_many(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_RUNS", 10)
    _write_runs(tmp_path, 11)
    with pytest.raises(CapplanError, match=r"more than 10 JSON objects \(runs\)") as caught:
        read_sweep(tmp_path, ["runs.jsonl"])
    assert (caught.value.file, caught.value.line) == ("runs.jsonl", 11)
    rows = "".join(f"{1 + i},100,20,1,700\n" for i in range(11))
    (tmp_path / "s.csv").write_text("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n" + rows)
    with pytest.raises(CapplanError, match=r"more than 10 data rows") as caught:
        read_sweep(tmp_path, ["s.csv"])
    assert (caught.value.file, caught.value.line) == ("s.csv", 12)


def test_an_import_is_bounded_in_files_bytes_runs_and_rates(tmp_path, monkeypatch):
    for i in range(4):
        _write_runs(tmp_path, 3, f"r{i}.jsonl", first=1 + i)
    for limit, value, message in (("MAX_FILES", 3, "the patterns match 4 files; an import reads at most 3"),
                                  ("MAX_RUNS", 8, "the import holds 0 MiB and 9 runs; an import reads at most"),
                                  ("MAX_IMPORT_BYTES", 2000, "an import reads at most 0 MiB"),
                                  ("MAX_RATES", 5, "the import holds runs at 6 distinct arrival rates; a sweep "
                                                   "table holds at most 5 rows")):
        with monkeypatch.context() as m:
            m.setattr(reading, limit, value)
            with pytest.raises(CapplanError, match=message):
                read_sweep(tmp_path, ["*.jsonl"])


def test_a_run_beyond_the_request_limit_is_refused_at_its_arrays(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_REQUESTS", 2)
    (tmp_path / "r.json").write_text(json.dumps(_run(completed=3, num_prompts=3, ttfts=[0.1] * 3, errors=[""] * 3)))
    with pytest.raises(CapplanError, match="the per-request arrays hold 3 requests; a run may hold at most 2") as caught:
        read_sweep(tmp_path, ["r.json"])
    assert (caught.value.file, caught.value.key) == ("r.json", "ttfts")


def test_a_run_beyond_the_gap_limit_is_refused_at_its_itls(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_GAPS", 5)
    run = _run(completed=2, num_prompts=2, ttfts=[0.1] * 2, itls=[[0.02] * 3] * 2, errors=[""] * 2)
    (tmp_path / "r.json").write_text(json.dumps(run))
    with pytest.raises(CapplanError, match="the per-request itls hold 6 inter-token gaps; a run may hold at most 5") as caught:
        read_sweep(tmp_path, ["r.json"])
    assert (caught.value.file, caught.value.key) == ("r.json", "itls")


def _cpu(action) -> float:
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF)
        action()
        after = resource.getrusage(resource.RUSAGE_SELF)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def test_json_lines_take_time_linear_in_the_objects():
    """2,000 and 8,000 objects: linear work is 4 times more CPU, quadratic 16 times (the
    line count of each object once rescanned the text before it)."""
    text = {n: "".join(json.dumps(_run(request_rate=1 + i % 5)) + "\n" for i in range(n)) for n in (2000, 8000)}
    cpu = {n: _cpu(lambda t=t: files._load_json_documents(t, t.encode(), jsonl=True)) for n, t in text.items()}
    assert cpu[8000] / max(cpu[2000], 1e-3) < 9, cpu
    documents, _ = files._load_json_documents(text[2000], text[2000].encode(), jsonl=True)
    assert [line for _, line in documents[:3]] == [1, 2, 3] and documents[-1][1] == 2000


# -- vllm bench sweep trees, requests that all failed, CSV counts -------------------------

def test_the_summary_of_a_sweep_tree_is_never_counted_as_a_run(tmp_path, write_plan, run_main):
    shutil.copytree(SWEEP_SERVE, tmp_path / "plans" / "sweep")
    path = _plan(tmp_path, write_plan, {"import": "sweep/*/*.json", "select": {"max_num_seqs": 64}})
    code, out, err = run_main("eval", path, "--json")
    assert code == 0, err
    rows = json.loads(out)["scenarios"]["nominal"]["tables"]["load_sweep"]["rows"]
    assert [(r["arrival_rate"], r["runs"], r["sent"]) for r in rows] == [(2, 2, 800), (4, 2, 800)]


def test_an_import_of_summaries_alone_says_to_import_the_runs(tmp_path):
    with pytest.raises(CapplanError, match=r"only vllm bench sweep summaries .* import the runs themselves"):
        read_sweep(SWEEP_SERVE, ["*/summary.json"])


def test_a_run_whose_requests_all_failed_is_a_failing_point_not_a_broken_plan(tmp_path, write_plan, run_main):
    folder = tmp_path / "plans"
    folder.mkdir()
    failed = _run(request_rate=6, completed=0, failed=400, output_throughput=0.0,
                  **{k: 0.0 for k in RUN if k.startswith(("p9", "median_", "mean_", "std_"))})
    for name, run in (("r2.json", _run(request_rate=2)), ("r4.json", _run()), ("r6.json", failed)):
        (folder / name).write_text(json.dumps(run))
    plan = _plan(tmp_path, write_plan, {"import": "r*.json"})
    code, out, err = run_main("eval", plan, "--json")
    assert code == 0, err
    nominal = json.loads(out)["scenarios"]["nominal"]
    six = nominal["tables"]["load_sweep"]["rows"][2]
    assert (six["arrival_rate"], six["completed"], six["sent"], six["ttft_p95"]) == (6, 0, 400, 0)
    assert six["delivered_ok"] is False and six["meets_slo"] is False
    assert nominal["quantities"]["instance_max_rate"]["value"] == 4
    # the record shows its latencies as not measured, never as a 0 that meets the SLO
    code, _, err = run_main("build", plan, "--out", tmp_path / "out")
    assert code == 0, err
    row = next(line for line in (tmp_path / "out" / f"{Path(plan).stem}.md").read_text().splitlines()
               if line.startswith("| FAIL |") and "| 6 |" in line)
    assert row.count("not measured") == 3 and "– TTFT p95" in row and "✓" not in row
    assert "✗ errors" in row and "✗ delivered" in row      # what it did measure: every request failed


def test_a_run_that_records_no_request_is_refused(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(_run(completed=0, failed=0, num_prompts=0)))
    with pytest.raises(CapplanError, match="the run records no request") as caught:
        read_sweep(tmp_path, ["r.json"])
    assert (caught.value.file, caught.value.key) == ("r.json", "completed")


def test_a_csv_row_that_sent_fewer_than_it_completed_is_refused(tmp_path, write_plan, run_main):
    (tmp_path / "plans").mkdir()
    header = "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput,completed,failed,sent\n"
    (tmp_path / "plans" / "s.csv").write_text(header + "1,100,20,1,700,50,0,50\n2,100,20,1,700,50,5,40\n")
    path = _plan(tmp_path, write_plan, {"import": "s.csv"})
    _refused(run_main, path, "s.csv:3: sent: sent (40) is less than completed + failed (50 + 5)")
    (tmp_path / "plans" / "s.csv").write_text(header + "1,100,20,1,700,50,0,\n2,100,20,1,700,50,5,55\n")
    assert run_main("eval", path)[0] == 0                # an empty sent cell is "not recorded"


# -- malformed vLLM and GuideLLM files: the field and what was expected -------------------

def _guidellm(change):
    doc = json.loads(GUIDELLM.read_text())
    change(doc["benchmarks"][0])
    return doc


def _set_strategy(bench, value):
    bench["config"]["strategy"]["type_"] = value


def _set_percentiles(bench, value):
    bench["metrics"]["time_to_first_token_ms"]["successful"]["percentiles"] = value


MALFORMED = {
    "GuideLLM strategy type an object": (lambda: _guidellm(lambda b: _set_strategy(b, {"a": 1})),
                                         "benchmarks[0].config.strategy.type_",
                                         "expected the strategy's type as text"),
    "GuideLLM percentiles a number": (lambda: _guidellm(lambda b: _set_percentiles(b, 5)),
                                      "benchmarks[0].metrics.time_to_first_token_ms.successful.percentiles.p95",
                                      "the summary holds no percentiles"),
    "vLLM completed as text": (lambda: _run(completed="400"), "completed", "expected a number, got '400'"),
    "vLLM rate an object": (lambda: _run(request_rate={"a": 1}), "request_rate", "expected a rate in req/s"),
    "vLLM arrays not lists": (lambda: _run(ttfts=5), "ttfts", "expected a list, got 5"),
    "vLLM summary percentile as text": (lambda: _run(p95_ttft_ms="fast"), "p95_ttft_ms", 'expected a number'),
    "vLLM gaps not a list": (lambda: {**{k: v for k, v in _run().items() if not k.startswith("p9")},
                                      "completed": 1, "num_prompts": 1, "failed": 0, "ttfts": [0.1],
                                      "itls": [{"a": 1}], "output_lens": [3], "errors": [""]},
                             "itls[0]", "expected a list of gaps"),
}


@pytest.mark.parametrize("make, key, message", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_benchmark_file_names_the_field_and_what_was_expected(tmp_path, make, key, message):
    (tmp_path / "bad.json").write_text(json.dumps(make()))
    with pytest.raises(CapplanError) as caught:
        read_sweep(tmp_path, ["bad.json"])
    assert (caught.value.file, caught.value.key) == ("bad.json", key)
    assert message in caught.value.message and "cannot interpret" not in caught.value.message


YAML_BOMB = ("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
             "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nbenchmarks: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n")


@pytest.mark.parametrize("text, message, line", [
    ("benchmarks: [1,\n  2\n", "malformed YAML: did not find expected ',' or ']'", 3),
    ("benchmarks: !!python/object:os.system 1\n", "unsupported YAML: the tag 'tag:yaml.org,2002:python/object:"
     "os.system' is not a plain type (null, bool, int, float, text)", 1),
    ("benchmarks: !custom {a: 1}\n", "unsupported YAML: the tag '!custom' is not a plain mapping or list", 1),
    ("benchmarks: " + "1" * 5000 + "\n", "a number of 5,000 characters; numbers of at most 100 are read", 1),
    ("benchmarks: &x [1, *x]\n", "the YAML alias *x refers to a collection that contains it", 1),
    ("benchmarks: [*x]\n", "the YAML alias *x has no anchor &x before it", 1),
    (YAML_BOMB, "the YAML holds more than 169 values once its aliases (*name) are expanded, more than it has "
     "characters", 3),
    ("benchmarks: " + "[" * 65 + "]" * 65 + "\n", "the YAML nests deeper than 64 levels", 1),
    ("deep: &d " + "[" * 40 + "]" * 40 + "\nbenchmarks: " + "[" * 30 + "*d" + "]" * 30 + "\n",
     "the YAML nests deeper than 64 levels once alias *d is expanded", 2),
    ("benchmarks: []\n---\nbenchmarks: []\n", "the file holds a second YAML document (---); a report is one", 2),
    ("? [1]\n: 2\n", "a key of the YAML is a mapping or list, not text", 1),
], ids=["malformed", "python tag", "custom tag", "huge number", "recursive alias", "unknown alias", "alias bomb",
        "deep", "deep through an alias", "two documents", "list as key"])
def test_a_hostile_yaml_report_is_refused_naming_the_file(tmp_path, text, message, line):
    (tmp_path / "benchmarks.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["benchmarks.yaml"])
    assert info.value.message.startswith(message)
    assert (info.value.file, info.value.line) == ("benchmarks.yaml", line)


@pytest.mark.parametrize("text, message", [
    ("benchmarks: [0b_]\n", "'0b_' is not a valid int: "),
    ("benchmarks: [!!int many]\n", "'many' is not a valid int: "),
    ("benchmarks: [!!bool maybe]\n", "'maybe' is not a valid bool: "),
], ids=["binary without digits", "tagged int", "tagged bool"])
def test_a_yaml_report_value_its_type_cannot_build_is_refused(tmp_path, text, message):
    """A value YAML resolves (or a tag declares) as a number or a boolean but that is none
    is refused at its line, as in a plan, never a traceback."""
    (tmp_path / "benchmarks.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["benchmarks.yaml"])
    assert info.value.message.startswith(message)
    assert (info.value.file, info.value.line) == ("benchmarks.yaml", 1)


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_half_a_surrogate_pair_in_a_yaml_report_is_refused_by_both_loaders(tmp_path, monkeypatch, loader):
    """libyaml refuses the escape "\\uD800"; the pure-Python parser builds a string no output
    could encode, so the report is refused at its line there too, as a plan is."""
    if not hasattr(yaml, loader):
        pytest.skip("PyYAML without libyaml")
    monkeypatch.setattr(yamlevents, "LOADER", getattr(yaml, loader))
    (tmp_path / "benchmarks.yaml").write_text('benchmarks: []\nnote: "x\\uD800y"\n', encoding="utf-8")
    with pytest.raises(CapplanError) as info:
        read_sweep(tmp_path, ["benchmarks.yaml"])
    assert (info.value.file, info.value.line) == ("benchmarks.yaml", 2)


def test_a_yaml_report_reads_as_its_json_twin_with_shared_values_counted_once(tmp_path):
    doc = json.loads(GUIDELLM.read_text(encoding="utf-8"))
    (tmp_path / "benchmarks.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "benchmarks.yaml").write_text("totals: &t {successful: 1}\nalso: *t\n" + "".join(
        f"{key}: {json.dumps(value)}\n" for key, value in doc.items()), encoding="utf-8")
    as_json, as_yaml = read_sweep(tmp_path, ["benchmarks.json", "benchmarks.yaml"])
    assert as_yaml.points == tuple(p.__class__(**{**p.__dict__, "file": "benchmarks.yaml"}) for p in as_json.points)
