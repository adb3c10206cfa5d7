"""Re-run issue 37's red-team cases and print what capplan does with each.

    python benchmarks/redteam_37.py [--src DIR] [--item N ...]

Each case (``benchmarks/redteam/items_*.py``) sets up a scratch project and runs the real
``capplan`` command in a child process under a timeout, as an attacker or a careless author
would; it passes when capplan gives the right answer and says what it did, and is marked
WRONG with what it saw otherwise. ``--src`` runs another checkout's ``src`` (e.g. main before
the issue: ``git archive REV | tar -x -C DIR`` and ``--src DIR/src``), where every case
should come out WRONG. The exit status is the number of wrong answers (at most 100).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from redteam import common  # noqa: E402

def cases() -> list[tuple[int, str, object]]:
    """Every module's cases (``redteam/items_*.py``), by the issue's item number."""
    found = []
    for path in sorted((HERE / "redteam").glob("items_*.py")):
        found += importlib.import_module(f"redteam.{path.stem}").CASES
    return sorted(found, key=lambda case: case[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, help="the capplan source folder to run (default: this checkout's)")
    parser.add_argument("--item", type=int, nargs="*", help="only these items of the issue")
    args = parser.parse_args()
    if args.src:
        common.SRC = args.src.resolve()
    print("| item | case | outcome | s |")
    print("| ---: | --- | --- | ---: |")
    wrong = 0
    for item, title, run in cases():
        if args.item and item not in args.item:
            continue
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "project"
            folder.mkdir()
            try:
                outcome = f"ok: {run(folder)}"
            except common.Wrong as err:
                wrong += 1
                outcome = f"**WRONG**: {err}"
            except subprocess.TimeoutExpired as err:
                wrong += 1
                outcome = f"**WRONG**: timed out after {err.timeout:g} s"
        text = outcome.replace("|", "\\|").replace("\n", " ")
        print(f"| {item} | {title} | {text[:400]} | {time.perf_counter() - start:.1f} |", flush=True)
    return min(wrong, 100)


if __name__ == "__main__":
    sys.exit(main())
