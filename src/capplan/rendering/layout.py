"""The presentation layout shared by the record and the workbook.

``templates/layout.yaml`` says which sections exist, in which order, and
which quantities and tables each shows; a team edits it to change what the
outputs present without touching Python.
"""

from __future__ import annotations

from functools import lru_cache

import yaml

from capplan.resources import templates_dir


@lru_cache(maxsize=None)
def layout() -> dict:
    return yaml.safe_load((templates_dir() / "layout.yaml").read_text(encoding="utf-8"))
