"""``templates/palette.yaml``: the tag colours the workbook and the record share, and the charts' inks.

A fact is the same blue in a workbook cell and in the record's dependency
graph because both read this one file; a team recolours both by editing it.
The SVG charts take every colour they draw with from its ``charts`` mapping.
"""

from __future__ import annotations

import re
from functools import cache

import yaml

from capplan.errors import CapplanError
from capplan.resources import templates_dir

TAGS = ("fact", "policy", "measurement", "pending", "assumption", "derived")
ROLES = ("fill", "text", "stroke")
CHART_INKS = ("page", "ink", "muted", "rule", "grid", "frame", "fail", "knee", "curve", "band", "point")
CHART_CYCLES = ("series", "bars")       # colours taken in turn, one per panel or bar
_HEX = re.compile(r"[0-9A-Fa-f]{6}")


def color(value, file: str, key: str) -> str:
    """A colour of a template: a quoted 6-digit hex RGB string, upper-cased."""
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise CapplanError(f"colours are quoted 6-digit hex RGB strings, got {value!r}", file=file, key=key)
    return value.upper()


@cache
def palette() -> dict:
    """``{"background": hex, "tags": {tag: {"fill": hex | None, "text": hex, "stroke": hex}},
    "charts": {ink: hex, cycle: (hex, …)}}``."""
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
    return {"background": color(data.get("background"), file, "background"), "tags": tags,
            "charts": _chart_colours(data.get("charts"), file)}


def _chart_colours(spec, file: str) -> dict:
    if not isinstance(spec, dict):
        raise CapplanError("the palette needs a 'charts' mapping: the colours the SVG charts draw with",
                           file=file, key="charts")
    inks: dict = {ink: color(spec.get(ink), file, f"charts.{ink}") for ink in CHART_INKS}
    for cycle in CHART_CYCLES:
        values = spec.get(cycle)
        if not isinstance(values, list) or not values:
            raise CapplanError(f"charts.{cycle} must be a list of one or more colours, got {values!r}",
                               file=file, key=f"charts.{cycle}")
        inks[cycle] = tuple(color(v, file, f"charts.{cycle}[{i}]") for i, v in enumerate(values))
    return inks
