"""The plan's ``traffic:``: the arrival rate over time, which the demand-curve analysis prices.

Either ``profile:``, 24 hourly or 168 weekly multipliers of the peak (the largest is 1,
the plan's ``peak_arrival_rate`` scales them), or ``file:``, a CSV of ``time,
arrival_rate`` rows at any fixed step (time in hours from the start; the path is
resolved inside the plan's repository, as a table's ``import:`` is, and refused
outside it); with ``source:`` saying where the shape comes from. The profile becomes
the model's ``profile`` table (one row per interval) and sets the switch
``traffic: profile``; the peak (of a file) and the peak-to-average ratio follow from
it, and a plan that also states them is checked against it. Scale to zero
(``min_replicas: 0``) is refused when a wake-up takes longer than the TTFT SLO: the
first request after a quiet interval would wait for a node to boot.
"""

from __future__ import annotations

import csv
import io
import math
from decimal import Decimal

from capplan import bounded
from capplan.errors import CapplanError
from capplan.language import units
from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import Input, TableData
from capplan.loading.sweeps import locate
from capplan.names import nearest

TRAFFIC_KEYS = ("profile", "file", "source", "note")
TABLE = "profile"
SWITCH = "traffic"
HOURLY = {24: "24 hourly multipliers (a day)", 168: "168 hourly multipliers (a week)"}
MAX_ROWS = 8_760             # an hourly year
# Every interval is a row of each evaluation's demand table, of its workbook sheet (about 2 KiB)
# and of the JSON (about 0.8 KiB): an hourly year for the plan and three scenarios makes a 70 MiB
# workbook, within an output's budget (capplan.build.MAX_OUTPUT_BYTES).
MAX_INTERVAL_ROWS = 4 * MAX_ROWS
MAX_FILE_BYTES = 8 * 2 ** 20
GIVEN_BY_TRAFFIC = ("peak_arrival_rate", "peak_to_average_ratio")    # a CSV gives both, multipliers the ratio


def switch(ctx: Context) -> None:
    """``traffic: profile`` when the plan has ``traffic:``; no such switch otherwise, so a
    plan without a profile is the same plan (and the same outputs) as before."""
    if ctx.data.get("traffic") is None:
        ctx.switches.pop(SWITCH, None)
    else:
        ctx.switches[SWITCH] = "profile"


def read(ctx: Context, given: dict[str, Input]) -> tuple[dict[str, Input], dict[str, TableData]]:
    """The inputs the profile gives (its step, the peak of a file, the peak-to-average ratio)
    and the ``profile`` table; nothing for a plan without ``traffic:``."""
    spec = ctx.data.get("traffic")
    if spec is None:
        return {}, {}
    if not isinstance(spec, dict):
        raise ctx.err(f"expected a mapping such as {{profile: [0.4, ...], source: ...}}, got {kind(spec)}", "traffic")
    for key in spec:
        if key not in TRAFFIC_KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), TRAFFIC_KEYS)} (traffic keys: {', '.join(TRAFFIC_KEYS)})", "traffic", key)
    if ("profile" in spec) == ("file" in spec):
        raise ctx.err("give either profile: (24 or 168 multipliers of the peak) or file: (a CSV of time, "
                      "arrival_rate), one of them", "traffic")
    source = ctx.text(spec.get("source"), "traffic", "source")
    if "profile" in spec:
        multipliers, step_h, peak = _multipliers(ctx, spec["profile"]), 1.0, None
        origin = "traffic.profile"
    else:
        rel, rates, step_h = _csv(ctx, spec["file"])
        peak = max(rates)
        if peak <= 0:
            raise ctx.err(f"{rel}: every arrival_rate is 0; a profile needs traffic", "traffic", "file")
        multipliers = [r / peak for r in rates]
        origin = f"traffic.file ({rel})"
    line = ctx.doc.line(("traffic",))
    cite = f"{origin}" + (f"; {source}" if source else "")
    out = {"profile_step": Input("profile_step", step_h * 3600.0, tag="assumption", origin="plan",
                                 source=cite, line=line)}
    if peak is not None:
        _agree(ctx, given, "peak_arrival_rate", peak, origin)
        out["peak_arrival_rate"] = Input("peak_arrival_rate", peak, tag="measurement", origin="plan",
                                         source=f"the largest arrival rate of {cite}", line=line)
    ratio = len(multipliers) / math.fsum(multipliers)
    _agree(ctx, given, "peak_to_average_ratio", ratio, origin)
    out["peak_to_average_ratio"] = Input("peak_to_average_ratio", ratio, tag="measurement" if peak else "assumption",
                                         origin="plan", source=f"peak over mean of {cite}", line=line)
    rows = [{"interval": float(i), "multiplier": m} for i, m in enumerate(multipliers)]
    table = TableData(TABLE, rows, [{} for _ in rows], source=cite, lines=[line] * len(rows))
    return out, {TABLE: table}


def refuse_oversized(ctx: Context, scenarios: list) -> None:
    """A profile's intervals over every evaluation (the plan and each scenario) within
    :data:`MAX_INTERVAL_ROWS`, refused before any is evaluated: the outputs grow with both."""
    profile = scenarios[0].tables.get(TABLE)
    if profile is None or len(profile.rows) * len(scenarios) <= MAX_INTERVAL_ROWS:
        return
    raise ctx.err(f"{len(profile.rows):,} intervals in each of {len(scenarios):,} evaluations (the plan and its "
                  f"scenarios) make {len(profile.rows) * len(scenarios):,} interval rows, more than the "
                  f"{MAX_INTERVAL_ROWS:,} a plan may have (docs/limits.md): each is a row of the workbook and of "
                  "the JSON; resample the profile to a longer step or drop scenarios", "traffic")


def refuse_cold_wakeups(ctx: Context, given: dict[str, Input]) -> None:
    """Scale to zero only where a wake-up fits within the TTFT SLO."""
    if SWITCH not in ctx.switches or "min_replicas" not in given or given["min_replicas"].value > 0:
        return
    lag = sum(given[n].value for n in ("node_start_time", "engine_start_time", "scale_up_window"))
    ttft = [s for s in ctx.model.slos if s.metric == "ttft"]
    limit = min(given[s.limit].value for s in ttft) if ttft else math.inf
    if lag > limit:
        raise ctx.err(f"min_replicas 0 scales to zero, but a wake-up takes {lag / 60:g} min (node_start_time + "
                      f"engine_start_time + scale_up_window) while the TTFT SLO is {units.to_display(limit, 's'):g} s: "
                      f"the first request after a quiet interval would miss it; keep min_replicas at 1 or more "
                      f"(or serve a batch SLO)", "inputs", "min_replicas")


def refuse_unpowered_ownership(ctx: Context, gpu: str, given: dict[str, Input], deployments: TableData | None) -> None:
    """An owned node's electricity is priced from its GPUs' TDP: an owned offer on a GPU the
    catalog gives none for (and the plan states none) would look cheaper than it is."""
    if SWITCH not in ctx.switches or deployments is None or "gpu_tdp" not in given or given["gpu_tdp"].value > 0:
        return
    for i, row in enumerate(deployments.rows):
        if (row.get("owned_price") or 0) > 0:
            raise ctx.err(f"an owned offer prices its node's power from the GPU's thermal design power, but "
                          f"gpu_tdp is 0 (the catalog gives none for {gpu}): state it under inputs (W/GPU, from "
                          f"the GPU's datasheet)", "tables", "deployments", "rows", i, "owned_price")


def _multipliers(ctx: Context, raw) -> list[float]:
    path = ("traffic", "profile")
    if not isinstance(raw, list) or len(raw) not in HOURLY:
        got = f"{len(raw)} values" if isinstance(raw, list) else kind(raw)
        raise ctx.err(f"expected {' or '.join(HOURLY.values())}, got {got}", *path)
    out = []
    for i, value in enumerate(raw):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1 \
                or not math.isfinite(value):
            raise ctx.err(f"a multiplier is a share of the peak from 0 to 1, got {kind(value)}", *path, i)
        out.append(float(value))
    if max(out) != 1:
        raise ctx.err(f"the largest multiplier is the peak itself, 1; the largest here is {max(out):g} "
                      f"(divide the profile by it)", *path)
    return out


def _csv(ctx: Context, raw) -> tuple[str, list[float], float]:
    """A CSV's arrival rates and its step in hours: rows of ``time`` (hours) and ``arrival_rate``
    (req/s) at one fixed step, the file inside the plan's repository."""
    path = ("traffic", "file")
    if not isinstance(raw, str) or any(ch in raw for ch in locate.WILDCARDS):
        raise ctx.err(f"expected the path of one CSV file relative to the plan, got {kind(raw)}", *path)
    try:
        (rel,) = locate.expand(locate.Root(ctx.path.parent), [raw])
        data = bounded.read(ctx.path.parent / rel, MAX_FILE_BYTES)
    except CapplanError as err:
        raise ctx.err(err.message, *path) from None
    except (OSError, ValueError) as err:
        raise ctx.err(f"{raw}: cannot be read ({err})", *path) from None
    try:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig")))
        if reader.fieldnames is None or not {"time", "arrival_rate"} <= set(reader.fieldnames):
            raise ValueError(f"expected the columns time,arrival_rate, got {','.join(reader.fieldnames or [])}")
        times, rates = [], []
        for number, row in enumerate(reader, start=2):
            if len(rates) >= MAX_ROWS:
                raise ValueError(f"more than {MAX_ROWS:,} rows, the intervals of an hourly year a profile may have "
                                 "(docs/limits.md): resample it to a longer step")
            try:
                t, r = Decimal(row["time"].strip()), float(row["arrival_rate"])
            except (ArithmeticError, ValueError, AttributeError):
                raise ValueError(f"line {number}: time and arrival_rate must be numbers") from None
            if not math.isfinite(r) or r < 0:
                raise ValueError(f"line {number}: arrival_rate must be 0 or more req/s, got {row['arrival_rate']}")
            times.append(t)
            rates.append(r)
    except (ValueError, UnicodeDecodeError) as err:
        raise ctx.err(f"{rel}: {err}", *path) from None
    if len(rates) < 2:
        raise ctx.err(f"{rel}: a profile needs at least two rows", *path)
    steps = {b - a for a, b in zip(times, times[1:])}
    if len(steps) != 1 or next(iter(steps)) <= 0:
        raise ctx.err(f"{rel}: time must rise by one fixed step (hours) from row to row; found steps "
                      f"{', '.join(sorted(str(s) for s in steps)[:4])}", *path)
    return rel, rates, float(next(iter(steps)))


def _agree(ctx: Context, given: dict[str, Input], name: str, derived: float, origin: str) -> None:
    """A value the plan states that the profile also gives must agree to the digits written."""
    stated = given.get(name)
    if stated is None or stated.origin != "plan":
        return
    q = ctx.model.quantities[name]
    shown, written = units.to_display(stated.value, q.unit), units.to_display(derived, q.unit)
    decimals = max(-Decimal(repr(shown)).normalize().as_tuple().exponent, 0)
    if abs(round(written, decimals) - shown) > 0.5 * 10 ** -decimals * (1 + 1e-9):
        raise ctx.err(f"{name} is {shown:g} {q.unit}".rstrip() + f", but {origin} gives {written:.6g}; "
                      f"leave {name} out (the profile sets it) or correct it", "inputs", name)
