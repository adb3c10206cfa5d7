"""Every formula of every reference record reaches GitHub's math renderer as written.

GitHub's Markdown pass runs before its math renderer and treats a bare
``$…$`` as text: it removes the backslash before any ASCII punctuation
(``\\{`` becomes ``{``, the ``\\\\`` row break of a piecewise formula one
backslash) and may read ``_`` or ``*`` as emphasis (github/markup #1577,
#1746). The inside of a code span is never touched, so the record writes
inline math as ``$`…`$`` (:func:`capplan.rendering.markdown.math`). These
tests render each plan in ``plans/``, simulate that escape pass on every
line and check that no formula changes, that none is left in the bare form,
and that each parses: with KaTeX when ``node`` can load it (``npm install
katex`` into a folder on ``NODE_PATH``), always with a brace and
``\\left``/``\\right`` balance check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
from conftest import ROOT
from test_record_escaping import _hostile_plan

from capplan.analysis.pipeline import run
from capplan.rendering import record, view
from capplan.rendering.markdown import math

PLANS = sorted((ROOT / "plans").glob("*.yaml"))

MATH = re.compile(r"\$`([^`\n]*)`\$")
CODE = re.compile(r"(?<!\\)(`+)(?!`)(.*?[^`])\1(?!`)")             # a code span; \` opens none
# GitHub's inline math: an unescaped $ before a non-space, up to the next unescaped $
# after a non-space that no digit follows ("$40.96/h and $59,965.44" holds no span).
BARE = re.compile(r"(?<![\\$])\$(?=[^\s$])(.*?[^\s\\])\$(?!\d)")
CELL = re.compile(r"(?<!\\)\|")
PUNCTUATION = re.compile(r"\\([!-/:-@\[-`{-~])")


def github_escape_pass(text: str) -> str:
    """What GitHub's Markdown pass makes of text outside code spans: every backslash
    before an ASCII punctuation character removed (CommonMark's backslash escapes)."""
    return PUNCTUATION.sub(r"\1", text)


def outside_code(line: str, change) -> str:
    """``line`` with ``change`` applied to the text between its code spans only."""
    out, at = [], 0
    for m in CODE.finditer(line):
        out += [change(line[at:m.start()]), m.group(0)]
        at = m.end()
    return "".join(out + [change(line[at:])])


def formulas(markdown: str) -> list[str]:
    return MATH.findall(markdown)


def bare_spans(markdown: str) -> list[str]:
    """The ``$…$`` spans GitHub would take for math outside any code span."""
    found = []
    for line in markdown.splitlines():
        for cell in CELL.split(line) if line.startswith("|") else [line]:      # a table splits its cells first
            outside_code(cell, lambda text: found.extend(BARE.findall(text)) or text)
    return found


def balance_problem(latex: str) -> str | None:
    """Why ``latex`` cannot parse, as far as braces and ``\\left``/``\\right`` tell; None if they balance."""
    depth, opened = 0, 0
    for token in re.findall(r"\\[A-Za-z]+|\\.|[{}]", latex):
        depth += {"{": 1, "}": -1}.get(token, 0)
        opened += {r"\left": 1, r"\right": -1}.get(token, 0)
        if depth < 0 or opened < 0:
            return f"a closing {'brace' if depth < 0 else 'right'} before its opening"
    if depth or opened:
        return f"{depth} brace(s) and {opened} \\left(s) left open"
    if latex.endswith("\\") and not latex.endswith("\\\\"):
        return "a lone backslash at the end"
    return None


def problems(markdown: str) -> list[str]:
    """What GitHub would break in ``markdown``'s inline math; [] if nothing."""
    found = [f"bare math ${span}$ (GitHub's escape pass makes it ${github_escape_pass(span)}$)"
             for span in bare_spans(markdown)]
    for line in markdown.splitlines():
        passed = outside_code(line, github_escape_pass)
        if formulas(passed) != formulas(line):
            found.append(f"the escape pass changes a formula on the line {line!r}")
        if line.startswith("|"):
            found += [f"a | ends the table cell inside ${f}$" for f in formulas(line) if "|" in f]
    found += [f"{f}: {why}" for f in formulas(markdown) if (why := balance_problem(f))]
    return found


@lru_cache(maxsize=None)
def rendered(path: Path) -> str:
    analysed = run(path)
    return record.render(view.build(analysed.plan, analysed.evaluations, analysed.artifacts))


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_every_formula_of_a_reference_record_survives_githubs_escape_pass(path):
    text = rendered(path)
    assert len(formulas(text)) > 60                         # the symbol column and every derivation
    assert problems(text) == []
    assert any(github_escape_pass(f) != f for f in formulas(text))      # there was something to protect


def test_the_braces_and_row_breaks_github_removed_are_now_kept():
    text = rendered(ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml")
    assert r"$`\lambda^{*} = \max\{\lambda_i : ok_i \text{ for all rates} \le \lambda_i\}`$" in text
    assert r"$`\lambda_{fail} = \min\{\lambda_i : \lnot ok_i\}`$" in text
    assert any(r"\begin{cases}" in f and r" \\0 & \text{otherwise}" in f for f in formulas(text))
    assert "| $`\\lambda_{peak}`$ `peak_arrival_rate` |" in text


def test_a_planted_bare_formula_fails():
    line = "| $\\lambda^{*}$ `knee` | **7 req/s** | $\\{x\\}$ | derived |  |"
    assert problems(line) == ["bare math $\\lambda^{*}$ (GitHub's escape pass makes it $\\lambda^{*}$)",
                              "bare math $\\{x\\}$ (GitHub's escape pass makes it ${x}$)"]
    assert problems("text $\\{x\\}$ text") == ["bare math $\\{x\\}$ (GitHub's escape pass makes it ${x}$)"]
    assert problems("emphasis $a_b * c_d$ here") == ["bare math $a_b * c_d$ (GitHub's escape pass makes it $a_b * c_d$)"]
    kept = math(r"\{x\}")
    assert problems(f"ok {kept} and $59,965.44 or +$1,822.68 and $ per 1M") == []


def test_plan_text_opens_no_math(base_plan, write_plan, tmp_path):
    text = rendered(_hostile_plan(base_plan, write_plan, tmp_path))     # "$\\alpha$", "`$x$`" in names
    assert "\\$\\\\alpha\\$" in text and problems(text) == []


def test_a_formula_that_cannot_parse_or_splits_a_cell_fails():
    assert problems("$`\\frac{a}{b`$") == ["\\frac{a}{b: 1 brace(s) and 0 \\left(s) left open"]
    assert problems("$`\\left(x\\right`$") == []                # \right followed by nothing: KaTeX's to judge
    assert problems("| $`a|b`$ | x |") == ["a | ends the table cell inside $a|b$"]


def test_math_writes_bars_as_commands_so_a_table_cell_holds_them():
    assert math(r"\left|x\right| + \|v\| + a|b") == r"$`\left\lvert x\right\rvert  + \Vert v\Vert  + a\vert b`$"
    assert math(r"\max\{x : ok\}") == r"$`\max\{x : ok\}`$"


@lru_cache(maxsize=None)
def _katex() -> bool:
    node = shutil.which("node")
    return bool(node) and subprocess.run([node, "-e", "require('katex')"], capture_output=True,
                                         env=os.environ).returncode == 0


KATEX = """
const katex = require('katex');
const errors = [];
for (const f of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {
  try { katex.renderToString(f, {throwOnError: true, strict: 'error'}); }
  catch (e) { errors.push(f + ': ' + e.message); }
}
process.stdout.write(JSON.stringify(errors));
"""


def katex_errors(latex: list[str]) -> list[str]:
    done = subprocess.run([shutil.which("node"), "-e", KATEX], input=json.dumps(latex), capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(not _katex(), reason="KaTeX not available: node cannot load 'katex' (npm install katex, "
                                          "then NODE_PATH=<folder>/node_modules); the balance check still ran")
def test_katex_parses_every_formula_as_github_hands_it_over():
    every = sorted({f for path in PLANS for f in formulas(rendered(path))})
    assert len(every) > 150
    assert katex_errors(every) == []
    assert len(katex_errors([r"\frac{a}{b", r"\max{x : ok}", r"\max\{x\}"])) == 1     # it does judge
