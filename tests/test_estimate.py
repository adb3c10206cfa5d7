"""Estimate files (issue 20, item 2): a performance model's predictions imported like a sweep, tagged as
estimates, hashed like any import; ``capplan estimate`` writes them, its tool run in a process of its own
(here a stand-in interpreter: the real tool is exercised in test_estimate_tool.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

from capplan import estimate, load
from capplan.adapters import aiconfigurator as adapter
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.sweeps import estimate as estimate_file
from capplan.loading.sweeps import read_sweep

DATA = ROOT / "tests" / "data" / "estimates"
L8 = DATA / "llama-3.1-8b-1024-256-h100-sxm5-80gb-tp1.estimate.yaml"


def _plan(base_plan, write_plan, tmp_path, estimate_path=L8, **changes):
    """The base plan on the estimate's GPU and model, importing a copy of the estimate file."""
    base_plan.update({"gpu": "h100-sxm5-80gb", "model": "llama-3.1-8b", **changes})
    base_plan["tables"]["load_sweep"] = {"import": "est.estimate.yaml"}
    path = write_plan(base_plan)
    shutil.copy(estimate_path, path.parent / "est.estimate.yaml")
    return path


def _doc(path=L8) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_an_estimate_file_imports_as_a_sweep_tagged_estimated(base_plan, write_plan, tmp_path):
    plan = load(_plan(base_plan, write_plan, tmp_path))
    table = plan.nominal.tables["load_sweep"]
    (imported,) = table.imported
    assert imported.format == "capplan estimate"
    assert imported.sha256 == hashlib.sha256(L8.read_bytes()).hexdigest()
    assert imported.tool == ("capplan estimate", "aiconfigurator 0.12.0, vllm 0.24.0 database (SILICON)")
    assert imported.evidence == ("estimated, not measured: aiconfigurator 0.12.0 predicted llama-3.1-8b on "
                                 "h100-sxm5-80gb, tensor parallel 1 x pipeline parallel 1, weights bf16, KV cache "
                                 "bf16, 1024 prompt and 256 output tokens per request",)
    assert {s for p in imported.points for s in p.sources.values()} == {"estimated"}
    method = imported.points[0].methods[0]
    assert method.startswith("estimated, not measured: aiconfigurator 0.12.0 (vllm 0.24.0 database, SILICON")
    assert "ttft_p95 = its TTFT; tpot_p95 = its TPOT; e2e_p99 = its E2E" in method and "not a percentile" in method
    # the file's points, in the table's base units: rate req/s, TTFT and TPOT s, E2E s
    rows = {round(r["arrival_rate"], 4): r for r in table.rows}
    assert len(rows) == 9
    assert rows[16.3616]["tpot_p95"] == pytest.approx(14.9721e-3)
    assert rows[16.3616]["e2e_p99"] == pytest.approx(3.91159)
    assert rows[16.3616]["ttft_p95"] == pytest.approx(93.7164e-3)
    assert rows[16.3616]["output_throughput"] == pytest.approx(4172.22)
    assert rows[16.3616]["completed"] == 0 and rows[16.3616]["sent"] == 0        # no request was sent


def test_lambda_star_from_an_estimate_is_the_last_predicted_rate_within_every_slo(base_plan, write_plan, tmp_path,
                                                                                  run_main):
    # SLOs of the base plan: TPOT 25 ms (concurrency 128 predicts 22.6, 256 predicts 40.5), E2E 5 s
    # (64 predicts 3.91 s, 128 predicts 5.87 s): λ* is the rate predicted at concurrency 64
    code, out, err = run_main("eval", _plan(base_plan, write_plan, tmp_path), "--json")
    assert code == 0, err
    nominal = json.loads(out)["scenarios"]["nominal"]["quantities"]
    assert nominal["instance_max_rate"]["value"] == pytest.approx(16.3616)


def test_the_record_names_the_estimate_its_hash_and_that_it_is_no_measurement(base_plan, write_plan, tmp_path,
                                                                              run_main):
    path = _plan(base_plan, write_plan, tmp_path)
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert hashlib.sha256(L8.read_bytes()).hexdigest() in record
    assert "estimated, not measured: aiconfigurator 0.12.0 predicted llama-3.1-8b on h100-sxm5-80gb" in record
    assert "not a percentile of any distribution" in record
    assert "measured: model" not in record
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert hashlib.sha256(L8.read_bytes()).hexdigest() in json.dumps(manifest)


def test_a_sweep_of_predictions_reads_as_an_estimate_everywhere(base_plan, write_plan, tmp_path, run_main):
    """Issue 39: a plan whose own load_sweep imports an estimate file said "from a measured open-loop
    load sweep", "rests on measurements: load_sweep" and asked to "run each rate three times"."""
    path = _plan(base_plan, write_plan, tmp_path)
    assert load(path).nominal.tables["load_sweep"].status.status == "estimated"
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert "from a load sweep predicted by aiconfigurator 0.12.0, vllm 0.24.0 database (estimated, not measured" in record
    assert "from a measured open-loop load sweep" not in record
    assert "rests on assumptions: load_sweep" in record and "rests on measurements: load_sweep" not in record
    assert "`load_sweep` table — estimated, not measured: a performance model's predictions" in record
    assert "three times" not in record


def test_an_estimated_sweep_cannot_be_called_measured(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["tables"]["load_sweep"]["status"] = "measured"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert "tables.load_sweep.status: status: measured, but the rows are imported from estimate files" in err


@pytest.mark.parametrize("isl, warning", [
    (4096, "⚠ Token mix: the estimate's requests averaged 4,096 prompt tokens against the plan's class mix 213 "
           "(+1,823%), more than ±25%: its latencies predict other requests than the plan's."),
    (250, None),                         # 250 is 17 % over 213: within a quarter
], ids=["far", "within a quarter"])
def test_an_estimate_of_other_token_lengths_is_warned_of_as_a_sweep_is(base_plan, write_plan, tmp_path, run_main,
                                                                      isl, warning):
    """Issue 37, item 6: an estimate for 4,096-token prompts taken as the λ* of a plan whose mix averages 213."""
    base_plan["tables"]["classes"]["rows"] = [{"name": "one", "weight": 1, "prompt_tokens": 213, "output_tokens": 256}]
    path = _plan(base_plan, write_plan, tmp_path)
    copy = path.parent / "est.estimate.yaml"
    copy.write_text(copy.read_text(encoding="utf-8").replace("isl: 1024", f"isl: {isl}"), encoding="utf-8")
    code, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text(encoding="utf-8")
    assert (warning in record) if warning else ("Token mix" not in record)


def test_an_estimate_of_another_gpu_is_refused(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("gpu: h100-sxm5-80gb", "gpu: h200"), encoding="utf-8")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("tables.load_sweep.import: the estimate predicted GPU h100-sxm5-80gb, not the plan's h200-sxm-141gb: it "
            "is no evidence for this plan (run capplan estimate for the plan's GPU)") in err


def test_an_estimate_of_another_model_is_refused_as_a_sweep_would_be(base_plan, write_plan, tmp_path, run_main):
    path = _plan(base_plan, write_plan, tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("model: llama-3.1-8b", "model: qwen3-8b"),
                    encoding="utf-8")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert "the imported sweep measured model llama-3.1-8b, not the plan's qwen3-8b" in err


def _broken(doc: dict, edit) -> dict:
    edit(doc)
    return doc


BAD = {
    "version": (lambda d: d.update(capplan_estimate=2), "capplan_estimate: expected capplan_estimate: 1"),
    "unknown": (lambda d: d.update(tools="x"), "tools: unknown key; did you mean tool?"),
    "missing": (lambda d: d.pop("tool_version"), "tool_version: missing"),
    "text": (lambda d: d.update(tool=3), "tool: expected text, got 3"),
    "count": (lambda d: d.update(tensor_parallel_size=1.5), "tensor_parallel_size: expected a whole number"),
    "count missing": (lambda d: d.pop("isl"), "isl: missing"),
    "zero": (lambda d: d.update(osl=0), "osl: must be at least 1, got 0"),
    "points": (lambda d: d.update(points=[]), "points: expected a list of predicted points"),
    "point": (lambda d: d["points"].__setitem__(2, [1, 2]), "points[2]: expected a mapping of concurrency"),
    "point key": (lambda d: d["points"][1].update(ttft=3), "points[1].ttft: unknown key; did you mean ttft_ms?"),
    "point missing": (lambda d: d["points"][0].pop("e2e_s"), "points[0].e2e_s: missing"),
    "point number": (lambda d: d["points"][0].update(tpot_ms="fast"), "points[0].tpot_ms: expected a number"),
    "point zero": (lambda d: d["points"][3].update(request_rate_req_s=0),
                   "points[3].request_rate_req_s: must be positive, got 0"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_estimate_file_is_one_message_naming_file_and_key(tmp_path, case):
    edit, message = BAD[case]
    (tmp_path / "bad.estimate.yaml").write_text(yaml.safe_dump(_broken(_doc(), edit), sort_keys=False))
    with pytest.raises(CapplanError) as caught:
        read_sweep(tmp_path, ["bad.estimate.yaml"])
    assert str(caught.value).startswith(f"bad.estimate.yaml: {message}"), str(caught.value)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.estimate.yaml")), ids=lambda p: p.name)
def test_every_committed_estimate_reads_back_and_writes_the_same_bytes(path):
    doc = _doc(path)
    head = {k: v for k, v in doc.items() if k not in ("points", estimate_file.MARK)}
    assert estimate_file.dump(head, doc["points"]) == path.read_text(encoding="utf-8")
    points = estimate_file.parse(doc, path.name, load_slos())
    assert [p.arrival_rate for p in points] == [p["request_rate_req_s"] for p in doc["points"]]


def load_slos():
    from capplan.language.model import standard_model
    return standard_model().slos


def test_numbers_are_written_to_six_digits_and_text_quoted():
    text = estimate_file.dump({"tool": 'a "b"'}, [dict.fromkeys(estimate_file.POINT, 1 / 3)])
    assert 'tool: "a \\"b\\""' in text
    assert "{concurrency: 0.333333, request_rate_req_s: 0.333333," in text
    assert yaml.safe_load(text)["tool"] == 'a "b"'


def test_configurations_are_the_plans_own_gpu_tp_and_formats(base_plan, write_plan):
    base_plan.update(gpu="h200", model={"id": "qwen3-32b", "weights": "nvfp4"})
    base_plan["inputs"].update(gpus_per_replica=2, kv_bytes_per_element="1 B")
    plan = load(write_plan(base_plan))
    assert estimate.configurations(plan) == [estimate.Config("h200-sxm-141gb", 2, "nvfp4", "fp8")]
    assert estimate.chosen(plan, ["b200", "h100"], [1, 4]) == [
        estimate.Config(g, t, "nvfp4", "fp8") for g in ("b200-hgx", "h100-sxm5-80gb") for t in (1, 4)]


def test_the_class_mix_is_reduced_to_its_weighted_means(base_plan, write_plan):
    plan = load(write_plan(base_plan))          # 70 % 32/64 and 30 % 128/256 tokens
    assert estimate.workload(plan) == estimate.Workload(61, 122, "the plan's class mix (2 classes) reduced to its "
                                                        "weighted means, 60.8 prompt and 121.6 output tokens, rounded")
    assert estimate.workload(plan, isl=1024).isl == 1024
    assert estimate.workload(plan, isl=1024).osl == 122


ANSWER = {"versions": {"aiconfigurator": "0.12.0", "aiconfigurator-core": "0.12.0", "aisimulate": ""},
          "stopped": "", "points": [
              {"batch_size": b, "ttft": 50.0 + b, "tpot": 6.0 + b / 10, "request_latency": 1000.0 + 10 * b,
               "seq/s": 0.5 * b, "tokens/s": 100.0 * b, "tokens/s/gpu": 100.0 * b, "concurrency": b,
               "backend_version": "0.24.0"} for b in (1, 2, 4)]}


def _tool(tmp_path, body: str):
    """A stand-in for the tool's interpreter: a script that ignores its arguments."""
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\ncat > /dev/null\n" + body + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_estimate_writes_one_file_per_configuration_deterministically(base_plan, write_plan, tmp_path, run_main):
    tool = _tool(tmp_path, f"echo '{json.dumps(ANSWER)}'")
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, out, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool, "--tp", "1",
                              "--tp", "2")
    assert code == 0, err
    written = [tmp_path / "plans" / "estimates" / f"test-plan-h100-sxm5-80gb-tp{n}.estimate.yaml" for n in (1, 2)]
    assert out.splitlines() == [f"wrote {p}; import it under tables: load_sweep: import:"
                                for p in written]
    first = written[0].read_bytes()
    doc = yaml.safe_load(first)
    assert (doc["tool"], doc["tool_version"], doc["database_version"], doc["isl"], doc["osl"]) == (
        "aiconfigurator", "0.12.0", "0.24.0", 61, 122)
    assert doc["tool_model"] == "meta-llama/Meta-Llama-3.1-8B"
    assert doc["points"][2] == {"concurrency": 4, "request_rate_req_s": 2, "output_tok_s_per_replica": 400,
                                "output_tok_s_per_gpu": 400, "ttft_ms": 54, "tpot_ms": 6.4, "e2e_s": 1.04}
    assert yaml.safe_load(written[1].read_bytes())["tensor_parallel_size"] == 2
    assert run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool, "--tp", "1")[0] == 0
    assert written[0].read_bytes() == first
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool, "--out", written[0])
    assert code == 1                                        # --out names a file, not a folder
    assert f"cannot write the estimate files to {written[0]}: File exists" in err


@pytest.mark.parametrize("body, message", [
    ("exit 4", "aiconfigurator is not installed for {tool}: install capplan[estimate]"),
    ("echo 'ValueError: no such model' >&2; exit 5", "aiconfigurator refused meta-llama/Meta-Llama-3.1-8B on "
     "h100_sxm (vllm, TP 1, ISL 61, OSL 122): ValueError: no such model"),
    ("echo '" + json.dumps({**ANSWER, "points": [], "stopped": "batch size 1: KV cache too small"}) + "'",
     "aiconfigurator predicted no point for llama-3.1-8b on h100-sxm5-80gb TP 1: batch size 1: KV cache too small"),
], ids=["not installed", "refused", "no point"])
def test_a_tool_that_fails_is_one_message(base_plan, write_plan, tmp_path, run_main, body, message):
    tool = _tool(tmp_path, body)
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool)
    assert code == 1
    assert message.format(tool=tool) in err
    assert not (tmp_path / "plans" / "estimates").exists()


def test_a_missing_interpreter_says_how_to_install(base_plan, write_plan, tmp_path, run_main):
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tmp_path / "none")
    assert code == 1
    assert f"aiconfigurator cannot run: no interpreter {tmp_path / 'none'}; install capplan[estimate]" in err
    assert "aisimulate, its successor, is published only on NVIDIA's index" in err


def test_the_worker_refuses_a_tool_that_is_not_installed_before_any_work(run_main, base_plan, write_plan):
    # capplan's own interpreter has neither aiconfigurator nor aisimulate (the extra is not installed here)
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, _, err = run_main("estimate", path, "--with", "aisimulate", "--tool-python", sys.executable)
    assert code == 1
    assert f"aisimulate is not installed for {sys.executable}: install capplan[estimate]" in err


def test_a_tool_that_hangs_is_stopped(tmp_path):
    request = {"model_path": "m", "system": "s", "backend": "vllm", "tp": 1, "isl": 1, "osl": 1}
    with pytest.raises(CapplanError, match="aiconfigurator did not answer within 0 s for m on s"):
        adapter.run(request, "aiconfigurator", str(_tool(tmp_path, "sleep 5")), timeout=0.2)


def test_names_the_tool_lacks_are_refused(base_plan, write_plan):
    with pytest.raises(CapplanError, match="aiconfigurator has no system for GPU mi300x"):
        adapter.system("mi300x")
    with pytest.raises(CapplanError, match="no aiconfigurator model for my-model; give one with --tool-model"):
        adapter.model("my-model", None)
    assert adapter.model("llama-3.3-70b", "x")[0] == "meta-llama/Meta-Llama-3.1-70B"
    assert adapter.model("qwen3-8b", "x", "Qwen/Qwen3-8B-FP8") == ("Qwen/Qwen3-8B-FP8", "given with --tool-model "
                                                                   "for qwen3-8b")
    with pytest.raises(CapplanError, match="aiconfigurator has no weights mode for mxfp4; known: bf16, fp8, nvfp4"):
        adapter.quant(adapter.WEIGHTS, "mxfp4", "weights")
    plan = load(write_plan(base_plan))
    with pytest.raises(CapplanError, match="unknown estimator 'vidur'; known: aiconfigurator, aisimulate"):
        estimate.run(plan, "vidur", configs=[], load=estimate.workload(plan), backend="vllm", out_dir=None)


def test_an_estimate_of_another_parallelism_is_refused_and_of_the_plans_is_read(base_plan, write_plan, tmp_path,
                                                                                run_main):
    tp8 = DATA / "llama-3.3-70b-sharegpt-h200-sxm-141gb-tp8.estimate.yaml"
    base_plan["inputs"].update(gpus_per_replica=2, tpot_p95_slo="50 ms", e2e_p99_slo="30 s")
    path = _plan(base_plan, write_plan, tmp_path, tp8, gpu="h200", model="llama-3.3-70b")
    code, _, err = run_main("eval", path)
    assert code == 1
    assert ("the imported sweep measured 8 GPUs per replica (tensor_parallel_size 8 x pipeline_parallel_size 1), "
            "not the plan's gpus_per_replica 2") in err
    path.write_text(path.read_text(encoding="utf-8").replace("gpus_per_replica: 2", "gpus_per_replica: 8"),
                    encoding="utf-8")
    plan = load(path)
    assert plan.nominal.tables["load_sweep"].imported[0].evidence[0].startswith(
        "estimated, not measured: aiconfigurator 0.12.0 predicted llama-3.3-70b on h200-sxm-141gb, tensor parallel 8")


def test_configurations_add_each_distinct_candidate_and_skip_those_the_tool_cannot_fit(tmp_path, run_main):
    plan_path = ROOT / "plans" / "llama3.3-70b-candidates.yaml"
    configs = estimate.configurations(load(plan_path))
    assert configs[0] == estimate.Config("a100-sxm4-40gb", 8, "bf16", "bf16")      # the plan's own first
    assert len(configs) == len(set(configs)) == 4 + 3 * 4 * 2    # A100 bf16 at 4 TPs (TP8 the own), 3 GPUs x 4 TPs x 2
    assert estimate.Config("b200-hgx", 1, "fp8", "bf16") in configs
    fits = json.dumps(ANSWER)
    empty = json.dumps({**ANSWER, "points": [], "stopped": "batch size 1: OOM"})
    tool = tmp_path / "fake-python"                # predicts nothing at TP 1, as a 70B model at TP 1 on 80 GB
    tool.write_text(f"#!/bin/sh\nreq=$(cat)\ncase \"$req\" in *'\"tp\": 1,'*) echo '{empty}';; "
                    f"*) echo '{fits}';; esac\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    out_dir = tmp_path / "est"
    code, out, err = run_main("estimate", plan_path, "--with", "aiconfigurator", "--tool-python", tool,
                              "--gpu", "h100", "--tp", "1", "--tp", "2", "--out", out_dir)
    assert code == 0, err
    assert [line.split(";")[0] for line in out.splitlines()] == [
        f"wrote {out_dir / 'llama3.3-70b-candidates-h100-sxm5-80gb-tp2.estimate.yaml'}",
        "skipped: aiconfigurator predicted no point for llama-3.3-70b on h100-sxm5-80gb TP 1: batch size 1: OOM"]


def test_when_no_configuration_can_be_predicted_the_command_fails_with_every_reason(tmp_path, run_main):
    tool = _tool(tmp_path, "echo '" + json.dumps({**ANSWER, "points": [], "stopped": "batch size 1: OOM"}) + "'")
    code, _, err = run_main("estimate", ROOT / "plans" / "llama3.3-70b-candidates.yaml", "--with", "aiconfigurator",
                            "--tool-python", tool, "--gpu", "h100", "--tp", "1", "--tp", "2", "--out", tmp_path / "e")
    assert code == 1
    assert ("no configuration could be predicted: aiconfigurator predicted no point for llama-3.3-70b on "
            "h100-sxm5-80gb TP 1: batch size 1: OOM; aiconfigurator predicted no point") in err
    assert not (tmp_path / "e").exists()


def test_candidates_resting_on_a_predicted_sweep_say_so(base_plan, write_plan, tmp_path):
    """Issue 39: with the plan's own sweep an estimate file, its candidate read '(measured)' with no
    band and every other was 'transferred from the measured' configuration."""
    from capplan.analysis import candidates as batch
    from capplan.analysis.pipeline import evaluate_plan

    base_plan["candidates"] = {
        "gpus": ["h100", "h200"], "tp": [1],
        "offers": [{"name": "p5", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"},
                   {"name": "p5e", "gpu": "h200", "gpus_per_node": 8, "node_hourly_cost": "50 USD/h"}]}
    path = _plan(base_plan, write_plan, tmp_path)
    _, evaluations = evaluate_plan(path)
    ev = batch.evaluate(evaluations)
    ref = ev.reference
    assert ev.candidates[ref].label == "h100-sxm5-80gb TP1" and ev.tags[ref] == "estimated"
    assert ev.band[ref] == TOOL_BAND["vllm"]          # a tool's prediction carries the tool's band, measured
    assert ev.basis[ref].startswith("the plan's own sweep, predictions of a performance model (")
    other = next(i for i in range(len(ev.candidates)) if i != ref)
    assert ev.tags[other] == "transferred" and " estimated on h100-sxm5-80gb TP1 " in ev.basis[other]


SLOW = {**ANSWER, "points": [{**p, "tpot": 40.0 + p["batch_size"]} for p in ANSWER["points"]]}


def test_a_configuration_predicted_only_past_the_plans_slo_is_refused(base_plan, write_plan, tmp_path, run_main):
    """Issue 39: the tool returns a point whatever its latency; one that misses the SLO at every batch size
    gives no rate the plan may use, so it is refused, located at the SLO it misses (TPOT 41 ms > 25 ms)."""
    tool = _tool(tmp_path, f"echo '{json.dumps(SLOW)}'")
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool)
    assert code == 1
    line = next(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "tpot_p95_slo" in text)
    assert (f"test-plan.yaml:{line}: inputs.tpot_p95_slo: the tool's prediction for llama-3.1-8b on h100-sxm5-80gb "
            "TP 1 misses the SLO at every batch size it predicted, from batch size 1: TPOT 41 ms over its 25 ms SLO"
            ) in err
    assert "Traceback" not in err and not (tmp_path / "plans" / "estimates").exists()


def test_among_several_configurations_one_past_the_slo_is_skipped_with_why(base_plan, write_plan, tmp_path,
                                                                            run_main):
    tool = tmp_path / "fake-python"                 # TP 1 only meets the SLO past it, TP 2 within it
    tool.write_text(f"#!/bin/sh\nreq=$(cat)\ncase \"$req\" in *'\"tp\": 1,'*) echo '{json.dumps(SLOW)}';; "
                    f"*) echo '{json.dumps(ANSWER)}';; esac\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    code, out, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool, "--tp", "1",
                              "--tp", "2")
    assert code == 0, err
    assert out.splitlines()[1] == ("skipped: plans/test-plan.yaml:8: inputs.tpot_p95_slo: the tool's prediction for llama-3.1-8b on h100-sxm5-80gb TP 1 misses "
                                   "the SLO at every batch size it predicted, from batch size 1: TPOT 41 ms over "
                                   "its 25 ms SLO")


def test_the_pick_is_the_fastest_point_within_every_slo():
    limits = {"ttft_p95_slo": ("ttft", 53.0), "tpot_p95_slo": ("tpot", 25.0)}
    assert adapter.pick(ANSWER["points"], limits, "m")["batch_size"] == 2          # batch 4's TTFT is 54 ms
    with pytest.raises(CapplanError, match="from batch size 1: TTFT 51 ms over its 50 ms SLO$") as caught:
        adapter.pick(ANSWER["points"], {"ttft_p95_slo": ("ttft", 50.0), "tpot_p95_slo": ("tpot", 25.0)}, "m")
    assert caught.value.key == "ttft_p95_slo"


def _recording_tool(tmp_path):
    """A stand-in that keeps the request it was sent (requests.jsonl) and answers ANSWER."""
    tool = tmp_path / "fake-python"
    tool.write_text(f"#!/bin/sh\ncat >> {tmp_path / 'requests.jsonl'}\necho >> {tmp_path / 'requests.jsonl'}\n"
                    f"echo '{json.dumps(ANSWER)}'\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def test_a_moe_model_is_sent_its_experts_split_by_tensor_parallelism(base_plan, write_plan, tmp_path, run_main):
    """The tool requires moe_tp_size or moe_ep_size for a MoE model; capplan has no expert-parallel
    input, so the experts are split as the plan's TP splits every weight: moe_tp_size = TP, moe_ep_size = 1."""
    tool = _recording_tool(tmp_path)
    path = write_plan(base_plan | {"gpu": "h100", "model": "qwen3-30b-a3b"})
    code, _, err = run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool, "--tp", "2")
    assert code == 0, err
    sent = json.loads((tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert (sent["model_path"], sent["tp"], sent["moe_tp"], sent["moe_ep"]) == ("Qwen/Qwen3-30B-A3B", 2, 2, 1)
    written = _doc(tmp_path / "plans" / "estimates" / "test-plan-h100-sxm5-80gb-tp2.estimate.yaml")
    assert "tp_size=2, pp_size=1, moe_tp_size=2, moe_ep_size=1, gemm_quant_mode=" in written["call"]


def test_a_dense_model_is_sent_no_expert_arguments(base_plan, write_plan, tmp_path, run_main):
    tool = _recording_tool(tmp_path)
    path = write_plan(base_plan | {"gpu": "h100", "model": "llama-3.1-8b"})
    assert run_main("estimate", path, "--with", "aiconfigurator", "--tool-python", tool)[0] == 0
    sent = json.loads((tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "moe_tp" not in sent and "moe_ep" not in sent


def test_the_worker_hands_the_expert_arguments_to_the_tool(tmp_path):
    """The worker itself, with a stand-in aiconfigurator package that records the call it gets."""
    (tmp_path / "aiconfigurator" / "cli").mkdir(parents=True)
    (tmp_path / "aiconfigurator" / "__init__.py").write_text("")
    (tmp_path / "aiconfigurator" / "cli" / "__init__.py").write_text("")
    (tmp_path / "aiconfigurator" / "cli" / "api.py").write_text(
        "import json, sys\n"
        "class R:\n    kv_cache_warning = ''\n    backend_version = 'x'\n    def get(self):\n        return {}\n"
        "def cli_estimate(*args, **kwargs):\n    print(json.dumps(kwargs), file=sys.stderr)\n    return R()\n")
    info = tmp_path / "aiconfigurator-0.12.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: aiconfigurator\nVersion: 0.12.0\n")
    request = {"distribution": "aiconfigurator", "model_path": "Qwen/Qwen3-30B-A3B", "system": "h100_sxm",
               "backend": "vllm", "database_mode": "SILICON", "isl": 8, "osl": 8, "tp": 2, "pp": 1, "moe_tp": 2,
               "moe_ep": 1, "batch_sizes": [1]}
    worker = shutil.copy(adapter.WORKER, tmp_path)       # beside the stand-in, which its folder puts first
    done = subprocess.run([sys.executable, worker], input=json.dumps(request), capture_output=True, text=True,
                          check=True)
    called = json.loads(done.stderr.strip().splitlines()[-1])
    assert (called["tp_size"], called["moe_tp_size"], called["moe_ep_size"]) == (2, 2, 1)


TOOL_BAND = {e: float(catalog.lookup("engine", e).tool_bands["aiconfigurator"]["value"]) for e in ("vllm", "trt-llm")}


@pytest.mark.parametrize("header, band", [
    ({}, TOOL_BAND["vllm"]),
    ({"backend": "trtllm", "database_version": "1.3.0rc20"}, TOOL_BAND["trt-llm"]),
    ({"tool": "aisimulate"}, 0.75)], ids=["vllm", "trtllm", "unmeasured tool"])
def test_an_estimated_lambda_carries_the_tools_band_measured_on_its_engine(base_plan, write_plan, tmp_path,
                                                                           header, band):
    """Issue 39: the tool's band is its error measured per engine on the calibration set (engines.yaml
    tool_band), not ±75 % for every tool; a tool capplan has not measured keeps the stated ±75 %."""
    from capplan.analysis import candidates as batch
    from capplan.analysis.pipeline import evaluate_plan

    base_plan["candidates"] = {"gpus": ["h100"], "tp": [1], "offers": [
        {"name": "p5", "gpu": "h100", "gpus_per_node": 8, "node_hourly_cost": "40 USD/h"}]}
    path = _plan(base_plan, write_plan, tmp_path)
    estimated = path.parent / "est.estimate.yaml"
    estimated.write_text(estimate_file.dump({**_doc(), **header}, _doc()["points"]), encoding="utf-8")
    _, evaluations = evaluate_plan(path)
    assert batch.evaluate(evaluations).band[0] == pytest.approx(band)
