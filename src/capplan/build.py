"""Compile plans into ``out/``: unchanged plans skipped, each plan all or nothing.

A plan compiles to a set of files held in memory (record, JSON, workbook).
They are written all or nothing (:func:`write`): every changed file goes to
a temporary file beside its target first, and only when all of them are on
disk are they renamed into place. So a plan that fails to evaluate, a full
disk or a write error on the second of three files leaves every output of
that plan as it was, and no half file behind.

``out/manifest.json`` (see :mod:`capplan.manifest`) records what each plan
was built from; :func:`build` skips a plan whose inputs and outputs are as
recorded, and :func:`inspect` lets ``check`` trust such a plan without
evaluating it.

The heavy stages (sympy, pint, openpyxl, jinja2) are imported inside the
functions that need them, so an unchanged build or check never loads them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capplan import manifest
from capplan.ahead import Ahead, free_cpus
from capplan.errors import CapplanError

if TYPE_CHECKING:
    from capplan.engine.evaluate import Evaluation
    from capplan.engine.model import Model
    from capplan.loading.plan import Plan

_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass
class Compiled:
    plan: Plan
    evaluations: list[Evaluation]    # nominal first
    files: dict[str, bytes]          # file name in out/ -> content


@dataclass
class Built:
    """What :func:`build` did with one plan."""

    file: str                        # the plan as messages name it
    outputs: list[str] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)   # outputs of the last build this one no longer makes
    skipped: bool = False            # inputs and outputs as recorded: not evaluated
    error: CapplanError | None = None


@dataclass
class Inspected:
    """What ``check`` needs of one plan, evaluated or read from the manifest."""

    file: str
    problems: list[str] = field(default_factory=list)
    findings: dict | None = None     # see capplan.review.check.findings
    note: str | None = None          # why the plan was re-evaluated although out/ is current


def plan_paths(given: list[str], plans_dir: Path = Path("plans")) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    if not plans_dir.is_dir():
        raise CapplanError(f"no plans given and no '{plans_dir}/' folder here")
    paths = sorted(plans_dir.glob("*.yaml")) + sorted(plans_dir.glob("*.yml"))
    if not paths:
        raise CapplanError(f"no plans (*.yaml) in '{plans_dir}/'")
    return paths


def load_plan(path: Path, model: Model | None = None) -> Plan:
    """A plan file read against the model, named as the user would name it (relative to here)."""
    from capplan.engine.model import standard_model
    from capplan.loading.plan import load

    path = Path(path)
    _must_be_utf8(path)
    plan = load(path, model or standard_model(), display=display(path))
    for table in plan.nominal.tables.values():
        for imported in table.imported:
            _must_be_utf8(Path(plan.file).parent / imported.path)
    return plan


def evaluate_plan(path: Path, model: Model | None = None, loaded: Plan | None = None) -> tuple[Plan, list[Evaluation]]:
    """``(plan, evaluations)``: every scenario of the plan, nominal first (``loaded``: the
    plan already read from ``path`` with the standard model)."""
    from capplan.engine.evaluate import evaluate_all
    from capplan.engine.model import standard_model

    model = model or standard_model()
    plan = loaded or load_plan(path, model)
    return plan, evaluate_all(plan, model)


def compile_plan(path: Path, model: Model | None = None, ahead: Ahead | None = None,
                 loaded: Plan | None = None) -> Compiled:
    """A plan's outputs in memory. ``ahead`` may hold its simulation, computed by
    :func:`simulation_of` in a child process while this one renders; it is
    collected when an output first needs it, so the charts and the parts of the
    workbook before its Simulation sheet are made meanwhile."""
    from capplan.rendering import jsonout, record, simulation, view
    from capplan.rendering.workbook import render_workbook

    plan, evaluations = evaluate_plan(path, model, loaded)
    if f"{plan.name}.json" == manifest.NAME:
        raise CapplanError(f"a plan cannot be named '{plan.name}': out/{manifest.NAME} is the build's "
                           "record of its inputs; rename the plan file", file=plan.file)
    shown = view.build(plan, evaluations, (lambda: ahead.take(Path(path))) if ahead else None)
    charts = {name: chart.encode("utf-8") for name, chart in shown.charts().items()}   # no simulation in these:
    workbook = render_workbook(plan, evaluations, evaluations[0].model, shown)          # made first
    files = {
        f"{plan.name}.md": record.render(shown).encode("utf-8"),
        f"{plan.name}.json": jsonout.dumps(jsonout.document(shown)).encode("utf-8"),
        f"{plan.name}.xlsx": workbook,
        **charts,
        **simulation.files(shown),
    }
    return Compiled(plan, evaluations, files)


def simulation_of(plan: Plan):
    """The plan's simulation as its outputs show it (what ``compile_plan`` would compute)."""
    from capplan.engine.evaluate import evaluate_all
    from capplan.engine.model import standard_model
    from capplan.rendering import simulation, view

    return simulation.of_plan(view.build(plan, evaluate_all(plan, standard_model())))


@dataclass
class _Read:
    digest: str | None      # SHA-256 of the plan file, taken before it was read
    plan: Plan | None       # None: it does not load (its build reports why)


def _read_all(paths: list[Path]) -> dict[Path, _Read]:
    """Every plan to build, read once. The file's hash is taken first, so that an edit
    while the build runs reads as a change to the next build, never as none."""
    read = {}
    for path in paths:
        digest = manifest.file_digest(path)
        try:
            read[Path(path)] = _Read(digest, load_plan(path))
        except CapplanError:
            read[Path(path)] = _Read(digest, None)
    return read


def compile_each(paths: list[Path]) -> Iterator[tuple[Path, _Read, Compiled | CapplanError]]:
    """``(path, what was read, its outputs or its error)`` for each plan, in the order
    compiled: every plan is read once first, the simulations of those that have one
    start in child processes (:mod:`capplan.ahead`), and the plans without one are
    compiled first, so that the simulations run while plans are rendered. Closing
    the iterator early ends the children."""
    read = _read_all(paths)
    simulated = []
    if read and free_cpus():
        from capplan.engine.montecarlo import uncertain_in
        simulated = [p for p, r in read.items() if r.plan and uncertain_in(r.plan)]
    last = set(simulated)
    with Ahead(simulated, lambda p: simulation_of(read[p].plan)) as ahead:
        for path in sorted(read, key=lambda p: p in last):
            try:
                yield path, read[path], compile_plan(path, ahead=ahead, loaded=read[path].plan)
            except CapplanError as err:
                yield path, read[path], err


# -- build --------------------------------------------------------------------------------

def build(paths: list[Path], out_dir: Path) -> list[Built]:
    """Build each plan into out_dir, skipping those whose record still holds;
    a plan that fails is reported in its :class:`Built` and left as it was.
    The results keep the order given, whatever order :func:`compile_each` took."""
    recorded, _ = manifest.read(out_dir)
    paths = list(dict.fromkeys(Path(path) for path in paths))       # a plan named twice is built once
    results = {path: Built(display(path)) for path in paths}
    stale = []
    for path in paths:
        result, entry = results[path], recorded.get(path.stem)
        if entry and not manifest.changes(entry, result.file) \
                and not manifest.output_problems(entry["outputs"], out_dir):
            result.skipped, result.outputs = True, sorted(entry["outputs"])
        else:
            stale.append(path)
    try:
        for path, read, compiled in compile_each(stale):
            result = results[path]
            if isinstance(compiled, CapplanError):
                result.error = compiled
                continue
            try:
                entry = _record(read, compiled)
                result.outputs = sorted(compiled.files)
                result.removed = _remove_stale(out_dir, recorded.get(compiled.plan.name), compiled.files)
                result.changed = write(out_dir, compiled.files)
            except CapplanError as err:
                result.error = err
                continue
            recorded[compiled.plan.name] = entry
    finally:
        if any(not r.skipped and not r.error for r in results.values()):
            write(out_dir, {manifest.NAME: manifest.dumps(recorded)})
    return list(results.values())


def _record(read: _Read, compiled: Compiled) -> dict:
    """A compiled plan's manifest entry, from the bytes it was read from."""
    from capplan.review import check

    plan = compiled.plan
    folder = Path(plan.file).parent
    patterns, imported = [], {}
    for name, spec in ((plan.doc.data or {}).get("tables") or {}).items():
        if isinstance(spec, dict) and "import" in spec:
            patterns += [spec["import"]] if isinstance(spec["import"], str) else list(spec["import"])
            for f in getattr(plan.nominal.tables.get(name), "imported", ()):
                imported[(folder / f.path).as_posix()] = f.sha256
    return manifest.record(plan.file, read.digest, patterns, imported, compiled.files,
                           check.findings(compiled.evaluations))


# -- check --------------------------------------------------------------------------------

def inspect(paths: list[Path], out_dir: Path, recorded: dict[str, dict]) -> list[Inspected]:
    """Per plan, in the order given: whether out_dir holds what a build of it makes, and its findings.

    A plan whose inputs, model, templates and toolchain are as the manifest
    recorded is not evaluated: its outputs are compared with the recorded
    hashes and its findings read back. Any other plan is compiled (as a build
    would: :func:`compile_each`) and its outputs compared byte for byte, each
    problem saying what changed.
    """
    from capplan.review import check

    paths = [Path(path) for path in paths]
    seen: dict[Path, Inspected] = {}
    why: dict[Path, str] = {}
    for path in paths:
        file, entry = display(path), recorded.get(path.stem)
        reasons = manifest.changes(entry, file) if entry else [f"out/{manifest.NAME} has no record of it"]
        if reasons:
            why[path] = "; ".join(reasons)
        else:
            problems = manifest.output_problems(entry["outputs"], out_dir)
            seen[path] = Inspected(file, [f"{p}: run `capplan build {file}`" for p in problems], entry["findings"])
    for path, _, compiled in compile_each(list(why)):
        file, reason = display(path), why[path]
        if isinstance(compiled, CapplanError):
            seen[path] = Inspected(file, [str(compiled)])
            continue
        digests = {name: manifest.sha256(content) for name, content in compiled.files.items()}
        problems = [f"{p}: run `capplan build {file}` (since the last build: {reason})"
                    for p in manifest.output_problems(digests, out_dir)]
        note = None if problems else f"{file}: re-evaluated, outputs current ({reason}); `capplan build` updates the record"
        seen[path] = Inspected(file, problems, check.findings(compiled.evaluations), note)
    return [seen[path] for path in paths]


# -- writing ------------------------------------------------------------------------------

def write(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    """Write a set of files all or nothing; return the paths whose bytes changed.

    Each changed file is written in full to a temporary file beside its
    target; only when every one is on disk are they renamed into place (a
    rename within one folder is atomic and needs no space). A failure while
    writing removes the temporaries and leaves every target as it was; it is
    a :class:`CapplanError` that names the file and the reason.
    """
    _ensure_folder(out_dir)
    staged: list[tuple[Path, str]] = []
    target, renaming = out_dir, False
    try:
        for name, content in sorted(files.items()):
            target = out_dir / name
            if target.is_dir():
                raise CapplanError(f"cannot write {target}: it is a folder")
            if manifest.file_digest(target) == manifest.sha256(content):
                continue
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
            staged.append((target, tmp))
            _write_all(fd, content)
            os.chmod(tmp, 0o666 & ~_UMASK)       # mkstemp makes 0600; outputs are ordinary files
        renaming = True
        for target, tmp in staged:
            os.replace(tmp, target)
    except BaseException as err:
        for _, tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        if not isinstance(err, OSError):
            raise
        after = ("; files renamed before it are already replaced" if renaming
                 else "; the previous files are untouched")
        raise CapplanError(f"cannot write {target}: {err.strerror or err}{after}") from None
    return [target for target, _ in staged]


def _remove_stale(out_dir: Path, entry: dict | None, files: dict[str, bytes]) -> list[Path]:
    """Remove the outputs the plan's last build recorded that this build no
    longer makes (a chart a plan no longer has), so out/ holds what the
    manifest lists and no stale file a reader could take for current. Done
    before the new files are written, so a refusal leaves out/ as it was;
    only plain file names inside out_dir are touched."""
    removed = []
    for name in sorted((entry or {}).get("outputs", {})):
        path = out_dir / name
        if name in files or Path(name).name != name or name == manifest.NAME or not path.is_file():
            continue
        try:
            path.unlink()
        except OSError as err:
            raise CapplanError(f"cannot remove {path}, an output the plan no longer makes: "
                               f"{err.strerror or err}") from None
        removed.append(path)
    return removed


def _ensure_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise CapplanError(f"{folder} is a file, not a folder; give a folder for the outputs")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CapplanError(f"cannot create the folder {folder}: {err.strerror or err}") from None


def _write_all(fd: int, content: bytes) -> None:
    """Write every byte to fd and close it (os.write may write less than asked)."""
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_file(path: Path, content: bytes) -> bool:
    """Write one file (``diff -o``, ``schema --out``) atomically; whether it changed."""
    path = Path(path)
    if path.is_dir():
        raise CapplanError(f"{path} is a folder; give a file name")
    return bool(write(path.parent, {path.name: content}))


def display(path: Path) -> str:
    """A path as messages name it: relative to the working folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _must_be_utf8(path: Path) -> None:
    """Outputs name a plan and its benchmark files by their file names, so they must be text."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise CapplanError("the file name is not valid UTF-8; rename the file (the outputs name "
                           "a plan and its benchmark files by their file names)", file=shown) from None
