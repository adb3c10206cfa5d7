"""Time to find the flip points of the main plan, after imports (median of N fresh processes).

    python benchmarks/bench_seek.py [--runs 5] [--plan plans/llama3-8b-a100-chat-mix.yaml]

Each run is a new Python process, so sympy's caches start cold, as they do
for `capplan seek` or `capplan build`. Inside it, after the imports and the
plan's evaluation, it times
  1. **all flips**: every flip point of every relevant input (the record's
     inputs: see `holds:` in templates/layout.yaml) of every scenario, in
     the range `capplan seek` searches by default (÷2 … ×2 of today's value);
  2. **first flips** (in a process of its own): what the record and the JSON
     show — the first flip on each side of every relevant input of every
     scenario (÷10 … ×10), and the breakevens between deployments.
The target of the issue is ≤ 0.2 s for (1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"


def one(plan_path: Path, part: str) -> dict:
    from capplan.analysis.pipeline import Artifacts, evaluate_plan
    from capplan.analysis import flips
    from capplan.rendering import view
    from capplan.artifacts.declared import variables
    from capplan.analysis.holds import PlanHolds

    plan, evaluations = evaluate_plan(plan_path)
    start = time.perf_counter()
    if part == "first":
        shown = view.build(plan, evaluations, Artifacts(evaluations))
        for s in shown.scenarios:
            shown.holds.as_json(s.name)
        len(shown.holds.breakeven)
        return {"seconds": time.perf_counter() - start}
    holds = PlanHolds(evaluations)
    count = inputs = 0
    for e in evaluations:
        for variable in variables(e):
            probe, _, _ = holds.probe(e, variable)
            lo, hi = flips.base_range(probe.today, probe.quantity, Fraction(2))
            count += len(probe.flips(lo, hi))
            inputs += 1
    return {"seconds": time.perf_counter() - start, "flip points": count, "inputs": inputs}


PARTS = {"all": "all flips (÷2 … ×2)", "first": "first flips, breakevens (÷10 … ×10: the record, JSON)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--plan", type=Path, default=MAIN)
    parser.add_argument("--one", choices=PARTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.plan, args.one)))
        return
    print(f"{args.plan.name}, {args.runs} fresh processes each, seconds after imports and evaluation:")
    for part, title in PARTS.items():
        runs = [json.loads(subprocess.run([sys.executable, __file__, "--one", part, "--plan", str(args.plan)],
                                          cwd=ROOT, check=True, capture_output=True, text=True).stdout)
                for _ in range(args.runs)]
        times = [r["seconds"] for r in runs]
        counted = f"; {runs[0]['inputs']} inputs x scenarios, {runs[0]['flip points']} flip points" \
            if "inputs" in runs[0] else ""
        print(f"  {title}: median {statistics.median(times):.3f} (min {min(times):.3f}, max {max(times):.3f}){counted}")


if __name__ == "__main__":
    main()
