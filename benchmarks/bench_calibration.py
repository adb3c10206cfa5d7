"""capplan's built-in throughput estimate against published measurements (issue 39).

    python benchmarks/bench_calibration.py [--csv FILE] [--json FILE] [--constants FILE.yaml]
                                           [--leave-out SOURCE_PREFIX ...] [--fit]
                                           [--tool aiconfigurator --tool-python PATH]

For every row of ``../shared/calibration/measurements.csv`` (``$CAPPLAN_SHARED`` names the shared
folder) and of the project's ``calibration/published.csv`` (public measurements found since, each
with its source; numbered on after the shared set's), or of ``--csv FILE`` alone, it writes, in a scratch folder, the plan that states the measured point as
capplan would plan it (``calibration/rows.py``), evaluates it in-process and compares the
model's estimate group with the measurement (``calibration/predict.py``): λ̂* × replicas
against req/s for offline and MLPerf-server rows, the mixed-batch step t(λ) at the achieved
rate against the median TPOT for open-loop rows. It prints Markdown: per row, measured,
predicted, their ratio and whether the band holds the measurement; then by source, engine,
GPU and format the median and 90th-percentile factor off and the share inside the band.

``--constants FILE.yaml`` sets inputs on every plan (``hbm_efficiency: 0.8``); a key
``engines: {vllm: {...}, trt-llm: {...}}`` sets inputs on that engine's rows only.
``--leave-out PREFIX`` leaves out the rows whose source group (``mlperf-v4.1``,
``trtllm-perf``, ``vllm-llm-k8s``, ``mlperf-v5.0``, ``vllm-nightly``) or source starts with PREFIX
from the comparison.
``--fit`` grid-searches engine_step_factor per engine (and the band that holds 75 % of its rows),
leaving each source group out in turn, and reports the held-out error
(``calibration/fit.py``). ``--json FILE`` writes the per-row results.
``--tool aiconfigurator`` also predicts every row with the tool, run as ``capplan estimate`` runs it
(``--tool-python``: the interpreter that has it; ``calibration/tool.py``), and prints the same
figures for it beside capplan's, row by row, and the band per engine that holds 75 % of its rows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calibration import fit, predict, report, rows, tool  # noqa: E402

from capplan.errors import CapplanError  # noqa: E402

SHARED = Path(os.environ.get("CAPPLAN_SHARED") or HERE.parent.parent / "shared")


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, help="read this set alone (default: the shared set and published.csv)")
    parser.add_argument("--json", type=Path, help="write the per-row results here")
    parser.add_argument("--constants", type=Path, help="YAML of inputs set on every plan")
    parser.add_argument("--leave-out", action="append", default=[], metavar="SOURCE_PREFIX",
                        help="leave out rows whose source group or source starts with this (repeatable)")
    parser.add_argument("--fit", action="store_true", help="leave-one-source-out grid search per engine")
    parser.add_argument("--tool", choices=("aiconfigurator",), help="also predict every row with this tool")
    parser.add_argument("--tool-python", help="the interpreter that has the tool (default: this one)")
    return parser.parse_args(argv)


def sets(args: argparse.Namespace) -> list[Path]:
    """The CSVs to read: ``--csv`` alone (a held-back set runs by itself), else the shared set
    and the project's published rows."""
    return [args.csv] if args.csv else [SHARED / "calibration" / "measurements.csv", rows.PUBLISHED]


def constants_for(given: dict, engine: str) -> dict:
    """The inputs ``--constants`` sets on an engine's rows: the common ones, then the engine's own."""
    common = {k: v for k, v in given.items() if k != "engines"}
    return {**common, **(given.get("engines") or {}).get(engine, {})}


def left_out(row: rows.Row, prefixes: list[str]) -> bool:
    return any(row.group.startswith(p) or row.source.startswith(p) for p in prefixes)


def versus(mapped, results, skipped, name: str, python: str | None) -> str:
    """The tool's predictions of the rows beside capplan's: figures, bands per engine, row by row."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    predicted, notes = [], [f"- row {row.number} ({row.group}, {row.model} on {row.gpu}) skipped: {why}"
                            for row, why in skipped]
    for m in mapped:
        result, why = tool.predict(m, python)
        if result is None:
            notes.append(f"- row {m.row.number} ({m.row.group}, {m.model} on {m.gpu}) not predicted: {why}")
            continue
        predicted.append(result)
        if why:
            notes.append(f"- row {m.row.number}: {why}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if not predicted:
        return f"## {name}\n\nno row predicted:\n" + "\n".join(notes) + "\n"
    banded, per = tool.banded(predicted)
    bands = [f"- {engine}: ±{band:g} ({on}; {report.figures([r for r in banded if r.mapped.row.engine == engine])['inside']}"
             f" of its rows inside)" for engine, (band, on) in per.items()]
    return "\n".join([f"## {name} against the calibration set, beside capplan's estimate", "",
                      f"{len(predicted)} of {len(results) + len(skipped)} rows predicted, {cpu:.0f} CPU-s "
                      f"({cpu / len(predicted):.1f} a row).", "", *report.versus_summary(results, banded, name), "",
                      f"{name}'s band per engine:", "", *bands, "", *report.versus_rows(results, banded, name), "",
                      "### Assumptions, refused and skipped rows", "", *(notes or ["- none"])]) + "\n"


def main(argv=None) -> int:
    args = arguments(argv)
    missing = [path for path in sets(args) if not path.exists()]
    if missing:
        print(f"no calibration set at {missing[0]} (give --csv, or set CAPPLAN_SHARED)", file=sys.stderr)
        return 2
    given = yaml.safe_load(args.constants.read_text(encoding="utf-8")) or {} if args.constants else {}
    if not isinstance(given, dict):
        print(f"{args.constants}: a mapping of input names to values is expected", file=sys.stderr)
        return 2
    kept = [r for r in rows.read_all(sets(args)) if not left_out(r, args.leave_out)]
    mapped, skipped = [], []
    for row in kept:
        m = rows.map_row(row)
        (mapped.append(m) if isinstance(m, rows.Mapped) else skipped.append((row, m)))
    with tempfile.TemporaryDirectory(prefix="capplan-calibration-") as scratch:
        evaluations = []
        for m in mapped:
            try:
                evaluations.append(predict.evaluated(m, Path(scratch), constants_for(given, m.row.engine)))
            except CapplanError as err:     # the plan is a scratch file: name the row and the constants
                print(f"{args.constants or 'bench_calibration.py'}: row {m.row.number}'s plan: {err.message}",
                      file=sys.stderr)
                return 1
        results = [predict.compare(m, predict.estimate_values(e)) for m, e in zip(mapped, evaluations)]
        heading = "capplan's estimate against the calibration set" + (
            f" (constants from {args.constants.name})" if args.constants else "") + (
            f", leaving out {', '.join(args.leave_out)}" if args.leave_out else "")
        print(report.markdown(results, skipped, heading))
        if args.fit:
            print(fit.markdown(fit.cross_validate(mapped, evaluations)))
        if args.tool:
            print(versus(mapped, results, skipped, args.tool, args.tool_python))
    if args.json:
        args.json.write_text(json.dumps([report.as_json(r) for r in results], indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
