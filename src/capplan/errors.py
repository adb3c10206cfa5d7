"""The one error type the user sees.

Every problem with a plan, the model or a benchmark file becomes a
:class:`CapplanError` that names where it is (file, key, line) and what is
wrong. The CLI prints ``str(error)`` and exits non-zero; no traceback reaches
the user.
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
        return f"{where}: {self.message}" if where else self.message
