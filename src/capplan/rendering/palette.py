"""``templates/palette.yaml``: the tag colours the workbook and the record share.

A fact is the same blue in a workbook cell and in the record's dependency
graph because both read this one file; a team recolours both by editing it.
"""

from __future__ import annotations

import re
from functools import cache

import yaml

from capplan.errors import CapplanError
from capplan.resources import templates_dir

TAGS = ("fact", "policy", "measurement", "pending", "assumption", "derived")
ROLES = ("fill", "text", "stroke")
_HEX = re.compile(r"[0-9A-Fa-f]{6}")


def color(value, file: str, key: str) -> str:
    """A colour of a template: a quoted 6-digit hex RGB string, upper-cased."""
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise CapplanError(f"colours are quoted 6-digit hex RGB strings, got {value!r}", file=file, key=key)
    return value.upper()


@cache
def palette() -> dict:
    """``{"background": hex, "tags": {tag: {"fill": hex | None, "text": hex, "stroke": hex}}}``."""
    path = templates_dir() / "palette.yaml"
    file = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise CapplanError(f"cannot read the palette: {err}", file=file) from None
    if not isinstance(data, dict) or not isinstance(data.get("tags"), dict):
        raise CapplanError("the palette must be a mapping with a 'tags' mapping", file=file)
    tags = {}
    for tag in TAGS:
        spec = data["tags"].get(tag)
        if not isinstance(spec, dict):
            raise CapplanError(f"missing colours of tag '{tag}' ({', '.join(ROLES)})", file=file, key=f"tags.{tag}")
        tags[tag] = {role: None if role == "fill" and spec.get(role) is None else
                     color(spec.get(role), file, f"tags.{tag}.{role}") for role in ROLES}
    return {"background": color(data.get("background"), file, "background"), "tags": tags}
