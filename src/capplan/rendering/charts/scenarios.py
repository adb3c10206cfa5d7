"""The record's sensitivity chart: nodes and monthly cost per scenario and
deployment, as SVG text.

One row per scenario (nominal first), one bar per deployment in each of
two panels: the nodes the scenario needs and what they cost a month. Where
today's fleet (sized for the nominal plan) would not carry the scenario's
peak, the deployment's bar is outlined in red and marked "✗ today's fleet
breaks", so the scenarios that break a cheap fleet stand out, and the title
says how many do ("3 of 6 scenarios break today's fleet on …"). The values
and verdicts are the scenarios' key results of the view (the ones with role
``size``, ``cost`` and ``verdict`` in ``templates/layout.yaml``); only
positions are computed here.
"""

from __future__ import annotations

from capplan import formatting
from capplan.rendering.charts.svg import Canvas, in_turn, ink, text_width

WIDTH, LABEL_WIDTH, GAP, RIGHT = 880, 250, 30, 16
TOP, BAR, BAR_GAP, ROW_GAP, BOTTOM = 96, 15, 3, 14, 30
BREAKS = "✗ today's fleet breaks"


def bars(view) -> list[dict]:
    """Per scenario: ``{title, name, bars: [{row, size, cost, holds}]}`` from the
    key results by role; none for a plan with no scenario but the nominal one."""
    out = []
    for s in view.scenarios:
        rows = []
        for key, results in s.rows().items():
            by_role = {k.role: k for k in results if k.role}
            if "size" in by_role and "cost" in by_role:
                holds = by_role.get("verdict")
                rows.append({"row": key, "size": by_role["size"], "cost": by_role["cost"],
                             "holds": True if holds is None else bool(holds.value)})
        if rows:
            out.append({"title": s.title, "name": s.name, "bars": rows})
    return out if len(out) > 1 else []


def headline(scenarios: list[dict]) -> str:
    """The chart's message: how many scenarios break today's fleet, on which deployments; which hold."""
    rows = [b["row"] for b in scenarios[0]["bars"]]
    broken = [r for k, r in enumerate(rows) if any(not s["bars"][k]["holds"] for s in scenarios)]
    count = sum(1 for s in scenarios if not all(b["holds"] for b in s["bars"]))
    if not count:
        return f"Today's fleet holds in all {len(scenarios)} scenarios"
    held = [r for r in rows if r not in broken]
    return (f"{count} of {len(scenarios)} scenarios break today's fleet on {formatting.and_list(broken)}"
            + (f"; {formatting.and_list(held)} {'holds' if len(held) == 1 else 'hold'} in every one" if held else ""))


def svg(view, plan_title: str) -> str:
    """The chart of every scenario of the view (when :func:`bars` finds any)."""
    scenarios = bars(view)
    per_row = len(scenarios[0]["bars"])
    row_height = per_row * (BAR + BAR_GAP) - BAR_GAP + ROW_GAP
    height = TOP + row_height * len(scenarios) + BOTTOM
    c = Canvas(WIDTH, height)
    c.title(headline(scenarios), f"Nodes and monthly cost per scenario, {plan_title}: the fleet re-sized for "
                                 "each; a red outline where today's fleet (sized for the nominal plan) would not "
                                 "carry its peak")
    size_label, cost_label = (scenarios[0]["bars"][0][k].label for k in ("size", "cost"))
    panel = (WIDTH - LABEL_WIDTH - GAP - RIGHT) / 2
    size_texts = [f"{b['size'].text}" + ("" if b["holds"] else f"  {BREAKS}") for s in scenarios for b in s["bars"]]
    cost_texts = [b["cost"].text for s in scenarios for b in s["bars"]]
    _legend(c, [b["row"] for b in scenarios[0]["bars"]], 62)
    bottom = TOP + row_height * len(scenarios) - ROW_GAP / 2
    for i, (key, texts, label) in enumerate((("size", size_texts, size_label), ("cost", cost_texts, cost_label))):
        left = LABEL_WIDTH + i * (panel + GAP)
        c.text(left, TOP - 8, label, size=13, weight="bold")
        top_value = max(float(b[key].value) for s in scenarios for b in s["bars"]) or 1.0
        scale = (panel - max(text_width(t) for t in texts) - 12) / top_value
        c.line(left, TOP - 4, left, bottom, stroke=ink("muted"))
        for j, s in enumerate(scenarios):
            y0 = TOP + j * row_height
            for k, b in enumerate(s["bars"]):
                y = y0 + k * (BAR + BAR_GAP)
                length = float(b[key].value) * scale
                broken = not b["holds"] and key == "size"
                c.rect(left, y, length, BAR, fill=in_turn("bars", k),
                       stroke=ink("fail") if not b["holds"] else None, width=2.0 if not b["holds"] else None)
                c.text(left + length + 5, y + BAR - 3, b[key].text, size=11, fill=ink("ink"))
                if broken:
                    c.text(left + length + 10 + text_width(b[key].text), y + BAR - 3, BREAKS, size=11,
                           fill=ink("fail"), weight="bold")
    for j, s in enumerate(scenarios):
        y0 = TOP + j * row_height
        if j:
            c.line(10, y0 - ROW_GAP / 2, WIDTH - RIGHT, y0 - ROW_GAP / 2, stroke=ink("grid"))
        middle = y0 + (row_height - ROW_GAP) / 2
        c.text(LABEL_WIDTH - 10, middle - 1, _fit(s["title"], LABEL_WIDTH - 20, 12), anchor="end",
               weight="bold" if j == 0 else None)
        c.text(LABEL_WIDTH - 10, middle + 13, s["name"], size=11, anchor="end", fill=ink("muted"))
    return c.render()


def _fit(text: str, room: float, size: int) -> str:
    """A label cut with '…' where it would not fit (the record's table gives it whole)."""
    if text_width(text, size) <= room:
        return text
    while text and text_width(text + "…", size) > room:
        text = text[:-1]
    return text.rstrip() + "…"


def _legend(c: Canvas, rows: list[str], y: float) -> None:
    x = 10.0
    for k, row in enumerate(rows):
        c.rect(x, y - 11, 16, 13, fill=in_turn("bars", k))
        c.text(x + 22, y, row, size=11)
        x += 40 + text_width(row)
    c.rect(x, y - 11, 16, 13, fill=ink("page"), stroke=ink("fail"), width=2.0)
    c.text(x + 22, y, "today's fleet breaks in this scenario", size=11, fill=ink("fail"))
