"""Where capplan raises its user-facing error, and which test reaches each place.

Exit 1 means "your plan is wrong", exit 3 "capplan has a bug". A raise of
:class:`CapplanError` that no input can reach is a bug check dressed as a
user error. :func:`sites` lists every ``raise`` in ``src/capplan`` by its
syntax tree; ``tests/data/raise_sites.yaml`` names, for each, a test whose
input reaches it (``test_raise_sites.py`` checks the two agree).

This module is also a pytest plugin that proves the table: with it loaded,
every exception that leaves a raise site during a test is recorded, and the
map (site -> test ids) is written to ``$CAPPLAN_RAISE_TRACE``::

    CAPPLAN_RAISE_TRACE=reach.json PYTHONPATH=tests python -m pytest -p raise_sites

(under xdist each worker writes ``reach.json.gw0``, ``reach.json.gw1`` …; give them all
to ``python tests/raise_sites.py`` to regenerate the table).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from capplan import errors

SRC = Path(__file__).resolve().parents[1] / "src" / "capplan"


@dataclass(frozen=True)
class Site:
    key: str            # 'loading/plan.py:_PlanReader._input: unknown quantity'
    file: Path
    first: int          # lines of the raise statement
    last: int


def sites(src: Path = SRC) -> list[Site]:
    """Every ``raise`` of a CapplanError (or a helper that builds one) under ``src``.

    A raise of a builtin exception (``KeyError``, ``FileNotFoundError``), of an
    argparse error, of :class:`~capplan.errors.InternalError` (exit 3, a bug) or
    of a module's own signal that is no CapplanError (the flip search's
    ``NotClosedForm``, caught where it is raised) is left out: those are not the
    user-facing error type.
    """
    out: list[Site] = []
    for path in sorted(src.rglob("*.py")):
        module = path.relative_to(src).as_posix()
        seen: dict[str, int] = {}
        for scope, node in _raises(ast.parse(path.read_text(encoding="utf-8"))):
            if _foreign(node.exc, module):
                continue
            label = f"{module}:{scope}: {_label(node.exc)}"
            seen[label] = seen.get(label, 0) + 1
            key = label if seen[label] == 1 else f"{label} #{seen[label]}"
            out.append(Site(key, path, node.lineno, node.end_lineno or node.lineno))
    return out


def _raises(tree, scope=""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _raises(node, f"{scope}.{node.name}" if scope else node.name)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            yield scope or "<module>", node
        else:
            yield from _raises(node, scope)


def _foreign(exc, module: str) -> bool:
    """Not the user-facing error: a builtin exception, argparse's, capplan's InternalError,
    or an exception class the raising module defines or imports that is no CapplanError."""
    func = exc.func if isinstance(exc, ast.Call) else exc
    if isinstance(func, ast.Name):
        kind = getattr(builtins, func.id, None) or getattr(errors, func.id, None) or \
            getattr(_namespace(module), func.id, None)
        return isinstance(kind, type) and issubclass(kind, BaseException) and not issubclass(kind, errors.CapplanError)
    return isinstance(func, ast.Attribute) and ast.unparse(func).startswith("argparse.")


def _namespace(module: str):
    """The imported module of a path under src/capplan ('analysis/flips.py' -> capplan.analysis.flips)."""
    name = "capplan." + module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return importlib.import_module(name)


def _label(exc) -> str:
    """The first words of the message, else the helper's name: stable while lines move."""
    for node in ast.walk(exc):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value.strip()) >= 3:
            return " ".join(node.value.split())[:48]
    func = exc.func if isinstance(exc, ast.Call) else exc
    return ast.unparse(func)


# -- the plugin -----------------------------------------------------------------------

_BY_FILE: dict[str, list[Site]] = {}
_REACHED: dict[str, set[str]] = {}
_CURRENT: list[str] = [""]
SKIPPED = "(skipped)"        # the trace's entry of the tests that were skipped, beside the sites


def _local(frame, event, arg):
    if event == "exception":
        for site in _BY_FILE.get(frame.f_code.co_filename, ()):
            if site.first <= frame.f_lineno <= site.last:
                _REACHED.setdefault(site.key, set()).add(_CURRENT[0])
    return _local


def _global(frame, event, arg):
    if frame.f_code.co_filename in _BY_FILE:
        frame.f_trace_lines = False
        return _local
    return None


def pytest_configure(config):
    for site in sites():
        _BY_FILE.setdefault(str(site.file), []).append(site)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _CURRENT[0] = item.nodeid
    sys.settrace(_global)
    threading.settrace(_global)


def pytest_runtest_teardown(item):
    sys.settrace(None)
    threading.settrace(None)


def pytest_runtest_logreport(report):
    if report.skipped:          # e.g. no ../shared/ beside the checkout: its sites are not checked here
        _REACHED.setdefault(SKIPPED, set()).add(report.nodeid)


def pytest_sessionfinish(session):
    target = os.environ.get("CAPPLAN_RAISE_TRACE")
    if target:
        # under xdist each worker traces its share; asked of the session, not of the environment,
        # which a run started inside another xdist worker inherits (its controller would write
        # the empty trace of the tests it did not run over one worker's)
        worker = getattr(session.config, "workerinput", {}).get("workerid")
        if worker:
            target = f"{target}.{worker}"
        Path(target).write_text(json.dumps({k: sorted(v) for k, v in sorted(_REACHED.items())}, indent=1))


# -- regenerating the table ------------------------------------------------------------

TABLE = Path(__file__).resolve().parent / "data" / "raise_sites.yaml"
_PREFERRED = ("tests/test_bad_input.py", "tests/test_hostile_input.py")   # one case, one message: fast and explicit


def table_from(reach: dict[str, list[str]], unshown: dict[str, str]) -> str:
    """The YAML of ``tests/data/raise_sites.yaml`` from a traced run: per site the first
    test that reached it (a bad-input case when one did), else the reason kept from
    the old table (or 'no test reaches it yet')."""
    lines = ["# Every CapplanError raise site of src/capplan (tests/raise_sites.py) and a test whose input",
             "# reaches it. Regenerate after a traced run (see tests/raise_sites.py):",
             "#   PYTHONPATH=tests python tests/raise_sites.py reach.json > tests/data/raise_sites.yaml",
             "reached:"]
    missing = []
    for site in sites():
        tests = sorted(reach.get(site.key, []), key=lambda t: (not t.startswith(_PREFERRED), t))
        if tests:
            lines.append(f"  {json.dumps(site.key, ensure_ascii=False)}: {json.dumps(tests[0], ensure_ascii=False)}")
        else:
            missing.append(site.key)
    lines.append("unshown:              # no test reaches these yet; each says why")
    lines += [f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(unshown.get(k, 'no test reaches it yet'))}"
              for k in missing]
    return "\n".join(lines) + "\n"


def reach_of(traces) -> dict[str, list[str]]:
    """The sites reached, from one trace or one per xdist worker (reach.json.gw0 …)."""
    reach: dict[str, list[str]] = {}
    for name in traces:
        for key, tests in json.loads(Path(name).read_text()).items():
            reach.setdefault(key, []).extend(tests)
    return reach


if __name__ == "__main__":
    import yaml
    old = yaml.safe_load(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {}
    sys.stdout.write(table_from(reach_of(sys.argv[1:]), (old or {}).get("unshown") or {}))
