"""Issue #38's four speed figures, each against the import floor measured in the same run.

    python benchmarks/bench_speed.py [--runs 5] [--heavy-runs 3] [--candidates 10000]

A shared 2-core machine drifts; a figure taken beside the floor holds still. The
floor is what every command that evaluates a plan imports before it does any
work: ``python -c "import capplan.cli, sympy, pint, yaml"`` (pint brings numpy;
``eval`` imports neither openpyxl nor jinja2, so they are not in it). Each
command runs in turn with the floor (A B A B …), in fresh processes, and the
figure is the median; the floor column is the median of the floors taken
beside it. Measured, in a temporary folder:

* **rank**: ``python -c RANK plans/rank.yaml`` — the reference candidates plan
  widened to about ``--candidates`` candidates (every catalog GPU × TP 1, 2, 4,
  8 × weight formats × KV formats × offers, with the plan's evidence, see
  bench_candidates.py) and 6 scenarios: load, evaluate, every candidate in every
  scenario, rank, flip points, P(winner stays) at its default draws. No command
  ranks without also writing the ranking out (``eval --json`` of it writes
  38 MB), so the public analysis functions are called, as ``build`` calls them.
  Goal: ≤ floor + 1 s.
* **P(winner)**: the same process with ``rank(..., draws=10_000)`` minus the
  same with ``draws=1`` (the cost of the draws alone). The contenders × draws
  evaluated (in chunks of ranking.CHUNK_ROWS) are printed; the goal (10³
  contenders × 10⁴ draws ≤ 2 s) is held against the cost per row.
* **build 1,000**: ``capplan build`` of the main plan with 1,000 scenarios
  (bench_scaling.scenario_plan) into an empty out/. Goal: ≤ 10 s wall.
* **eval --json**: ``capplan eval --json`` of the main plan. Goal: ≤ 1.5 × floor.

CPU seconds (user + system, of the process and its children) are printed beside
the wall time: a machine shared with other work inflates them less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_candidates import plan_with          # noqa: E402  (a sibling script, not a package)
from bench_scaling import scenario_plan          # noqa: E402

MAIN_PLAN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"
FLOOR = [sys.executable, "-c", "import capplan.cli, sympy, pint, yaml"]
# Prints the candidates, scenarios, and the contender-draws P(winner) evaluated (the rows of its
# chunks, counted by wrapping the evaluation over draws the ranking asks for).
RANK = """
import sys
from capplan.analysis.pipeline import evaluate_plan
from capplan.analysis import candidates, ranking
plan, evaluations = evaluate_plan(sys.argv[1])
evaluated = candidates.evaluate(evaluations)
rows, drawn_values = [0], candidates.drawn_values
def counted(e, cands, *args):
    run = drawn_values(e, cands, *args)
    def counting(tile, drawn):
        rows[0] += len(cands) * tile
        return run(tile, drawn)
    return counting
candidates.drawn_values = counted
r = ranking.rank(evaluations, evaluated, draws=int(sys.argv[2]))
print(len(plan.candidates), len(evaluations), rows[0], file=sys.stderr)
"""
CAPPLAN = [sys.executable, "-c", "from capplan.cli import command; command()"]


@dataclass
class Timed:
    wall: float
    cpu: float


def run(cmd: list[str], cwd: Path, env: dict) -> tuple[Timed, str]:
    """One whole process: wall and CPU seconds (children's rusage), and what it wrote on stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu), proc.stderr


@dataclass
class Paired:
    """Medians of a command and of the floors run beside it."""

    runs: list[Timed]
    floors: list[Timed]
    said: str

    def median(self, field: str, floors: bool = False) -> float:
        return statistics.median(getattr(t, field) for t in (self.floors if floors else self.runs))

    def ratio(self, field: str) -> float:
        return statistics.median(getattr(a, field) / getattr(b, field) for a, b in zip(self.runs, self.floors))


def paired(cmd: list[str], cwd: Path, env: dict, runs: int, before=None) -> Paired:
    """cmd and the floor in turn, ``runs`` times each after one warm-up of each (``before``,
    untimed, prepares each run of cmd)."""
    out = Paired([], [], "")
    for k in range(runs + 1):
        if before:
            before()
        timed, out.said = run(cmd, cwd, env)
        floor, _ = run(FLOOR, cwd, env)
        if k:
            out.runs.append(timed)
            out.floors.append(floor)
    return out


def scratch(folder: Path, candidates: int) -> None:
    """The plans measured: the widened candidates plan (with the estimate files its evidence
    imports) and the main plan with 1,000 scenarios, each in a folder of its own."""
    plans = folder / "rank" / "plans"
    plans.mkdir(parents=True)
    shutil.copytree(ROOT / "plans" / "estimates", plans / "estimates")
    (plans / "rank.yaml").write_text(yaml.safe_dump(plan_with(candidates, 6), sort_keys=False), encoding="utf-8")
    many = folder / "many" / "plans"
    many.mkdir(parents=True)
    (many / "main.yaml").write_text(yaml.safe_dump(scenario_plan(MAIN_PLAN, 1000), sort_keys=False),
                                    encoding="utf-8")


def measure(folder: Path, runs: int, heavy: int, env: dict) -> list[str]:
    """The table's rows (Markdown)."""
    rows = []
    rank_dir, many_dir = folder / "rank", folder / "many"

    ranked = paired([sys.executable, "-c", RANK, "plans/rank.yaml", "1000"], rank_dir, env, heavy)
    counted, scenarios, _ = ranked.said.split()
    beyond = ranked.median("wall") - ranked.median("wall", floors=True)
    beyond_cpu = ranked.median("cpu") - ranked.median("cpu", floors=True)
    rows.append(_row(f"{int(counted):,} candidates × {scenarios} scenarios ranked (analysis functions)",
                     "≤ floor + 1 s", ranked, f"+{beyond:.2f} s (CPU +{beyond_cpu:.2f} s)", beyond <= 1.0))

    one = paired([sys.executable, "-c", RANK, "plans/rank.yaml", "1"], rank_dir, env, heavy)
    many = paired([sys.executable, "-c", RANK, "plans/rank.yaml", "10000"], rank_dir, env, heavy)
    contenders_rows = int(many.said.split()[-1]) - int(one.said.split()[-1])    # the draw of draws=1 out
    cost = many.median("cpu") - one.median("cpu")
    per_1e7 = cost / contenders_rows * 1e7
    rows.append(_row(f"P(winner): {contenders_rows:,} contender-draws (10⁴ draws)",
                     "10⁷ contender-draws ≤ 2 s", many,
                     f"{cost:.2f} s CPU → {per_1e7:.1f} s per 10⁷", per_1e7 <= 2.0))

    out = many_dir / "out"
    built = paired(CAPPLAN + ["build"], many_dir, env, heavy, before=lambda: shutil.rmtree(out, ignore_errors=True))
    rows.append(_row("capplan build, main plan with 1,000 scenarios", "≤ 10 s", built,
                     f"{built.median('wall'):.2f} s", built.median("wall") <= 10.0))

    evaluated = paired(CAPPLAN + ["eval", "--json", str(MAIN_PLAN.relative_to(ROOT))], ROOT, env, runs)
    rows.append(_row("capplan eval --json, main plan", "≤ 1.5 × floor", evaluated,
                     f"{evaluated.ratio('wall'):.2f} × (CPU {evaluated.ratio('cpu'):.2f} ×)",
                     evaluated.ratio("wall") <= 1.5))
    return rows


def _row(figure: str, goal: str, p: Paired, measured: str, ok: bool) -> str:
    return (f"| {figure} | {goal} | {p.median('wall'):.2f} s wall, {p.median('cpu'):.2f} s CPU; {measured} | "
            f"{p.median('wall', floors=True):.2f} s wall, {p.median('cpu', floors=True):.2f} s CPU | "
            f"{'met' if ok else '**missed**'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of eval --json (default 5)")
    parser.add_argument("--heavy-runs", type=int, default=3, help="runs of the others (default 3)")
    parser.add_argument("--candidates", type=int, default=10_000)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CAPPLAN_TODAY="2026-12-01")
    env.pop("CAPPLAN_DEBUG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)      # a user's installation has its compiled modules
    with tempfile.TemporaryDirectory(prefix="capplan-speed-") as tmp:
        folder = Path(tmp)
        env["CAPPLAN_CACHE_DIR"] = str(folder / "cache")
        scratch(folder, args.candidates)
        rows = measure(folder, args.runs, args.heavy_runs, env)
    print("| figure | goal | measured (median) | floor beside it (median) | verdict |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
