"""capplan: LLM-serving capacity plans as unit-checked, spreadsheet-style models.

The pipeline, one package per stage::

    loading/    YAML with line numbers, catalog, plan, benchmark importers
    engine/     formulas, units, the standard model, graph, units check, evaluate
    rendering/  the view of the results, Markdown record, Excel workbook, JSON
    review/     diff, explain, expect, JSON Schema
    build.py    plan -> files in memory -> out/, all or nothing
    cli.py      the ``capplan`` command

The public API is the four names below; everything else may change between
versions. Importing ``capplan`` is cheap: each function imports its stage
when called, so ``capplan --help`` does not pay for sympy or openpyxl.
"""

from __future__ import annotations

from capplan.errors import CapplanError

__all__ = ["CapplanError", "compile", "evaluate", "load"]


def load(path):
    """Read and validate a plan file against the standard model: a ``Plan``."""
    from capplan.analysis.pipeline import load_plan
    return load_plan(path)


def evaluate(plan):
    """Every scenario of a loaded plan, nominal first: a list of ``Evaluation``."""
    from capplan.engine.evaluate import evaluate_all
    from capplan.language.model import standard_model
    return evaluate_all(plan, standard_model())


def compile(path):  # noqa: A001 - the verb of the pipeline, as in jinja2's Environment.compile
    """Load, evaluate and render a plan: ``Compiled`` with its output files in memory."""
    from capplan.build import compile_plan
    return compile_plan(path)
