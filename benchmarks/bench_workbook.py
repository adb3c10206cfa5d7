"""Wall time of the workbook: building it, proving it in LibreOffice, and how it scales (median of N runs).

    python benchmarks/bench_workbook.py [--runs 5] [--plans plans/a.yaml plans/b.yaml]
    python benchmarks/bench_workbook.py --scenarios 6 50 200 [--runs 3]

Prints the median (and min/max) wall time of
  1. building the workbooks of the two reference plans (render_workbook: layout,
     formula compilation, styles, deterministic .xlsx bytes), plans already
     loaded and evaluated;
  2. the LibreOffice verification of both: one headless soffice call that
     recalculates both files, reading the values back and comparing every
     value-bearing cell with the engine (tests/recalc.py).

With ``--scenarios`` it instead copies the main plan to a scratch folder, grows
it to each given number of scenarios (each one changes the peak rate and a
price, so every sheet has overrides and links), and prints load, evaluate and
workbook times with the workbook's ratio to the smallest count: a workbook
whose cost is linear in scenarios shows a ratio near count / smallest count
per scenario, i.e. a flat time per scenario.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

REFERENCE = [ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml", ROOT / "plans" / "llama3-8b-a100-retail-chatbot.yaml"]


def timed(fn, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def show(label: str, times: list[float]) -> None:
    print(f"{label:58s} median {statistics.median(times):7.3f} s   (min {min(times):.3f}, max {max(times):.3f}, n={len(times)})")


def grown_plan(folder: Path, count: int) -> Path:
    """The main plan with scenarios added until it has ``count`` (nominal included)."""
    import yaml

    data = yaml.safe_load(REFERENCE[0].read_text(encoding="utf-8"))
    scenarios = data.setdefault("scenarios", {})
    for i in range(count - 1 - len(scenarios)):
        scenarios[f"grown_{i:03d}"] = {
            "title": f"Generated scenario {i}",
            "set": {"peak_arrival_rate": f"{30 + i % 90} req/s",
                    "deployments[fractional-a100-80gb].node_hourly_cost": f"{2 + (i % 50) / 100} USD/h"},
        }
    path = folder / f"grown-{count}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def scaling(counts: list[int], runs: int) -> int:
    """Load, evaluate and workbook time of the main plan grown to each scenario count."""
    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from capplan.analysis.pipeline import Artifacts
    from capplan.rendering import view
    from capplan.rendering.workbook import render_workbook

    model = standard_model()
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for count in counts:
            path = grown_plan(Path(tmp), count)
            load_t = timed(lambda path=path: load(path, model), runs)
            plan = load(path, model)
            eval_t = timed(lambda plan=plan: evaluate_all(plan, model), runs)
            evs = evaluate_all(plan, model)
            book_t = statistics.median(timed(lambda plan=plan, evs=evs: render_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs))), runs))
            base = base or (count, book_t)
            print(f"{len(plan.scenarios):4d} scenarios: load {statistics.median(load_t):6.3f} s  "
                  f"evaluate {statistics.median(eval_t):6.3f} s  workbook {book_t:6.3f} s "
                  f"({book_t / base[1]:5.1f}x the {base[0]}-scenario workbook; "
                  f"{1000 * book_t / count:5.1f} ms per scenario)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--plans", nargs="*", type=Path, default=REFERENCE)
    ap.add_argument("--scenarios", nargs="*", type=int, help="scenario counts to grow the main plan to")
    args = ap.parse_args()
    if args.scenarios:
        return scaling(args.scenarios, args.runs)

    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    from capplan.loading.plan import load
    from capplan.analysis.pipeline import Artifacts
    from capplan.rendering import view
    from capplan.rendering.workbook import build_workbook, render_workbook

    model = standard_model()
    loaded = []
    for path in args.plans:
        plan = load(path, model)
        loaded.append((plan, evaluate_all(plan, model)))

    render_workbook(*loaded[0], model, view.build(*loaded[0], Artifacts(loaded[0][1])))          # warm-up: imports, caches
    for plan, evs in loaded:
        built = build_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs)))
        derived = sum(1 for c in built.cells if c.role == "derived")
        size = len(render_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs))))
        print(f"{plan.name}: {len(evs)} scenario sheet(s), {derived} derived formula cells, "
              f"{len(built.formulas())} formulas, {size / 1024:.0f} KiB")
        show(f"  build {plan.name}", timed(lambda plan=plan, evs=evs: render_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs))), args.runs))
    show("build both workbooks", timed(lambda: [render_workbook(p, e, model, view.build(p, e, Artifacts(e))) for p, e in loaded], args.runs))

    import recalc

    if recalc.soffice() is None:
        print(f"LibreOffice verification skipped: {recalc.SKIP_REASON}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        src = work / "src"
        src.mkdir()
        files, manifests = [], {}
        for plan, evs in loaded:
            path = src / f"{plan.name}.xlsx"
            path.write_bytes(render_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs))))
            files.append(path)
            manifests[path] = build_workbook(plan, evs, model, view.build(plan, evs, Artifacts(evs))).cells
        counter = iter(range(10**6))

        def verify():
            run = work / f"run{next(counter)}"
            run.mkdir()
            out = recalc.recalc(files, run)
            for path in files:
                wb = recalc.values(out[path])
                bad = recalc.error_cells(wb) + recalc.mismatches(manifests[path], wb)
                if bad:
                    raise SystemExit(f"{path.name}: {bad[:5]}")

        show("LibreOffice verification of both (1 soffice call + compare)", timed(verify, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
