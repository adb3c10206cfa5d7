"""Issue 37's cases about text: control characters on the terminal (13), a title too long for a
workbook cell (14), a model declared by its ``config.json`` and named (19)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl

from benchmarks.redteam import common
from benchmarks.redteam.common import Wrong, capplan, expect, plan, said, write_plan

RED = "runpod\x1b[31mRED\x1b[0m"
UNSHOWN = ("\x1b", "\x7f", "\x9b", "\u202e")


def terminal(folder: Path) -> str:
    """13: a deployment named with an escape sequence; eval, eval --json, build, check, explain."""
    doc = plan()
    doc["tables"]["deployments"]["rows"][0]["name"] = RED
    write_plan(folder, doc)
    for args in (("eval", "plans/p.yaml"), ("eval", "--json", "plans/p.yaml"), ("build",), ("check",),
                 ("explain", "plans/p.yaml", f"deployments[{RED}].monthly_cost")):
        done = capplan(folder, *args)
        expect(done.returncode == 0, done, f"`capplan {' '.join(args[:2])}` failed")
        raw = [c for c in UNSHOWN if c in done.stdout + done.stderr]
        expect(not raw, done, f"`capplan {' '.join(args[:2])}` printed {raw[0]!r} raw" if raw else "")
        if "--json" in args:
            names = json.dumps(json.loads(done.stdout))
            expect(RED.replace("\x1b", "\\u001b") in names, done, "eval --json lost the name")
    records = [p.name for p in (folder / "out").glob("*.md") if "\x1b" in p.read_text(encoding="utf-8")]
    expect(not records, None, f"out/{records[0] if records else ''} holds the escape byte raw")
    return "every command prints ESC as \\u001b; the record shows <U+001B>; eval --json reads back the name"


def long_title(folder: Path) -> str:
    """14: a 1 MiB ``title:``; every workbook text cell must stay within Excel's 32,767 characters."""
    write_plan(folder, plan(title="T" * 2 ** 20))
    done = capplan(folder, "build")
    if done.returncode == 0:
        book = openpyxl.load_workbook(folder / "out" / "p.xlsx")
        longest = max(len(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row
                      if isinstance(c.value, str))
        expect(longest <= 32_767, done, f"the workbook holds a text cell of {longest:,} characters")
    expect(done.returncode == 1 and "title" in done.stderr and "1,000" in done.stderr, done,
           "a 1 MiB title is not refused by key and limit")
    return said(done)


CASES = [
    (13, "control characters reach the terminal", terminal),
    (14, "a 1 MiB title: in a workbook cell", long_title),
]
