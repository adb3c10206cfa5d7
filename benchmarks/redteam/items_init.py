"""Issue 37's cases about ``capplan init``: its file-system errors (7), links it must not write
through (12), and the TODOs it writes, which ``check`` must report until they are replaced (15)."""

from __future__ import annotations

from pathlib import Path

from .common import capplan, expect, said


def file_for_folder_and_long_name(folder: Path) -> str:
    (folder / "afile").write_text("notes\n")
    done = capplan(folder, "init", "afile")
    expect(done.returncode == 2 and "FOLDER afile" in done.stderr, done, "init afile")
    long = capplan(folder, "init", "--name", "x" * 300)
    expect(long.returncode == 2 and "--name" in long.stderr, long, "init --name of 300 characters")
    return f"{said(done)}; --name x*300: {said(long)}"


def links_out_of_the_project(folder: Path) -> str:
    (folder / ".git").mkdir()                                  # a repository, as capplan finds one
    outside = folder.parent / f"{folder.name}.outside"
    outside.mkdir()
    (outside / "attributes").write_text("*.bin binary\n")
    (folder / ".gitattributes").symlink_to(outside / "attributes")
    done = capplan(folder, "init")
    expect(done.returncode == 1 and (outside / "attributes").read_text() == "*.bin binary\n"
           and not (folder / "plans").exists(), done, "init through a .gitattributes linked outside")
    (folder / ".gitattributes").unlink()
    (folder / "plans").symlink_to(outside)
    linked = capplan(folder, "init")
    expect(linked.returncode == 1 and not list(outside.glob("*.yaml")), linked, "init through plans/ linked outside")
    return f".gitattributes: {said(done)}; plans/: {said(linked)}"


def todos_are_warnings(folder: Path) -> str:
    done = capplan(folder, "init", "--name", "first")
    expect(done.returncode == 0, done, "init")
    built = capplan(folder, "build")
    expect(built.returncode == 0, built, "build of init's plan")
    checked = capplan(folder, "check")
    warned = checked.stderr
    for key in ("owner", "inputs.ttft_p95_slo.source", "inputs.e2e_p99_slo.source", "tables.classes.source",
                "tables.deployments.rows[0].source"):
        expect(f": {key}: " in warned, checked, f"check does not warn about the TODO of {key}")
    strict = capplan(folder, "check", "--strict")
    expect(strict.returncode == 1, strict, "check --strict passes init's TODOs")
    count = next(line for line in warned.splitlines() if "warning(s)" in line)
    return f"check: {count.strip()}; --strict exit {strict.returncode}"


CASES = [
    (7, "init on a file for FOLDER and on a 300-character --name", file_for_folder_and_long_name),
    (12, "init through a .gitattributes or plans/ linked outside the project", links_out_of_the_project),
    (15, "every TODO init writes is a check warning until replaced", todos_are_warnings),
]
