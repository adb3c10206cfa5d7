"""Text from a plan placed in a Markdown table cell.

A plan may come from an untrusted pull request; its titles, sources and
notes reach the record, the diff comment and ``explain --format markdown``.
One escaper keeps them from breaking a table (``|``, a line break) or
injecting HTML into the rendered page (``<``).
"""

from __future__ import annotations


def cell(text, empty: str = "") -> str:
    if text is None or text == "":
        return empty
    return " ".join(str(text).replace("|", "\\|").replace("<", "&lt;").split())
