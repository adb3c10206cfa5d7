"""How far a table's rows are the evidence a decision needs: its ``status:``.

A plan may carry rows that stand in for a measurement, as the lesson's
illustrative calibration matrix does; ``status: illustrative`` on the table
says so. A load sweep of one run per rate is flagged whatever its status: a
single run cannot tell the knee from noise. A flagged table is listed in the
record's warning beside the pending inputs, and every sweep says how many runs
each rate combines, so the record describes what was actually done.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from capplan.errors import CapplanError

STATUSES = {
    "measured": "measured on the deployment the plan sizes",
    "illustrative": "illustrative: the plan says its rows stand in for measurements; replace them with measured runs",
}
RUNS = "runs"        # the column that counts the runs a row combines


@dataclass(frozen=True)
class TableStatus:
    status: str                  # a key of STATUSES
    runs: tuple[int, ...] = ()   # runs per row, for a table that counts them

    @property
    def single_run(self) -> bool:
        return bool(self.runs) and max(self.runs) == 1

    @property
    def flagged(self) -> bool:
        return self.status != "measured" or self.single_run

    @property
    def runs_text(self) -> str:
        """'one run per rate', '3 runs per rate', '1 to 3 runs per rate'; '' without a runs column."""
        if not self.runs:
            return ""
        low, high = min(self.runs), max(self.runs)
        if high == 1:
            return "one run per rate"
        return f"{low} runs per rate" if low == high else f"{low} to {high} runs per rate"

    @property
    def summary(self) -> str:
        """A flagged table in a few words: 'illustrative, one run per rate'."""
        return ", ".join(w for w in (self.status if self.status != "measured" else "", self.runs_text) if w)

    @property
    def text(self) -> str:
        """What the record's warning says of a flagged table."""
        parts = [STATUSES[self.status]] if self.status != "measured" else []
        if self.single_run:
            parts.append("one run per rate: a single run cannot tell the knee from noise; run each rate "
                         "three times or more")
        elif self.runs:
            parts.append(self.runs_text)
        return "; ".join(parts)


def read(raw, rows: list[dict], fail: Callable[[str], CapplanError]) -> TableStatus:
    """The status a table's ``status:`` gives (``measured`` when absent), with the runs
    its rows combine; ``fail(message)`` makes the error located at the key."""
    status = "measured" if raw is None else raw
    if not isinstance(status, str) or status not in STATUSES:
        raise fail(f"status must be one of {', '.join(STATUSES)}, got '{status}'")
    runs = tuple(int(r[RUNS]) for r in rows if isinstance(r.get(RUNS), (int, float)) and not math.isnan(r[RUNS]))
    return TableStatus(status, runs if len(runs) == len(rows) else ())
