"""Work started ahead in forked processes, and collected when it is needed.

A build's longest single task is a plan's Monte Carlo: 100,000 draws of the
whole model are about 0.4 s of the main plan's 0.65 s. It needs nothing but
the plan, so :func:`capplan.build.build` starts it in a child process before
it renders anything and renders the plans meanwhile; on two cores the
simulation costs the build almost nothing.

A child is a fork of the build: it has the build's imports and memory and is
sent nothing; it sends its result back pickled (in a temporary file; a result in
:class:`Parts` a part at a time, each as soon as it is made) and exits. It
is a shortcut, never a second code path: :meth:`Ahead.take` returns ``None``
whenever the child did not deliver (the plan raised an error there, the
child crashed, the result does not unpickle, the platform cannot fork, only
one CPU is free), and the caller then does the work itself, so messages,
exit codes and bytes are the same as without it. At most one child per free
CPU runs at a time; children not collected are killed when the build ends.

Work of many like items (every scenario's flip search) can be shared by both
ends (:class:`Split`): the build takes items from the front while a child,
done with its own task, takes them from the back, until they meet.

No child outlives the command: a child takes the default action for SIGTERM,
SIGHUP and SIGINT (so a signal to the process group ends it), asks the
kernel to kill it when its parent dies (Linux's ``PR_SET_PDEATHSIG``: even a
parent killed with SIGKILL leaves none), and the command kills every live
child as it ends, however it ends (:func:`kill_all`).
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import struct
import sys
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator

_PR_SET_PDEATHSIG = 1
_LIVE: set[_Child] = set()         # children started and not yet collected or killed


def free_cpus() -> int:
    """CPUs this process may use besides the one it runs on; 0 where capplan does not
    fork: fork is the default way to start a process only on Linux (macOS's system
    libraries are not safe in a forked child, Windows has none)."""
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return 0
    return len(os.sched_getaffinity(0)) - 1


class Parts:
    """A child's result sent a part at a time, each as soon as it is made: a part sent before the
    child goes on (a workbook, before the child's share of a :class:`Split`) is not on the way
    while the parent waits. The caller takes the list of the parts."""

    def __init__(self, parts: Iterable):
        self.parts = parts


class _Child:
    """A forked child doing one piece of work. Its result comes back pickled in an unlinked
    temporary file the two share (a 130 MB workbook would cross a pipe 64 KB at a time, the
    child blocked until the parent reads); one byte on a pipe says it is all there, so the
    parent reads it while the child's exit frees its memory."""

    def __init__(self, work: Callable[[], object]):
        parent = os.getpid()
        self.file = tempfile.TemporaryFile()
        ready, done = os.pipe()
        try:
            self.pid = os.fork()
        except OSError:
            self.file.close()
            os.close(ready)
            os.close(done)
            raise
        if self.pid == 0:                        # the child: work, send, exit without unwinding the parent's stack
            code = 1
            try:
                os.close(ready)
                _orphan_proof(parent)
                result = work()
                if isinstance(result, Parts):    # each part sent as soon as it is made: Parts, then the parts
                    pickle.dump(Parts, self.file, protocol=pickle.HIGHEST_PROTOCOL)
                    for part in result.parts:
                        pickle.dump(part, self.file, protocol=pickle.HIGHEST_PROTOCOL)
                        self.file.flush()
                else:
                    pickle.dump(result, self.file, protocol=pickle.HIGHEST_PROTOCOL)
                self.file.flush()
                os.write(done, b"1")
                code = 0
            except BaseException:                # noqa: BLE001 - the parent redoes the work and reports it
                pass
            finally:
                os._exit(code)
        os.close(done)
        self.ready = ready
        _LIVE.add(self)

    def collect(self) -> object | None:
        """The result, once the child says it is whole (None: it ended without saying so);
        the child reaped after it is read."""
        delivered = os.read(self.ready, 1) == b"1"    # b"": it ended first; a signal here leaves it to kill()
        _LIVE.discard(self)
        try:
            return self._load() if delivered else None
        finally:
            os.close(self.ready)
            self.file.close()
            os.waitpid(self.pid, 0)                      # it has ended, or is ending

    def _load(self) -> object | None:
        try:
            self.file.seek(0)
            result = pickle.load(self.file)
            if result is not Parts:
                return result
            parts = []
            while self.file.peek(1):
                parts.append(pickle.load(self.file))
            return parts
        except Exception:                        # noqa: BLE001 - a damaged result is no result
            return None

    def kill(self) -> None:
        if self not in _LIVE:
            return
        _LIVE.discard(self)
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        os.close(self.ready)
        self.file.close()


def _orphan_proof(parent: int) -> None:
    """In a new child: the default action for the signals that end a command, and death with
    the parent (if the parent is already gone, now)."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):            # not Linux's C library: the parent's kill_all still holds
        pass
    if os.getppid() != parent:
        os._exit(1)


def kill_all() -> None:
    """Kill every child still running (a command's last act, however it ends)."""
    for child in list(_LIVE):
        child.kill()


class Ahead:
    """``work(key)`` for each key, computed in forked children in the order given,
    at most ``width`` at a time; use as a context manager so none outlives it."""

    def __init__(self, keys: Iterable[Hashable], work: Callable[[Hashable], object], width: int | None = None):
        self.queue = list(keys)
        self.work = work
        self.width = free_cpus() if width is None else width
        self.running: dict[Hashable, _Child] = {}
        self._start()

    def _start(self) -> None:
        while self.queue and len(self.running) < self.width:
            key = self.queue.pop(0)
            try:
                self.running[key] = _Child(lambda key=key: self.work(key))
            except OSError:                      # no process to spare (a limit, memory): the caller works alone
                self.width = 0

    def take(self, key: Hashable) -> object | None:
        """The child's result for ``key``; None when no child delivered it (do the work yourself)."""
        child = self.running.pop(key, None)
        if child is None:
            if key in self.queue:               # not started yet: the caller is as fast
                self.queue.remove(key)
            return None
        result = child.collect()
        self._start()
        return result

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *_) -> None:
        self.queue.clear()
        for child in self.running.values():
            child.kill()
        self.running.clear()


class Split:
    """Items ``0 … n-1`` worked on from both ends at once: the process that made the split
    takes them from the front (:meth:`front`), a child it forks afterwards from the back
    (:meth:`back`), until they meet. Each end's claim is a counter in memory both share
    (an anonymous shared mapping made before the fork), written by its end alone.

    No item is left out: an end stops only once the other has claimed everything past
    it. An item both claim at the meeting point is done twice, which costs time but not
    correctness: the two processes compute it alike. A child that does not deliver the
    items it took leaves them to the caller, as for any work ahead."""

    _FRONT, _BACK = 0, 4

    def __init__(self, n: int):
        self.n = n
        self._shared = mmap.mmap(-1, 8)
        self._set(self._FRONT, 0)
        self._set(self._BACK, n)

    @property
    def back_took(self) -> bool:
        """Whether the back has claimed an item (its results are then needed)."""
        return self._get(self._BACK) < self.n

    def _get(self, at: int) -> int:
        return struct.unpack_from("<i", self._shared, at)[0]

    def _set(self, at: int, value: int) -> None:
        struct.pack_into("<i", self._shared, at, value)

    def front(self) -> Iterator[int]:
        """The items from the front, each once claimed, until the back's claims are reached."""
        while (i := self._get(self._FRONT)) < self._get(self._BACK):
            self._set(self._FRONT, i + 1)
            yield i

    def back(self) -> Iterator[int]:
        """The items from the back (in the child), until the front's claims are reached."""
        while (j := self._get(self._BACK) - 1) >= self._get(self._FRONT):
            self._set(self._BACK, j)
            yield j
