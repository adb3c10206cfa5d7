"""Recalculate workbooks in two real spreadsheet engines, and export them to PDF.

LibreOffice is the suite's reference engine. The recipe
(shared/reference/xlsx-recalc.md): a private user profile whose
``registrymodifications.xcu`` sets ``OOXMLRecalcMode`` to 0 (always
recalculate on load), ``soffice --convert-to xlsx`` into a folder other than
the sources', then openpyxl ``data_only=True`` reads the computed values.
soffice exits 0 even when it cannot load a file, so every output is checked.
Many workbooks go through one soffice call (~1-2 s, nearly flat in count).

Gnumeric is the second engine: ``ssconvert --recalc in.xlsx out.xlsx``
recalculates every cell before writing (one call per workbook, ~0.3 s each).
It computes in long double and follows Excel where LibreOffice is lenient
(a boolean never equals a number; MIN inside SUMPRODUCT sees one element),
so a formula both engines agree on is one Excel reads the same way.

PDF: ``soffice --convert-to pdf`` with a fresh, default private profile,
as someone who opens the workbook and prints it would have.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from openpyxl import load_workbook

INSTALL = "apt-get install -y --no-install-recommends libreoffice-calc-nogui"
SKIP_REASON = f"LibreOffice (soffice) is not installed; the workbook recalculation tests need it: {INSTALL}"

RECALC_ALWAYS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""
XL_ERRORS = ("#NAME?", "#REF!", "#VALUE!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "Err:")


GNUMERIC_INSTALL = "apt-get install -y --no-install-recommends gnumeric"
GNUMERIC_SKIP_REASON = f"Gnumeric (ssconvert) is not installed; the second-engine recalculation needs it: {GNUMERIC_INSTALL}"


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def ssconvert() -> str | None:
    return shutil.which("ssconvert")


def _outputs(sources: list[Path], outdir: Path, suffix: str) -> dict[Path, Path]:
    """source -> its converted copy in outdir (distinct names, a folder other than the sources')."""
    stems = [s.stem for s in sources]
    if len(set(stems)) != len(stems):
        raise ValueError(f"workbooks in one batch need distinct names: {stems}")
    outdir.mkdir(parents=True, exist_ok=True)
    if any(s.resolve().parent == outdir.resolve() for s in sources):
        raise ValueError("the output folder must differ from the sources' folder")
    return {s: outdir / (s.stem + suffix) for s in sources}


def _soffice_convert(sources: list[Path], outdir: Path, profile: Path, target: str, timeout: float) -> dict[Path, Path]:
    """ONE soffice call converting every source to ``target`` (xlsx, pdf) with the given private profile."""
    exe = soffice()
    if exe is None:
        raise RuntimeError(SKIP_REASON)
    out = _outputs(sources, outdir, "." + target)
    (profile / "user").mkdir(parents=True, exist_ok=True)
    cmd = [exe, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore",
           "--nolockcheck", "--convert-to", target, "--outdir", str(outdir), *map(str, sources)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
    missing = [str(s) for s, o in out.items() if not o.exists() or not o.stat().st_size]
    if proc.returncode != 0 or missing:
        raise RuntimeError(f"soffice failed (rc {proc.returncode}) for {missing}:\n{proc.stdout}\n{proc.stderr}")
    return out


def recalc(sources: list[Path], workdir: Path, timeout: float = 300) -> dict[Path, Path]:
    """Recalculate every source in ONE soffice call; return source -> recalculated copy."""
    profile = workdir / "lo-profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
    return _soffice_convert(sources, workdir / "recalc", profile, "xlsx", timeout)


def recalc_gnumeric(sources: list[Path], workdir: Path, timeout: float = 120) -> dict[Path, Path]:
    """Recalculate every source in Gnumeric (one ssconvert call each); return source -> recalculated copy."""
    exe = ssconvert()
    if exe is None:
        raise RuntimeError(GNUMERIC_SKIP_REASON)
    out = _outputs(sources, workdir / "gnumeric", ".xlsx")
    for src, dst in out.items():
        proc = subprocess.run([exe, "--recalc", str(src), str(dst)], check=False, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not dst.exists():
            raise RuntimeError(f"ssconvert failed (rc {proc.returncode}) for {src}:\n{proc.stdout}\n{proc.stderr}")
    return out


def export_pdf(sources: list[Path], workdir: Path, timeout: float = 300) -> dict[Path, Path]:
    """Every source to PDF in ONE soffice call with a fresh default profile; source -> PDF."""
    profile = workdir / "pdf-profile"
    if profile.exists():
        raise ValueError(f"the PDF export needs a fresh profile; {profile} exists")
    return _soffice_convert(sources, workdir / "pdf", profile, "pdf", timeout)


@dataclass(frozen=True)
class Engine:
    """A spreadsheet engine the suite recalculates workbooks in.

    ``bools_as_numbers``: LibreOffice saves a truth value whose cell has a number
    format of its own (the workbook's ``"TRUE";"TRUE";"FALSE"``) as the number 1
    or 0, shown as TRUE or FALSE; Gnumeric keeps the boolean.
    """

    name: str
    installed: Callable[[], str | None]
    recalc: Callable[[list[Path], Path], dict[Path, Path]]
    skip_reason: str
    bools_as_numbers: bool


ENGINES = (Engine("libreoffice", soffice, recalc, SKIP_REASON, bools_as_numbers=True),
           Engine("gnumeric", ssconvert, recalc_gnumeric, GNUMERIC_SKIP_REASON, bools_as_numbers=False))


def engine_params():
    """``pytest.mark.parametrize`` values: every engine, each skipped with its reason where it is missing."""
    return [pytest.param(e, id=e.name, marks=pytest.mark.skipif(e.installed() is None, reason=e.skip_reason))
            for e in ENGINES]


def values(path: Path, data_only: bool = True):
    """The recalculated workbook with cached values (``data_only=False``: with formulas)."""
    with warnings.catch_warnings():      # Gnumeric's files have no default cell style
        warnings.filterwarnings("ignore", "Workbook contains no default style", UserWarning)
        return load_workbook(path, data_only=data_only)


def error_cells(wb) -> list[str]:
    return [f"{ws.title}!{c.coordinate}={c.value}" for ws in wb.worksheets
            for row in ws.iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(XL_ERRORS)]


def same(got, want, rel_tol: float = 1e-9, abs_tol: float = 1e-9, bools_as_numbers: bool = False) -> bool:
    """A recalculated value against the engine's: booleans exactly, text exactly, numbers by rel_tol.

    LibreOffice writes cached values at 15 significant digits, so == is too strict.
    ``bools_as_numbers``: the engine saves a truth value as 1 or 0 (see Engine).
    """
    if isinstance(want, bool):
        if bools_as_numbers and not isinstance(got, bool) and got in (0, 1):
            return bool(got) is want
        return isinstance(got, bool) and got is want
    if isinstance(want, str):
        return got == want
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    if math.isnan(want):
        return got is None
    return math.isclose(float(got), float(want), rel_tol=rel_tol, abs_tol=abs_tol)


def mismatches(cells, wb, limit: int = 20, engine: Engine | None = None) -> list[str]:
    """Manifest cells (capplan.rendering.workbook.CellInfo) whose value, recalculated by
    ``engine`` (LibreOffice when None), differs from the engine's."""
    bools_as_numbers = (engine or ENGINES[0]).bools_as_numbers
    out = []
    for info in cells:
        got = wb[info.sheet][info.coordinate].value
        if not same(got, info.expected, bools_as_numbers=bools_as_numbers):
            out.append(f"{info.ref} {info.quantity}[{info.row}] ({info.scenario}, {info.role}): "
                       f"workbook {got!r} != engine {info.expected!r}")
    return out[:limit] if limit else out
