"""Read a plan's sweep files and recognise each file's format.

The files are the ones :mod:`~capplan.loading.sweeps.locate` finds inside the
plan's repository, de-duplicated and sorted by their POSIX path, so the result
does not depend on the pattern order or the file system. An
unreadable, non-UTF-8, empty, invalid or truncated file, an unknown format or a
missing or malformed field raises :class:`~capplan.errors.CapplanError` naming
the file (relative path), the key or line, and what is wrong.

The format comes from the content, not the name (except ``.csv``, ``.yaml``
and ``.jsonl``): a GuideLLM report holds ``benchmarks``, a vLLM result
``request_rate`` and ``completed``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath
from typing import Any

from capplan.engine.model import Slo, standard_model
from capplan.errors import CapplanError
from capplan.loading import yamlfile
from capplan.loading.sweeps import vllm
from capplan.loading.sweeps.csv_table import parse_csv
from capplan.loading.sweeps.fields import err
from capplan.loading.sweeps.guidellm import parse_guidellm
from capplan.loading.sweeps.locate import Root, expand
from capplan.loading.sweeps.points import SweepFile, SweepPoint


def _json_error(exc: json.JSONDecodeError, text: str, where: str) -> CapplanError:
    if exc.pos >= len(text.rstrip()):
        what = "truncated JSON: the file ends before the JSON value is complete"
    else:
        what = "invalid JSON"
    return err(f"{what}{where} ({exc.msg} at line {exc.lineno}, column {exc.colno})",
               None, exc.lineno)


def _load_json_documents(text: str, jsonl: bool) -> tuple[list[tuple[Any, int]], bool]:
    """Parse one JSON value, or several concatenated (JSON Lines).

    Returns ``[(value, line)]`` and whether the file was a sequence.
    """
    decoder = json.JSONDecoder()
    if not jsonl:
        try:
            return [(json.loads(text), 1)], False
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise _json_error(exc, text, "") from None
    documents = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, text, f" in the object starting on line {line}") from None
        documents.append((value, line))
    return documents, True


def _describe(value: Any) -> str:
    if isinstance(value, list):
        if value and isinstance(value[0], dict) and {"benchmark", "model"} <= set(value[0]):
            return ("a list of PyTorch-benchmark records (a vLLM *.pytorch.json sidecar; "
                    "use the --save-result JSON instead)")
        return "a JSON list"
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(str, value))[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {type(value).__name__}"


def _unknown(value: Any) -> CapplanError:
    return err("unknown sweep file format: expected a vLLM --save-result object "
               "(request_rate, completed, ...), a GuideLLM report (benchmarks: [...]) "
               f"or a CSV file; found {_describe(value)}")


def _parse_file(data: bytes, rel: str, slos) -> tuple[str, list[SweepPoint]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise err(f"not UTF-8 text (byte {exc.start}): not a benchmark result file") from None
    if not text.strip():
        raise err("the file is empty")
    suffix = PurePosixPath(rel).suffix.lower()

    if suffix in (".csv", ".tsv"):
        if suffix == ".tsv":
            raise err("tab-separated files are not supported; save the sweep as CSV")
        return "csv", parse_csv(text, rel, slos)

    if suffix in (".yaml", ".yml"):
        doc = yamlfile.parse_data_file(text, rel)      # aliases cannot expand past the text
        if isinstance(doc, dict) and "benchmarks" in doc:
            return parse_guidellm(doc, rel, slos)
        raise _unknown(doc)

    documents, sequence = _load_json_documents(text, jsonl=suffix == ".jsonl")
    if not sequence:
        doc = documents[0][0]
        if isinstance(doc, dict) and "benchmarks" in doc:
            return parse_guidellm(doc, rel, slos)
        if vllm.looks_like(doc):
            if "run_number" in doc:                      # vllm bench sweep serve: <combination>/run=N.json
                if doc["run_number"] == -1:
                    return "vllm-bench-sweep-serve warm-up run (not counted)", []
                return "vllm-bench-sweep-serve run", [vllm.parse(doc, rel, None, slos)]
            fmt = "vllm-benchmark-serving" if vllm.is_legacy(doc) else "vllm-bench-serve"
            return fmt, [vllm.parse(doc, rel, None, slos)]
        if isinstance(doc, list) and doc and all(vllm.looks_like(d) for d in doc):
            return "vllm-bench-sweep-serve summary", [_object(d, rel, None, slos, f"[{i}]")
                                                       for i, d in enumerate(doc)]
        raise _unknown(doc)

    if not documents:
        raise err("the file holds no JSON objects")
    points = []
    for doc, line in documents:
        if not vllm.looks_like(doc):
            error = _unknown(doc)
            error.message += " (JSON Lines files must hold vLLM result objects)"
            error.line = line
            raise error
        points.append(_object(doc, rel, line, slos, f"object {len(points) + 1}"))
    return "vllm-bench-serve-jsonl", points


def _object(doc: dict, rel: str, line: int | None, slos, which: str) -> SweepPoint:
    """One vLLM result of several in a file; an error in it names the object
    (its line in a JSON Lines file, its index in a list)."""
    try:
        return vllm.parse(doc, rel, line, slos)
    except CapplanError as exc:
        where = f"the {which} starting on line {line}" if line else f"the result at {which}"
        if where not in exc.message:
            exc.message += f" (in {where})"
        raise exc.located(line=line)


def _read_one(plan_dir: Path, rel: str, slos) -> SweepFile:
    try:
        data = (plan_dir / rel).read_bytes()
    except OSError as exc:
        raise err(f"cannot read the file: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    fmt, points = _parse_file(data, rel, slos)
    return SweepFile(path=rel, sha256=digest, format=fmt, points=tuple(points))


def read_sweep(plan_dir: Path, patterns: list[str], slos: tuple[Slo, ...] | None = None) -> list[SweepFile]:
    """The files the patterns name (relative to plan_dir, inside its repository;
    sorted, deterministic), each with its format detected and its runs parsed,
    with the percentiles of ``slos`` (the plan's; the standard model's by default).

    A refused pattern or one that matches nothing raises
    :class:`~capplan.loading.sweeps.locate.PatternError` with its index."""
    plan_dir = Path(plan_dir)
    slos = standard_model().slos if slos is None else slos
    if isinstance(patterns, str):
        patterns = [patterns]
    if not patterns:
        raise err("no sweep files given (the list of file patterns is empty)")
    files = []
    for rel in expand(Root(plan_dir), patterns):
        try:
            files.append(_read_one(plan_dir, rel, slos))
        except CapplanError as exc:
            raise exc.located(file=rel)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                ArithmeticError, RecursionError) as exc:   # malformed data we did not foresee
            raise CapplanError(f"cannot interpret the file: {type(exc).__name__}: {exc}",
                               file=rel) from None
    return files
