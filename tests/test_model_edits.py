"""A team edits ``model/quantities.yaml``: each mistake there is a located message too.

The model is data a team changes (README "Layout"), so an error in it is bad
input, not a bug: exit 1 with the model file, the key and what is wrong.
Each case edits one line of a copy of the standard model, points capplan at
the copy and evaluates a small plan.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT

from capplan.language import model as model_module

EDITS = {   # case: (text in quantities.yaml, its replacement, fragment of the message)
    "a quantity defined twice": (
        "  cost:\n    title: Cost\n    quantities:\n",
        "  cost:\n    title: Cost\n    quantities:\n      rho_target: {unit: \"\"}\n",
        "groups.cost.quantities.rho_target: quantity 'rho_target' is defined twice"),
    "an SLO template without its section": (
        "slo_percentiles:\n  limit:", "slo_percentilez:\n  limit:",
        "for_each_slo needs a slo_percentiles section"),
    "an unknown SLO placeholder": (
        "description: ${What}, ${nth} percentile", "description: ${Whot}, ${nth} percentile",
        "unknown ${Whot}"),
    "a malformed SLO placeholder": (
        "description: ${What}, ${nth} percentile", "description: ${What}, $ percentile",
        "Invalid placeholder in string"),
    "an SLO section naming no template": (
        "  limit: slo_limits", "  limit: slo_limitz", "slo_percentiles names 'slo_limitz', which is no for_each_slo quantity"),
    "a table named like a quantity": (
        "tables:\n  classes:", "tables:\n  rho_target:", "tables.rho_target: table 'rho_target' has the name of a quantity"),
    "an unknown kind": (
        "kind: money, description: Price of one node", "kind: cash, description: Price of one node",
        "tables.deployments.node_hourly_cost: kind must be one of number, money, bool, text, got 'cash'"),
    "an unknown unit": (
        "unit: GiB/GPU", "unit: GiB/GPU^99", "quantities.gpu_memory_reported.unit: unit 'GiB/GPU^99' has the exponent '99'"),
    "a formula mapping over two switches": (
        "        formula:\n          attention:", "        formula:\n          sizing: x\n          attention:",
        "quantities.kv_bytes_per_token.formula: a formula mapping must name exactly one switch"),
    "a formula over an unknown switch": (
        "        formula:\n          attention:", "        formula:\n          atention:",
        "quantities.kv_bytes_per_token.formula: unknown switch 'atention'"),
    "a switch case without a formula": (
        "            mla: per_token(layers * (kv_lora_rank + qk_rope_head_dim) * per_gpu(kv_latent_copies) * kv_bytes_per_element)\n", "",
        "quantities.kv_bytes_per_token.formula: no formula for attention: mla"),
    "a switch case the quantity exists under without a formula": (   # littles_law it need not have (when:)
        "            estimate: estimated_max_rate\n", "",
        "quantities.instance_max_rate.formula: no formula for sizing: estimate"),
    "a derived quantity with a tag": (
        "        formula: peak_arrival_rate / peak_to_average_ratio\n",
        "        formula: peak_arrival_rate / peak_to_average_ratio\n        tag: policy\n",
        "quantities.avg_arrival_rate: a derived quantity takes no tag"),
    "a derived quantity with a default": (
        "        formula: peak_arrival_rate / peak_to_average_ratio\n",
        "        formula: peak_arrival_rate / peak_to_average_ratio\n        default: 1\n",
        "quantities.avg_arrival_rate: a derived quantity takes no default"),
    "unmeasured: that is not a number": (
        "        unmeasured: 0\n", "        unmeasured: none\n",
        "quantities.compliant_share.unmeasured: expected the number that means 'not measured', got 'none'"),
    "an unknown field": (
        "        symbol: PAR\n", "        symbol: PAR\n        colour: red\n",
        "quantities.peak_to_average_ratio: unknown field(s) colour"),
    "when: over an unknown switch": (
        "        when: {attention: [mha, gqa]}", "        when: {atention: [mha, gqa]}",
        "quantities.kv_heads: unknown switch 'atention' in when:"),
    "an unknown tag": (
        "        tag: assumption\n        symbol: PAR", "        tag: guess\n        symbol: PAR",
        "quantities.peak_to_average_ratio.tag: tag must be one of fact, policy, measurement, assumption, got 'guess'"),
    "an operator formulas do not have": (
        "formula: peak_arrival_rate / peak_to_average_ratio", "formula: ~peak_arrival_rate",
        "quantities.avg_arrival_rate.formula: "),
    "a comparison formulas do not have": (
        "formula: '${metric}_${key} <= ${metric}_${key}_slo'", "formula: '${metric}_${key} is ${metric}_${key}_slo'",
        "tables.load_sweep.ttft_p95_ok.formula: "),
    "nominal() of an expression": (
        "nominal(deployed_gpus)", "nominal(deployed_gpus + 1)", "nominal() takes a quantity or column name"),
    "adding time to FLOPs": (
        "formula: prefill_time_bound + prefill_overhead", "formula: prefill_time_bound + prefill_flops",
        "ttft_bound = prefill_time_bound + prefill_flops: cannot add"),
    "a variable exponent with a unit": (
        "formula: peak_arrival_rate / peak_to_average_ratio", "formula: peak_arrival_rate ** peak_to_average_ratio",
        "a power with a variable exponent needs dimensionless operands"),
    "a formula over a quantity of the other sizing method": (
        "formula: peak_arrival_rate / peak_to_average_ratio", "formula: decode_throughput / peak_to_average_ratio",
        "avg_arrival_rate uses 'decode_throughput', which exists only with sizing: littles_law"),
    "a formula over a quantity one of two features brings": (
        "formula: peak_arrival_rate / peak_to_average_ratio", "formula: peak_arrival_rate / hidden_size",
        "avg_arrival_rate uses 'hidden_size', which exists only with memory_accounting: engine or candidates: ranked"),
    "a cycle": (
        "formula: avg_arrival_rate * days_per_month", "formula: avg_arrival_rate * monthly_output_tokens",
        "cycle"),
    "an if() whose chosen branch divides by zero": (
        "formula: if(completed + failed > 0, failed / (completed + failed), 0)",
        "formula: if(completed + failed >= 0, failed / (completed + failed), 0)",
        "division by zero in the branch if() chose"),
}


SEEN_IN_A_PLAN = {"a cycle", "an if() whose chosen branch divides by zero"}


@pytest.fixture
def edited_model(tmp_path, monkeypatch):
    """Point capplan at an edited copy of model/ for one test."""
    folder = tmp_path / "model"
    shutil.copytree(ROOT / "model", folder)

    def edit(old: str, new: str) -> None:
        path = folder / "quantities.yaml"
        text = path.read_text(encoding="utf-8")
        assert old in text, f"the standard model no longer holds {old!r}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        monkeypatch.setattr(model_module, "model_dir", lambda: folder)
        model_module.standard_model.cache_clear()

    yield edit
    model_module.standard_model.cache_clear()


@pytest.mark.parametrize("case", list(EDITS))
def test_model_mistake_is_a_located_message(case, edited_model, base_plan, write_plan, run_main, tmp_path,
                                            monkeypatch):
    old, new, expected = EDITS[case]
    edited_model(old, new)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1, err
    first = err.splitlines()[0]
    # a cycle and a branch that divides by zero show while a plan is evaluated: they name the plan
    assert first.startswith("error: plans/test-plan.yaml" if case in SEEN_IN_A_PLAN else "error: model/quantities.yaml")
    assert expected in first
