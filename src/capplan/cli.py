"""The ``capplan`` command: build, check, eval.

Exit codes: 0 success; 1 a plan is wrong (bad input, failed expectation,
stale output) — the message says which file and key; 2 wrong command-line
usage; 3 an internal error (a bug in capplan: please report it; set
CAPPLAN_DEBUG=1 for the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import build as builder
from . import formatting, jsonout
from .errors import CapplanError

EXIT_OK, EXIT_PLAN, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except CapplanError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_PLAN
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a bug: say so plainly, keep the traceback for those who ask
        if os.environ.get("CAPPLAN_DEBUG"):
            raise
        print(f"internal error: {type(err).__name__}: {err}\n"
              "This is a bug in capplan. Re-run with CAPPLAN_DEBUG=1 for the traceback and report it.",
              file=sys.stderr)
        return EXIT_INTERNAL


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capplan", description="LLM-serving capacity plans as unit-checked, "
                                     "reviewable models: records, workbooks and JSON from plan YAML.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="evaluate plans and write out/<plan>.md, .json, .xlsx")
    p.add_argument("plans", nargs="*", help="plan files (default: every plans/*.yaml)")
    p.add_argument("--out", default="out", help="output folder (default: out)")
    p.set_defaults(run=cmd_build)

    p = sub.add_parser("check", help="plans load, units check, expect: holds, out/ is current")
    p.add_argument("plans", nargs="*", help="plan files (default: every plans/*.yaml)")
    p.add_argument("--out", default="out", help="output folder to compare (default: out)")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("eval", help="evaluate one plan and print its results")
    p.add_argument("plan", help="plan file")
    p.add_argument("--json", action="store_true", help="print the full JSON document")
    p.add_argument("--scenario", help="only this scenario")
    p.set_defaults(run=cmd_eval)
    return parser


def cmd_build(args) -> int:
    out_dir = Path(args.out)
    failed = 0
    for path in builder.plan_paths(args.plans):
        try:
            compiled = builder.compile_plan(path)
        except CapplanError as err:
            print(f"error: {err}", file=sys.stderr)
            failed += 1
            continue
        changed = builder.write(out_dir, compiled.files)
        names = ", ".join(sorted(compiled.files))
        print(f"{compiled.plan.file}: {'wrote ' + str(len(changed)) if changed else 'unchanged'} ({names})")
    if failed:
        print(f"{failed} plan(s) failed; their previous outputs are untouched", file=sys.stderr)
        return EXIT_PLAN
    return EXIT_OK


def cmd_check(args) -> int:
    out_dir = Path(args.out)
    problems: list[str] = []
    paths = builder.plan_paths(args.plans)
    for path in paths:
        try:
            compiled = builder.compile_plan(path)
        except CapplanError as err:
            problems.append(str(err))
            continue
        problems += builder.expectation_failures(compiled)
        for message in builder.stale(out_dir, compiled):
            problems.append(f"{message}: run `capplan build {compiled.plan.file}`")
    if problems:
        print(f"capplan check: {len(problems)} problem(s)", file=sys.stderr)
        for message in problems:
            print(f"  - {message}", file=sys.stderr)
        return EXIT_PLAN
    print(f"capplan check: {len(paths)} plan(s) OK (units, expectations, {out_dir}/ current)")
    return EXIT_OK


def cmd_eval(args) -> int:
    plan, evaluations = builder.evaluate_plan(Path(args.plan))
    if args.scenario:
        evaluations = [e for e in evaluations if e.scenario.name == args.scenario]
        if not evaluations:
            names = ", ".join(s.name for s in plan.scenarios)
            raise CapplanError(f"no scenario '{args.scenario}' (scenarios: {names})", file=plan.file)
    if args.json:
        sys.stdout.write(jsonout.dumps(jsonout.document(plan, evaluations)))
        return EXIT_OK
    for e in evaluations:
        print(f"[{e.scenario.name}] {e.scenario.title}")
        for name in ("safe_rate_per_replica", "active_gpus", "resilient_gpus"):
            print(f"  {name:<28} {e.text(name)}")
        for r in e.rows("deployments"):
            print(f"  {r['name']:<28} {formatting.number(r['nodes'])} nodes, {formatting.money(r['monthly_cost'])}/month, "
                  f"{formatting.money(r['cost_per_million_tokens'])} per 1M output tokens")
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
