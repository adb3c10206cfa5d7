"""Compile plans into ``out/``: unchanged plans skipped, each plan all or nothing.

A plan compiles to a set of files held in memory (record, JSON, workbook).
They are written all or nothing (:func:`write`): every changed file goes to
a temporary file beside its target first, and only when all of them are on
disk are they renamed into place. So a plan that fails to evaluate, a full
disk or a write error on the second of three files leaves every output of
that plan as it was, and no half file behind.

``out/manifest.json`` (see :mod:`capplan.manifest`) records what each plan
was built from; :func:`build` skips a plan whose outputs are what this
machine's cache (:mod:`capplan.cache`) says a compile of its current inputs
makes, or, with no such entry, what the manifest recorded. Every compile is
stored in the cache, which ``check`` (:mod:`capplan.verify`) trusts where it
trusts no manifest.

Each plan goes through :mod:`capplan.analysis.pipeline` (load, evaluate,
analyse); this module turns what it returns into files and the manifest. The
heavy stages (sympy, pint, openpyxl, jinja2) are imported inside the
functions that need them, so an unchanged build or check never loads them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capplan import bounded, cache, manifest
from capplan.ahead import Ahead, Parts, Split, free_cpus
from capplan import collector
from capplan.analysis.pipeline import display, load_plan, run, simulate
from capplan.errors import CapplanError
from capplan.review import check

if TYPE_CHECKING:
    from capplan.analysis.pipeline import Analysed, Artifacts
    from capplan.engine.evaluate import Evaluation
    from capplan.language.model import Model
    from capplan.loading.plan import Plan
    from capplan.rendering.view import PlanView

__all__ = ["Built", "Compiled", "build", "compile_plan", "plan_paths", "write", "write_file"]

# The most one output may hold: a workbook of 999 scenarios is 125 MiB; ``check`` hashes files of
# at most capplan.bounded.MAX_BYTES, 256 MiB.
MAX_OUTPUT_BYTES = 192 * 2 ** 20
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
    skipped: bool = False            # outputs current (cache or manifest): not evaluated
    gone: bool = False               # no plan any more: its recorded outputs removed
    error: CapplanError | None = None


def plan_paths(given: list[str], plans_dir: Path = Path("plans")) -> list[Path]:
    """The plans named (each once), or every plan in ``plans/``; two that would write the
    same outputs (``x.yaml`` and ``x.yml``, or ``a/x.yaml`` and ``b/x.yaml``) are refused."""
    if given:
        paths = list(dict.fromkeys(Path(p) for p in given))
    elif not plans_dir.is_dir():
        raise CapplanError(f"no plans given and no '{plans_dir}/' folder here")
    else:
        paths = sorted(plans_dir.glob("*.yaml")) + sorted(plans_dir.glob("*.yml"))
        if not paths:
            raise CapplanError(f"no plans (*.yaml) in '{plans_dir}/'")
    by_name: dict[str, Path] = {}
    for path in paths:
        other = by_name.setdefault(path.stem, path)
        if other != path and os.path.realpath(other) != os.path.realpath(path):
            raise CapplanError(f"{display(other)} and {display(path)} would both write out/{path.stem}.*; "
                               "rename one of them")
    return list({os.path.realpath(p): p for p in paths}.values())


def compile_plan(path: Path, model: Model | None = None, ahead: Ahead | None = None,
                 loaded: Plan | None = None) -> Compiled:
    """A plan's outputs in memory, on two cores where two are free (:mod:`capplan.ahead`):

    * ``ahead`` may hold the plan's simulation, computed by :func:`simulation_of` in a
      child process while this one loads and evaluates the plan;
    * then, with what both read made once (the simulation collected: a child's child
      could not collect it; the nominal flip points; the candidates' ranking), the
      workbook is made in a child while this process draws the charts, writes the
      record and searches the scenarios' flip points for the JSON; the child, its
      workbook made, searches them too from the last scenario back (:class:`.ahead.Split`).

    A child that does not deliver leaves its work to this process: the same bytes,
    messages and errors either way."""
    from capplan.rendering import view                  # deferred: the renderers (module docstring)

    analysed = run(path, model, loaded, (lambda: ahead.take(Path(path))) if ahead else None)
    plan, evaluations = analysed.plan, analysed.evaluations
    if f"{plan.name}.json" == manifest.NAME:
        raise CapplanError(f"a plan cannot be named '{plan.name}': out/{manifest.NAME} is the build's "
                           "record of its inputs; rename the plan file", file=plan.file)
    shown = view.build(plan, evaluations, analysed.artifacts)
    with collector.deferred():
        files = _outputs(plan, evaluations, shown, analysed.artifacts)
    _refuse_oversized(plan, files)
    return Compiled(plan, evaluations, files)


def _refuse_oversized(plan: Plan, files: dict[str, bytes]) -> None:
    """Every output within :data:`MAX_OUTPUT_BYTES` (below what ``check`` hashes); the loader's
    limits (scenarios, profile intervals) keep the plans it lets through well inside."""
    for name, content in sorted(files.items()):
        if len(content) > MAX_OUTPUT_BYTES:
            raise CapplanError(f"out/{name} would hold {len(content) / 2 ** 20:,.2f} MiB, more than the "
                               f"{MAX_OUTPUT_BYTES / 2 ** 20:,.4g} MiB an output may hold (docs/limits.md): fewer "
                               "scenarios, profile intervals, candidates or sweep rows", file=plan.file)


def _outputs(plan: Plan, evaluations: list[Evaluation], shown: PlanView, artifacts: Artifacts) -> dict[str, bytes]:
    """The files of a compiled plan, by name (see :func:`compile_plan`)."""
    from capplan.rendering import jsonout, record         # deferred: jinja2 and the renderers (module docstring)
    from capplan.rendering.workbook import render_workbook

    shown.holds.nominal                 # what the workbook and the record both read, made once before the fork
    artifacts.candidates
    artifacts.simulation
    names = [e.scenario.name for e in evaluations]
    split = Split(len(names))
    json_document = jsonout.Document(shown)

    def workbook() -> bytes:
        return render_workbook(plan, evaluations, evaluations[0].model, shown)

    def workbook_then_scenarios() -> Iterator:
        """The child's work: the workbook (sent at once), then scenarios' flip searches and JSON text from the back."""
        yield workbook()
        yield {names[j]: json_document.scenario_part(j) for j in split.back()}

    with Ahead([plan.name], lambda _: Parts(workbook_then_scenarios()), width=min(1, free_cpus())) as workbook_ahead:
        charts = {name: chart.encode("utf-8") for name, chart in shown.charts().items()}
        text = record.render(shown).encode("utf-8")
        simulation_charts = {name: chart.encode("utf-8") for name, chart in shown.simulation_charts().items()}
        # the scenarios' flip searches and JSON text, one by one, the child's from the back
        written = {names[i]: json_document.scenario_part(i) for i in split.front()}
        delivered = workbook_ahead.take(plan.name)
    if delivered is None:
        made = workbook()
    else:
        made, theirs = delivered
        written.update(theirs)
    data = json_document.encoded(written)
    return {f"{plan.name}.md": text, f"{plan.name}.json": data, f"{plan.name}.xlsx": made,
            **charts, **simulation_charts}


simulation_of = simulate      # what a child computes ahead for compile_each (a test slows it down)


def analyse(path: Path) -> Analysed:
    """A plan loaded, evaluated and analysed (:func:`run`), its simulation computed in a child
    process while this one evaluates the plan, where a CPU is free (:mod:`capplan.ahead`):
    ``eval --json`` of the main plan spent a fifth of its time beyond the imports simulating."""
    from capplan.engine.montecarlo import uncertain_in    # deferred: numpy, only when a plan is compiled

    plan = load_plan(path)
    wanted = [Path(path)] if free_cpus() and uncertain_in(plan) else []
    with Ahead(wanted, lambda _: simulation_of(plan)) as ahead:
        analysed = run(path, loaded=plan, simulated=lambda: ahead.take(Path(path)))
        analysed.artifacts.simulation           # collected before the block ends the child
    return analysed


@dataclass
class Read:
    digest: str | None      # SHA-256 of the plan file, taken before it was read
    plan: Plan | None       # None: it does not load (its build reports why)


def read_all(paths: list[Path]) -> dict[Path, Read]:
    """Every plan to build, read once. The file's hash is taken first, so that an edit
    while the build runs reads as a change to the next build, never as none."""
    read = {}
    for path in paths:
        digest = manifest.file_digest(path)
        try:
            read[Path(path)] = Read(digest, load_plan(path))
        except CapplanError:
            read[Path(path)] = Read(digest, None)
    return read


def compile_each(paths: list[Path]) -> Iterator[tuple[Path, Read, Compiled | CapplanError]]:
    """``(path, what was read, its outputs or its error)`` for each plan, in the order
    compiled: every plan is read once first, the simulations of those that have one
    start in child processes (:mod:`capplan.ahead`), and the plans without one are
    compiled first, so that the simulations run while plans are rendered. Closing
    the iterator early ends the children."""
    read = read_all(paths)
    simulated = []
    if read and free_cpus():
        from capplan.engine.montecarlo import uncertain_in    # deferred: numpy, only when a plan is compiled
        simulated = [p for p, r in read.items() if r.plan and uncertain_in(r.plan)]
    last = set(simulated)
    with Ahead(simulated, lambda p: simulation_of(read[p].plan)) as ahead:
        for path in sorted(read, key=lambda p: p in last):
            try:
                yield path, read[path], compile_plan(path, ahead=ahead, loaded=read[path].plan)
            except CapplanError as err:
                yield path, read[path], err


# -- build --------------------------------------------------------------------------------

def build(paths: list[Path], out_dir: Path, force: bool = False, whole: bool = False) -> list[Built]:
    """Build each plan into out_dir, skipping those whose outputs are current
    (:func:`current`; never with ``force``); a plan that fails is reported in
    its :class:`Built` and left as it was. ``whole``: the paths are every plan
    of the project, so the outputs of plans the manifest records that are gone
    are removed too. The results keep the order given, whatever order
    :func:`compile_each` took."""
    recorded, _ = manifest.read(out_dir)
    paths = [Path(path) for path in paths]          # each once: plan_paths
    results = {path: Built(display(path)) for path in paths}
    stale, repaired = [], False
    for path in paths:
        result = results[path]
        entry = None if force else current(path, result.file, out_dir, recorded.get(path.stem))
        if entry is None:
            stale.append(path)
            continue
        result.skipped, result.outputs = True, sorted(entry["outputs"])
        if recorded.get(path.stem) != entry:            # the cache vouches for what the manifest does not say
            recorded[path.stem], repaired = entry, True
    gone = _remove_gone(out_dir, recorded, {path.stem for path in paths}) if whole else []
    try:
        with contextlib.closing(compile_each(stale)) as compiled_each:
            for path, read, compiled in compiled_each:
                result = results[path]
                if isinstance(compiled, CapplanError):
                    result.error = compiled
                    continue
                try:
                    entry = record_of(read, compiled)
                    result.outputs = sorted(compiled.files)
                    result.removed = _remove_stale(out_dir, recorded.get(compiled.plan.name), compiled.files)
                    result.changed = write(out_dir, compiled.files)
                except CapplanError as err:
                    result.error = err
                    continue
                recorded[compiled.plan.name] = entry
                cache.store(compiled.plan.name, entry)
    finally:
        if repaired or gone or any(not r.skipped and not r.error for r in results.values()):
            write(out_dir, {manifest.NAME: manifest.dumps(recorded)})
    return list(results.values()) + gone


def current(path: Path, file: str, out_dir: Path, recorded: dict | None) -> dict | None:
    """The entry that says a plan's outputs in out_dir are what a build would write, if one
    does: this machine's cache entry for its current inputs when there is one (it was
    computed here), else the manifest's record (``recorded``) when nothing it names changed.
    The outputs on disk must have the entry's hashes either way."""
    entry = cache.lookup(file, path.stem, manifest.file_digest(path))
    if entry is None and recorded and not manifest.changes(recorded, file):
        entry = recorded
    if entry is None or manifest.output_problems(entry["outputs"], out_dir):
        return None
    return entry


def record_of(read: Read, compiled: Compiled) -> dict:
    """A compiled plan's manifest entry, from the bytes it was read from: every file it read
    (:attr:`~capplan.loading.plan.Plan.reads`) with the hash of the bytes read, and what each
    pattern it expanded matched."""
    plan = compiled.plan
    folder = Path(plan.file).parent
    imported = {os.path.normpath(folder / name): digest for name, digest in plan.reads.items()}
    return manifest.record(plan.file, read.digest, list(plan.patterns), imported, compiled.files,
                           check.findings(compiled.evaluations))


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
            if bounded.holds(target, content):     # read only when its size is theirs
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


def _remove_gone(out_dir: Path, recorded: dict[str, dict], kept: set[str]) -> list[Built]:
    """Remove the outputs of the plans the manifest records that are no plan of the project
    any more, and forget them. Only names a plan of that name writes (``<name>.*``) and no
    kept plan could (``<kept>.*``) are touched: the manifest is as the pull request wrote it."""
    gone = []
    for name in sorted(set(recorded) - kept):
        entry = recorded.pop(name)
        outputs = {o: d for o, d in entry["outputs"].items()
                   if o.startswith(f"{name}.") and not any(o.startswith(f"{k}.") for k in kept)}
        gone.append(Built(entry["file"], gone=True, removed=_remove_stale(out_dir, {"outputs": outputs}, {})))
    return gone


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
