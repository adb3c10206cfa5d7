"""The one view of a plan's results that every output prints.

Built once per plan from its evaluations, the view holds what a reader sees,
already formatted: the key results of each scenario (declared once, in
``templates/layout.yaml``), the sentences made of them, and — computed on
first use, because ``capplan eval`` needs none of it — the record's
sections with their derivation rows, tables, sweep and sensitivity, the
pending measurements, the provenance of every input and the scenario
overrides.

The record (Jinja), the workbook's Summary sheet, ``capplan diff``,
``capplan eval`` and the JSON document read it; none of them names a
quantity of its own. A number shown here is a quantity of the model (so the
workbook can show it as a live formula too); the view only picks, orders and
words them. The analyses (flip points, breakevens, the simulation) are the
artifacts of :mod:`capplan.analysis.pipeline`, which the view is given and
only reads. A new kind of result becomes one more artifact there, one more
field here and one more block in each renderer that shows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

from capplan import formatting
from capplan.artifacts.declared import declared, decisions, layout, row_keys
from capplan.artifacts.analyses import Analyses
from capplan.engine.evaluate import Evaluation
from capplan.loading.plan import Plan
from capplan.rendering import candidates as candidatesview
from capplan.rendering import demand as demandview
from capplan.rendering import sweepview
from capplan.rendering.candidates import CandidatesView
from capplan.rendering.charts import demand as demandchart
from capplan.rendering.charts import scenarios as scenariochart
from capplan.rendering.charts import simulation as simchart
from capplan.rendering.charts import sweep as sweepchart
from capplan.rendering.charts import tornado
from capplan.rendering.holds import HoldsView
from capplan.rendering.keyresults import scenario_view
from capplan.rendering.present import UNMEASURED, Shown, is_unmeasured, on_estimated_lambda, row, shown, shown_value
from capplan.rendering.simulation import SimulationView, shown_simulation


class PlanView:
    """Everything the outputs of one plan show; see the module docstring."""

    def __init__(self, plan: Plan, evaluations: list[Evaluation], artifacts: Analyses):
        self.plan = plan
        self.artifacts = artifacts
        self.evaluations = evaluations
        self.nominal = evaluations[0]
        self.model = self.nominal.model
        self.scenarios = [scenario_view(e) for e in evaluations]

    # -- sentences ------------------------------------------------------------------------
    @cached_property
    def context(self) -> dict:
        """The names the layout's sentences read about the nominal scenario (:func:`_context`)."""
        return _context(self.nominal)

    @cached_property
    def headline(self) -> str:
        """One paragraph a leader reads (``sentences.headline`` in layout.yaml)."""
        return sentence("headline", **self.context)

    def row_summary(self, e: Evaluation, index: int) -> str:
        """One table row's key results in words (``sentences.row_summary``), with a disaggregated plan's
        nominal pools held against the scenario's peak (their check is the same for every row)."""
        table = next(item["table"] for item in declared() if item["table"])
        pools = {n: shown(e, n) for n in POOLS_HOLD} if all(n in e.values for n in POOLS_HOLD) else None
        return sentence("row_summary", r=_Row(e, table, index), pools=pools)

    # -- the record's body ------------------------------------------------------------------
    @cached_property
    def sections(self) -> list[dict]:
        shown = [self._section(spec) for spec in layout()["sections"]]
        return [s for s in shown if s["parts"] or s["sensitivity"] or s["holds"]]     # none of this plan's

    @cached_property
    def demand_options(self) -> list:
        """The strategies of a traffic profile for the record's first screen
        (:class:`capplan.rendering.choices.Option` rows; none without a profile)."""
        return demandview.options(self.nominal)

    @cached_property
    def demand_sentence(self) -> str:
        """The demand curve's recommendation in one sentence ('' without a profile)."""
        return demandview.sentence(self.nominal)

    @cached_property
    def demand_ask(self) -> str:
        """What the reader approves through the demand curve ('' without a profile)."""
        return demandview.ask(self.nominal)

    @cached_property
    def holds(self) -> HoldsView:
        """How far the decision holds: the flip points of every input that
        matters, per scenario, and the breakevens, in words (:mod:`capplan.rendering.holds`)."""
        return HoldsView(self.artifacts.holds)

    @cached_property
    def recommended_holds(self) -> HoldsView | None:
        """How far the recommendation of a plan with candidates holds: the flip points of the winner
        as the plan it would be (None without candidates)."""
        found = self.artifacts.recommended_holds
        return None if found is None else HoldsView(found)

    def chart_file(self, kind: str) -> str:
        """The file next to the record that holds one of its charts ('holds', 'sweep', 'scenarios')."""
        return f"{self.plan.name}.{kind}.svg"

    def charts(self) -> dict[str, str]:
        """Every chart the record links, as ``{file name: SVG text}``: the
        tornado (and the recommendation's, with candidates), the latency chart of the load sweep, the
        scenarios chart."""
        out = {self.chart_file("holds"): tornado.svg(self.holds.nominal, f"How far the decision holds: {self.plan.title}")}
        if self.recommended_holds is not None:
            shown = self.recommended_holds.evaluations[0].scenario
            out[self.chart_file("recommended")] = tornado.svg(
                self.recommended_holds.nominal, f"How far the recommendation holds: {shown.description}")
        for section in self.sections:
            for part in section["parts"]:
                if part["sweep"] and part["sweep"]["chart_file"]:
                    out[part["sweep"]["chart_file"]] = sweepchart.svg(
                        part["sweep"]["chart"], f"Latency against each SLO: {self.plan.title}")
            if section.get("demand"):
                out[section["demand"]["chart_file"]] = demandchart.svg(demandview.chart_data(self.nominal),
                                                                       self.plan.title)
            if section["sensitivity"] and section["sensitivity"]["chart"]:
                out[section["sensitivity"]["chart"]] = scenariochart.svg(self, self.plan.title)
        return out

    @cached_property
    def decision(self) -> dict:
        """What a reviewer must know first, after the headline: per row of the
        key table (deployment), the scenarios in which today's fleet breaks
        (its ``verdict`` key result false), and the pending measurements the
        decisions rest on, each with the decisions it moves (``sentences.decision``
        words them). ``cheapest`` marks the row with the lowest nominal cost."""
        breaks: dict[str, dict] = {}
        for s in self.scenarios:
            for key, results in s.rows().items():
                entry = breaks.setdefault(key, {"row": key, "scenarios": [], "cost": None, "cheapest": False})
                for k in results:
                    if k.role == "verdict" and k.value is not None and not k.value:
                        entry["scenarios"].append(s.name)
                    if k.role == "cost" and s is self.scenarios[0]:
                        entry["cost"] = k
        rows = list(breaks.values())
        costs = [r["cost"].value for r in rows if r["cost"] is not None]
        if len(costs) > 1 and costs.count(min(costs)) == 1:
            next(r for r in rows if r["cost"] is not None and r["cost"].value == min(costs))["cheapest"] = True
        e = self.nominal
        decided = decisions(e)[0]
        pending = []
        for p in self.pending:
            rests = list(dict.fromkeys(d.label for d in decided if p["name"] in e.pending_inputs(d.target.name)))
            if rests:
                pending.append({"name": p["name"], "decisions": rests})
        text = sentence("decision", breaks=rows, scenarios=len(self.scenarios), pending=pending)
        return {"text": text, "fleet_breaks": {r["row"]: r["scenarios"] for r in rows},
                "pending": {p["name"]: p["decisions"] for p in pending}}

    @cached_property
    def candidates(self) -> CandidatesView | None:
        """The candidates' ranking and recommendation (:mod:`capplan.rendering.candidates`), or None."""
        return candidatesview.build(self.artifacts.candidates, self.evaluations, lambda: self.artifacts.overtaken)

    @cached_property
    def simulation(self) -> SimulationView | None:
        """The Monte Carlo over the plan's uncertain values (:mod:`capplan.rendering.simulation`),
        or None when it has none."""
        found = self.artifacts.simulation
        return shown_simulation(found, self.scenarios[0].key_results) if found else None

    def simulation_charts(self) -> dict[str, str]:
        """The simulation's picture next to the record, when the plan has a simulation
        (apart from :meth:`charts`: a build collects the simulation last)."""
        shown_sim = self.simulation
        if shown_sim is None:
            return {}
        return {self.chart_file("simulation"): simchart.svg(shown_sim, f"What the uncertain inputs do: {self.plan.title}")}

    @cached_property
    def pending(self) -> list[dict]:
        """Each pending measurement, with the key results (or else the first
        results) that rest on it."""
        e = self.nominal
        keys = [item["quantity"] for item in declared()]
        out = []
        for name, given in sorted(e.inputs.items()):
            if not given.pending:
                continue
            affects = [n for n in e.graph.order if name in e.provenance.get(n, ()) and n != name
                       and e.model.quantities[n].table is None and e.model.quantities[n].kind != "bool"]
            key = [n for n in keys if n in affects]
            out.append({"name": name, "value": shown(e, name).text,
                        "description": e.model.quantities[name].description.rstrip("."),
                        "source": given.source or "", "affects": key or affects[:4]})
        return _estimated_lambda(e, keys) + out

    @cached_property
    def provenance(self) -> list[dict]:
        e = self.nominal
        return [_given(e, name, e.inputs[name]) for name in e.graph.order if name in e.inputs]

    @cached_property
    def overrides(self) -> list[dict]:
        """What each scenario sets: inputs, pins and table cells."""
        out = []
        for e in self.evaluations[1:]:
            for name, given in e.inputs.items():
                if given.origin == e.scenario.name:
                    out.append({"scenario": e.scenario.name, **_given(e, name, given)})
            for tname, data in e.scenario.tables.items():
                base = self.nominal.scenario.tables[tname]
                keys = row_keys(self.nominal, tname)
                for i, (new, old) in enumerate(zip(data.rows, base.rows)):
                    for col, value in new.items():
                        if value != old[col]:
                            out.append({"scenario": e.scenario.name, "name": f"{tname}[{keys[i]}].{col}",
                                        "value": shown(e, f"{tname}.{col}", i).text,
                                        "tag": e.model.tables[tname].tag, "pending": False, "pinned": False,
                                        "source": ""})
        return out

    def _section(self, spec: dict) -> dict:
        e = self.nominal
        parts = []
        for part in spec.get("parts", []):
            rows = [row(e, n) for n in e.model.expand(part.get("quantities", [])) if n in e.graph.nodes]
            tables = [_table(e, t, part.get("columns", {})) for t in part.get("tables", [])
                      if t in e.scenario.tables and part.get("record", True)]
            tables = [t for t in tables if len(t["columns"]) > 1]    # the row names alone: its columns' switch is off
            swept = part.get("sweep")
            sweep = sweepview.sweep(e, swept) if swept and swept["table"] in e.scenario.tables else None
            if sweep:
                sweep["chart_file"] = self.chart_file("sweep") if sweepchart.drawable(sweep["chart"]) else None
                sweep["chunks"] = _verdict_first(sweep)
            if not rows and not tables and not sweep and not part.get("note"):
                continue
            gate = None
            if part.get("gate") in e.graph.nodes:
                g = row(e, part["gate"])
                gate = {"title": part["title"], "value": g.value, "substituted": g.substituted}
            note = sentence(part["note"], **_context(e)) if part.get("note") else ""
            parts.append({"title": part["title"], "rows": rows, "tables": tables, "gate": gate, "sweep": sweep,
                          "note": note})
        demand = demandview.section(e, self.chart_file("demand"), lambda: self.artifacts.power_flips) \
            if spec.get("demand") else None
        return {"title": spec["title"], "parts": parts, **({"demand": demand} if demand else {}),
                "sensitivity": self._sensitivity() if spec.get("sensitivity") else None,
                "holds": self.holds.section(self.chart_file("holds")) if spec.get("holds") else None}

    def _sensitivity(self) -> dict:
        """Per scenario: one summary per row of the key table (``fleets``, the verdicts
        first), and its changes with the scalar key results (``sizing``); each table split
        to fit the page. ``rows`` and ``breaks`` (the scenarios each row's fleet breaks in)
        word the section's key result, the tables folded under it."""
        first = self.scenarios[0]
        scalars = [k.label for k in first.scalars()]             # each cell carries its unit
        fleets, sizing = [], []
        for e, s in zip(self.evaluations, self.scenarios):
            name = f"{s.title} ({s.name})"
            fleets.append([name] + [self.row_summary(e, keys[0].index) for keys in s.rows().values()])
            sizing.append([name, "; ".join(s.changes) or "—"] + [k.text for k in s.scalars()])
        return {"fleets": {"chunks": split(["Scenario"] + list(first.rows()), [False] * (1 + len(first.rows())), fleets)},
                "sizing": {"chunks": split(["Scenario", "Changes"] + scalars, [False, False] + [True] * len(scalars),
                                           sizing)},
                "chart": self.chart_file("scenarios") if scenariochart.bars(self) else None,
                "rows": list(first.rows()), "breaks": self.decision["fleet_breaks"]}


def _context(e: Evaluation) -> dict:
    """A sentence's names: every scalar of the scenario, and each table as rows (shown
    only when a sentence reads the table: a profile has thousands of rows, and most
    sentences read none)."""
    context: dict[str, object] = {n: shown(e, n) for n in e.graph.order
                                  if n in e.values and e.model.quantities[n].table is None}
    for table in e.scenario.tables:
        context[table] = _TableRows(e, table)
    return context


class _TableRows(Sequence):
    """A table's rows as a sentence reads them (``{column: Shown}`` each), each column shown once, on first read."""

    def __init__(self, e: Evaluation, table: str):
        self.e, self.table = e, table

    @cached_property
    def _rows(self) -> list[dict]:
        e, q = self.e, self.e.model.quantities
        columns = {q[c].column: [shown_value(q[c], v) for v in e.display(c)]
                   for c in e.model.tables[self.table].columns if c in e.values}
        return [{k: v[i] for k, v in columns.items()} for i in range(len(e.scenario.tables[self.table].rows))]

    def __getitem__(self, index):
        return self._rows[index]

    def __len__(self) -> int:
        return len(self.e.scenario.tables[self.table].rows)


# a disaggregated plan's nominal pools against a scenario's peak, as each row's summary words them
POOLS_HOLD = ("prefill_pool_headroom", "decode_pool_headroom", "pools_hold")


class _Row(Mapping):
    """One table row as a sentence reads it (``{column: Shown}``), each column shown when first
    read: a row's summary reads five of its columns, and the record words a row per scenario."""

    def __init__(self, e: Evaluation, table: str, index: int):
        self.e, self.index = e, index
        self.columns = {e.model.quantities[c].column: c for c in e.model.tables[table].columns if c in e.values}
        self.shown: dict[str, Shown] = {}

    def __getitem__(self, column: str) -> Shown:
        if column not in self.shown:
            self.shown[column] = shown(self.e, self.columns[column], self.index)
        return self.shown[column]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)


def sentence(name: str, **context) -> str:
    """Render ``sentences.<name>`` of layout.yaml (Jinja, imported only here)."""
    from capplan.rendering.sentences import render    # deferred: jinja2, which `capplan eval` never needs
    return render(layout()["sentences"][name], context)


def _estimated_lambda(e: Evaluation, keys: list[str]) -> list[dict]:
    """Under ``sizing: estimate``, the plan's λ* as the first of the pending measurements: the model's
    estimate stands where a load sweep's knee would, and every result on it waits for that sweep."""
    lam = "instance_max_rate"
    if not on_estimated_lambda(e, lam):
        return []
    affects = [n for n in keys if n in e.graph.nodes and on_estimated_lambda(e, n) and n != lam]
    return [{"name": lam, "value": shown(e, lam).text,
             "description": f"λ*, estimated, not measured: the throughput estimate for {e.plan.engine.name} "
                            f"(estimated_max_rate, ±{100 * float(e.values['estimate_band']):.0f} % on the calibration points) "
                            "stands in for a load sweep of this deployment",
             "source": "sizing: estimate; measure it with a load sweep, then sizing: load_sweep",
             "affects": affects[:4]}]


def _given(e: Evaluation, name: str, given) -> dict:
    return {"name": name, "value": shown(e, name).text, "tag": given.tag, "pending": given.pending,
            "pinned": given.pinned, "origin": given.origin, "source": given.source or "",
            "date": given.date or "", "note": given.note or ""}


def _header(label: str, unit: str, kind: str) -> str:
    shown_unit = formatting.MONEY_UNITS.get(unit, unit) if kind == "money" else formatting.unit_label(unit)
    return f"{label} [{shown_unit}]" if shown_unit else label


def _says_nothing(e: Evaluation, name: str) -> bool:
    """A column no row fills: an optional one blank throughout, or one not measured in any row."""
    q = e.model.quantities[name]
    shown = e.display(name)
    return (q.optional and all(v != v for v in e.values[name])) or all(is_unmeasured(q, v) for v in shown)


def _table(e: Evaluation, name: str, shown_columns: dict) -> dict:
    """A table of the plan as the record prints it: headers with units, cells as text."""
    model = e.model
    table = model.tables[name]
    data = e.scenario.tables[name]
    wanted = shown_columns.get(name)
    cols = [c for c in table.columns if c in e.values and not _says_nothing(e, c)
            and (wanted is None or model.quantities[c].column in wanted)]
    columns, formulas = [], []
    for c in cols:
        q = model.quantities[c]
        columns.append({"header": _header(q.column, q.unit, q.kind), "numeric": q.kind in ("number", "money")})
        node = e.graph.nodes[c]
        if node.formula:
            formulas.append({"name": q.column, "formula": node.formula.text})
    shown_cols = {c: e.display(c) for c in cols}
    rows = []
    for i in range(len(data.rows)):
        cells = []
        for c in cols:
            q = model.quantities[c]
            v = shown_cols[c][i]
            cells.append(UNMEASURED if is_unmeasured(q, v) else
                         formatting.money(v, "USD") if q.kind == "money" else formatting.quantity(v, "", q.kind))
        rows.append(cells)
    return {"title": table.title, "description": table.description, "columns": columns, "rows": rows,
            "chunks": split([c["header"] for c in columns], [c["numeric"] for c in columns], rows),
            "formulas": formulas, "source": data.source or "", "as_of": data.as_of or ""}


PAGE = 940          # px: the width a table may take in GitHub's layout, with a margin under 1,000
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"<[^>]+>|\*\*|`|\$")


def min_width(text: str) -> int:
    """About how narrow GitHub can wrap a cell (px): its longest unbreakable word at
    16 px type, plus the cell's padding. A link counts by its text."""
    words = _MARKUP.sub(" ", _LINK.sub(r"\1", str(text))).split()
    return 9 * max((len(w) for w in words), default=1) + 27


def split(header: list[str], numeric: list[bool], rows: list[list[str]], keep: int = 1,
          page: int = PAGE) -> list[dict]:
    """A table as one or more tables that each fit ``page``: the first ``keep``
    columns (the row's name) repeated in each, the others in order, as many as fit."""
    widths = [max([min_width(header[i])] + [min_width(r[i]) for r in rows]) for i in range(len(header))]
    kept = sum(widths[:keep])
    groups: list[list[int]] = [[]]
    used = kept
    for i in range(keep, len(header)):
        if groups[-1] and used + widths[i] > page:
            groups.append([])
            used = kept
        groups[-1].append(i)
        used += widths[i]
    out = []
    for group in groups:
        cols = list(range(keep)) + group
        out.append({"header": [header[i] for i in cols], "numeric": [numeric[i] for i in cols],
                    "rows": [[r[i] for i in cols] for r in rows]})
    return out


_CHECK = re.compile(r"([✓✗–]) ")


def _verdict_first(sweep: dict) -> list[dict]:
    """The load sweep with its verdict and rate first (repeated in each part when it is
    split to fit), then the checks it misses ('✗ TTFT p95, ✗ TPOT p95'; '—' when it meets
    all), then the other measured columns."""
    header = ["SLO", sweep["header"][0], "misses"] + sweep["header"][1:-2]
    numeric = [False, sweep["numeric"][0], False] + sweep["numeric"][1:-2]
    rows = []
    for r in sweep["rows"]:
        marks = _CHECK.split(" " + r[-2])[1:]
        missed = [f"{mark} {label.strip()}" for mark, label in zip(marks[::2], marks[1::2]) if mark != "✓"]
        rows.append([r[-1], r[0], ", ".join(missed) or "—"] + r[1:-2])
    return split(header, numeric, rows, keep=2)


def build(plan: Plan, evaluations: list[Evaluation], artifacts: Analyses) -> PlanView:
    """The view of a plan, reading ``artifacts`` (what :mod:`capplan.analysis.pipeline` computes
    of these evaluations, each when an output first reads it)."""
    return PlanView(plan, evaluations, artifacts)
