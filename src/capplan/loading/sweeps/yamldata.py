"""A YAML benchmark report (GuideLLM's ``benchmarks.yaml``) as Python data, bounded and lean.

The plan reader (:mod:`capplan.language.yamlfile`) keeps every event and the
line of every value, which a plan needs for its messages; a report of a
hundred thousand values does not, and that bookkeeping made a YAML import
take several times the time and memory of the same data as JSON. Here
libyaml's events are turned into values in one pass and dropped.

The limits are the plan reader's: plain types only (null, bool, int, float,
text; a timestamp stays text; any other tag is refused), nesting at most
:data:`~capplan.language.yamlfile.MAX_DEPTH` levels, numbers of at most
:data:`~capplan.language.yamlfile.MAX_NUMBER_CHARS` characters, and no more
values than the text has characters once aliases are expanded (the
"billion laughs" bomb). An alias shares its anchor's value (nothing is
copied) and counts its expanded size; an alias to a collection still open
(a value that holds itself) is refused.
"""

from __future__ import annotations

from typing import Any

import yaml

from capplan.errors import CapplanError
from capplan.language.yamlfile import MAX_DEPTH, MAX_NUMBER_CHARS

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_CONSTRUCT = {_TAG + "int": _CONSTRUCTOR.construct_yaml_int, _TAG + "float": _CONSTRUCTOR.construct_yaml_float}
_BOOL = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_COLLECTION_TAGS = (None, "!", _TAG + "map", _TAG + "seq")


class _Builder:
    """Values from events: a stack of open collections, the anchors seen, the values counted."""

    def __init__(self, text: str):
        self.loader = _LOADER(text)
        self.limit = max(len(text), 1)
        self.count = 0
        self.anchors: dict[str, tuple[Any, int, int]] = {}    # name -> (value, values expanded, levels)
        self.stack: list[list] = []       # [collection, key or _NO_KEY, anchor, first count, deepest level]
        self.root: Any = None
        self.documents = 0
        self.plain: dict[str, Any] = {}     # a plain scalar's text -> its value (keys repeat in every record)

    def run(self) -> Any:
        loader, cache, stack, event_of = self.loader, self.plain, self.stack, self._event
        try:
            while loader.check_event():
                event = loader.get_event()
                # the common case inline: a plain scalar without anchor in an open collection
                if (type(event) is yaml.ScalarEvent and event.tag is None and event.implicit[0] and not event.anchor
                        and stack and self.count < self.limit):
                    value = cache.get(event.value, _NO_KEY)
                    if value is _NO_KEY:
                        value = cache[event.value] = self._scalar(event)
                    self.count += 1
                    frame = stack[-1]
                    container = frame[0]
                    if type(container) is list:
                        container.append(value)
                    elif frame[1] is _NO_KEY:
                        frame[1] = value
                    else:
                        container[frame[1]] = value
                        frame[1] = _NO_KEY
                    continue
                event_of(event)
        finally:
            loader.dispose()
        return self.root

    def _event(self, event) -> None:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            self._add(self._scalar(event), 1, 0, event)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.tag not in _COLLECTION_TAGS:
                raise _error(f"unsupported YAML: the tag {event.tag!r} is not a plain mapping or list", event)
            if len(self.stack) >= MAX_DEPTH:
                raise _error(f"the YAML nests deeper than {MAX_DEPTH} levels; a benchmark report needs a handful "
                             "(see docs/limits.md)", event)
            self._count(1, event)
            self.stack.append([{} if kind is yaml.MappingStartEvent else [], _NO_KEY, event.anchor, self.count, 1])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            value, _, anchor, first, levels = self.stack.pop()
            size = self.count - first + 1
            if anchor:
                self.anchors[anchor] = (value, size, levels)
            self._attach(value, levels, event)
        elif kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise _error("the file holds a second YAML document (---); a report is one", event)
        elif kind is yaml.AliasEvent:
            if event.anchor not in self.anchors:
                why = ("refers to a collection that contains it" if any(f[2] == event.anchor for f in self.stack)
                       else "has no anchor &" + event.anchor + " before it")
                raise _error(f"the YAML alias *{event.anchor} {why}", event)
            value, size, levels = self.anchors[event.anchor]
            if len(self.stack) + levels > MAX_DEPTH:
                raise _error(f"the YAML nests deeper than {MAX_DEPTH} levels once alias *{event.anchor} is expanded "
                             "(see docs/limits.md)", event)
            self._add(value, size, levels, event)

    def _count(self, values: int, event) -> None:
        self.count += values
        if self.count > self.limit:
            raise _error(f"the YAML holds more than {self.limit:,} values once its aliases (*name) are expanded, "
                         "more than it has characters (see docs/limits.md)", event)

    def _add(self, value: Any, size: int, levels: int, event) -> None:
        """A scalar (size 1) or an alias's value (its expanded size) in the open collection."""
        self._count(size, event)
        if isinstance(event, yaml.ScalarEvent) and event.anchor:
            self.anchors[event.anchor] = (value, 1, 0)
        self._attach(value, levels, event)

    def _attach(self, value: Any, levels: int, event) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame[4] = max(frame[4], levels + 1)
        container = frame[0]
        if isinstance(container, list):
            container.append(value)
        elif frame[1] is _NO_KEY:
            if isinstance(value, (dict, list)):
                raise _error("a key of the YAML is a mapping or list, not text", event)
            frame[1] = value
        else:
            container[frame[1]] = value
            frame[1] = _NO_KEY

    def _scalar(self, event) -> Any:
        value, tag = event.value, event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return value                         # quoted: text
            tag = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
        if tag == _TAG + "str" or tag == _TAG + "timestamp" or tag == _TAG + "merge":
            return value
        if tag == _TAG + "null":
            return None
        if tag == _TAG + "bool":
            return _BOOL[value.lower()]
        if tag not in _CONSTRUCT:
            raise _error(f"unsupported YAML: the tag {tag!r} is not a plain type (null, bool, int, float, text)",
                         event)
        if len(value) > MAX_NUMBER_CHARS:
            raise _error(f"a number of {len(value):,} characters; numbers of at most {MAX_NUMBER_CHARS} are read "
                         "(see docs/limits.md)", event)
        return _CONSTRUCT[tag](yaml.ScalarNode(tag, value))


_NO_KEY = object()


def _error(message: str, event) -> CapplanError:
    line = event.start_mark.line + 1 if event.start_mark else None
    return CapplanError(message, line=line)


def load_yaml(text: str) -> Any:
    """The value of one YAML data file, within the limits the module states."""
    try:
        return _Builder(text).run()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CapplanError(f"malformed YAML: {problem}", line=mark.line + 1 if mark else None) from None
