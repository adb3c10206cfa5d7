"""Time and memory of ranking many candidates (issue 20, item 7).

    python benchmarks/bench_candidates.py [--candidates 10000] [--scenarios 6] [--runs 3]

Writes, in a temporary folder, the reference plan plans/llama3.3-70b-candidates.yaml
with its candidates: section widened to about ``--candidates`` candidates
(every catalog GPU × TP 1, 2, 4, 8 × BF16/FP8 weights × BF16/FP8 KV cache × as
many offers per GPU as it takes, at made-up prices) and ``--scenarios`` - 1
scenarios of other peaks. Then, each as a whole process under /usr/bin/time
(elapsed and peak RSS), ``--runs`` times:

- ``floor``: import capplan's pipeline and analyses, load and evaluate the
  plan without its candidates: section (what every command pays);
- ``rank``: the same with the candidates: load, evaluate every candidate in
  every scenario as one batch each, rank, flip points, P(winner stays);
- ``build 1`` and ``build 20``: ``capplan build --force`` of the plan with 1
  and with 20 candidates (record, workbook, JSON and charts).

The issue's targets: rank ≤ floor + 1 s and ≤ 1 GiB; build 20 ≤ 2 × build 1.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "plans" / "llama3.3-70b-candidates.yaml"
TIME = "/usr/bin/time"


def plan_with(candidates: int | None, scenarios: int) -> dict:
    """The reference plan with about ``candidates`` candidates (None: no candidates: section)."""
    plan = yaml.safe_load(PLAN.read_text())
    plan["scenarios"] = {f"peak_{k}": {"set": {"peak_arrival_rate": f"{20 + 5 * k} req/s"}}
                         for k in range(1, scenarios)}
    plan.pop("expect", None)
    if candidates is None:
        plan.pop("candidates")
        return plan
    section = plan["candidates"]
    every_offer = list(section["offers"])
    if candidates <= 20:
        section.update(gpus=["h100", "h200"], tp=[1, 2, 4, 8], weights=["bf16", "fp8"], exclude=[])
        offers = [o for o in section["offers"] if o["gpu"] in ("h100", "h200")]
        section["offers"] = offers + [dict(o, name=o["name"] + "-b") for o in offers][: max(0, (candidates - 16) // 8)]
        if candidates == 1:
            section.update(gpus=["a100-sxm4-40gb"], tp=[8], weights=["bf16"],
                           offers=[o for o in every_offer if o["gpu"] == "a100-sxm4-40gb"])
        return plan
    from capplan.loading import catalog

    gpus = catalog.ids("gpu")
    per_gpu = max(1, round(candidates / (len(gpus) * 16)))
    section.update(gpus="all", tp=[1, 2, 4, 8], weights="all", kv_cache_dtype=["bf16", "fp8"], exclude=[])
    section["offers"] = [{"name": f"{g}-offer-{k}", "gpu": g, "gpus_per_node": 8,
                          "node_hourly_cost": f"{10 + 3 * k + len(g) % 7} USD/h", "as_of": "2026-01-01",
                          "source": "made up for the benchmark"} for g in gpus for k in range(per_gpu)]
    return plan


RANK = """
import sys
from capplan.analysis.pipeline import evaluate_plan
from capplan.analysis import candidates, ranking
plan, evaluations = evaluate_plan(sys.argv[1])
if plan.candidates is not None:
    r = ranking.rank(evaluations, candidates.evaluate(evaluations))
    print(len(plan.candidates), len(evaluations), r.draws, file=sys.stderr)
"""


def timed(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """(elapsed s, CPU s, peak RSS MiB) of one whole process (CPU: user + system, which a
    machine shared with other work inflates less than the elapsed time)."""
    out = subprocess.run([TIME, "-f", "%e %U %S %M", *args], cwd=cwd, capture_output=True, text=True, check=True)
    elapsed, user, system, rss = out.stderr.strip().splitlines()[-1].split()
    return float(elapsed), float(user) + float(system), int(rss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--scenarios", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "plans").mkdir()
        shutil.copytree(ROOT / "plans" / "estimates", folder / "plans" / "estimates")   # the evidence imports them
        files = {}
        for label, n in (("floor", None), ("rank", args.candidates), ("one", 1), ("twenty", 20)):
            files[label] = folder / "plans" / f"{label}.yaml"
            files[label].write_text(yaml.safe_dump(plan_with(n, args.scenarios if n != 1 and n != 20 else 1),
                                                   sort_keys=False))
        rank_cmd = [sys.executable, "-c", RANK]
        build = [sys.executable, "-c", "from capplan.cli import main; raise SystemExit(main())", "build", "--force"]
        results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in ("floor", "rank", "build 1",
                                                                                  "build 20")}
        for _ in range(args.runs):
            results["floor"].append(timed(rank_cmd + [str(files["floor"])], folder))
            results["rank"].append(timed(rank_cmd + [str(files["rank"])], folder))
            results["build 1"].append(timed(build + [str(files["one"])], folder))
            results["build 20"].append(timed(build + [str(files["twenty"])], folder))
        counted = subprocess.run(rank_cmd + [str(files["rank"])], cwd=folder, capture_output=True, text=True,
                                 check=True).stderr.split()
        print(f"{counted[0]} candidates × {counted[1]} scenarios ranked ({counted[2]} draws of the contenders), "
              f"{args.runs} runs each, median (min-max):")
        med, cpu = {}, {}
        for label, runs in results.items():
            times, cpus = [t for t, _, _ in runs], [c for _, c, _ in runs]
            med[label], cpu[label] = statistics.median(times), statistics.median(cpus)
            print(f"  {label:9s} {med[label]:6.2f} s elapsed ({min(times):.2f}-{max(times):.2f}), "
                  f"{cpu[label]:6.2f} s CPU ({min(cpus):.2f}-{max(cpus):.2f}), peak RSS {max(r for *_, r in runs):.0f} MiB")
        print(f"  rank beyond the floor: {med['rank'] - med['floor']:.2f} s elapsed, {cpu['rank'] - cpu['floor']:.2f} s "
              f"CPU (target ≤ 1 s); build 20 / build 1: {med['build 20'] / med['build 1']:.2f} elapsed, "
              f"{cpu['build 20'] / cpu['build 1']:.2f} CPU (target ≤ 2)")


if __name__ == "__main__":
    main()
