"""Random mutations of the reference plans never crash capplan and never hang it.

Hypothesis changes one to three things in a reference plan (a value, a unit,
a key, the shape of a section) and runs ``capplan eval --json`` and ``capplan
diff`` on the result in-process. Whatever it writes, capplan must answer with
exit 0 (the plan still holds) or exit 1 (one located message), never exit 3
("a bug") and never take longer than :data:`TIME_LIMIT` seconds of CPU time.

The normal suite runs a fixed (derandomized) set of examples in a few
seconds; ``CAPPLAN_FUZZ_EXAMPLES=2000`` runs a longer, random search.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import shutil
import signal

import pytest
import yaml
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# CPU seconds per example (this process's, so a busy machine does not count): a refused bomb
# takes milliseconds, the eval and diff of a valid plan about two seconds.
TIME_LIMIT = 20.0
EXAMPLES = int(os.environ.get("CAPPLAN_FUZZ_EXAMPLES", "25"))
PLANS = sorted(ROOT.glob("plans/*.yaml"))

# Values an attacker or a careless editor writes: numbers at and beyond the edges,
# units pint once choked on, text where numbers go and the other way round.
HOSTILE = [
    0, -1, 1, 0.5, 1e-300, 1e300, 2 ** 53 + 1, 10 ** 30, 10 ** 400, float("inf"), float("nan"),
    "0", "-60 req/s", "60 req/s", "60 GiB", "1e-300 req/s", "1e999", "1e400 GiB", "0e400", "9" * 400,
    "60 req/s**10**10**10", "60 s^9^9^9", "60 (req/s", "60 req/s)", "60 'req/s'", "60 req/(s*0)", "60 1/0",
    "60 req/s = 1", "60 req/s;s/s", "60 req/s\0", "\u221260 req/s", "60 req/s\u200b", "0,5", "nan", "inf req/s",
    "", None, True, [], {}, [1, 2], {"value": 0}, {"value": "1e-300"}, {"source": "x"},
    {"value": "60 req/s", "source": {"a": 1}}, {"value": 1, "tag": "guess"}, {"value": 1, "status": "pending"},
    "=HYPERLINK(\"x\")", "x" * 300, dt.date(2026, 11, 1), "classes[chat].weight",
]
UNIT_ALPHABET = "reqstokGiBUSDhm/*^()0123456789 -+.e'\"=;#%µ\u2212\0_"
KEYS = ["value", "source", "set", "rows", "units", "import", "expect", "title", "peak_arrival_rate",
        "instance_max_rate", "rho_target", "hbm_efficiency", "gpus_per_node", "weight", "nominal", "<<", ""]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A plans/ folder of its own, with whatever folders sit next to the plans (imported sweeps)."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "plans").mkdir()
    for folder in (p for p in (ROOT / "plans").iterdir() if p.is_dir()):
        shutil.copytree(folder, root / "plans" / folder.name)
    return root


def _paths(node, path=()):
    """Every key path in a plan, the root included."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, path + (i,))


def _parent(plan, path):
    node = plan
    for part in path[:-1]:
        node = node[part]
    return node


@st.composite
def mutated_plans(draw):
    source = draw(st.sampled_from(PLANS))
    plan = yaml.safe_load(source.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(plan) if p]
        path = draw(st.sampled_from(paths))
        parent, last = _parent(plan, path), path[-1]
        action = draw(st.sampled_from(["value", "unit", "delete", "rename", "add", "wrap"]))
        if action == "value":
            parent[last] = copy.deepcopy(draw(st.one_of(
                st.sampled_from(HOSTILE), st.floats(), st.integers(-10 ** 20, 10 ** 20), st.text(max_size=30))))
        elif action == "unit" and isinstance(parent[last], str):
            number = parent[last].split(" ")[0]
            parent[last] = f"{number} {draw(st.text(alphabet=UNIT_ALPHABET, max_size=25))}"
        elif action == "delete":
            del parent[last]
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(KEYS))] = parent.pop(last)
        elif action == "add" and isinstance(parent[last], dict):
            parent[last][draw(st.sampled_from(KEYS))] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
        elif action == "wrap":
            parent[last] = [parent[last]] if draw(st.booleans()) else {"value": parent[last]}
    return source, plan


class Hang(BaseException):
    """Raised by the CPU-time alarm; a BaseException, so capplan's own handlers cannot swallow it."""


def _alarm(signum, frame):
    raise Hang(f"no answer within {TIME_LIMIT} s of CPU time")


@settings(max_examples=EXAMPLES, deadline=None, derandomize="CAPPLAN_FUZZ_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=mutated_plans())
def test_mutated_plans_exit_0_or_1_never_3(case, workspace, run_main, monkeypatch):
    source, plan = case
    monkeypatch.chdir(workspace)
    path = workspace / "plans" / source.name
    try:
        path.write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True), encoding="utf-8")
    except ValueError:            # PyYAML cannot write this mutation (a 400-digit int): nothing to test
        return
    previous = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT)
    try:
        for argv in (["eval", path, "--json"], ["diff", source, path]):
            code, _, err = run_main(*argv)
            assert code in (0, 1), f"capplan {argv[0]} exited {code}:\n{err}"
            assert "internal error" not in err and "Traceback" not in err
            if code == 1:
                assert err.startswith("error: ") and len(err.strip().splitlines()) <= 2, err
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
