"""``json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)``, the same text, faster.

With ``indent`` the standard library leaves its C encoder for a pure-Python
one: a generator per dict and list, several ``yield`` s per item, and a
1,000-scenario document (7 million chunks) spent about a tenth of the build
there. Here one recursive function appends to a list, with the standard
library's own C string escaper and ``float.__repr__``/``int.__repr__`` for the
scalars, in the order and with the separators ``json`` uses, so the text is
byte for byte the same (``tests/test_jsontext.py`` compares them).

Anything the fast path does not know — a type ``json`` would reject, a number
that is not finite, a non-string key, a cycle — is handed back to ``json.dumps``
itself, so the errors stay those of the standard library.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring

INDENT = "  "
JOINED = 2          # a container this deep (a scenario) is joined into one string as soon as it is written:
                    # a 1,000-scenario document is 7 million pieces, which would all be alive at once


class _Unusual(Exception):
    """A value the fast path leaves to ``json.dumps`` (which writes it or raises its own error)."""


def dumps(doc) -> str:
    """``doc`` as ``json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)`` writes it."""
    out: list[str] = []
    try:
        _value(doc, 0, out)
    except (_Unusual, RecursionError):
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    return "".join(out)


def _value(o, level: int, out: list) -> None:
    kind = type(o)
    if kind is str:
        out.append(encode_basestring(o))
    elif kind is dict or kind is list or kind is tuple:
        if level == JOINED:
            part: list[str] = []
            _container(o, kind is dict, level, part)
            out.append("".join(part))
        else:
            _container(o, kind is dict, level, out)
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(o))
    elif kind is float:
        if not math.isfinite(o):
            raise _Unusual()
        out.append(float.__repr__(o))
    else:
        raise _Unusual()          # a subclass, or a type json rejects: the standard library decides


def _container(o, keyed: bool, level: int, out: list) -> None:
    """A dict (``keyed``) or a list: one entry a line, indented two spaces a level."""
    if not o:
        out.append("{}" if keyed else "[]")
        return
    inner = "\n" + INDENT * (level + 1)
    between = "," + inner
    out.append("{" if keyed else "[")
    first = True
    for entry in (o.items() if keyed else o):
        out.append(inner if first else between)
        first = False
        if keyed:
            key, entry = entry
            if type(key) is not str:
                raise _Unusual()      # json converts numbers, truth values and None keys its own way
            out.append(encode_basestring(key))
            out.append(": ")
        _value(entry, level + 1, out)
    out.append("\n" + INDENT * level + ("}" if keyed else "]"))
