"""The record and the workbook recommend the same thing.

A reviewer reads the record's first screen, a finance partner the workbook's Summary:
for every reference plan, the option the Summary recommends (its first block: the
candidates, the strategies through a traffic profile, or the deployments) is the one
the record's headline names first, and where no option holds both say so.
"""

from __future__ import annotations

import io
import re

import pytest
from conftest import ROOT
from openpyxl import load_workbook

from capplan.build import compile_plan

PLANS = sorted((ROOT / "plans").glob("*.yaml"))
HEADERS = {"Option", "Strategy", "Candidate (the Candidates sheet)"}


def _first_block(ws) -> tuple[list[str], str]:
    """The first block's option names and its recommendation (or verdict) line."""
    column = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    header = next(i for i, v in enumerate(column) if v in HEADERS)
    end = next(i for i in range(header + 1, len(column)) if str(column[i]).startswith(("Recommended:", "Verdict:")))
    return [str(v) for v in column[header + 1:end]], str(column[end])


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_the_summary_recommends_what_the_record_s_headline_names_first(path):
    files = compile_plan(path).files
    record = files[f"{path.stem}.md"].decode()
    headline = next(line for line in record.splitlines() if line.startswith("**") and not line.startswith("**The"))
    ws = load_workbook(io.BytesIO(files[f"{path.stem}.xlsx"]), data_only=True)["Summary"]
    names, said = _first_block(ws)
    if said.startswith("Verdict:"):                               # one option: the record names it
        assert len(names) == 1 and names[0] in headline
        return
    if said.startswith("Recommended: none"):
        assert headline.startswith("**Not ready to approve")
        return
    pick = re.sub(r" \(breaks in \d+ scenario\(s\)\)$", "", said.removeprefix("Recommended: "))
    assert pick in names

    def first(name: str) -> int:
        """Where the headline has named an option whole: the first mention of its last-named part ('X on Y':
        two options on one offer are told apart by their configuration, not by the offer they share)."""
        found = [_whole_name(headline, part) for part in name.split(" on ")]
        return max(found) if all(f >= 0 for f in found) else len(headline)

    assert first(pick) < len(headline), (pick, headline)
    assert all(first(pick) < first(other) for other in names if other != pick), (pick, headline)
    assert ("(breaks in" in said) == bool(re.search(r"\bit breaks in|fleet breaks in", headline))


def _whole_name(text: str, part: str) -> int:
    """Where ``part`` first stands whole in ``text`` (not the start of a longer name: 'h200 TP4' is not
    named by 'h200 TP4, disaggregated'), or -1."""
    found = re.search(re.escape(part) + r"(?![,\w-])", text)
    return found.start() if found else -1


RISK = re.compile(r"^> \d+\. (?:`([^`]+)` (.*)\.|(Over the plan's uncertain inputs .*))$")


def _record_risks(record: str) -> list[str]:
    """The first screen's risks, each 'input what: changes — ⚠ evidence', then the simulation's odds, unescaped."""
    found = (RISK.match(line) for line in record.split("<details>")[0].splitlines())
    return [re.sub(r"\\(.)", r"\1", m[3] or f"{m[1]} {m[2]}") for m in found if m]


def _summary_risks(ws) -> list[str]:
    """The Summary's top risks under their heading, each 'input what: changes' as the record words it."""
    column = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    start = next((i for i, v in enumerate(column) if str(v).startswith("Top risks")), None)
    if start is None or str(column[start + 1]).startswith("No decision flips"):
        return []
    rows = range(start + 2 + (column[start + 1] == "Input"), len(column) + 1)
    return [f"{ws.cell(r, 1).value} {ws.cell(r, 2).value}: {ws.cell(r, 5).value}" if ws.cell(r, 2).value
            else ws.cell(r, 1).value
            for r in rows[:next((k for k, r in enumerate(rows) if ws.cell(r, 1).value is None), len(rows))]]


@pytest.mark.parametrize("path", [p for p in PLANS if "candidates:" in p.read_text(encoding="utf-8")],
                         ids=lambda p: p.stem)
def test_the_summary_lists_the_risks_the_record_s_first_screen_lists(path):
    """A plan with candidates: the Summary's top risks are the first screen's, in its order (the ranking's
    swaps, the nearest overtaking flips within 25 %, stale prices) and the simulation's odds, not the
    baseline's holds table."""
    files = compile_plan(path).files
    ws = load_workbook(io.BytesIO(files[f"{path.stem}.xlsx"]), data_only=True)["Summary"]
    assert _summary_risks(ws) == _record_risks(files[f"{path.stem}.md"].decode())
