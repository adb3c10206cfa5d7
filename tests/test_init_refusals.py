"""What ``capplan init`` refuses before it writes anything (issue 37, items 7 and 12).

A folder argument that is a file, a ``--name`` too long for the file system or a
``plans/`` that is a file is one message naming the argument (exit 2 for the command
line, 1 for the project's files), never exit 3. And init writes only inside the
project, as a plan's imports read only inside it: a ``.gitattributes``, ``plans/``
or plan file that is a symlink leading outside the repository is refused, and
nothing is written, neither outside nor in the project.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def project(tmp_path):
    """A project folder in a git repository (found by its ``.git``), and an ``outside`` folder beside it."""
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return folder


def test_a_folder_that_is_a_file_is_a_usage_error(project, run_main):
    (project / "afile").write_text("notes\n")
    code, out, err = run_main("init", "afile", cwd=project)
    assert code == 2, err
    assert err.startswith("capplan init: error: FOLDER afile is not a folder: give the project folder") \
        and "Traceback" not in err
    assert (project / "afile").read_text() == "notes\n"
    code, out, err = run_main("init", "afile/sub", cwd=project)          # a folder to make, under a file
    assert code == 2 and "FOLDER afile/sub is not a folder (afile is no folder)" in err


def test_a_name_too_long_for_the_file_system_is_a_usage_error_and_leaves_nothing(project, run_main):
    code, out, err = run_main("init", "--name", "x" * 300, cwd=project)
    assert code == 2, err
    assert "capplan init: error: --name: " in err and "File name too long" in err and "give a shorter --name" in err
    assert sorted(os.listdir(project)) == [".git"]


def test_plans_that_is_a_file_is_refused_by_name(project, run_main):
    (project / "plans").write_text("")
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert "error: plans is not a folder: capplan init writes its plan in plans/" in err
    assert not (project / ".gitattributes").exists()


def test_a_gitattributes_that_is_a_folder_or_a_fifo_is_refused_before_the_plan_is_written(project, run_main):
    (project / ".gitattributes").mkdir()
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert "error: .gitattributes: cannot read it: not a regular file (a device, a FIFO or a folder)" in err
    assert not (project / "plans").exists()
    (project / ".gitattributes").rmdir()
    os.mkfifo(project / ".gitattributes")                    # read as it was, it blocked for ever
    code, out, err = run_main("init", cwd=project)
    assert code == 1 and "not a regular file" in err


def test_a_gitattributes_linked_outside_the_repository_is_refused(project, run_main):
    outside = project.parent / "outside" / "attributes"
    outside.write_text("*.bin binary\n")
    (project / ".gitattributes").symlink_to(outside)
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert (f"error: .gitattributes is a symlink to '{outside}', a file outside the project's repository; "
            "capplan init writes only inside it, so it does not follow the link") in err
    assert outside.read_text() == "*.bin binary\n"
    assert not (project / "plans").exists()                  # refused before anything was written


def test_plans_linked_to_a_folder_outside_is_refused(project, run_main):
    (project / "plans").symlink_to(project.parent / "outside")
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert "error: plans is a symlink to" in err and "a folder outside the project's repository" in err
    assert os.listdir(project.parent / "outside") == []
    assert not (project / ".gitattributes").exists()


def test_a_plan_file_linked_outside_is_never_written_through(project, run_main):
    (project / "plans").mkdir()
    target = project / "plans" / "llama-3.1-8b-h100-sxm5-80gb.yaml"
    target.symlink_to(project.parent / "outside" / "planted.yaml")       # dangling: it names no file yet
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert "plans/llama-3.1-8b-h100-sxm5-80gb.yaml is a symlink to" in err
    assert os.listdir(project.parent / "outside") == []


def test_outside_a_repository_the_folder_is_the_bound(tmp_path, run_main):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / ".gitattributes").symlink_to(tmp_path / "outside.txt")
    code, out, err = run_main("init", "plain", cwd=tmp_path)
    assert code == 1, err
    assert f"a file outside the folder {os.path.realpath(folder)} (it is in no git repository)" in err
    assert not (tmp_path / "outside.txt").exists()


def test_a_link_that_stays_inside_the_repository_is_followed(project, run_main):
    (project / "docs" / "plans").mkdir(parents=True)
    (project / "plans").symlink_to("docs/plans")
    code, out, err = run_main("init", "--name", "linked", cwd=project)
    assert code == 0, err
    assert (project / "docs" / "plans" / "linked.yaml").is_file()


def test_a_gitattributes_init_cannot_write_takes_the_plan_back(project, run_main):
    (project / ".gitattributes").symlink_to("missing/attributes")      # inside, but its folder does not exist
    code, out, err = run_main("init", cwd=project)
    assert code == 1, err
    assert "error: cannot write .gitattributes: No such file or directory" in err
    assert not (project / "plans").exists()                  # init leaves a plan that builds, or nothing
