"""Escaping for the XML parts this package writes: one way, whatever the text."""

from __future__ import annotations

DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_ATTR = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                       "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def text(value: str) -> str:
    """Element text (most text has nothing to escape, and a search is cheaper than a translation)."""
    if "&" in value or "<" in value or ">" in value or "\r" in value:       # replace() beats translate() here
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    return value


def attr(value: str) -> str:
    """An attribute value (between double quotes)."""
    return value.translate(_ATTR)
