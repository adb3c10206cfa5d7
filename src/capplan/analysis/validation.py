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
  every request the run sent, and the point is predicted at the step of that batch;
* closed loop with N clients (a concurrency cap, one synchronous stream), each sending its next
  request when its last one ends: a request's cycle is the overhead, its time in the prefill
  queue and ``n_dec − 1`` decode steps after its first token, solved by mean value analysis
  (:func:`closed_loop`): throughput X, the step t(X) at it, the prefill queue's wait; a burst of
  every request at once: the batch ``B = min(N, C_KV)``, the step ``t = f·(R₀ + B·a / n_dec)``
  (:func:`batch_step`) and the prompts ahead in chunks of the token budget (:func:`burst_ttft`);
* TTFT at each percentile the file has (p50, p90, p95, p99): the overhead, the prompt's own
  prefill and the quantile of its wait (:func:`wait_quantile`, M/M/1's waiting time with the
  mean the loop gives: processor sharing's stretch open loop, the prefill queue closed loop).

A prediction is inside the estimate band when ``predicted·(1 − b) ≤ measured ≤
predicted·(1 + b)``, ``b = estimate_band`` (benchmarks/calibration uses the same test).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from capplan.engine.evaluate import run_batch
from capplan.engine.graph import build
from capplan.engine.queueing import poisson_exceeds
from capplan.language import units

# the estimate group's values a prediction reads (base units: s, req/s)
READ = ("estimate_weights_time", "estimate_step_growth", "engine_step_factor", "estimate_steps_per_request",
        "estimate_decode_batch", "estimate_kv_rate", "estimated_max_rate", "estimate_band", "ttft_bound",
        "decode_tokens_per_step", "estimate_token_time", "estimate_token_budget", "prefill_time_bound",
        "prefill_overhead", "estimate_prompt_time", "estimate_prefill_efficiency")
RATE = "estimated_max_rate"      # λ̂*: the one value that needs the plan's SLOs
EXACT_CLIENTS = 1024     # closed loops of more clients take Schweitzer's approximate MVA (fixed work)
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99))   # the TTFT percentiles compared
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


def open_loop_ttft(values: dict[str, float], rate: float, q: float = 0.5) -> float:
    """The TTFT (s) at ``rate`` req/s at quantile ``q``: chunked prefill shares each step with the
    batch, so the prompt's prefill t_pre stretches on average to ``t_pre / (1 − ρ)``, ρ = λ·f·a
    (processor sharing, the model's estimate_ttft_rate); the stretch beyond t_pre is the wait
    :func:`wait_quantile` spreads, plus the overhead; inf where the step grows without bound."""
    share = rate * values["engine_step_factor"] * values["estimate_step_growth"]
    if share >= 1:
        return math.inf
    alone = values["prefill_time_bound"]
    return values["prefill_overhead"] + alone + wait_quantile(alone * share / (1 - share), share, q)


def wait_quantile(mean: float, busy: float, q: float, bound: float = math.inf) -> float:
    """The ``q`` quantile (s) of a wait in a queue whose server is busy a share ``busy`` of the time
    and whose mean wait is ``mean``: M/M/1's waiting time, no wait with probability 1 − ρ and
    otherwise exponential, P(W > y) = ρ·exp(−y·ρ / W̄) (Kleinrock, Queueing Systems vol. 1,
    1975, eq. 3.28 with W̄ = ρ/(μ − λ)); at most ``bound`` (a closed loop of N has N − 1 ahead)."""
    if busy <= 1 - q or mean <= 0:
        return 0.0
    return min(bound, mean / busy * math.log(busy / (1 - q)))


def tpot_quantile(values: dict[str, float], step: float, rate: float, prompt: float, q: float) -> float:
    """A request's TPOT (s) at quantile ``q``: the mean of its n_dec − 1 steps after the first token,
    each carrying the prompts that arrive meanwhile (chunked prefill). Over its window
    D = (n_dec − 1)·t, K ~ Poisson(λ·D) prompts are prefilled, each adding f·P·k to the steps
    (the step growth's compute); the mean step t counts λ·D of them, so the q quantile adds
    ``(K_q − λ·D)·f·P·k / (n_dec − 1)``. The median is the step t itself (a Poisson's median lies
    within one of its mean)."""
    after = values["estimate_steps_per_request"] - 1
    if q <= 0.5 or after <= 0 or not math.isfinite(step):
        return step
    mean = rate * after * step
    each = values["engine_step_factor"] * prompt * values["estimate_token_time"]
    return step + max(poisson_quantile(mean, q) - mean, 0.0) * each / after


def poisson_quantile(mean: float, q: float) -> int:
    """The smallest k with P(N ≤ k) ≥ q, N ~ Poisson(mean), by bisection on k (fixed work at any mean)."""
    low, high = -1, math.ceil(mean + 10 * math.sqrt(mean) + 10)        # P(N > high) < 1e-20
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if poisson_exceeds(middle, mean) > 1 - q else (low, middle)
    return high


@dataclass(frozen=True)
class Loop:
    """A closed loop of N clients, each sending its next request when the last one ends, solved."""

    rate: float       # X, requests completed a second
    step: float       # t, the decode step (s)
    wait: float       # mean wait for the prefill queue ahead of a prompt's own prefill (s)
    busy: float       # X·s_pre, the share of time the prefill queue serves a prompt
    bound: float      # the longest wait, N − 1 prompts ahead: (N − 1)·s_pre

    def ttft(self, values: dict[str, float], q: float) -> float:
        """TTFT (s) at quantile ``q``: overhead, the wait, the prompt's own prefill s_pre."""
        return (values["prefill_overhead"] + values["estimate_prompt_time"]
                + wait_quantile(self.wait, self.busy, q, self.bound))


def closed_loop(values: dict[str, float], clients: int) -> Loop:
    """Throughput, decode step and prefill wait of ``clients`` closed-loop clients, by mean value
    analysis (Reiser and Lavenberg, JACM 27(2), 1980): a request's cycle is the overhead c, its
    time R in the prefill queue (one prompt at a time, each s_pre = estimate_prompt_time) and
    n_dec − 1 decode steps after its first token, ``X = m / (c + R + (n_dec − 1)·t(X))``; the
    m-th client finds the queue of m − 1, ``R(m) = s_pre·(1 + Q(m − 1))``, ``Q(m) = X·R(m)``.
    The decode step t(X) is the open-loop step at throughput X (its batch X·n_dec·t decoding,
    the prompts' compute in the step), the batch at most N and the KV pool (:func:`loop_step`).
    Past :data:`EXACT_CLIENTS` the recursion's work would grow with N, so Schweitzer's
    approximation takes its place, fixed work (Schweitzer 1979; Bard 1979): the queue the
    others make is (N − 1)/N of the whole, ``R = s_pre / (1 − X·s_pre·(N − 1)/N)``."""
    prompt = values["estimate_prompt_time"]
    if clients > EXACT_CLIENTS:
        rate, response = _schweitzer(values, clients)
    else:
        queued = response = rate = 0.0
        for m in range(1, clients + 1):
            response = prompt * (1 + queued)
            rate = cycle_rate(values, m, values["prefill_overhead"] + response)
            queued = rate * response
    return Loop(rate, loop_step(values, rate, clients), response - prompt, rate * prompt, (clients - 1) * prompt)


def cycle_rate(values: dict[str, float], clients: int, first: float) -> float:
    """The throughput X (req/s) at which ``clients`` cycle when each spends ``first`` (s) before its
    first token: ``X·(first + (n_dec − 1)·t(X)) = N``, t the lesser of the open-loop step
    f·R₀ / (1 − X·b), b = f·a, and the capped batch's T. With the open step it is the quadratic
    ``b·F·X² − (F + A + N·b)·X + N = 0``, A = (n_dec − 1)·f·R₀, whose lesser root (under 1/b) is
    taken in the form that does not cancel, ``2N / (F + A + N·b + √((F + A + N·b)² − 4·b·F·N))``;
    with T it is N / (F + (n_dec − 1)·T); the cycle's step is the lesser, so X the greater."""
    f, after = values["engine_step_factor"], max(values["estimate_steps_per_request"] - 1, 0)
    growth, reads = f * values["estimate_step_growth"], after * f * values["estimate_weights_time"]
    middle = first + reads + clients * growth
    opened = 2 * clients / (middle + math.sqrt(max(middle * middle - 4 * growth * first * clients, 0.0)))
    capped = clients / (first + after * batch_step(values, min(clients, values["estimate_decode_batch"])))
    return max(opened, capped)


def _schweitzer(values: dict[str, float], clients: int) -> tuple[float, float]:
    """Throughput X and prefill response R of ``clients`` by Schweitzer's approximation: R(X) =
    s_pre / (1 − X·s_pre·(N − 1)/N) and X = :func:`cycle_rate` at c + R(X), by bisection on X
    (R grows with X, so the cycle does)."""
    prompt, overhead = values["estimate_prompt_time"], values["prefill_overhead"]
    others = prompt * (clients - 1) / clients

    def response(x: float) -> float:
        return prompt / (1 - x * others) if x * others < 1 else math.inf

    rate = _bisect(lambda x: x - cycle_rate(values, clients, overhead + response(x)),
                   cycle_rate(values, clients, overhead + prompt))
    return rate, response(rate)


def loop_step(values: dict[str, float], rate: float, clients: float) -> float:
    """The decode step (s) at throughput ``rate`` with at most ``clients`` decoding: the open-loop
    step, its batch λ·n_dec·t capped at the clients and the KV pool (:func:`batch_step` there)."""
    return min(open_loop_step(values, rate), batch_step(values, min(clients, values["estimate_decode_batch"])))


def _bisect(excess, high: float) -> float:
    """The root in [0, high] of ``excess``, increasing, negative at 0 and not below 0 at ``high``,
    to the last bit a float holds (the interval halves until no float lies inside it)."""
    low = 0.0
    while low < (middle := (low + high) / 2) < high:
        low, high = (middle, high) if excess(middle) < 0 else (low, middle)
    return high


def burst_ttft(values: dict[str, float], sent: float, prompt: float, q: float = 0.5) -> float:
    """The TTFT (s) at quantile ``q`` of ``sent`` prompts arriving at once: the prompt at that place in
    line waits for those ahead of it, ``A = (q·(N − 1) + 1)·P`` tokens ((N + 1)/2·P at the median)
    prefilled in chunks of the token budget M, each chunk a step that reads the weights once, at the
    prefill efficiency η: ``f·(⌈A / M⌉·R₀ + A·k / η)`` plus the overhead."""
    ahead = (q * (sent - 1) + 1) * prompt
    steps = math.ceil(ahead / values["estimate_token_budget"])
    compute = ahead * values["estimate_token_time"] / values["estimate_prefill_efficiency"]
    overhead = values["prefill_overhead"]
    return values["engine_step_factor"] * (steps * values["estimate_weights_time"] + compute) + overhead


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
    band: a plan without candidates is validated against its engine's estimate), GPU's or model's (a
    fact only the estimate reads, as the link bandwidth or the hidden width), else the model's
    default (base units)."""
    if name in evaluation.values:
        return evaluation.values[name]
    q, plan = evaluation.model.quantities[name], evaluation.plan
    given = next((e.values[name] for e in (plan.engine, plan.gpu, plan.model_entry) if e and name in e.values),
                 {"value": q.default})
    return units.parse_value(given["value"], q.unit)


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


def clients(point) -> int | None:
    """The clients of a closed-loop point (its streams or concurrency cap, one for a synchronous
    run), at most the requests it sent; None for an open-loop point, a burst or a trace."""
    n = in_flight(point)
    if not math.isinf(point.arrival_rate) or point.strategy == "burst" or not n:
        return None
    return int(min(n, point.sent or n))


def predict(point, values: dict[str, float], file: str) -> Predicted:
    """What ``values`` (the estimate group at the point's lengths) predict for one point: its output
    rate, median TPOT and each TTFT percentile the file measured (:data:`QUANTILES`)."""
    prompt, output = point.tokens
    rate = point.arrival_rate
    if math.isfinite(rate) and rate < values["estimate_kv_rate"]:
        step, tokens, load, note = open_loop_step(values, rate), rate * output, f"{rate:g} req/s open loop", ""
        ttft, carried = partial(open_loop_ttft, values, rate), rate
    else:
        n = in_flight(point) if math.isinf(rate) else point.sent or math.inf
        if n is None:
            return Predicted(file, point.strategy, (prompt, output), (), None, values.get(RATE),
                             "no single load (a trace replay): not predicted")
        step, tokens, ttft, carried, note = _loaded(point, values, n)
        load = f"{n} in flight ({point.strategy})" if math.isinf(rate) else f"{rate:g} req/s open loop"
    tpot = partial(tpot_quantile, values, step, carried, prompt)
    measured = (("output tok/s", "tok/s", point.output_throughput, tokens),
                *((f"{label} {key}", "ms", point.latency.get(f"{metric}_{key}", math.nan), 1000 * at(q))
                  for metric, label, at in (("tpot", "TPOT", tpot), ("ttft", "TTFT", ttft)) for key, q in QUANTILES))
    compared = tuple(Compared(name, unit, m, p, values["estimate_band"]) for name, unit, m, p in measured
                     if math.isfinite(m) and m > 0)
    under = rate <= values[RATE] if math.isfinite(rate) and RATE in values else None
    return Predicted(file, load, (prompt, output), compared, under, values.get(RATE), note)


def _loaded(point, values: dict[str, float], n: float):
    """Step (s), output tok/s, TTFT (s) by quantile, the rate of prompts it carries and a note for a point whose requests outnumber
    what the open loop carries: ``n`` clients in a closed loop (:func:`closed_loop`), a burst of ``n``
    (:func:`burst_ttft`), or an open-loop rate past the one that fills the KV pool, whose queue grows
    to the pool or to the run's ``n`` requests (the batch's step, TTFT at the rate it carries)."""
    batch = min(n, values["estimate_decode_batch"])
    held = f"the KV pool and estimate_max_seqs hold {batch:.0f} of them" if batch < n else ""
    if clients(point):
        loop = closed_loop(values, clients(point))
        return loop.step, loop.rate * point.tokens[1], partial(loop.ttft, values), loop.rate, held
    step = batch_step(values, batch)
    tokens = batch * values["decode_tokens_per_step"] / step
    carried = batch / (values["estimate_steps_per_request"] * step)       # Little's law: the batch's rate
    if point.strategy == "burst":
        return step, tokens, partial(burst_ttft, values, n, point.tokens[0]), carried, held
    return (step, tokens, partial(open_loop_ttft, values, carried), carried,
            "over the rate that fills the KV pool: the queue grows, the batch to the pool or to the run's "
            f"{n:g} requests ({batch:.0f})")


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
