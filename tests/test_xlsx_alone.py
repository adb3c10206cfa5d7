"""The xlsx writer stands alone: copied out of capplan under another name, it still writes a workbook.

:mod:`capplan.xlsx` imports only the standard library and its own modules
(``tests/test_layers.py`` checks the imports); this runs a copy of the folder
in a fresh interpreter, as another project would, and checks that no capplan
module was loaded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import ROOT

SCRIPT = """
import io, json, sys
import sheets
ws = sheets.Sheet("One")
ws.cell(1, 1).number(2)
ws.cell(1, 2).formula("=A1*3", 6)
data = sheets.to_bytes([ws])
print(json.dumps({"size": len(data), "zip": data[:2].decode(), "capplan": sorted(m for m in sys.modules if "capplan" in m)}))
"""


def test_a_copy_of_the_folder_writes_a_workbook_without_capplan(tmp_path):
    shutil.copytree(ROOT / "src" / "capplan" / "xlsx", tmp_path / "sheets", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-S", "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["zip"] == "PK" and found["size"] > 1000
    assert found["capplan"] == []
