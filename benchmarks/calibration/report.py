"""The comparison as Markdown: one line per row, then the figures by source, engine, GPU and format.

Factor off = max(predicted/measured, measured/predicted); the 90th percentile is the nearest rank
(the ⌈0.9·n⌉-th smallest), so it is always a row's own figure.
"""

from __future__ import annotations

import math
import statistics

from calibration.predict import Result
from calibration.rows import Row

GROUPINGS = (("source", lambda r: r.mapped.row.group), ("engine", lambda r: r.mapped.row.engine),
             ("GPU", lambda r: r.mapped.gpu), ("format", lambda r: r.mapped.format))


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (``share`` in (0, 1]) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def figures(results: list[Result]) -> dict:
    """Count, median and 90th-percentile factor off, and share inside the band."""
    off = [r.factor_off for r in results]
    return {"rows": len(results), "median_factor_off": statistics.median(off), "p90_factor_off": percentile(off, 0.9),
            "inside": sum(r.inside for r in results), "share_inside": sum(r.inside for r in results) / len(results)}


def _num(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"


def row_table(results: list[Result]) -> list[str]:
    """Per row: what was measured, what the estimate says, the band and whether it holds the measurement."""
    lines = ["| # | source | model | GPU × n (TP) | format | engine | mode | measured | predicted | p ÷ m "
             "| band | inside | limit |",
             "| ---: | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |"]
    for r in results:
        m, row = r.mapped, r.mapped.row
        fmt = m.format + ("" if m.in_catalog else "†")
        lines.append(f"| {row.number} | {row.group} | {m.model} | {m.gpu} × {row.n_gpus} (TP{m.tp}) | {fmt} "
                     f"| {row.engine} | {row.mode} | {_num(r.measured)} {r.unit} | {_num(r.predicted)} "
                     f"| {_num(r.ratio)} | {_num(r.low)}–{_num(r.high)} | {'yes' if r.inside else 'no'} | {r.limit} |")
    return lines


def summary_table(results: list[Result]) -> list[str]:
    """All rows, then each source, engine, GPU and format."""
    lines = ["| group | rows | median factor off | p90 factor off | inside the band |",
             "| --- | ---: | ---: | ---: | ---: |"]
    lines.append(_summary_line("**all**", results))
    for title, key in GROUPINGS:
        for value in sorted({key(r) for r in results}):
            lines.append(_summary_line(f"{title}: {value}", [r for r in results if key(r) == value]))
    return lines


def _summary_line(label: str, results: list[Result]) -> str:
    f = figures(results)
    return (f"| {label} | {f['rows']} | {_num(f['median_factor_off'])} | {_num(f['p90_factor_off'])} "
            f"| {f['inside']} of {f['rows']} ({f['share_inside']:.0%}) |")


def notes(results: list[Result], skipped: list[tuple[Row, str]]) -> list[str]:
    """The assumptions each row's plan makes, and the rows left out with why."""
    lines = []
    for r in results:
        if r.mapped.assumptions:
            lines.append(f"- row {r.mapped.row.number}: " + "; ".join(r.mapped.assumptions))
    for row, why in skipped:
        lines.append(f"- row {row.number} ({row.group}, {row.model} on {row.gpu}) skipped: {why}")
    return lines


def markdown(results: list[Result], skipped: list[tuple[Row, str]], heading: str) -> str:
    """The whole report."""
    parts = [f"## {heading}", "", *row_table(results), "",
             "† the catalog lacks this format for the model: its bytes per parameter are an input "
             "(weight_bytes_per_param); the candidate keeps the model's name.", "",
             "### By source, engine, GPU and format", "", *summary_table(results), "",
             "### Assumptions and skipped rows", "", *(notes(results, skipped) or ["- none"])]
    return "\n".join(parts) + "\n"


def as_json(r: Result) -> dict:
    """One row's result for later fitting (the estimate group's values in base units)."""
    m, row = r.mapped, r.mapped.row
    return {"row": row.number, "source": row.source, "group": row.group, "model": m.model, "gpu": m.gpu,
            "n_gpus": row.n_gpus, "tp": m.tp, "replicas": m.replicas, "format": m.format,
            "format_in_catalog": m.in_catalog, "engine": row.engine, "mode": row.mode, "isl": row.isl,
            "osl": row.osl, "unit": r.unit, "measured": r.measured, "predicted": _finite(r.predicted),
            "ratio": _finite(r.ratio), "factor_off": _finite(r.factor_off), "band_low": _finite(r.low),
            "band_high": _finite(r.high), "inside": r.inside, "limit": r.limit,
            "achieved_req_per_s": row.req_per_s, "assumptions": m.assumptions, "estimate": r.values}


def _finite(x: float) -> float | None:
    """JSON has no infinity: None stands for an unbounded prediction."""
    return x if math.isfinite(x) else None


WITHIN = 0.25     # the share of a row off by at most this, both ways, as the issue counts it


def within(results: list[Result]) -> str:
    """'12 of 20 (60 %)': the rows predicted within ±:data:`WITHIN` of the measurement."""
    inside = sum(abs(1 / r.ratio - 1) <= WITHIN + 1e-12 if r.ratio > 0 else False for r in results)
    return f"{inside} of {len(results)} ({inside / len(results):.0%})"


def versus_rows(builtin: list[Result], tool: list[Result], name: str) -> list[str]:
    """Per row the tool predicted: measured, capplan's built-in estimate and the tool's, each's ratio."""
    mine = {r.mapped.row.number: r for r in builtin}
    lines = [f"| # | source | model | GPU × n (TP) | engine | mode | measured | capplan | c ÷ m | {name} | t ÷ m "
             "| closer |", "| ---: | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for t in tool:
        c, m, row = mine[t.mapped.row.number], t.mapped, t.mapped.row
        closer = "capplan" if c.factor_off < t.factor_off else name if t.factor_off < c.factor_off else "tie"
        lines.append(f"| {row.number} | {row.group} | {m.model} | {m.gpu} × {row.n_gpus} (TP{m.tp}) | {row.engine} "
                     f"| {row.mode} | {_num(t.measured)} {t.unit} | {_num(c.predicted)} | {_num(c.ratio)} "
                     f"| {_num(t.predicted)} ({t.limit}) | {_num(t.ratio)} | {closer} |")
    return lines


def versus_summary(builtin: list[Result], tool: list[Result], name: str) -> list[str]:
    """On the rows the tool predicted: all, then each source, engine and GPU, capplan beside the tool."""
    numbers = {r.mapped.row.number for r in tool}
    mine = [r for r in builtin if r.mapped.row.number in numbers]
    lines = [f"| group | rows | capplan median / p90 factor off | capplan within ±25 % | {name} median / p90 "
             f"| {name} within ±25 % | {name} inside its band |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, key in (("**all**", lambda r: ""), *GROUPINGS[:3]):
        for value in sorted({key(r) for r in tool}):
            c, t = [r for r in mine if key(r) == value], [r for r in tool if key(r) == value]
            fc, ft = figures(c), figures(t)
            lines.append(f"| {label if not value else f'{label}: {value}'} | {ft['rows']} "
                         f"| {_num(fc['median_factor_off'])} / {_num(fc['p90_factor_off'])} | {within(c)} "
                         f"| {_num(ft['median_factor_off'])} / {_num(ft['p90_factor_off'])} | {within(t)} "
                         f"| {ft['inside']} of {ft['rows']} |")
    return lines
