"""What a loaded plan is: the records the engine, the analyses and the outputs read.

Every value is in base units and keeps where it came from (file line,
source, tag), so that an output can cite it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from capplan.language import yamlfile
from capplan.loading import catalog, tablestatus, uncertain
from capplan.loading import sweeps as sweep_import

NOMINAL = "nominal"


@dataclass(frozen=True)
class Input:
    """A value that enters the graph, with where it came from."""

    name: str
    value: float                 # base units
    tag: str
    origin: str                  # 'plan', 'catalog', 'default' or a scenario name
    source: str | None = None
    status: str | None = None    # 'pending'
    date: str | None = None
    note: str | None = None
    pinned: bool = False         # replaces a derived quantity's formula
    line: int | None = None
    uncertain: uncertain.Distribution | None = None   # what capplan simulate draws (value stays the point)

    @property
    def pending(self) -> bool:
        return self.status == "pending"


@dataclass
class TableData:
    name: str
    rows: list[dict]             # column -> base-unit float or text
    meta: list[dict]             # per row: source, as_of, note
    source: str | None = None
    as_of: str | None = None
    note: str | None = None
    lines: list[int] = field(default_factory=list)
    imported: tuple[sweep_import.SweepFile, ...] = ()   # benchmark files the rows came from
    runs: tuple = ()             # the imported runs the rows combine (SweepPoint), for goodput per scenario
    uncertain: dict[tuple[int, str], uncertain.Distribution] = field(default_factory=dict)  # (row, column)
    status: tablestatus.TableStatus | None = None    # measured or illustrative, and the runs per row

    def key_index(self, key_column: str, key: str) -> int | None:
        for i, row in enumerate(self.rows):
            if str(row.get(key_column)) == key or _same_number(row.get(key_column), key):
                return i
        return None


@dataclass(frozen=True)
class Expectation:
    target: str                  # quantity name or 'table[row].column'
    raw: object
    expected: float | bool       # in `unit`
    unit: str
    tolerance: float
    line: int | None


@dataclass
class Scenario:
    name: str
    title: str
    description: str
    inputs: dict[str, Input]
    tables: dict[str, TableData]
    expect: list[Expectation]
    changes: list[str]           # what the scenario sets, as written


@dataclass(frozen=True)
class Decision:
    """The plan's ``decision:``, as an architecture decision record carries it: where the decision
    stands (``status``), who owns and who approves it, when, for how long it commits (``commitment``)
    and what would reopen it (``review_trigger``). What the plan leaves out is a default (proposed,
    the plan's ``owner:``, nothing else), which ``capplan check`` asks for; ``line`` is the section's."""

    status: str = "proposed"
    owner: str = ""
    approver: str = ""
    date: str = ""
    commitment: str = ""
    review_trigger: str = ""
    line: int | None = None

    ASKED = ("owner", "approver", "date", "commitment", "review_trigger")    # what check wants stated

    @property
    def shown(self) -> list[tuple[str, str]]:
        """(label, text) of each field as the record's first screen shows it: a default where the
        plan states none ('not yet named' for the approver, 'not stated' for the rest)."""
        return [("Status", self.status), ("Owner", self.owner or "not stated"),
                ("Approver", self.approver or "not yet named"), ("Date", self.date or "not stated"),
                ("Commitment", self.commitment or "not stated"), ("Review if", self.review_trigger or "not stated")]

    @property
    def unstated(self) -> list[str]:
        """The fields a reviewer signs that the plan leaves empty (the owner counts when the plan's own names one)."""
        return [k for k in self.ASKED if not getattr(self, k)]


@dataclass
class Plan:
    path: Path
    file: str                    # as shown in messages
    name: str
    title: str
    owner: str
    description: str
    gpu: catalog.Entry
    model_entry: catalog.Entry
    switches: dict[str, str]
    scenarios: list[Scenario]    # nominal first
    doc: yamlfile.Document | None = None
    notes: str = ""
    slos: tuple[tuple[str, str], ...] = ()   # the SLOs the plan names, (metric, key); see Model.with_slos
    candidates: object = None    # the expanded candidates: section (loading.plan.candidates.Candidates)
    reads: dict[str, str] = field(default_factory=dict)   # every other file it read: POSIX path from its folder -> SHA-256
    patterns: tuple[str, ...] = ()  # the file patterns it expanded (imports, evidence, a traffic file), from its folder
    decision: Decision = field(default_factory=Decision)   # status, owner, approver, date, commitment, review trigger
    engine: catalog.Entry | None = None   # the serving engine (engine:): the throughput estimate's constants
    prefill_gpu: str = ""        # the prefill pool's GPU (prefill_gpu:, a catalog id; '': the plan's gpu)

    def line(self, key: str) -> int | None:
        """Line of a dotted key in the plan file ('tables.classes'), if written there."""
        if self.doc is None:
            return None
        path = tuple(key.split("."))
        return self.doc.lines.get(path) or self.doc.lines.get(("inputs",) + path)

    @property
    def nominal(self) -> Scenario:
        return self.scenarios[0]


def _same_number(value, key: str) -> bool:
    try:
        return isinstance(value, float) and math.isclose(value, float(key))
    except ValueError:
        return False
