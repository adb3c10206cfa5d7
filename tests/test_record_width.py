"""Every table of every reference record fits 1,000 px of GitHub's layout.

GitHub lays a Markdown table out as a block at most the page wide
(``display: block; width: max-content; max-width: 100%; overflow: auto``):
wider content scrolls sideways, so a verdict column beyond the edge is
off-screen. Each record in ``plans/`` is rendered with markdown-it (tables,
raw HTML, footnotes) in GitHub's table styles, 16 px type and a 1,000 px
page, in headless Chromium with every ``<details>`` opened; a script in the
page writes each table's scroll width into the DOM, which ``--dump-dom``
prints. Skipped, with the reason, where Chromium or markdown-it is missing
(``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import MAIN_PLAN, ROOT

from test_github_math import rendered

from capplan.rendering.view import split

PAGE = 1000
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)

CSS = f"""body{{font-family:-apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;font-size:16px;
line-height:1.5;max-width:{PAGE}px;margin:0;padding:0}}
table{{border-spacing:0;border-collapse:collapse;display:block;width:max-content;max-width:100%;overflow:auto}}
td,th{{padding:6px 13px;border:1px solid #d0d7de}}
code{{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:85%;
padding:.2em .4em}}"""
MEASURE = """<script>window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const found = [...document.querySelectorAll('table')].map(t => [t.scrollWidth, t.rows[0].textContent.trim()]);
  const out = document.createElement('pre'); out.id = 'widths'; out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});</script>"""


def table_widths(markdown: str) -> list[tuple[int, str]]:
    """Each table of ``markdown`` as GitHub lays it out: (its width in px, its header row)."""
    if CHROMIUM is None:
        pytest.skip("no chromium (or chromium-browser) on PATH: apt-get install chromium")
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py renders the records (pip install .[test])")
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    try:
        from mdit_py_plugins.footnote import footnote_plugin
        md.use(footnote_plugin)
    except ImportError:
        pass                               # a footnote reference then stays its few characters of text
    page = f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>" \
           f"{md.render(markdown)}{MEASURE}</body></html>"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "record.html"
        path.write_text(page, encoding="utf-8")
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                              f"--user-data-dir={folder}/profile", "--dump-dom", path.as_uri()],
                             capture_output=True, text=True, timeout=180).stdout
    found = re.search(r'<pre id="widths">(.*?)</pre>', dom, re.S)
    assert found, "Chromium printed no measurements"
    return [(w, " ".join(h.split())) for w, h in json.loads(html.unescape(found.group(1)))]


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_every_table_of_a_reference_record_fits_the_page(path):
    widths = table_widths(rendered(path))
    assert len(widths) >= 10
    wide = [(w, h[:80]) for w, h in widths if w > PAGE]
    assert not wide, f"tables wider than {PAGE} px: {wide}"


def test_a_table_wider_than_the_page_is_caught():
    word = "x" * 60
    planted = "| " + " | ".join(f"{word}{i}" for i in range(3)) + " |\n| --- | --- | --- |\n| a | b | c |\n"
    widths = table_widths("# planted\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n" + planted)
    assert widths[0][0] < 200 and widths[1][0] > PAGE


def test_split_keeps_the_name_column_and_every_other_column_once():
    header = ["name"] + [f"column_with_a_long_name_{i}" for i in range(8)]
    rows = [["row"] + [str(i) for i in range(8)]]
    chunks = split(header, [False] * 9, rows)
    assert len(chunks) > 1
    assert all(c["header"][0] == "name" and c["rows"][0][0] == "row" for c in chunks)
    assert [h for c in chunks for h in c["header"][1:]] == header[1:]


def test_the_main_records_first_screen_holds_the_decision():
    text = rendered(MAIN_PLAN)
    first = text[:text.index("| Plan | GPU |")]
    assert first.count("\n") < 30
    for part in ("**Rent ", "**The ask:** Approve ", "| Option | Holds | Monthly cost |",
                 "> **What can change this decision**", "fractional-a100-80gb: nominal fleet holds: 81.0 %"):
        assert part in first
    # the pending measurements the tornado shows far from any flip are not among the risks
    box = first[first.index("> [!WARNING]"):first.index("<details>")]
    assert "hbm_efficiency" not in box and "tensor_efficiency" not in box
    assert "`hbm_efficiency` 56.2 % lower" in first
