"""A build stopped by a signal leaves no process and no temporary file behind.

`timeout` and a cancelled CI job send SIGTERM, a closed terminal SIGHUP, Ctrl-C SIGINT to
the whole process group. Each is sent to a `capplan build` in two places: while a
forked child simulates a plan (made to take long), and while an output is being
written (made to pause after its first bytes). The command must exit with 128 + the
signal, every process of its group must be gone, out/ must hold no temporary and the
outputs it had.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import MAIN_PLAN, ROOT

from capplan import cli

# The command, with one stage made slow and announcing itself in a marker file.
SLOW_SIMULATION = """
import sys, time
from pathlib import Path
from capplan import build
def slow(plan):
    Path(sys.argv[1] + ".tmp").write_text(str(__import__("os").getpid()))
    __import__("os").replace(sys.argv[1] + ".tmp", sys.argv[1])      # whole, or not there
    time.sleep(600)
build.simulation_of = slow
from capplan.cli import main
sys.exit(main(["build"]))
"""
SLOW_WRITE = """
import os, sys, time
from pathlib import Path
from capplan import build
real = build._write_all
def slow(fd, content):
    os.write(fd, content[:10])
    Path(sys.argv[1] + ".tmp").write_text(str(os.getpid()))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])                      # whole, or not there
    time.sleep(600)
build._write_all = slow
from capplan.cli import main
sys.exit(main(["build", "--force"]))
"""


def _group(pgid: int) -> list[int]:
    """The processes of a process group, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _wait_for(marker: Path, process: subprocess.Popen, limit: float = 300) -> None:
    start = time.monotonic()
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() - start < limit, "the slow stage never started"
        time.sleep(0.05)


@pytest.fixture
def project(built_project, monkeypatch, tmp_path_factory):
    """The main plan built, then changed (its title: every output changes), with a cache of
    this machine's compiles of its own, so the change must be compiled."""
    monkeypatch.setenv("CAPPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    folder = built_project(MAIN_PLAN)
    plan = folder / "plans" / MAIN_PLAN.name
    text = plan.read_text()
    assert "\ntitle: " in text
    plan.write_text(text.replace("\ntitle: ", "\ntitle: Changed, ", 1))
    return folder


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; forks only on Linux")
@pytest.mark.parametrize("stage, signum, to_group", [
    *((stage, signum, False) for stage in ("simulation", "write")
      for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)),
    ("simulation", signal.SIGTERM, True), ("simulation", signal.SIGINT, True)])
def test_a_signal_leaves_no_process_and_no_temporary(project, tmp_path, stage, signum, to_group):
    if stage == "simulation" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: the simulation runs in the build itself, not in a child")
    out = project / "out"
    before = _snapshot(out)
    marker = tmp_path / "started"
    script = SLOW_SIMULATION if stage == "simulation" else SLOW_WRITE
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    process = subprocess.Popen([sys.executable, "-c", script, str(marker)], cwd=project, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for(marker, process)
        if stage == "simulation":
            assert int(marker.read_text()) != process.pid         # the slow stage runs in a forked child
        if to_group:
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, err
    assert "no output was left half-written" in err
    deadline = time.monotonic() + 30
    while _group(process.pid) and time.monotonic() < deadline:       # PR_SET_PDEATHSIG acts as the parent exits
        time.sleep(0.05)
    assert _group(process.pid) == []
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    assert _snapshot(out) == before


@pytest.mark.parametrize("signalled, code, said", [
    (lambda: cli.Stopped(signal.SIGTERM), 128 + signal.SIGTERM, "stopped by SIGTERM; no output was left half-written"),
    (KeyboardInterrupt, 128 + signal.SIGINT, "interrupted; no output was left half-written")])
def test_a_signal_that_lands_while_a_class_is_made_still_stops_the_command(monkeypatch, capsys, signalled, code,
                                                                          said):
    """Python 3.11 wraps what a descriptor's __set_name__ raises in "RuntimeError: Error calling
    __set_name__": a signal landing while capplan imports a module (a class with a
    cached_property) reached the command as that RuntimeError, and it exited 3 as a bug."""
    class Landing:
        def __set_name__(self, owner, name):
            raise signalled()

    def run(args):
        class Probe:                      # made for its attribute's __set_name__, as an import makes one
            varying = Landing()

    monkeypatch.setattr(cli, "cmd_eval", run)
    assert cli.main(["eval", "plan.yaml"]) == code
    assert capsys.readouterr().err == f"capplan eval: {said}\n"
