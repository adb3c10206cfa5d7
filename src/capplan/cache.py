"""What this machine computed itself: the outputs and findings of each plan it compiled.

``capplan check`` is the CI gate, and the pull request it checks also
supplies ``out/manifest.json``: a manifest that says "unchanged" proves
nothing. So ``check`` trusts only what capplan computed on this machine. Each
time it (or ``build``) compiles a plan, the plan's manifest entry (see
:func:`capplan.manifest.record`: the hashes of every file the plan read,
what its import patterns matched, the model, templates and toolchain, the
outputs' hashes and the findings) is stored here, in the user's cache
folder, where a pull request cannot write. Entries are found by the plan's
name, output name and content hash, and one is used only while
:func:`capplan.manifest.changes` finds nothing changed since: not one of the
files it read (imports, a traffic CSV, a config.json, ...) differs. One plan
text may read other files in another checkout, so a key keeps the last few
such variants (:data:`VARIANTS`), each with the inputs it was computed from;
a copy of a project with the same files finds its entry.

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

FORMAT = 2
VARIANTS = 8                 # entries kept per plan text: the same plan reading other files
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
    hash ``plan_digest``) whose inputs are all as they are now; else None."""
    where = folder()
    if where is None or plan_digest is None:
        return None
    for entry in _variants(where / f"{_key(file, name, plan_digest)}.json"):
        if manifest.well_formed(entry) and entry["inputs"].get(file) == plan_digest \
                and not manifest.changes(entry, file):
            return entry
    return None


def _variants(path: Path) -> list:
    try:
        found = json.loads(bounded.read(path, _ENTRY_BYTES * VARIANTS))
    except (OSError, ValueError):
        return []
    return found if isinstance(found, list) else []


def store(name: str, entry: dict) -> None:
    """Keep a plan's entry, newest first, beside the variants that read other files (written
    whole or not at all); failures are ignored."""
    where = folder()
    if where is None:
        return
    path = where / f"{_key(entry['file'], name, entry['inputs'][entry['file']])}.json"
    kept = [v for v in _variants(path) if isinstance(v, dict) and v.get("inputs") != entry["inputs"]]
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".entry.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump([entry] + kept[:VARIANTS - 1], handle, sort_keys=True)
        os.replace(tmp, path)
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
