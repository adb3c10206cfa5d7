"""What a long traffic profile costs: time, peak memory and the size of each output.

    python benchmarks/bench_profile_outputs.py [--rows 8760 100000] [--before DIR]

The plan is the diurnal reference plan (three scenarios) with ``traffic: {file:
year.csv}``, a CSV of ``--rows`` hourly arrival rates, built once by ``capplan
build`` in a scratch repository (a child process: its wall time and peak
resident memory are the whole command's). ``--before DIR`` builds the same
files with another checkout's ``src`` too (e.g. ``git archive REV | tar -x -C
DIR``), so the two stand side by side (issue 37, item 3: a 100,000-row file
took 59 s and wrote an 823 MB workbook before the limits).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "plans" / "llama3-8b-a100-diurnal.yaml"
WRAPPER = ("import resource, subprocess, sys, time\n"
           "t = time.perf_counter()\n"
           "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True, errors='replace')\n"
           "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "said = [l for l in p.stderr.splitlines() if 'error' in l] or p.stdout.strip().splitlines()\n"
           "print(time.perf_counter() - t, u.ru_maxrss / 1024, p.returncode)\n"
           "print(said[0][:300] if said else '')\n")


def project(folder: Path, rows: int) -> None:
    (folder / ".git").mkdir()
    (folder / "plans").mkdir()
    plan = yaml.safe_load(PLAN.read_text(encoding="utf-8"))
    plan["traffic"] = {"file": "year.csv", "source": "a synthetic year: a diurnal shape, a weekly dip"}
    for name in ("peak_arrival_rate", "peak_to_average_ratio"):
        plan["inputs"].pop(name, None)
    (folder / "plans" / "p.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    lines = [f"{h},{20 + 30 * math.sin(h / 24 * math.pi) ** 2 + 3 * math.sin(h / 168):.3f}" for h in range(rows)]
    (folder / "plans" / "year.csv").write_text("time,arrival_rate\n" + "\n".join(lines) + "\n", encoding="utf-8")


def measure(src: Path, rows: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project(folder, rows)
        command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(src)!r}); "
                   "from capplan.cli import main; sys.exit(main())", "build"]
        done = subprocess.run([sys.executable, "-c", WRAPPER, str(folder), *command], capture_output=True,
                              text=True, timeout=1800, check=False,
                              env={"CAPPLAN_CACHE_DIR": str(folder / ".." / f"{folder.name}.cache"),
                                   "PATH": "/usr/bin:/bin"})
        first, said = (done.stdout.splitlines() + ["", ""])[:2]
        seconds, peak, code = first.split()
        out = folder / "out"
        sizes = {p.suffix: p.stat().st_size for p in out.iterdir() if p.suffix in (".xlsx", ".json")
                 and p.name != "manifest.json"} if out.is_dir() else {}
        return {"seconds": float(seconds), "peak_mib": float(peak), "exit": int(code), "said": said, **sizes}


def row(label: str, rows: int, m: dict) -> str:
    size = lambda key: f"{m[key] / 2 ** 20:,.1f}" if key in m else "-"      # noqa: E731
    said = m["said"].replace("|", "\\|")[:300] if m["exit"] else ""
    return (f"| {label} | {rows:,} | {m['exit']} | {m['seconds']:.1f} | {m['peak_mib']:,.0f} | {size('.xlsx')} "
            f"| {size('.json')} | {said} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[8_760, 100_000])
    parser.add_argument("--before", type=Path, help="another checkout (its src/ is built with too)")
    args = parser.parse_args()
    print("| code | rows | exit | wall s | peak MiB | workbook MiB | JSON MiB | refusal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for rows in args.rows:
        if args.before:
            print(row("before", rows, measure(args.before / "src", rows)), flush=True)
        print(row("now", rows, measure(ROOT / "src", rows)), flush=True)


if __name__ == "__main__":
    main()
