"""The grammar of a unit as a plan writes it: ``req/s``, ``GiB/GPU``, ``B/(token*request)``, ``s^-1``.

pint's own parser evaluates the text as arithmetic over Python's tokens: it
computes ``s**10**10**10`` (a ten-billion-digit exponent: it never returns),
recurses once per parenthesis and per factor (``RecursionError`` after a
few hundred), and raises ``TokenError``, ``AssertionError`` or
``ZeroDivisionError`` on text such as ``(req/s``, ``'req/s'`` or ``1/0``.
A plan may come from an untrusted pull request, so capplan reads units with
this small grammar instead and gives pint only the unit *names*::

    unit     := factor (('*' | '/' | '·') factor)*
    factor   := atom [('^' | '**') exponent]
    atom     := NAME | '1' | '(' unit ')'
    exponent := ['-' | '+'] DIGIT{1,2}        (a whole number, at most MAX_EXPONENT)

``a/b/c`` is ``a/(b*c)``, as in pint. The parser is linear in the text and
bounded: at most :data:`MAX_CHARS` characters, :data:`MAX_FACTORS` names and
:data:`MAX_PARENS` levels of parentheses.
"""

from __future__ import annotations

import re
import unicodedata

from capplan.errors import CapplanError

MAX_CHARS = 100
MAX_FACTORS = 16
MAX_PARENS = 4
MAX_EXPONENT = 9

_TOKEN = re.compile(r"\s*(?:(?P<name>%|[^\W\d]\w*)|(?P<op>\*\*|[*/·^()+-])|(?P<number>[0-9]+)|(?P<other>\S))")
_HINT = "a unit is names joined by * and /, with whole exponents such as s^2"


def parse(text: str) -> dict[str, int]:
    """The unit names of ``text`` with their exponents (``'GiB/s'`` -> ``{'GiB': 1, 's': -1}``)."""
    if len(text) > MAX_CHARS:
        raise CapplanError(f"a unit of {len(text):,} characters is too long (at most {MAX_CHARS})")
    parser = _Parser(text)
    powers = parser.unit(depth=0)
    if parser.peek() is not None:
        raise parser.unexpected()
    return {name: power for name, power in powers.items() if power}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in _TOKEN.finditer(text)]
        self.pos = 0
        self.factors = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self):
        token = self.peek()
        self.pos += 1
        return token

    def unit(self, depth: int) -> dict[str, int]:
        powers = self.factor(depth)
        while (token := self.peek()) is not None and token[0] == "op" and token[1] in "*/·":
            self.take()
            sign = -1 if token[1] == "/" else 1
            for name, power in self.factor(depth).items():
                powers[name] = powers.get(name, 0) + sign * power
        return powers

    def factor(self, depth: int) -> dict[str, int]:
        token = self.take()
        if token is None:
            raise self.error("ends where a unit name is expected")
        kind, value = token
        if kind == "name":
            self.factors += 1
            if self.factors > MAX_FACTORS:
                raise self.error(f"has more than {MAX_FACTORS} factors")
            powers = {value: 1}
        elif kind == "number" and value == "1":
            powers = {}
        elif value == "(":
            if depth >= MAX_PARENS:
                raise self.error(f"nests parentheses deeper than {MAX_PARENS}")
            powers = self.unit(depth + 1)
            if self.take() != ("op", ")"):
                raise self.error("has a '(' without its ')'")
        elif kind == "number":
            raise self.error(f"holds the number {value}; a unit holds no number but 1 (as in 1/s)")
        else:
            self.pos -= 1
            raise self.unexpected()
        if (token := self.peek()) is not None and token[1] in ("^", "**"):
            self.take()
            exponent = self.exponent()
            powers = {name: power * exponent for name, power in powers.items()}
            if (token := self.peek()) is not None and token[1] in ("^", "**"):
                raise self.error("gives an exponent an exponent; write one whole exponent such as s^2")
        return powers

    def exponent(self) -> int:
        sign = 1
        if (token := self.peek()) is not None and token[1] in "+-":
            self.take()
            sign = -1 if token[1] == "-" else 1
        token = self.take()
        if token is None or token[0] != "number" or len(token[1].lstrip("0")) > 1 or int(token[1]) > MAX_EXPONENT:
            shown = "nothing" if token is None else f"'{token[1]}'"
            raise self.error(f"has the exponent {shown}; an exponent is a whole number from "
                             f"-{MAX_EXPONENT} to {MAX_EXPONENT}")
        return sign * int(token[1])

    def unexpected(self) -> CapplanError:
        token = self.peek()
        return self.error(f"has an unexpected {describe(token[1])}; {_HINT}")

    def error(self, what: str) -> CapplanError:
        return CapplanError(f"unit '{_printable(self.text)}' {what}")


def describe(char: str) -> str:
    """A character as a reader can find it: '=' or '−' (U+2212 MINUS SIGN)."""
    if char.isascii() and char.isprintable():
        return f"'{char}'"
    name = unicodedata.name(char, "")
    return f"character U+{ord(char):04X}" + (f" {name}" if name else "") + \
        (" (write ASCII '-')" if unicodedata.category(char) == "Sm" and "MINUS" in name else "")


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)
