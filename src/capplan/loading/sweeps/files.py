"""Read a plan's sweep files and recognise each file's format.

The files are the ones :mod:`~capplan.loading.sweeps.locate` finds inside the
plan's repository, de-duplicated and sorted by their POSIX path, so the result
does not depend on the pattern order or the file system. An
unreadable, non-UTF-8, empty, invalid or truncated file, an unknown format or a
missing or malformed field raises :class:`~capplan.errors.CapplanError` naming
the file (relative path), the key or line, and what is wrong.

The format comes from the content, not the name (except ``.csv``, ``.yaml``
and ``.jsonl``): the first row of the table in
:mod:`~capplan.loading.sweeps.formats` that recognises it (a GuideLLM report
holds ``benchmarks``, a vLLM result ``request_rate`` and ``completed``). A list
of vLLM results is the ``summary.json`` of a ``vllm bench sweep serve`` folder:
it repeats the ``run=N.json`` files beside it, so it is recorded but never
counted as runs.

Every file is read within the limits of :mod:`~capplan.loading.sweeps.reading`
(its size, checked before reading; the runs and bytes of the whole import),
and JSON Lines in one pass: the work is linear in the size of the files.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path, PurePosixPath
from typing import Any

from capplan.language.model import Slo, standard_model
from capplan.errors import CapplanError
from capplan.loading.sweeps import estimate, formats, reading, vllm, yamldata
from capplan.loading.sweeps.fields import err
from capplan.loading.sweeps.locate import Root, expand
from capplan.loading.sweeps.points import SweepFile, SweepPoint


def _json_error(exc: json.JSONDecodeError, text: str, where: str) -> CapplanError:
    if exc.pos >= len(text.rstrip()):
        what = "truncated JSON: the file ends before the JSON value is complete"
    else:
        what = "invalid JSON"
    return err(f"{what}{where} ({exc.msg} at line {exc.lineno}, column {exc.colno})",
               None, exc.lineno)


def _load_json_documents(text: str, data: bytes, jsonl: bool) -> tuple[list[tuple[Any, int]], bool]:
    """Parse one JSON value, or several concatenated (JSON Lines), in time linear in the text.

    Returns ``[(value, line)]`` and whether the file was a sequence.
    """
    if not jsonl:
        try:
            return [(reading.load_json(text, data), 1)], False
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise _json_error(exc, text, "") from None
    else:
        reading.check(text, data)
    decoder = reading.decoder(text)
    documents = []
    pos, end, line, counted = 0, len(text), 1, 0
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        line += text.count("\n", counted, pos)     # from the last object on: each newline counted once
        counted = pos
        if len(documents) == reading.MAX_RUNS:
            raise err(f"the file holds more than {reading.MAX_RUNS:,} JSON objects (runs); an import reads "
                      "at most that many (see docs/limits.md)", None, line)
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


def _parse_file(data: bytes, rel: str, slos) -> tuple[str, list[SweepPoint], str]:
    """(the file's format, its runs, the tool's release it records or ''): the first row of
    :data:`~capplan.loading.sweeps.formats.FORMATS` that recognises the file's value."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise err(f"not UTF-8 text (byte {exc.start}): not a benchmark result file") from None
    if not text.strip():
        raise err("the file is empty")
    suffix = PurePosixPath(rel).suffix.lower()
    if suffix == ".tsv":
        raise err("tab-separated files are not supported; save the sweep as CSV")
    if suffix == ".csv":
        doc, read_from = text, "csv"
    elif suffix in (".yaml", ".yml"):
        doc, read_from = yamldata.load_yaml(text), "yaml"           # aliases cannot expand past the text
    else:
        documents, sequence = _load_json_documents(text, data, jsonl=suffix == ".jsonl")
        if sequence:
            return "vllm-bench-serve-jsonl", _json_lines(documents, rel, slos), ""
        doc, read_from = documents[0][0], "json"
    fmt = formats.choose(doc, read_from)
    if fmt is None:
        raise _unknown(doc)
    return fmt.named(doc), fmt.parse(doc, rel, slos), fmt.release(doc)


def _json_lines(documents: list[tuple[Any, int]], rel: str, slos) -> list[SweepPoint]:
    """The runs of a JSON Lines file (or of several JSON values one after another): vLLM results only."""
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
    return points


def _object(doc: dict, rel: str, line: int, slos, which: str) -> SweepPoint:
    """One vLLM result of several in a JSON Lines file; an error in it names the object and its line."""
    try:
        return vllm.parse(doc, rel, line, slos)
    except CapplanError as exc:
        where = f"the {which} starting on line {line}"
        if where not in exc.message:
            exc.message += f" (in {where})"
        raise exc.located(line=line)


def _read_one(plan_dir: Path, rel: str, slos) -> tuple[SweepFile, int]:
    """The file parsed, and its size in bytes."""
    yaml = PurePosixPath(rel).suffix.lower() in (".yaml", ".yml")
    data = reading.read_limited(plan_dir / rel, reading.MAX_YAML_BYTES if yaml else reading.MAX_FILE_BYTES,
                                "a YAML benchmark report" if yaml else "a benchmark file")
    digest = hashlib.sha256(data).hexdigest()
    fmt, points, version = _parse_file(data, rel, slos)
    evidence = estimate.evidence(points) if fmt == estimate.FORMAT else ()
    return SweepFile(path=rel, sha256=digest, format=fmt, points=tuple(points), release=version,
                     evidence=evidence), len(data)


def _read_located(folder: Path, rel: str, slos, name: str) -> tuple[SweepFile, int]:
    """:func:`_read_one`, its errors naming the file as ``name`` (malformed data no format
    foresaw included: one message, never a traceback)."""
    try:
        return _read_one(folder, rel, slos)
    except CapplanError as exc:
        raise exc.located(file=name)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError,
            ArithmeticError, RecursionError) as exc:   # malformed data we did not foresee
        raise CapplanError(f"cannot interpret the file: {type(exc).__name__}: {exc}", file=name) from None


def read_named(paths: list[Path], slos: tuple[Slo, ...]) -> list[SweepFile]:
    """Benchmark files named on the command line (``capplan validate``), each read as an import
    reads it (its format recognised, its limits kept), its errors naming the path as given. Not
    confined to a plan's repository: the user chose these files, no plan from a pull request did."""
    return [_read_located(Path(path).parent, Path(path).name, slos, str(path))[0] for path in paths]


def read_sweep(plan_dir: Path, patterns: list[str], slos: tuple[Slo, ...] | None = None) -> list[SweepFile]:
    """The files the patterns name (relative to plan_dir, inside its repository;
    sorted, deterministic), each with its format detected and its runs parsed,
    with the percentiles of ``slos`` (the plan's; the standard model's by default).

    A refused pattern or one that matches nothing raises
    :class:`~capplan.loading.sweeps.locate.PatternError` with its index. An import
    reads at most :data:`~.reading.MAX_FILES` files, :data:`~.reading.MAX_IMPORT_BYTES`
    in all, :data:`~.reading.MAX_RUNS` runs and :data:`~.reading.MAX_RATES` arrival
    rates; beyond is refused, naming the file."""
    plan_dir = Path(plan_dir)
    slos = standard_model().slos if slos is None else slos
    if isinstance(patterns, str):
        patterns = [patterns]
    if not patterns:
        raise err("no sweep files given (the list of file patterns is empty)")
    names = expand(Root(plan_dir), patterns)
    if len(names) > reading.MAX_FILES:
        raise err(f"the patterns match {len(names):,} files; an import reads at most {reading.MAX_FILES:,} "
                  "(see docs/limits.md)")
    files: list[SweepFile] = []
    size = runs = 0
    rates: set[float] = set()
    for rel in names:
        read, nbytes = _read_located(plan_dir, rel, slos, rel)
        files.append(read)
        size += nbytes
        runs += len(read.points)
        rates.update(p.arrival_rate for p in read.points if math.isfinite(p.arrival_rate))
        if size > reading.MAX_IMPORT_BYTES or runs > reading.MAX_RUNS:
            raise CapplanError(f"with this file the import holds {size / reading.MIB:.0f} MiB and {runs:,} runs; "
                               f"an import reads at most {reading.MAX_IMPORT_BYTES // reading.MIB} MiB and "
                               f"{reading.MAX_RUNS:,} runs (see docs/limits.md)", file=rel)
        if len(rates) > reading.MAX_RATES:
            raise CapplanError(f"with this file the import holds runs at {len(rates):,} distinct arrival rates; a "
                               f"sweep table holds at most {reading.MAX_RATES:,} rows (see docs/limits.md)", file=rel)
    if all(f.format == formats.SUMMARY for f in files):
        raise err(f"the patterns match only vllm bench sweep summaries ({', '.join(f.path for f in files[:3])}"
                  f"{', ...' if len(files) > 3 else ''}), which repeat the runs of their folder; import the "
                  "runs themselves (e.g. <experiment>/*/run=*.json)")
    return files
