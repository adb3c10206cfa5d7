"""Plan-supplied text reaches the record, the charts and the diff comment escaped.

A plan may come from an untrusted pull request: its title, owner,
description, row and scenario names and the names of the files it imports
must not break a Markdown table, emit HTML, open a code span or math, or
make an SVG chart invalid XML.
"""

from __future__ import annotations

import re
import xml.dom.minidom

from capplan.rendering.markdown import cell, code, prose
from capplan.rendering.charts.svg import escape

HOSTILE = "aws|<img src=x>`rm -rf`$\\alpha$"


def test_cell_escapes_every_markdown_hazard():
    assert cell("aws|<img src=x>") == "aws\\|&lt;img src=x>"
    assert cell("a`b") == "a\\`b"
    assert cell("x $\\alpha$ y") == "x $\\\\alpha\\$ y"        # the closing dollar, and the backslash
    assert cell("two\nlines\r\nhere") == "two lines here"
    assert cell("> quote --> end") == "&gt; quote --&gt; end"
    assert cell("+$1,822.68 and $ per 1M") == "+$1,822.68 and $ per 1M"     # capplan's own money, unchanged
    assert cell("evil\u202etext") == "evil&lt;U+202E&gt;text"


def test_code_spans_only_what_a_code_span_can_hold():
    assert code("plans/ü plan.yaml") == "`plans/ü plan.yaml`"
    assert code("a|b") == "a\\|b" and code("a`b") == "a\\`b" and code("a\nb") == "a b"


def test_prose_keeps_paragraphs_and_closed_code_spans():
    text = "# not a heading\n- not a list `pin: {value: 1}` <b>x</b>\n\n1. not numbered | pipe"
    assert prose(text) == ("\\# not a heading\n\\- not a list `pin: {value: 1}` &lt;b>x&lt;/b>\n\n"
                           "1\\. not numbered \\| pipe")


def test_svg_escape_is_well_formed_xml():
    text = escape("a<b>&'c\x00\x1b")
    assert text == "a&lt;b&gt;&amp;'c\ufffd\ufffd"
    assert escape("it's", quote=True) == "it&apos;s"


def _hostile_plan(base_plan, write_plan, tmp_path):
    base_plan["title"] = f"Title {HOSTILE}"
    base_plan["owner"] = f"owner {HOSTILE}"
    base_plan["description"] = f"Description {HOSTILE}\n\n# heading\n<script>alert(1)</script>"
    base_plan["tables"]["deployments"]["rows"][0]["name"] = HOSTILE
    base_plan["tables"]["deployments"]["rows"].append(
        {"name": "other|<b>", "gpus_per_node": 1, "node_hourly_cost": "3 USD/h"})
    base_plan["tables"]["classes"]["rows"][0]["name"] = "chat|<i>`"
    base_plan["scenarios"] = {"surge": {"title": f"Surge {HOSTILE}", "set": {"peak_arrival_rate": "90 req/s"}}}
    folder = tmp_path / "plans" / "sweep"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "runs|<img src=x>`$x$.csv").write_text(
        "arrival_rate,ttft_p95,tpot_p95,e2e_p99,output_throughput\n2,100,10,2.0,200\n4,200,12,2.5,400\n")
    base_plan["tables"]["load_sweep"] = {"import": ["sweep/*.csv"], "source": f"runs {HOSTILE}"}
    return write_plan(base_plan)


def _tables_are_whole(text: str) -> None:
    """Every row of every table has as many cells as its header (an unescaped pipe adds one)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.fullmatch(r"\| (---:?|:?---)( \| (---:?|:?---))* \|", line):
            width = len(re.split(r"(?<!\\)\|", lines[i - 1]))
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert len(re.split(r"(?<!\\)\|", lines[j])) == width, lines[j]
                j += 1


def test_record_escapes_plan_text_everywhere(base_plan, write_plan, tmp_path, run_main):
    path = _hostile_plan(base_plan, write_plan, tmp_path)
    code_, _, err = run_main("build", path, "--out", tmp_path / "out")
    assert code_ == 0, err
    record = (tmp_path / "out" / "test-plan.md").read_text()
    assert "<img" not in record and "<script" not in record and "|<b>" not in record and "<i>" not in record
    assert "&lt;img src=x>" in record and "&lt;script>" in record
    assert "# Title aws\\|&lt;img src=x>\\`rm -rf\\`\\$\\\\alpha\\$\n" in record
    assert "owner aws\\|&lt;img src=x>" in record
    assert "\n\\# heading\n" in record                          # the description cannot open a heading
    assert "sweep/runs\\|&lt;img src=x>\\`\\$x\\$.csv" in record        # the imported file's name
    assert "`$x$`" not in record and "$\\alpha$" not in record
    _tables_are_whole(record)
    for chart in (tmp_path / "out").glob("*.svg"):
        xml.dom.minidom.parseString(chart.read_bytes())          # well-formed, whatever the names
        assert "<img" not in chart.read_text()


def test_diff_comment_escapes_plan_text(base_plan, write_plan, tmp_path, run_main):
    path = _hostile_plan(base_plan, write_plan, tmp_path)
    old = tmp_path / "old.yaml"
    old.write_text(path.read_text().replace("90 req/s", "95 req/s").replace("60 req/s", "50 req/s"))
    new = tmp_path / "plans" / "new.yaml"
    new.write_text(path.read_text())
    code_, out, err = run_main("diff", old, new)
    assert code_ == 0, err
    assert "<img" not in out and "|<b>" not in out
    _tables_are_whole(out)
