"""The record's SVG charts and its Decision line, checked against the plan
files read independently (the sweep rows and SLOs as written in the YAML,
the fleet verdicts from the evaluation's own values)."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import MAIN_PLAN, ROOT

import capplan
from capplan.errors import CapplanError
from capplan.rendering import markdown, record
from capplan.rendering import palette as palette_module
from capplan.rendering.charts import svg
from capplan.rendering.palette import palette
from plan_edits import full_view

SVG = "{http://www.w3.org/2000/svg}"
BIG_PLAN = ROOT / "plans" / "llama3.3-70b-a100-40gb-tp8-sharegpt.yaml"
FRACTIONAL = "fractional-a100-80gb"


def _view(path):
    plan = capplan.load(path)
    return full_view(plan, capplan.evaluate(plan))


def _svg(v, kind):
    return ET.fromstring(v.charts()[v.chart_file(kind)])


def _texts(root):
    return [t.text for t in root.iter(f"{SVG}text")]


def _failing_markers(root):
    """Centres of the red-ringed crosses (a point that misses its panel's SLO), legend excluded."""
    return [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")
            if c.get("stroke") == svg.ink("fail") and float(c.get("cy")) < 350]


def _plan_sweep(path):
    """The sweep rows and the SLOs in their plan units, read from the YAML, not from capplan."""
    doc = yaml.safe_load(path.read_text())
    return doc["tables"]["load_sweep"]["rows"], doc["inputs"]


def test_charts_are_byte_identical_across_builds():
    first, second = _view(MAIN_PLAN).charts(), _view(MAIN_PLAN).charts()
    assert sorted(first) == [f"{MAIN_PLAN.stem}.{k}.svg" for k in ("holds", "scenarios", "sweep")]
    assert first == second
    for text in first.values():
        ET.fromstring(text)                                  # well-formed XML


def test_latency_chart_draws_each_slo_and_marks_the_failing_points():
    rows, inputs = _plan_sweep(MAIN_PLAN)
    limits = {"ttft_p95": 1000, "tpot_p95": 25, "e2e_p99": 5}     # ms, ms, s as in the plan (1 s = 1000 ms)
    assert inputs["ttft_p95_slo"]["value"] == "1 s" and inputs["e2e_p99_slo"]["value"] == "5 s"
    failing = sum(1 for r in rows for c, limit in limits.items() if r[c] > limit)
    assert failing == 6                                      # 12 and 14 req/s miss all three
    root = _svg(_view(MAIN_PLAN), "sweep")
    texts = _texts(root)
    for label in ("TTFT p95: ttft_p95 [ms]", "TPOT p95: tpot_p95 [ms]", "E2E p99: e2e_p99 [s]", "SLO 1,000 ms", "SLO 25 ms",
                  "SLO 5 s", "λ* = 10 req/s", "arrival rate [req/s]", "knee"):
        assert label in texts, label
    assert [t for t in texts if t in {str(r["arrival_rate"]) for r in rows}][:7] == [str(r["arrival_rate"]) for r in rows]
    markers = _failing_markers(root)
    assert len(markers) == failing
    circles = [c for c in root.iter(f"{SVG}circle") if float(c.get("cy")) < 350]
    assert len(circles) == 3 * len(rows)                     # every point of every panel is drawn
    # linear axis (the sweep spans 2..14 req/s, under a factor of 8): even spacing of the rates
    xs = sorted({float(c.get("cx")) for c in circles})[:len(rows)]
    gaps = [round(b - a, 1) for a, b in itertools.pairwise(xs)]
    assert max(gaps) - min(gaps) <= 0.2
    # the knee band runs from λ* (10 req/s) to the first failure (12 req/s), where the points are
    band = next(r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#fbe3d6")
    left, right = float(band.get("x")), float(band.get("x")) + float(band.get("width"))
    assert (round(left, 1), round(right, 1)) == (xs[4], xs[5])


def test_latency_chart_of_a_sweep_over_a_factor_of_16_has_a_log_axis():
    rows, _ = _plan_sweep(BIG_PLAN)
    assert [r["arrival_rate"] for r in rows] == [1, 4, 16]
    root = _svg(_view(BIG_PLAN), "sweep")
    assert "arrival rate [req/s], log scale" in _texts(root)
    xs = sorted({float(c.get("cx")) for c in root.iter(f"{SVG}circle") if float(c.get("cy")) < 350})[:3]
    assert abs((xs[1] - xs[0]) - (xs[2] - xs[1])) <= 0.2       # 1 → 4 and 4 → 16 are the same ratio
    assert len(_failing_markers(root)) == sum(1 for r in rows if r["tpot_p95"] > 35) == 1


def test_latency_chart_numbers_come_from_the_view():
    v = _view(MAIN_PLAN)
    chart = next(p["sweep"] for s in v.sections for p in s["parts"] if p["sweep"])["chart"]
    e = v.nominal
    assert chart["rates"] == e.display("load_sweep.arrival_rate")
    assert (chart["star"], chart["knee"]) == (e.display("instance_max_rate"), e.display("knee_upper_rate"))
    ttft = chart["series"][0]
    assert ttft["values"] == e.display("load_sweep.ttft_p95") and ttft["limit"] == e.display("ttft_p95_slo")


def test_scenario_chart_marks_the_scenarios_that_break_todays_fleet():
    v = _view(MAIN_PLAN)
    root = _svg(v, "scenarios")
    texts = _texts(root)
    breaking = [e.scenario.name for e in v.evaluations
                if e.display("deployments.fleet_safe_capacity")[1] < e.display("peak_arrival_rate")]
    assert breaking == ["surge_50", "context_x2", "ttft_400ms"]
    assert texts.count("✗ today's fleet breaks") == len(breaking)
    names = [t for t in texts if t in {e.scenario.name for e in v.evaluations}]
    assert names == [e.scenario.name for e in v.evaluations]
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("height") == "15.0"]
    assert len(bars) == 2 * 2 * len(v.evaluations)           # nodes and cost, per deployment, per scenario
    assert sum(1 for r in bars if r.get("stroke") == svg.ink("fail")) == 2 * len(breaking)
    # bar lengths follow the values: fractional nodes 14 (surge) against 10 (nominal)
    nodes = [float(r.get("width")) for r in bars if float(r.get("x")) == 250.0]
    assert math.isclose(nodes[1 * 2 + 1] / nodes[1], 14 / 10, rel_tol=1e-3)
    assert "$25,517.52" in texts


def test_scenario_chart_is_left_out_with_a_single_scenario():
    v = _view(BIG_PLAN)
    assert sorted(v.charts()) == [f"{BIG_PLAN.stem}.holds.svg", f"{BIG_PLAN.stem}.sweep.svg"]
    assert "scenarios.svg" not in record.render(v)
    assert v.decision["text"].startswith("No scenario but the nominal one tests it (add scenarios to the plan).")


def test_decision_names_the_breaking_scenarios_and_the_pending_measurements():
    v = _view(MAIN_PLAN)
    breaks = {}
    for e in v.evaluations:                                  # the evaluation's own values, not the view's
        for name, capacity in zip(e.display("deployments.name"), e.display("deployments.fleet_safe_capacity")):
            breaks.setdefault(name, [])
            if capacity < e.display("peak_arrival_rate"):
                breaks[name].append(e.scenario.name)
    assert v.decision["fleet_breaks"] == breaks == {"aws-p4de.24xlarge": [], FRACTIONAL: ["surge_50", "context_x2",
                                                                                           "ttft_400ms"]}
    assert v.decision["text"].startswith(f"Today's fleet on {FRACTIONAL}, the cheaper ($18,226.80 a month), breaks in "
                                         "surge_50, context_x2 and ttft_400ms. On aws-p4de.24xlarge it holds in every "
                                         "scenario.")
    e = v.nominal
    assert "hbm_efficiency" in e.provenance["bandwidth_gate"] and "hbm_efficiency" not in e.provenance["active_gpus"]
    assert v.decision["pending"] == {"hbm_efficiency": ["Gate 2: memory bandwidth (decode)"],
                                     "tensor_efficiency": ["Gate 3: compute (prefill)"]}
    text = record.render(v)
    # the record's first screen: the cheaper row, where it breaks, what holding everywhere costs, and the ask
    assert (f"**Rent {FRACTIONAL}: 10 GPUs on 10 nodes, $18,226.80 a month, $218,721.60 a year.** It is the cheaper "
            "of 2 options. Its fleet breaks in surge_50, context_x2 and ttft_400ms. aws-p4de.24xlarge holds in every "
            "scenario for $41,738.64 more a month.") in text
    assert f"| {FRACTIONAL} | ✗ breaks in surge_50, context_x2 and ttft_400ms | $18,226.80 | $2.84 |" in text
    assert f"\n{v.headline}\n" in text


def test_decision_when_every_fleet_holds_names_what_the_sizing_rests_on(write_plan):
    plan = yaml.safe_load(MAIN_PLAN.read_text())
    plan["scenarios"] = {k: v for k, v in plan["scenarios"].items() if k in ("fp8_kv", "n_minus_1")}
    v = _view(write_plan(plan))
    assert v.decision["fleet_breaks"] == {"aws-p4de.24xlarge": [], FRACTIONAL: []}
    assert "Today's fleet holds in every scenario." in v.decision["text"]
    retail = _view(ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml")
    # gate 2 checks the decode step at the batch Little's law sizes from decode_throughput
    assert retail.decision["pending"]["decode_throughput"] == ["active GPUs", "resilient GPUs", "nodes",
                                                               "nominal fleet holds",
                                                               "Gate 2: memory bandwidth (decode)"]


def test_record_polish_numbering_conversions_and_source_links():
    text = record.render(_view(MAIN_PLAN))
    assert not re.search(r"^#+ 7\.\d", text, re.MULTILINE) and "## 1. Workload and SLO contract" in text
    assert "<br>= 30.5 days × 24 h/day = 732 h |" in text
    assert ("[mlc-ai/mlc-llm@50e2686:python/mlc_llm/model/model_preset.py](https://github.com/mlc-ai/mlc-llm/blob/"
            "50e268686829491626d5a3d1511b7e4192b72645/python/mlc_llm/model/model_preset.py) (llama3_8b)") in text
    assert not re.search(r"\b[0-9a-f]{40}\b", re.sub(r"\]\([^)]*\)", "", text))     # no long hash outside a link


def test_conversion_follows_the_plan(base_plan, write_plan):
    base_plan["inputs"]["days_per_month"] = "30 day"
    plan = capplan.load(write_plan(base_plan))
    assert "= 30 days × 24 h/day = 720 h" in record.render(full_view(plan, capplan.evaluate(plan)))


def test_source_links_only_a_pinned_repository_reference():
    assert markdown.source("a/b@" + "0123456789" * 4 + ":x/y.md; see a/b@abc") == (
        "[a/b@0123456:x/y.md](https://github.com/a/b/blob/" + "0123456789" * 4 + "/x/y.md); see a/b@abc")
    assert markdown.source("a/b@" + "f" * 40 + ".") == f"[a/b@fffffff](https://github.com/a/b/tree/{'f' * 40})."
    assert markdown.source("plain | text <b>") == "plain \\| text &lt;b>"


def test_every_chart_keeps_its_words_inside_the_picture():
    """A long plan title is cut with an ellipsis, a long input name widens the tornado's
    label column, and every end-anchored label starts right of the left edge (the gpt-oss
    plan's title and its runtime_unreported_memory ran off the picture before)."""
    for path in sorted((ROOT / "plans").glob("*.yaml")):
        v = _view(path)
        for name, text in v.charts().items():
            root = ET.fromstring(text)
            width = float(root.get("width"))
            for t in root.iter(f"{SVG}text"):
                size = float(t.get("font-size", root.get("font-size")))
                drawn = svg.text_width(t.text, size) * (svg.BOLD if t.get("font-weight") == "bold" else 1)
                x, anchor = float(t.get("x")), t.get("text-anchor", "start")
                left = {"start": x, "middle": x - drawn / 2, "end": x - drawn}[anchor]
                assert left >= 0 and left + drawn <= width + 1, (name, t.text)


def test_chart_modules_name_inks_never_colours():
    """Every colour a chart draws with comes from templates/palette.yaml (its ``charts``
    inks or the tag colours): no chart module spells a colour itself."""
    folder = Path(svg.__file__).parent
    literal = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|['\"](?:white|black|red|green|blue|grey|gray|orange)['\"]")
    found = {p.name: literal.findall(p.read_text(encoding="utf-8")) for p in folder.glob("*.py")}
    assert len(found) >= 5 and not any(found.values()), found
    inks = palette()["charts"]
    assert svg.ink("fail") == "#" + inks["fail"].lower() and svg.ink("page") == "#ffffff"
    assert svg.in_turn("series", len(inks["series"])) == svg.in_turn("series", 0)


@pytest.fixture
def palette_file(tmp_path, monkeypatch):
    """Where a test writes its own palette.yaml, read in place of the template's."""
    monkeypatch.setattr(palette_module, "templates_dir", lambda: tmp_path)
    palette.cache_clear()
    yield tmp_path / "palette.yaml"
    palette.cache_clear()


@pytest.mark.parametrize("charts, key, words", [
    (None, "charts", "needs a 'charts' mapping"),
    ("series-not-a-list", "charts.series", "must be a list of one or more colours"),
    ("bad-ink", "charts.knee", "6-digit hex"),
])
def test_a_bad_chart_ink_is_located(palette_file, charts, key, words):
    data = yaml.safe_load((ROOT / "templates" / "palette.yaml").read_text(encoding="utf-8"))
    if charts is None:
        del data["charts"]
    elif charts == "series-not-a-list":
        data["charts"]["series"] = "1f5fa8"
    else:
        data["charts"]["knee"] = "peach"
    palette_file.write_text(yaml.safe_dump(data))
    with pytest.raises(CapplanError) as err:
        palette()
    assert err.value.key == key and err.value.file.endswith("palette.yaml")
    assert words in str(err.value)


TITLE_SIZE = "15"
DIURNAL = ROOT / "plans" / "llama3-8b-a100-diurnal.yaml"


def _title_lines(root) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}text") if t.get("font-size") == TITLE_SIZE]


def test_no_chart_title_is_cut_and_each_fits_the_chart():
    """#41: the diurnal demand chart's title ended '…through a da…': a title wraps instead, every
    line within the chart's width at the title's size (bold), and the content moves down under it."""
    for path in sorted((ROOT / "plans").glob("*.yaml")):
        v = _view(path)
        for name, text in v.charts().items():
            root = ET.fromstring(text)
            lines = _title_lines(root)
            assert lines and not any(line.endswith("…") for line in lines), (name, lines)
            for t in root.iter(f"{SVG}text"):
                if t.get("font-size") == TITLE_SIZE:
                    drawn = svg.text_width(t.text, int(TITLE_SIZE)) * svg.BOLD
                    assert float(t.get("x")) + drawn <= float(root.get("width")), (name, t.text)


def test_a_long_title_wraps_and_pushes_the_chart_down():
    c = svg.Canvas(300, 100)
    c.title("a title far too long for a chart three hundred pixels wide to hold on one line", "and its subtitle")
    c.rect(0, 50, 10, 10, fill=svg.ink("knee"))
    root = ET.fromstring(c.render())
    assert len(_title_lines(root)) == 3 and float(root.get("height")) == 100 + 2 * 19
    assert root.find(f"{SVG}g").get("transform") == "translate(0,38)"


def test_no_latex_in_chart_text():
    """'λ_t' in the demand chart is LaTeX a reader does not parse: λₜ, as the record's prose writes it."""
    latex = re.compile(r"\\[a-zA-Z]|[_^]\{|[α-ωΑ-Ω][_^]")
    for path in sorted((ROOT / "plans").glob("*.yaml")):
        for name, text in _view(path).charts().items():
            assert not [t for t in _texts(ET.fromstring(text)) if t and latex.search(t)], name


def test_the_scenarios_chart_title_says_how_many_scenarios_break_todays_fleet():
    lines = _title_lines(_svg(_view(MAIN_PLAN), "scenarios"))
    assert " ".join(lines).startswith(f"3 of 6 scenarios break today's fleet on {FRACTIONAL}")


def test_the_demand_chart_says_capacity_covers_demand_and_lists_no_absent_mark():
    """No interval of the diurnal profile is short: the title says capacity covers demand in every
    hour, and the legend has no entry for the red 'short' shading that is not drawn."""
    root = _svg(_view(DIURNAL), "demand")
    assert " ".join(_title_lines(root)).startswith("Capacity covers demand in every hour")
    assert not [r for r in root.iter(f"{SVG}rect") if r.get("fill") == svg.ink("knee")]
    assert not [t for t in _texts(root) if "short" in t]


def test_the_demand_chart_shades_and_names_the_short_intervals():
    from capplan.rendering.charts import demand as demandchart
    data = {"start": [0.0, 1.0, 2.0], "arrival": [10.0, 30.0, 20.0], "requested": [20.0, 40.0, 30.0],
            "serving": [20.0, 20.0, 30.0], "risk": [0.0, 0.5, 0.0], "step": 1.0}
    root = ET.fromstring(demandchart.svg(data, "A plan"))
    assert " ".join(_title_lines(root)).startswith("Capacity is short of demand in 1 of 3 hours")
    assert [r for r in root.iter(f"{SVG}rect") if r.get("fill") == svg.ink("knee")]
    assert any(t.startswith("short of λₜ") for t in _texts(root))
