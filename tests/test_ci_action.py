"""The GitHub Action (action.yml), the workflow a team copies and the pre-commit hooks.

The action's own step scripts are run here, as the runner would run them (``bash
--noprofile --norc -eo pipefail``, inputs through ``env:``, ``GITHUB_OUTPUT`` per step),
in a scratch git repository with a base commit and a head commit. ``pip`` and ``gh``
are fakes on PATH that record their arguments; ``capplan`` runs this checkout's source.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import MAIN_PLAN, ROOT

from capplan.review import diff

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None,
                                reason="git and bash are needed")

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
REPOSITORY = "team/plans"

FAKE_GH = """\
import json, os, sys
args = sys.argv[1:]
body = open(args[args.index("--input") + 1], encoding="utf-8").read() if "--input" in args else None
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"args": args, "body": body, "token": os.environ.get("GH_TOKEN")}) + "\\n")
if os.environ.get("FAKE_GH_REFUSES"):
    sys.exit("HTTP 403: Resource not accessible by integration")
if "--paginate" in args:
    print(os.environ.get("FAKE_GH_EXISTING", ""))
"""


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=capplan-test", "-c", "user.email=test@example.invalid",
                           "-c", "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def _tools(folder):
    """A bin folder: capplan (this checkout's source), python, and the fakes pip and gh."""
    folder.mkdir()
    scripts = {
        "capplan": f'#!/bin/sh\nPYTHONPATH="{ROOT / "src"}" exec "{sys.executable}" -m capplan.cli "$@"\n',
        "pip": '#!/bin/sh\necho "$*" >> "$FAKE_PIP_LOG"\n',
        "gh": f'#!/bin/sh\nexec "{sys.executable}" "{folder / "fake_gh.py"}" "$@"\n',
    }
    for name, text in scripts.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    (folder / "fake_gh.py").write_text(FAKE_GH)
    (folder / "python").symlink_to(sys.executable)
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A plans repository: the main plan built and committed (base), then its peak
    60 → 90 req/s, rebuilt and committed (head)."""
    top = tmp_path_factory.mktemp("ci")
    tools = _tools(top / "bin")
    repo = top / "repo"
    (repo / "plans").mkdir(parents=True)
    _write_plan(repo, _without_expects(yaml.safe_load(MAIN_PLAN.read_text())))
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    _git(repo, "init", "-q")
    subprocess.run(["capplan", "build"], cwd=repo, env=env, check=True, capture_output=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    _set_peak(repo, "90 req/s")
    subprocess.run(["capplan", "build"], cwd=repo, env=env, check=True, capture_output=True)
    _git(repo, "commit", "-q", "-am", "head: peak 90 req/s")
    return {"top": top, "tools": tools, "repo": repo, "base": base}


def _without_expects(node):
    """The plan without its ``expect:`` pins (they hold the 60 req/s results; a team's
    pull request would update them with the peak)."""
    if isinstance(node, dict):
        return {k: _without_expects(v) for k, v in node.items() if k != "expect"}
    return [_without_expects(v) for v in node] if isinstance(node, list) else node


def _write_plan(repo, plan):
    (repo / "plans" / MAIN_PLAN.name).write_text(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True))


def _set_peak(repo, peak):
    plan = yaml.safe_load((repo / "plans" / MAIN_PLAN.name).read_text())
    plan["inputs"]["peak_arrival_rate"].update(value=peak, range="45 to 120 req/s")    # the value inside its range
    _write_plan(repo, plan)


def _evaluate(text, context):
    """``${{ a.b.c }}`` replaced by its value in ``context`` (only the dotted names the action
    uses). A step output never written is empty, as on GitHub; any other unknown name fails."""
    def one(match):
        path = match.group(1).split(".")
        value = context
        for part in path:
            if path[0] == "steps" and part not in value:
                return ""
            value = value[part]
        return str(value)
    return EXPRESSION.sub(one, str(text))


def run_action(project, tmp_path, inputs, existing_comment="", gh_refuses=False):
    """Run the action's steps in order, stopping at the first that fails (as the runner does).
    Returns the steps run as ``{id: (exit code, output)}`` (in order), their outputs, the
    calls gh received and what pip was asked to install."""
    github = {"action_path": str(ROOT), "token": "ghs_default", "repository": REPOSITORY,
              "event": {"pull_request": {"number": 7, "base": {"sha": project["base"]}}}}
    context = {"github": github, "steps": {}}
    context["inputs"] = {name: _evaluate(spec.get("default", ""), context) for name, spec in ACTION["inputs"].items()}
    context["inputs"].update(inputs)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    logs = {"gh": tmp_path / "gh.log", "pip": tmp_path / "pip.log", "summary": tmp_path / "summary.md"}
    base_env = {**os.environ, "PATH": f"{project['tools']}{os.pathsep}{os.environ['PATH']}",
                "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_WORKSPACE": str(project["repo"]), "RUNNER_TEMP": str(runner_temp),
                "GITHUB_STEP_SUMMARY": str(logs["summary"]), "FAKE_GH_LOG": str(logs["gh"]),
                "FAKE_PIP_LOG": str(logs["pip"]), "FAKE_GH_EXISTING": existing_comment,
                "FAKE_GH_REFUSES": "1" if gh_refuses else ""}
    ran = {}
    for number, step in enumerate(ACTION["runs"]["steps"]):
        if "uses" in step:
            continue                                  # actions/setup-python: this interpreter stands in
        output = tmp_path / f"output-{number}"
        output.touch()
        script = tmp_path / f"step-{number}.sh"
        script.write_text(step["run"])
        env = {**base_env, "GITHUB_OUTPUT": str(output),
               **{k: _evaluate(v, context) for k, v in step.get("env", {}).items()}}
        cwd = project["repo"] / _evaluate(step.get("working-directory", "."), context)
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env,
                              capture_output=True, text=True)
        ran[step["id"]] = (proc.returncode, proc.stdout + proc.stderr)
        context["steps"][step["id"]] = {"outputs": dict(line.split("=", 1) for line in output.read_text().splitlines())}
        if proc.returncode != 0:
            break
    gh_calls = [json.loads(line) for line in logs["gh"].read_text().splitlines()] if logs["gh"].exists() else []
    pip = logs["pip"].read_text() if logs["pip"].exists() else ""
    return ran, context["steps"], gh_calls, pip


# -- the action's structure ----------------------------------------------------------------------

def test_action_is_a_composite_of_small_bash_steps():
    assert ACTION["runs"]["using"] == "composite"
    assert {"plans", "base", "comment", "python-version", "capplan-source", "github-token"} <= set(ACTION["inputs"])
    assert ACTION["inputs"]["base"]["default"] == "${{ github.event.pull_request.base.sha }}"
    steps = ACTION["runs"]["steps"]
    assert [s["uses"].split("@")[0] for s in steps if "uses" in s] == ["actions/setup-python"]  # no other actions
    for step in (s for s in steps if "uses" not in s):
        assert step["shell"] == "bash", step["id"]
        # inputs reach a script through env: only, never spliced into its text
        assert "${{" not in step["run"], step["id"]
    assert [s.get("id") for s in steps if "run" in s] == ["install", "check", "diff", "comment", "gate"]


def test_workflow_a_team_copies_uses_the_action():
    workflow = yaml.safe_load((ROOT / "docs" / "ci" / "capplan.yml").read_text())
    assert "pull_request" in workflow[True]                      # YAML 1.1 reads the key `on` as True
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    steps = workflow["jobs"]["capplan"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    assert steps[1]["uses"].split("@")[0].endswith("/capplan")
    assert set(steps[1]["with"]) <= set(ACTION["inputs"])


def test_pre_commit_hooks_run_capplan_subcommands():
    from capplan.cli import _parser

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"capplan-check", "capplan-build"}
    commands = next(a for a in _parser()._actions if a.dest == "command").choices
    for hook_id, hook in hooks.items():
        program, subcommand = hook["entry"].split()
        assert program == "capplan" and subcommand in commands and hook_id == f"capplan-{subcommand}"
        assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert all(re.search(hooks["capplan-check"]["files"], f"{d}/x") for d in ("plans", "model", "out"))
    assert re.search(hooks["capplan-build"]["files"], "plans/x.yaml")
    assert not re.search(hooks["capplan-build"]["files"], "out/x.md")   # its own outputs do not trigger it


def test_readme_snippets_are_valid():
    """The README's copy-paste workflow and pre-commit config parse and name real inputs and hooks."""
    section = (ROOT / "README.md").read_text().split("## CI on every pull request\n")[1].split("\n## ")[0]
    workflow, pre_commit = (yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S))
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    checkout, action = workflow["jobs"]["capplan"]["steps"]
    assert checkout["with"] == {"fetch-depth": 0} and set(action["with"]) <= set(ACTION["inputs"])
    hooks = [hook["id"] for hook in pre_commit["repos"][0]["hooks"]]
    assert hooks == ["capplan-build", "capplan-check"]
    assert "out/** linguist-generated=true" in section and "out/*.xlsx binary" in section


# -- the action run in a scratch repository -------------------------------------------------------

def test_pull_request_passes_check_and_posts_one_sticky_comment(project, tmp_path):
    ran, steps, gh_calls, pip = run_action(project, tmp_path, {})
    assert list(ran) == ["install", "check", "diff", "comment", "gate"]
    assert {s: code for s, (code, _) in ran.items()} == dict.fromkeys(ran, 0), ran["gate"]
    assert pip.split() == ["install", "--disable-pip-version-check", "--quiet", str(ROOT)]   # the action's checkout
    assert steps["check"]["outputs"] == {"code": "0"}

    comment = (tmp_path / "runner-temp" / "capplan-diff.md").read_text()
    assert steps["diff"]["outputs"]["file"] == str(tmp_path / "runner-temp" / "capplan-diff.md")
    assert comment.startswith(diff.MARKER) and "active GPUs 9 → 13" in comment
    assert "capplan check failed" not in comment
    assert (tmp_path / "summary.md").read_text() == comment            # also on the run's summary page

    listing, post = gh_calls
    assert listing["args"][:3] == ["api", "--paginate", f"repos/{REPOSITORY}/issues/7/comments"]
    assert diff.MARKER in listing["args"][listing["args"].index("--jq") + 1]
    assert post["args"][:4] == ["api", "--method", "POST", f"repos/{REPOSITORY}/issues/7/comments"]
    assert json.loads(post["body"]) == {"body": comment} and post["token"] == "ghs_default"

    # the next push edits that comment in place instead of adding another
    again = tmp_path / "again"
    again.mkdir()
    _, _, gh_calls, _ = run_action(project, again, {"github-token": "ghs_given"}, existing_comment="4242\n4343")
    _, patch = gh_calls
    assert patch["args"][:4] == ["api", "--method", "PATCH", f"repos/{REPOSITORY}/issues/comments/4242"]
    assert json.loads(patch["body"])["body"] == comment and patch["token"] == "ghs_given"


def test_no_comment_when_turned_off_or_not_a_pull_request(project, tmp_path):
    ran, _, gh_calls, _ = run_action(project, tmp_path, {"comment": "false", "plans": f"plans/{MAIN_PLAN.name}"})
    assert all(code == 0 for code, _ in ran.values()) and gh_calls == []
    assert "active GPUs 9 → 13" in (tmp_path / "runner-temp" / "capplan-diff.md").read_text()
    push = tmp_path / "push"
    push.mkdir()
    ran, steps, gh_calls, _ = run_action(project, push, {"base": ""})
    assert all(code == 0 for code, _ in ran.values()) and gh_calls == []
    assert "capplan diff skipped: no base revision" in ran["diff"][1] and steps["diff"]["outputs"] == {}


def test_a_refused_comment_is_a_warning(project, tmp_path):
    """A pull request from a fork gets a read-only token: the comment is refused, the job goes on."""
    ran, steps, gh_calls, _ = run_action(project, tmp_path, {}, gh_refuses=True)
    assert {s: code for s, (code, _) in ran.items()} == dict.fromkeys(["install", "check", "diff", "comment", "gate"], 0)
    assert "::warning::the diff comment could not be posted" in ran["comment"][1]
    assert len(gh_calls) == 1                                   # the listing, refused; nothing posted after it


def test_stale_outputs_fail_the_job_after_the_comment(project, tmp_path):
    repo = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(project["repo"]), str(repo))
    _set_peak(repo, "100 req/s")                 # on top of head's 90 req/s; out/ not rebuilt
    _git(repo, "commit", "-q", "-am", "peak 100 req/s, outputs not rebuilt")
    ran, steps, gh_calls, _ = run_action({**project, "repo": repo}, tmp_path, {})
    assert list(ran) == ["install", "check", "diff", "comment", "gate"]
    assert steps["check"]["outputs"] == {"code": "1"}
    assert [ran[s][0] for s in ("install", "check", "diff", "comment")] == [0, 0, 0, 0]
    code, log = ran["gate"]
    assert code == 1 and "::error::capplan check failed (exit 1)" in log
    assert "out/" in ran["check"][1]                           # check's own report names the stale outputs
    comment = (tmp_path / "runner-temp" / "capplan-diff.md").read_text()
    assert "active GPUs 9 → " in comment and "**capplan check failed** (exit 1)" in comment
    assert gh_calls[-1]["args"][2] == "POST" and json.loads(gh_calls[-1]["body"])["body"] == comment
