"""Reading a file whose name came from somewhere a pull request can write.

``out/manifest.json``, a cache entry or a plan names files that capplan
then hashes. A name can point anywhere: ``/dev/zero`` (endless), a FIFO
(blocks for ever), a folder, ``/etc/passwd`` (outside the repository). So
such a file is opened without blocking, must be a regular file by the
handle's own ``fstat`` (a swap between a check and the open changes
nothing), is refused above a size limit before anything is read, and is
hashed in pieces, so memory stays flat whatever its size.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 256 * 2 ** 20        # an output or input capplan hashes; the largest workbook is ~100 KB
_CHUNK = 2 ** 20
_WITNESS: ContextVar[Witness | None] = ContextVar("capplan_witness", default=None)


@dataclass
class Witness:
    """What was read while :func:`witnessed` was open."""

    files: dict[str, str] = field(default_factory=dict)          # resolved path -> SHA-256 of the bytes read
    patterns: set[tuple[str, str]] = field(default_factory=set)  # (resolved folder, pattern) expanded there


class NotRegular(OSError):
    """The path exists but is no regular file (a device, a FIFO, a folder)."""


class TooLarge(OSError):
    """A regular file larger than the limit (``size``: the bytes seen)."""

    def __init__(self, message: str, size: int):
        super().__init__(message)
        self.size = size


def _open(path: Path, limit: int) -> tuple[int, int]:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{path} is not a regular file (a device, a FIFO or a folder)")
        if info.st_size > limit:
            raise TooLarge(f"{path} is larger than {limit // 2 ** 20} MiB", info.st_size)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def read(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:class:`NotRegular` or
    :class:`TooLarge` otherwise)."""
    fd, _ = _open(path, limit)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:                                  # it grew after the fstat
        raise TooLarge(f"{path} is larger than {limit // 2 ** 20} MiB", len(data))
    seen = _WITNESS.get()
    if seen is not None:
        seen.files[os.path.realpath(path)] = hashlib.sha256(data).hexdigest()
    return data


def saw_pattern(folder: Path, pattern: str) -> None:
    """Note that ``pattern`` was expanded in ``folder`` (what it matches is an input too)."""
    seen = _WITNESS.get()
    if seen is not None:
        seen.patterns.add((os.path.realpath(folder), pattern))


@contextmanager
def witnessed() -> Iterator[Witness]:
    """The files :func:`read` returns while inside, by resolved path, each with the SHA-256 of
    the bytes it returned (not of the file now: an edit during the read is a change next time),
    and the patterns :func:`saw_pattern` was told of."""
    seen = Witness()
    token = _WITNESS.set(seen)
    try:
        yield seen
    finally:
        _WITNESS.reset(token)


def digest(path: Path, limit: int = MAX_BYTES) -> str | None:
    """The SHA-256 of a regular file of at most ``limit`` bytes; None when it is gone,
    unreadable, or no such file."""
    try:
        fd, _ = _open(path, limit)
    except OSError:
        return None
    hasher, seen = hashlib.sha256(), 0
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            seen += len(chunk)
            if seen > limit:
                return None
            hasher.update(chunk)
    return hasher.hexdigest()


def holds(path: Path, content: bytes) -> bool:
    """Whether ``path`` is a regular file of exactly these bytes, compared a chunk at a time
    (several times faster than hashing both, and no more read than ``content`` is long).
    Each chunk is compared with a slice of ``content`` as bytes: a memoryview compares
    element by element, ten times slower than the copy and memcmp of a slice."""
    try:
        fd, size = _open(path, len(content))
    except OSError:
        return False
    if size != len(content):
        os.close(fd)
        return False
    seen = 0
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            if content[seen:seen + len(chunk)] != chunk:
                return False
            seen += len(chunk)
    return seen == len(content)


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies in ``root`` (itself resolved)."""
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


def leaving(path: Path, root: Path) -> str | None:
    """How ``path`` leads out of ``root`` (itself resolved), for a message that refuses it
    ("a symlink to '/etc', a folder"; "reached through a symlink, a file"); None when it
    lies inside. Every way out of a resolved root through a path named inside it is a link."""
    if inside(path, root):
        return None
    link = f"a symlink to {os.readlink(path)!r}" if path.is_symlink() else "reached through a symlink"
    return f"{link}, a {'folder' if path.is_dir() else 'file'}"


def repository(folder: Path) -> Path | None:
    """The git repository that holds ``folder`` (resolved): the nearest folder at or above
    it with a ``.git`` entry, found by name (nothing is run); None outside any."""
    real = Path(os.path.realpath(folder))
    for candidate in (real, *real.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None
