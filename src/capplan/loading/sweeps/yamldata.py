"""A YAML benchmark report (GuideLLM's ``benchmarks.yaml``) as Python data, bounded and lean.

Built by the plan's event builder (:mod:`capplan.language.yamlevents`) with
the other alias strategy: a report of a hundred thousand values needs no
line per key path, and replaying aliases to give each one made a YAML import
cost several times the same data as JSON. So an alias shares its anchor's
value and counts its size, and no event is kept. The limits are a plan's,
but no more values than the text has characters once aliases are expanded;
:data:`REPORT` is looser than a plan where a tool's output may be (a
timestamp and ``<<`` stay text, a key may be any plain value, the last of a
repeated key wins).
"""

from __future__ import annotations

from typing import Any

from capplan.language import yamlevents

REPORT = yamlevents.Rules(
    messages={
        "documents": "the file holds a second YAML document (---); a report is one",
        "count": "the YAML holds more than {limit:,} values once its aliases (*name) are expanded, "
                 "more than it has characters (see docs/limits.md)",
        "count aliased": "the YAML holds more than {limit:,} values once its aliases (*name) are expanded, "
                         "more than it has characters (see docs/limits.md)",
        "depth": "the YAML nests deeper than {depth} levels; a benchmark report needs a handful (see docs/limits.md)",
        "deep alias": "the YAML nests deeper than {depth} levels once alias *{anchor} is expanded "
                      "(see docs/limits.md)",
        "alias": "the YAML alias *{anchor} {why}",
        "key": "a key of the YAML is a mapping or list, not text",
        "collection tag": "unsupported YAML: the tag {tag!r} is not a plain mapping or list",
        "scalar tag": "unsupported YAML: the tag {tag!r} is not a plain type (null, bool, int, float, text)",
        "number": "a number of {length:,} characters; numbers of at most {most} are read (see docs/limits.md)",
        "invalid": "'{text}' is not a valid {kind}: {reason}",
        "surrogate": "the text holds U+{code:04X}, half of a UTF-16 surrogate pair, which is no character",
        "malformed": "malformed YAML: {problem}",
    },
    text_tags=frozenset({yamlevents.TAG + "str", yamlevents.TAG + "timestamp", yamlevents.TAG + "merge"}),
    key_types=frozenset({str, int, float, bool, type(None)}),
    duplicate_keys=True,
)


def load_yaml(text: str) -> Any:
    """The value of one YAML data file, within the limits the module states."""
    return yamlevents.build(yamlevents.Sharing(REPORT, max(len(text), 1)), text)
