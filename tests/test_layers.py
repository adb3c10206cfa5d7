"""The packages stack in layers, and no module imports one above it or loops back.

language → loading → engine → artifacts → analysis → rendering → review → the commands:
read from each module's own source with ``ast`` (imports inside functions
included, since they run too), every import of a capplan module must go to
the same layer or one below, and the modules must import one another without
a cycle. Importing ``a.b.c`` runs ``a/b/__init__.py`` first, so it counts as
an import of the package ``a.b`` too. Imports under ``if TYPE_CHECKING:`` never run; they may name a
module of the same layer that imports this one (an annotation), but not one
above.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SOURCE = ROOT / "src"

# Lowest first. A top-level module is placed by name; a package by its first part.
LAYERS = (
    ("errors", "bounded", "names", "formatting", "resources", "xlsx", "collector"),
    ("language",),
    ("loading",),
    ("engine",),
    ("artifacts",),
    ("analysis",),
    ("rendering",),
    ("review",),
    ("adapters",),
    ("manifest", "cache", "build", "verify", "ahead", "scaffold", "estimate", "validate", "pools", "cli", ""),     # "": capplan/__init__, the API
)


def modules(source: Path, package: str = "capplan") -> dict[str, Path]:
    """Every module of the package: dotted name → file."""
    out = {}
    for path in sorted((source / package).rglob("*.py")):
        parts = path.relative_to(source).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """``(imported module, line, only for type checking)`` for each capplan module ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    checking = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                for stmt in block.body for n in ast.walk(stmt)}
    here = package_of(name, path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, here)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known:
                out += [(module, node.lineno, id(node) in checking) for module in _with_packages(target, name)]
    return out


def package_of(name: str, path: Path) -> str:
    """The package a module's relative imports start from (a package's ``__init__`` is its own)."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported_from(node: ast.ImportFrom, here: str) -> str:
    """The absolute name of the module a ``from … import`` reads, ``here`` the importer's package."""
    if not node.level:
        return node.module or ""
    parts = here.split(".")[:len(here.split(".")) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _with_packages(target: str, importer: str) -> list[str]:
    """``target`` and the packages above it that importing it runs first (their ``__init__``),
    but for those the importer is inside, which are imported before it (and itself)."""
    parts = target.split(".")
    chain = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return [m for m in chain if m != importer and not importer.startswith(m + ".")]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def layer(name: str) -> int:
    """The layer of a capplan module (``capplan.engine.graph`` → engine's)."""
    first = name.split(".")[1] if "." in name else ""
    for level, members in enumerate(LAYERS):
        if first in members:
            return level
    raise AssertionError(f"{name} is in no layer: place it in LAYERS of tests/test_layers.py")


def problems(source: Path) -> list[str]:
    """Every upward import and every import cycle of the package under ``source``."""
    known = modules(source)
    found, graph = [], {name: set() for name in known}
    for name, path in known.items():
        for target, line, checking in imports(name, path, known):
            if layer(target) > layer(name):
                found.append(f"{path.relative_to(source)}:{line}: {name} imports {target}, a layer above it")
            if not checking:
                graph[name].add(target)
    found += [f"import cycle: {' → '.join(cycle)}" for cycle in cycles(graph)]
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each group of modules that import one another (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(_path_through(graph, set(group)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _path_through(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A cycle inside one strongly connected group, as the modules in import order."""
    start = min(group)
    path, seen = [start], {start}
    while True:
        step = min(w for w in graph[path[-1]] if w in group)
        if step in seen:
            return path[path.index(step):] + [step]
        path.append(step)
        seen.add(step)


def circles_in_packages(source: Path) -> list[str]:
    """Every import cycle among the modules of one top-level package (its subpackages included),
    imports for type checking counted too: a circle a type annotation draws is still two modules
    that cannot be read, moved or lifted apart (the sheet writers and their builder were one)."""
    known = modules(source)
    found = []
    for package in sorted(n for n in known if n.count(".") == 1 and known[n].name == "__init__.py"):
        inside = {n for n in known if n == package or n.startswith(package + ".")}
        graph = {n: {t for t, _, _ in imports(n, known[n], known) if t in inside} for n in inside}
        found += [f"import cycle in {package}: {' → '.join(cycle)}" for cycle in cycles(graph)]
    return found


def analysis_in_rendering(source: Path) -> list[str]:
    """Every import of ``capplan.analysis`` by a module of ``capplan.rendering``: the outputs read
    the artifacts the pipeline computed (:mod:`capplan.artifacts`), they compute nothing."""
    known = modules(source)
    deepest: dict[tuple[str, int], str] = {}        # (module, line) -> the analysis module it names
    for n in known:
        if n.startswith("capplan.rendering"):
            for t, line, _ in imports(n, known[n], known):
                if (t == "capplan.analysis" or t.startswith("capplan.analysis.")) and \
                        len(t) > len(deepest.get((n, line), "")):
                    deepest[(n, line)] = t
    return sorted(f"{known[n].relative_to(source)}:{line}: {n} imports {t}" for (n, line), t in deepest.items())


def test_capplan_imports_only_downward_and_without_a_cycle():
    assert problems(SOURCE) == []


def test_no_package_has_an_import_cycle_inside_it_even_through_annotations():
    assert circles_in_packages(SOURCE) == []


def test_rendering_imports_nothing_of_analysis():
    """#38: the outputs read the analyses' artifacts (capplan.artifacts), never the analyses, as dbt's
    docs read the runner's artifacts: 20 such imports were left when this test was written."""
    assert analysis_in_rendering(SOURCE) == []


def outside_imports(folder: Path) -> list[str]:
    """Every import of a module under ``folder`` that is neither the standard library's nor the
    folder's own (relative, and not above the folder)."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        depth = len(path.relative_to(folder).parts)       # a relative import may climb this far
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level:
                ok = node.level <= depth
                names = ["." * node.level + (node.module or "")]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                ok = all(n.partition(".")[0] in sys.stdlib_module_names | {"__future__"} for n in names)
            else:
                continue
            if not ok:
                found.append(f"{path.relative_to(folder.parent)}:{node.lineno}: imports {', '.join(names)}")
    return found


def test_the_xlsx_writer_imports_only_the_standard_library_and_itself():
    """:mod:`capplan.xlsx` knows nothing of capplan, so another project can take it as it is."""
    assert outside_imports(SOURCE / "capplan" / "xlsx") == []


def test_an_outside_import_of_a_library_folder_is_found(tmp_path):
    folder = tmp_path / "lib"
    (folder / "inner").mkdir(parents=True)
    (folder / "a.py").write_text("import io\nfrom . import b\nfrom capplan import errors\nimport numpy\n")
    (folder / "inner" / "c.py").write_text("from .. import a\nfrom ... import outside\n")
    assert outside_imports(folder) == ["lib/a.py:3: imports capplan", "lib/a.py:4: imports numpy",
                                       "lib/inner/c.py:2: imports ..."]


def test_every_module_and_package_has_a_layer():
    for name in modules(SOURCE):
        layer(name)


def tree_of(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``capplan`` of the given files (path under it → source) under ``tmp_path``."""
    for name, text in files.items():
        path = tmp_path / "capplan" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


CLEAN = {"__init__.py": "", "errors.py": "", "engine/__init__.py": "", "engine/graph.py": "from capplan import errors\n",
         "rendering/__init__.py": "", "rendering/view.py": "from capplan.errors import x\n"}


def test_a_clean_tree_passes(tmp_path):
    assert problems(tree_of(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("planted", [
    "from capplan.rendering import view\n",                        # at the top of the module
    "def f():\n    from capplan.rendering.view import x\n",         # inside a function: it runs too
    "from ..rendering import view\n",                              # relative
    "import capplan.rendering.view\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from capplan.rendering.view import V\n",
])
def test_a_planted_upward_import_is_found(tmp_path, planted):
    found = problems(tree_of(tmp_path, {**CLEAN, "engine/graph.py": planted}))
    where = f"capplan/engine/graph.py:{planted.count(chr(10))}: capplan.engine.graph imports"
    assert found == [f"{where} capplan.rendering, a layer above it",           # its __init__ runs first
                     f"{where} capplan.rendering.view, a layer above it"], found


def test_a_cycle_within_a_layer_is_found_and_a_type_checking_one_is_not(tmp_path):
    loop = {**CLEAN, "rendering/a.py": "def f():\n    from capplan.rendering import b\n",
            "rendering/b.py": "from capplan.rendering.a import f\n"}
    assert problems(tree_of(tmp_path / "loop", loop)) == [
        "import cycle: capplan.rendering.a → capplan.rendering.b → capplan.rendering.a"]
    annotated = {**loop, "rendering/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                           "    from capplan.rendering import b\n"}
    assert problems(tree_of(tmp_path / "annotated", annotated)) == []


def test_a_cycle_inside_a_package_is_found_through_annotations_and_across_subpackages(tmp_path):
    annotated = {**CLEAN, "rendering/sub/__init__.py": "",
                 "rendering/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from capplan.rendering.sub.b import B\n",
                 "rendering/sub/b.py": "from capplan.rendering import a\n"}
    assert circles_in_packages(tree_of(tmp_path, annotated)) == [
        "import cycle in capplan.rendering: capplan.rendering.a → capplan.rendering.sub.b → capplan.rendering.a"]
    assert circles_in_packages(tree_of(tmp_path / "clean", CLEAN)) == []


def test_an_analysis_import_in_rendering_is_found(tmp_path):
    planted = {**CLEAN, "analysis/__init__.py": "", "analysis/ranking.py": "",
               "rendering/view.py": "def f():\n    from capplan.analysis.ranking import MONTH\n"}
    assert analysis_in_rendering(tree_of(tmp_path, planted)) == [
        "capplan/rendering/view.py:2: capplan.rendering.view imports capplan.analysis.ranking"]


def test_a_module_outside_every_layer_is_named(tmp_path):
    with pytest.raises(AssertionError, match="capplan.stray is in no layer"):
        problems(tree_of(tmp_path, {**CLEAN, "stray.py": "from capplan import errors\n"}))
