"""Read an imported file within its limits: a regular file, of bounded size, JSON of bounded depth.

A plan may come from an untrusted pull request, and the files it imports
(benchmark results, a model's ``config.json``) come with it. So a file is
opened as :mod:`capplan.bounded` opens any file a pull request may name:
without blocking, a regular file by ``fstat`` on the open descriptor, its
size checked before anything is read, at most the limit read even if it
grows meanwhile.

JSON is parsed by the standard library's C scanner, which recurses once per
level of nesting and turns an integer of thousands of digits into a number
with work quadratic in its length. So the depth is measured first, in one
linear pass over the bytes with the strings blanked out, and refused beyond
:data:`~capplan.language.yamlevents.MAX_DEPTH` (the limit plans have); an
integer longer than :data:`~capplan.language.yamlevents.MAX_NUMBER_CHARS`
digits is refused as the scanner meets it. Each refusal names the line in its
text (a plan's message about an import names the file, not the file's line).

A YAML report is read by :mod:`~capplan.loading.sweeps.yamldata`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from capplan import bounded
from capplan.errors import CapplanError
from capplan.language.yamlevents import MAX_DEPTH, MAX_NUMBER_CHARS
from capplan.language.yamlfile import MAX_BYTES

MIB = 2 ** 20
MAX_FILE_BYTES = 64 * MIB         # one benchmark file; a vLLM --save-result of 10,000 requests (texts too) is ~55 MB
MAX_YAML_BYTES = MAX_BYTES        # a YAML report (built from the parser's events, see yamldata): a plan's limit
MAX_REQUESTS = 1_000_000          # per-request entries of one run
MAX_GAPS = 10_000_000             # inter-token gaps (vLLM itls) of one run: 10,000 requests of 1,000 tokens
MAX_IMPORT_BYTES = 256 * MIB      # every file of one import together
MAX_FILES = 1_000                 # files one import reads
MAX_RUNS = 100_000                # runs (CSV rows, JSON Lines objects, benchmarks) one import reads
MAX_RATES = 10_000                # distinct arrival rates (rows of the sweep table) one import makes
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)   # unrolled: one step per run of plain characters
_CHUNK = MIB                      # bytes per step of the depth scan (bounds its temporaries)
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_STEP = np.zeros(256, np.int64)   # a byte's change of the nesting level: [ and { +1, ] and } -1
_STEP[list(b"[{")], _STEP[list(b"]}")] = 1, -1


def read_limited(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file no larger than ``limit`` (:func:`capplan.bounded.read`);
    ``what`` names the kind of file in the refusal ('a benchmark file'). Raises
    CapplanError (no location: the caller names the file)."""
    try:
        return bounded.read(path, limit)
    except bounded.NotRegular:
        raise CapplanError("not a regular file (a FIFO, device or socket): capplan reads only regular "
                           "files, whose size it can check before reading") from None
    except bounded.TooLarge as exc:
        raise CapplanError(_too_large(exc.size, limit, what)) from None
    except OSError as exc:
        raise CapplanError(f"cannot read the file: {exc.strerror or exc}") from None


def _too_large(size: int, limit: int, what: str) -> str:
    return (f"the file holds {size / MIB:.1f} MiB; {what} may hold at most {limit // MIB} MiB "
            "(see docs/limits.md)")


def json_depth(data: bytes) -> tuple[int, int]:
    """The deepest nesting of arrays and objects in JSON text, and the line where it is first
    reached; one linear pass (strings are blanked first: brackets in them do not nest)."""
    bare = _STRING.sub(b'""', data)               # a JSON string holds no raw newline: lines stay
    codes = np.frombuffer(bare, np.uint8)
    level = deepest = where = 0
    for start in range(0, len(codes), _CHUNK):
        chunk = codes[start:start + _CHUNK]
        running = np.cumsum(_STEP[chunk]) + level
        top = int(np.argmax(running))
        if running[top] > deepest:
            deepest, where = int(running[top]), start + top
        level = int(running[-1])
    return deepest, bare.count(b"\n", 0, where) + 1


def check(text: str, data: bytes) -> None:
    """Refuse JSON text (``data``, its bytes) nested too deep, or holding an escaped lone
    surrogate (valid JSON, but no Unicode text: it could not be written to the record)."""
    deepest, line = json_depth(data)
    if deepest > MAX_DEPTH:
        raise CapplanError(f"the JSON nests {deepest:,} levels deep (arrays and objects) by line {line}; at most "
                           f"{MAX_DEPTH} are read (see docs/limits.md)", line=line)
    lone = _LONE_SURROGATE.search(text)
    if lone:
        line = text.count("\n", 0, lone.start()) + 1
        raise CapplanError(f"a JSON string on line {line} holds {lone.group()}, half of a UTF-16 surrogate pair: "
                           "not Unicode text", line=line)


def load_json(text: str, data: bytes) -> Any:
    """One JSON value of ``text`` (``data``, its bytes, checked first); a bad integer, depth or
    string is a CapplanError with its line, invalid JSON a JSONDecodeError."""
    check(text, data)
    return json.loads(text, parse_int=_integer(text))


def _integer(text: str):
    """The scanner's hook for integers: refuses one too long to be any count a file records."""
    def parse(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_NUMBER_CHARS:
            at = text.find(digits)
            line = text.count("\n", 0, at) + 1 if at >= 0 else None
            raise CapplanError(f"an integer of {len(digits.lstrip('-')):,} digits" + (f" on line {line}" if line else "")
                               + f"; numbers of at most {MAX_NUMBER_CHARS} digits are read (see docs/limits.md)",
                               line=line)
        return int(digits)
    return parse


def decoder(text: str) -> json.JSONDecoder:
    """A decoder for several values one after another (JSON Lines), with the integer hook."""
    return json.JSONDecoder(parse_int=_integer(text))

