"""What the plan's estimate group predicts for a team's own benchmark points (``capplan validate``).

The estimate (model/quantities.yaml, group ``estimate``) is a mixed-batch roofline a
ranking rests on; a team checks it on its hardware by predicting the points its own
benchmark files measured. Each point is predicted at its own mean prompt and output
lengths: the plan's class mix is replaced by one class of those lengths and the
plan's graph, cut to the estimate group, is run once for every point as one batch
(:func:`estimates`): the model's formulas, not a second implementation of them.

From those values, at the point's load (one replica: a file measures one server):

* open loop at λ req/s: the engine step ``t(λ) = f·R₀ / (1 − λ·f·a)`` (:func:`open_loop_step`),
  the median TPOT, and the output rate λ·O, while λ is under the rate that fills the KV pool
  (``estimate_kv_rate``); above it the queue grows and the batch with it, to the pool or to
  every request the run sent, and the point is predicted as the closed loop of that batch;
* closed loop at N requests in flight (a concurrency cap, one synchronous stream, or a
  burst of every request at once): the batch ``B = min(N, C_KV)`` and the step
  ``t = f·(R₀ + B·a / n_dec)`` (:func:`batch_step`; the same step, Little's law giving the
  batch instead of the rate), the output rate ``B·n_step / t``;
* the median TTFT as ``ttft_bound``, the prefill of the point's prompt and the overhead,
  unqueued (no wait behind other prompts).

A prediction is inside the estimate band when ``predicted·(1 − b) ≤ measured ≤
predicted·(1 + b)``, ``b = estimate_band`` (benchmarks/calibration uses the same test).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from capplan.engine.evaluate import run_batch
from capplan.engine.graph import build
from capplan.language import units

# the estimate group's values a prediction reads (base units: s, req/s)
READ = ("estimate_weights_time", "estimate_step_growth", "engine_step_factor", "estimate_steps_per_request",
        "estimate_decode_batch", "estimate_kv_rate", "estimated_max_rate", "estimate_band", "ttft_bound",
        "decode_tokens_per_step", "estimate_token_time", "estimate_token_budget", "prefill_time_bound",
        "prefill_overhead")
RATE = "estimated_max_rate"      # λ̂*: the one value that needs the plan's SLOs
_STREAMS = re.compile(r"\((\d+) streams?\)")


class Deployment:
    """A plan's deployment as a prediction reads it: the nominal inputs and pins (base units), the
    switches and the catalog entries. Nothing of the plan's sizing is evaluated, so a plan need not
    state its traffic, SLOs or sweep to have its deployment predicted (``capplan validate``)."""

    def __init__(self, plan, model):
        self.plan, self.scenario, self.model = plan, plan.nominal, model.with_slos(plan.slos)
        self.values = {name: given.value for name, given in plan.nominal.inputs.items()}


def _graph(model, switches: dict, read: tuple[str, ...], pinned: frozenset = frozenset()):
    """The plan's graph with the estimate group switched on, cut to ``read``, without the model's
    checks: they hold the plan's fleet (its deployments, its SLOs), not a prediction of one server."""
    graph = build(model, dict(switches, candidates="ranked"), pinned)
    return replace(graph, check_deps=(None,) * len(graph.check_deps)).cut(read)


def _inputs(graph) -> list[str]:
    """The scalar inputs of a graph (its table columns not among them)."""
    return [name for name in graph.order if graph.nodes[name].formula is None
            and graph.nodes[name].quantity.kind != "text" and graph.nodes[name].quantity.table is None]


def needs(model, switches: dict) -> frozenset[str]:
    """The inputs a prediction asks a plan for: those of :data:`READ` but λ̂*, whose SLOs a plan may
    leave out (:func:`reads`). No table: each point is predicted as one class of its own lengths."""
    return frozenset(_inputs(_graph(model, switches, tuple(n for n in READ if n != RATE))))


def reads(deployment: Deployment) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(read, lacking)``: the values a prediction reads, and the inputs λ̂* lacks (then λ̂* is not
    among them): with no SLO stated there is no rate to hold the points against."""
    graph = _graph(deployment.model, deployment.plan.switches, READ)
    lacking = tuple(n for n in _inputs(graph) if n not in deployment.values
                    and n not in deployment.plan.engine.values and deployment.model.quantities[n].default is None)
    return (tuple(n for n in READ if n != RATE) if lacking else READ), lacking


def estimate_values(evaluation) -> dict[str, float]:
    """The estimate group's scalar values of an evaluation (base units: s, req/s)."""
    return {n: float(v) for n, v in evaluation.values.items()
            if n.startswith("estimate") or n == "engine_step_factor" if np.ndim(v) == 0}


def open_loop_step(values: dict[str, float], rate: float) -> float:
    """The engine step (s) at ``rate`` req/s per replica, ``f·R₀ / (1 − λ·f·a)``; inf at or past
    the rate where the step grows without bound (λ·f·a ≥ 1)."""
    r0, a, f = values["estimate_weights_time"], values["estimate_step_growth"], values["engine_step_factor"]
    return f * r0 / (1 - rate * f * a) if rate * f * a < 1 else math.inf


def batch_step(values: dict[str, float], batch: float) -> float:
    """The engine step (s) with ``batch`` requests decoding, ``f·(R₀ + B·a / n_dec)``: the open-loop
    step with Little's law (B = λ·n_dec·t) giving the batch instead of the rate."""
    r0, a, f = values["estimate_weights_time"], values["estimate_step_growth"], values["engine_step_factor"]
    return f * (r0 + batch * a / values["estimate_steps_per_request"])


def open_loop_ttft(values: dict[str, float], rate: float) -> float:
    """The median TTFT (s) at ``rate`` req/s: chunked prefill shares each step with the batch, so the
    prompt's prefill stretches to ``t_pre / (1 − λ·f·a)`` (processor sharing, the model's
    estimate_ttft_rate), plus the overhead; inf where the step grows without bound."""
    share = rate * values["engine_step_factor"] * values["estimate_step_growth"]
    return values["prefill_time_bound"] / (1 - share) + values["prefill_overhead"] if share < 1 else math.inf


def batch_ttft(values: dict[str, float], batch: float) -> float:
    """The median TTFT (s) with ``batch`` requests decoding and replaced as they finish: the open-loop
    TTFT at the rate Little's law gives them, λ = B / (n_dec·t)."""
    return open_loop_ttft(values, batch / (values["estimate_steps_per_request"] * batch_step(values, batch)))


def burst_ttft(values: dict[str, float], sent: float, prompt: float) -> float:
    """The median TTFT (s) of ``sent`` prompts arriving at once: the median prompt waits for those ahead
    of it, ``(N + 1)/2·P`` tokens prefilled in chunks of the token budget M, each chunk a step that
    reads the weights once: ``f·(⌈(N + 1)/2·P / M⌉·R₀ + (N + 1)/2·P·k)`` plus the overhead."""
    ahead = (sent + 1) / 2 * prompt
    steps = math.ceil(ahead / values["estimate_token_budget"])
    return values["engine_step_factor"] * (steps * values["estimate_weights_time"]
                                           + ahead * values["estimate_token_time"]) + values["prefill_overhead"]


def decode_bound(values: dict[str, float], rate: float, lengths: tuple[float, float]) -> bool:
    """Whether reading takes at least half of the open-loop step at ``rate`` (the model's
    transfer_decode_bound): the tokens computed per second of step, λ·(P + O)·k, at most ½."""
    return rate * sum(lengths) * values["estimate_token_time"] <= 0.5


def estimates(evaluation, lengths: list[tuple[float, float]],
              overrides: dict[str, np.ndarray] | None = None, read: tuple[str, ...] = READ) -> list[dict[str, float]]:
    """The estimate group's values (:data:`READ`) for each ``(prompt, output)`` mean length, the
    plan's nominal evaluation otherwise: one batch of the plan's graph with the estimate group
    switched on and one class of each length. An input only the estimate group has (the
    engine factor, the band) takes the plan's value where it gives one, else its engine's;
    ``overrides`` gives an input one value per length instead (``validate --fit``'s grid)."""
    plan, model = evaluation.plan, evaluation.model
    pinned = frozenset(n for n, i in evaluation.scenario.inputs.items() if i.pinned)
    graph = _graph(model, plan.switches, read, pinned)
    inputs = {}
    for name in graph.order:
        node = graph.nodes[name]
        if node.formula is None and node.quantity.kind != "text" and node.quantity.table != "classes":
            inputs[name] = np.asarray(input_value(evaluation, name), dtype=float).reshape((1, -1))
    for name, column in (overrides or {}).items():
        inputs[name] = np.asarray(column, dtype=float).reshape((-1, 1))
    inputs["classes.weight"] = np.ones((1, 1))
    inputs["classes.prompt_tokens"] = np.array([[p] for p, _ in lengths], dtype=float)
    inputs["classes.output_tokens"] = np.array([[o] for _, o in lengths], dtype=float)
    inputs["classes.prefix_hit_rate"] = np.zeros((len(lengths), 1))     # a file's prefix hits are not recorded
    rows = dict({t: len(d.rows) for t, d in evaluation.scenario.tables.items()}, classes=1)
    values = run_batch(graph, model, inputs, rows)[0]
    columns = {n: np.broadcast_to(np.asarray(values[n], dtype=float), (len(lengths), 1))[:, 0] for n in read}
    return [{n: float(columns[n][k]) for n in read} for k in range(len(lengths))]


def input_value(evaluation, name: str):
    """An input's value in the plan's nominal scenario, else the plan's engine's (its step factor and
    band: a plan without candidates is validated against its engine's estimate), else the model's
    default (base units)."""
    if name in evaluation.values:
        return evaluation.values[name]
    q = evaluation.model.quantities[name]
    return units.parse_value(evaluation.plan.engine.values.get(name, {"value": q.default})["value"], q.unit)


class Off:
    """How far a ``predicted`` value lies from a ``measured`` one (the calibration harness's rows too)."""

    measured: float
    predicted: float

    @property
    def ratio(self) -> float:
        """predicted / measured (inf for an unbounded prediction)."""
        return self.predicted / self.measured

    @property
    def factor_off(self) -> float:
        """How many times off, either way: max(p/m, m/p) (inf for none or an unbounded one)."""
        return max(self.ratio, 1 / self.ratio) if 0 < self.ratio < math.inf else math.inf


@dataclass(frozen=True)
class Compared(Off):
    """One measured quantity of a point against its prediction (display units: tok/s, ms)."""

    name: str              # 'output tok/s', 'TPOT p50', 'TTFT p50'
    unit: str
    measured: float
    predicted: float
    band: float

    @property
    def inside(self) -> bool:
        return self.predicted * (1 - self.band) <= self.measured <= self.predicted * (1 + self.band)


@dataclass(frozen=True)
class Predicted:
    """One benchmark point and what the estimate predicts for it."""

    file: str
    load: str                        # '4 req/s open loop', '16 in flight (closed loop)'
    lengths: tuple[float, float]     # mean prompt and output tokens of the point
    compared: tuple[Compared, ...]
    under: bool | None               # open loop: under the estimate's λ* (None: closed loop, or no λ*)
    limit: float | None              # the estimate's λ* (req/s; None: the plan states no SLO)
    note: str = ""


def in_flight(point) -> int | None:
    """Requests a closed-loop point keeps in flight: its streams or concurrency cap, one for a
    synchronous run, every request sent for a burst; None when the file does not tell (a trace)."""
    found = _STREAMS.search(point.strategy)
    if found:
        return int(found.group(1))
    if point.strategy == "synchronous":
        return 1
    if point.strategy == "burst" and point.sent:
        return point.sent
    return None


def predict(point, values: dict[str, float], file: str) -> Predicted:
    """What ``values`` (the estimate group at the point's lengths) predict for one point."""
    prompt, output = point.tokens
    band = values["estimate_band"]
    rate, under = point.arrival_rate, None
    if math.isfinite(rate) and rate < values["estimate_kv_rate"]:
        step, tokens, ttft = open_loop_step(values, rate), rate * output, open_loop_ttft(values, rate)
        load, note = f"{rate:g} req/s open loop", ""
    else:
        n = in_flight(point) if math.isinf(rate) else point.sent or math.inf
        if n is None:
            return Predicted(file, point.strategy, (prompt, output), (), None, values.get(RATE),
                             "no single load (a trace replay): not predicted")
        batch = min(n, values["estimate_decode_batch"])
        step = batch_step(values, batch)
        ttft = burst_ttft(values, n, prompt) if point.strategy == "burst" else batch_ttft(values, batch)
        tokens = batch * values["decode_tokens_per_step"] / step
        load = f"{n} in flight ({point.strategy})" if math.isinf(rate) else f"{rate:g} req/s open loop"
        note = ("over the rate that fills the KV pool: the queue grows, the batch to the pool or to the run's "
                f"{n:g} requests ({batch:.0f})" if math.isfinite(rate) else
                f"the KV pool and estimate_max_seqs hold {batch:.0f} of them" if batch < n else "")
    if math.isfinite(rate) and RATE in values:
        under = rate <= values[RATE]
    measured = (("output tok/s", "tok/s", point.output_throughput, tokens),
                ("TPOT p50", "ms", point.latency.get("tpot_p50", math.nan), 1000 * step),
                ("TTFT p50", "ms", point.latency.get("ttft_p50", math.nan), 1000 * ttft))
    compared = tuple(Compared(name, unit, m, p, band) for name, unit, m, p in measured
                     if math.isfinite(m) and m > 0)
    return Predicted(file, load, (prompt, output), compared, under, values.get(RATE), note)


@dataclass(frozen=True)
class Summary:
    """How far the predictions lie from the measurements, per quantity and over all."""

    name: str
    count: int
    median_factor: float
    inside: int


def summaries(predicted: list[Predicted]) -> list[Summary]:
    """One summary per quantity compared, then one of every comparison ('all')."""
    every = [c for p in predicted for c in p.compared]
    names = list(dict.fromkeys(c.name for c in every))
    return [_summary(name, [c for c in every if name in (c.name, "all")]) for name in [*names, "all"]]


def _summary(name: str, compared: list[Compared]) -> Summary:
    factors = [c.factor_off for c in compared]
    return Summary(name, len(compared), float(np.median(factors)) if factors else math.nan,
                   sum(c.inside for c in compared))
