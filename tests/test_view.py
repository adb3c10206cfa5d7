"""The view layer: one declaration of the key results, read by every output."""

from __future__ import annotations

import json

import yaml
from conftest import MAIN_PLAN, RETAIL_PLAN
from openpyxl import load_workbook

import capplan
from capplan.rendering import jsonout, view
from capplan.artifacts.declared import layout
from plan_edits import full_view


def _view(path):
    plan = capplan.load(path)
    return full_view(plan, capplan.evaluate(plan))


def test_key_results_follow_the_layout_declaration():
    v = _view(MAIN_PLAN)
    declared = [d["quantity"] for d in view.declared()]
    nominal = v.scenarios[0]
    scalars = [k.quantity for k in nominal.scalars()]
    assert scalars == [q for q in declared if "." not in q]
    rows = nominal.rows()
    assert list(rows) == ["aws-p4de.24xlarge", "fractional-a100-80gb"]
    assert [k.quantity for k in rows["aws-p4de.24xlarge"]] == [q for q in declared if "." in q]
    key = nominal.key("deployments[fractional-a100-80gb].monthly_cost")
    assert (key.value, key.text) == (18226.8, "$18,226.80")
    assert nominal.key("active_gpus").text == "9 GPUs"


def test_knee_and_fleet_headroom_are_model_quantities():
    v = _view(MAIN_PLAN)
    e = v.nominal
    assert e.display("knee_upper_rate") == 12                   # the first failing swept rate
    by_name = {s.name: s for s in v.scenarios}
    assert by_name["surge_50"].key("deployments[fractional-a100-80gb].fleet_headroom").value == 0.777777777778
    assert by_name["surge_50"].key("deployments[fractional-a100-80gb].fleet_holds").value is False
    assert by_name["n_minus_1"].key("deployments[aws-p4de.24xlarge].fleet_safe_capacity").value == 105


def test_every_output_shows_the_same_key_results(run_main, tmp_path):
    """The record's sensitivity table, `capplan eval`, the JSON and the workbook
    Summary each show the declared labels, and the same numbers."""
    code, out, err = run_main("build", MAIN_PLAN, "--out", tmp_path)
    assert code == 0, err
    labels = [d["label"] for d in view.declared()]
    record = (tmp_path / "llama3-8b-a100-chat-mix.md").read_text()
    header = next(line for line in record.splitlines() if line.startswith("| Scenario | Changes |"))
    assert header.split(" | ")[2:5] == labels[:3]
    doc = json.loads((tmp_path / "llama3-8b-a100-chat-mix.json").read_text())
    assert doc["format_version"] == jsonout.FORMAT_VERSION
    ids = [k["id"] for k in doc["scenarios"]["nominal"]["key_results"]]
    assert ids[:3] == ["safe_rate_per_replica", "active_gpus", "resilient_gpus"]
    assert "deployments[aws-p4de.24xlarge].fleet_holds" in ids
    code, text, _ = run_main("eval", MAIN_PLAN, "--scenario", "surge_50")
    assert code == 0
    assert "  active GPUs                    13 GPUs" in text.splitlines()
    ws = load_workbook(tmp_path / "llama3-8b-a100-chat-mix.xlsx")["Summary"]
    column_a = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    for d in view.declared():
        assert any(str(c).strip() == d["label"] for c in column_a if c), d["label"]


def test_headline_and_row_summary_are_sentences_of_the_layout():
    v = _view(MAIN_PLAN)
    assert v.headline.startswith("9 GPUs carry the 60 req/s peak; 10 GPUs with redundancy. On aws-p4de.24xlarge: "
                                 "2 nodes (16 GPUs), $59,965.44 a month, $9.36 per 1M output tokens.")
    assert v.row_summary(v.nominal, 1) == ("10 nodes, $18,226.80; nominal fleet 70 req/s safe, 1.167× the peak: holds")
    assert "headline" in layout()["sentences"] and "row_summary" in layout()["sentences"]


def test_a_pin_reports_the_formula_it_replaces_under_the_plans_switches(tmp_path):
    """littles_law with safe_rate_per_replica pinned: the replaced formula is
    the Little's-law one, not the load-sweep one (a bug of the old jsonout)."""
    plan = yaml.safe_load(RETAIL_PLAN.read_text())
    plan.setdefault("scenarios", {})["pinned"] = {"title": "Pinned rate",
                                                  "set": {"safe_rate_per_replica": "3 req/s"}}
    path = tmp_path / "retail.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    doc = jsonout.document(_view(path))
    item = doc["scenarios"]["pinned"]["quantities"]["safe_rate_per_replica"]
    assert item["pinned"] is True
    assert item["formula_replaced"] == "slo_batch_limit / request_residence_time"


def test_plan_text_in_a_markdown_cell_cannot_break_the_table_or_hide_text():
    from capplan.rendering.markdown import cell
    assert cell("a|b\nc") == "a\\|b c"
    assert cell("<details>") == "&lt;details>"
    assert cell("pay\u202eUSD 01") == "pay&lt;U+202E&gt;USD 01"          # right-to-left override shown
    assert cell("x\u200by") == "x&lt;U+200B&gt;y"                        # zero-width space shown
    assert cell(None, empty="—") == "—"


def test_a_row_summary_shows_only_the_columns_its_sentence_reads(monkeypatch):
    """The record words one row per scenario: the row's columns are shown when the sentence
    reads them, and the words are those of the row shown whole."""
    shown_view = _view(MAIN_PLAN)
    e = shown_view.nominal
    table = next(iter(shown_view.scenarios[0].rows().values()))[0]
    columns = [c for c in e.model.tables["deployments"].columns if c in e.values]
    eager = {e.model.quantities[c].column: view.shown(e, c, table.index) for c in columns}
    whole = view.sentence("row_summary", r=eager, pools=None)          # a plan without pools
    read = []
    real = view.shown
    monkeypatch.setattr(view, "shown", lambda e, name, index=None: read.append(name) or real(e, name, index))
    assert shown_view.row_summary(e, table.index) == whole
    assert set(read) == {"deployments.nodes", "deployments.monthly_cost", "deployments.fleet_safe_capacity",
                         "deployments.fleet_headroom", "deployments.fleet_holds"} and len(columns) > 2 * len(read)
