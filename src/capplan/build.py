"""Compile plans into their outputs, and check that outputs are current.

A plan compiles to a set of files held in memory first (record, JSON and,
when available, the workbook); only when every one rendered are they written,
each through a temporary file and an atomic rename. So a plan that fails
leaves its previous outputs untouched, and an interrupted write never leaves a
half file behind.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from capplan.engine.evaluate import Evaluation, evaluate_all
from capplan.engine.model import Model, standard_model
from capplan.errors import CapplanError
from capplan.loading.plan import Plan, load
from capplan.rendering import jsonout, record, view
from capplan.rendering.workbook import render_workbook

_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass
class Compiled:
    plan: Plan
    evaluations: list[Evaluation]
    files: dict[str, bytes]          # file name in out/ -> content


def plan_paths(given: list[str], plans_dir: Path = Path("plans")) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    if not plans_dir.is_dir():
        raise CapplanError(f"no plans given and no '{plans_dir}/' folder here")
    paths = sorted(plans_dir.glob("*.yaml")) + sorted(plans_dir.glob("*.yml"))
    if not paths:
        raise CapplanError(f"no plans (*.yaml) in '{plans_dir}/'")
    return paths


def load_plan(path: Path, model: Model | None = None) -> Plan:
    """A plan file read against the model, named as the user would name it (relative to here)."""
    return load(Path(path), model or standard_model(), display=_display(Path(path)))


def evaluate_plan(path: Path, model: Model | None = None) -> tuple[Plan, list[Evaluation]]:
    model = model or standard_model()
    plan = load_plan(path, model)
    return plan, evaluate_all(plan, model)


def compile_plan(path: Path, model: Model | None = None) -> Compiled:
    plan, evaluations = evaluate_plan(path, model)
    shown = view.build(plan, evaluations)
    files = {
        f"{plan.name}.md": record.render(shown).encode("utf-8"),
        f"{plan.name}.json": jsonout.dumps(jsonout.document(shown)).encode("utf-8"),
        f"{plan.name}.xlsx": render_workbook(plan, evaluations, evaluations[0].model),
    }
    return Compiled(plan, evaluations, files)


def write(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    """Write each file atomically; return the paths whose bytes changed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, content in sorted(files.items()):
        target = out_dir / name
        if target.exists() and target.read_bytes() == content:
            continue
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
            os.chmod(tmp, 0o666 & ~_UMASK)       # mkstemp makes 0600; outputs are ordinary files
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        changed.append(target)
    return changed


def stale(out_dir: Path, compiled: Compiled) -> list[str]:
    """Outputs in out_dir that are missing or differ from a fresh build."""
    out = []
    for name, content in sorted(compiled.files.items()):
        target = out_dir / name
        if not target.exists():
            out.append(f"{target} is missing")
        elif target.read_bytes() != content:
            out.append(f"{target} is out of date")
    return out


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
