"""How long a plan with a year of hourly traffic (8,760 intervals) takes to build.

    python benchmarks/bench_profile.py [--runs 3] [--hours 8760]

The plan is the main plan (its ranged inputs and their 100,000-draw simulation included)
with ``traffic: {file: year.csv}``, a CSV of 8,760 hourly arrival rates (a diurnal shape
with a weekly dip and a slow rise through the year), in a scratch repository. ``capplan build --force`` of it runs alternately with the import floor
(``python -c "import sympy, pint, openpyxl, jinja2, yaml"``) and the same build of the plan
without ``traffic:``; the figures are medians of wall time. The target (issue #22): the
profile adds at most 2 s beyond the import floor. Where the time goes is printed from one
profiled build (evaluation, the record, the workbook's 8,760 rows, the JSON).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1]
MAIN_PLAN = HERE / "plans" / "llama3-8b-a100-chat-mix.yaml"
FLOOR = [sys.executable, "-c", "import sympy, pint, openpyxl, jinja2, yaml"]


def year_csv(hours: int) -> str:
    """time,arrival_rate: a daily cycle (trough 04:00, peak 13:00), weekends at 70 %, +20 % over the year."""
    rows = ["time,arrival_rate"]
    for h in range(hours):
        day = 0.55 + 0.45 * math.cos(2 * math.pi * ((h % 24) - 13) / 24)
        week = 0.7 if (h // 24) % 7 >= 5 else 1.0
        rows.append(f"{h},{60 * day * week * (1 + 0.2 * h / hours):.3f}")
    return "\n".join(rows) + "\n"


def scratch(hours: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="capplan-profile-"))
    (root / ".git").mkdir()
    (root / "plans").mkdir()
    data = yaml.safe_load(MAIN_PLAN.read_text(encoding="utf-8"))
    for key in ("scenarios", "expect"):
        data.pop(key, None)
    flat = dict(data)
    (root / "plans" / "flat.yaml").write_text(yaml.safe_dump(flat, sort_keys=False), encoding="utf-8")
    for name in ("peak_arrival_rate", "peak_to_average_ratio"):
        data["inputs"].pop(name)
    data["traffic"] = {"file": "year.csv", "source": "bench_profile.py's synthetic year"}
    (root / "plans" / "year.csv").write_text(year_csv(hours), encoding="utf-8")
    (root / "plans" / "year.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return root


def run(cmd: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(HERE / "src")}
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def build(plan: str) -> list[str]:
    return [sys.executable, "-c", "from capplan.cli import main; main()", "build", "--force", plan]


def profiled(root: Path) -> str:
    """Where one build of the year plan spends its time: the top functions by cumulative time."""
    sys.path.insert(0, str(HERE / "src"))
    from capplan.cli import main

    here = os.getcwd()
    os.chdir(root)
    profile = cProfile.Profile()
    try:
        profile.enable()
        try:
            main(["build", "--force", "plans/year.yaml"])
        except SystemExit:
            pass
        profile.disable()
    finally:
        os.chdir(here)
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("cumulative")
    stats.print_stats(r"capplan/(build|analysis/pipeline|engine/evaluate|rendering/(record|jsonout|workbook/builder))")
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hours", type=int, default=8760)
    args = parser.parse_args()
    root = scratch(args.hours)
    try:
        floors, flats, years = [], [], []
        for _ in range(args.runs):
            floors.append(run(FLOOR, root))
            flats.append(run(build("plans/flat.yaml"), root))
            years.append(run(build("plans/year.yaml"), root))
        floor, flat, year = (statistics.median(x) for x in (floors, flats, years))
        sizes = {p.name: p.stat().st_size for p in sorted((root / "out").glob("year.*"))}
        print(f"import floor                          {floor:6.2f} s")
        print(f"build, the main plan without traffic  {flat:6.2f} s  ({flat - floor:+.2f} s beyond the floor)")
        print(f"build, {args.hours:,} hourly intervals       {year:6.2f} s  ({year - floor:+.2f} s beyond the floor; "
              f"target ≤ +2 s: {'met' if year - floor <= 2 else 'MISSED'})")
        print("outputs: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sizes.items()))
        print(profiled(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
