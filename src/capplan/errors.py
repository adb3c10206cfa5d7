"""The errors the ``capplan`` command turns into exit codes.

Every problem with a plan, the model, a benchmark file or the file system
the outputs go to becomes a :class:`CapplanError` that names where it is
(file, key, line) and what is wrong: exit code 1, one message, no traceback.
:class:`UsageError` is a wrong command line (exit 2); :class:`InternalError`
is a bug in capplan (exit 3), and so is any other exception that escapes.
"""

from __future__ import annotations


class CapplanError(Exception):
    """A user-facing error: ``<file>:<line>: <key>: <message>``."""

    def __init__(self, message: str, *, file: str | None = None,
                 key: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.line = line

    def located(self, *, file: str | None = None, key: str | None = None,
                line: int | None = None) -> "CapplanError":
        """Fill in location parts that are still unknown; return self."""
        self.file = self.file or file
        self.key = self.key or key
        self.line = self.line or line
        return self

    def __str__(self) -> str:
        where = self.file or ""
        if self.line:
            where += f":{self.line}"
        if self.key:
            where += (": " if where else "") + self.key
        return _one_line(f"{where}: {self.message}" if where else self.message)


class UsageError(CapplanError):
    """The command line asks for something impossible: exit code 2.

    Found after argparse is done (a git revision that does not exist, a
    ``CAPPLAN_TODAY`` that is not a date), so argparse cannot report it itself.
    """


class InternalError(Exception):
    """A broken promise inside capplan: exit code 3, "this is a bug".

    Deliberately *not* a :class:`CapplanError`: nothing a user writes (a plan,
    a model edit, a command line, a file system that refuses a write) may raise
    it. Raise it where an invariant of the code itself fails, so the message
    asks for a bug report instead of blaming the user's input.
    """


def _one_line(text: str) -> str:
    """Control characters a plan smuggled into a message (a key or value holding a
    newline or a carriage return) are shown escaped, so a message stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
