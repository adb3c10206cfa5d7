"""``out/manifest.json``: what each plan's outputs were built from.

Evaluating a plan costs far more than reading a few files, so, in the manner
of dbt's manifest, a build records per plan a content hash of everything
that shapes its outputs, and the hash of each output it wrote:

* the plan file and the benchmark files it imports, and a hash of what each
  import pattern matches (a new ``qps_64.json`` next to the plan changes it);
* every file of the model (quantities, units, catalog) and of the templates;
* the versions of capplan and of the libraries whose output ends up in the
  bytes (sympy prints formulas, pint converts units, numpy draws the
  simulation, …),
  and a hash of capplan's own code, so a developer's change to a renderer
  is not mistaken for "nothing changed" while the version number stands.

``capplan build`` skips a plan whose inputs and outputs are as recorded.
``capplan check`` never trusts this file, which the pull request it checks
supplies: it compares the outputs and this record with what it computes
itself (see :mod:`capplan.cache`). Every name read from here is confined:
inputs to the plan's repository, outputs to plain names in ``out/``, import
patterns to what an import may be; files are read only when regular and
size-bounded (:mod:`capplan.bounded`). When anything differs,
:func:`changes` says what, in words a reviewer can act on.

This module imports nothing heavy: an unchanged ``build`` or ``check`` never
pays for sympy or pint.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import stat
import sys
import zlib
from functools import cache
from pathlib import Path

from capplan import bounded

NAME = "manifest.json"
FORMAT = 1
MAX_BYTES = 16 * 2 ** 20     # a manifest of a thousand plans is ~5 MB
# Distributions whose behaviour reaches the outputs' bytes (PyPI names).
LIBRARIES = ("jinja2", "numpy", "pint", "PyYAML", "sympy")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str | None:
    """The file's SHA-256, or None when it is no regular file capplan would read
    (gone, a folder, a device or FIFO, larger than :data:`capplan.bounded.MAX_BYTES`)."""
    return bounded.digest(Path(path))


def listing_digest(folder: Path, pattern: str) -> str:
    """A hash of what a glob pattern matches in a folder, names only (a recorded pattern
    that could walk more than an import may is refused by :func:`well_formed` first)."""
    matches = sorted(glob.glob(pattern, root_dir=str(folder)))
    return sha256("\n".join(matches).encode("utf-8", "surrogateescape"))


def _safe_pattern(pattern: str) -> bool:
    """Whether a pattern read from the manifest is one an import may have: relative, no ``~``, no ``**``."""
    return (bool(pattern) and not os.path.isabs(pattern) and not pattern.startswith("~")
            and "**" not in pattern and "\0" not in pattern)


def _root(file: str) -> Path:
    """Where the files a plan reads must lie: its repository, else its folder (as imports)."""
    folder = Path(file).parent
    return bounded.repository(folder) or Path(os.path.realpath(folder))


@cache
def toolchain() -> tuple[tuple[str, str], ...]:
    """capplan's version and code, and the versions of the libraries that shape the bytes."""
    package = Path(__file__).resolve().parent
    code = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        code.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    installed = installed_versions()
    items = {"capplan": installed.get("capplan", "not installed"), "capplan code": code.hexdigest(),
             "zlib": zlib.ZLIB_RUNTIME_VERSION}
    items.update((name.lower(), installed.get(_normal(name), "not installed")) for name in LIBRARIES)
    return tuple(sorted(items.items()))


@cache
def installed_versions() -> dict[str, str]:
    """Distribution name -> version, read from the ``NAME-VERSION.dist-info``
    folder names on sys.path (the first one wins, as for imports).

    ``importlib.metadata`` would say the same but costs about 50 ms to
    import, a sixth of an unchanged ``build``; the folder name is the
    version by the wheel format's own rule.
    """
    found: dict[str, str] = {}
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if dot and kind in ("dist-info", "egg-info") and "-" in stem:
                dist, version = stem.split("-", 1)
                found.setdefault(_normal(dist), version.split("-")[0])
    return found


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


@cache
def data_files() -> tuple[tuple[str, str], ...]:
    """Every file of ``model/`` and ``templates/`` with its hash, named by folder."""
    from capplan.resources import model_dir, templates_dir

    out = {}
    for folder in (model_dir(), templates_dir()):
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            out[f"{folder.name}/{path.relative_to(folder).as_posix()}"] = file_digest(path)
    return tuple(sorted(out.items()))


def record(file: str, plan_digest: str, imports: list[str], imported: dict[str, str],
           outputs: dict[str, bytes], findings: dict) -> dict:
    """One plan's entry.

    ``file`` is the plan as messages name it (relative to the working folder)
    and ``plan_digest`` the hash of the bytes the build read; ``imports`` are
    its import patterns (relative to the plan's folder) and ``imported`` its
    imported files, named like ``file``, with the hashes of the bytes read.
    """
    folder = Path(file).parent
    return {
        "file": file,
        "inputs": {file: plan_digest, **imported},
        "imports": {pattern: listing_digest(folder, pattern) for pattern in sorted(set(imports))},
        "data": dict(data_files()),
        "toolchain": dict(toolchain()),
        "outputs": {name: sha256(content) for name, content in sorted(outputs.items())},
        "findings": findings,
    }


def changes(entry: dict, file: str) -> list[str]:
    """Why this plan's recorded outputs may no longer be what a build makes
    (empty: inputs, model, templates and toolchain are as recorded)."""
    if entry.get("file") != file:
        return [f"out/ holds the outputs of {entry.get('file')}, not of {file}"]
    out = []
    root = _root(file)
    for name, digest in sorted(entry.get("inputs", {}).items()):
        if not bounded.inside(Path(name), root):
            out.append(f"{name} is outside the plan's repository")
            continue
        now = file_digest(Path(name))
        if now != digest:
            out.append(f"{name} {'changed' if now else 'is gone'}")
    for pattern, digest in sorted(entry.get("imports", {}).items()):
        if listing_digest(Path(file).parent, pattern) != digest:
            out.append(f"the import {pattern} of {file} matches other files now")
    out += _compare(entry.get("data", {}), dict(data_files()))
    built, here = entry.get("toolchain", {}), dict(toolchain())
    for name in sorted(set(built) | set(here)):
        if built.get(name) == here.get(name):
            continue
        if name == "capplan code":
            out.append("capplan's code changed")
        else:
            out.append(f"{name} {here.get(name, 'not installed')} here, out/ was built with "
                       f"{built.get(name, 'no ' + name)}")
    return out


def _compare(recorded: dict, current: dict) -> list[str]:
    out = []
    for name in sorted(set(recorded) | set(current)):
        if name not in current:
            out.append(f"{name} is gone")
        elif name not in recorded:
            out.append(f"{name} is new")
        elif recorded[name] != current[name]:
            out.append(f"{name} changed")
    return out


def output_problems(outputs: dict[str, str], out_dir: Path) -> list[str]:
    """Outputs on disk that are missing or differ from these hashes (by file name)."""
    out = []
    for name, digest in sorted(outputs.items()):
        target = out_dir / name
        if not plain_name(name):
            out.append(f"{out_dir / NAME} names {name!r}, which is no file name in {out_dir}")
            continue
        now = file_digest(target)
        if now is None:
            out.append(f"{target} {_unhashable(target)}")
        elif now != digest:
            out.append(f"{target} is out of date")
    return out


def _unhashable(path: Path) -> str:
    """Why a file has no hash, in words: it is missing, no regular file, or too large to read."""
    try:
        info = os.stat(path)
    except OSError:
        return "is missing"
    if not stat.S_ISREG(info.st_mode):
        return "is no regular file (a folder, device or FIFO)"
    if info.st_size > bounded.MAX_BYTES:
        return (f"holds {info.st_size / 2 ** 20:,.0f} MiB, more than capplan reads "
                f"({bounded.MAX_BYTES // 2 ** 20} MiB): it is no output of a build")
    return "cannot be read"


def plain_name(name: str) -> bool:
    """Whether ``name`` is a file name in a folder (no folder part, not ``.``/``..``)."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def read(out_dir: Path) -> tuple[dict[str, dict], str | None]:
    """The recorded plans by output name, and a note when the manifest is
    missing or unreadable (then every plan counts as changed)."""
    path = out_dir / NAME
    try:
        doc = json.loads(bounded.read(path, MAX_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return {}, f"{path} is missing"
    except (OSError, ValueError) as err:
        return {}, f"{path} is unreadable ({err}); it is rewritten by the next build"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("plans"), dict):
        return {}, f"{path} is not a manifest of format {FORMAT}; it is rewritten by the next build"
    return {name: entry for name, entry in doc["plans"].items() if well_formed(entry)}, None


def well_formed(entry) -> bool:
    """Whether an entry has the shape :func:`record` writes; a hand-edited one
    that does not is ignored (its plan counts as changed), never a crash."""
    def mapping(value, of=str) -> bool:
        return isinstance(value, dict) and all(isinstance(v, of) for v in value.values())

    def texts(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    def price(p) -> bool:
        return isinstance(p, dict) and isinstance(p.get("where"), str) and isinstance(p.get("key"), str) and (
            texts(p.get("undated")) or (texts(p.get("free")) and texts(p.get("prices")))
            or (isinstance(p.get("as_of"), str) and texts(p.get("rows")) and texts(p.get("prices"))))

    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        return False
    found = entry.get("findings")
    return (all(mapping(entry.get(k)) for k in ("inputs", "imports", "data", "toolchain", "outputs"))
            and all(plain_name(name) for name in entry["outputs"])
            and all(_safe_pattern(pattern) for pattern in entry["imports"])
            and isinstance(found, dict)
            and all(texts(found.get(k)) for k in ("failed_expectations", "pending", "placeholders", "decision", "routing"))
            and isinstance(found.get("prices"), list) and all(price(p) for p in found["prices"]))


def dumps(plans: dict[str, dict]) -> bytes:
    """Deterministic: sorted keys, fixed indentation, one trailing newline."""
    doc = {"format": FORMAT,
           "about": "written by `capplan build`: what each plan's outputs were built from "
                    "(SHA-256 of inputs and outputs, tool versions); `capplan build` skips an unchanged plan, "
                    "`capplan check` trusts none of it",
           "plans": plans}
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
