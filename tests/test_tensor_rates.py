"""Tensor-core rates by format in the GPU catalog: FP8 and FP4 beside BF16, dense, each sourced.

Hand values: a datasheet prints the rate with 2:4 structured sparsity (often behind an
asterisk); the dense rate, the one a model's matrix products reach, is half of it. A GPU whose
tensor cores lack a format says so with a rate of 0 and a source, never by leaving the value out:
the quantity has no default, so a GPU the catalog says nothing about cannot silently get one.
"""

from __future__ import annotations

import copy

import pytest
from conftest import BASE_PLAN
from test_catalog_2026 import PINNED

from capplan.engine.evaluate import evaluate
from capplan.errors import CapplanError
from capplan.language.model import standard_model
from capplan.loading import catalog
from capplan.loading.plan import load

FORMATS = ("fp8_peak_flops", "fp4_peak_flops")

# Dense TFLOP/s per GPU (FP8, FP4), each from the vendor's figure with sparsity halved where it
# prints that one; 0 where the architecture has no tensor cores of the format (Ampere: neither;
# Hopper, Ada and CDNA 3: no FP4).
DENSE = {
    "a100-sxm4-40gb": (0, 0),
    "a100-sxm4-80gb": (0, 0),
    "h100-sxm5-80gb": (3958 / 2, 0),          # datasheet "FP8 Tensor Core 3,958 teraFLOPS*", * with sparsity
    "h100-pcie-80gb": (3026 / 2, 0),
    "h200-sxm-141gb": (3958 / 2, 0),
    "h200-nvl": (3341 / 2, 0),
    "l40s": (1466 / 2, 0),
    "l4": (485 / 2, 0),
    "b200-hgx": (9000 / 2, 18000 / 2),        # HGX B200: 72 PF FP8 and 144 PF FP4 per 8 GPUs, sparse
    "gb200": (10000 / 2, 20000 / 2),          # GB200 NVL72: 720 PF FP8 and 1,440 PF FP4 per 72 GPUs, sparse
    "h20": (296, 0),
    "mi300x": (2614.9, 0),
    "mi325x": (2614.9, 0),
    "mi355x": (5033.2, 10066.4),
    "rtx-pro-6000-blackwell": (935.6, 1871.2),
}


def rate(gpu, name):
    spec = catalog.lookup("gpu", gpu).values[name]
    return float(str(spec["value"]).split()[0])


def test_every_catalog_gpu_is_in_the_table():
    assert sorted(DENSE) == catalog.ids("gpu")


@pytest.mark.parametrize("gpu", sorted(DENSE))
def test_every_gpu_gives_each_format_its_dense_rate_with_a_source(gpu):
    for name, dense in zip(FORMATS, DENSE[gpu]):
        spec = catalog.lookup("gpu", gpu).values[name]
        assert PINNED.search(spec.get("source", "")), f"{gpu}.{name}: {spec.get('source')!r}"
        assert rate(gpu, name) == pytest.approx(dense, abs=0.05), f"{gpu}.{name}"


@pytest.mark.parametrize("gpu", sorted(DENSE))
def test_each_narrower_format_doubles_the_wider_where_the_gpu_has_it(gpu):
    """FP8 doubles BF16 on Hopper, Ada, Blackwell and CDNA 3-4, FP4 doubles FP8; a sparse figure
    taken for a dense one would show up here as a fourfold step."""
    bf16 = catalog.lookup("gpu", gpu).values.get("bf16_peak_flops")
    fp8, fp4 = (rate(gpu, name) for name in FORMATS)
    if bf16 is not None and fp8:
        assert fp8 / float(str(bf16["value"]).split()[0]) == pytest.approx(2, rel=0.02)   # L40S: 733 over 362.05
    if fp4:
        assert fp4 / fp8 == pytest.approx(2, rel=0.01)


def test_the_model_gives_no_default_so_a_gpu_without_a_figure_cannot_get_one():
    model = standard_model()
    for name in FORMATS:
        q = model.quantities[name]
        assert (q.tag, q.unit, q.default) == ("fact", "TFLOP/s/GPU", None)
        assert "sparsity" in q.description


def plan_on(write_plan, gpu, **inputs):
    plan = copy.deepcopy(BASE_PLAN)
    plan["gpu"] = gpu
    plan["inputs"].update(inputs)
    model = standard_model()
    loaded = load(write_plan(plan, gpu), model)
    return loaded, evaluate(loaded, loaded.nominal, model)


def test_a_plan_reads_the_rates_from_the_catalog_with_their_source(write_plan):
    loaded, e = plan_on(write_plan, "h100-sxm5-80gb")
    assert (e.display("fp8_peak_flops"), e.display("fp4_peak_flops")) == (1979, 0)
    assert loaded.nominal.inputs["fp8_peak_flops"].source.startswith("catalog h100-sxm5-80gb:")
    a100, e = plan_on(write_plan, "a100-sxm4-80gb")
    assert (e.display("fp8_peak_flops"), e.display("fp4_peak_flops")) == (0, 0)     # no FP8 tensor cores


def test_a_negative_rate_is_refused(write_plan):
    with pytest.raises(CapplanError, match="fp8_peak_flops"):
        plan_on(write_plan, "h100-sxm5-80gb", fp8_peak_flops="-1 TFLOP/s/GPU")
