"""Plan text as it may enter a workbook: cell text, sheet titles, chart titles, quoting.

Plan text is data, never a formula, and never breaks the file: whatever a
title, source or note holds, the cell gets it as a string, and characters an
XML part cannot carry (control characters, lone surrogates, U+FFFE/U+FFFF:
a YAML plan can spell them as ``"\\a"`` or ``"\\ud800"``) are removed, so the
xlsx is always well-formed. The C1 controls (U+007F-U+009F), which XML
allows but no spreadsheet shows, go too. One-line places (sheet and chart
titles) also turn tabs and line breaks into spaces.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_BREAKS = re.compile(r"[\t\n\r]+")
_SHEET_BAD = re.compile(r"[\[\]:*?/\\']")


def clean_text(value) -> str:
    """Text without the characters an XML part cannot carry (tabs and line breaks stay)."""
    value = str(value)
    if value.isascii() and value.isprintable():       # no control character at all: most text
        return value
    return _CONTROL.sub("", value)


def one_line(value) -> str:
    """Clean text on one line: for titles, where a line break has no place."""
    return _BREAKS.sub(" ", clean_text(value))


def sheet_title(name: str, taken: set[str]) -> str:
    """A valid, unique sheet title for a scenario name (31 characters, no []:*?/\\')."""
    title = _SHEET_BAD.sub("_", one_line(name)).strip() or "scenario"
    title = title[:31]
    base, n = title, 2
    while title.lower() in taken or title.lower() == "history":
        suffix = f"_{n}"
        title = base[:31 - len(suffix)] + suffix
        n += 1
    taken.add(title.lower())
    return title


def set_text(cell, value) -> None:
    """Write plan text as text: never as a formula, whatever it starts with (=, +, -, @)."""
    cell.text(clean_text(value))
