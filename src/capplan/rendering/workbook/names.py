"""Excel defined names for canonical quantity names, and what Excel would read as a cell address."""

from __future__ import annotations

import re

from capplan.errors import CapplanError
from capplan.rendering.workbook.functions import FUNCTIONS

_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_R1C1 = re.compile(r"^[Rr]\[?-?\d*\]?([Cc]\[?-?\d*\]?)?$|^[Cc]\[?-?\d*\]?$")
_NAME_OK = re.compile(r"^[^\W\d][\w.]*$", re.UNICODE)
MAX_COLUMN = 16384
MAX_ROW = 1048576


def column_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def looks_like_cell(name: str) -> bool:
    """Whether Excel (A1 or R1C1 notation) would read ``name`` as a cell address."""
    match = _A1.match(name)
    if match and column_number(match.group(1)) <= MAX_COLUMN and 0 < int(match.group(2)) <= MAX_ROW:
        return True
    return bool(_R1C1.match(name))


def _reserved(name: str) -> bool:
    return name.upper() in FUNCTIONS or name.upper() in ("TRUE", "FALSE") or name.lower().startswith("_xl")


def excel_name(name: str, taken: set[str] | None = None) -> str:
    """A valid Excel defined name for a canonical quantity name.

    ``deployments.nodes`` -> ``deployments_nodes``; a name Excel would read as
    a cell (``kv1``, ``R1C1``, ``c``) or as a function/boolean gets a trailing
    underscore (``kv1_``); ``taken`` (lower-case names already used) keeps it
    unique.
    """
    text = re.sub(r"[^\w.]", "_", name.replace(".", "_"), flags=re.UNICODE)
    if not text or not _NAME_OK.match(text):
        text = "_" + text
    while looks_like_cell(text) or _reserved(text) or (taken is not None and text.lower() in taken):
        text += "_"
    if len(text) > 255:
        raise CapplanError(f"quantity name '{name}' is too long for an Excel name")
    if taken is not None:
        taken.add(text.lower())
    return text
