"""One YAML event builder: Python data from PyYAML's event stream, within bounds.

A plan, and a benchmark report beside it, may come from an untrusted pull
request, so YAML is never composed into a node graph and constructed: the
data is built here from the parser's events (libyaml's C parser when PyYAML
has it, the pure-Python one otherwise) with an explicit stack, which bounds
what a few bytes can cost. Every file shares these limits: one document,
nesting at most :data:`MAX_DEPTH` levels, numbers of at most
:data:`MAX_NUMBER_CHARS` characters, YAML's plain types only (no
``!!python/...``, ``!!binary`` or local tags) and a number of values,
counted once aliases are expanded (the "billion laughs" bomb), that the
caller sets.

What differs between kinds of file is declared, not written twice:

- how an alias is expanded, a builder class: :class:`Replaying` builds the
  anchor's events again, so every expanded key path gets fresh objects and
  a line (a plan's messages name both); :class:`Sharing` attaches the
  anchor's value itself and counts its size in one step, keeping no event
  and no line (a report of a million values, where that bookkeeping cost
  several times the parse);
- what a file may hold beyond the shared limits, and the words of every
  refusal: :class:`Rules`, one per kind of file, with its messages in one
  table (:mod:`capplan.language.yamlfile` for plans,
  :mod:`capplan.loading.sweeps.yamldata` for reports).
"""

from __future__ import annotations

import gc
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from capplan.errors import CapplanError

Path_ = tuple  # a key path: ('tables', 'classes', 'rows', 2, 'weight')

MAX_DEPTH = 64                   # plans nest six levels deep, reports a handful
MAX_NUMBER_CHARS = 100           # a float needs 25; anything longer is not a measured value

LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

TAG = "tag:yaml.org,2002:"      # the prefix of YAML's own tags (!!str is TAG + "str")
_MAP, _SEQ, _MERGE = TAG + "map", TAG + "seq", TAG + "merge"
_NUMBER_TAGS = {TAG + "int", TAG + "float"}
_SAFE = yaml.SafeLoader("")      # resolves plain scalars and constructs them (YAML 1.1 types)
_BOOLS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_SURROGATE = re.compile("[\ud800-\udfff]")
_NO_KEY = object()               # a mapping waiting for its next key (None is a key a report may have)


@dataclass(frozen=True)
class Rules:
    """What one kind of file may hold beyond the shared limits, and how its refusals read.

    ``messages``: a :meth:`str.format` template per refusal, given the limits
    (``depth``, ``most``, ``limit``) and the refusal's own fields (see its
    raise). A refusal the rules or the builder rule out needs none:
    ``duplicate`` where the last key wins, ``merge`` where ``<<`` is text,
    ``deep alias`` for a :class:`Replaying` builder.
    """

    messages: Mapping[str, str]
    text_tags: frozenset[str]            # resolved tags kept as their text (str always)
    key_types: frozenset[type]           # the types a mapping key may have
    duplicate_keys: bool                 # True: the last of a repeated key wins; False: refused
    hint: Callable[[str], str] = lambda line: ""    # advice from the text of the line a refusal names


class _Frame:
    """A mapping or sequence being filled, and the key waiting for its value."""

    __slots__ = ("anchor", "key", "levels", "path", "start", "value")

    def __init__(self, value, path, anchor, start):
        self.value = value
        self.path = path            # its key path, when the builder keeps paths
        self.key = _NO_KEY
        self.anchor = anchor        # its anchor (&name), remembered when it is complete
        self.start = start          # where the builder's alias strategy marks its beginning
        self.levels = 1             # levels of nesting it holds, itself included


def build(builder: Builder, text: str, loader_class=None) -> Any:
    """The value of ``text`` (one document), or the builder's located refusal."""
    loader = (loader_class or LOADER)(text)
    collecting = gc.isenabled()
    gc.disable()        # the data grows by containers only: the cyclic GC would rescan them for nothing
    try:
        return builder.run(loader)
    except yaml.YAMLError as err:
        raise builder.malformed(err, text) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()


class Builder(ABC):
    """The event walk, the limits and the rules; its subclasses expand aliases.

    Every node (scalar or collection) counts one value; ``limit`` is the most a
    file may hold. A subclass keeps key paths (:meth:`_place`, :meth:`_path`)
    or not (every path is then ``()``, so messages name the line only).
    """

    def __init__(self, rules: Rules, limit: int, file: str | None = None):
        self.rules = rules
        self.limit = limit
        self.file = file
        self.root: Any = None
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple] = {}     # name -> what the alias strategy needs to expand it
        self.count = 0
        self.documents = 0
        self.aliased = False                    # an alias was expanded (the count message says so)
        self.expanding = None                   # the alias whose expansion is being built, if any
        self.plain: dict[str, Any] = {}         # a plain scalar's text -> its value (keys repeat in every record)

    @abstractmethod
    def run(self, loader) -> Any:
        """The document's value, built from the loader's events by :meth:`_event`."""

    # -- the walk ------------------------------------------------------------------
    def _event(self, event) -> None:
        kind = type(event)
        if kind is ScalarEvent:
            self._scalar_event(event)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            self._open(event)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            self._close(event)
        elif kind is AliasEvent:
            self._alias(event)
        elif kind is DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise self._error("documents", event)

    def _scalar_event(self, event) -> None:
        path = self._place(event)
        self._count(1, event, path)
        value = self._scalar(event, path)
        if event.anchor:
            self._remember(event.anchor, value, self._mark(), 0)
        self._attach(value, event, 0)

    def _open(self, event) -> None:
        mapping = type(event) is MappingStartEvent
        path = self._place(event)
        self._count(1, event, path)
        if self.stack and type(self.stack[-1].value) is dict and self.stack[-1].key is _NO_KEY:
            raise self._error("key", event, self.stack[-1].path)
        tag = event.tag
        if tag is not None and tag != "!" and tag != (_MAP if mapping else _SEQ):
            raise self._error("collection tag", event, path, tag=tag, shown=_shown(tag))
        if len(self.stack) >= MAX_DEPTH:
            raise self._error("depth", event, path)
        self.stack.append(_Frame({} if mapping else [], path, event.anchor, self._mark()))

    def _close(self, event) -> None:
        frame = self.stack.pop()
        if frame.anchor:
            self._remember(frame.anchor, frame.value, frame.start, frame.levels)
        self._attach(frame.value, event, frame.levels)

    def _alias(self, event) -> None:
        name = event.anchor
        if name not in self.anchors:
            opening = any(frame.anchor == name for frame in self.stack)
            why = "refers to a collection that contains it" if opening else f"has no anchor &{name} before it"
            raise self._error("alias", event, self._path(), anchor=name, why=why, hint=self.rules.hint("*" + name))
        self.aliased = True
        self._expand(event, self.anchors[name])

    def _count(self, values: int, event, path: Path_) -> None:
        self.count += values
        if self.count > self.limit:
            raise self._error("count aliased" if self.aliased else "count", self.expanding or event, path)

    def _attach(self, value, event, levels: int) -> None:
        """A complete value (``levels`` deep) into the open collection, or the document's root."""
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if levels >= frame.levels:
            frame.levels = levels + 1
        container = frame.value
        if type(container) is list:
            container.append(value)
        elif frame.key is _NO_KEY:
            self._key(frame, value, event)
        else:
            container[frame.key] = value
            frame.key = _NO_KEY

    def _key(self, frame: _Frame, key, event) -> None:
        if type(key) not in self.rules.key_types:
            raise self._error("key", event, frame.path)
        if key in frame.value and not self.rules.duplicate_keys:
            raise self._error("duplicate", event, frame.path, key=key)
        frame.key = key

    # -- scalars ---------------------------------------------------------------------
    def _scalar(self, event, path: Path_) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:       # quoted: text, no resolving
                return self._text(event, path)
            return self._plain(event, path)
        return self._construct(tag, event, path)

    def _plain(self, event, path: Path_) -> Any:
        """A plain scalar, resolved by YAML 1.1's rules; the same text is built once."""
        text = event.value
        value = self.plain.get(text, _NO_KEY)
        if value is _NO_KEY:
            value = self.plain[text] = self._construct(_SAFE.resolve(yaml.ScalarNode, text, event.implicit),
                                                       event, path)
        return value

    def _construct(self, tag: str, event, path: Path_) -> Any:
        text = event.value
        if tag in self.rules.text_tags:
            return self._text(event, path)
        if tag not in _BUILD:
            raise self._error("merge" if tag == _MERGE else "scalar tag", event, path, tag=tag, shown=_shown(tag))
        if tag in _NUMBER_TAGS and len(text) > MAX_NUMBER_CHARS:
            raise self._error("number", event, path, length=len(text))
        try:
            return _BUILD[tag](text)
        except (ValueError, OverflowError, yaml.YAMLError) as err:
            raise self._error("invalid", event, path, text=_short(text), kind=tag[len(TAG):], reason=err) from None

    def _text(self, event, path: Path_) -> str:
        """A text scalar. An escape such as "\\uD800" gives half of a UTF-16 pair, no
        character: libyaml refuses it, the pure-Python parser does not, and no output
        could be written with it; so both refuse it here."""
        value = event.value
        if not value.isascii() and (half := _SURROGATE.search(value)):
            raise self._error("surrogate", event, path, code=ord(half.group()))
        return value

    # -- messages --------------------------------------------------------------------
    def malformed(self, err: yaml.YAMLError, text: str) -> CapplanError:
        """The parser's own refusal, at its line and the key path being read."""
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        lines = text.splitlines() if mark else []
        hint = self.rules.hint(lines[mark.line] if mark and mark.line < len(lines) else "")
        message = self.rules.messages["malformed"].format(problem=problem, hint=hint)
        return CapplanError(message, file=self.file, key=_brief(self.open_path()), line=mark.line + 1 if mark else None)

    def _error(self, name: str, event, path: Path_ = (), **fields) -> CapplanError:
        message = self.rules.messages[name].format(depth=MAX_DEPTH, most=MAX_NUMBER_CHARS, limit=self.limit, **fields)
        line = event.start_mark.line + 1 if event.start_mark else None
        return CapplanError(message, file=self.file, key=_brief(path), line=line)

    # -- what an alias strategy decides ------------------------------------------------
    def _place(self, event) -> Path_:
        """The key path of the value ``event`` begins (none kept here)."""
        return ()

    def _path(self) -> Path_:
        return ()

    def open_path(self) -> Path_:
        """The key path being read when the parser fails (none kept here)."""
        return ()

    @abstractmethod
    def _mark(self) -> int:
        """Where a value being built begins, as :meth:`_remember` counts it."""

    @abstractmethod
    def _remember(self, anchor: str, value, start: int, levels: int) -> None:
        """Keep what an alias to the complete value ``anchor`` needs."""

    @abstractmethod
    def _expand(self, event, target) -> None:
        """Attach the value alias ``event`` stands for; ``target`` is what :meth:`_remember` kept."""


class Replaying(Builder):
    """Aliases expanded by building their anchor's events again, with lines.

    Every event is kept (indexed) so that an alias can replay the events of its
    anchor: each expansion yields fresh objects and fresh line entries for the
    new key path, and counts towards the limit value by value.
    """

    def __init__(self, rules: Rules, limit: int, file: str | None = None):
        super().__init__(rules, limit, file)
        self.lines: dict[Path_, int] = {}
        self.events: list = []
        self.targets: dict[int, tuple[int, int]] = {}    # alias event index -> the events it stands for
        self.replaying = False

    def run(self, loader) -> Any:
        events, event_of = self.events, self._event
        while loader.check_event():
            event = loader.get_event()
            events.append(event)
            event_of(event)
        return self.root

    def _mark(self) -> int:
        return len(self.events) - 1      # the event being built (while replaying: not remembered)

    def _remember(self, anchor: str, value, start: int, levels: int) -> None:
        if not self.replaying:
            self.anchors[anchor] = (start, len(self.events) - 1)

    def _expand(self, event, target: tuple[int, int]) -> None:
        self.targets[len(self.events) - 1] = target
        self.expanding, self.replaying = event, True
        self._replay(*target)
        self.expanding, self.replaying = None, False

    def _replay(self, first: int, last: int) -> None:
        """Build the events first..last again (an alias's expansion)."""
        for index in range(first, last + 1):
            event = self.events[index]
            if type(event) is AliasEvent:
                self._replay(*self.targets[index])
            else:
                self._event(event)

    def _place(self, event) -> Path_:
        path = self._path()
        self.lines.setdefault(path, event.start_mark.line + 1)
        return path

    def _path(self) -> Path_:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if type(frame.value) is list:
            return frame.path + (len(frame.value),)
        return frame.path if frame.key is _NO_KEY else frame.path + (frame.key,)

    def open_path(self) -> Path_:
        """The key whose value the parser was reading, or the collection it was in."""
        if not self.stack:
            return ()
        frame = self.stack[-1]
        return frame.path + (frame.key,) if type(frame.value) is dict and frame.key is not _NO_KEY else frame.path

    def _key(self, frame: _Frame, key, event) -> None:
        super()._key(frame, key, event)
        self.lines[frame.path + (key,)] = event.start_mark.line + 1


class Sharing(Builder):
    """Aliases expanded by attaching their anchor's value itself, counted by its size.

    Nothing is copied and no event kept: an anchor remembers its value, the
    values it holds and its depth, so an alias costs one step however large,
    and still counts towards the limit and the nesting it adds.
    """

    def run(self, loader) -> Any:
        """The walk, with its most common event inline: a plain scalar without anchor
        in an open collection (a report holds hundreds of thousands)."""
        cache, stack, event_of, key_types = self.plain, self.stack, self._event, self.rules.key_types
        while loader.check_event():
            event = loader.get_event()
            if (type(event) is ScalarEvent and event.tag is None and event.implicit[0] and not event.anchor
                    and stack and self.count < self.limit):
                value = cache.get(event.value, _NO_KEY)
                if value is _NO_KEY:
                    value = self._plain(event, ())
                self.count += 1
                frame = stack[-1]
                container = frame.value
                if type(container) is list:
                    container.append(value)
                elif frame.key is not _NO_KEY:
                    container[frame.key] = value
                    frame.key = _NO_KEY
                elif type(value) in key_types and value not in container:
                    frame.key = value
                else:
                    self._key(frame, value, event)
                continue
            event_of(event)
        return self.root

    def _mark(self) -> int:
        return self.count

    def _remember(self, anchor: str, value, start: int, levels: int) -> None:
        self.anchors[anchor] = (value, self.count - start + 1, levels)

    def _expand(self, event, target: tuple[Any, int, int]) -> None:
        value, size, levels = target
        if len(self.stack) + levels > MAX_DEPTH:
            raise self._error("deep alias", event, anchor=event.anchor)
        self._count(size, event, ())
        self._attach(value, event, levels)


def _bool(text: str) -> bool:
    value = _BOOLS.get(text.lower())
    if value is None:
        raise ValueError("a boolean is true or false (or yes, no, on, off)")
    return value


def _timestamp(text: str):
    if not _SAFE.timestamp_regexp.match(text):
        raise ValueError("a timestamp is a date (2026-11-01) or a date and time")
    return _SAFE.construct_yaml_timestamp(yaml.ScalarNode(TAG + "timestamp", text))


def _number(tag: str):
    construct = _SAFE.yaml_constructors[tag]
    return lambda text: construct(_SAFE, yaml.ScalarNode(tag, text))


_BUILD: dict[str, Callable[[str], Any]] = {   # the plain types a file may hold, beside text
    TAG + "null": lambda text: None,
    TAG + "bool": _bool,
    TAG + "int": _number(TAG + "int"),
    TAG + "float": _number(TAG + "float"),
    TAG + "timestamp": _timestamp,
}


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def _brief(path: Path_) -> str | None:
    """A key path short enough for a message: a 5,000-deep one shows its first levels."""
    if len(path) > 8:
        return f"{dotted(path[:4])}… ({len(path)} levels)"
    return dotted(path) or None


def _shown(tag: str) -> str:
    return "!!" + tag[len(TAG):] if tag.startswith(TAG) else tag


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
