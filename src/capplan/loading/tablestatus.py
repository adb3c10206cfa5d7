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
    "estimated": "estimated, not measured: a performance model's predictions (its estimate files), which the plan "
                 "rests on until the deployment is benchmarked",
}
ESTIMATED = "estimated"     # the status of a sweep imported from estimate files; never written by a plan
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
        if self.status == ESTIMATED:            # predictions: there is no noise to run again
            return "; ".join(parts)
        if self.single_run:
            parts.append("one run per rate: a single run cannot tell the knee from noise; run each rate "
                         "three times or more")
        elif self.runs:
            parts.append(self.runs_text)
        return "; ".join(parts)


def read(raw, rows: list[dict], fail: Callable[[str], CapplanError], estimated: bool = False) -> TableStatus:
    """The status a table's ``status:`` gives (``measured`` when absent; ``estimated`` when its rows
    were imported from estimate files, which no plan may call measured), with the runs its rows
    combine; ``fail(message)`` makes the error located at the key."""
    written = tuple(k for k in STATUSES if k != ESTIMATED)
    if raw is not None and (not isinstance(raw, str) or raw not in written):
        raise fail(f"status must be one of {', '.join(written)}, got '{raw}'")
    if estimated and raw == "measured":
        raise fail("status: measured, but the rows are imported from estimate files (predictions); leave status "
                   "out: an estimated sweep is marked so")
    status = ESTIMATED if estimated else raw or "measured"
    runs = tuple(int(r[RUNS]) for r in rows if isinstance(r.get(RUNS), (int, float)) and not math.isnan(r[RUNS]))
    return TableStatus(status, runs if len(runs) == len(rows) else ())
