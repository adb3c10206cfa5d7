"""``capplan diff``: what a change to the plans does to the results.

Two versions of a plan are evaluated with the same engine and model (this
capplan), then compared: the key results (λ_safe, active and resilient GPUs,
and per deployment nodes, monthly cost and $ per 1M output tokens), every
other result that moved, the inputs that changed — a changed measurement or
fact is flagged ⚠ apart from a changed policy or assumption — the
scenarios whose fixed-fleet check flips, and the flip points a changed input
crossed or now lies within 5 % of (:mod:`capplan.review.crossings`).

The comment opens with the new version's decision as its record's first
screen says it (:mod:`capplan.rendering.firstscreen`: the recommendation, the
ask, the options, the risks), then the changes. The comparison is one
JSON-ready document (:func:`compare`); the Markdown PR comment
(:func:`markdown`) is a rendering of it, as ``--format json`` prints
it. The comment opens with a hidden marker line (:data:`MARKER`) so that a
bot can find and update its earlier comment instead of adding another.

Sides come from two files (or two folders of plans, paired by file name), or
from a git revision against the working tree: the old plans' folders are
copied out of git into a temporary folder (file by file, each size checked
first) and evaluated like any plan.
"""

from __future__ import annotations

import math
import os
import posixpath
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from capplan import formatting
from capplan.analysis import pipeline
from capplan.artifacts import demand
from capplan.language import units
from capplan.engine.evaluate import Evaluation
from capplan.errors import CapplanError, UsageError
from capplan.loading.plan import Plan
from capplan.rendering import record, view
from capplan.rendering.firstscreen import first_screen
from capplan.rendering.markdown import cell as markdown_cell
from capplan.rendering.markdown import code as markdown_code
from capplan.rendering.present import shown
from capplan.rendering.keyresults import KeyResult, ScenarioView
from capplan.rendering.view import PlanView
from capplan.review.crossings import crossings

MARKER = "<!-- capplan-diff -->"
FORMAT_VERSION = 2          # 2: key results carry `row` and `role` (was `deployment`)

MEASURED = ("measurement", "fact")          # tags whose change is called out with ⚠
COMMENT_LIMIT = 60_000                      # GitHub refuses comments over 65,536 characters


@dataclass
class Side:
    """One version of one plan, evaluated (or the error that stopped it)."""

    label: str                               # 'plans/x.yaml' or 'origin/main:plans/x.yaml'
    plan: Plan | None = None
    evaluations: list[Evaluation] = field(default_factory=list)
    error: str | None = None

    @property
    def nominal(self) -> Evaluation | None:
        return self.evaluations[0] if self.evaluations else None

    @cached_property
    def view(self) -> PlanView | None:
        return view.build(self.plan, self.evaluations, pipeline.Artifacts(self.evaluations)) if self.evaluations else None


# -- reading the two sides ------------------------------------------------------------------

def load_file(path: Path) -> Side:
    plan, evaluations = pipeline.evaluate_plan(Path(path))
    return Side(plan.file, plan, evaluations)


def _load_as(path: Path, label: str, tmp: Path, prefix: str) -> Side:
    """Evaluate a plan copied under ``tmp``; name it and its errors as ``label``."""
    try:
        plan, evaluations = pipeline.evaluate_plan(path)
    except CapplanError as err:
        if err.file and err.file == str(path):
            err.file = label
        elif err.file and err.file.startswith(str(tmp)):
            err.file = prefix + err.file[len(str(tmp)):].lstrip("/\\")
        raise
    plan.file = label
    return Side(label, plan, evaluations)


def _try(load, label: str) -> Side:
    """The old side: a version that no longer loads is reported, not fatal."""
    try:
        return load()
    except CapplanError as err:
        return Side(label, error=str(err))


def pairs_from_paths(old: Path, new: Path) -> list[tuple[Side | None, Side | None]]:
    """Two plan files, or two folders whose plans pair up by file name."""
    old, new = Path(old), Path(new)
    if old.is_dir() != new.is_dir() and old.exists() and new.exists():
        raise UsageError("give two plan files or two folders of plans, not one of each")
    if old.is_dir():
        names = sorted({p.name for folder in (old, new) for p in _yaml_files(folder)})
        out = []
        for name in names:
            o, n = old / name, new / name
            out.append((_try(lambda: load_file(o), str(o)) if o.exists() else None,
                        load_file(n) if n.exists() else None))
        return out
    for path in (old, new):
        if not path.exists():
            raise UsageError(f"no such plan file: {path}")
    return [(_try(lambda: load_file(old), str(old)), load_file(new))]


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))


def pairs_from_git(base: str, plans: list[str], cwd: Path | None = None) -> list[tuple[Side | None, Side | None]]:
    """Each plan at git revision ``base`` against the working tree. With no plans
    named: every plan in ``plans/`` now or at ``base`` (added and removed ones too).

    The old plans' folders are read out of git whole, so that files a plan
    reads next to itself (an imported load sweep) are there too. Every name
    git gives is read NUL-separated (``-z``): git quotes a name that is not
    plain ASCII in its line output, and ``plans/ü plan.yaml`` would not be
    found at ``base``."""
    cwd = Path(cwd or Path.cwd())
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd, "not inside a git repository").rstrip("\n")).resolve()
    _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], cwd, f"unknown git revision '{base}'")
    if plans:
        paths = [Path(p) for p in plans]
    else:
        now = _yaml_files(cwd / "plans") if (cwd / "plans").is_dir() else []
        listed = _names(_git(["ls-tree", "-z", "--name-only", base, "--", "plans/"], cwd,
                             f"cannot list plans/ at '{base}'"))
        then = [cwd / name for name in listed if name.endswith((".yaml", ".yml"))]
        paths = sorted({p.relative_to(cwd) for p in now + then}, key=str)
        if not paths:
            raise UsageError(f"no plans in plans/, neither now nor at '{base}'")
    located = []
    for path in paths:
        absolute = path if path.is_absolute() else cwd / path
        try:
            rel = absolute.resolve().relative_to(top).as_posix()
        except ValueError:
            raise UsageError(f"{path} is outside the git repository {top}") from None
        located.append((absolute, rel))
    existing = set(_names(_git(["ls-tree", "-z", "-r", "--name-only", base, "--", *[rel for _, rel in located]],
                               top, f"cannot list the plans at '{base}'")))
    out = []
    with tempfile.TemporaryDirectory(prefix="capplan-diff-") as tmp:
        folders = sorted({str(Path(rel).parent.as_posix()) for _, rel in located if rel in existing})
        if folders:
            _extract(base, folders, top, Path(tmp))
        for absolute, rel in located:
            label = f"{base}:{rel}"
            old = _try(lambda: _load_as(Path(tmp) / rel, label, Path(tmp), f"{base}:"), label) \
                if rel in existing else None
            new = load_file(absolute) if absolute.exists() else None
            if old is None and new is None:
                raise UsageError(f"{rel} exists neither in the working tree nor at '{base}'")
            out.append((old, new))
    return out


BLOB_LIMIT = 256 * 2 ** 20      # bytes of one file read out of git; a plan and its sweep files are far smaller
CHUNK = 2 ** 20                 # a file is copied out of git this much at a time, never held whole


def _extract(base: str, folders: list[str], top: Path, into: Path) -> None:
    """Write the plans' folders at ``base`` under ``into``, a stand-in for the repository.

    The files are listed with their sizes first (``git ls-tree -r -l -z``); one
    above :data:`BLOB_LIMIT` is refused with its name before anything is read.
    Each file is then streamed to disk from one ``git cat-file --batch``, a
    chunk at a time, so memory stays flat whatever the repository holds.

    A committed symlink that points outside the repository (an absolute target,
    or one whose ``..`` climb above its root) is refused with the link's name,
    as an import pattern that reaches outside is: the old side must not read
    what the working tree may not. ``into`` gets a ``.git`` entry so that the
    old plans' imports are held to it, the way the working tree's are held to
    the repository. A link to a folder that is not itself extracted dangles.
    """
    listing = _git(["ls-tree", "-r", "-l", "-z", base, "--", *folders], top,
                   f"cannot read {', '.join(folders)} at '{base}'")
    entries = []
    for record in _names(listing):
        meta, path = record.split("\t", 1)
        mode, kind, oid, size = meta.split()
        if kind != "blob":
            continue                      # a submodule: nothing of it is in this repository
        if int(size) > BLOB_LIMIT:
            raise CapplanError(f"the file is {int(size) / 2 ** 20:,.0f} MiB; capplan diff reads at most "
                               f"{BLOB_LIMIT // 2 ** 20} MiB of one file out of git", file=f"{base}:{path}")
        entries.append((mode, oid, path))
    try:
        batch = subprocess.Popen(["git", "cat-file", "--batch"], cwd=top, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UsageError("git is not installed") from None
    with batch:
        for mode, oid, path in entries:
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            batch.stdin.write(oid.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            size = int(header[2]) if len(header) == 3 and header[1] == b"blob" else -1
            if not 0 <= size <= BLOB_LIMIT:
                raise CapplanError(f"git cannot give this file ({b' '.join(header).decode(errors='replace')})",
                                   file=f"{base}:{path}")
            if mode == "120000":
                link = os.fsdecode(batch.stdout.read(size))
                _refuse_link_out(base, path, link)
                os.symlink(link, target)
            else:
                with target.open("wb") as handle:
                    left = size
                    while left:
                        chunk = batch.stdout.read(min(CHUNK, left))
                        if not chunk:
                            raise CapplanError("git ended the file early", file=f"{base}:{path}")
                        handle.write(chunk)
                        left -= len(chunk)
            batch.stdout.read(1)          # the newline after each object
        batch.stdin.close()
    (into / ".git").mkdir()


def _refuse_link_out(base: str, path: str, link: str) -> None:
    inside = posixpath.normpath(posixpath.join(posixpath.dirname(path), link))
    if posixpath.isabs(link) or inside == ".." or inside.startswith("../"):
        raise CapplanError(f"a committed symlink to {link!r} points outside the repository; "
                           "capplan does not follow links out of it", file=f"{base}:{path}")


def _names(output: str) -> list[str]:
    """The entries of git's NUL-separated (``-z``) output."""
    return [name for name in output.split("\0") if name]


def _git(args: list[str], cwd: Path, failure: str) -> str:
    """git's output as text; a name that is not UTF-8 keeps its bytes (as surrogates), as a path does."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    except FileNotFoundError:
        raise UsageError("git is not installed; compare two files instead: capplan diff OLD.yaml NEW.yaml") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        detail = stderr.splitlines()[-1] if stderr else ""
        raise UsageError(failure + (f" ({detail})" if detail else ""))
    return os.fsdecode(proc.stdout)


# -- comparing ---------------------------------------------------------------------------------

def compare(pairs: list[tuple[Side | None, Side | None]], base: str | None = None) -> dict:
    """The diff document: one entry per plan, JSON-ready."""
    plans = [compare_plan(old, new) for old, new in pairs]
    return {"capplan_diff": FORMAT_VERSION, "base": base,
            "changed": any(p["status"] != "unchanged" for p in plans), "plans": plans}


def compare_plan(old: Side | None, new: Side | None) -> dict:
    if new is None and (old is None or old.plan is None):
        raise UsageError("nothing to compare")
    ref = new or old
    out = {
        "plan": ref.plan.name, "title": ref.plan.title,
        "old_file": old.label if old else None, "new_file": new.label if new else None,
        "status": "changed", "headline": "", "base_error": old.error if old and old.error else None,
        "key_results": [], "results": [], "inputs": [], "edits": [], "scenario_changes": [],
        "fleet_flips": [], "scenarios": [], "flip_points": {"crossed": [], "near": []}, "first_screen": "",
    }
    old_ok = old is not None and old.plan is not None
    o_v = old.view if old_ok else None
    n_v = new.view if new else None
    out["key_results"] = _key_changes(o_v.scenarios[0] if o_v else None, n_v.scenarios[0] if n_v else None)
    if n_v is not None:
        out["first_screen"] = record.first_screen_markdown(first_screen(n_v))
    if new is None:
        out["status"] = "removed"
        out["headline"] = "Plan removed. It said: " + o_v.headline
        return out
    if not old_ok:
        out["status"] = "base_error" if old is not None else "added"
        lead = "New plan: " if old is None else "The old version does not load with this capplan; the new one says: "
        out["headline"] = f"{lead}{n_v.headline} {n_v.decision['text']}"
        return out
    o_e, n_e = old.nominal, new.nominal
    out["results"] = _results(o_e, n_e)
    out["inputs"], out["edits"] = _input_changes(old, new)
    out["scenario_changes"] = _scenario_changes(old.plan, new.plan)
    out["scenarios"], out["fleet_flips"] = _scenarios(old, new)
    out["flip_points"] = crossings(old.view, new.view)
    out["winner"] = _winner_change(o_v, n_v)
    moved = (out["winner"] or any(r["changed"] for r in out["key_results"]) or out["results"] or out["fleet_flips"]
             or any(c["changed"] for s in out["scenarios"] for c in s["cells"])
             or any(s["status"] != "both" for s in out["scenarios"]))
    out["status"] = "changed" if moved else "unchanged"
    out["headline"] = _headline(out) if moved else "No change in results."
    strategy = _strategy_change(o_e, n_e)
    if strategy:                        # a plan with a traffic profile: its recommendation moved
        out["strategy"] = strategy
        out["headline"] = out["headline"].rstrip(".") + f"; {strategy}."
    return out


def _strategy_change(o_e: Evaluation, n_e: Evaluation) -> str:
    """'the demand curve's cheapest strategy that holds the SLO: autoscaled on x → base + burst on x', or ''."""
    old, new = (demand.recommended(demand.strategies(e)) for e in (o_e, n_e))
    if old is None and new is None or (old and new and old.name == new.name):
        return ""
    name = lambda s: s.name if s else "none holds"          # noqa: E731
    return f"the demand curve's cheapest strategy that holds the SLO: {name(old)} → {name(new)}"


def _value(e: Evaluation | None, name: str):
    if e is None or name not in e.values:
        return None
    return formatting.plain(e.display(name))


def _text(e: Evaluation | None, name: str) -> str | None:
    if e is None or name not in e.values:
        return None
    return shown(e, name).text


def _key_changes(old: ScenarioView | None, new: ScenarioView | None) -> list[dict]:
    """Each key result before and after, matched by id (a row added or removed
    shows as new or removed)."""
    olds = {k.id: k for k in old.key_results} if old else {}
    news = {k.id: k for k in new.key_results} if new else {}
    ids = list(news) + [i for i in olds if i not in news]
    ids.sort(key=lambda i: (news.get(i) or olds[i]).row is not None)       # scalars first, rows in order
    return [_change_row(olds.get(i), news.get(i)) for i in ids]


def _show(value, q) -> str | None:
    if value is None:
        return None
    return formatting.quantity(value, q.unit, q.kind)


def _change_row(o: KeyResult | None, n: KeyResult | None) -> dict:
    k = n or o
    old, new = (o.value if o else None), (n.value if n else None)
    changed = old != new
    label = f"{k.row}: {k.label}" if k.row is not None else k.label
    return {"label": label, "quantity": k.quantity, "row": k.row, "role": k.role, "unit": k.unit,
            "old": old, "new": new, "old_text": o.text if o else None, "new_text": n.text if n else None,
            "change": _delta(old, new, k.unit, k.kind) if changed else "", "changed": changed}


def _delta(old, new, unit: str, kind: str) -> str:
    if old is None:
        return "new"
    if new is None:
        return "removed"
    if isinstance(old, bool) or isinstance(new, bool) or not isinstance(old, (int, float)) \
            or not isinstance(new, (int, float)):
        return "changed"
    d = new - old
    sign = "+" if d > 0 else "−"
    if kind == "money":
        text = sign + formatting.money(abs(d), unit)
    else:
        text = sign + formatting.quantity(abs(d), unit, kind)
    return text + (f" ({_percent(d, old)})" if old else "")


def _percent(d: float, old: float) -> str:
    pct = d / abs(old) * 100
    return ("+" if pct > 0 else "−") + formatting.number(round(abs(pct)) if abs(pct) >= 10 else abs(pct), 2) + " %"


def _results(o_e: Evaluation, n_e: Evaluation) -> list[dict]:
    """Every derived value of the nominal scenario that moved (inputs are listed apart)."""
    out = []
    names = list(n_e.graph.order) + [n for n in o_e.graph.order if n not in n_e.graph.nodes]
    for name in names:
        q = n_e.model.quantities.get(name) or o_e.model.quantities[name]   # each plan's SLOs are its own
        if q.kind == "text" or name in o_e.inputs or name in n_e.inputs:
            continue
        if q.table is None:
            o, n = _value(o_e, name), _value(n_e, name)
            if o != n:
                out.append({"name": name, "unit": q.unit, "old": o, "new": n,
                            "old_text": _text(o_e, name), "new_text": _text(n_e, name)})
            continue
        o_node, n_node = o_e.graph.nodes.get(name), n_e.graph.nodes.get(name)
        if (o_node is None or o_node.formula is None) and (n_node is None or n_node.formula is None):
            continue                                    # an input column: compared with the inputs
        old_keys, new_keys = _row_keys(o_e, q.table), _row_keys(n_e, q.table)
        for key, j in new_keys.items():
            if key not in old_keys or name not in o_e.values or name not in n_e.values:
                continue
            i = old_keys[key]
            o, n = formatting.plain(o_e.display(name)[i]), formatting.plain(n_e.display(name)[j])
            if o != n:
                out.append({"name": f"{q.table}[{key}].{q.column}", "unit": q.unit, "old": o, "new": n,
                            "old_text": _show(o_e.display(name)[i], q), "new_text": _show(n_e.display(name)[j], q)})
    return out


def _row_keys(e: Evaluation, table: str) -> dict[str, int]:
    data = e.scenario.tables.get(table)
    if data is None:
        return {}
    key_q = e.model.quantities[f"{table}.{e.model.tables[table].key}"]
    return {_key_text(row[key_q.column], key_q): i for i, row in enumerate(data.rows)}


def _key_text(value, q) -> str:
    """A raw row's key (base units) as the view names rows."""
    return formatting.key_text(value if q.kind == "text" or isinstance(value, str)
                               else units.to_display(float(value), q.unit))


def _klass(*tags) -> str:
    return "measurement" if any(t in MEASURED for t in tags if t) else "policy"


def _input_changes(old: Side, new: Side) -> tuple[list[dict], list[dict]]:
    """(changed inputs, edits that change no value: sources, notes)."""
    changes: list[dict] = []
    edits: list[dict] = []
    o_e, n_e = old.nominal, new.nominal
    model = n_e.model

    def change(name, tag, old_tag, old_text, new_text, what, source="", pending=False):
        changes.append({"name": name, "tag": tag, "old_tag": old_tag, "class": _klass(tag, old_tag),
                        "old_text": old_text, "new_text": new_text, "what": what, "source": source,
                        "pending": pending})

    for key, get, tag in (("gpu", lambda p: p.gpu.id, "fact"), ("model", lambda p: p.model_entry.id, "fact"),
                          ("sizing", lambda p: p.switches.get("sizing"), "policy")):
        if get(old.plan) != get(new.plan):
            change(key, tag, tag, str(get(old.plan)), str(get(new.plan)), "plan")

    names = [n for n in n_e.graph.order if n in n_e.inputs] + \
            [n for n in o_e.graph.order if n in o_e.inputs and n not in n_e.inputs]
    for name in names:
        o, n = o_e.inputs.get(name), n_e.inputs.get(name)
        old_text, new_text = _text(o_e, name), _text(n_e, name)
        if o and n:
            what = []
            if _value(o_e, name) != _value(n_e, name):
                what.append("value")
            if o.tag != n.tag:
                what.append(f"tag {o.tag} → {n.tag}")
            if o.pending != n.pending:
                what.append("no longer pending" if o.pending else "now pending")
            if what:
                change(name, n.tag, o.tag, old_text, new_text, "; ".join(what), n.source or "", n.pending)
            elif (o.source, o.date, o.note) != (n.source, n.date, n.note):
                edits.append({"name": name, "old_text": _provenance(o), "new_text": _provenance(n)})
        elif n:
            what = "now pinned" if n.pinned else "added"
            change(name, n.tag, None, f"{old_text} (computed)" if old_text and n.pinned else old_text,
                   new_text, what, n.source or "", n.pending)
        else:
            what = "no longer pinned" if o.pinned else "removed"
            change(name, o.tag, o.tag, old_text, f"{new_text} (computed)" if new_text else None, what, o.source or "")

    for tname in list(n_e.scenario.tables) + [t for t in o_e.scenario.tables if t not in n_e.scenario.tables]:
        _table_changes(model, tname, o_e.scenario.tables.get(tname), n_e.scenario.tables.get(tname), change, edits)
    return changes, edits


def _provenance(given) -> str:
    parts = [given.source or "", f"({given.date})" if given.date else "", f"note: {given.note}" if given.note else ""]
    return " ".join(p for p in parts if p) or "—"


def _table_changes(model, tname, od, nd, change, edits) -> None:
    table = model.tables[tname]
    tag = table.tag
    if od is None or nd is None:
        change(tname, tag, tag, None if od is None else f"{len(od.rows)} rows",
               None if nd is None else f"{len(nd.rows)} rows", "table added" if od is None else "table removed")
        return
    key_q = model.quantities[f"{tname}.{table.key}"]
    inputs = [model.quantities[c] for c in table.columns if model.quantities[c].is_input and c != key_q.name]
    old_keys = {_key_text(r[key_q.column], key_q): i for i, r in enumerate(od.rows)}
    new_keys = {_key_text(r[key_q.column], key_q): i for i, r in enumerate(nd.rows)}

    def cell(data, i, q) -> str:
        value = data.rows[i].get(q.column)
        if q.kind == "text":
            return str(value)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "–"
        return formatting.quantity(units.to_display(float(value), q.unit), q.unit, q.kind)

    def summary(data, i) -> str:
        return ", ".join(f"{q.column} {cell(data, i, q)}" for q in inputs
                         if not (isinstance(data.rows[i].get(q.column), float) and math.isnan(data.rows[i][q.column])))

    for attr in ("as_of",):
        if getattr(od, attr) != getattr(nd, attr):
            change(f"{tname}.{attr}", tag, tag, getattr(od, attr) or "—", getattr(nd, attr) or "—", "table date")
    if (od.source, od.note) != (nd.source, nd.note):
        edits.append({"name": f"{tname} (source, note)", "old_text": od.source or "—", "new_text": nd.source or "—"})
    for key, j in new_keys.items():
        if key not in old_keys:
            change(f"{tname}[{key}]", tag, tag, None, summary(nd, j), "row added", (nd.meta[j] or {}).get("source") or "")
            continue
        i = old_keys[key]
        for q in inputs:
            a, b = od.rows[i].get(q.column), nd.rows[j].get(q.column)
            same = a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
            if not same and formatting.plain(a) != formatting.plain(b):
                change(f"{tname}[{key}].{q.column}", tag, tag, cell(od, i, q), cell(nd, j, q), "value",
                       (nd.meta[j] or {}).get("source") or nd.source or "")
        om, nm = od.meta[i] or {}, nd.meta[j] or {}
        if om.get("as_of") != nm.get("as_of"):
            change(f"{tname}[{key}].as_of", tag, tag, om.get("as_of") or "—", nm.get("as_of") or "—", "row date")
        if (om.get("source"), om.get("note")) != (nm.get("source"), nm.get("note")):
            edits.append({"name": f"{tname}[{key}] (source, note)", "old_text": om.get("source") or "—",
                          "new_text": nm.get("source") or "—"})
    for key, i in old_keys.items():
        if key not in new_keys:
            change(f"{tname}[{key}]", tag, tag, summary(od, i), None, "row removed")


def _scenario_changes(old: Plan, new: Plan) -> list[dict]:
    olds = {s.name: s for s in old.scenarios[1:]}
    news = {s.name: s for s in new.scenarios[1:]}
    out = []
    for name in list(news) + [n for n in olds if n not in news]:
        o, n = olds.get(name), news.get(name)
        if o is None:
            out.append({"scenario": name, "title": n.title, "what": "added", "old_text": None,
                        "new_text": "; ".join(n.changes)})
        elif n is None:
            out.append({"scenario": name, "title": o.title, "what": "removed", "old_text": "; ".join(o.changes),
                        "new_text": None})
        elif o.changes != n.changes:
            out.append({"scenario": name, "title": n.title, "what": "changed", "old_text": "; ".join(o.changes),
                        "new_text": "; ".join(n.changes)})
    return out


def _scenarios(old: Side, new: Side) -> tuple[list[dict], list[dict]]:
    """Per scenario: key results before/after (a table row in words); and the
    verdicts (the fixed-fleet check) that flip."""
    olds = {s.name: (e, s) for e, s in zip(old.evaluations, old.view.scenarios)}
    news = {s.name: (e, s) for e, s in zip(new.evaluations, new.view.scenarios)}
    scenarios, flips = [], []
    for name in list(news) + [n for n in olds if n not in news]:
        (o_e, o_s), (n_e, n_s) = olds.get(name, (None, None)), news.get(name, (None, None))
        s = n_s or o_s
        status = "both" if o_s and n_s else ("added" if n_s else "removed")
        rows = _key_changes(o_s, n_s)
        cells = [{"label": r["label"], "old_text": r["old_text"], "new_text": r["new_text"], "changed": r["changed"]}
                 for r in rows if r["row"] is None]
        for key in dict.fromkeys(r["row"] for r in rows if r["row"] is not None):
            mine = [r for r in rows if r["row"] == key]
            cells.append({"label": key, "old_text": _row_text(old, o_e, o_s, key),
                          "new_text": _row_text(new, n_e, n_s, key), "changed": any(r["changed"] for r in mine)})
            for r in mine:
                if r["role"] == "verdict" and r["old"] is not None and r["new"] is not None and r["changed"]:
                    flips.append({"scenario": name, "title": s.title, "row": key, "old": bool(r["old"]),
                                  "new": bool(r["new"]), "old_text": _row_text(old, o_e, o_s, key),
                                  "new_text": _row_text(new, n_e, n_s, key)})
        scenarios.append({"name": name, "title": s.title, "status": status, "cells": cells})
    return scenarios, flips


def _row_text(side: Side, e: Evaluation | None, s: ScenarioView | None, key: str) -> str | None:
    """A table row's key results in words (``sentences.row_summary``)."""
    results = s.rows().get(key) if s else None
    return side.view.row_summary(e, results[0].index) if results else None


def _winner_change(old: view.PlanView, new: view.PlanView) -> dict | None:
    """The recommended candidate before and after, when it changes (plans with ``candidates:``)."""
    def winner(v):
        r = v.candidates.ranking if v.candidates else None
        return r.evaluated.candidates[r.winner].name if r and r.winner is not None else None
    before, after = winner(old), winner(new)
    return {"old": before, "new": after} if before != after else None


def _headline(p: dict) -> str:
    """'Monthly cost rises by $29,982 (+50 %) on aws-p4de.24xlarge; active GPUs 9 → 13.'

    Built from the key results' roles (layout.yaml): how the `cost` moved per
    row, the `size` of rows whose cost did not move, the first `count` that
    changed, the `rate` when no cost moved, and where a `verdict` flipped.
    """
    rows = p["key_results"]
    role = lambda name: [r for r in rows if r["role"] == name]        # noqa: E731
    costs = [r for r in role("cost") if r["old"] is not None and r["new"] is not None]
    moved = sorted((r for r in costs if r["changed"]), key=lambda r: -abs(r["new"] - r["old"]))
    parts = [f"Recommended candidate {p['winner']['old'] or 'none'} → {p['winner']['new'] or 'none'}"] \
        if p.get("winner") else []
    if moved:
        phrases = []
        for r in moved[:2]:
            d = r["new"] - r["old"]
            pct = f" ({_percent(d, r['old'])})" if r["old"] else ""
            phrases.append(f"{'rises' if d > 0 else 'falls'} by ${round(abs(d)):,}{pct} on {r['row']}")
        text = _sentence_case(moved[0]["label"].split(": ", 1)[-1]) + " " + " and ".join(phrases)
        if len(moved) > 2:
            text += f" (and {len(moved) - 2} more deployment{'s' if len(moved) > 3 else ''})"
        parts.append(text)
        sizes = {r["row"]: r for r in role("size")}
        steady = [r for r in costs if not r["changed"]]
        if steady:
            parts.append(", ".join(f"{r['row']} unchanged ({sizes[r['row']]['new_text']} "
                                   f"{sizes[r['row']]['label'].split(': ', 1)[-1]})" if r["row"] in sizes
                                   else f"{r['row']} unchanged" for r in steady))
    elif costs:
        parts.append(_sentence_case(costs[0]["label"].split(": ", 1)[-1]) + " unchanged")
    counts = [r for r in role("count") if r["row"] is None]
    changed_count = next((r for r in counts if r["changed"]), None)
    if changed_count:
        parts.append(f"{changed_count['label']} {_plain_text(changed_count['old'])} → {_plain_text(changed_count['new'])}")
    elif counts:
        parts.append(f"{counts[0]['label']} unchanged at {_plain_text(counts[0]['new'])}")
    rate = next((r for r in role("rate") if r["changed"]), None)
    if rate and not moved:
        parts.append(f"{rate['label']} {rate['old_text']} → {rate['new_text']}")
    breaks = sorted({f["scenario"] for f in p["fleet_flips"] if not f["new"]})
    holds = sorted({f["scenario"] for f in p["fleet_flips"] if f["new"]})
    if breaks or holds:
        flips = ([f"breaks in {', '.join(breaks)}"] if breaks else []) + ([f"holds in {', '.join(holds)}"] if holds else [])
        parts.append("the fixed fleet now " + " and ".join(flips))
    if not moved and not changed_count and not breaks and not holds:
        count = len(p["results"])
        if count:
            parts.append(f"{count} other result{'s' if count != 1 else ''} change")
    return "; ".join(parts) + "."


def _sentence_case(text: str) -> str:
    """'active GPUs' -> 'Active GPUs'; a symbol ('λ_safe') stays as written."""
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def _plain_text(value) -> str:
    return "—" if value is None else formatting.number(value)


# -- Markdown -------------------------------------------------------------------------------------

def markdown(doc: dict, details: bool = True) -> str:
    """The PR comment. Over GitHub's size limit, the folded details are left out."""
    text = _markdown(doc, details)
    if details and len(text) > COMMENT_LIMIT:
        text = _markdown(doc, details=False)
    return text


def _markdown(doc: dict, details: bool) -> str:
    plans = doc["plans"]
    moved = [p for p in plans if p["status"] != "unchanged"]
    if not moved:
        changes = sum(len(p["inputs"]) + len(p["scenario_changes"]) for p in plans)
        edits = sum(len(p["edits"]) for p in plans)
        notes = ([f"{changes} input change{'s' if changes != 1 else ''} with no effect"] if changes else []) + \
                ([f"{edits} source or note edit{'s' if edits != 1 else ''}"] if edits else [])
        extra = f" ({'; '.join(notes)})" if notes else ""
        return f"no change in results{extra} {MARKER}\n"
    lines = [MARKER, "#### capplan: capacity plan diff", ""]
    single = len(moved) == 1 and len(plans) == 1
    if single:      # the decision as the record's first screen says it, then what changed
        lines += [moved[0]["first_screen"].strip(), ""] if moved[0]["first_screen"] else []
        lines += [f"**What changed:** {_cell(moved[0]['headline'])}", ""]
    else:
        lines += [f"- {_code(p['plan'])}: **{_cell(p['headline'])}**" for p in moved] + [""]
    for p in moved:
        lines += _plan_section(p, doc, details, screen=not single)
    same = [p["plan"] for p in plans if p["status"] == "unchanged"]
    if same:
        lines += [f"Unchanged: {', '.join(_code(n) for n in same)}.", ""]
    base = f" against {_code(doc['base'])}" if doc.get("base") else ""
    lines.append(f"<sub>capplan diff{base}: every number evaluated by the same engine on both sides.</sub>")
    return "\n".join(lines) + "\n"


def _cell(text) -> str:
    return markdown_cell(text, empty="—")


def _code(text) -> str:
    return markdown_code(text, empty="—")


def _plan_section(p: dict, doc: dict, details: bool, screen: bool = True) -> list[str]:
    """One plan's changes; with ``screen``, opened by the new version's first screen."""
    files = p["new_file"] or p["old_file"]
    lines = [f"##### {_code(files)} — {_cell(p['title'])}", ""]
    if screen and p["first_screen"]:
        lines += [p["first_screen"].strip(), ""]
    if p["old_file"] and p["new_file"] and not doc.get("base"):
        lines += [f"{_code(p['old_file'])} → {_code(p['new_file'])}", ""]
    if p["status"] == "added":
        lines += ["New plan.", ""]
    elif p["status"] == "removed":
        lines += ["Plan removed.", ""]
    elif p["status"] == "base_error":
        lines += [f"> [!WARNING]\n> The old version does not load with this capplan: {_cell(p['base_error'])}", ""]
    if len(doc["plans"]) > 1 or p["status"] != "changed":
        lines += [f"**{_cell(p['headline'])}**", ""]

    lines += ["| Result (nominal) | Before | After | Change |", "| --- | ---: | ---: | ---: |"]
    for r in p["key_results"]:
        label = _cell(r["label"] if r["row"] is not None else _sentence_case(r["label"]))
        label = f"**{label}**" if r["changed"] else label
        lines.append(f"| {label} | {_cell(r['old_text'])} | {_cell(r['new_text'])} | {r['change'] or ''} |")
    lines.append("")

    measured = [c for c in p["inputs"] if c["class"] == "measurement"]
    chosen = [c for c in p["inputs"] if c["class"] != "measurement"]
    if measured:
        lines += ["**⚠ Measurements and facts changed** — check them against their source:", ""]
        seen: set[str] = set()
        lines += [f"- ⚠ {'measurement' if c['tag'] == 'measurement' else c['tag']} changed: {_input_line(c, seen)}"
                  for c in measured]
        lines.append("")
    if chosen:
        seen = set()
        lines += ["**Policies and assumptions changed:**", ""]
        lines += [f"- {_input_line(c, seen)}" for c in chosen]
        lines.append("")
    if p["scenario_changes"]:
        lines += ["**Scenarios changed:**", ""]
        for s in p["scenario_changes"]:
            if s["what"] == "added":
                lines.append(f"- {_code(s['scenario'])} ({_cell(s['title'])}) added: {_cell(s['new_text'])}")
            elif s["what"] == "removed":
                lines.append(f"- {_code(s['scenario'])} ({_cell(s['title'])}) removed (was: {_cell(s['old_text'])})")
            else:
                lines.append(f"- {_code(s['scenario'])} ({_cell(s['title'])}): {_cell(s['old_text'])} → {_cell(s['new_text'])}")
        lines.append("")
    if p["flip_points"]["crossed"] or p["flip_points"]["near"]:
        lines += ["**Flip points** (how far the decision holds: each input alone, every other at its value):", ""]
        lines += [f"- crosses a flip point: {_code(c['input'])} {_cell(c['what'])}" for c in p["flip_points"]["crossed"]]
        lines += [f"- ⚠ close to a flip point: {_code(c['input'])} {_cell(c['what'])}" for c in p["flip_points"]["near"]]
        lines.append("")
    if p["fleet_flips"]:
        lines += ["**Fixed-fleet checks that flip** (the nominal fleet, minus the scenario's failed GPUs, "
                  "at the scenario's λ_safe):", "",
                  "| Scenario | Deployment | Before | After |", "| --- | --- | --- | --- |"]
        for f in p["fleet_flips"]:
            lines.append(f"| {_code(f['scenario'])} {_cell(f['title'])} | {_cell(f['row'])} | "
                         f"{_cell(f['old_text'])} | {_cell(f['new_text'])} |")
        lines.append("")
    if details and (p["results"] or p["scenarios"] or p["edits"]):
        lines += _details(p)
    elif not details:
        lines += ["<details><summary>Details left out</summary>", "",
                  "The comment would exceed GitHub's size limit; run `capplan diff` locally for the details.",
                  "", "</details>", ""]
    return lines


def _input_line(c: dict, seen: set[str]) -> str:
    """One changed input; a source already shown in this list is not repeated."""
    old = _cell(c["old_text"])
    new = _cell(c["new_text"])
    tag = c["tag"] if not c["old_tag"] or c["old_tag"] == c["tag"] else f"{c['old_tag']} → {c['tag']}"
    what = "" if c["what"] in ("value", "plan") else f"; {c['what']}"
    text = f"{_code(c['name'])}: {old} → **{new}** ({tag}{what}{', ⚠ pending' if c.get('pending') else ''})"
    source = " ".join(str(c.get("source") or "").split())
    if source and source not in seen:
        seen.add(source)
        text += f" — {_cell(source)}"
    return text


def _details(p: dict) -> list[str]:
    parts = []
    if p["results"]:
        parts.append(f"{len(p['results'])} changed result{'s' if len(p['results']) != 1 else ''}")
    if p["scenarios"]:
        parts.append(f"{len(p['scenarios'])} scenarios")
    if p["edits"]:
        parts.append(f"{len(p['edits'])} source edit{'s' if len(p['edits']) != 1 else ''}")
    lines = [f"<details><summary>Details: {', '.join(parts)}</summary>", ""]
    if p["results"]:
        lines += ["Every result of the nominal scenario that moved:", "",
                  "| Quantity | Before | After |", "| --- | ---: | ---: |"]
        lines += [f"| {_code(r['name'])} | {_cell(r['old_text'])} | {_cell(r['new_text'])} |" for r in p["results"]]
        lines.append("")
    if p["scenarios"]:
        header = [c["label"] for c in p["scenarios"][0]["cells"]]
        lines += ["Scenarios (per deployment: nodes and monthly cost re-sized for the scenario; "
                  "whether the nominal fleet holds):", "",
                  "| Scenario | " + " | ".join(_cell(h) for h in header) + " |",
                  "| --- | " + " | ".join("---:" for _ in header) + " |"]
        for s in p["scenarios"]:
            cells = []
            by_label = {c["label"]: c for c in s["cells"]}
            for h in header:
                c = by_label.get(h)
                if c is None:
                    cells.append("—")
                elif c["changed"]:
                    cells.append(f"{_cell(c['old_text'])} → {_cell(c['new_text'])}")
                else:
                    cells.append(_cell(c["new_text"]))
            note = "" if s["status"] == "both" else f" ({s['status']})"
            lines.append(f"| {_code(s['name'])}{note} | " + " | ".join(cells) + " |")
        lines.append("")
    if p["edits"]:
        lines += ["Sources and notes edited (no value changed):", ""]
        lines += [f"- {_code(x['name'])}: {_cell(x['old_text'])} → {_cell(x['new_text'])}" for x in p["edits"]]
        lines.append("")
    lines += ["</details>", ""]
    return lines
