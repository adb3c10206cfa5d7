"""``capplan check``: out/ holds exactly what the plans make, by this machine's reckoning.

The check runs on the pull request it judges, and the pull request writes
``out/`` and ``out/manifest.json`` as freely as it writes the plans. So
nothing there is believed: each plan's outputs and findings (failed
``expect:``, pending measurements, price dates) come from compiling it
here, or from this machine's cache of such compiles (:mod:`capplan.cache`,
outside the repository), and ``out/`` is held against them:

* every output a plan makes is in ``out/`` byte for byte;
* the manifest's record of each plan names these outputs and findings (an
  older record of its inputs only makes the next build re-evaluate it);
* checking the whole project (no plans named), ``out/`` holds nothing else:
  no file of a deleted plan, no file no plan makes.

Plans the cache does not vouch for are compiled in parallel, one forked
child per spare CPU beside this process (:mod:`capplan.ahead`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from capplan import cache, manifest
from capplan.ahead import Ahead
from capplan import build as builder
from capplan.analysis.pipeline import display, load_plan
from capplan.errors import CapplanError

# Files out/ may hold besides the outputs: the build's record, and git's own settings.
ALLOWED = frozenset({manifest.NAME, ".gitignore", ".gitattributes"})
# The parts of a plan's manifest record that must be what a build here writes: all but the
# versions of the libraries it was built with, which differ from machine to machine while
# the outputs are the same bytes (CI checks with the lowest versions pyproject.toml allows).
COMPARED = ("file", "inputs", "imports", "data", "outputs", "findings")


@dataclass
class Verdict:
    """One plan, checked: what is wrong, and its findings (None when it did not compile)."""

    file: str
    problems: list[str] = field(default_factory=list)
    findings: dict | None = None
    note: str | None = None          # out/ is current, its manifest record older


def verify(paths: list[Path], out_dir: Path, whole: bool) -> tuple[list[Verdict], list[str], list[str]]:
    """Per plan, in the order given, its :class:`Verdict`; the problems of out/ as a whole
    (``whole``: ``paths`` are every plan of the project); and notes: a check of named plans
    names the files of out/ it did not look at."""
    paths = [Path(path) for path in paths]
    recorded, unread = manifest.read(out_dir)
    entries: dict[Path, dict | str] = {}
    for path in paths:
        found = cache.lookup(display(path), path.stem, manifest.file_digest(path))
        if found is not None:
            entries[path] = found
    entries.update(_compile_all([path for path in paths if path not in entries]))
    verdicts = [_verdict(path, entries[path], recorded.get(path.stem), out_dir) for path in paths]
    if not whole:
        return verdicts, [], _not_looked_at(entries, out_dir)
    return verdicts, [f"{unread}: run `capplan build`"] * bool(unread) + _folder_problems(paths, entries, recorded,
                                                                                            out_dir), []


def _not_looked_at(entries: dict[Path, dict | str], out_dir: Path) -> list[str]:
    """The files of out/ a check of named plans leaves alone: other plans' outputs, or files no
    plan makes; only a check of the whole project can tell which (the manifest is no witness)."""
    made = set(ALLOWED).union(*(entry["outputs"] for entry in entries.values() if isinstance(entry, dict)))
    mine = tuple(f"{path.stem}." for path in entries)
    others = [name for name in _listing(out_dir) if name not in made and not name.startswith(mine)]
    if not others:
        return []
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    return [f"checked the named plans' outputs only: {out_dir}/ also holds {len(others)} other file(s) ({shown}), "
            f"other plans' outputs or files no plan makes; `capplan check` with no plans named checks all of "
            f"{out_dir}/"]


def _listing(out_dir: Path) -> list[str]:
    try:
        return sorted(os.listdir(out_dir))
    except FileNotFoundError:
        return []


def _verdict(path: Path, entry: dict | str, recorded: dict | None, out_dir: Path) -> Verdict:
    file = display(path)
    if isinstance(entry, str):
        return Verdict(file, [entry])
    stale = manifest.output_problems(entry["outputs"], out_dir)
    since = manifest.changes(recorded, file) if recorded else [f"{out_dir / manifest.NAME} has no record of it"]
    problems, note = [], None
    if stale and since:
        problems.append(f"{file}: {'; '.join(stale)}: run `capplan build {file}` (since the last build: "
                        f"{'; '.join(since)})")
    elif stale:
        problems.append(f"{file}: {'; '.join(stale)}, though {out_dir / manifest.NAME} records them as built "
                        f"from these inputs (edited by hand?): run `capplan build --force {file}`")
    else:
        differ = [key for key in COMPARED if not recorded or recorded.get(key) != entry[key]]
        if differ and since and not recorded:
            problems.append(f"{file}: outputs current, but {out_dir / manifest.NAME} has no record of them: "
                            f"run `capplan build {file}`")
        elif differ and since:
            problems.append(f"{file}: outputs current, but {out_dir / manifest.NAME} records other inputs "
                            f"({'; '.join(since)}): run `capplan build {file}`")
        elif differ:
            problems.append(f"{out_dir / manifest.NAME}: its record of {file} is not what a build of it writes "
                            f"({', '.join(differ)} differ): run `capplan build --force {file}`")
        elif since:
            note = f"{file}: outputs current ({'; '.join(since)}); `capplan build` updates the record"
    problems += entry["findings"]["failed_expectations"]
    return Verdict(file, problems, entry["findings"], note)


def _folder_problems(paths: list[Path], entries: dict[Path, dict | str], recorded: dict[str, dict],
                     out_dir: Path) -> list[str]:
    """Files in out/ that no plan makes, and plans the manifest records that are gone. The
    files of a plan that did not compile are left alone: its own error says enough."""
    made = set(ALLOWED)
    failed = []
    for path in paths:
        entry = entries[path]
        if isinstance(entry, str):
            failed.append(f"{path.stem}.")
        else:
            made.update(entry["outputs"])
    try:
        present = _listing(out_dir)
    except OSError as err:
        return [f"cannot list {out_dir}: {err.strerror or err}"]
    problems = [f"{out_dir / name} is no output of any plan in plans/: remove it (a build removes the "
                f"outputs of a plan it no longer finds)"
                for name in present if name not in made and not name.startswith(tuple(failed))]
    stems = {path.stem for path in paths}
    problems += [f"{out_dir / manifest.NAME} records {entry['file']}, which is no plan any more: run `capplan build`"
                 for name, entry in sorted(recorded.items()) if name not in stems]
    return problems


def _compile_all(paths: list[Path]) -> dict[Path, dict | str]:
    """Each plan's manifest entry as a build here makes it (stored in the cache), or its
    error message. Every plan is read first (the children inherit it, with the imports
    and the model); the children take the plans from the front, those with a simulation
    (the longest) first, this process takes them from the back."""
    if not paths:
        return {}
    from capplan.engine.montecarlo import uncertain_in       # deferred: pint, numpy and sympy, which a
    from capplan.language.model import standard_model        # check of current plans never loads

    standard_model()
    read = builder.read_all(paths)
    order = sorted(paths, key=lambda p: not (read[p].plan and uncertain_in(read[p].plan)))
    out: dict[Path, dict | str] = {}
    with Ahead(order, lambda p: _compile_one(p, read[p])) as ahead:
        for path in reversed(order):
            result = ahead.take(path)
            out[path] = result if result is not None else _compile_one(path, read[path])
    for path, entry in out.items():
        if isinstance(entry, dict):
            cache.store(path.stem, entry)
    return out


def _compile_one(path: Path, read: builder.Read) -> dict | str:
    """A plan's manifest entry, from the bytes it was read from, or the message of its error."""
    try:
        if read.plan is None:
            load_plan(path)                       # it did not load: the same error again, to report
        if read.digest is None:                   # it appeared between the hash and the read
            return f"{display(path)}: the plan changed while it was read; run `capplan check` again"
        return builder.record_of(read, builder.compile_plan(path, loaded=read.plan))
    except CapplanError as err:
        return str(err)
