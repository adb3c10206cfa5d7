"""Property: random valid plans, built into workbooks, linted, and recalculated by
LibreOffice and Gnumeric in one batch per engine, equal the engine cell for cell.
The draws are the same on every run (set CAPPLAN_RANDOM_PLANS=N to explore N
others); plans a random run once found wrong stay in every run (KNOWN_HARD)."""

from __future__ import annotations

import copy
import dataclasses
import math
import os

import pytest
import recalc
from conftest import MAIN_PLAN as CHAT
from conftest import RETAIL_PLAN as RETAIL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_edits import defined_names, quick_view, with_input, with_table

from capplan.language import units
from capplan.engine.evaluate import evaluate_all
from capplan.language.model import standard_model
from capplan.errors import CapplanError
from capplan.loading.plan import load
from capplan.rendering.workbook.lint import lint_formula
from capplan.rendering.workbook import build_workbook, to_bytes


@pytest.fixture(scope="module")
def model():
    return standard_model()



def hundredths(lo: float, hi: float):
    return st.integers(round(lo * 100), round(hi * 100)).map(lambda v: v / 100)


@st.composite
def plan_changes(draw):
    base = draw(st.sampled_from(["chat", "retail"]))
    ch = {
        "base": base,
        "peak_arrival_rate": draw(hundredths(0.5, 400)),
        "peak_to_average_ratio": draw(hundredths(1, 6)),
        "gpu_memory_utilization": draw(hundredths(0.8, 0.95)),
        "kv_bytes_per_element": draw(st.sampled_from([1, 2])),
        "hbm_efficiency": draw(hundredths(0.3, 0.95)),
        "redundancy_replicas": draw(st.integers(0, 2)),
        "failed_gpus": draw(st.integers(0, 2)),
        "classes": draw(st.lists(st.tuples(st.integers(1, 10), st.integers(1, 4096), st.integers(1, 2048)),
                                 min_size=1, max_size=4)),
        "deployments": draw(st.lists(st.tuples(st.sampled_from([1, 2, 4, 8]), hundredths(0.1, 120)),
                                     min_size=1, max_size=3)),
    }
    if base == "chat":
        ch["rho_target"] = draw(hundredths(0.3, 0.95))
        n = draw(st.integers(1, 8))
        rates, rate = [], 0.0
        for step in draw(st.lists(hundredths(0.25, 6), min_size=n, max_size=n)):
            rate = round(rate + step, 2)
            rates.append(rate)
        leading = draw(st.integers(1, n))
        passes = [True] * leading + draw(st.lists(st.booleans(), min_size=n - leading, max_size=n - leading))
        if leading < n:
            passes[leading] = False
        rows = []
        for x, ok in zip(rates, passes):
            # SLOs: TTFT 1 s (400 ms in one scenario), TPOT 25 ms, E2E 5 s
            ttft, tpot, e2e = (draw(hundredths(5, 390)), draw(hundredths(1, 24.9)), draw(hundredths(0.1, 4.99)))
            # error budget 0.1 %: 1 failure in >= 1000 completions passes
            completed, failed = float(draw(st.integers(1000, 5000))), float(draw(st.sampled_from([0, 0, 1])))
            if not ok:
                which = draw(st.integers(0, 3))
                if which == 0:
                    ttft = draw(hundredths(1001, 9000))
                elif which == 1:
                    tpot = draw(hundredths(25.01, 90))
                elif which == 2:
                    e2e = draw(hundredths(5.01, 60))
                else:
                    completed, failed = float(draw(st.integers(0, 500))), float(draw(st.integers(1, 50)))
            rows.append({"arrival_rate": x, "mean_batch": draw(hundredths(1, 100)), "ttft_p95": ttft,
                         "tpot_p95": tpot, "e2e_p99": e2e, "output_throughput": draw(hundredths(10, 5000)),
                         "completed": completed, "failed": failed})
        ch["load_sweep"] = rows
    else:
        ch["e2e_p99_slo"] = draw(hundredths(0.5, 10))
        ch["batch_headroom"] = draw(hundredths(1.05, 40))   # decode_throughput over the rate one request needs
    return ch


def apply_changes(base_plans, ch, model):
    plan = base_plans[ch["base"]]
    if "batch_headroom" in ch:       # keep the SLO batch limit >= 1 (else the plan is invalid)
        total = sum(w for w, _, _ in ch["classes"])
        avg_output = sum(w / total * o for w, _, o in ch["classes"])
        ch = dict(ch, decode_throughput=math.ceil(ch["batch_headroom"] * avg_output / ch["e2e_p99_slo"] * 100) / 100)
    for name, value in ch.items():
        if name in ("base", "classes", "deployments", "load_sweep", "batch_headroom"):
            continue
        q = model.quantities[name]
        if name in plan.nominal.inputs:
            plan = with_input(plan, name, f"{value} {q.unit}" if q.unit else str(value))
    plan = copy.deepcopy(plan)
    total = sum(w for w, _, _ in ch["classes"])
    with_table(plan, "classes", [{"name": f"class-{i}", "weight": w / total, "prompt_tokens": float(p),
                                  "output_tokens": float(o)} for i, (w, p, o) in enumerate(ch["classes"])])
    with_table(plan, "deployments", [
        {"name": f"offer-{i}", "gpus_per_node": float(g),
         "node_hourly_cost": units.parse_value(f"{c} USD/h", "USD/h")} for i, (g, c) in enumerate(ch["deployments"])])
    if "load_sweep" in ch:
        cols = {q.column: q.unit for c in model.tables["load_sweep"].columns
                for q in [model.quantities[c]] if q.is_input}
        with_table(plan, "load_sweep", [{k: units.parse_value(v, cols[k]) for k, v in row.items()}
                                        for row in ch["load_sweep"]])
    return plan


# The scenarios a random plan keeps: the nominal sheet, one that reads the nominal fleet
# across sheets (nominal()), one that fails GPUs. More sheets repeat the same formula text
# with other inputs: they cost LibreOffice time, not coverage.
KEPT_SCENARIOS = ("nominal", "surge_50", "n_minus_1")


def with_scenarios(plan, kept):
    return dataclasses.replace(plan, scenarios=[s for s in plan.scenarios if s.name in kept])


# Plans a random run once found wrong, kept in every run.
KNOWN_HARD = [
    # 1998 replicas at 400/1998 req/s: 399.99999999999994 in floats, which the engine took
    # for "the fleet does not carry its peak of 400" while both spreadsheets (and the exact
    # walker) said it does; comparisons now forgive float noise as ceil and floor do.
    {"base": "retail", "peak_arrival_rate": 400.0, "peak_to_average_ratio": 1.3, "gpu_memory_utilization": 0.89,
     "kv_bytes_per_element": 1, "hbm_efficiency": 0.64, "redundancy_replicas": 1, "failed_gpus": 2,
     "classes": [(6, 64, 525), (4, 2820, 250), (2, 3633, 1), (7, 72, 221)],
     "deployments": [(4, 2.05), (4, 3.74), (8, 1.2)], "e2e_p99_slo": 9.99, "batch_headroom": 2.27},
]


@pytest.fixture(scope="module")
def random_workbooks(model, tmp_path_factory):
    """Random valid plans (hypothesis draws, CAPPLAN_RANDOM_PLANS of them), each built
    and linted: path -> (BuiltWorkbook, the changes drawn)."""
    drawn = []

    @settings(max_examples=int(os.environ.get("CAPPLAN_RANDOM_PLANS", "12")), deadline=None, database=None,
              derandomize="CAPPLAN_RANDOM_PLANS" not in os.environ,    # the same plans on every run, unless exploring
              suppress_health_check=list(HealthCheck))
    @given(plan_changes())
    def collect(ch):
        drawn.append(ch)

    collect()
    drawn += KNOWN_HARD
    base_plans = {"chat": load(CHAT, model), "retail": load(RETAIL, model)}
    work = tmp_path_factory.mktemp("random")
    built, skipped = {}, []
    for i, ch in enumerate(drawn):
        plan = with_scenarios(apply_changes(base_plans, ch, model), KEPT_SCENARIOS)
        try:
            evs = evaluate_all(plan, model)
        except CapplanError as err:        # e.g. a random model that does not fit
            skipped.append(str(err))
            continue
        b = build_workbook(plan, evs, model, quick_view(plan, evs))
        problems = [p for _, f in b.formulas() for p in lint_formula(f, defined_names(b.workbook))]
        assert not problems, problems[:5]
        path = work / "src" / f"random-{i}.xlsx"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(to_bytes(b))
        built[path] = (b, ch)
    assert len(built) >= len(drawn) // 2, skipped
    print(f"random plans: {len(built)} built, {len(skipped)} rejected by the engine", skipped)
    return work, built


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_random_plans_equal_engine_in_both_spreadsheets(random_workbooks, engine):
    work, built = random_workbooks
    out = engine.recalc(list(built), work / engine.name)   # ONE batch for all of them
    failures = []
    for path, (b, ch) in built.items():
        wb = recalc.values(out[path])
        errors = recalc.error_cells(wb)
        bad = recalc.mismatches(b.cells, wb, engine=engine)
        if errors or bad:
            failures.append(f"{path.name} {ch}:\n  " + "\n  ".join((errors + bad)[:8]))
    assert not failures, f"{engine.name}:\n" + "\n".join(failures)


