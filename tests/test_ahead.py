"""Work started ahead in forked children (capplan.ahead): results come back whole
or not at all, a failed child leaves the work to the caller, no child outlives
the build, and a build with its simulation computed ahead writes the same bytes
as one that computes it in place."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import MAIN_PLAN, RETAIL_PLAN

from capplan import ahead as ahead_module
from capplan import build as builder
from capplan.ahead import Ahead, Parts, Split
from capplan.errors import CapplanError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking needs a POSIX system")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_children_deliver_their_results_in_any_order_taken():
    with Ahead([1, 2, 3], lambda k: {"key": k, "pid": os.getpid(), "square": k * k}, width=3) as ahead:
        third, first, second = ahead.take(3), ahead.take(1), ahead.take(2)
    assert [r["square"] for r in (first, second, third)] == [1, 4, 9]
    assert os.getpid() not in {r["pid"] for r in (first, second, third)}      # computed elsewhere


def test_a_result_in_parts_comes_as_the_list_of_its_parts_or_not_at_all():
    """Each part is sent as it is made; a child that fails after sending some delivers nothing."""
    def parts(key):
        yield {"first": key}
        if key == "broken":
            raise RuntimeError("after the first part")
        yield b"x" * 100_000
        yield key * 2

    with Ahead(["whole", "broken"], lambda key: Parts(parts(key)), width=2) as children:
        assert children.take("whole") == [{"first": "whole"}, b"x" * 100_000, "wholewhole"]
        assert children.take("broken") is None
    with Ahead(["none"], lambda key: Parts(iter(())), width=1) as children:
        assert children.take("none") == []


def test_a_child_that_ends_without_saying_its_result_is_whole_delivers_nothing():
    """Only the child's last word (one byte, after its result is flushed) makes a result; a child
    that exits cleanly before it, halfway through writing, delivers nothing."""
    def halfway():
        yield b"x" * 100_000                # sent (a part is flushed as made): a valid start of a result
        os._exit(0)

    with Ahead(["quits"], lambda _: Parts(halfway()), width=1) as children:
        child = children.running["quits"]
        assert children.take("quits") is None
    assert _gone(child.pid)


def test_no_more_children_than_its_width_run_at_once():
    with Ahead(["a", "b", "c"], lambda k: k, width=1) as ahead:
        assert list(ahead.running) == ["a"] and ahead.queue == ["b", "c"]
        assert ahead.take("a") == "a"
        assert list(ahead.running) == ["b"]


@pytest.mark.parametrize("work", [
    lambda k: (_ for _ in ()).throw(CapplanError("bad plan")),     # the work raises
    lambda k: lambda: k,                                           # a result that does not pickle
    lambda k: os._exit(3),                                         # the child dies
])
def test_a_child_that_does_not_deliver_leaves_the_work_to_the_caller(work):
    with Ahead(["x"], work, width=1) as ahead:
        assert ahead.take("x") is None


def test_work_never_started_or_never_taken_is_no_one_s():
    with Ahead(["a", "b"], lambda k: time.sleep(30), width=1) as ahead:
        assert ahead.take("b") is None and ahead.queue == []       # not started: the caller does it
        child = ahead.running["a"].pid
    assert _gone(child)                                              # killed and reaped at the end
    assert Ahead(["a"], lambda k: k, width=0).take("a") is None      # no free CPU: nothing forked


def test_a_fork_that_fails_leaves_the_work_to_the_caller(monkeypatch):
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with Ahead(["a", "b"], lambda k: k, width=1) as ahead:
        assert (ahead.take("a"), ahead.take("b"), ahead.running) == (None, None, {})


def _build(project: Path, patch: pytest.MonkeyPatch, free: int, simulation_of=None) -> dict[str, bytes]:
    """Build the main and retail plans in ``project`` with ``free`` CPUs for children: the outputs' bytes."""
    (project / "plans").mkdir(parents=True)
    for plan in (MAIN_PLAN, RETAIL_PLAN):
        shutil.copy(plan, project / "plans" / plan.name)
    with patch.context() as m:
        m.chdir(project)
        m.setattr(builder, "free_cpus", lambda: free)
        m.setattr(ahead_module, "free_cpus", lambda: free)
        if simulation_of:
            m.setattr(builder, "simulation_of", simulation_of)
        results = builder.build(builder.plan_paths([]), project / "out")
    assert not any(r.error for r in results)
    return {p.name: p.read_bytes() for p in sorted((project / "out").iterdir()) if p.name != "manifest.json"}


@pytest.fixture(scope="module")
def in_place_project(tmp_path_factory):
    """A project built by a build that computes its simulations itself."""
    project = tmp_path_factory.mktemp("in-place")
    _build(project, pytest.MonkeyPatch(), free=0)
    return project


@pytest.fixture
def in_place(in_place_project):
    """The outputs of that build."""
    return {p.name: p.read_bytes() for p in sorted((in_place_project / "out").iterdir()) if p.name != "manifest.json"}


def test_a_build_with_its_simulation_ahead_writes_the_same_bytes(in_place, tmp_path, monkeypatch):
    """The simulation ran in a child (the build never ran it itself), and the outputs are
    the bytes of a build that ran it in place."""
    from capplan.analysis import simulation

    ran = tmp_path / "ran"
    original = simulation.of_plan

    def noted(evaluations):
        shown = original(evaluations)
        if shown is not None:                   # a plan with a simulation
            with ran.open("a") as f:
                f.write(f"{os.getpid()}\n")
        return shown

    monkeypatch.setattr(simulation, "of_plan", noted)
    ahead = _build(tmp_path / "ahead", monkeypatch, free=1)
    pids = ran.read_text().split()
    assert len(pids) == 1 and pids[0] != str(os.getpid())
    assert ahead == in_place and f"{MAIN_PLAN.stem}.simulation.svg" in ahead


def test_a_simulation_that_fails_ahead_is_computed_in_place(in_place, tmp_path, monkeypatch):
    def fails(plan):
        raise CapplanError("not here")

    assert _build(tmp_path / "failed-ahead", monkeypatch, free=1, simulation_of=fails) == in_place


def test_check_of_a_changed_plan_simulates_ahead_too(in_place_project, tmp_path, monkeypatch):
    """`capplan check` compiles the plans in parallel: the simulated one in a child, the
    verdict the same (an added comment changes no output)."""
    from capplan import verify
    from capplan.analysis import simulation

    project = tmp_path / "project"
    shutil.copytree(in_place_project, project)
    plan = project / "plans" / MAIN_PLAN.name
    plan.write_text(plan.read_text() + "# a comment\n")
    ran = tmp_path / "ran"
    original = simulation.of_plan

    def noted(evaluations):
        shown = original(evaluations)
        if shown is not None:
            with ran.open("a") as f:
                f.write(f"{os.getpid()}\n")
        return shown

    with monkeypatch.context() as m:
        m.chdir(project)
        m.setattr(builder, "free_cpus", lambda: 1)
        m.setattr(ahead_module, "free_cpus", lambda: 1)
        m.setattr(simulation, "of_plan", noted)
        m.setenv("CAPPLAN_CACHE_DIR", str(tmp_path / "cache"))          # nothing computed yet
        seen, folder, _ = verify.verify(builder.plan_paths([]), project / "out", whole=True)
    assert [s.file for s in seen] == [f"plans/{MAIN_PLAN.name}", f"plans/{RETAIL_PLAN.name}"]   # the order given
    assert folder == [] and seen[1].problems == []
    assert seen[0].problems == [f"plans/{MAIN_PLAN.name}: outputs current, but {project / 'out' / 'manifest.json'} "
                                f"records other inputs (plans/{MAIN_PLAN.name} changed): run `capplan build "
                                f"plans/{MAIN_PLAN.name}`"]
    pids = ran.read_text().split()
    assert len(pids) == 1 and pids[0] != str(os.getpid())


def _noting_workbooks(monkeypatch, made: Path, child_dies: bool = False) -> None:
    """render_workbook, noting the process that ran it (and dying there, if not the build's own)."""
    from capplan.rendering import workbook

    original, build_pid = workbook.render_workbook, os.getpid()

    def noted(*args, **kwargs):
        with made.open("a") as f:
            f.write(f"{os.getpid()}\n")
        if child_dies and os.getpid() != build_pid:
            os._exit(3)
        return original(*args, **kwargs)

    monkeypatch.setattr(workbook, "render_workbook", noted)


def test_each_workbook_is_made_in_a_child_beside_the_record_and_json_with_the_same_bytes(in_place, tmp_path,
                                                                                         monkeypatch):
    made = tmp_path / "made"
    _noting_workbooks(monkeypatch, made)
    assert _build(tmp_path / "ahead", monkeypatch, free=1) == in_place
    pids = made.read_text().split()
    assert len(pids) == 2 and str(os.getpid()) not in pids        # one per plan, neither made by the build


def test_a_workbook_whose_child_dies_is_made_in_place_with_the_same_bytes(in_place, tmp_path, monkeypatch):
    made = tmp_path / "made"
    _noting_workbooks(monkeypatch, made, child_dies=True)
    assert _build(tmp_path / "died", monkeypatch, free=1) == in_place
    assert made.read_text().split().count(str(os.getpid())) == 2  # both made again by the build


def test_alone_the_front_of_a_split_takes_every_item():
    split = Split(5)
    assert list(split.front()) == [0, 1, 2, 3, 4] and not split.back_took


def test_a_split_gives_every_item_to_one_end_and_at_most_the_meeting_one_to_both():
    split = Split(60)
    with Ahead(["back"], lambda _: list(split.back()), width=1) as ahead:
        front = []
        for i in split.front():
            front.append(i)
            waited = time.monotonic()           # the front waits (a minute at most) for the back to begin
            while not split.back_took and time.monotonic() - waited < 60:
                time.sleep(0.002)
        back = ahead.take("back")
    assert back and split.back_took
    assert sorted(set(front) | set(back)) == list(range(60))
    assert len(set(front) & set(back)) <= 1
    assert front == sorted(front) and back == sorted(back, reverse=True)


def test_scenarios_the_workbooks_child_searches_from_the_back_give_the_same_bytes(in_place, tmp_path, monkeypatch):
    """The build searches the scenarios' flip points from the first, its workbook's child from the
    last once the workbook is made; a build slowed down leaves the child some, and the JSON is
    the one a build searching all of them itself writes."""
    from capplan.rendering import holds

    original, build_pid, searched = holds.HoldsView.as_json, os.getpid(), tmp_path / "searched"

    def by_child() -> bool:
        return any(pid != str(build_pid) for pid in searched.read_text().split())

    def noted(self, scenario):
        if scenario not in self._json:
            with searched.open("a") as f:
                f.write(f"{os.getpid()}\n")
            waited = time.monotonic()           # the build waits (a minute at most) for its child to take one
            while os.getpid() == build_pid and len(self.evaluations) > 1 and not by_child() \
                    and time.monotonic() - waited < 60:
                time.sleep(0.02)
        return original(self, scenario)

    monkeypatch.setattr(holds.HoldsView, "as_json", noted)
    assert _build(tmp_path / "shared", monkeypatch, free=1) == in_place
    assert by_child()


def test_eval_json_simulates_ahead_and_prints_the_same_bytes(run_main, tmp_path, monkeypatch):
    """`capplan eval --json` of a plan with uncertain values runs its simulation in a child while
    it evaluates the plan (issue #38: eval's wall time against the import floor); what it
    prints is the bytes of an eval that simulated in place."""
    from capplan.analysis import simulation

    def printed(free: int) -> str:
        with monkeypatch.context() as m:
            m.setattr(builder, "free_cpus", lambda: free)
            m.setattr(ahead_module, "free_cpus", lambda: free)
            code, out, err = run_main("eval", "--json", MAIN_PLAN)
        assert (code, err) == (0, "")
        return out

    in_place = printed(0)
    ran = tmp_path / "ran"
    original = simulation.of_plan

    def noted(evaluations):
        shown = original(evaluations)
        with ran.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return shown

    monkeypatch.setattr(simulation, "of_plan", noted)
    assert printed(1) == in_place
    assert [pid != str(os.getpid()) for pid in ran.read_text().split()] == [True]
