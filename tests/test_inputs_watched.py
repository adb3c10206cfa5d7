"""Every file a plan reads is an input of its build (issue 37, items 1 and 2).

A build records each file a plan read with the hash of the bytes read, whatever
section read it (a traffic CSV, a sweep or estimate file, a config.json), and
the model and templates as a whole. Each test builds a small project, edits one
file of a kind after the build, and asks ``check`` (with a cache of this
machine's compiles, as after a build here, and with none, as CI on a fresh
machine): it must fail naming the file, and ``build`` must rebuild. Two
checkouts of one plan text that read different files do not share a cache
entry.
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from conftest import BASE_PLAN, ROOT

from capplan import manifest, resources

CANDIDATES = ROOT / "plans" / "llama3.3-70b-candidates.yaml"
ESTIMATE = "estimates/llama-3.3-70b-sharegpt-h200-sxm-141gb-tp2.estimate.yaml"
SWEEP_CSV = ("arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n"
             "2,85,12.1,1.82,300\n4,110,13.4,2.15,590\n6,1500,15.2,2.68,860\n")


def _traffic(folder):
    (folder / "plans" / "hourly.csv").write_text("time,arrival_rate\n0,10\n1,40\n2,53\n3,20\n", encoding="utf-8")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    del plan["inputs"]["peak_arrival_rate"], plan["inputs"]["peak_to_average_ratio"]
    plan["traffic"] = {"file": "hourly.csv", "source": "a test"}
    return plan, "plans/hourly.csv", lambda text: text.replace("2,53", "2,76")


def _sweep(folder):
    (folder / "plans" / "sweep.csv").write_text(SWEEP_CSV, encoding="utf-8")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan["tables"]["load_sweep"] = {"import": "sweep.csv"}
    return plan, "plans/sweep.csv", lambda text: text.replace("4,110,13.4", "4,910,13.4")


def _estimate(folder):
    shutil.copytree(ROOT / "plans" / "estimates", folder / "plans" / "estimates")
    plan = yaml.safe_load(CANDIDATES.read_text(encoding="utf-8"))
    return plan, f"plans/{ESTIMATE}", lambda text: text.replace("ttft_ms: ", "ttft_ms: 1", 1)


def _config(folder):
    config = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096, "intermediate_size": 14336,
              "vocab_size": 128256, "torch_dtype": "bfloat16"}
    (folder / "plans" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    plan = yaml.safe_load(yaml.safe_dump(BASE_PLAN))
    plan["model"] = {"config": "config.json"}
    plan["inputs"]["parameter_count"] = 8_030_261_248
    return plan, "plans/config.json", lambda text: text.replace('"num_key_value_heads": 8', '"num_key_value_heads": 4')


KINDS = {"traffic file": _traffic, "sweep file": _sweep, "estimate file": _estimate, "config.json": _config}


@pytest.fixture
def project(tmp_path, monkeypatch, tmp_path_factory):
    (tmp_path / ".git").mkdir()
    (tmp_path / "plans").mkdir()
    monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("CAPPLAN_TODAY", "2026-12-01")
    return tmp_path


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_the_plan_reads_edited_after_a_build_fails_check_and_is_rebuilt(project, run_main, monkeypatch, kind):
    plan, name, edit = KINDS[kind](project)
    (project / "plans" / "p.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    code, _, err = run_main("build")
    assert code == 0, err
    assert name in json.loads((project / "out" / manifest.NAME).read_text())["plans"]["p"]["inputs"]
    assert run_main("check")[0] == 0
    path = project / name
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    for cache in ("warm", "empty"):
        if cache == "empty":
            monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(project.parent / f"{project.name}-empty-cache"))
        code, _, err = run_main("check")
        assert code == 1, err
        assert f"run `capplan build plans/p.yaml` (since the last build: {name} changed)" in err
    code, out, _ = run_main("build")
    assert code == 0 and "plans/p.yaml: wrote out/p." in out
    assert run_main("check")[0] == 0


@pytest.mark.parametrize("folder", ["model", "templates"])
def test_an_edited_catalog_entry_or_template_is_a_change(project, run_main, monkeypatch, folder):
    copies = project.parent / f"{project.name}-data"
    for name in ("model", "templates"):
        shutil.copytree(getattr(resources, f"{name}_dir")(), copies / name)
    monkeypatch.setattr(resources, "_data_dir", lambda name: copies / name)
    monkeypatch.setattr(manifest, "data_files", manifest.data_files.__wrapped__)       # read afresh each time
    (project / "plans" / "p.yaml").write_text(yaml.safe_dump(BASE_PLAN, sort_keys=False), encoding="utf-8")
    assert run_main("build")[0] == 0
    edited = copies / ("model/catalog/gpus.yaml" if folder == "model" else "templates/record.md.j2")
    assert edited.is_file()
    edited.write_text(edited.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, _, err = run_main("check")
    assert code == 1
    assert f"{folder}/{edited.relative_to(copies / folder).as_posix()} changed" in err


def test_two_checkouts_of_one_plan_with_other_traffic_files_each_pass_check(tmp_path, run_main, monkeypatch):
    monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(tmp_path / "shared-cache"))
    folders = [tmp_path / "first", tmp_path / "second"]
    for peak, folder in zip((53, 76), folders):
        (folder / "plans").mkdir(parents=True)
        (folder / ".git").mkdir()
        plan, _, _ = _traffic(folder)
        (folder / "plans" / "hourly.csv").write_text(f"time,arrival_rate\n0,10\n1,{peak}\n2,20\n", encoding="utf-8")
        (folder / "plans" / "p.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
        assert run_main("build", cwd=folder)[0] == 0
    for folder in folders:
        code, out, err = run_main("check", cwd=folder)
        assert code == 0, err
        assert "out/ current" in out or "OK" in out
