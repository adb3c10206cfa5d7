"""Plan text reaches the terminal and the record with its control characters escaped.

A deployment named ``"runpod\\e[31mRED\\e[0m"`` must not colour a reviewer's terminal or a CI log
(nor move its cursor, ring its bell or reverse the direction of what follows), whichever command
prints it; ``eval --json`` stays valid JSON that gives the name back as written.
"""

from __future__ import annotations

import json
import re

import pytest

from capplan.rendering.markdown import cell, code

HOSTILE = "runpod\x1b[31mRED\x1b[0m\x07\x7f\x9b2J\u202eevil"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def hostile(base_plan, write_plan):
    base_plan["tables"]["deployments"]["rows"][0]["name"] = HOSTILE
    base_plan["title"] = f"Title {HOSTILE}"
    base_plan["scenarios"] = {"surge": {"title": f"Surge {HOSTILE}", "set": {"peak_arrival_rate": "600 req/s"}}}
    return write_plan(base_plan)


def _clean(text: str) -> None:
    found = RAW.search(text)
    assert found is None, f"raw {found.group(0)!r} at {found.start()}: {text[max(found.start() - 40, 0):][:80]!r}"


def test_every_command_prints_control_characters_escaped(hostile, base_plan, write_plan, tmp_path, run_main):
    base_plan["tables"]["deployments"]["rows"][0]["node_hourly_cost"] = "41 USD/h"
    base_plan["tables"]["deployments"]["rows"][0]["name"] = HOSTILE
    other = write_plan(base_plan, name="other")
    runs = {
        "eval": run_main("eval", hostile),
        "build": run_main("build", hostile),
        "check": run_main("check", hostile),
        "explain": run_main("explain", hostile, f"deployments[{HOSTILE}].monthly_cost", "--format", "markdown"),
        "explain text": run_main("explain", hostile, "title"),
        "diff": run_main("diff", hostile, other),
        "seek": run_main("seek", hostile, "peak_arrival_rate"),
    }
    for command, (code_, out, err) in runs.items():
        assert code_ in (0, 1), (command, err)
        _clean(out)
        _clean(err)
    assert "runpod\\u001b[31mRED\\u001b[0m\\u0007\\u007f\\u009b2J\\u202eevil" in runs["eval"][1]


def test_eval_json_stays_json_and_keeps_the_name(hostile, run_main):
    code_, out, err = run_main("eval", hostile, "--json")
    assert code_ == 0, err
    _clean(out)
    doc = json.loads(out)
    assert doc["title"] == f"Title {HOSTILE}"


def test_the_record_shows_control_characters_as_code_points(hostile, run_main, tmp_path):
    code_, _, err = run_main("build", hostile)
    assert code_ == 0, err
    for path in (tmp_path / "out").glob("*.md"):
        _clean(path.read_text(encoding="utf-8"))
    assert cell("a\x1bb\x7fc\x9bd") == "a&lt;U+001B&gt;b&lt;U+007F&gt;c&lt;U+009B&gt;d"
    assert code("a\x1b[0m") == "a&lt;U+001B&gt;[0m"
