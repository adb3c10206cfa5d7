"""Expert parallelism for mixture-of-experts models (issue #40): the experts split, not replicated.

The rule (vLLM docs, Expert Parallel Deployment: EP_SIZE = TP_SIZE x DP_SIZE): a replica of
TP x EP GPUs runs EP data-parallel attention ranks of TP GPUs each; every rank holds its own
copy of the non-expert weights (attention, embeddings, routers), and the routed experts are
split over all TP x EP GPUs. Each MoE layer sends a token's hidden state to the GPUs of its
experts and back (dispatch and combine, an all-to-all).
"""

from __future__ import annotations

import copy

import pytest
from conftest import BASE_PLAN
from test_memory_engine import engine_plan, evaluated

GiB = 2 ** 30
# gpt-oss-120b (model/catalog/models.yaml): 116.83 B parameters, of which the routed experts
# are 128 experts x 36 layers x (3 x 2880 x 2880 weights + 3 x 2880 biases)
GPT_OSS_PARAMS = 116_830_000_000
GPT_OSS_EXPERTS = 128 * 36 * (3 * 2880 * 2880 + 3 * 2880)
MXFP4 = 0.5588      # B per parameter, the catalog's checkpoint average


def _gpt_oss(write_plan, name, ep, gpus, **inputs):
    path = engine_plan(write_plan, gpu="b200-hgx", model="gpt-oss-120b", name=name, gpus_per_replica=f"{gpus} GPU",
                       weight_bytes_per_param=f"{MXFP4} B", **inputs)
    return _with(path, expert_parallel="split", ep=ep)


def _with(path, expert_parallel, ep):
    import yaml
    plan = yaml.safe_load(path.read_text())
    plan["expert_parallel"] = expert_parallel
    plan["inputs"]["expert_parallel_size"] = ep
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def test_per_gpu_weights_of_gpt_oss_at_ep1_and_ep8_by_hand(write_plan):
    """EP 1 on one GPU holds every weight; TP1 x EP8 holds 8 copies of the 2.13 B non-expert
    parameters and one of the 114.7 B expert parameters over 8 GPUs."""
    dense = GPT_OSS_PARAMS - GPT_OSS_EXPERTS
    assert dense == 2_128_401_280
    one = evaluated(_gpt_oss(write_plan, "ep1", 1, 1))
    eight = evaluated(_gpt_oss(write_plan, "ep8", 8, 8))
    assert one.display("weight_memory_per_gpu") == pytest.approx(GPT_OSS_PARAMS * MXFP4 / GiB)     # 60.80 GiB
    per_gpu = (dense * MXFP4 + GPT_OSS_EXPERTS * MXFP4 / 8) / GiB                                   # 8.57 GiB
    assert eight.display("weight_memory_per_gpu") == pytest.approx(per_gpu)
    assert eight.display("weight_memory") == pytest.approx(8 * per_gpu)
    assert per_gpu == pytest.approx(8.570, abs=1e-3)


def test_tp8_without_expert_parallelism_keeps_its_formula_and_value(write_plan):
    """A plan without expert_parallel: has no such switch: the replicated formula, 60.8 GiB over 8 GPUs."""
    path = engine_plan(write_plan, gpu="b200-hgx", model="gpt-oss-120b", name="tp8", gpus_per_replica="8 GPU",
                       weight_bytes_per_param=f"{MXFP4} B")
    e = evaluated(path)
    assert "expert_parallel" not in e.plan.switches
    assert e.display("weight_memory") == pytest.approx(GPT_OSS_PARAMS * MXFP4 / GiB)


def test_kv_per_token_counts_the_heads_of_one_data_parallel_rank(write_plan):
    """Qwen3-30B-A3B has 4 KV heads: TP4 x EP2 keeps 1 head per GPU of a rank's 4, as TP4 does,
    where 8 tensor-parallel GPUs would replicate the 4 heads to 8."""
    base = dict(gpu="h100-sxm5-80gb", model="qwen3-30b-a3b")
    tp4 = evaluated(engine_plan(write_plan, name="tp4", gpus_per_replica="4 GPU", **base))
    tp8 = evaluated(engine_plan(write_plan, name="tp8", gpus_per_replica="8 GPU", **base))
    ep = evaluated(_with(engine_plan(write_plan, name="ep", gpus_per_replica="8 GPU", **base), "split", 2))
    assert ep.display("kv_bytes_per_token") == pytest.approx(tp4.display("kv_bytes_per_token"))
    assert tp8.display("kv_bytes_per_token") == pytest.approx(2 * tp4.display("kv_bytes_per_token"))


def test_all_to_all_per_decode_step_by_hand(write_plan):
    """gpt-oss-120b TP1 x EP8 on B200s at decode_batch 256: each request's token goes to 4 experts
    and back in each of 36 layers, 2 x 36 x 4 x 2880 x 2 B = 1.659 MB, over 8 GPUs x 900 GB/s (B200's
    NVLink 5, one way) x 0.8."""
    e = evaluated(_gpt_oss(write_plan, "a2a", 8, 8, decode_batch=256))
    per_request = 2 * 36 * 4 * 2880 * 2 / (8 * 900e9 * 0.8)           # s/request
    assert e.display("expert_all_to_all_time") == pytest.approx(per_request * 1e3)   # ms/request: 0.288 us
    read = e.display("decode_bytes_per_step") * 1e9 / (7700e9 * 8 * e.display("hbm_efficiency"))
    assert e.display("decode_step_time_bound") == pytest.approx((read + 256 * per_request) * 1e3)


def test_across_nodes_the_all_to_all_runs_at_the_nic(write_plan):
    e = evaluated(_gpt_oss(write_plan, "wide", 16, 16, max_nodes_per_replica=2))
    assert e.display("expert_all_to_all_bandwidth") == pytest.approx(50)
    assert e.display("expert_all_to_all_time") == pytest.approx(2 * 36 * 4 * 2880 * 2 / (16 * 50e9 * 0.8) * 1e3)


def test_expert_parallelism_on_a_dense_model_is_refused_by_name(write_plan, run_main):
    path = _with(engine_plan(write_plan, name="dense"), "split", 2)
    code, out, err = run_main("build", path)
    assert code == 1
    assert "model 'llama-3-8b' is dense" in err and "expert_parallel" in err and "Traceback" not in err


def test_expert_parallelism_needs_engine_accounting(write_plan, run_main):
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="b200-hgx", model="gpt-oss-120b", expert_parallel="split")
    code, out, err = run_main("build", write_plan(plan, "reserve"))
    assert code == 1
    assert "needs memory_accounting: engine" in err and "Traceback" not in err


def test_an_mla_latent_is_kept_by_the_tokens_own_rank_only(write_plan):
    """DeepSeek-V3 caches one latent per token on each tensor-parallel GPU: TP8 keeps 8 copies,
    TP1 x EP8 one (each data-parallel rank caches its own requests)."""
    base = dict(gpu="h200-sxm-141gb", model="deepseek-v3", gpus_per_replica="8 GPU", weight_bytes_per_param="1 B")
    tp8 = evaluated(engine_plan(write_plan, name="tp8", **base))
    ep8 = evaluated(_with(engine_plan(write_plan, name="ep8", expert_parameter_count=656_000_000_000, **base),
                          "split", 8))
    latent = 61 * (512 + 64) * 2 / 1024          # KiB per token, one copy
    assert tp8.display("kv_bytes_per_token") == pytest.approx(8 * latent)
    assert ep8.display("kv_bytes_per_token") == pytest.approx(latent)


def test_gpus_per_replica_must_hold_whole_data_parallel_ranks(write_plan, run_main):
    path = engine_plan(write_plan, gpu="b200-hgx", model="gpt-oss-120b", name="uneven", gpus_per_replica="6 GPU")
    code, out, err = run_main("build", _with(path, "split", 4))
    assert code == 1
    assert "gpus_per_replica 6 GPU is not a multiple of expert_parallel_size 4" in err


def _ep_candidates(write_plan, **section):
    """gpt-oss-120b on A100-40GB nodes of 8: one GPU cannot hold its 60.8 GiB of weights."""
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="a100-sxm4-40gb", model="gpt-oss-120b", memory_accounting="engine")
    plan["inputs"].update(weight_bytes_per_param=f"{MXFP4} B", gpus_per_replica="8 GPU", expert_parallel_size=8)
    plan["candidates"] = {"gpus": ["a100-sxm4-40gb"], "tp": [1], "ep": [1, 8],
                          "offers": [{"name": "p4d", "gpu": "a100-sxm4-40gb", "gpus_per_node": 8,
                                      "node_hourly_cost": "32 USD/h"}], **section}
    from test_candidates import ranking_of
    return ranking_of(write_plan, plan)


def test_expert_parallelism_makes_a_candidate_feasible_that_was_not(write_plan):
    """TP1 holds all 60.8 GiB on one 40 GB GPU; TP1 x EP8 holds 8.57 GiB on each of 8."""
    _, r = _ep_candidates(write_plan)
    ev = r.evaluated
    labels = [c.label for c in ev.candidates]
    assert labels == ["a100-sxm4-40gb TP1", "a100-sxm4-40gb TP1 EP8"]
    assert ev.reasons[0].startswith("the weights do not fit: 60.8 GiB of weights in ")
    assert ev.reasons[1] == "" and r.feasible == [1]
    assert ev.values["gpus_per_replica"][1, 0] == 8
    assert ev.values["weight_memory"][1, 0] / GiB == pytest.approx(8 * 8.570, abs=0.01)


def test_an_ep_candidate_is_matched_and_served_with_its_data_parallel_ranks(write_plan):
    """The plan's sweep measured TP1 x EP8; EP4 is transferred, and its benchmark serves 4 ranks."""
    evaluations, r = _ep_candidates(write_plan, ep=[1, 4, 8], exclude=[{"ep": 1}])
    from capplan.rendering.candidates import CandidatesView
    ev = r.evaluated
    assert [c.label for c in ev.candidates] == ["a100-sxm4-40gb TP1 EP4", "a100-sxm4-40gb TP1 EP8"]
    assert ev.tags == ["transferred", "measured"]
    run = CandidatesView(r, evaluations).benchmarks[0]
    assert run["candidate"] == "a100-sxm4-40gb TP1 EP4"
    assert "--tensor-parallel-size 1 --data-parallel-size 4 --enable-expert-parallel" in run["serve"]
    assert run["import"].endswith("gpus_per_replica: 4, expert_parallel_size: 4")


def test_ep_on_a_dense_model_is_refused_by_name(write_plan, run_main):
    plan = copy.deepcopy(BASE_PLAN)
    plan["memory_accounting"] = "engine"
    plan["candidates"] = {"gpus": ["a100-sxm4-80gb"], "tp": [1], "ep": [1, 8],
                          "offers": [{"name": "p4d", "gpu": "a100-sxm4-80gb", "gpus_per_node": 8,
                                      "node_hourly_cost": "32 USD/h"}]}
    code, out, err = run_main("build", write_plan(plan, "dense-ep"))
    assert code == 1
    assert "candidates.ep: model 'llama-3-8b' is dense" in err and "Traceback" not in err


@pytest.mark.parametrize("section, plan_key, expected", [
    ({"ep": [0]}, {}, "candidates.ep[0]: expert-parallel ranks must be a whole number of at least 1, got '0'"),
    ({"ep": [1, 8]}, {"expert_parallel": "replicated"},
     "expert_parallel: candidates: ep: lists expert-parallel sizes, which need expert_parallel: split"),
], ids=["ep zero", "ep under replicated"])
def test_a_bad_ep_is_one_message_naming_the_key(write_plan, run_main, section, plan_key, expected):
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="a100-sxm4-40gb", model="gpt-oss-120b", memory_accounting="engine", **plan_key)
    plan["candidates"] = {"gpus": ["a100-sxm4-40gb"], "tp": [1], **section,
                          "offers": [{"name": "p4d", "gpu": "a100-sxm4-40gb", "gpus_per_node": 8,
                                      "node_hourly_cost": "32 USD/h"}]}
    code, out, err = run_main("build", write_plan(plan, "bad-ep"))
    assert code == 1 and expected in err and "Traceback" not in err


@pytest.mark.skipif(not __import__("recalc").soffice(), reason="LibreOffice is not installed")
def test_the_workbook_recalculates_the_expert_parallel_formulas(write_plan, tmp_path):
    """The split weights, the all-to-all and the step bound are live formulas LibreOffice computes alike."""
    import recalc
    from plan_edits import quick_view

    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from capplan.rendering.workbook import build_workbook, to_bytes
    model = standard_model()
    plan = load(_gpt_oss(write_plan, "book", 8, 8, decode_batch=256), model)
    evs = evaluate_all(plan, model)
    built = build_workbook(plan, evs, model, quick_view(plan, evs))
    source = tmp_path / "book.xlsx"
    source.write_bytes(to_bytes(built))
    wb = recalc.values(recalc.recalc([source], tmp_path / "lo")[source])
    names = {"weight_memory", "weight_memory_per_gpu", "kv_heads_per_gpu", "expert_all_to_all_time",
             "decode_step_time_bound"}
    cells = [c for c in built.cells if c.quantity in names]
    assert {c.quantity for c in cells} == names
    assert not recalc.error_cells(wb) and not recalc.mismatches(cells, wb, limit=0)


@pytest.mark.parametrize("gpu, link", [("b200-hgx", 900), ("a100-sxm4-80gb", 300), ("h100-sxm5-80gb", 450), ("l40s", 32)])
def test_the_all_to_all_link_is_the_gpus_own(write_plan, gpu, link):
    """NVLink one way (half the datasheet's both-ways figure), PCIe where a GPU has no NVLink."""
    path = engine_plan(write_plan, gpu=gpu, model="qwen3-30b-a3b", name=gpu, gpus_per_replica="2 GPU")
    e = evaluated(_with(path, "split", 2))
    assert e.display("expert_all_to_all_bandwidth") == link


def test_evidence_files_beside_an_ep_list_are_refused(write_plan, run_main):
    """An evidence item names a GPU and a TP, not an EP: it would stand for every EP of that TP."""
    plan = copy.deepcopy(BASE_PLAN)
    plan.update(gpu="a100-sxm4-40gb", model="gpt-oss-120b", memory_accounting="engine")
    plan["candidates"] = {"gpus": ["a100-sxm4-40gb"], "tp": [1], "ep": [1, 8],
                          "evidence": [{"import": "estimates/x.estimate.yaml"}],
                          "offers": [{"name": "p4d", "gpu": "a100-sxm4-40gb", "gpus_per_node": 8,
                                      "node_hourly_cost": "32 USD/h"}]}
    code, out, err = run_main("build", write_plan(plan, "ep-evidence"))
    assert code == 1 and "candidates.evidence: an evidence item names a GPU and a TP" in err


def _moe_models():
    """Every mixture-of-experts entry of the catalog (experts_per_token above 0)."""
    from capplan.loading import catalog
    return [e.id for e in catalog.entries("model") if e.values.get("experts_per_token", {}).get("value", 0)]


@pytest.mark.parametrize("model", _moe_models())
def test_every_moe_model_loads_with_expert_parallelism_as_a_new_user_writes_it(model, write_plan):
    """No expert_parameter_count under inputs: the catalog's expert count derives it (or pins it)."""
    path = _with(engine_plan(write_plan, gpu="b200-hgx", model=model, name=model, gpus_per_replica="8 GPU"),
                 expert_parallel="split", ep=8)
    e = evaluated(path)
    experts = e.display("expert_parameter_count")
    assert 0.8 * e.display("parameter_count") < experts < e.display("parameter_count")


def test_the_expert_count_derives_the_experts_parameters_by_hand(write_plan):
    """MiniMax-M2.5: 62 layers x 256 experts x 3 x 3,072 x 1,536; DeepSeek-V3's first 3 layers are dense."""
    def experts(model):
        return evaluated(_with(engine_plan(write_plan, gpu="b200-hgx", model=model, name=model,
                                           gpus_per_replica="8 GPU"), expert_parallel="split", ep=8))
    minimax = experts("minimax-m2.5")
    assert minimax.display("expert_parameter_count") == 62 * 256 * 3 * 3072 * 1536 == 224_680_476_672
    deepseek = experts("deepseek-v3")
    assert deepseek.display("moe_layers") == 58
    assert deepseek.display("expert_parameter_count") == 58 * 256 * 3 * 7168 * 2048


def test_a_config_json_moe_model_derives_its_experts_parameters(write_plan, tmp_path):
    """A DeepSeek-style config.json: 256 routed experts, the first 3 of 61 layers dense."""
    import json
    config = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 61,
              "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_size": 7168, "intermediate_size": 18432,
              "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
              "num_experts_per_tok": 8, "first_k_dense_replace": 3, "vocab_size": 129280, "kv_lora_rank": 512,
              "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}
    (tmp_path / "plans").mkdir(exist_ok=True)
    (tmp_path / "plans" / "config.json").write_text(json.dumps(config))
    path = _with(engine_plan(write_plan, gpu="b200-hgx", model={"config": "config.json"}, name="dsv3",
                             gpus_per_replica="8 GPU", parameter_count=671_000_000_000,
                             weight_bytes_per_param="1 B"), expert_parallel="split", ep=8)
    e = evaluated(path)
    assert e.display("expert_count") == 256 and e.display("moe_layers") == 58
    assert e.display("expert_parameter_count") == 58 * 256 * 3 * 7168 * 2048
