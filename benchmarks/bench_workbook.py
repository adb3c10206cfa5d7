"""Wall time of the workbook: building it, and proving it in LibreOffice (median of N runs).

    python benchmarks/bench_workbook.py [--runs 5] [--plans plans/a.yaml plans/b.yaml]

Prints the median (and min/max) wall time of
  1. building the workbooks of the two reference plans (render_workbook: layout,
     formula compilation, styles, deterministic .xlsx bytes), plans already
     loaded and evaluated;
  2. the LibreOffice verification of both: one headless soffice call that
     recalculates both files, reading the values back and comparing every
     value-bearing cell with the engine (tests/recalc.py).
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--plans", nargs="*", type=Path, default=REFERENCE)
    args = ap.parse_args()

    from capplan.engine.evaluate import evaluate_all
    from capplan.engine.model import standard_model
    from capplan.loading.plan import load
    from capplan.rendering.workbook import build_workbook, render_workbook

    model = standard_model()
    loaded = []
    for path in args.plans:
        plan = load(path, model)
        loaded.append((plan, evaluate_all(plan, model)))

    render_workbook(*loaded[0], model)          # warm-up: imports, caches
    for plan, evs in loaded:
        built = build_workbook(plan, evs, model)
        derived = sum(1 for c in built.cells if c.role == "derived")
        size = len(render_workbook(plan, evs, model))
        print(f"{plan.name}: {len(evs)} scenario sheet(s), {derived} derived formula cells, "
              f"{len(built.formulas())} formulas, {size / 1024:.0f} KiB")
        show(f"  build {plan.name}", timed(lambda: render_workbook(plan, evs, model), args.runs))
    show("build both workbooks", timed(lambda: [render_workbook(p, e, model) for p, e in loaded], args.runs))

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
            path.write_bytes(render_workbook(plan, evs, model))
            files.append(path)
            manifests[path] = build_workbook(plan, evs, model).cells
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
