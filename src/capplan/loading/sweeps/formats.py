"""The benchmark file formats capplan imports, as one table: a new format is one module and one row.

Each :class:`Format` names what a record calls it, what it is read from (a
``.csv`` file's text, a ``.yaml`` report's value, a JSON file's one value), how
a file is recognised (``looks_like``), how its runs are parsed and which
release of its tool it records. :func:`choose` takes the first row that
recognises a file, so a row above is preferred to the rows below it (a GuideLLM
report holds ``benchmarks`` whatever else it holds; a ``vllm bench sweep
serve`` run is a vLLM result that also counts its run). JSON Lines files hold
several vLLM results and are read by :mod:`~capplan.loading.sweeps.files`
object by object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from capplan.loading.sweeps import estimate, guidellm, vllm
from capplan.loading.sweeps.csv_table import parse_csv
from capplan.loading.sweeps.points import SweepPoint

SUMMARY = "vllm-bench-sweep-serve summary (not counted: its runs are the run=N.json files beside it)"


def _no_release(doc: Any) -> str:
    return ""


@dataclass(frozen=True)
class Format:
    """One kind of benchmark file, as :func:`choose` recognises and reads it."""

    name: str                                             # SweepFile.format (unless ``name_of`` gives it)
    read_from: tuple[str, ...]                            # "csv" (the text), "yaml", "json" (the value)
    looks_like: Callable[[Any], bool]
    parse: Callable[[Any, str, Any], list[SweepPoint]]    # (the file's value, its path, the SLOs) -> its runs
    release: Callable[[Any], str] = _no_release           # the tool's release the file records, or ''
    name_of: Callable[[Any], str] | None = None           # the name where it depends on the file (a schema)

    def named(self, doc: Any) -> str:
        """What the record calls a file of this format."""
        return self.name if self.name_of is None else self.name_of(doc)


def _any(doc: Any) -> bool:
    return True


def _no_runs(doc: Any, rel: str, slos) -> list[SweepPoint]:
    """A file recorded but never counted (its runs are elsewhere, or it is a warm-up)."""
    return []


def _one_result(doc: dict, rel: str, slos) -> list[SweepPoint]:
    return [vllm.parse(doc, rel, None, slos)]


FORMATS = (
    Format("csv", ("csv",), _any, parse_csv),
    Format("guidellm", ("yaml", "json"), guidellm.looks_like, guidellm.parse_guidellm, guidellm.release,
           guidellm.format_name),
    Format(estimate.FORMAT, ("yaml",), estimate.looks_like, estimate.parse, estimate.release),
    Format("vllm-bench-sweep-serve warm-up run (not counted)", ("json",), vllm.is_warm_up, _no_runs),
    Format("vllm-bench-sweep-serve run", ("json",), vllm.is_sweep_run, _one_result),   # <combination>/run=N.json
    Format("inferencex", ("json",), vllm.is_inferencex, _one_result),
    Format("vllm-benchmark-serving", ("json",), vllm.is_legacy_result, _one_result),
    Format("vllm-bench-serve", ("json",), vllm.looks_like, _one_result),
    Format(SUMMARY, ("json",), vllm.is_summary, _no_runs),     # the runs it lists are their own run=N.json files
)


def choose(doc: Any, read_from: str) -> Format | None:
    """The first format read from ``read_from`` that recognises ``doc``; None: no format does."""
    return next((f for f in FORMATS if read_from in f.read_from and f.looks_like(doc)), None)
