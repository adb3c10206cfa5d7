"""Text from a plan placed in a Markdown table cell.

A plan may come from an untrusted pull request; its titles, sources and
notes reach the record, the diff comment and ``explain --format markdown``.
One escaper keeps them from breaking a table (``|``, a line break),
injecting HTML into the rendered page (``<``), or hiding text from a
reviewer with invisible or direction-reversing characters (shown as
``<U+202E>``).
"""

from __future__ import annotations

import re

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def cell(text, empty: str = "") -> str:
    if text is None or text == "":
        return empty
    text = " ".join(str(text).replace("|", "\\|").replace("<", "&lt;").split())
    return _INVISIBLE.sub(lambda m: f"&lt;U+{ord(m.group(0)):04X}&gt;", text)
