"""Recalculate workbooks in headless LibreOffice, the suite's reference engine.

The recipe (shared/reference/xlsx-recalc.md): a private user profile whose
``registrymodifications.xcu`` sets ``OOXMLRecalcMode`` to 0 (always
recalculate on load), ``soffice --convert-to xlsx`` into a folder other than
the sources', then openpyxl ``data_only=True`` reads the computed values.
soffice exits 0 even when it cannot load a file, so every output is checked.
Many workbooks go through one soffice call (~1-2 s, nearly flat in count).
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

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


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def recalc(sources: list[Path], workdir: Path, timeout: float = 300) -> dict[Path, Path]:
    """Recalculate every source in ONE soffice call; return source -> recalculated copy."""
    exe = soffice()
    if exe is None:
        raise RuntimeError(SKIP_REASON)
    stems = [s.stem for s in sources]
    if len(set(stems)) != len(stems):
        raise ValueError(f"workbooks in one batch need distinct names: {stems}")
    profile = workdir / "lo-profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
    outdir = workdir / "recalc"
    outdir.mkdir(parents=True, exist_ok=True)
    if any(s.resolve().parent == outdir.resolve() for s in sources):
        raise ValueError("the output folder must differ from the sources' folder")
    cmd = [exe, f"-env:UserInstallation={profile.resolve().as_uri()}", "--headless", "--norestore",
           "--nolockcheck", "--convert-to", "xlsx", "--outdir", str(outdir), *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = {s: outdir / (s.stem + ".xlsx") for s in sources}
    missing = [str(s) for s, o in out.items() if not o.exists()]
    if proc.returncode != 0 or missing:
        raise RuntimeError(f"soffice failed (rc {proc.returncode}) for {missing}:\n{proc.stdout}\n{proc.stderr}")
    return out


def values(path: Path):
    """The recalculated workbook with cached values (not formulas)."""
    return load_workbook(path, data_only=True)


def error_cells(wb) -> list[str]:
    return [f"{ws.title}!{c.coordinate}={c.value}" for ws in wb.worksheets
            for row in ws.iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(XL_ERRORS)]


def same(got, want, rel_tol: float = 1e-9, abs_tol: float = 1e-9) -> bool:
    """A recalculated value against the engine's: booleans exactly, text exactly, numbers by rel_tol.

    LibreOffice writes cached values at 15 significant digits, so == is too strict.
    """
    if isinstance(want, bool):
        return isinstance(got, bool) and got is want
    if isinstance(want, str):
        return got == want
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    if math.isnan(want):
        return got is None
    return math.isclose(float(got), float(want), rel_tol=rel_tol, abs_tol=abs_tol)


def mismatches(cells, wb, limit: int = 20) -> list[str]:
    """Manifest cells (capplan.rendering.workbook.CellInfo) whose recalculated value differs from the engine's."""
    out = []
    for info in cells:
        got = wb[info.sheet][info.coordinate].value
        if not same(got, info.expected):
            out.append(f"{info.ref} {info.quantity}[{info.row}] ({info.scenario}, {info.role}): "
                       f"workbook {got!r} != engine {info.expected!r}")
    return out[:limit] if limit else out
