"""Plain CSV sweep tables (``*.csv``), one run per row.

Rows are read one at a time, at most :data:`~capplan.loading.sweeps.reading.MAX_RUNS`
of them. Header names are case-insensitive; unknown columns are ignored; blank lines and
lines starting with ``#`` are skipped. GuideLLM's own CSV export is refused
with a pointer to its ``benchmarks.json``. Required columns: ``arrival_rate``
(req/s; ``inf`` allowed), one per SLO of the plan, named as its load_sweep
column (``ttft_p95``, ``tpot_p95``, ``e2e_p99`` by default; ``ttft_p99``,
``itl_p50``, ... for other SLOs), ``output_throughput`` (tok/s). Optional: ``completed``, ``failed``, ``sent``
(counts, 0 when absent; ``sent`` counts every request sent, finished or not,
so a row whose ``sent`` is less than ``completed`` + ``failed`` is refused),
``achieved_rate`` (req/s delivered, 0 when absent = not measured), ``goodput``
(req/s, empty = none).

A bare column name is in capplan's display unit: **TTFT, TPOT and ITL in
ms, E2E in s**. A unit suffix states the unit explicitly and is converted:
``ttft_p95_ms``, ``ttft_p95_s``, ``e2e_p99_s``, ``e2e_p99_ms``, ...; also ``arrival_rate_req_s``,
``output_throughput_tok_s``, ``goodput_req_s``. Giving one quantity twice
(e.g. ``ttft_p95`` and ``ttft_p95_s``) is an error.
"""

from __future__ import annotations

import csv
from typing import Any

from capplan.loading.sweeps.fields import err, finite, rate_from, whole
from capplan.loading.sweeps import reading
from capplan.loading.sweeps.points import SweepPoint

# header -> (canonical name, factor to capplan's unit, unit text); the SLO columns are added per plan
_CSV_HEADERS: dict[str, tuple[str, float, str]] = {
    "arrival_rate": ("arrival_rate", 1.0, "req/s"),
    "arrival_rate_req_s": ("arrival_rate", 1.0, "req/s"),
    "output_throughput": ("output_throughput", 1.0, "tok/s"),
    "output_throughput_tok_s": ("output_throughput", 1.0, "tok/s"),
    "completed": ("completed", 1.0, "requests"),
    "sent": ("sent", 1.0, "requests"),
    "achieved_rate": ("achieved_rate", 1.0, "req/s"),
    "achieved_rate_req_s": ("achieved_rate", 1.0, "req/s"),
    "failed": ("failed", 1.0, "requests"),
    "goodput": ("goodput", 1.0, "req/s"),
    "goodput_req_s": ("goodput", 1.0, "req/s"),
}
_TO_SECONDS = {"ms": 0.001, "s": 1.0}


def _headers(slos) -> dict[str, tuple[str, float, str]]:
    """The known headers: the fixed ones and, per SLO, its column bare (in
    the column's unit) and with a ``_ms`` / ``_s`` suffix (converted)."""
    out = dict(_CSV_HEADERS)
    for slo in slos:
        out[slo.column] = (slo.column, 1.0, slo.unit)
        for suffix, seconds in _TO_SECONDS.items():
            factor = seconds / _TO_SECONDS[slo.unit]
            out[f"{slo.column}_{suffix}"] = (slo.column, factor,
                                             suffix if factor == 1 else f"{suffix} -> {slo.unit}")
    return out


def parse_csv(text: str, rel: str, slos) -> list[SweepPoint]:
    headers = _headers(slos)
    required = ("arrival_rate", *(s.column for s in slos), "output_throughput")
    reader = csv.reader(_lines(text))
    header: list[str] | None = None
    columns: dict[str, tuple[int, str, float, str]] = {}
    points: list[SweepPoint] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in cells]
                for index, name in enumerate(header):
                    if name not in headers:
                        continue
                    canon, factor, unit = headers[name]
                    if canon in columns:
                        raise err(f"{canon} is given twice (columns "
                                  f"{columns[canon][1]!r} and {name!r})", name, line)
                    columns[canon] = (index, name, factor, unit)
                missing = [c for c in required if c not in columns]
                if missing and _is_guidellm(header):
                    raise err("this is GuideLLM's CSV export (benchmarks.csv): its "
                              f"{len(header)} columns hold summary statistics in GuideLLM's "
                              "own layout, not one sweep point per row; import its JSON report "
                              "instead, which capplan reads with every percentile and request count: "
                              f"{GUIDELLM_JSON}", None, line)
                if missing:
                    raise err(f"the header lacks column(s) {', '.join(missing)} "
                              f"(found: {', '.join(header)})", missing[0], line)
                continue
            if len(points) == reading.MAX_RUNS:
                raise err(f"the CSV file holds more than {reading.MAX_RUNS:,} data rows (runs); an import reads at "
                          "most that many (see docs/limits.md)", None, line)
            if len(cells) != len(header):
                raise err(f"row has {len(cells)} cells, the header has {len(header)}",
                          None, line)
            points.append(_csv_row(cells, columns, rel, line, required, slos))
    except csv.Error as exc:
        raise err(f"malformed CSV: {exc}", None, reader.line_num) from None
    if header is None:
        raise err("the CSV file has no header row")
    if not points:
        raise err("the CSV file has a header but no data rows")
    return points


def _lines(text: str):
    """The lines of ``text``, one at a time (an ``io.StringIO`` would copy the whole text, four
    bytes a character)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start) + 1 or end
        yield text[start:stop]
        start = stop


GUIDELLM_JSON = ("guidellm run ... --output kind=json,path=benchmarks.json (GuideLLM 0.8 and later; "
                 "before 0.8: guidellm benchmark ... --output-path benchmarks.json, or --outputs json)")
_GUIDELLM_MARKS = ("time to first token", "time_to_first_token", "inter token latency",
                   "request latency", "run id", "strategy", "benchmark")


def _is_guidellm(header: list[str]) -> bool:
    """GuideLLM's CSV export: no arrival_rate, GuideLLM's metric and run names."""
    text = " ".join(header).replace("_", " ")
    return "arrival rate" not in text and sum(mark.replace("_", " ") in text for mark in _GUIDELLM_MARKS) >= 2


def _csv_row(cells: list[str], columns: dict, rel: str, line: int, required: tuple,
             slos) -> SweepPoint:
    values: dict[str, Any] = {}
    methods: list[str] = []
    for canon, (index, name, factor, unit) in columns.items():
        raw = cells[index].strip()
        if canon == "arrival_rate":
            values[canon] = rate_from(raw, name, line)
        elif raw == "":
            if canon in required:
                raise err("empty cell", name, line)
            values[canon] = None
            continue
        else:
            try:
                number = float(raw)
            except ValueError:
                raise err(f"expected a number, got {raw!r}", name, line) from None
            if canon in ("completed", "failed", "sent"):
                values[canon] = whole(number, name, line)
            else:
                values[canon] = finite(number, name, line) * factor
        methods.append(f"{canon}: CSV column {name} ({unit}), line {line}")
    sent_given = values.get("sent") is not None
    for canon in ("completed", "failed", "sent", "achieved_rate"):
        if values.get(canon) is None:
            values[canon] = 0
            methods.append(f"{canon}: not given in the CSV (0)")
    if sent_given and values["sent"] < values["completed"] + values["failed"]:
        counted = [c for c in ("completed", "failed") if c in columns]
        name = columns["sent"][1]
        raise err(f"{name} ({values['sent']}) is less than {' + '.join(columns[c][1] for c in counted)} "
                  f"({' + '.join(str(values[c]) for c in counted)}): "
                  "a run cannot finish more requests than it sent", name, line)
    if "goodput" not in columns:
        methods.append("goodput: not given in the CSV -> none")
    return SweepPoint(arrival_rate=values["arrival_rate"],
                      latency={s.column: values[s.column] for s in slos},
                      strategy="as tabulated", sources={s.column: "the table" for s in slos},
                      output_throughput=values["output_throughput"],
                      completed=values["completed"], failed=values["failed"],
                      sent=values["sent"], achieved_rate=values["achieved_rate"],
                      goodput=values.get("goodput"), file=rel, methods=tuple(methods))
