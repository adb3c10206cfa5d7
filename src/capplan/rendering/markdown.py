"""Text from a plan placed in Markdown: the one escaper, :func:`cell`.

A plan may come from an untrusted pull request; its title, owner,
description, sources, notes, row and scenario names and the names of the
files it imports reach the record, the diff comment, ``seek`` and ``explain
--format markdown``. :func:`cell` keeps them from breaking a table (``|``, a
line break), injecting HTML (``<``), opening a code span (a backtick) or
math (a ``$`` that could close one — after a non-space, not before a
digit — so that no span can form, while capplan's own "+$1,822.68" and
"$ per 1M" stay as written), escaping the escapes (a backslash), quoting
(a leading ``>``), closing the record's opening comment (``-->``), or
hiding text from a reviewer with invisible or direction-reversing
characters, or driving the terminal a record is read in with control
characters (each shown as its code point: ``<U+202E>``, ``<U+001B>``). :func:`code` puts a name in a code span
when it can sit in one safely, else escapes it as text; :func:`source` also
turns a pinned GitHub reference (``owner/repo@<40-hex commit>:path``, as
the catalog cites its sources) into a short link a reader can follow.
:func:`math` writes the record's LaTeX as inline math in the one form GitHub
leaves alone.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# Invisible or direction-reversing characters, and the control characters a table's whitespace
# folding leaves (ESC, BEL, DEL, the C1 controls: a terminal showing the record would act on them)
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


_SPECIAL = re.compile(r"[\\`|<]|(?<=\S)\$(?![0-9])|^>|(?<=--)>|(?<!\*)\*(?!\*)")
_ENTITIES = {"<": "&lt;", ">": "&gt;"}
_UNSAFE_IN_CODE = re.compile("[`|\\s\x00-\x1f\x7f\u0085\u2028\u2029]")


def cell(text, empty: str = "") -> str:
    """Any text as inline Markdown, safe in a table cell: one line, every special character escaped
    (a lone ``*``, as in λ*, too: inside the bold sentence it would end the emphasis; ``**`` stays,
    the layout's sentences bold with it)."""
    if text is None or text == "":
        return empty
    text = " ".join(str(text).split())
    text = _SPECIAL.sub(lambda m: _ENTITIES.get(m.group(0)) or "\\" + m.group(0), text)
    return _INVISIBLE.sub(lambda m: f"&lt;U+{ord(m.group(0)):04X}&gt;", text)


def code(text, empty: str = "") -> str:
    """A name (a file, a scenario, a row) as a code span, or as escaped text
    where a code span could not hold it (a backtick, a pipe, a line break)."""
    if text is None or text == "":
        return empty
    text = str(text)
    if _UNSAFE_IN_CODE.search(text.replace(" ", "")) or _INVISIBLE.search(text):
        return cell(text)
    return f"`{text}`"


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_BLOCK_START = re.compile(r"^(\d*)([#+*=.)-])")        # a heading, a list, a rule


def prose(text, empty: str = "") -> str:
    """A plan's free text (its description) as paragraphs of lines, each line
    escaped (:func:`cell`; one that would open a heading, a list or a rule
    starts with a backslash), except that a code span the author closed
    stays a code span (:func:`code`)."""
    if text is None or not str(text).strip():
        return empty
    paragraphs = [p for p in re.split(r"\n\s*\n", str(text)) if p.strip()]
    out = []
    for paragraph in paragraphs:
        lines = []
        for line in paragraph.strip().splitlines():
            pieces = _CODE_SPAN.split(" ".join(line.split()))
            text = "".join(code(piece) if i % 2 else _keep_spaces(piece) for i, piece in enumerate(pieces))
            lines.append(_BLOCK_START.sub(r"\1\\\2", text))
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _keep_spaces(piece: str) -> str:
    """A piece of a paragraph escaped, the spaces at its ends (next to a code span) kept."""
    if not piece.strip():
        return piece
    return " " * piece.startswith(" ") + cell(piece) + " " * piece.endswith(" ")


_PIPES = ((r"\left|", r"\left\lvert "), (r"\right|", r"\right\rvert "), (r"\|", r"\Vert "), ("|", r"\vert "))


def math(latex: str) -> str:
    """LaTeX as inline math GitHub renders as written: ``$`…`$``.

    GitHub's Markdown pass removes the backslash before punctuation inside a
    bare ``$…$`` before the math renderer sees it (``\\{`` becomes ``{``, a
    ``\\\\`` row break one backslash) and may read ``_`` or ``*`` as emphasis;
    the inside of a code span is never touched. A ``|`` would end a table
    cell even there, so it is written as the command that draws it.
    The LaTeX is capplan's own (the model's symbols, the printer's formulas),
    never a plan's text, and holds no backtick."""
    for bar, command in _PIPES:
        latex = latex.replace(bar, command)
    return f"$`{latex}`$"


def url(text) -> str:
    """A file name as a link target (a chart beside the record): percent-encoded."""
    return quote(str(text), safe="/")


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
