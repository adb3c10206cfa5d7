"""The worst inputs a plan may hold inside its domains, each run as the whole command
a user runs, timed and measured against its stated budget (docs/limits.md).

    python benchmarks/bench_worst_inputs.py [--only SUBSTRING]

Cases live in ``benchmarks/worst/<area>.py`` (each a list ``CASES`` of
:class:`benchmarks.worst.harness.Case`); this script runs them all, one fresh
process each, and prints a Markdown table; it exits 1 when a case is over budget.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.worst import harness  # noqa: E402


def cases() -> list[harness.Case]:
    import benchmarks.worst as package

    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name != "harness":
            found += importlib.import_module(f"benchmarks.worst.{info.name}").CASES
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    results = []
    for case in cases():
        if args.only in case.name:
            results.append(harness.measure(case))
            print(f"{case.name}: {results[-1].seconds:.2f} s, {results[-1].peak_mib:.0f} MiB, "
                  f"exit {results[-1].exit_code}", file=sys.stderr)
    print(harness.table(results))
    return 0 if all(m.within for m in results) else 1


if __name__ == "__main__":
    sys.exit(main())
