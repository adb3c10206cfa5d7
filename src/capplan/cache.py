"""What this machine computed itself: the outputs and findings of each plan it compiled.

``capplan check`` is the CI gate, and the pull request it checks also
supplies ``out/manifest.json``: a manifest that says "unchanged" proves
nothing. So ``check`` trusts only what capplan computed on this machine. Each
time it (or ``build``) compiles a plan, the plan's manifest entry (see
:func:`capplan.manifest.record`: the hashes of every file the plan read,
what its import patterns matched, the model, templates and toolchain, the
outputs' hashes and the findings) is stored here, in the user's cache
folder, where a pull request cannot write. An entry is found by the plan's
name, output name and content hash, and used only while
:func:`capplan.manifest.changes` finds nothing changed since.

The folder is ``$CAPPLAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/capplan``,
else ``~/.cache/capplan``; one inside the repository being checked is not
used (it could be part of the pull request). A missing, unwritable or damaged
cache only means computing again.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from capplan import bounded, manifest

FORMAT = 1
MAX_ENTRIES = 2_000          # oldest removed beyond this: about 20 MB of entries
_ENTRY_BYTES = 4 * 2 ** 20


def folder(repository: Path | None = None) -> Path | None:
    """The cache folder, or None when it lies inside ``repository`` (the pull request's
    tree; default: the repository of the working folder)."""
    given = os.environ.get("CAPPLAN_CACHE_DIR")
    if given:
        base = Path(given)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "capplan"
    base = base / f"plans-{FORMAT}"
    repository = repository or bounded.repository(Path.cwd()) or Path(os.path.realpath(Path.cwd()))
    if bounded.inside(base, repository):
        return None
    return base


def _key(file: str, name: str, plan_digest: str) -> str:
    return manifest.sha256(json.dumps([FORMAT, file, name, plan_digest]).encode("utf-8", "surrogateescape"))


def lookup(file: str, name: str, plan_digest: str | None) -> dict | None:
    """The entry this machine stored for the plan ``file`` (output name ``name``, content
    hash ``plan_digest``) when nothing it read has changed since; else None."""
    where = folder()
    if where is None or plan_digest is None:
        return None
    try:
        entry = json.loads(bounded.read(where / f"{_key(file, name, plan_digest)}.json", _ENTRY_BYTES))
    except (OSError, ValueError):
        return None
    if not manifest.well_formed(entry) or entry["inputs"].get(file) != plan_digest or manifest.changes(entry, file):
        return None
    return entry


def store(name: str, entry: dict) -> None:
    """Keep a plan's entry (written whole or not at all); failures are ignored."""
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".entry.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entry, handle, sort_keys=True)
        os.replace(tmp, where / f"{_key(entry['file'], name, entry['inputs'][entry['file']])}.json")
        _prune(where)
    except OSError:
        return


def _prune(where: Path) -> None:
    entries = list(where.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda p: p.stat().st_mtime)
    for old in entries[: len(entries) - MAX_ENTRIES]:
        old.unlink(missing_ok=True)
