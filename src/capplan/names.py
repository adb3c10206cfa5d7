"""How a user names things, and what capplan answers when a name is wrong.

Every stage resolves names the user typed — a quantity, a catalog id, a
table row, a plan key — so the two rules live here, below all of them: the
table-cell reference ``table[row].column`` and the "did you mean" hint.
"""

from __future__ import annotations

import difflib
import re

_CELL = re.compile(r"^(\w+)\[([^\]]+)\]\.(\w+)$")


def cell(reference: str) -> tuple[str, str, str] | None:
    """``'deployments[aws-p4de.24xlarge].nodes'`` -> ``(table, row key, column)``;
    None for anything else."""
    match = _CELL.match(str(reference))
    return match.groups() if match else None


def nearest(name: str, options, *, cutoff: float = 0.6, count: int = 3) -> str:
    """``'; did you mean a, b?'`` (empty when nothing is close). A bare column
    name also finds the table columns of that name (``monthly_cost`` ->
    ``deployments.monthly_cost``)."""
    options = [str(o) for o in options]
    same_column = [o for o in options if "." in o and o.split(".", 1)[1] == name]
    near = same_column + [o for o in difflib.get_close_matches(str(name), options, n=count, cutoff=cutoff)
                          if o not in same_column]
    near = near[:max(count, len(same_column))]
    return f"; did you mean {', '.join(near)}?" if near else ""
