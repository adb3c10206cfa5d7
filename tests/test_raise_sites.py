"""No user-facing error is reached only by a bug (issue 8, item 5).

Exit 1 is for a wrong plan, exit 3 for a bug in capplan. Every ``raise`` of
a CapplanError in ``src/capplan`` (found by its syntax tree) must be listed
in ``tests/data/raise_sites.yaml`` with a test whose input reaches it, or
under ``unshown:`` with the reason none does yet. A new raise site fails
here until it gets its test. ``CAPPLAN_RAISE_SITES=1`` also re-runs the named
tests under a tracer and checks each really reaches its site.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT
from raise_sites import SKIPPED, TABLE, reach_of, sites

SITES = {site.key for site in sites()}
LISTED = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
REACHED, UNSHOWN = LISTED["reached"] or {}, LISTED["unshown"] or {}


def test_every_raise_site_is_listed_once():
    assert not set(REACHED) & set(UNSHOWN)
    missing = sorted(SITES - set(REACHED) - set(UNSHOWN))
    assert not missing, ("raise sites no test is named for; add a test whose input reaches each and "
                         f"regenerate {TABLE.name} (see tests/raise_sites.py): {missing}")
    stale = sorted((set(REACHED) | set(UNSHOWN)) - SITES)
    assert not stale, f"{TABLE.name} lists raise sites that no longer exist: {stale}"


def test_the_named_tests_exist():
    defined = {}
    for test_id in set(REACHED.values()):
        path, name = test_id.split("::")[:2]
        if path not in defined:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            defined[path] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name.split("[")[0] in defined[path], f"{test_id} does not exist"


@pytest.mark.skipif(not os.environ.get("CAPPLAN_RAISE_SITES"),
                    reason="re-runs the named tests under a tracer (about a minute): set CAPPLAN_RAISE_SITES=1")
def test_each_named_test_reaches_its_site(tmp_path):
    trace = tmp_path / "reach.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]),  # this tree's code
               CAPPLAN_RAISE_TRACE=str(trace))
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "raise_sites",
                          *sorted(set(REACHED.values()))], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=False)
    # 4: a named test id pytest does not know (a parameter's id changed), so nothing ran
    assert ran.returncode in (0, 1), f"the traced run exited {ran.returncode}: {(ran.stdout + ran.stderr)[-1500:]}"
    reach = reach_of(sorted(tmp_path.glob("reach.json*")))    # the project's addopts run the tests under xdist
    skipped = set(reach.get(SKIPPED, []))                     # e.g. no ../shared/ beside a clean clone
    checked = {site: test for site, test in REACHED.items() if test not in skipped}
    assert len(checked) >= 0.9 * len(REACHED), f"{len(REACHED) - len(checked)} named tests were skipped"
    unreached = {site: test for site, test in checked.items() if test not in reach.get(site, [])}
    assert not unreached, f"these tests no longer reach their raise site: {unreached}"
