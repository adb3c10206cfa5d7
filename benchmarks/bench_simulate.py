"""Time and memory of ``capplan simulate`` beyond the import floor (issue 11, item 5).

    python benchmarks/bench_simulate.py [--runs 5] [--samples 100000] [--plan plans/llama3-8b-a100-chat-mix.yaml]

Each run is a new Python process. Inside it, after the imports and the plan's
deterministic evaluation (what every command pays: the import floor), it
times the simulation of the nominal scenario: drawing every uncertain input,
compiling the graph to numpy and evaluating it for every draw (``simulate``),
then the percentiles, odds and Spearman drivers (``summarise``). Peak RSS is
the process's high-water mark (``resource.getrusage``), imports included.
The target of the issue is ≤ 1 s and ≤ 500 MiB for 100,000 draws.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"


def one(plan_path: Path, samples: int) -> dict:
    from capplan.analysis.pipeline import evaluate_plan
    from capplan.engine import montecarlo
    from capplan.analysis import simulation

    plan, evaluations = evaluate_plan(plan_path)
    e = evaluations[0]
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    sim = montecarlo.simulate(plan, e.model, e.values, samples=samples)
    drawn = time.perf_counter()
    simulation.summarise(sim, e)
    done = time.perf_counter()
    return {"simulate": drawn - start, "summarise": done - drawn, "total": done - start,
            "rss_floor_mib": floor, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--plan", type=Path, default=MAIN)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.plan, args.samples)))
        return
    results = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, __file__, "--one", "--samples", str(args.samples), "--plan",
                              str(args.plan)], capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout))
    print(f"{args.plan.name}: {args.samples:,} draws, median of {args.runs} fresh processes")
    for key, label in (("simulate", "draw + evaluate the graph"), ("summarise", "percentiles, odds, drivers"),
                       ("total", "total beyond the import floor")):
        print(f"  {label:<32} {statistics.median(r[key] for r in results):.3f} s")
    print(f"  {'peak RSS (imports included)':<32} {max(r['peak_rss_mib'] for r in results):.0f} MiB "
          f"(after imports and evaluation: {max(r['rss_floor_mib'] for r in results):.0f} MiB)")


if __name__ == "__main__":
    main()
