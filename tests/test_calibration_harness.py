"""benchmarks/bench_calibration.py: a published measurement stated as the plan capplan would write,
and the comparison it prints (issue 39).

The rows come from ``../shared/calibration/measurements.csv`` and the project's own
``benchmarks/calibration/published.csv``; tests that read the shared set are skipped, saying why,
when the shared folder is absent. The comparison itself is checked on values given by hand, so the
factor and the band rule are tested wherever the suite runs.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from shared_examples import SHARED

sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_calibration  # noqa: E402
from calibration import predict, rows  # noqa: E402

from capplan.loading import catalog  # noqa: E402

CSV = SHARED / "calibration" / "measurements.csv"
PUBLISHED = ROOT / "benchmarks" / "calibration" / "published.csv"


@pytest.fixture(scope="module")
def measured():
    if not CSV.exists():
        pytest.skip(f"the shared calibration set is not here: {CSV} (set CAPPLAN_SHARED to the folder "
                    "that holds calibration/)")
    return {r.number: r for r in rows.read(CSV)}


def test_an_mlperf_server_row_is_planned_on_its_gpu_with_mlperfs_slos(measured):
    row = measured[1]
    assert (row.group, row.mode, row.gpu) == ("mlperf-v4.1", "mlperf-server", "H200-SXM-141GB")
    m = rows.map_row(row)
    plan = rows.plan(m)
    assert plan["gpu"] == "h200-sxm-141gb" and plan["candidates"]["gpus"] == ["h200-sxm-141gb"]
    # the result does not state its TP; NVIDIA's config of the system (H200_SXM_141GBx8) does: TP1, 8 replicas
    assert plan["inputs"]["gpus_per_replica"] == "1 GPU" and plan["candidates"]["tp"] == [1]
    assert m.replicas == 8
    assert plan["tables"]["classes"]["rows"] == [{"name": "bench", "weight": 1.0, "prompt_tokens": 222.33,
                                                  "output_tokens": 294.45}]
    assert (plan["inputs"]["ttft_p99_slo"], plan["inputs"]["tpot_p99_slo"]) == ("2 s", "200 ms")
    assert any("TP1 as the submitter's code states" in a and "H200_SXM_141GBx8" in a for a in m.assumptions)
    assert plan["model"] == {"id": "llama-2-70b", "weights": "fp8"}       # the catalog's FP8 checkpoint


def test_an_unstated_tp_is_the_smallest_whose_weights_leave_the_kv_cache_room(measured):
    """Llama-2-70B in FP8 (68.98 B parameters x 1.0076 B = 64.7 GiB) on 8 x B200 (179 GiB reported
    a GPU; not a system STATED_TP names): TP1 holds it at 36 % of one GPU, under 60 %: TP1, 8 replicas.
    On 8 x A100-40GB (39.4 GiB): TP1 164 %, TP2 82 %, TP4 41 %: TP4, 2 replicas."""
    base = dict(number=99, source="someone/else@0:results/x.txt", group="else", model="Llama-2-70b-chat-hf",
                n_gpus=8, tp=None, precision="fp8", engine="vllm", isl=200, osl=200, mode="offline",
                req_per_s=1.0, tpot_p50_ms=None)
    b200 = rows.map_row(rows.Row(gpu="B200-SXM-180GB", **base))
    a100 = rows.map_row(rows.Row(gpu="A100-SXM4-40GB", **base))
    assert (b200.tp, b200.replicas) == (1, 8) and (a100.tp, a100.replicas) == (4, 2)
    assert any("TP4 assumed, the smallest whose weights (65 GiB) take at most 60%" in a for a in a100.assumptions)


def test_a_tensorrt_llm_row_takes_the_catalog_format_and_its_rate_from_tokens(measured):
    row = measured[17]
    m = rows.map_row(row)
    plan = rows.plan(m)
    assert plan["model"] == {"id": "llama-3.3-70b", "weights": "fp8"} and "weight_bytes_per_param" not in plan["inputs"]
    assert (m.gpu, m.tp, m.replicas) == ("h100-sxm5-80gb", 2, 1)
    assert row.req_per_s == pytest.approx(4205 / 1000)
    assert plan["inputs"]["tpot_p99_slo"] == "10 s"       # offline: loose SLOs


def test_a_gpu_the_catalog_lacks_is_skipped_with_the_reason():
    row = rows.Row(number=99, source="x/y@0:z", group="y", model="meta-llama/Llama-3.3-70B-Instruct",
                   gpu="TPU v5e", n_gpus=8, tp=8, precision="bf16", engine="vllm", isl=100, osl=100,
                   mode="offline", req_per_s=1.0, tpot_p50_ms=None)
    assert rows.map_row(row) == "GPU 'TPU v5e' is not in capplan's catalog"


def test_published_names_map_to_catalog_ids():
    assert rows.catalog_id("gpu", "B200-SXM-180GB") == "b200-hgx"
    assert rows.catalog_id("gpu", "A100-SXM4-40GB (inferred from Azure ND96asr_v4)") == "a100-sxm4-40gb"
    assert rows.catalog_id("model", "nvidia/Llama-3.1-8B-Instruct-FP8") == "llama-3.1-8b"
    assert rows.catalog_id("model", "meta-llama/Llama-2-70b-chat-hf") == "llama-2-70b"
    assert rows.catalog_id("model", "Llama") is None


def _mapped(mode: str, measured_value: float, n_gpus: int = 8, tp: int = 4) -> rows.Mapped:
    row = rows.Row(number=1, source="s", group="g", model="m", gpu="g", n_gpus=n_gpus, tp=tp, precision="",
                   engine="vllm", isl=100, osl=100, mode=mode,
                   req_per_s=measured_value if mode != "open-loop rate" else 4.0,
                   tpot_p50_ms=measured_value if mode == "open-loop rate" else None)
    return rows.Mapped(row=row, gpu="h100-sxm5-80gb", model="llama-3.3-70b", tp=tp, format="bf16",
                       in_catalog=True, kv_bytes=None)


def test_a_rate_row_compares_the_estimate_times_replicas_and_its_band_on_both_sides():
    values = {"estimated_max_rate": 3.0, "estimate_band": 0.4, "estimate_kv_rate": 5.0, "estimate_slo_rate": 3.0}
    r = predict.compare(_mapped("mlperf-server", 10.0), values)          # 8 GPUs / TP4: two replicas
    assert r.predicted == 6.0 and r.ratio == 0.6
    assert r.factor_off == pytest.approx(10 / 6)
    assert (r.low, r.high, r.inside, r.limit) == (pytest.approx(3.6), pytest.approx(8.4), False, "SLO step")
    assert predict.compare(_mapped("offline", 5.0), values).inside          # 3.6 ≤ 5 ≤ 8.4
    assert predict.compare(_mapped("offline", 8.0), values).inside          # above the prediction, inside the band


def test_a_rate_rows_limit_names_the_bound_the_estimate_takes():
    """estimated_max_rate is the least of four rates: the limit column names that one, the
    scheduler's token budget and the TTFT bound included."""
    values = {"estimated_max_rate": 2.0, "estimate_band": 0.4, "estimate_kv_rate": 5.0, "estimate_slo_rate": 3.0,
              "estimate_budget_rate": 2.0, "estimate_ttft_rate": 4.0}
    assert predict.compare(_mapped("offline", 2.0), values).limit == "token budget"
    assert predict.compare(_mapped("offline", 2.0), dict(values, estimate_ttft_rate=1.0)).limit == "TTFT"
    assert predict.compare(_mapped("offline", 2.0), dict(values, estimate_kv_rate=1.5)).limit == "KV pool"


def test_an_open_loop_row_compares_the_engine_step_at_the_achieved_rate_per_replica():
    values = {"estimate_weights_time": 0.010, "estimate_step_growth": 0.1, "engine_step_factor": 1.5,
              "estimate_band": 0.4}
    r = predict.compare(_mapped("open-loop rate", 20.0), values)         # 4 req/s over two replicas: λ = 2
    assert r.predicted == pytest.approx(15 / (1 - 0.3))                   # t = f·R0 / (1 − λ·f·a) ≈ 21.4 ms
    assert (r.low, r.high) == (pytest.approx(r.predicted * 0.6), pytest.approx(r.predicted * 1.4))
    assert r.inside and r.factor_off == pytest.approx(r.predicted / 20)
    saturated = predict.compare(_mapped("open-loop rate", 20.0), dict(values, estimate_step_growth=0.5))
    assert math.isinf(saturated.predicted) and not saturated.inside


def test_the_harness_computes_one_rows_factor_from_the_models_values(measured, tmp_path):
    """Row 17 (Llama-3.3-70B FP8, H100 TP2, 1000/1000, offline): the factor by hand from the
    estimate group's own values, R₀, a, the step target and the KV rate."""
    m = rows.map_row(measured[17])
    r = predict.predict(m, tmp_path)
    v = r.values
    f = v["engine_step_factor"]
    slo = (v["estimate_step_target"] - f * v["estimate_weights_time"]) / (f * v["estimate_step_target"]
                                                                            * v["estimate_step_growth"])
    by_hand = min(slo, v["estimate_kv_rate"]) * 1        # one replica
    assert r.predicted == pytest.approx(by_hand)
    assert r.factor_off == pytest.approx(max(by_hand / (4205 / 1000), (4205 / 1000) / by_hand))


def test_the_script_writes_every_mapped_row_as_json(measured, tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert bench_calibration.main(["--csv", str(CSV), "--json", str(out), "--leave-out", "mlperf"]) == 0
    written = json.loads(out.read_text())
    assert {w["group"] for w in written} == {"trtllm-perf", "vllm-llm-k8s"}
    assert len(written) == sum(1 for r in measured.values() if not r.group.startswith("mlperf"))
    assert "| **all** |" in capsys.readouterr().out


def test_the_fits_grid_is_the_model_evaluated_with_those_constants(measured, tmp_path):
    """--fit runs the plan's own graph over the grid in one batch: a grid point's estimate is the
    estimate of the plan given those constants as inputs (--constants)."""
    from calibration import fit

    m = rows.map_row(measured[1])
    point = {"engine_step_factor": 0.9}
    grid = fit.over_grid(predict.evaluated(m, tmp_path))[fit.points().index(point)]
    given = predict.estimate_values(predict.evaluated(m, tmp_path, point))
    assert grid["estimated_max_rate"] == pytest.approx(given["estimated_max_rate"], rel=1e-12)
    assert grid["estimate_band"] == pytest.approx(given["estimate_band"], rel=1e-12)


def _held(engine: str, misses: list[float]) -> list:
    """Held-out predictions of ``engine`` measured ``miss`` above a prediction of 10 req/s."""
    from types import SimpleNamespace
    mapped = SimpleNamespace(row=SimpleNamespace(engine=engine, group="g", mode="offline"))
    return [predict.Result(mapped, 10 * (1 + x), 10.0, 6.5, 13.5, "KV pool", {}) for x in misses]


def test_the_stated_band_holds_three_quarters_of_the_held_out_predictions_by_hand():
    """trt-llm's 10 held-out misses: 75 % is 8 of them, the 8th smallest 0.41, so ±0.45 (steps of 0.05).
    vLLM's 4 are too few for its own band: the pooled 14, of which 11 (⌈0.75·14⌉) lie within ±0.5."""
    from calibration import fit

    trt = _held("trt-llm", [0.02, 0.08, 0.12, 0.18, 0.22, 0.28, 0.33, 0.41, 0.6, 0.9])
    vllm = _held("vllm", [0.1, 0.3, 0.5, 0.7])
    bands = fit.engine_bands(trt + vllm)
    assert bands == {"trt-llm": (0.45, "trt-llm's 10 held-out predictions"),
                     "vllm": (0.5, "pooled: vllm has 4 held-out predictions, fewer than 10")}


def test_a_transfer_is_the_other_rows_rate_times_the_bound_ratio(measured, tmp_path):
    """Row 3 (H100 ×8 as 4 TP2 replicas) from row 1 (H200 ×8 as 8 TP1 replicas): row 1's 100 req/s is
    12.5 req/s a replica, compute-bound (its prefill share of the step is over half), so the prefill
    bound's ratio scales it, times row 3's 4 replicas."""
    from calibration import fit

    one, three = rows.map_row(measured[1]), rows.map_row(measured[3])
    e1, e3 = predict.evaluated(one, tmp_path), predict.evaluated(three, tmp_path)
    moved = fit.transfers([one, three], [e1, e3])
    assert [r.mapped.row.number for r in moved] == [3, 1]
    assert moved[0].limit == "from row 1 (prefill_time_bound)"
    ratio = float(e1.values["prefill_time_bound"]) / float(e3.values["prefill_time_bound"])
    assert moved[0].predicted == pytest.approx(measured[1].req_per_s / 8 * ratio * 4, rel=1e-12)


def test_the_tools_open_loop_step_is_its_tpot_at_the_rate_linear_between_batch_sizes():
    """bench_calibration.py --tool: the tool's TPOT at an open-loop row's rate (calibration/tool.py)."""
    from calibration import tool

    points = [{"seq/s": 1.0, "tpot": 10.0}, {"seq/s": 3.0, "tpot": 20.0}]
    assert [tool.tpot_at(points, rate) for rate in (0.5, 2.0, 3.0)] == [10.0, 15.0, 20.0]
    assert tool.tpot_at(points, 3.5) == math.inf                   # past the last predicted rate: unbounded


def test_a_rate_rows_slos_reach_the_tools_pick_in_ms():
    from calibration import tool

    assert tool.limits_ms("mlperf-server") == {"ttft_p99_slo": ("ttft", 2000.0), "tpot_p99_slo": ("tpot", 200.0)}


def _table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a CSV file."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def test_every_published_row_states_its_source_in_the_shared_sets_columns():
    """published.csv extends the shared set: the same columns, and every row names where its figure
    was read (``repository@commit:path`` or a URL) and what was read there."""
    columns, cells = _table(PUBLISHED)
    if CSV.exists():
        assert columns == _table(CSV)[0]
    assert cells
    for row in cells:
        assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S|https://\S", row["source"]), row["source"]
        assert row["notes"].strip() and row["model"].strip() and row["gpu"].strip()


def test_every_published_row_maps_to_a_plan_or_is_skipped_with_the_reason():
    """Every row states a plan or why not: a burst of 200 requests (vLLM's nightly throughput tests)
    is no steady-state maximum, so it is kept with its source and skipped, saying so."""
    published = rows.read(PUBLISHED)
    mapped = [rows.map_row(r) for r in published]
    assert all(isinstance(m, rows.Mapped) or (isinstance(m, str) and m) for m in mapped)
    skipped = {r.mode: m for r, m in zip(published, mapped) if isinstance(m, str)}
    assert skipped == {"burst": "mode 'burst' has no mapping to a plan"}
    moe = [m for m in mapped if isinstance(m, rows.Mapped)
           and catalog.lookup("model", m.model).values.get("active_parameter_count") is not None]
    assert len(moe) >= 10 and {m.row.engine for m in moe} == {"trt-llm"}
    assert {r.group for r in published} <= {"trtllm-perf", "mlperf-v4.1", "mlperf-v5.0", "vllm-nightly"}


def test_a_published_moe_row_is_planned_by_hand():
    """Qwen3-235B-A22B FP8 on 8 H200 (TP8), 1000/1000, TensorRT-LLM's overview: 23,789 output tok/s
    over 1,000 tokens a request is 23.789 req/s for one replica, in the catalog's FP8 checkpoint."""
    row = next(r for r in rows.read(PUBLISHED) if r.model == "nvidia/Qwen3-235B-A22B-FP8"
               and r.gpu == "H200-SXM-141GB" and r.isl == 1000)
    m = rows.map_row(row)
    plan = rows.plan(m)
    assert (row.group, row.engine, row.mode) == ("trtllm-perf", "trt-llm", "offline")
    assert (m.gpu, m.model, m.tp, m.replicas) == ("h200-sxm-141gb", "qwen3-235b-a22b", 8, 1)
    assert plan["model"] == {"id": "qwen3-235b-a22b", "weights": "fp8"} and plan["engine"] == "trt-llm"
    assert row.req_per_s == pytest.approx(23789 / 1000) and m.assumptions == ["req/s = output tok/s ÷ osl"]
    assert plan["tables"]["classes"]["rows"] == [{"name": "bench", "weight": 1.0, "prompt_tokens": 1000.0,
                                                  "output_tokens": 1000.0}]
    assert plan["inputs"]["tpot_p99_slo"] == "10 s"


def test_a_published_moe_row_in_a_format_the_catalog_lacks_gives_its_bytes_as_inputs():
    """Llama-4-Maverick has no FP8 checkpoint in the catalog: 1 B a parameter and 8-bit products, said so."""
    row = next(r for r in rows.read(PUBLISHED) if r.model == "nvidia/Llama-4-Maverick-17B-128E-Instruct-FP8"
               and r.gpu == "H100-SXM5-80GB")
    m = rows.map_row(row)
    plan = rows.plan(m)
    assert (m.model, m.format, m.in_catalog, m.tp) == ("llama-4-maverick", "fp8", False, 8)
    assert plan["model"] == "llama-4-maverick"
    assert plan["inputs"]["weight_bytes_per_param"]["value"] == "1.0 B"
    assert plan["inputs"]["tensor_format_bits"]["value"] == "8 bit"


def test_published_sources_have_their_own_groups():
    assert rows.group("ntuhpc/mlperf_inference_results_v5.0@" + "0" * 40 + ":closed/AMD/x") == "mlperf-v5.0"
    assert rows.group("https://buildkite.com/vllm/performance-benchmark/builds/9523 (table)") == "vllm-nightly"
    assert rows.group("someone/some-repo@" + "0" * 40 + ":x") == "some-repo"


def test_the_script_reads_the_shared_set_and_the_published_file_unless_given_one():
    assert bench_calibration.sets(bench_calibration.arguments([])) == [CSV, PUBLISHED]
    assert bench_calibration.sets(bench_calibration.arguments(["--csv", "held.csv"])) == [Path("held.csv")]


def test_the_published_rows_are_numbered_after_the_shared_sets(measured):
    both = rows.read_all([CSV, PUBLISHED])
    assert [r.number for r in both] == list(range(1, len(both) + 1))
    assert both[len(measured)].source == rows.read(PUBLISHED)[0].source
    assert both[len(measured) - 1].source == measured[len(measured)].source
