"""A new user's first hour (issue 26): init, build, check, catalog, aliases, clear first messages.

Scripted as a newcomer types it, in an empty git repository: ``capplan init`` writes a plan
that builds at once, ``build`` and ``check`` pass on it, the catalog lists what a plan may
name, a common name (``gpu: h100``) resolves, an engine's flag name points at capplan's
input, and every missing input is named in one message.
"""

from __future__ import annotations

import pytest
import yaml

from capplan.engine.model import standard_model
from capplan.errors import CapplanError
from capplan.loading import catalog
from capplan.loading.plan import load


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
