"""Read YAML and remember where every key came from.

Error messages name the line of the offending key, so the loader keeps a map
from a key path (``("inputs", "peak_arrival_rate")``) to its line. Duplicate
keys, which PyYAML silently lets the last one win, are an error here.

A plan may come from an untrusted pull request, so the loader builds the data
itself from PyYAML's event stream (libyaml's C parser when PyYAML has it, the
pure-Python one otherwise) instead of composing and constructing a node
graph: the events carry the line numbers, and building from them with an
explicit stack lets the loader bound what a few bytes can cost. It refuses a
file larger than :data:`MAX_BYTES`, nesting deeper than :data:`MAX_DEPTH`,
more than :data:`MAX_VALUES` values once aliases are expanded (the "billion
laughs" alias bomb), tags other than YAML's plain types (``!!python/...``,
``!!binary``, merge keys) and numbers too long to be a plan value.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path

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

from capplan import bounded
from capplan.errors import CapplanError

Path_ = tuple  # a key path: ('tables', 'classes', 'rows', 2, 'weight')

MAX_BYTES = 4 * 1024 * 1024      # a plan of a thousand sweep rows is ~100 KB
MAX_DEPTH = 64                   # plans nest six levels deep
MAX_VALUES = 20_000              # values after alias expansion; the standard model holds 1,333, a plan ~400
MAX_NUMBER_CHARS = 100           # a float needs 25; anything longer is not a measured value

_LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp")}
_NUMBER_TAGS = {_TAG + "int", _TAG + "float"}
_MAP, _SEQ, _STR = _TAG + "map", _TAG + "seq", _TAG + "str"
_SURROGATE = re.compile("[\ud800-\udfff]")
_NODE_EVENTS = {ScalarEvent, SequenceStartEvent, MappingStartEvent, SequenceEndEvent, MappingEndEvent}


class Document:
    """Parsed YAML plus the line of each key path."""

    def __init__(self, data, lines: dict[Path_, int], file: str):
        self.data = data
        self.lines = lines
        self.file = file

    def line(self, path: Path_) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, message: str, path: Path_ = ()) -> CapplanError:
        return CapplanError(message, file=self.file, key=dotted(path) or None, line=self.line(tuple(path)))


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def read(path: Path, display: str | None = None) -> Document:
    file = display or str(path)
    try:
        text = bounded.read(path, MAX_BYTES).decode("utf-8")    # never a device, a FIFO or more than the limit
    except bounded.TooLarge:
        raise _too_large(file) from None
    except bounded.NotRegular:
        raise CapplanError("cannot read file: not a regular file (a device, a FIFO or a folder)", file=file) from None
    except (OSError, UnicodeDecodeError) as err:
        raise CapplanError(f"cannot read file: {err.strerror if isinstance(err, OSError) else err}", file=file) from None
    return parse(text, file)


def _check_size(size: int, file: str) -> None:
    if size > MAX_BYTES:
        raise _too_large(file)


def _too_large(file: str) -> CapplanError:
    return CapplanError(f"the file is larger than {MAX_BYTES // 2 ** 20} MiB; a plan needs far less", file=file)


def parse(text: str, file: str) -> Document:
    _check_size(len(text), file)
    builder = _Builder(file, MAX_VALUES)
    loader = _LOADER(text)
    collecting = gc.isenabled()
    gc.disable()        # the events stay alive while the data grows: the cyclic GC would rescan them all
    try:
        builder.run(loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
        raise CapplanError(f"malformed YAML: {problem}{_glob_hint(line)}", file=file,
                           key=_brief(builder.open_path()), line=mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()
    return Document(builder.root, builder.lines, file)


class _Frame:
    """A mapping or sequence being filled, and the key waiting for its value."""

    __slots__ = ("anchor", "first", "key", "key_set", "path", "value")

    def __init__(self, value, path, anchor, first):
        self.value = value
        self.path = path
        self.key = None
        self.key_set = False
        self.anchor = anchor        # the anchor (&name) of this collection, registered when it is complete
        self.first = first          # index of its start event


class _Builder:
    """Python data from a YAML event stream, with lines, limits and expanded aliases.

    Every event is kept (indexed) so that an alias can replay the events of
    its anchor: each expansion yields fresh objects and fresh line entries
    for the new key path, and counts towards :data:`MAX_VALUES`.
    """

    def __init__(self, file: str, max_values: int):
        self.file = file
        self.max_values = max_values
        self.root = None
        self.lines: dict[Path_, int] = {}
        self.events: list = []
        self.anchors: dict[str, tuple[int, int]] = {}    # name -> first, last event index
        self.targets: dict[int, tuple[int, int]] = {}    # alias event index -> the events it stands for
        self.stack: list[_Frame] = []
        self.count = 0
        self.documents = 0
        self.expanding = None       # the alias being expanded: where an error during its expansion points

    def run(self, loader) -> None:
        events = self.events
        while loader.check_event():
            event = loader.get_event()
            events.append(event)
            kind = type(event)
            if kind in _NODE_EVENTS:
                self._node(len(events) - 1, event, replay=False)
            elif kind is AliasEvent:
                self._alias(len(events) - 1, event)
            elif kind is DocumentStartEvent:
                self.documents += 1
                if self.documents > 1:
                    raise self._error("a plan file holds one YAML document; found a second one (---)", event)

    # -- one event -------------------------------------------------------------
    def _node(self, index: int, event, replay: bool) -> None:
        kind = type(event)
        if kind is SequenceEndEvent or kind is MappingEndEvent:
            frame = self.stack.pop()
            if frame.anchor and not replay:
                self.anchors[frame.anchor] = (frame.first, index)
            self._attach(frame.value, event)
            return
        self.count += 1
        if self.count > self.max_values:
            aliases = " once its aliases (*name) are expanded" if self.targets else ""
            raise self._error(f"the YAML holds more than {self.max_values:,} values{aliases}; a plan needs far fewer",
                              self.expanding or event, self._path(event))
        path = self._path(event)
        self.lines.setdefault(path, event.start_mark.line + 1)
        if kind is ScalarEvent:
            value = self._scalar(event, path)
            if event.anchor and not replay:
                self.anchors[event.anchor] = (index, index)
            self._attach(value, event)
            return
        if self.stack and isinstance(self.stack[-1].value, dict) and not self.stack[-1].key_set:
            raise self._error("a key must be text", event, self.stack[-1].path)
        tag = event.tag if event.tag not in (None, "!") else (_MAP if isinstance(event, MappingStartEvent) else _SEQ)
        if tag != (_MAP if isinstance(event, MappingStartEvent) else _SEQ):
            raise self._error(_unsupported(tag), event, path)
        if len(self.stack) >= MAX_DEPTH:
            raise self._error(f"the YAML nests deeper than {MAX_DEPTH} levels; a plan needs a handful", event, path)
        self.stack.append(_Frame({} if isinstance(event, MappingStartEvent) else [], path,
                                 None if replay else event.anchor, index))

    def _alias(self, index: int, event) -> None:
        target = self.anchors.get(event.anchor)
        if target is None:
            opening = any(frame.anchor == event.anchor for frame in self.stack)
            why = "refers to a collection that contains it" if opening else "has no anchor &" + event.anchor + " before it"
            raise self._error(f"alias *{event.anchor} {why}{_glob_hint('*' + event.anchor)}", event, self._path(event))
        self.targets[index] = target
        self.expanding = event
        self._replay(*target)
        self.expanding = None

    def _replay(self, first: int, last: int) -> None:
        """Build the events first..last again (an alias's expansion)."""
        for index in range(first, last + 1):
            event = self.events[index]
            if isinstance(event, AliasEvent):
                self._replay(*self.targets[index])
            else:
                self._node(index, event, replay=True)

    # -- values ------------------------------------------------------------------
    def _scalar(self, event, path):
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:       # quoted: text, no resolving
                return self._text(event, path)
            tag = _CONSTRUCTOR.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR:
            return self._text(event, path)
        if tag not in _SCALAR_TAGS:
            raise self._error(_unsupported(tag), event, path)
        if tag in _NUMBER_TAGS and len(event.value) > MAX_NUMBER_CHARS:
            raise self._error(f"a number of {len(event.value):,} characters is not a plan value "
                              f"(at most {MAX_NUMBER_CHARS})", event, path)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, node)
        except (ValueError, OverflowError, yaml.YAMLError) as err:
            raise self._error(f"'{_short(event.value)}' is not a valid {tag[len(_TAG):]}: {err}", event, path) from None

    def _text(self, event, path) -> str:
        """A text scalar. An escape such as "\\uD800" gives half of a UTF-16 pair, no
        character: libyaml refuses it, the pure-Python parser does not, and no output
        could be written with it; so both refuse it here."""
        value = event.value
        if not value.isascii() and (half := _SURROGATE.search(value)):
            raise self._error(f"the text holds U+{ord(half.group()):04X}, half of a UTF-16 surrogate pair, "
                              "which is no character", event, path)
        return value

    def _attach(self, value, event) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if isinstance(frame.value, list):
            frame.value.append(value)
            return
        if not frame.key_set:
            if not isinstance(value, (str, int, float)):
                raise self._error("a key must be text", event, frame.path)
            if value in frame.value:
                raise self._error(f"duplicate key '{value}'", event, frame.path)
            frame.key, frame.key_set = value, True
            self.lines[frame.path + (value,)] = event.start_mark.line + 1
            return
        frame.value[frame.key] = value
        frame.key_set = False

    def _path(self, event) -> Path_:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if isinstance(frame.value, list):
            return frame.path + (len(frame.value),)
        return frame.path + (frame.key,) if frame.key_set else frame.path

    def open_path(self) -> Path_:
        """The key path being read when the parser fails: the key whose value it was
        reading, or the list it was in."""
        if not self.stack:
            return ()
        frame = self.stack[-1]
        return frame.path + (frame.key,) if isinstance(frame.value, dict) and frame.key_set else frame.path

    def _error(self, message: str, event, path: Path_ = ()) -> CapplanError:
        return CapplanError(message, file=self.file, key=_brief(path), line=event.start_mark.line + 1)


def _brief(path: Path_) -> str | None:
    """A key path short enough for a message: a 5,000-deep one shows its first levels."""
    if len(path) > 8:
        return f"{dotted(path[:4])}… ({len(path)} levels)"
    return dotted(path) or None


def _unsupported(tag: str) -> str:
    if tag == _TAG + "merge":
        return "merge keys (<<) are not supported; write the keys out (an alias *name repeats a whole value)"
    shown = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
    return f"unsupported YAML tag '{shown}' (a plan holds text, numbers, dates, true/false, lists and mappings)"


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


_CONSTRUCTOR = yaml.SafeLoader("")   # resolves plain scalars and constructs them (YAML 1.1 types)


_UNQUOTED_GLOB = re.compile(r"(^|[\[,:\-{]\s*)\*")


def _glob_hint(line: str) -> str:
    """YAML reads a value that starts with ``*`` as an alias: a file glob such as
    ``[*.json]`` must be quoted."""
    if not _UNQUOTED_GLOB.search(line.strip()):
        return ""
    return ("; a value starting with * is a YAML alias: quote a file glob, e.g. "
            "import: ['*.json'] or import: \"sweeps/*.json\"")
