"""No module uses another module's private names: what modules share is their public interface.

A name with one leading underscore is its module's own, free to change with
it; a sibling that imports it (``from capplan.x import _y``) or reads it
(``x._y``) is tied to a detail nobody promised. What one module of capplan
takes from another is named without the underscore instead (listed in the
module's ``__all__`` where it has one). Read from each module's source with
``ast``, imports inside functions included; names such as ``__version__`` are
no private names.

``capplan/rendering`` is being rebuilt by another change and is left to it:
its uses are counted and shown (a warning), not refused; remove
:data:`LEFT_TO_REBUILD` when that change lands to hold it to the rule too.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from test_layers import SOURCE, imported_from, modules, package_of, tree_of

LEFT_TO_REBUILD = ("capplan.rendering",)


def private_uses(source: Path) -> list[tuple[str, str]]:
    """``(importing module, "path:line: module uses owner._name")`` for each use of another
    capplan module's private name in the package under ``source``."""
    known = modules(source)
    found = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = f"{path.relative_to(source)}"
        bound = {}                              # a local name → the capplan module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bound.update({a.asname: a.name for a in node.names if a.asname and a.name in known})
                bound.update({a.name.split(".")[0]: a.name.split(".")[0] for a in node.names
                              if not a.asname and a.name in known})       # ``import a.b`` binds ``a``
            elif isinstance(node, ast.ImportFrom) and (owner := imported_from(node, package_of(name, path))) in known:
                for a in node.names:
                    if f"{owner}.{a.name}" in known:
                        bound[a.asname or a.name] = f"{owner}.{a.name}"
                    elif _private(a.name) and owner != name:
                        found.append((name, f"{where}:{node.lineno}: {name} uses {owner}.{a.name}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = _module_read(node.value, bound, known)
                if owner is not None and owner != name:
                    found.append((name, f"{where}:{node.lineno}: {name} uses {owner}.{node.attr}"))
    return sorted(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_read(node: ast.expr, bound: dict[str, str], known: dict) -> str | None:
    """The capplan module an expression such as ``m`` or ``capplan.engine.graph`` names, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return None
    dotted = ".".join([bound[node.id], *reversed(parts)])
    return dotted if dotted in known else None


def _left(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in LEFT_TO_REBUILD)


def test_no_module_uses_another_modules_private_name():
    found = private_uses(SOURCE)
    left = [use for name, use in found if _left(name)]
    if left:
        warnings.warn(f"{len(left)} private names shared inside {', '.join(LEFT_TO_REBUILD)}:\n" + "\n".join(left),
                      stacklevel=1)
    assert [use for name, use in found if not _left(name)] == []


OWNER = {"__init__.py": "", "engine/__init__.py": "",
         "engine/graph.py": "_SECRET = 1\n__version__ = '1'\ndef shared(): ...\ndef _own(): return _SECRET\n"}


def test_a_module_using_its_own_private_names_and_a_dunder_passes(tmp_path):
    reader = "from capplan.engine.graph import __version__, shared\nfrom capplan.engine import graph\ngraph.shared()\n"
    assert private_uses(tree_of(tmp_path, {**OWNER, "engine/reader.py": reader})) == []


@pytest.mark.parametrize("planted", [
    "from capplan.engine.graph import _SECRET\n",
    "def f():\n    from .graph import _own\n",                             # relative, inside a function
    "from capplan.engine import graph\ngraph._own()\n",
    "import capplan.engine.graph as g\ng._SECRET\n",
    "import capplan.engine.graph\ncapplan.engine.graph._own()\n",
    "from capplan import engine\nengine.graph._SECRET\n",
])
def test_a_planted_use_of_a_private_name_is_found(tmp_path, planted):
    found = private_uses(tree_of(tmp_path, {**OWNER, "engine/reader.py": planted}))
    used_at = planted.count("\n")                                           # each plants its use last
    assert len(found) == 1 and found[0][1].startswith(
        f"capplan/engine/reader.py:{used_at}: capplan.engine.reader uses capplan.engine.graph._"), found
