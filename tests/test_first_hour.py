"""A new user's first hour (issue 26): init, build, check, catalog, aliases, clear first messages.

Scripted as a newcomer types it, in an empty git repository: ``capplan init`` writes a plan
that builds at once, ``build`` and ``check`` pass on it, the catalog lists what a plan may
name, a common name (``gpu: h100``) resolves, an engine's flag name points at capplan's
input, and every missing input is named in one message.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.plan import load
from capplan.review import schema


@pytest.fixture
def repo(tmp_path):
    """An empty git repository, as ``git init`` leaves it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_version(run_main, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main("--version")
    assert stop.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("capplan ") and out.split()[1][0].isdigit()


def test_first_steps_in_an_empty_git_repository(repo, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    code, out, err = run_main("init", "--gpu", "h100", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--tp", "1",
                              "--peak", "12", cwd=repo)
    assert (code, err) == (0, "")
    plan_path = repo / "plans" / "llama-3.1-8b-h100-sxm5-80gb.yaml"
    assert f"wrote {plan_path.relative_to(repo)}" in out and "written .gitattributes" in out

    text = plan_path.read_text()
    plan = yaml.safe_load(text)
    assert plan["gpu"] == "h100-sxm5-80gb" and plan["model"] == "llama-3.1-8b"     # canonical ids written
    assert '# you asked for "h100"' in text
    assert plan["sizing"] == "littles_law"
    assert plan["inputs"]["peak_arrival_rate"]["value"] == "12 req/s"
    assert plan["inputs"]["e2e_p99_slo"]["value"] == "30 s"                        # stated: it has no default
    pending = [name for name, spec in plan["inputs"].items() if isinstance(spec, dict) and spec.get("status") == "pending"]
    assert sorted(pending) == ["decode_throughput", "hbm_efficiency", "tensor_efficiency"]
    lines = text.splitlines()
    for name in pending:                                   # a TODO comment on every pending measurement
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{name}:"))
        assert lines[at - 1].strip().startswith("# TODO measure:"), name
    policies = {n: s for n, s in plan["inputs"].items() if isinstance(s, dict) and s.get("tag") == "policy"}
    assert policies["gpu_memory_utilization"] == {"value": 0.9, "tag": "policy",
                                                  "source": "vLLM default 0.90 (0.92 in 2026 releases)"}
    assert all(spec["source"] for spec in policies.values())
    assert "weight_bytes_per_param" not in plan["inputs"]   # the catalog's checkpoint says it; never overridden
    assert schema.validate(plan) == []
    assert (repo / ".gitattributes").read_text().splitlines()[1:] == ["out/** linguist-generated=true",
                                                                     "out/*.xlsx binary"]

    code, out, err = run_main("build", cwd=repo)
    assert code == 0, err
    stem = plan_path.stem
    for suffix in (".md", ".json", ".xlsx"):
        assert (repo / "out" / f"{stem}{suffix}").stat().st_size > 0
    record = (repo / "out" / f"{stem}.md").read_text()
    assert "h100-sxm5-80gb" in record and "⚠" in record            # canonical id; pending marked
    results = json.loads((repo / "out" / f"{stem}.json").read_text())
    active = results["scenarios"]["nominal"]["quantities"]["active_gpus"]["value"]
    assert isinstance(active, (int, float)) and active >= 1

    code, out, err = run_main("check", cwd=repo)
    assert code == 0, err
    assert "1 plan(s) OK" in out
    assert "3 pending measurements" in err and "decode_throughput" in err

    code, out, err = run_main("init", "--gpu", "h100", "--model", "llama-3.1-8b", cwd=repo)     # never overwrites
    assert code == 1 and "exists; capplan init never overwrites a plan" in err
    assert yaml.safe_load(plan_path.read_text()) == plan


def test_init_keeps_an_existing_gitattributes_and_refuses_a_plan_that_cannot_build(repo, run_main):
    (repo / ".gitattributes").write_text("*.png binary")
    code, out, err = run_main("init", "--model", "llama-3.1-70b", "--gpu", "l40s", cwd=repo)
    assert code == 1
    assert "would not build, so none was written: the model does not fit" in err and "--tp" in err
    assert not list((repo / "plans").glob("*.yaml"))
    code, out, err = run_main("init", "--model", "llama-3.1-70b", "--gpu", "h100", "--tp", "4", "--name", "big",
                              cwd=repo)
    assert code == 0, err
    assert (repo / ".gitattributes").read_text().splitlines() == [
        "*.png binary", "# capplan: generated outputs fold in pull requests; the workbook is binary",
        "out/** linguist-generated=true", "out/*.xlsx binary"]
    assert yaml.safe_load((repo / "plans" / "big.yaml").read_text())["inputs"]["gpus_per_replica"]["value"] == 4
    code, out, err = run_main("init", "--gpu", "h100", "--tp", "4", "--name", "again", cwd=repo)
    assert code == 0 and ".gitattributes" not in out          # already current: left as it is


def test_catalog_lists_ids_facts_and_sources(run_main):
    code, out, err = run_main("catalog", "gpus", "--json")
    assert code == 0, err
    doc = json.loads(out)
    by_id = {e["id"]: e for e in doc["entries"]}
    assert list(by_id) == sorted(by_id) == catalog.ids("gpu")
    h100 = by_id["h100-sxm5-80gb"]
    assert h100["facts"]["hbm_bandwidth"]["value"] == 3350
    assert h100["facts"]["bf16_peak_flops"]["unit"] == "TFLOP/s/GPU"
    assert "glennklockwood" in h100["facts"]["hbm_bandwidth"]["source"]
    assert "h100" in h100["aliases"]
    assert run_main("catalog", "gpus", "--json")[1] == out                         # deterministic

    code, out, err = run_main("catalog", "gpus", "H100")
    assert code == 0
    table = out.split("\n\n")[0].splitlines()
    assert [row.split()[0] for row in table[1:]] == ["h100-pcie-80gb", "h100-sxm5-80gb"]
    assert "3,350" in table[2] and "989" in table[2]
    assert "Sources (model/catalog/gpus.yaml):" in out

    code, out, err = run_main("catalog", "models", "llama-3.1-8b-instruct", "--json")
    (entry,) = json.loads(out)["entries"]
    assert entry["id"] == "llama-3.1-8b" and entry["attention"] == "gqa"
    assert {k: entry["facts"][k]["value"] for k in ("parameter_count", "layers", "kv_heads", "head_dim")} == \
        {"parameter_count": 8030261248, "layers": 32, "kv_heads": 8, "head_dim": 128}

    code, out, err = run_main("catalog", "gpus", "tpu-v5")
    assert code == 1 and "no gpu in the catalog matches 'tpu-v5'" in err


@pytest.mark.parametrize("kind, written, resolved", [
    ("gpu", "h100", "h100-sxm5-80gb"), ("gpu", "H100 SXM", "h100-sxm5-80gb"), ("gpu", "NVIDIA H100 80GB HBM3",
                                                                              "h100-sxm5-80gb"),
    ("gpu", "h200", "h200-sxm-141gb"), ("gpu", "b200", "b200-hgx"), ("gpu", "AMD Instinct MI300X", "mi300x"),
    ("model", "llama-3.1-8b-instruct", "llama-3.1-8b"), ("model", "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("model", "meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b"), ("model", "Qwen/Qwen3-32B", "qwen3-32b"),
])
def test_common_names_resolve_to_one_entry(kind, written, resolved):
    assert catalog.resolve(kind, written) == resolved
    assert catalog.lookup(kind, written).id == resolved


@pytest.mark.parametrize("written, suggested", [
    ("a100", ["a100-sxm4-40gb", "a100-sxm4-80gb"]),            # ambiguous: both parts, neither chosen
    ("h100-80gb", ["h100-pcie-80gb", "h100-sxm5-80gb"]),
    ("h200-141gb", ["h200-sxm-141gb"]),
])
def test_a_near_miss_suggests_the_parts_it_names(written, suggested):
    assert catalog.resolve("gpu", written) is None
    assert catalog.suggestions("gpu", written) == suggested
    with pytest.raises(CapplanError) as err:
        catalog.lookup("gpu", written)
    assert f"did you mean {', '.join(suggested)}?" in err.value.message


def test_no_two_entries_share_a_name():
    for kind in catalog.KINDS:
        shared = {key: ids for key, ids in catalog._index(kind).items() if len(ids) > 1}
        assert not shared, f"catalog names that mean two {kind}s: {shared}"


def test_an_alias_in_a_plan_resolves_and_the_record_names_the_canonical_id(write_plan, base_plan):
    base_plan["gpu"] = "h100"
    base_plan["model"] = {"id": "meta-llama/Meta-Llama-3-8B-Instruct"}
    plan = load(write_plan(base_plan), standard_model())
    assert (plan.gpu.id, plan.model_entry.id) == ("h100-sxm5-80gb", "llama-3-8b")
    assert plan.nominal.inputs["hbm_bandwidth"].source.startswith("catalog h100-sxm5-80gb:")


@pytest.mark.parametrize("flag, pointer", [
    ("tensor_parallel_size", "tensor_parallel_size is vLLM's flag; capplan's input is gpus_per_replica "
                             "(GPUs per model replica: the tensor × pipeline parallel degree)"),
    ("pipeline_parallel_size", "capplan's input is gpus_per_replica"),
    ("max_model_len", "max_model_len is vLLM's flag; capplan's input is the classes table"),
    ("mem_fraction_static", "SGLang's flag; capplan's input is gpu_memory_utilization"),
])
def test_an_engine_flag_points_at_capplans_input(flag, pointer, write_plan, base_plan, run_main):
    base_plan["inputs"][flag] = 2
    path = write_plan(base_plan)
    code, out, err = run_main("build", path)
    assert code == 1
    assert f"test-plan.yaml:" in err and f"inputs.{flag}: unknown quantity '{flag}': " in err
    assert pointer in err and "did you mean" not in err


def test_an_engine_flag_that_is_an_input_of_other_plans_points_too(write_plan, base_plan):
    base_plan["inputs"]["max_num_seqs"] = 64
    with pytest.raises(CapplanError) as err:
        load(write_plan(base_plan), standard_model())
    assert "'max_num_seqs' is not part of a plan with memory_accounting: reserve; max_num_seqs is vLLM's flag; " \
           "capplan's input is decode_batch" in err.value.message


def test_every_missing_input_in_one_message(write_plan, base_plan, run_main):
    base_plan["sizing"] = "littles_law"
    del base_plan["tables"]["load_sweep"]
    for name in ("e2e_p99_slo", "ttft_p95_slo"):
        del base_plan["inputs"][name]
    code, out, err = run_main("build", write_plan(base_plan))
    assert code == 1
    assert err.count("\n") == 2                                     # one error line, then the summary line
    assert "missing 3 inputs, none of which has a default; add each under inputs: " in err
    for name, unit in (("ttft_p95_slo", "ms"), ("e2e_p99_slo", "s"), ("decode_throughput", "token/s")):
        assert f"'{name}' (" in err and f"Unit: {unit})" in err
    assert err.index("'ttft_p95_slo'") < err.index("'e2e_p99_slo'") < err.index("'decode_throughput'")


@pytest.mark.parametrize("name", ["../escape", "sub/plan", ".hidden"])
def test_init_writes_only_into_plans(name, repo, run_main, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main("init", "--name", name, cwd=repo)
    assert stop.value.code == 2
    assert f"expected a plain name such as 'chat-h100', got '{name}'" in capsys.readouterr().err
    assert not (repo / "plans").exists() and not (repo / "escape.yaml").exists()
