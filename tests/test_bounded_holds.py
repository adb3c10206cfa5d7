"""``bounded.holds``: whether a file already holds a build's output, by comparing bytes (the
build's ``write`` skips such a file), never reading what is no regular file or of another size."""

from __future__ import annotations

import os

from capplan import bounded, build

CHUNK = 2 ** 20


def test_a_file_holds_its_bytes_and_not_others_of_any_length(tmp_path):
    content = bytes(range(256)) * (CHUNK // 128 + 3)          # over two chunks
    path = tmp_path / "out.xlsx"
    path.write_bytes(content)
    assert bounded.holds(path, content)
    last = content[:-1] + bytes([content[-1] ^ 1])             # the last byte of the last chunk differs
    first_of_second = bytearray(content)
    first_of_second[CHUNK] ^= 1
    for other in (last, bytes(first_of_second), content[:-1], content + b"\0", b""):
        assert not bounded.holds(path, other)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert bounded.holds(empty, b"") and not bounded.holds(empty, b"x")


def test_no_regular_file_holds_anything_and_none_is_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)                                # read, it would hang: the test's timeout says so
    (tmp_path / "folder").mkdir()
    for path in (fifo, tmp_path / "folder", tmp_path / "gone", tmp_path / "fifo-link"):
        if path.name == "fifo-link":
            path.symlink_to(fifo)
        assert not bounded.holds(path, b"")


def test_the_build_leaves_a_file_with_the_same_bytes_unwritten(tmp_path):
    out = tmp_path / "out"
    assert build.write(out, {"a.json": b"{}\n", "b.md": b"# b\n"}) == [out / "a.json", out / "b.md"]
    before = (out / "a.json").stat().st_mtime_ns, (out / "a.json").stat().st_ino
    assert build.write(out, {"a.json": b"{}\n", "b.md": b"# B\n"}) == [out / "b.md"]
    assert ((out / "a.json").stat().st_mtime_ns, (out / "a.json").stat().st_ino) == before
