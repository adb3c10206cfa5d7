"""``templates/workbook.yaml``: the workbook's own presentation choices, read once and checked.

What the workbook shows comes from ``templates/layout.yaml`` (shared with the
record); how it looks comes from here, so a team restyles it without Python.
"""

from __future__ import annotations

from functools import cache

import yaml

from capplan.errors import CapplanError
from capplan.resources import templates_dir

COLUMNS = ("name", "value", "unit", "tag", "note")
TAG_KEYS = ("fact", "policy", "measurement", "pending", "assumption", "derived")
REQUIRED_CONFIG = ("summary_sheet", "summary", "sheets", "columns", "table_column_width",
                   "comments", "tags", "input", "linked", "override", "section", "part", "pass_fill",
                   "fail_fill", "formula_font", "text", "lines", "chart", "print")


@cache
def config() -> dict:
    path = templates_dir() / "workbook.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise CapplanError(f"cannot read the workbook layout: {err}", file=str(path)) from None
    if not isinstance(data, dict):
        raise CapplanError("the workbook layout must be a YAML mapping", file=str(path))
    missing = [k for k in REQUIRED_CONFIG if k not in data]
    missing += [f"tags.{t}" for t in TAG_KEYS if t not in (data.get("tags") or {})]
    missing += [f"columns.{c}" for c in COLUMNS if c not in (data.get("columns") or {})]
    if missing:
        raise CapplanError(f"missing key(s) {', '.join(missing)}", file=str(path))
    return data
