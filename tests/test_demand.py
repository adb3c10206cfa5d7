"""The cost of a demand curve (#22), worked by hand on small profiles.

The plan: the main plan's sweep (λ* = 10 req/s, ρ 0.7, so λ_safe = 7 req/s and
N+1), a peak of 70 req/s, one offer of one GPU at $2.49/h (a replica is a node).
A replica carries 10 req/s at λ*, and an interval needs ceil(λ_t / 7) + 1 replicas.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from capplan.engine.evaluate import evaluate_all
from capplan.errors import CapplanError
from capplan.language.model import standard_model
from capplan.loading.plan import load

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"
DIURNAL = ROOT / "plans" / "llama3-8b-a100-diurnal.yaml"

# 12 quiet hours (7 req/s: 2 replicas), 6 busy (35 req/s: 6), 6 at the peak (70 req/s: 11)
STEPS = [0.1] * 12 + [0.5] * 6 + [1.0] * 6
NO_LAG = {"node_start_time": "0 s", "engine_start_time": "0 s", "scale_up_window": "0 s", "scale_down_delay": "0 s"}


def plan_data(profile=STEPS, **inputs) -> dict:
    data = yaml.safe_load(CHAT.read_text(encoding="utf-8"))
    data.pop("scenarios", None)
    data.pop("expect", None)
    data["inputs"].pop("peak_to_average_ratio")
    data["inputs"]["peak_arrival_rate"] = "70 req/s"
    data["inputs"].update(inputs)
    data["tables"]["deployments"]["rows"] = [{"name": "gpu", "gpus_per_node": 1, "node_hourly_cost": "2.49 USD/h"}]
    data["traffic"] = {"profile": list(profile), "source": "hand-worked"}
    return data


def write(folder: Path, data: dict, name: str = "demand.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def evaluated(folder: Path, data: dict):
    model = standard_model()
    plan = load(write(folder, data), model)
    return plan, evaluate_all(plan, model)[0]


def value(e, name):
    return e.display(name)


def column(e, name):
    return e.display(f"profile.{name}")


def test_a_day_of_three_levels_priced_by_hand(tmp_path):
    _, e = evaluated(tmp_path, plan_data(reserved_price_ratio=0.6, **NO_LAG))
    assert column(e, "serving_replicas") == [2] * 12 + [6] * 6 + [11] * 6
    assert value(e, "peak_to_average_ratio") == pytest.approx(24 / 10.2)       # mean multiplier 0.425
    assert value(e, "serving_replica_hours") == 24 + 36 + 66                   # replica-hours a day
    assert value(e, "boot_replica_hours") == 0 and value(e, "slo_risk_intervals") == 0
    # R*: the largest count served in at least 0.6 of the hours; 6 replicas serve only 12 of 24
    assert value(e, "base_replicas") == 2
    assert value(e, "burst_replica_hours") == 6 * 4 + 6 * 9
    # R* holds while 12/24 < p_r/p_o <= 24/24: at 0.5 or below six replicas are worth reserving
    assert (value(e, "base_ratio_low"), value(e, "base_ratio_high")) == (0.5, 1.0)
    repeats = 732 / 24
    costs = dict(zip(e.display("deployments.name"), zip(
        e.display("deployments.monthly_cost"), e.display("deployments.autoscaled_monthly_cost"),
        e.display("deployments.base_burst_monthly_cost"), e.display("deployments.all_reserved_monthly_cost"))))
    fixed, auto, base_burst, reserved = costs["gpu"]
    assert fixed == pytest.approx(11 * 2.49 * 732)                                 # sized for the peak
    assert auto == pytest.approx(126 * 2.49 * repeats)                             # $9,569.07
    assert base_burst == pytest.approx((2 * 24 * 0.6 + 78) * 2.49 * repeats)       # $8,110.93: the cheapest
    assert reserved == pytest.approx(11 * 24 * 0.6 * 2.49 * repeats)               # $12,029.76
    assert base_burst < auto < reserved < fixed


def test_a_ratio_at_the_flip_reserves_the_busy_level(tmp_path):
    _, e = evaluated(tmp_path, plan_data(reserved_price_ratio=0.5, **NO_LAG))
    assert value(e, "base_replicas") == 6
    assert value(e, "burst_replica_hours") == 6 * 5


def test_a_one_minute_lag_leaves_the_first_minute_of_the_rising_hours_short(tmp_path):
    """L_up = 1 min on hourly intervals: replicas asked for at the start of an hour serve from its
    second minute. At hour 12 two replicas carry 20 req/s at λ* against 35 for that minute, then six
    carry 60; at hour 18 six carry 60 against 70, then eleven 110. Two short minutes in the day, which
    asking a minute ahead removes; the nine replicas started pay one minute of boot and 59 of serving."""
    lag = {**NO_LAG, "scale_up_window": "60 s"}
    _, e = evaluated(tmp_path, plan_data(**lag))
    assert (value(e, "scale_up_intervals"), value(e, "scale_up_whole_intervals")) == (1, 0)
    assert value(e, "scale_up_fraction") == pytest.approx(1 / 60)
    risky = [i for i, r in enumerate(column(e, "slo_risk")) if r]
    assert risky == [12, 18]
    assert column(e, "serving_replicas")[11:13] == [2, 2] and column(e, "arriving_replicas")[11:13] == [0, 4]
    assert column(e, "slo_risk_share")[12] == pytest.approx(1 / 60)
    assert column(e, "serving_capacity")[12] == pytest.approx((2 + 4 * 59 / 60) * 10)
    assert value(e, "slo_risk_intervals") == 2
    assert value(e, "slo_risk_time") == pytest.approx(120)                # seconds
    assert value(e, "prewarm_lead") == pytest.approx(60)
    assert sum(column(e, "started_replicas")) == 9
    assert value(e, "boot_replica_hours") == pytest.approx(9 / 60)
    assert value(e, "serving_replica_hours") == pytest.approx(126 - 9 / 60)


def test_a_lag_of_whole_intervals_keeps_the_whole_interval_rule(tmp_path):
    """L_up = 2 h exactly: what is asked for at hour 12 serves from hour 14, so hours 12, 13, 18 and
    19 are short for the whole hour, and nothing arrives within an interval."""
    _, e = evaluated(tmp_path, plan_data(**{**NO_LAG, "engine_start_time": "7200 s"}))
    assert (value(e, "scale_up_whole_intervals"), value(e, "scale_up_fraction")) == (2, 0)
    assert [i for i, r in enumerate(column(e, "slo_risk")) if r] == [12, 13, 18, 19]
    assert not any(column(e, "arriving_replicas"))
    assert value(e, "slo_risk_time") == pytest.approx(4 * 3600)
    assert value(e, "prewarm_lead") == pytest.approx(7200)


def test_a_lag_of_an_interval_and_a_half_is_short_for_exactly_the_lag(tmp_path):
    """L_up = 1.5 h: what is asked for at hour 12 serves from 13:30. Hour 12 is short all through and
    hour 13 for its first half, 1.5 h per rise; the same at 18 and 19: 3 h in all over four intervals.
    At hour 13 two replicas serve the whole hour and four arrive half-way: 4 on average."""
    _, e = evaluated(tmp_path, plan_data(**{**NO_LAG, "engine_start_time": "5400 s"}))
    assert (value(e, "scale_up_intervals"), value(e, "scale_up_whole_intervals")) == (2, 1)
    assert value(e, "scale_up_fraction") == pytest.approx(0.5)
    assert column(e, "slo_risk_share")[11:15] == pytest.approx([0, 1, 0.5, 0])
    assert column(e, "served_replicas")[13] == pytest.approx(4)
    assert value(e, "slo_risk_intervals") == 4
    assert value(e, "slo_risk_time") == pytest.approx(3 * 3600)
    # paid: every started replica boots 1.5 h, then serves; the day's 126 replica-hours in all
    assert value(e, "serving_replica_hours") + value(e, "boot_replica_hours") == pytest.approx(126)


def test_the_scale_down_delay_keeps_replicas_after_the_peak(tmp_path):
    """A delay of one interval keeps the peak's 11 replicas for the hour after it."""
    profile = [0.1] * 12 + [1.0] * 6 + [0.1] * 6
    _, e = evaluated(tmp_path, plan_data(profile, **{**NO_LAG, "scale_down_delay": "10 min"}))
    assert column(e, "target_replicas")[17:20] == [11, 11, 2]
    assert column(e, "serving_replicas")[17:20] == [11, 11, 2]


def test_scale_to_zero_is_refused_for_an_interactive_slo(tmp_path):
    profile = [0.0] * 6 + [1.0] * 18
    with pytest.raises(CapplanError, match=r"min_replicas 0 scales to zero, but a wake-up takes 6 min .* TTFT "
                                           r"SLO is 1 s") as err:
        evaluated(tmp_path, plan_data(profile, min_replicas=0))
    assert err.value.key == "inputs.min_replicas"


def test_scale_to_zero_charges_a_start_per_wake_up(tmp_path):
    """With a TTFT SLO longer than the wake-up, idle hours cost nothing and each wake-up pays L_up."""
    profile = [0.0] * 6 + [1.0] * 18
    data = plan_data(profile, min_replicas=0, ttft_p95_slo="10 min", e2e_p99_slo="20 min",
                     **{**NO_LAG, "engine_start_time": "120 s"})
    _, e = evaluated(tmp_path, data)
    assert column(e, "serving_replicas")[:6] == [0] * 6
    assert sum(column(e, "started_replicas")) == 11                      # the one wake-up of the day
    assert value(e, "boot_replica_hours") == pytest.approx(11 * 2 / 60)


def test_the_peak_and_par_of_a_csv_profile(tmp_path):
    (tmp_path / "traffic.csv").write_text("time,arrival_rate\n0,10\n0.25,40\n0.5,20\n0.75,10\n", encoding="utf-8")
    data = plan_data()
    data["traffic"] = {"file": "traffic.csv", "source": "a test"}
    data["inputs"].pop("peak_arrival_rate")
    plan, e = evaluated(tmp_path, data)
    assert value(e, "peak_arrival_rate") == 40
    assert value(e, "peak_to_average_ratio") == 2
    assert value(e, "profile_step") == 0.25 and value(e, "profile_span") == 1
    assert column(e, "multiplier") == [0.25, 1, 0.5, 0.25]


@pytest.mark.parametrize(("edit", "key", "message"), [
    (lambda d: d["traffic"].update(profile=[0.5] * 24), "traffic.profile", "the largest multiplier is the peak"),
    (lambda d: d["traffic"].update(profile=[1] * 23), "traffic.profile", "expected 24 hourly multipliers"),
    (lambda d: d["traffic"]["profile"].__setitem__(3, 1.5), "traffic.profile[3]", "a share of the peak from 0 to 1"),
    (lambda d: d["traffic"].update(file="x.csv"), "traffic", "either profile:"),
    (lambda d: d["traffic"].update(extra=1), "traffic.extra", "unknown key 'extra'"),
    (lambda d: d.update(traffic=[1]), "traffic", "expected a mapping"),
    (lambda d: d["inputs"].update(peak_to_average_ratio=3), "inputs.peak_to_average_ratio",
     "peak_to_average_ratio is 3, but traffic.profile gives 2.35294"),
    (lambda d: d["tables"].update(profile={"rows": [{"interval": 0, "multiplier": 1}]}), "tables.profile",
     "written under traffic:"),
])
def test_a_wrong_traffic_section_is_one_located_message(tmp_path, edit, key, message):
    data = plan_data()
    edit(data)
    with pytest.raises(CapplanError, match=message) as err:
        evaluated(tmp_path, data)
    assert err.value.key == key and err.value.line


@pytest.mark.parametrize(("text", "message"), [
    ("time,rate\n0,1\n1,2\n", "expected the columns time,arrival_rate"),
    ("time,arrival_rate\n0,1\n", "at least two rows"),
    ("time,arrival_rate\n0,1\n1,x\n", "line 3: time and arrival_rate must be numbers"),
    ("time,arrival_rate\n0,1\n1,-2\n", "line 3: arrival_rate must be 0 or more"),
    ("time,arrival_rate\n0,1\n1,2\n3,2\n", "one fixed step"),
    ("time,arrival_rate\n0,0\n1,0\n", "every arrival_rate is 0"),
])
def test_a_wrong_csv_is_refused_at_the_file_key(tmp_path, text, message):
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    data = plan_data()
    data["traffic"] = {"file": "t.csv"}
    data["inputs"].pop("peak_arrival_rate")
    with pytest.raises(CapplanError, match=message) as err:
        evaluated(tmp_path, data)
    assert err.value.key == "traffic.file"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.csv", "*.csv"])
def test_a_csv_outside_the_repository_is_refused(tmp_path, path):
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "plans"
    inner.mkdir()
    (tmp_path.parent / "outside.csv").write_text("time,arrival_rate\n0,1\n1,2\n", encoding="utf-8")
    data = plan_data()
    data["traffic"] = {"file": path if path != "../outside.csv" else "../../outside.csv"}
    data["inputs"].pop("peak_arrival_rate")
    with pytest.raises(CapplanError) as err:
        load(write(inner, data), standard_model())
    assert err.value.key == "traffic.file"


def test_a_plan_without_traffic_has_no_profile(tmp_path):
    model = standard_model()
    plan = load(CHAT, model)
    assert "traffic" not in plan.switches and "profile" not in plan.nominal.tables
    e = evaluate_all(plan, model)[0]
    assert "deployments.autoscaled_monthly_cost" not in e.values and not math.isnan(e.display("active_gpus"))


def test_a_csv_larger_than_the_limit_is_refused_unread(tmp_path, monkeypatch):
    from capplan.loading.plan import traffic

    monkeypatch.setattr(traffic, "MAX_FILE_BYTES", 16)
    (tmp_path / "t.csv").write_text("time,arrival_rate\n0,1\n1,2\n", encoding="utf-8")
    data = plan_data()
    data["traffic"] = {"file": "t.csv"}
    data["inputs"].pop("peak_arrival_rate")
    with pytest.raises(CapplanError, match="t.csv: cannot be read") as err:
        evaluated(tmp_path, data)
    assert err.value.key == "traffic.file"


def test_a_demand_input_in_a_plan_without_traffic_is_one_located_message(tmp_path):
    data = yaml.safe_load(CHAT.read_text(encoding="utf-8"))
    data["inputs"]["min_replicas"] = 2
    with pytest.raises(CapplanError, match="'min_replicas' is not part of a plan with no traffic: section") as err:
        load(write(tmp_path, data), standard_model())
    assert err.value.key == "inputs.min_replicas"


def test_a_price_model_column_in_a_plan_without_traffic_is_one_located_message(tmp_path):
    data = yaml.safe_load(CHAT.read_text(encoding="utf-8"))
    data["tables"]["deployments"]["rows"][1]["spot_hourly_cost"] = "1 USD/h"
    with pytest.raises(CapplanError, match="column 'spot_hourly_cost' is not part of a plan with no traffic: section") \
            as err:
        load(write(tmp_path, data), standard_model())
    assert err.value.key == "tables.deployments.rows[1].spot_hourly_cost"


def test_an_owned_offer_without_the_gpus_tdp_is_refused_not_priced_without_power(tmp_path):
    """The catalog gives no TDP for every GPU; an owned node's power would then cost nothing."""
    data = yaml.safe_load(DIURNAL.read_text(encoding="utf-8"))
    data["gpu"] = "h100-pcie-80gb"
    with pytest.raises(CapplanError, match=r"an owned offer prices its node's power from the GPU's thermal design "
                                           r"power, but gpu_tdp is 0 \(the catalog gives none for h100-pcie-80gb\): "
                                           r"state it under inputs") as err:
        load(write(tmp_path, data), standard_model())
    owned = next(i for i, row in enumerate(data["tables"]["deployments"]["rows"]) if "owned_price" in row)
    assert err.value.key == f"tables.deployments.rows[{owned}].owned_price"
    data["inputs"]["gpu_tdp"] = {"value": "350 W/GPU", "source": "H100 PCIe datasheet"}
    load(write(tmp_path, data, "stated.yaml"), standard_model())
    del data["inputs"]["gpu_tdp"]
    for row in data["tables"]["deployments"]["rows"]:            # no owned offer: the TDP is not needed
        row.pop("owned_price", None)
    load(write(tmp_path, data, "no-owned.yaml"), standard_model())


def test_a_simulation_walks_no_profile_interval_its_results_do_not_read(tmp_path, monkeypatch):
    """The simulation keeps the key results and decisions, none of which reads the profile's
    intervals: a year of hourly rows × 100,000 draws was 40 s of CPU spent on nothing shown."""
    from capplan.analysis import simulation
    from capplan.engine import montecarlo

    data = yaml.safe_load(DIURNAL.read_text(encoding="utf-8"))
    data["inputs"]["hbm_efficiency"] = {"value": 0.76, "range": "0.6 to 0.85", "source": "a test: a range"}
    plan = load(write(tmp_path, data), standard_model())
    evaluations = evaluate_all(plan, standard_model())
    walked = set()
    original = montecarlo.run_batch

    def spy(graph, *args, **kwargs):
        walked.update(graph.order)
        return original(graph, *args, **kwargs)

    monkeypatch.setattr(montecarlo, "run_batch", spy)
    shown = simulation.of_plan(evaluations)
    model = evaluations[0].model
    assert shown is not None and shown.evaluated > 0
    assert simulation.kept(evaluations[0]) <= walked                    # what it shows was computed
    assert not [n for n in walked if model.quantities[n].table == "profile"]
