"""Which files a plan's ``import:`` patterns name: files inside its repository, no others.

A plan may come from an untrusted pull request, and its record lists every
imported file with its SHA-256 and quotes values read from it. So a pattern
must not reach a file outside the repository the plan lives in: not by an
absolute path, not by ``..`` that climbs above the repository's root, not
through a symlink (to a file or to a folder) that resolves outside it, and not
by a ``**`` walk of whatever lies below. Each is refused with a message, never
silently skipped.

The root is the nearest folder at or above the plan's folder that holds a
``.git`` entry (a folder, or the file of a git worktree); in no repository it
is the plan's own folder. It is found by looking at names: nothing from the
repository is run.

Patterns are expanded one component at a time, ``*``, ``?`` and ``[...]`` as in
:mod:`glob` (a wildcard does not match a name starting with ``.`` unless the
pattern does), and every folder is checked to lie inside the root *before* it
is listed, so a link out of the repository is refused before anything behind
it is read. ``..`` is resolved by the text of the pattern, not by the file
system. Matches are POSIX paths relative to the plan folder.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from pathlib import Path, PurePosixPath, PureWindowsPath

from capplan import bounded
from capplan.errors import CapplanError
from capplan.loading.sweeps.fields import show

WILDCARDS = "*?["


class PatternError(CapplanError):
    """A pattern that is refused or matches nothing; ``index`` is its place in the list."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index


class Root:
    """The folder imports must stay inside, and how messages name it."""

    def __init__(self, plan_dir: Path):
        self.plan_dir = Path(os.path.realpath(plan_dir))
        found = bounded.repository(self.plan_dir)
        if found:
            self.path, self.name = found, "the plan's repository"
        else:
            self.path, self.name = self.plan_dir, "the plan's folder (it is in no git repository)"


def expand(root: Root, patterns: list) -> list[str]:
    """The files the patterns name, de-duplicated and sorted by their POSIX path."""
    found: set[str] = set()
    for index, pattern in enumerate(patterns):
        if isinstance(pattern, str):
            bounded.saw_pattern(root.plan_dir, pattern)
        try:
            found.update(_expand_one(root, pattern))
        except CapplanError as error:
            raise PatternError(error.message, index) from None
    return sorted(found)


def _expand_one(root: Root, pattern) -> list[str]:
    if not isinstance(pattern, str) or not pattern.strip():
        raise CapplanError(f"a sweep file pattern must be a non-empty string, got {show(pattern)}")
    _refuse_escapes(root, pattern)
    parts = PurePosixPath(posixpath.normpath(pattern)).parts
    climbs = parts.count("..")            # after normpath, every '..' leads the path
    start = root.plan_dir.parents[climbs - 1] if climbs else root.plan_dir
    candidates = [(start, "../" * climbs)]
    for i, part in enumerate(parts[climbs:]):
        last = i == len(parts) - climbs - 1
        following = []
        for folder, rel in candidates:
            _check_inside(root, folder, rel.rstrip("/") or ".")
            for name in _names(folder, part):
                path = folder / name
                if last and path.is_file():
                    following.append((path, rel + name))
                elif last and path.exists() and not path.is_dir():
                    raise CapplanError(f"{rel + name} is not a regular file (a FIFO, device or socket); "
                                       "capplan imports only regular files")
                elif not last and path.is_dir():
                    following.append((path, rel + name + "/"))
        candidates = following
    for path, rel in candidates:
        _check_inside(root, path, rel)
    matches = [rel for _, rel in candidates]
    if not matches:
        where = f"(relative to the plan folder, inside {root.name})"
        if any(ch in pattern for ch in WILDCARDS):
            raise CapplanError(f"sweep pattern {pattern!r} matches no file {where}")
        raise CapplanError(f"sweep file {pattern!r} does not exist {where}")
    kept = [rel for rel in matches if not rel.endswith(".pytorch.json")]
    if not kept:
        raise CapplanError(f"sweep pattern {pattern!r} matches only vLLM PyTorch-benchmark "
                           "sidecar files (*.pytorch.json), which are skipped; point it at "
                           "the --save-result JSON files")
    return kept


def _refuse_escapes(root: Root, pattern: str) -> None:
    """Refuse what the text of a pattern alone shows to leave the root."""
    why = f"a plan imports only files inside {root.name}"
    if "\0" in pattern:
        raise CapplanError(f"sweep pattern {pattern!r} holds a NUL character")
    if PurePosixPath(pattern).is_absolute() or PureWindowsPath(pattern).anchor or pattern.startswith("~"):
        raise CapplanError(f"{pattern!r} is an absolute path: name sweep files relative to the "
                           f"plan's folder; {why}")
    if any("**" in part for part in PurePosixPath(pattern).parts):
        raise CapplanError(f"{pattern!r} uses '**', a walk of every folder below: name the "
                           "folders (e.g. sweeps/*/qps_*.json) so that the files read are "
                           "the ones the plan names")
    inside = posixpath.normpath(posixpath.join(root.plan_dir.relative_to(root.path).as_posix(), pattern))
    if inside == ".." or inside.startswith("../"):
        raise CapplanError(f"{pattern!r} climbs with '..' above {root.name}; {why}")


def _names(folder: Path, part: str) -> list[str]:
    """Entries of ``folder`` one pattern component matches (glob's rules, sorted)."""
    if not any(ch in part for ch in WILDCARDS):
        return [part]
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    return sorted(name for name in entries if fnmatch.fnmatchcase(name, part)
                  and (part.startswith(".") or not name.startswith(".")))


def _check_inside(root: Root, path: Path, rel: str) -> None:
    leaving = bounded.leaving(path, root.path)
    if leaving:
        raise CapplanError(f"{rel} is {leaving} outside {root.name}; a plan imports only "
                           "files inside it, so capplan does not follow the link")
