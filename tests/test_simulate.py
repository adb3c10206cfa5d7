"""capplan simulate (issue 11): uncertain inputs, the graph as one batch, the odds of each decision.

The batch path must be the engine, only faster: for 1,000 draws of the
main plan's uncertain inputs every quantity equals what the engine's own
evaluate() gives for that draw. A plan without uncertain inputs gives a
degenerate distribution; a bad range is one located message; a fixed seed
gives byte-identical output.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan.analysis.pipeline import evaluate_plan
from capplan.engine import montecarlo, sampling
from capplan.engine.evaluate import Numeric, evaluate
from capplan.language.formula import FUNCTIONS, parse
from capplan.loading.plan import Scenario
from capplan.analysis import simulation as simulating
from capplan.rendering import simulation
from capplan.rendering.keyresults import key_results


def summarised(sim, e) -> simulation.SimulationView:
    """A simulation's findings beside the scenario's key results, as the outputs show them."""
    return simulation.shown_simulation(simulating.summarise(sim, e), key_results(e))


def _with_draw(scenario: Scenario, sim: montecarlo.Simulation, i: int) -> Scenario:
    """The scenario with every uncertain value replaced by draw ``i``."""
    inputs = dict(scenario.inputs)
    tables = {name: dataclasses.replace(t, rows=[dict(r) for r in t.rows]) for name, t in scenario.tables.items()}
    for u in sim.uncertain:
        value = float(u.drawn.values[i])
        q = scenario.inputs.get(u.quantity)
        if u.row is None:
            inputs[u.quantity] = dataclasses.replace(q, value=value)
        else:
            table, column = u.quantity.split(".", 1)
            tables[table].rows[u.row][column] = value
    return dataclasses.replace(scenario, inputs=inputs, tables=tables)


@pytest.mark.parametrize("scenario_name", ["nominal", "n_minus_1"])
def test_every_draw_equals_the_engines_own_evaluation(scenario_name):
    plan, evaluations = evaluate_plan(MAIN_PLAN)
    e = next(x for x in evaluations if x.scenario.name == scenario_name)
    draws = 250                       # each checked quantity by quantity against the scalar engine
    sim = montecarlo.simulate(plan, e.model, evaluations[0].values, e.scenario, samples=draws, seed=7)
    assert len(sim.uncertain) == 5 and sim.evaluates.all()
    compared = 0
    for i in range(draws):
        one = evaluate(plan, _with_draw(e.scenario, sim, i), e.model, nominal=evaluations[0])
        for name, value in one.values.items():
            if e.model.quantities[name].kind == "text":
                continue
            expected = np.atleast_1d(np.asarray(value, dtype=float))
            got = np.array([sim.column(name, r)[i] for r in range(expected.size)]) if e.model.quantities[name].table \
                else np.array([sim.column(name)[i]])
            assert np.allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True), (name, i, got, expected)
            compared += 1
    assert compared > 100 * draws
    # the draws really moved the results: the GPU count differs between draws
    assert len(set(sim.column("active_gpus").tolist())) > 3


def test_a_plan_without_uncertain_inputs_is_a_degenerate_distribution():
    plan, evaluations = evaluate_plan(RETAIL_PLAN)
    assert not montecarlo.uncertain_in(plan)
    e = evaluations[0]
    sim = montecarlo.simulate(plan, e.model, e.values, samples=500)
    shown = summarised(sim, e)
    points = {k.id: k.value for k in key_results(e)}
    assert shown.results
    for r in shown.results:
        assert r.percentiles == (points[r.key.id],) * 3, r.key.id
        assert r.mean == points[r.key.id] and r.drivers == ()
    assert {d.probability for d in shown.decisions} <= {0, 1}
    assert shown.inputs == ()


def test_hand_checked_odds_on_the_main_plan():
    """P(9 active GPUs suffice) is P(peak <= 63 req/s) for a lognormal with 90 % in 45..80:
    ln 63 = mu + z sigma with mu = (ln 45 + ln 80)/2, sigma = (ln 80 - ln 45)/(2 * 1.645)."""
    plan, evaluations = evaluate_plan(MAIN_PLAN)
    e = evaluations[0]
    sim = montecarlo.simulate(plan, e.model, e.values, samples=100_000)
    shown = summarised(sim, e)
    mu, sigma = (math.log(45) + math.log(80)) / 2, (math.log(80) - math.log(45)) / (2 * 1.6448536269514722)
    expected = 0.5 * (1 + math.erf((math.log(63) - mu) / sigma / math.sqrt(2)))       # 0.6105
    odds = {d.id: d.probability for d in shown.decisions}
    assert odds["active_gpus"] == pytest.approx(expected, abs=0.005)
    # the fractional fleet of 10 GPUs carries 70 req/s: P(peak <= 70)
    expected_70 = 0.5 * (1 + math.erf((math.log(70) - mu) / sigma / math.sqrt(2)))   # 0.8096
    assert odds["deployments[fractional-a100-80gb].fleet_holds"] == pytest.approx(expected_70, abs=0.005)
    p95 = next(r for r in shown.results if r.key.id == "active_gpus").percentiles[2]
    assert p95 == math.ceil(math.exp(mu + 1.6448536269514722 * sigma) / 7)                 # 80 req/s / 7 -> 12


def test_a_fixed_seed_gives_byte_identical_output_and_another_seed_differs(run_main):
    first = run_main("simulate", MAIN_PLAN, "--samples", "2000", "--format", "json")
    again = run_main("simulate", MAIN_PLAN, "--samples", "2000", "--format", "json")
    other = run_main("simulate", MAIN_PLAN, "--samples", "2000", "--format", "json", "--seed", "1")
    assert first[0] == 0 and first == again
    assert other[1] != first[1]
    code, text, _ = run_main("simulate", MAIN_PLAN, "--samples", "2000", "--scenario", "surge_50")
    assert code == 0 and "[surge_50]" in text and "P(active GPUs ≤ 13 GPUs)" in text


def test_domains_truncate_every_draw():
    """hbm_efficiency's domain is (0, 1]: a lognormal with 90 % in 0.6..0.85 puts about 0.06 % above 1."""
    plan, evaluations = evaluate_plan(MAIN_PLAN)
    e = evaluations[0]
    sim = montecarlo.simulate(plan, e.model, e.values, samples=100_000)
    hbm = next(u for u in sim.uncertain if u.label == "hbm_efficiency")
    assert hbm.drawn.values.max() <= 1.0
    mu, sigma = (math.log(0.6) + math.log(0.85)) / 2, (math.log(0.85) - math.log(0.6)) / (2 * 1.6448536269514722)
    above = 0.5 * math.erfc((0 - mu) / sigma / math.sqrt(2)) * 100_000       # expected draws above 1
    assert abs(hbm.drawn.truncated - above) < 5 * math.sqrt(above)
    assert "hbm_efficiency" in summarised(sim, e).truncations[0]


def test_a_count_is_drawn_whole():
    from capplan.language.model import standard_model

    q = standard_model().quantities["max_num_seqs"]
    dist = montecarlo.Distribution("normal", 200.0, 300.0, 256.0, "")
    values = sampling.draw(dist, q, "x", 1, 10_000).values
    assert np.array_equal(values, np.round(values)) and values.min() >= 1


def test_every_function_of_the_formula_language_has_a_batch_form():
    """Every function in formula.FUNCTIONS evaluates over a batch of the float backend."""
    args = {1: "t.x", 2: "t.x, t.ok", 3: "t.ok, t.x, 2"}
    for name, (_, arities) in FUNCTIONS.items():
        arity = min(arities)
        text = f"{name}({args[arity]})" if name != "max_before_failure" else "max_before_failure(t.x, t.ok)"
        text = "kth_largest(t.x, 2)" if name == "kth_largest" else text     # k counts from 1
        values = {"t.x": np.array([[1.0, 2.0, 4.0]]), "t.ok": np.array([[1.0, 1.0, 0.0]])}   # erlang_c: whole servers
        result = Numeric(values, values, batch=True).visit(parse(text).expr)
        assert np.all(np.isfinite(np.asarray(result, dtype=float))), name


BAD_RANGES = {
    "not LOW to HIGH": ({"value": "60 req/s", "range": "45-80 req/s"},
                        "inputs.peak_arrival_rate.range: expected 'LOW to HIGH'"),
    "low above high": ({"value": "60 req/s", "range": "80 to 45 req/s"},
                       "the low end 80 req/s must be below the high end 45 req/s"),
    "wrong dimensions": ({"value": "60 req/s", "range": "45 to 80 GiB"}, "has dimensions [information]"),
    "unknown dist": ({"value": "60 req/s", "range": "45 to 80 req/s", "dist": "beta"},
                     "inputs.peak_arrival_rate.dist: dist must be one of lognormal, normal, uniform, triangular"),
    "dist without range": ({"value": "60 req/s", "dist": "normal"}, "'dist:' needs a 'range:'"),
    "value outside its range": ({"value": "60 req/s", "range": "65 to 80 req/s", "dist": "triangular"},
                                "a triangular range's mode is the value, and 60 req/s lies outside 65 to 80 req/s"),
    "range outside the domain": ({"value": "60 req/s", "range": "-5 to 80 req/s", "dist": "normal"},
                                 "peak_arrival_rate must be positive"),
    "lognormal through zero": ({"value": 0.001, "range": "0 to 0.01", "dist": "lognormal"},
                               "a lognormal range must be positive"),
}


@pytest.mark.parametrize("case", sorted(BAD_RANGES))
def test_a_bad_range_is_one_located_message(case, base_plan, write_plan, run_main):
    spec, fragment = BAD_RANGES[case]
    name = "peak_arrival_rate" if case != "lognormal through zero" else "error_budget"
    base_plan["inputs"][name] = spec
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: plans/test-plan.yaml:") and f"inputs.{name}" in err
    assert fragment in err, err


def test_a_bad_cell_range_is_refused(base_plan, write_plan, run_main):
    base_plan["tables"]["deployments"]["rows"][0]["node_hourly_cost"] = {"value": "40 USD/h", "span": "1 to 2"}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1 and "tables.deployments.rows[0].node_hourly_cost.span: unknown field 'span'" in err
    base_plan["tables"]["deployments"]["rows"][0]["node_hourly_cost"] = {"value": "40 USD/h", "range": "30 to 45 GiB"}
    code, _, err = run_main("eval", write_plan(base_plan))
    assert code == 1 and "tables.deployments.rows[0].node_hourly_cost.range" in err and "dimensions" in err


def test_a_scenario_cell_may_be_uncertain_and_replaces_the_plans(base_plan, write_plan, run_main):
    base_plan["tables"]["deployments"]["rows"][0]["node_hourly_cost"] = {"value": "40 USD/h", "range": "30 to 45 USD/h"}
    base_plan["scenarios"] = {"cheap": {"set": {"deployments[node8].node_hourly_cost":
                                                {"value": "20 USD/h", "range": "15 to 25 USD/h", "dist": "triangular"}}},
                              "fixed": {"set": {"deployments[node8].node_hourly_cost": "40 USD/h"}},
                              "pinned": {"set": {"instance_max_rate": {"value": "4 req/s", "range": "3 to 5 req/s"}}}}
    path = write_plan(base_plan)
    plan, evaluations = evaluate_plan(path)
    cheap = montecarlo.simulate(plan, evaluations[0].model, evaluations[0].values, plan.scenarios[1], samples=1000)
    (u,) = cheap.uncertain
    assert u.dist.kind == "triangular" and 15 / 3600 <= u.drawn.values.min() and u.drawn.values.max() <= 25 / 3600
    fixed = montecarlo.simulate(plan, evaluations[0].model, evaluations[0].values, plan.scenarios[2], samples=10)
    assert fixed.uncertain == []
    pinned = montecarlo.simulate(plan, evaluations[0].model, evaluations[0].values, plan.scenarios[3], samples=1000)
    drawn = {u.label: u.drawn.values for u in pinned.uncertain}
    assert set(drawn) == {"instance_max_rate", "deployments[node8].node_hourly_cost"}   # the pin, and the plan's cell
    assert np.array_equal(pinned.column("instance_max_rate"), drawn["instance_max_rate"])
    # 60 req/s over λ* × 0.7 per replica: the GPU count follows the drawn pin
    assert np.array_equal(pinned.column("active_gpus"), np.ceil(60 / (drawn["instance_max_rate"] * 0.7)))
    code, out, _ = run_main("simulate", path, "--samples", "100", "--scenario", "cheap", "--format", "markdown")
    assert code == 0 and "triangular, from 15 to 25 USD/h" in out


def test_the_record_json_workbook_and_picture_show_the_simulation(built_project):
    """Written for a plan with uncertain values (the main plan), from the one view; absent for one without."""
    import json
    import xml.etree.ElementTree as ET

    import openpyxl

    from capplan.rendering.charts import simulation as simchart

    from capplan.analysis.pipeline import Artifacts
    from capplan.rendering import view as view_module

    out = built_project(MAIN_PLAN, RETAIL_PLAN) / "out"
    stem, retail = MAIN_PLAN.stem, RETAIL_PLAN.stem
    plan, evaluations = evaluate_plan(MAIN_PLAN)
    shown = view_module.build(plan, evaluations, Artifacts(evaluations)).simulation
    odds = {d.text: d.probability for d in shown.decisions}
    assert odds["active GPUs ≤ 9 GPUs"] == shown.as_json()["decisions"][0]["probability"]

    record = (out / f"{stem}.md").read_text(encoding="utf-8")
    assert re.search(r"^## \d+\. Uncertainty: 100,000 draws of the uncertain inputs$", record, re.MULTILINE)
    assert f"| active GPUs ≤ 9 GPUs | {simulation.percent(odds['active GPUs ≤ 9 GPUs'])} |" in record
    assert (f"![The probability each decision holds over the draws, then each key result's distribution with its "
            f"quartiles and the point plan]({stem}.simulation.svg)") in record
    assert "Uncertainty" not in (out / f"{retail}.md").read_text(encoding="utf-8")

    doc = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
    assert doc["simulation"] == json.loads(json.dumps(shown.as_json()))
    assert doc["simulation"]["seed"] == montecarlo.DEFAULT_SEED and doc["simulation"]["samples"] == 100_000
    assert "simulation" not in json.loads((out / f"{retail}.json").read_text(encoding="utf-8"))

    picture = ET.fromstring((out / f"{stem}.simulation.svg").read_text(encoding="utf-8"))
    paths = [p for p in picture.iter("{http://www.w3.org/2000/svg}path")]
    drawn = simchart.shown(shown)             # the results that decide and move: a diamond (the point plan) each
    assert len(paths) == len(drawn) > 0 and {r.key.role for r in drawn} <= {"count", "cost"}
    texts = [t.text for t in picture.iter("{http://www.w3.org/2000/svg}text")]
    for d in shown.decisions:                  # one bar per decision, its probability written beside it
        assert d.text in texts and simulation.percent(d.probability) in texts
    assert not (out / f"{retail}.simulation.svg").exists()

    wb = openpyxl.load_workbook(out / f"{stem}.xlsx")
    ws = wb["Simulation"]
    assert ws["A1"].value == "Simulation output: 100,000 draws, seed 20261111 (values, not formulas)"
    cells = {row[0]: row[1:] for row in ws.iter_rows(values_only=True) if row[0]}
    assert cells["active GPUs ≤ 9 GPUs"][0] == odds["active GPUs ≤ 9 GPUs"]
    assert cells["active GPUs"][:5] == (9, 7, 9, 12, shown.results[1].mean)
    assert not any(isinstance(v, str) and v.startswith("=") for row in ws.iter_rows(values_only=True) for v in row)
    assert "Simulation" not in openpyxl.load_workbook(out / f"{retail}.xlsx").sheetnames


def test_replicated_sweep_runs_are_bootstrapped(base_plan, write_plan, tmp_path):
    """Three runs per rate, one of them an outlier whose TPOT (30, 40 ms) breaks the 25 ms SLO: a
    draw's row passes when at most one of its three resampled runs is the outlier,
    P = (2/3)^3 + 3 (1/3)(2/3)^2 = 20/27. λ* = 4 needs both rows to pass, (20/27)^2; when the
    first row fails the plan does not evaluate (no row meets every SLO), 7/27 of the draws."""
    (tmp_path / "plans" / "sweep").mkdir(parents=True)
    (tmp_path / "plans" / "sweep" / "runs.csv").write_text(
        "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n"
        "2,100,10,2.0,200\n2,120,11,2.2,210\n2,140,30,2.1,190\n"
        "4,200,12,2.5,400\n4,220,13,2.6,390\n4,900,40,9.0,380\n")
    base_plan["tables"]["load_sweep"] = {"import": ["sweep/*.csv"], "source": "test runs"}
    plan, evaluations = evaluate_plan(write_plan(base_plan))
    e = evaluations[0]
    assert montecarlo.uncertain_in(plan)                     # nothing typed: the runs carry the spread
    sim = montecarlo.simulate(plan, e.model, e.values, samples=100_000)
    labels = {u.label: u for u in sim.uncertain}
    assert labels["load_sweep[4].tpot_p95"].dist.text == "bootstrap: median of 3 runs resampled"
    rate = sim.column("instance_max_rate")
    assert np.mean(sim.evaluates) == pytest.approx(20 / 27, abs=0.005)
    assert np.mean(rate[sim.evaluates] == 4) * np.mean(sim.evaluates) == pytest.approx((20 / 27) ** 2, abs=0.005)
    # the same resampled runs give every column: TPOT 40 ms comes with E2E 9 s
    tpot = labels["load_sweep[4].tpot_p95"].drawn.values
    e2e = labels["load_sweep[4].e2e_p99"].drawn.values
    assert np.array_equal(tpot == 0.040, e2e == 9.0)
