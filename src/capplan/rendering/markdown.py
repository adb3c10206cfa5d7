"""Text from a plan placed in a Markdown table cell.

A plan may come from an untrusted pull request; its titles, sources and
notes reach the record, the diff comment and ``explain --format markdown``.
One escaper (:func:`cell`) keeps them from breaking a table (``|``, a line break),
injecting HTML into the rendered page (``<``), or hiding text from a
reviewer with invisible or direction-reversing characters (shown as
``<U+202E>``). :func:`source` also turns a pinned GitHub reference
(``owner/repo@<40-hex commit>:path``, as the catalog cites its sources) into
a short link a reader can follow.
"""

from __future__ import annotations

import re

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def cell(text, empty: str = "") -> str:
    if text is None or text == "":
        return empty
    text = " ".join(str(text).replace("|", "\\|").replace("<", "&lt;").split())
    return _INVISIBLE.sub(lambda m: f"&lt;U+{ord(m.group(0)):04X}&gt;", text)


_PINNED = re.compile(r"(?<![\w./-])([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([0-9a-f]{40})(?::([^\s;,()\[\]]*[^\s;,()\[\].]))?")


def source(text, empty: str = "") -> str:
    """A source as a table cell, each ``owner/repo@commit:path`` shortened to
    ``owner/repo@abc1234:path`` and linked to that file at that commit on GitHub."""
    def link(m: re.Match) -> str:
        repo, commit, path = m.group(1), m.group(2), m.group(3)
        shown = f"{repo}@{commit[:7]}" + (f":{path}" if path else "")
        url = f"https://github.com/{repo}/" + (f"blob/{commit}/{path}" if path else f"tree/{commit}")
        return f"[{shown}]({url})"
    return _PINNED.sub(link, cell(text, empty))
