"""``json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)``, the same text, faster.

With ``indent`` the standard library leaves its C encoder for a pure-Python
one: a generator per dict and list, several ``yield`` s per item; a
1,000-scenario document spent about a tenth of its build there. Here:

* one recursive method appends the pieces to a list, with the standard
  library's own C string escaper and ``float.__repr__``/``int.__repr__`` for
  the scalars, in the order and with the separators ``json`` uses;
* a container met again — the same object at the same depth: the document's
  builder shares what many scenarios have in common — repeats the pieces
  written the first time instead of being written again;
* a long container of scalars, and a list of dicts of scalars (a table's
  rows), go to the C encoder in one call: it cannot indent, but it takes any
  item separator, and ``",\\n"`` and the indent of the items is the indented
  text (a raw line break can only be a separator: a string's is escaped). In a
  list of rows each row's lines start with a key (``"``), so ``},\\n`` and the
  indent followed by ``{`` is a boundary between rows and nothing else, which
  one ``str.replace`` indents a level less.

A document can also be written a part at a time (:class:`Writer`): each
process of a build writes and encodes the scenarios it searched
(:mod:`capplan.build`), and the document is then written around those parts
(:class:`Written`), each written at the depth it takes there: the 71 MB of a
thousand scenarios are not joined and encoded while the other process waits.

The C encoder's fixed cost per call (a few hundred nanoseconds) is that of a
few items in Python, so short containers stay in Python. Anything the fast
path does not know — a type ``json`` would reject, a subclass, a number that
is not finite, a non-string key, a cycle — is handed back to ``json.dumps``
itself, so the text and the errors stay those of the standard library
(``tests/test_jsontext.py`` compares them).
"""

from __future__ import annotations

import itertools
import json
from json.encoder import c_make_encoder, encode_basestring

INDENT = "  "
LONG = 8                  # scalars from which a container goes to the C encoder in one call
_SCALARS = frozenset((str, int, float, bool, type(None)))
_CONTAINERS = frozenset((dict, list, tuple))
_STRINGS = frozenset((str,))
_INFINITE = (float("inf"), float("-inf"))


class _Unusual(Exception):
    """A value the fast path leaves to ``json.dumps`` (which writes it or raises its own error)."""


def dumps(doc) -> str:
    """``doc`` as ``json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)`` writes it."""
    text = Writer().text(doc)
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) if text is None else text


class Written:
    """A container's text as :class:`Writer` wrote it at the depth where it is placed in a document
    (a scenario's object), in UTF-8: a writer copies it into the document's bytes (:meth:`Writer.encoded`)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


class Writer:
    """Writes containers, one call at a time, sharing what it wrote before (a container met again
    at the same depth repeats its text). It holds every container it wrote, so no id it keys by is
    reused while it lives."""

    def __init__(self):
        self.out: list = []
        # id << 16 | depth -> where its pieces are in out (start << 32 | end), or their text once met again
        self.written: dict[int, int | str] = {}
        self.encoders: list = []
        self.held: list = []

    def text(self, o, level: int = 0) -> str | None:
        """``o`` (holding no :class:`Written`) as :func:`dumps` writes it, ``level`` indents in (its first
        line not indented, as after a key); None for what the fast path leaves to ``json`` (:class:`_Unusual`)."""
        start = self._write(o, level)
        return None if start is None else "".join(self.out[start:])

    def part(self, o, level: int) -> Written | None:
        """``o`` written ``level`` indents in, to be placed at that depth in a document (:meth:`encoded`)."""
        text = self.text(o, level)
        return None if text is None else Written(text.encode("utf-8"))

    def encoded(self, o, tail: str = "") -> bytes | None:
        """``o`` as :func:`dumps` writes it, then ``tail``, in UTF-8, each :class:`Written` in it copied."""
        start = self._write(o, 0)
        if start is None:
            return None
        runs = itertools.groupby(self.out[start:] + [tail], key=type)
        return b"".join(b"".join(p.data for p in run) if kind is Written else "".join(run).encode("utf-8")
                        for kind, run in runs)

    def _write(self, o, level: int) -> int | None:
        """Where ``o``'s pieces begin in :attr:`out` (None: left to ``json``). The pieces stay there,
        where what a later call meets again is found."""
        if c_make_encoder is None or type(o) not in _CONTAINERS:
            return None
        start = len(self.out)
        self.held.append(o)
        try:
            self.container(o, level)
        except (_Unusual, RecursionError, ValueError):
            return None             # a container is recorded only once whole: what was recorded holds
        return start

    def encoder(self, level: int):
        """The C encoder of items ``level`` indents in, one a line (no key a number: the keys were checked)."""
        while len(self.encoders) <= level:
            self.encoders.append(c_make_encoder(None, None, encode_basestring, None, ": ",
                                                ",\n" + INDENT * len(self.encoders), False, False, False))
        return self.encoders[level]

    def container(self, o, level: int) -> None:
        """A dict or a list (a tuple is a list), one item a line, ``level`` indents in."""
        out = self.out
        key = id(o) << 16 | level
        seen = self.written.get(key)
        if seen is not None:
            if type(seen) is int:             # met the second time: its pieces joined, for this and later times
                seen = self.written[key] = "".join(out[seen >> 32:seen & 0xFFFFFFFF])
            out.append(seen)
            return
        start = len(out)
        keyed = type(o) is dict
        if not o:
            out.append("{}" if keyed else "[]")
        elif len(o) >= LONG and (_scalars_only(o) if keyed else _SCALARS.issuperset(map(type, o))):
            self._encoded(o, keyed, level)
        elif not keyed and type(o[0]) is dict and len(o) > 1 and all(type(row) is dict and row and _scalars_only(row)
                                                                      for row in o):
            self._rows(o, level)
        else:
            self._items(o, keyed, level)
        # the same object met again at this depth repeats these pieces (the document holds every
        # container until the text is joined, so no id is reused meanwhile)
        self.written[key] = start << 32 | len(out)

    def _encoded(self, o, keyed: bool, level: int) -> None:
        inner = INDENT * (level + 1)
        text = "".join(self.encoder(level + 1)(o, level + 1))
        self.out.append(("{\n" if keyed else "[\n") + inner + text[1:-1] + "\n" + INDENT * level + text[-1])

    def _rows(self, rows: list, level: int) -> None:
        """A list of non-empty dicts of scalars (their keys strings), the C encoder's text indented once."""
        outer, inner = INDENT * (level + 1), INDENT * (level + 2)
        text = "".join(self.encoder(level + 2)(rows, level + 2))[2:-2]
        text = text.replace("},\n" + inner + "{", "\n" + outer + "},\n" + outer + "{\n" + inner)
        self.out.append("[\n" + outer + "{\n" + inner + text + "\n" + outer + "}\n" + INDENT * level + "]")

    def _items(self, o, keyed: bool, level: int) -> None:
        out = self.out
        between = ",\n" + INDENT * (level + 1)
        out.append("{" if keyed else "[")
        separator = between[1:]
        for item in (o.items() if keyed else o):
            if keyed:
                key, item = item
                if type(key) is not str:
                    raise _Unusual()          # json converts numbers, truth values and None keys its own way
                head = separator + encode_basestring(key) + ": "
            else:
                head = separator
            separator = between
            kind = type(item)
            if kind is str:
                out.append(head + encode_basestring(item))
            elif kind is Written:
                out.append(head)
                out.append(item)
            elif kind is dict or kind is list or kind is tuple:
                out.append(head)
                self.container(item, level + 1)
            elif item is None:
                out.append(head + "null")
            elif item is True:
                out.append(head + "true")
            elif item is False:
                out.append(head + "false")
            elif kind is int:
                out.append(head + int.__repr__(item))
            elif kind is float:
                if item != item or item in _INFINITE:
                    raise _Unusual()
                out.append(head + float.__repr__(item))
            else:
                raise _Unusual()              # a subclass, or a type json rejects: the standard library decides
        out.append("\n" + INDENT * level + ("}" if keyed else "]"))


def _scalars_only(row: dict) -> bool:
    """Every value a scalar, every key a string."""
    return _SCALARS.issuperset(map(type, row.values())) and _STRINGS.issuperset(map(type, row))
