"""How capplan's commands scale, as ratios to the cost of importing its libraries.

    python benchmarks/bench_scaling.py [--runs 5] [--heavy-runs 3] [--root DIR]

A wall time alone says little on a shared 2-core machine; a ratio to the
*import floor* (``python -c "import sympy, pint, openpyxl, jinja2, yaml"``, the
least any command that evaluates a plan can cost) holds still while the
machine's speed drifts. Each command runs alternately with the floor (A B A B
…), and the ratio is the median of the pairwise ratios.

Measured, with the issue's targets:

* ``capplan --help``                                         ≤ 0.25 × floor
* ``capplan eval`` of the main plan                          (reported)
* ``capplan build`` of the reference plans into an empty out ≤ 1.3 × floor
* ``capplan build`` again, nothing changed                   ≤ 1.1 × floor
* ``capplan check`` of the reference plans, nothing changed  ≤ 1.1 × floor
  (this machine's cache of compiles warm, as after a build here)
* ``capplan check`` of the reference plans with no cache     (reported beside the
  clean build: it compiles every plan, as CI on a fresh machine does)
* ``capplan check`` of 100 copies of the main plan, built    ≤ 5 × floor
* ``capplan seek`` of the main plan's peak (the flip search)   (reported)
* ``capplan simulate`` of the main plan, 100,000 draws      (reported)
* ``capplan build`` of the main plan with 6, 200, 1,000 scenarios; the 200
  build ≤ 5 × the 6 build (build time linear in scenarios) and the 1,000
  build ≤ 10 s on the 2-core machine.

``--before DIR`` measures an older checkout too (e.g. ``git archive REV | tar
-x -C DIR``) and prints both side by side, each normalised by its own floor.

``--root`` measures another checkout (e.g. an older commit unpacked with
``git archive REV | tar -x -C DIR``): its ``src/`` goes first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1]
MAIN_PLAN = "plans/llama3-8b-a100-chat-mix.yaml"
FLOOR = [sys.executable, "-c", "import sympy, pint, openpyxl, jinja2, yaml"]


@dataclass
class Row:
    name: str
    seconds: float | None   # median wall time of the command
    ratio: float            # median of command / floor, pair by pair
    target: str             # e.g. "≤ 1.3× floor"
    ok: bool | None


class Bench:
    def __init__(self, root: Path, runs: int, heavy_runs: int, cache: Path):
        self.root = root
        self.runs = runs
        self.heavy_runs = heavy_runs
        self.cache = cache
        self.env = dict(os.environ, PYTHONPATH=str(root / "src"), CAPPLAN_TODAY="2026-12-01",
                        CAPPLAN_CACHE_DIR=str(cache))
        self.env.pop("CAPPLAN_DEBUG", None)
        # Python caches compiled modules (__pycache__) unless told not to; a user's
        # installation has them, so the commands timed here may write them too.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def capplan(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "capplan.cli", *args]

    def _wall(self, cmd: list[str], cwd: Path) -> float:
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
        return elapsed

    def paired(self, cmd: list[str], cwd: Path, runs: int, before=None) -> tuple[float, float]:
        """Median wall time of cmd and median ratio to the floor, run A B A B …;
        ``before`` (untimed) prepares each run, e.g. empties the output folder."""
        times, ratios = [], []
        for _ in range(runs):
            if before:
                before()
            t = self._wall(cmd, cwd)
            f = self._wall(FLOOR, cwd)
            times.append(t)
            ratios.append(t / f)
        return statistics.median(times), statistics.median(ratios)


def scenario_plan(source: Path, count: int) -> dict:
    """The main plan with ``count`` scenarios in all (nominal included): its own
    five, then generated ones of three kinds (traffic, SLO, a table cell)."""
    plan = yaml.safe_load(source.read_text(encoding="utf-8"))
    own = plan.get("scenarios") or {}
    scenarios = dict(list(own.items())[:count - 1])
    for i in range(len(scenarios) + 1, count):
        kind = i % 3
        if kind == 0:
            body = {"set": {"peak_arrival_rate": f"{30 + i} req/s"}}
        elif kind == 1:
            body = {"set": {"ttft_p95_slo": f"{400 + 5 * i} ms"}}
        else:
            body = {"set": {"classes[summarization].prompt_tokens": 256 + 8 * i}}
        scenarios[f"generated_{i:03d}"] = {"title": f"Generated scenario {i}", **body}
    plan["scenarios"] = scenarios
    plan.pop("expect", None)          # only the build's cost is measured here
    return plan


def measure(bench: Bench, scratch: Path) -> list[Row]:
    root = bench.root
    rows: list[Row] = []

    def add(name, cmd, cwd, target, limit, runs=None, before=None):
        seconds, ratio = bench.paired(cmd, cwd, runs or bench.runs, before)
        rows.append(Row(name, seconds, ratio, target, None if limit is None else ratio <= limit))
        print(f"  measured {name}: {seconds:.3f} s, {ratio:.2f}x", file=sys.stderr, flush=True)

    floor = statistics.median(bench._wall(FLOOR, root) for _ in range(bench.runs))
    rows.append(Row("import floor (sympy, pint, openpyxl, jinja2, yaml)", floor, 1.0, "", None))

    add("capplan --help", bench.capplan("--help"), root, "≤ 0.25× floor", 0.25)
    add("capplan eval (main plan)", bench.capplan("eval", MAIN_PLAN), root, "", None)
    add("capplan seek, main plan's peak (flip search)", bench.capplan("seek", MAIN_PLAN, "peak_arrival_rate"),
        root, "", None)
    add("capplan simulate, main plan, 100,000 draws",
        bench.capplan("simulate", MAIN_PLAN, "--samples", "100000"), root, "", None, runs=bench.heavy_runs)

    clean = scratch / "clean"
    add("capplan build, reference plans, empty out/", bench.capplan("build", "--out", str(clean)), root,
        "≤ 1.3× floor", 1.3, before=lambda: shutil.rmtree(clean, ignore_errors=True))
    built = scratch / "built"
    bench._wall(bench.capplan("build", "--out", str(built)), root)
    add("capplan build, reference plans, unchanged", bench.capplan("build", "--out", str(built)), root,
        "≤ 1.1× floor", 1.1)
    add("capplan check, reference plans, unchanged", bench.capplan("check", "--out", str(built)), root,
        "≤ 1.1× floor", 1.1)
    add("capplan check, reference plans, no cache (compiles all)", bench.capplan("check", "--out", str(built)),
        root, "(vs the clean build)", None, before=lambda: shutil.rmtree(bench.cache, ignore_errors=True))

    many = scratch / "many"
    (many / "plans").mkdir(parents=True)
    for i in range(100):
        shutil.copy(root / MAIN_PLAN, many / "plans" / f"copy-{i:03d}.yaml")
    print("  building 100 copies of the main plan (setup, untimed)…", file=sys.stderr, flush=True)
    bench._wall(bench.capplan("build"), many)
    add("capplan check, 100 copies of the main plan", bench.capplan("check"), many, "≤ 5× floor", 5.0,
        runs=bench.heavy_runs)

    by_count = {}
    for count in (6, 200, 1000):
        folder = scratch / f"scenarios-{count}"
        (folder / "plans").mkdir(parents=True)
        (folder / "plans" / "main.yaml").write_text(
            yaml.safe_dump(scenario_plan(root / MAIN_PLAN, count), sort_keys=False), encoding="utf-8")
        out = folder / "out"
        name = f"capplan build, main plan with {count} scenarios"
        target, limit = ("≤ 10 s", None) if count == 1000 else ("", None)
        add(name, bench.capplan("build"), folder, target, limit, runs=bench.heavy_runs,
            before=lambda out=out: shutil.rmtree(out, ignore_errors=True))
        by_count[count] = rows[-1]
        if count == 1000:
            rows[-1].ok = rows[-1].seconds <= 10.0     # an absolute target, on the 2-core machine
    growth = by_count[200].ratio / by_count[6].ratio      # each normalised by its floor: drift cancels
    rows.append(Row("200-scenario build ÷ 6-scenario build", None, growth, "≤ 5× (ratio of the two builds)",
                    growth <= 5.0))
    return rows


def _cells(r: Row | None) -> str:
    if r is None:
        return " | "
    return ("" if r.seconds is None else f"{r.seconds:.3f}") + f" | {r.ratio:.2f}"


def table(rows: list[Row], before: list[Row] | None = None) -> str:
    """The measurements as a Markdown table; with ``before``, its figures in two columns ahead of today's."""
    old = {r.name: r for r in before or []}
    head = "| measurement | " + ("before s | before × floor | " if before is not None else "")
    lines = [head + "median s | × floor | target | met |",
             "| --- | " + ("---: | ---: | " if before is not None else "") + "---: | ---: | --- | --- |"]
    for r in rows:
        met = "" if r.ok is None else ("yes" if r.ok else "**no**")
        first = f"{_cells(old.get(r.name))} | " if before is not None else ""
        lines.append(f"| {r.name} | {first}{_cells(r)} | {r.target} | {met} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each quick command (default 5)")
    parser.add_argument("--heavy-runs", type=int, default=3,
                        help="runs of the 100-plan check and the scenario builds (default 3)")
    parser.add_argument("--root", type=Path, default=HERE, help="checkout to measure (default: this one)")
    parser.add_argument("--before", type=Path, help="an older checkout, measured first and shown beside")
    args = parser.parse_args()
    before = None
    if args.before:
        with tempfile.TemporaryDirectory(prefix="capplan-bench-before-") as scratch:
            before = measure(Bench(args.before.resolve(), args.runs, args.heavy_runs, Path(scratch) / "cache"),
                             Path(scratch))
    with tempfile.TemporaryDirectory(prefix="capplan-bench-") as scratch:
        bench = Bench(args.root.resolve(), args.runs, args.heavy_runs, Path(scratch) / "cache")
        rows = measure(bench, Path(scratch))
    print(table(rows, before))


if __name__ == "__main__":
    main()
