"""Read a plan's YAML and remember where every key came from.

Error messages name the line of the offending key, so the loader keeps a map
from a key path (``("inputs", "peak_arrival_rate")``) to its line. Duplicate
keys, which PyYAML silently lets the last one win, are an error here.

A plan may come from an untrusted pull request: it is built from the
parser's events by :mod:`capplan.language.yamlevents` (an alias's events
built again, so an expanded key path has its line too), within that
module's limits (one document, nesting, number length, plain tags) and this
one's: a file larger than :data:`MAX_BYTES`, more than :data:`MAX_VALUES`
values once aliases are expanded (the "billion laughs" alias bomb), a
merge key, a key that is no text or number, a date that does not exist.
:data:`PLAN` holds those rules and the words of every refusal.
"""

from __future__ import annotations

import re
from pathlib import Path

from capplan import bounded
from capplan.errors import CapplanError
from capplan.language import yamlevents
from capplan.language.yamlevents import Path_, dotted

MAX_BYTES = 4 * 1024 * 1024      # a plan of a thousand sweep rows is ~100 KB
MAX_VALUES = 20_000              # values after alias expansion; the standard model holds 1,333, a plan ~400

_LOADER = yamlevents.LOADER
_UNQUOTED_GLOB = re.compile(r"(^|[\[,:\-{]\s*)\*")


def _glob_hint(line: str) -> str:
    """YAML reads a value that starts with ``*`` as an alias: a file glob such as
    ``[*.json]`` must be quoted."""
    if not _UNQUOTED_GLOB.search(line.strip()):
        return ""
    return ("; a value starting with * is a YAML alias: quote a file glob, e.g. "
            "import: ['*.json'] or import: \"sweeps/*.json\"")


_UNSUPPORTED = "unsupported YAML tag '{shown}' (a plan holds text, numbers, dates, true/false, lists and mappings)"
PLAN = yamlevents.Rules(
    messages={
        "documents": "a plan file holds one YAML document; found a second one (---)",
        "count": "the YAML holds more than {limit:,} values; a plan needs far fewer",
        "count aliased": "the YAML holds more than {limit:,} values once its aliases (*name) are expanded; "
                         "a plan needs far fewer",
        "depth": "the YAML nests deeper than {depth} levels; a plan needs a handful",
        "alias": "alias *{anchor} {why}{hint}",
        "key": "a key must be text",
        "duplicate": "duplicate key '{key}'",
        "collection tag": _UNSUPPORTED,
        "scalar tag": _UNSUPPORTED,
        "merge": "merge keys (<<) are not supported; write the keys out (an alias *name repeats a whole value)",
        "number": "a number of {length:,} characters is not a plan value (at most {most})",
        "invalid": "'{text}' is not a valid {kind}: {reason}",
        "surrogate": "the text holds U+{code:04X}, half of a UTF-16 surrogate pair, which is no character",
        "malformed": "malformed YAML: {problem}{hint}",
    },
    text_tags=frozenset({yamlevents.TAG + "str"}),
    key_types=frozenset({str, int, float, bool}),     # a number key is a row's name; null and dates are no name
    duplicate_keys=False,
    hint=_glob_hint,
)


class Document:
    """Parsed YAML plus the line of each key path."""

    def __init__(self, data, lines: dict[Path_, int], file: str):
        self.data = data
        self.lines = lines
        self.file = file

    def line(self, path: Path_) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, message: str, path: Path_ = ()) -> CapplanError:
        return CapplanError(message, file=self.file, key=dotted(path) or None, line=self.line(tuple(path)))


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def read(path: Path, display: str | None = None) -> Document:
    file = display or str(path)
    try:
        text = bounded.read(path, MAX_BYTES).decode("utf-8")    # never a device, a FIFO or more than the limit
    except bounded.TooLarge:
        raise _too_large(file) from None
    except bounded.NotRegular:
        raise CapplanError("cannot read file: not a regular file (a device, a FIFO or a folder)", file=file) from None
    except (OSError, UnicodeDecodeError) as err:
        raise CapplanError(f"cannot read file: {err.strerror if isinstance(err, OSError) else err}", file=file) from None
    return parse(text, file)


def _check_size(size: int, file: str) -> None:
    if size > MAX_BYTES:
        raise _too_large(file)


def _too_large(file: str) -> CapplanError:
    return CapplanError(f"the file is larger than {MAX_BYTES // 2 ** 20} MiB; a plan needs far less", file=file)


def parse(text: str, file: str) -> Document:
    _check_size(len(text), file)
    builder = yamlevents.Replaying(PLAN, MAX_VALUES, file)
    data = yamlevents.build(builder, text, _LOADER)
    return Document(data, builder.lines, file)
