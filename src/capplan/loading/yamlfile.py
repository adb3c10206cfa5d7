"""Read YAML and remember where every key came from.

Error messages name the line of the offending key, so the loader keeps a map
from a key path (``("inputs", "peak_arrival_rate")``) to its line. Duplicate
keys, which PyYAML silently lets the last one win, are an error here.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from capplan.errors import CapplanError

Path_ = tuple  # a key path: ('tables', 'classes', 'rows', 2, 'weight')


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
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CapplanError(f"cannot read file: {err.strerror if isinstance(err, OSError) else err}", file=file) from None
    return parse(text, file)


def parse(text: str, file: str) -> Document:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise CapplanError(f"malformed YAML: {problem}", file=file,
                           line=mark.line + 1 if mark else None) from None
    lines: dict[Path_, int] = {}
    constructor = yaml.SafeLoader("")
    data = _build(root, (), lines, constructor, file) if root is not None else None
    return Document(data, lines, file)


def _build(node, path, lines, constructor, file):
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float)):
                raise CapplanError("a key must be text", file=file, line=key_node.start_mark.line + 1)
            if key in out:
                raise CapplanError(f"duplicate key '{key}'", file=file, key=dotted(path) or None,
                                   line=key_node.start_mark.line + 1)
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _build(value_node, path + (key,), lines, constructor, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), lines, constructor, file) for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)
