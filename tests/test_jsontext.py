"""The JSON writer gives json.dumps(indent=2, ensure_ascii=False, allow_nan=False)'s text, byte for byte."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import pytest

from capplan.rendering import jsontext

ROOT = Path(__file__).resolve().parents[1]


def _standard(doc) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)


class Size(enum.IntEnum):
    SMALL = 1


class Ratio(float):
    pass


DOCS = [
    {},
    [],
    "plain",
    None,
    True,
    0,
    -3,
    1.5,
    1e-300,
    2 ** 80,
    {"a": {}, "b": [], "c": [[], {}], "d": [{"e": [1, 2.5, None, True, False, "x"]}]},
    {"unicode": "λ* — 25 µs ≤ 1 ✓", "control": "tab\there\nnew \"quoted\" \\ \x00\x1f\u2028"},
    ("a", ("b", 1)),
    {"nested": [[[[{"deep": [0.1, 1e16, -0.0, 123456789012.0]}]]]]},
    {1: "int key", 2.5: "float key", True: "bool key", None: "none key"},
    {"enum": Size.SMALL, "sub": Ratio(0.25)},
]


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_same_text_as_json(doc):
    assert jsontext.dumps(doc) == _standard(doc)


@pytest.mark.parametrize("bad", [float("nan"), {"x": [float("inf")]}, {"x": object()}, {"x": {1, 2}},
                                 {"long": list(range(10)) + [float("nan")]},            # the C encoder's path
                                 {"rows": [{"a": 1.0}, {"a": float("-inf")}]}])
def test_same_errors_as_json(bad):
    with pytest.raises((ValueError, TypeError)) as standard:
        _standard(bad)
    with pytest.raises(type(standard.value)) as ours:
        jsontext.dumps(bad)
    assert str(ours.value) == str(standard.value)


def test_a_cycle_is_reported_as_json_reports_it():
    loop: dict = {}
    loop["self"] = [loop]
    with pytest.raises(ValueError, match="Circular reference"):
        jsontext.dumps(loop)


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "out").glob("*.json") if p.name != "manifest.json"), ids=lambda p: p.name)
def test_committed_documents_written_again_unchanged(path):
    text = path.read_text(encoding="utf-8")
    assert jsontext.dumps(json.loads(text)) + "\n" == text


SHARED_ROW = {"a": 1, "b": "x"}
SHARED_LIST = ["p", "q"]
MORE_DOCS = [
    # the same objects at one depth and at others: each written where it stands, indented there
    {"x": [SHARED_ROW, SHARED_ROW], "y": {"deeper": [SHARED_ROW, {"z": SHARED_LIST}]}, "w": SHARED_LIST},
    # a table's rows (a list of dicts of scalars) and long containers of scalars, which the C encoder writes
    {"rows": [{"n": i, "rate": i / 7, "ok": i % 2 == 0, "name": f"r{i}", "missing": None} for i in range(30)]},
    {"long": list(range(20)) + [0.5, "s", None, True], "keys": {f"k{i}": i * 1.5 for i in range(12)}},
    # rows whose strings hold what the rows' boundary looks like, and an empty row among them
    {"rows": [{"t": "},\n      {", "u": '{"}'}, {"t": "]"}]},
    {"rows": [{"a": 1}, {}, {"a": 2}]},
    [[{"a": 1}, {"a": 2}], [[1, 2], [3]], ({"t": 1}, {"t": 2})],
    {"hole": "\x00", "inner": {"x": ["\x00", {"y": "\x00"}]}},
    {"rows": [{1: "a"}, {2: "b"}]},
]


@pytest.mark.parametrize("doc", MORE_DOCS, ids=range(len(MORE_DOCS)))
def test_shared_objects_rows_and_long_containers_as_json(doc):
    assert jsontext.dumps(doc) == _standard(doc)


def test_a_shared_container_is_written_once():
    """A container met again repeats the pieces written the first time: the C encoder is
    called for the first of 50 references to a long list of scalars only."""
    row = list(range(40))
    doc = {"rows": [{"same": row, "i": i} for i in range(50)]}
    writer = jsontext.Writer()
    calls = []
    real = writer.encoder
    writer.encoder = lambda level: calls.append(level) or real(level)
    writer.container(doc, 0)
    assert "".join(writer.out) == _standard(doc)
    assert len(calls) == 1


def test_a_document_written_around_parts_written_before_is_the_whole_text():
    """Parts written one call at a time, some by another writer and sent pickled (as a build's
    child sends its scenarios), placed in a document give its text in UTF-8; a container a
    later call meets again is repeated, not written again."""
    import pickle

    shared_row = list(range(40))
    parts = {f"s{i}": {"rows": [{"same": shared_row, "i": i}], "title": f"λ {i} ≤ µ"} for i in range(12)}
    whole = {"head": [1, 2], "scenarios": parts, "tail": {"x": "—"}}
    mine, theirs = jsontext.Writer(), jsontext.Writer()
    calls = []
    real = mine.encoder
    mine.encoder = lambda level: calls.append(level) or real(level)
    written = {name: (mine if i % 2 else theirs).part(part, 2) for i, (name, part) in enumerate(parts.items())}
    written = {name: w if i % 2 else pickle.loads(pickle.dumps(w)) for i, (name, w) in enumerate(written.items())}
    assert mine.encoded({**whole, "scenarios": written}, "\n") == (_standard(whole) + "\n").encode("utf-8")
    assert calls == [6]                     # the shared row: once among the six parts of this writer
    assert '\n    "s1": ' + mine.text(parts["s1"], 2) + ",\n" in _standard(whole)


def test_a_part_the_fast_path_leaves_to_json_is_none_and_spoils_nothing_after_it():
    writer = jsontext.Writer()
    assert writer.part({"bad": {1, 2}}, 1) is None
    assert writer.part({"enum": Size.SMALL}, 1) is None
    assert writer.encoded({"x": {1}}) is None
    doc = {"after": [list(range(10)), {"k": "v"}]}
    assert writer.text(doc) == _standard(doc)
