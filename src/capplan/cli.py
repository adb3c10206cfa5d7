"""The ``capplan`` command: build, check, eval, explain, seek, diff, simulate, schema; init, catalog,
estimate and validate.

Exit codes:

* ``0`` success (``check``: every plan loads, units check, ``expect:`` holds,
  ``out/`` is current; warnings alone do not fail it unless ``--strict``);
* ``1`` a plan is wrong — bad input, failed expectation, stale or missing
  output, a name the plan does not have (scenario, quantity); with
  ``--strict``, a warning (pending measurement, TODO placeholder, old or undated prices). The
  message names the file, key and line;
* ``2`` wrong command-line usage (unknown option, missing argument, a git
  revision that does not exist, ``CAPPLAN_TODAY`` that is not a date);
* ``3`` an internal error (a bug in capplan: please report it; set
  ``CAPPLAN_DEBUG=1`` for the traceback).

``CAPPLAN_TODAY=YYYY-MM-DD`` sets the date ``check`` measures price ages
against (default: today), so CI runs and tests are reproducible.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import re
import signal
import sys
from pathlib import Path
from typing import NoReturn

from capplan import build as builder
from capplan.ahead import kill_all
from capplan.analysis import pipeline
from capplan.errors import CapplanError, InternalError, UsageError

EXIT_OK, EXIT_PLAN, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


# A command is a short batch job that allocates millions of objects (sympy's import,
# the flip search, a workbook's cells) and leaves almost no cycles: the collector's
# default (a young-generation pass every 700 allocations) spent 13 % of a 200-scenario
# build finding nothing. These thresholds are mypy's, which made the same measurement.
GC_THRESHOLDS = (200_000, 30, 30)


class Stopped(BaseException):
    """SIGTERM or SIGHUP (``timeout``, a cancelled CI job, a closed terminal), raised where the
    command is, so that it unwinds as from Ctrl-C: temporaries removed, children killed.
    A BaseException, so no ``except Exception`` of capplan's swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, _frame) -> None:
    raise Stopped(signum)


def main(argv: list[str] | None = None) -> int:
    """Each command imports the stages it uses when it runs: ``--help`` and an
    unchanged ``build`` or ``check`` load no sympy."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Escaping(sys.stdout), Escaping(sys.stderr)
    handlers = {}
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            handlers[signum] = signal.signal(signum, _stop)
    except ValueError:                   # not the main thread (main() run by another program): no handlers
        pass
    try:
        return _run(argv)
    finally:
        kill_all()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        gc.set_threshold(*before)        # main() also runs inside other programs (the tests)
        _restore(streams)


# What a terminal acts on instead of showing: C0 controls but the tab and the line break (ESC starts
# a colour, a cursor move, a title change; BEL rings; CR overwrites the line), DEL, the C1 controls
# (U+009B is a one-character ESC [) and the bidirectional marks and overrides (U+202E shows what
# follows reversed).
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """``text`` with what a terminal would act on written as its code point (``\\u001b``): the
    spelling JSON gives C0 controls, so ``eval --json`` stays JSON that reads back the same text."""
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class Escaping:
    """A text stream that writes :func:`terminal_text`: everything the command prints (a table,
    a Markdown comment, a message naming a plan's deployment) goes through it, so that no plan
    text drives the terminal or CI log it is printed in. Anything else is the stream's own."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _restore(streams: tuple) -> None:
    """Put back the streams :func:`main` wrapped, each still its wrapper (after a broken pipe,
    standard output is the null device, and stays so)."""
    for name, stream in zip(("stdout", "stderr"), streams):
        if isinstance(getattr(sys, name), Escaping):
            setattr(sys, name, stream)


def _run(argv: list[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _tolerate_undecodable_names()
    try:
        return args.run(args)
    except UsageError as err:
        print(f"capplan {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except CapplanError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_PLAN
    except (KeyboardInterrupt, Stopped) as stop:
        return _stopped(args.command, stop)
    except BrokenPipeError:             # `capplan explain … | head`: the reader left; not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        return EXIT_OK
    except Exception as err:  # InternalError or any other: a bug; say so, keep the traceback for those who ask
        stop = _signal_under(err)
        if stop is not None:
            return _stopped(args.command, stop)
        if os.environ.get("CAPPLAN_DEBUG"):
            raise
        kind = "" if isinstance(err, InternalError) else f"{type(err).__name__}: "
        print(f"internal error: {kind}{err}\n"
              "This is a bug in capplan. Re-run with CAPPLAN_DEBUG=1 for the traceback and report it.",
              file=sys.stderr)
        return EXIT_INTERNAL


def _stopped(command: str, stop: BaseException) -> int:
    """The message and exit code of a command a signal stopped (128 + the signal's number)."""
    if isinstance(stop, Stopped):
        print(f"capplan {command}: stopped by {signal.Signals(stop.signum).name}; no output was left "
              "half-written", file=sys.stderr)
        return 128 + stop.signum
    print(f"capplan {command}: interrupted; no output was left half-written", file=sys.stderr)
    return 128 + signal.SIGINT


def _signal_under(err: BaseException) -> BaseException | None:
    """The signal's exception the interpreter wrapped in ``err``, if any: one that lands while a
    class is created reaches us as "RuntimeError: Error calling __set_name__", its cause the
    KeyboardInterrupt or :class:`Stopped` (Python 3.11)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, (KeyboardInterrupt, Stopped)):
            return err
        seen.add(id(err))
        err = err.__cause__
    return None


def _tolerate_undecodable_names() -> None:
    """A file name that is not UTF-8 reaches messages as surrogates; print them
    escaped (``\\xff``) instead of failing on them."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="capplan", description="LLM-serving capacity plans as unit-checked, reviewable models: records, "
        "workbooks and JSON from plan YAML.",
        epilog="Exit codes: 0 ok; 1 a plan is wrong (bad input, failed expect:, stale out/; with --strict "
        "also warnings); 2 command-line usage; 3 internal error (set CAPPLAN_DEBUG=1 and report it).")
    parser.add_argument("--version", action="version", version=f"capplan {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    plans = _parent("plans", nargs="*", help="plan files (default: every plans/*.yaml)")
    plan = _parent("plan", help="plan file")
    text_or_json = _parent("--format", choices=("text", "json"), default="text", help="text (default) or json")
    scenario = _parent("--scenario", default="nominal", help="scenario (default: nominal)")
    formats = _parent("--format", choices=("text", "markdown", "json"), default="text",
                      help="text (default), markdown or json")

    p = sub.add_parser("build", help="evaluate plans and write out/<plan>.md, .json, .xlsx", parents=[plans])
    p.add_argument("--out", default="out", help="output folder (default: out)")
    p.add_argument("--force", action="store_true",
                   help="evaluate every plan, even one whose outputs out/manifest.json records as current")
    p.set_defaults(run=cmd_build)

    p = sub.add_parser("check", help="CI gate: plans load, units check, expect: holds, out/ is current",
                       description="Fails (exit 1) when a plan does not load, an expect: does not hold or out/ "
                       "differs from a fresh build. Warns about pending measurements, TODO placeholders (a text that "
                       "starts with the word TODO) and prices older than "
                       "--max-price-age days (tables.deployments.as_of, or a row's as_of); --strict makes "
                       "warnings fail too. CAPPLAN_TODAY=YYYY-MM-DD sets today's date.", parents=[plans])
    p.add_argument("--out", default="out", help="output folder to compare (default: out)")
    p.add_argument("--strict", action="store_true", help="warnings (pending measurements, TODO placeholders, old prices) fail too")
    p.add_argument("--max-price-age", type=_days, default=None, metavar="DAYS",
                   help="warn when prices are older than this (default: templates/layout.yaml's holds.price_age, "
                        "the age at which the record lists a price among the risks)")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("eval", help="evaluate one plan and print its results", parents=[plan])
    p.add_argument("--json", action="store_true", help="print the full JSON document")
    p.add_argument("--scenario", help="only this scenario")
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("explain", help="print the derivation tree of one quantity, down to its inputs",
                       description="Each line: the formula, the same formula with the numbers that went in, "
                       "the value with its unit, the tag and the source; pending measurements marked. QUANTITY "
                       "is a quantity name, a table column (deployments.monthly_cost) or one table cell "
                       "(deployments[aws-p4de.24xlarge].monthly_cost).", parents=[plan])
    p.add_argument("quantity", help="quantity, table.column or table[row].column")
    p.add_argument("--scenario", default="nominal", help="scenario to explain (default: nominal)")
    p.add_argument("--format", choices=("text", "markdown"), default="text", help="text (default) or markdown")
    p.add_argument("--depth", type=_days, metavar="N", help="expand at most N levels")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("diff", help="what a change to the plans does to the results (Markdown for a PR comment)",
                       description="capplan diff OLD.yaml NEW.yaml (or two folders of plans), or capplan diff "
                       "--base REV [PLAN...] to compare each plan at git revision REV with the working tree "
                       "(default: every plan in plans/, added and removed ones included).")
    p.add_argument("paths", nargs="*", metavar="PLAN", help="OLD NEW; or, with --base, the plans to compare")
    p.add_argument("--base", metavar="REV", help="git revision of the old plans (e.g. origin/main)")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown",
                   help="markdown (default, for a PR comment) or json")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(run=cmd_diff)

    p = sub.add_parser("seek", help="how far one input can move before a decision flips; goal seek",
                       description="Without --target: the interval around INPUT's value in which every decision "
                       "of the scenario holds (GPUs, nodes, gates, the nominal fleet's verdict), then every flip point "
                       "on each side, with what changes. With --target QUANTITY=VALUE: every INPUT value at which "
                       "QUANTITY reaches VALUE (a number in QUANTITY's unit, or another quantity, e.g. a breakeven "
                       "price). INPUT is an input, a derived quantity (pinned while it varies) or an input table "
                       "cell (deployments[aws-p4de.24xlarge].node_hourly_cost).",
                       parents=[plan, scenario, formats])
    p.add_argument("input", help="the quantity or table cell to vary")
    p.add_argument("--range", nargs=2, metavar=("LO", "HI"),
                   help="values to search, in INPUT's unit (default: today's value ÷ 2 … × 2, within its domain)")
    p.add_argument("--target", metavar="QUANTITY=VALUE", help="goal seek: where QUANTITY reaches VALUE")
    p.set_defaults(run=cmd_seek)

    p = sub.add_parser("simulate", help="Monte Carlo over the plan's uncertain inputs: percentiles, odds, drivers",
                       description="Draws every uncertain input (a value with range:) and evaluates the plan's graph "
                       "for every draw at once; prints each key result's P5/P50/P95 and mean, the probability each "
                       "decision of the point plan holds, and the inputs that drive the spread. A fixed seed gives "
                       "byte-identical output.", parents=[plan, scenario, formats])
    p.add_argument("--samples", type=_positive, default=None, metavar="N", help="draws (default: 100,000)")
    p.add_argument("--seed", type=_days, default=None, metavar="S", help="random seed (default: fixed)")
    p.set_defaults(run=cmd_simulate)

    p = sub.add_parser("schema", help="write the JSON Schema of plan files (generated from the model)",
                       description="Editors that speak yaml-language-server complete and check plans with it: "
                       "put '# yaml-language-server: $schema=<path to plan.schema.json>' on a plan's first line.")
    p.add_argument("--out", metavar="FILE", help="write to FILE (default: standard output)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if FILE (default: the copy shipped in the package) differs from a fresh generation")
    p.set_defaults(run=cmd_schema)

    p = sub.add_parser("init", help="write a first plan that builds at once (Little's-law sizing, TODOs marked)",
                       description="Writes FOLDER/plans/<name>.yaml from templates/plan.yaml.j2: Little's-law "
                       "sizing, the SLOs stated, the default policies with their sources, every pending "
                       "measurement marked with a TODO; builds it once, never overwrites a plan, and adds to "
                       ".gitattributes the lines that fold out/ in pull requests.")
    p.add_argument("folder", nargs="?", default=".", help="the project folder (default: here); may be a fresh "
                   "git repository")
    p.add_argument("--gpu", help="catalog id or alias (default: h100-sxm5-80gb; see capplan catalog gpus)")
    p.add_argument("--model", help="catalog id, alias or Hugging Face id (default: llama-3.1-8b)")
    p.add_argument("--tp", type=_positive, default=1, metavar="N", help="GPUs per replica (default: 1)")
    p.add_argument("--peak", metavar="R", help="peak arrival rate (default: '10 req/s'; a bare number is req/s)")
    p.add_argument("--name", type=_plan_name, help="plan name (default: <model>-<gpu>)")
    p.set_defaults(run=cmd_init)

    p = sub.add_parser("catalog", help="list the catalog's GPUs or models: ids, names, key facts, sources",
                       description="QUERY keeps the entries whose id, name, alias or Hugging Face id contains "
                       "it (case and spacing ignored).")
    p.add_argument("kind", choices=("gpus", "models"), help="gpus or models")
    p.add_argument("query", nargs="?", help="filter by id, name or alias (e.g. h100)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(run=cmd_catalog)

    p = sub.add_parser("estimate", help="predict a plan's deployment with a performance model (aiconfigurator): "
                       "estimate files a plan imports like a sweep",
                       description="Runs the tool once per configuration (the plan's own GPU and TP, or the "
                       "--gpu/--tp given) and writes <plan-dir>/estimates/<plan>-<gpu>-tp<N>.estimate.yaml; "
                       "import it under tables: load_sweep: import: (under sizing: estimate, candidates: "
                       "evidence:). Builds never run the tool.", parents=[plan])
    p.add_argument("--with", dest="tool", required=True, choices=("aiconfigurator", "aisimulate"),
                   help="the performance model to run")
    p.add_argument("--gpu", action="append", help="catalog GPU id or alias (repeatable; default: the plan's)")
    p.add_argument("--tp", type=_positive, action="append", metavar="N",
                   help="GPUs per replica (repeatable; default: the plan's gpus_per_replica)")
    p.add_argument("--backend", choices=("vllm", "trtllm", "sglang"), default="vllm",
                   help="serving engine whose database the tool uses (default: vllm)")
    p.add_argument("--isl", type=_positive, help="prompt tokens (default: the class mix's weighted mean)")
    p.add_argument("--osl", type=_positive, help="output tokens (default: the class mix's weighted mean)")
    p.add_argument("--tool-python", help="interpreter that has the tool (default: capplan's own)")
    p.add_argument("--tool-model", help="the tool's name for the model (default: from the catalog)")
    p.add_argument("--out", help="folder for the estimate files (default: estimates/ beside the plan)")
    p.set_defaults(run=cmd_estimate)

    p = sub.add_parser("validate", help="predict your own benchmark files with the plan's estimate: measured "
                       "against predicted, per point",
                       description="Reads each FILE with the sweep importers (vLLM bench serve or "
                       "benchmark_serving.py results, GuideLLM reports, InferenceX results; open or closed loop) "
                       "and predicts every point for the plan's deployment (GPU, model, formats, gpus_per_replica, "
                       "engine_step_factor) at the point's own load and mean lengths with the estimate group's "
                       "formulas: output tok/s, median TPOT and TTFT, measured against predicted, and whether an "
                       "open-loop point is under the estimate's λ*. Writes nothing.", parents=[plan, text_or_json])
    p.add_argument("files", nargs="+", metavar="FILE", help="benchmark result files (one server each)")
    p.add_argument("--fit", action="store_true", help="also fit hbm_efficiency to the decode-bound open-loop "
                   "points' median TPOT, and estimate_prefill_efficiency and prefill_overhead to the closed-loop "
                   "points' output tok/s and median TTFT, and print the inputs: block a plan pastes (the files "
                   "its source)")
    p.set_defaults(run=cmd_validate)

    p = sub.add_parser("pools", help="the prefill and decode pools' measured rates from a disaggregated "
                       "benchmark's sweep: the inputs: block a plan pastes",
                       description="Reads each FILE with the sweep importers (one run of a disaggregated "
                       "benchmark at a request rate: x prefill and y decode replicas behind a proxy) and gives "
                       "λ*_P, the highest rate whose TTFT percentiles meet the plan's TTFT SLOs over x, and "
                       "λ*_D, the highest whose TPOT percentiles meet the TPOT SLOs over y, as "
                       "prefill_measured_rate and decode_measured_rate (tag measurement, the files and their "
                       "SHA-256 their source). A pool that never misses its SLO gets a lower bound, said so. "
                       "Writes nothing.", parents=[plan, text_or_json])
    p.add_argument("files", nargs="+", metavar="FILE", help="the sweep's result files (one rate each)")
    p.add_argument("--prefill-replicas", type=_positive, metavar="X",
                   help="prefill replicas the sweep ran (default: the files' prefill_replicas metadata)")
    p.add_argument("--decode-replicas", type=_positive, metavar="Y",
                   help="decode replicas the sweep ran (default: the files' decode_replicas metadata)")
    p.set_defaults(run=cmd_pools)
    return parser


def _parent(*names: str, **options) -> argparse.ArgumentParser:
    """A parser holding one argument several commands take, for their ``parents=``: declared once,
    so its help and default are the same in every command (argparse lists it before the command's own)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(*names, **options)
    return parent


def _plan_name(text: str) -> str:
    """A plan's file name without .yaml: one name in plans/, no folder."""
    if not text or text.startswith(".") or "/" in text or "\\" in text:
        raise argparse.ArgumentTypeError(f"expected a plain name such as 'chat-h100', got '{text}'")
    return text.removesuffix(".yaml")


def _version() -> str:
    """The installed distribution's version, read from its dist-info folder name (no import of
    importlib.metadata or of the stages: ``--version`` answers at once)."""
    from capplan.manifest import installed_versions

    return installed_versions().get("capplan", "(not installed)")


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


# -- build ------------------------------------------------------------------------------

def cmd_build(args) -> int:
    results = builder.build(builder.plan_paths(args.plans), Path(args.out), force=args.force, whole=not args.plans)
    for r in results:
        removed = f"removed {', '.join(p.name for p in r.removed)}" if r.removed else ""
        if r.error:
            print(f"error: {r.error}", file=sys.stderr)
        elif r.gone:
            print(f"{r.file}: no such plan any more; {removed or 'no outputs left'}")
        else:
            print(f"{r.file}: {_built(r, Path(args.out))}{'; ' + removed if removed else ''}")
    failed = sum(1 for r in results if r.error)
    if failed:
        print(f"{failed} plan(s) failed; their previous outputs are untouched", file=sys.stderr)
        return EXIT_PLAN
    print(_build_summary(results, Path(args.out)))
    return EXIT_OK


def _build_summary(results: list[builder.Built], out_dir: Path) -> str:
    """One line a newcomer can read after a build that succeeded: how many plans, what was
    done with them, with which capplan."""
    plans = [r for r in results if not r.gone]
    counts = [(sum(1 for r in plans if not r.error and not r.skipped), "rebuilt"),
              (sum(1 for r in plans if r.skipped), "already current")]
    done = ", ".join(f"{n} {what}" for n, what in counts if n) or "nothing to do"
    hint = "; `capplan build --force` rebuilds them" if counts[1][0] else ""
    return f"capplan build: {len(plans)} plan(s) in {out_dir}/: {done} (capplan {_version()}){hint}"


def _built(r: builder.Built, out_dir: Path) -> str:
    """What a build did with a plan's outputs, in words: which it wrote, which were already current."""
    if r.skipped:
        return f"current, not rebuilt ({len(r.outputs)} outputs as built from these inputs)"
    wrote = sorted(p.name for p in r.changed)
    same = len(r.outputs) - len(wrote)
    return ((f"wrote {_names(wrote, out_dir)}" if wrote else "rebuilt, every output as it was")
            + (f"; {same} already current" if wrote and same else ""))


def _names(names: list[str], out_dir: Path) -> str:
    """``out/x.{md,json}``: the names of one plan's outputs, their common stem once."""
    stem = os.path.commonprefix(names).rpartition(".")[0] if len(names) > 1 else ""
    if not stem:
        return ", ".join(str(out_dir / name) for name in names)
    return f"{out_dir / stem}.{{{','.join(name[len(stem) + 1:] for name in names)}}}"


# -- check --------------------------------------------------------------------------------

def cmd_check(args) -> int:
    from capplan import verify
    from capplan.review import check

    out_dir = Path(args.out)
    today = _today()
    paths = builder.plan_paths(args.plans)
    verdicts, folder_problems, folder_notes = verify.verify(paths, out_dir, whole=not args.plans)
    problems = [p for seen in verdicts for p in seen.problems] + folder_problems
    warnings = [w for seen in verdicts if seen.findings is not None
                for w in check.warnings(seen.findings, today, args.max_price_age)]
    for note in [seen.note for seen in verdicts if seen.note] + folder_notes:
        print(f"capplan check: note: {note}", file=sys.stderr)
    if warnings:
        fatal = " (fatal: --strict)" if args.strict else ""
        print(f"capplan check: {len(warnings)} warning(s){fatal}", file=sys.stderr)
        for message in warnings:
            print(f"  - warning: {_indent(message)}", file=sys.stderr)
    if problems:
        print(f"capplan check: {len(problems)} problem(s)", file=sys.stderr)
        for message in problems:
            print(f"  - {_indent(message)}", file=sys.stderr)
        return EXIT_PLAN
    if warnings and args.strict:
        return EXIT_PLAN
    noted = f"; {len(warnings)} warning(s)" if warnings else ""
    print(f"capplan check: {len(paths)} plan(s) OK (units, expectations, {out_dir}/ current){noted}")
    return EXIT_OK


def _indent(message: str) -> str:
    return message.replace("\n", "\n      ")


def _today() -> dt.date:
    given = os.environ.get("CAPPLAN_TODAY")
    if not given:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(given.strip())
    except ValueError:
        raise UsageError(f"CAPPLAN_TODAY must be a date YYYY-MM-DD, got '{given}'") from None


# -- eval, explain ------------------------------------------------------------------------

def _scenario(plan, evaluations, name: str):
    chosen = [e for e in evaluations if e.scenario.name == name]
    if not chosen:
        names = ", ".join(s.name for s in plan.scenarios)
        raise CapplanError(f"no scenario '{name}' (scenarios: {names})", file=plan.file)
    return chosen[0]


def cmd_eval(args) -> int:
    from capplan.rendering import jsonout, view

    whole = args.json and not args.scenario            # the outputs that show the simulation
    analysed = builder.analyse(Path(args.plan)) if whole else pipeline.run(Path(args.plan))
    plan, evaluations, artifacts = analysed.plan, analysed.evaluations, analysed.artifacts
    if args.scenario:
        evaluations = [_scenario(plan, evaluations, args.scenario)]
        artifacts = pipeline.Artifacts(evaluations)          # the analyses of that scenario alone
    shown = view.build(plan, evaluations, artifacts)
    if args.json:
        sys.stdout.write(jsonout.dumps(jsonout.document(shown)))
        return EXIT_OK
    for s in shown.scenarios:
        print(f"[{s.name}] {s.title}")
        for k in s.scalars():
            print(f"  {k.label:<30} {k.text}")
        for key, results in s.rows().items():
            print(f"  {key}")
            for k in results:
                print(f"    {k.label:<28} {k.text}")
    return EXIT_OK


def cmd_explain(args) -> int:
    """A plan that loads but does not evaluate is still explained: what the quantity rests
    on as the plan gives it, then the error (exit 1)."""
    from capplan.language.model import standard_model
    from capplan.review import explain, unevaluated

    model = standard_model()
    plan = pipeline.load_plan(Path(args.plan), model)
    try:
        plan, evaluations = pipeline.evaluate_plan(Path(args.plan), model, loaded=plan)
    except CapplanError as err:
        sys.stdout.write(unevaluated.render(plan, model, args.quantity, args.scenario, err, args.format))
        return EXIT_PLAN
    e = _scenario(plan, evaluations, args.scenario)
    sys.stdout.write(explain.render(e, args.quantity, args.format, nominal=evaluations[0], depth=args.depth))
    return EXIT_OK


def cmd_seek(args) -> int:
    from capplan.review import seek

    plan, evaluations = pipeline.evaluate_plan(Path(args.plan))
    e = _scenario(plan, evaluations, args.scenario)
    if args.target:
        text = seek.goal(evaluations, e.scenario.name, args.input, args.range, args.target, args.format)
    else:
        text = seek.report(evaluations, e.scenario.name, args.input, args.range, args.format)
    sys.stdout.write(text)
    return EXIT_OK


# -- diff ----------------------------------------------------------------------------------

def cmd_diff(args) -> int:
    from capplan.rendering import jsonout
    from capplan.review import diff

    if args.base:
        pairs = diff.pairs_from_git(args.base, args.paths)
    elif len(args.paths) == 2:
        pairs = diff.pairs_from_paths(Path(args.paths[0]), Path(args.paths[1]))
    else:
        raise UsageError("give two plans (capplan diff OLD.yaml NEW.yaml) or a git revision "
                         "(capplan diff --base origin/main [PLAN...])")
    doc = diff.compare(pairs, base=args.base)
    text = jsonout.dumps(doc) if args.format == "json" else diff.markdown(doc)
    if args.output:
        builder.write_file(Path(args.output), text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return EXIT_OK


# -- schema --------------------------------------------------------------------------------

def _positive(text: str) -> int:
    value = _days(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def cmd_simulate(args) -> int:
    from capplan.analysis import simulation as simulating
    from capplan.engine import montecarlo
    from capplan.rendering import jsonout, record, simulation
    from capplan.rendering.keyresults import key_results

    plan, evaluations = pipeline.evaluate_plan(Path(args.plan))
    e = _scenario(plan, evaluations, args.scenario)
    found = simulating.run(e, evaluations[0].values, samples=args.samples or montecarlo.DEFAULT_SAMPLES,
                           seed=montecarlo.DEFAULT_SEED if args.seed is None else args.seed)
    shown = simulation.shown_simulation(found, key_results(e))
    if args.format == "json":
        sys.stdout.write(jsonout.dumps(shown.as_json()))
    elif args.format == "markdown":
        sys.stdout.write(record.simulation_markdown(shown))
    else:
        sys.stdout.write(simulation.text(shown))
    return EXIT_OK


def cmd_schema(args) -> int:
    from capplan.review import schema

    text = schema.text()
    if args.check:
        target = Path(args.out) if args.out else schema.SHIPPED
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            state = "is missing" if current is None else "is out of date"
            print(f"{target} {state}: run `capplan schema --out {target}`", file=sys.stderr)
            return EXIT_PLAN
        print(f"{target} is current")
        return EXIT_OK
    if args.out:
        target = Path(args.out)
        changed = builder.write_file(target, text.encode("utf-8"))
        print(f"{target}: {'written' if changed else 'unchanged'}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


# -- init, catalog ---------------------------------------------------------------------

def cmd_init(args) -> int:
    from capplan import scaffold

    written = scaffold.init(Path(args.folder), gpu=args.gpu, model=args.model, tp=args.tp, peak=args.peak,
                            name=args.name, today=_today().isoformat())
    plan = written.plan
    print(f"wrote {plan}; it builds. Next: replace each TODO in it, then `capplan build` and `capplan check`")
    if written.gitattributes != "current":
        print(f"{written.gitattributes} {Path(args.folder) / '.gitattributes'}: GitHub folds out/ in pull "
              "requests and treats the workbook as binary")
    return EXIT_OK


def cmd_catalog(args) -> int:
    from capplan.rendering import catalogtable, jsonout

    kind = catalogtable.KINDS[args.kind]
    rows = catalogtable.entries(kind, args.query)
    if args.json:
        sys.stdout.write(jsonout.dumps({"kind": kind, "query": args.query, "entries": rows}))
    else:
        sys.stdout.write(catalogtable.text(kind, rows))
    return EXIT_OK


def cmd_estimate(args) -> int:
    from capplan import estimate

    plan = pipeline.load_plan(Path(args.plan))
    written, skipped = estimate.run(plan, args.tool, configs=estimate.chosen(plan, args.gpu, args.tp),
                           load=estimate.workload(plan, args.isl, args.osl), backend=args.backend,
                           out_dir=Path(args.out) if args.out else Path(args.plan).parent / "estimates",
                           python=args.tool_python, tool_model=args.tool_model)
    for path in written:
        print(f"wrote {path}; import it under {estimate.import_key(plan)}")
    for reason in skipped:
        print(f"skipped: {reason}")
    return EXIT_OK


def cmd_validate(args) -> int:
    from capplan import validate
    from capplan.rendering import jsonout

    found = validate.run(Path(args.plan), [Path(f) for f in args.files], args.fit)
    sys.stdout.write(jsonout.dumps(validate.as_json(found)) if args.format == "json" else validate.text(found))
    return EXIT_OK


def cmd_pools(args) -> int:
    from capplan import pools
    from capplan.rendering import jsonout

    found = pools.run(Path(args.plan), [Path(f) for f in args.files],
                      {"prefill_replicas": args.prefill_replicas, "decode_replicas": args.decode_replicas})
    sys.stdout.write(jsonout.dumps(pools.as_json(found)) if args.format == "json" else pools.text(found))
    return EXIT_OK


def command() -> NoReturn:
    """The ``capplan`` command: :func:`main`, then exit. What the command leaves is the operating
    system's to free: the interpreter's last collection would otherwise walk every object a
    build kept (a thousand scenarios' evaluations, caches and texts: 0.3–0.6 s) to free them
    a moment before the process ends."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    command()
