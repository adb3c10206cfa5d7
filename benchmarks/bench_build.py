"""Wall time of `capplan build` against the import floor (median of N runs).

    python benchmarks/bench_build.py [--runs 5]

Prints the median wall time of
  1. `python -c "import sympy, pint, openpyxl, jinja2, yaml"` (the import floor),
  2. `capplan build` of every plan in plans/ into a scratch folder,
and an in-process split of one build (load, evaluate, view + record + JSON, workbook) so the graph's
own work can be read next to the imports it cannot avoid.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def split() -> dict[str, float]:
    from capplan import build
    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from capplan.analysis.pipeline import Artifacts
    from capplan.rendering import jsonout, record, view
    from capplan.rendering.workbook import render_workbook

    out: dict[str, float] = {}
    t = time.perf_counter()
    model = standard_model()
    out["load model"] = time.perf_counter() - t
    for path in build.plan_paths([], ROOT / "plans"):
        t = time.perf_counter()
        plan = load(path, model)
        out[f"{path.stem}: load plan"] = time.perf_counter() - t
        t = time.perf_counter()
        evaluations = evaluate_all(plan, model)
        out[f"{path.stem}: graph + units + evaluate ({len(evaluations)} scenarios)"] = time.perf_counter() - t
        t = time.perf_counter()
        shown = view.build(plan, evaluations, Artifacts(evaluations))
        record.render(shown)
        jsonout.dumps(jsonout.document(shown))
        out[f"{path.stem}: view, record and JSON"] = time.perf_counter() - t
        t = time.perf_counter()
        render_workbook(plan, evaluations, model, shown)
        out[f"{path.stem}: workbook"] = time.perf_counter() - t
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    floor = wall([sys.executable, "-c", "import sympy, pint, openpyxl, jinja2, yaml"], args.runs)
    with tempfile.TemporaryDirectory() as scratch:
        full = wall([sys.executable, "-m", "capplan.cli", "build", "--out", scratch], args.runs)
    print(f"import floor (sympy, pint, openpyxl, jinja2, yaml): median {floor:.3f} s over {args.runs} runs")
    print(f"capplan build (all plans in plans/):                  median {full:.3f} s over {args.runs} runs")
    print(f"capplan's own work above the floor:                   {full - floor:.3f} s")
    print("in-process split of one build (warm imports):")
    for name, seconds in split().items():
        print(f"  {name:<70} {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
