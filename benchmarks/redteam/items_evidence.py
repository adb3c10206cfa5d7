"""Issue 37's cases about what ``check`` sees: a traffic file edited after a build (1), two
checkouts of one plan with other CSVs (2), outputs bounded by the inputs' limits (3), a scoped
check and foreign files (10), and the manifest itself (11)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from .common import PLAN, capplan, expect, plan, said, write_plan


def _traffic_project(folder: Path, peak: int = 53, rows: int = 0) -> None:
    (folder / ".git").mkdir(exist_ok=True)
    doc = plan(traffic={"file": "hourly.csv", "source": "red team"})
    for name in ("peak_arrival_rate", "peak_to_average_ratio"):
        doc["inputs"].pop(name)
    write_plan(folder, doc)
    lines = [f"{h},{20 + (peak - 20) * math.sin(h / 24 * math.pi) ** 2:.3f}" for h in range(rows or 24)]
    (folder / "plans" / "hourly.csv").write_text("time,arrival_rate\n" + "\n".join(lines) + "\n")


def traffic_file_edited(folder: Path) -> str:
    _traffic_project(folder)
    expect(capplan(folder, "build").returncode == 0, None, "the build")
    csv = folder / "plans" / "hourly.csv"
    csv.write_text(csv.read_text().replace("\n12,53.000\n", "\n12,76.000\n"))
    checked = capplan(folder, "check")
    expect(checked.returncode == 1 and "plans/hourly.csv changed" in checked.stderr, checked,
           "check after the CSV's peak went 53 -> 76 req/s")
    built = capplan(folder, "build")
    expect("wrote out/p." in built.stdout, built, "build after the edit")
    named = next(line.strip() for line in checked.stderr.splitlines() if "hourly.csv changed" in line)
    return f"check exit 1: {named[:200]}"


def two_checkouts(folder: Path) -> str:
    first, second = folder / "first", folder / "second"
    for peak, where in ((53, first), (76, second)):
        where.mkdir()
        _traffic_project(where, peak)
    cache = folder.parent / f"{folder.name}.shared-cache"
    runs = [capplan(where, "build", cache=cache) for where in (first, second)]
    expect(all(r.returncode == 0 for r in runs), runs[-1], "the two builds")
    checks = [capplan(where, "check", cache=cache) for where in (first, second)]
    expect(all(c.returncode == 0 for c in checks), checks[0], "check of the untouched first checkout")
    return "both checkouts pass check with one cache"


def long_profiles(folder: Path) -> str:
    outcomes = []
    for rows in (100_000, 8_760):
        where = folder / f"rows-{rows}"
        where.mkdir()
        _traffic_project(where, rows=rows)
        done = capplan(where, "build", timeout=300)
        sizes = sum(p.stat().st_size for p in (where / "out").glob("p.*")) if (where / "out").is_dir() else 0
        expect(sizes <= 192 * 2 ** 20, done, f"{rows:,} rows wrote {sizes / 2 ** 20:,.0f} MiB")
        if done.returncode == 0:
            checked = capplan(where, "check", timeout=300)
            expect(checked.returncode == 0, checked, f"check after the build of {rows:,} rows")
        outcomes.append(f"{rows:,} rows: {said(done)}, {sizes / 2 ** 20:,.1f} MiB written")
    return "; ".join(outcomes)


def scoped_check(folder: Path) -> str:
    write_plan(folder, PLAN)
    expect(capplan(folder, "build").returncode == 0, None, "the build")
    (folder / "out" / "extra.md").write_text("no plan makes this")
    done = capplan(folder, "check", "plans/p.yaml")
    expect("extra.md" in done.stderr, done, "check PLAN with a foreign out/extra.md")
    return said(done).replace("\n", " ")


def manifest_itself(folder: Path) -> str:
    (folder / ".git").mkdir()
    write_plan(folder, PLAN)
    expect(capplan(folder, "build").returncode == 0, None, "the build")
    record = folder / "out" / "manifest.json"
    kept = record.read_text()
    outcomes = []
    for damage in ("deleted", "garbage", "forged imports"):
        if damage == "deleted":
            record.unlink()
        elif damage == "garbage":
            record.write_text("{ not json")
        else:
            doc = json.loads(kept)
            doc["plans"]["p"]["imports"] = {"/dev/zero": "0" * 64, "../../etc/passwd": "0" * 64}
            record.write_text(json.dumps(doc))
        done = capplan(folder, "check", timeout=60)
        expect(done.returncode == 1 and "manifest.json" in done.stderr, done, f"check with the manifest {damage}")
        outcomes.append(f"{damage}: exit {done.returncode}")
        record.write_text(kept)
    shutil.rmtree(folder / "out")
    return "; ".join(outcomes)


CASES = [
    (1, "a traffic CSV's peak raised 53 -> 76 req/s after a build", traffic_file_edited),
    (2, "one plan text, another CSV in a second checkout, one machine cache", two_checkouts),
    (3, "traffic files of 100,000 and 8,760 hourly rows", long_profiles),
    (10, "check PLAN with a foreign file in out/", scoped_check),
    (11, "out/manifest.json deleted, garbage, or naming /dev/zero and ../../etc/passwd", manifest_itself),
]
