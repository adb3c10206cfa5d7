"""Plan text as it may enter a workbook: cell text, sheet titles, quoting.

Plan text is data, never a formula, and never breaks the file: whatever a
title, source or note holds, the cell gets it as a string.
"""

from __future__ import annotations

import re

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

_SHEET_BAD = re.compile(r"[\[\]:*?/\\']")


def sheet_title(name: str, taken: set[str]) -> str:
    """A valid, unique sheet title for a scenario name (31 characters, no []:*?/\\')."""
    title = _SHEET_BAD.sub("_", ILLEGAL_CHARACTERS_RE.sub("", name)).strip() or "scenario"
    title = title[:31]
    base, n = title, 2
    while title.lower() in taken or title.lower() == "history":
        suffix = f"_{n}"
        title = base[:31 - len(suffix)] + suffix
        n += 1
    taken.add(title.lower())
    return title


def quote_sheet(title: str) -> str:
    return "'" + title.replace("'", "''") + "'"


def clean_text(value) -> str:
    return ILLEGAL_CHARACTERS_RE.sub("", str(value))


def set_text(cell, value) -> None:
    """Write plan text as text: never as a formula, whatever it starts with (=, +, -, @)."""
    cell.value = clean_text(value)
    cell.data_type = "s"
