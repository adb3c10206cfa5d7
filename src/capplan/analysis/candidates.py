"""Every candidate of a plan's ``candidates:`` section through the plan's own graph, as one batch.

A candidate is the plan with other inputs: the GPU's catalog facts,
``gpus_per_replica``, the checkpoint's bytes per parameter, the KV dtype's
bytes, one offer as the only deployment row, and its λ* pinned
(:mod:`capplan.artifacts.transfer` says where each λ* comes from). Each scenario
is one :func:`capplan.engine.evaluate.run_batch` over all candidates: a
scalar input a candidate changes is a ``(C, 1)`` column, one it does not is
``(1, 1)``; the deployments table has the candidate's offer as its one row.
Replicas, nodes, monthly cost and $ per 1M tokens are the model's formulas,
not a second implementation; a candidate's feasibility is a tensor-parallel
size the engine takes for the model, the model's own checks (the weights fit,
the replica fits a node of the offer) and its KV pool holding one request of
the longest context. An infeasible candidate stays in
the list with its reason.

Under ``topology: disaggregated`` a candidate may be ranked as prefill and decode
pools (:attr:`Candidate.pooled`): the same batch evaluates the model's
disaggregation group for it, and the figures the ranking reads are the pools'
(:data:`POOLED`: the monthly cost is ``disaggregated_monthly_cost``, the nodes
both pools', the replicas both pools' active and spare ones); it is feasible
only when the KV hand-off and the links pass their gates (:func:`_pool_reason`), and its fleet holds
in a scenario where its nominal pools carry the scenario's peak as well (the model's ``pools_hold``).

The ranking (:mod:`capplan.analysis.ranking`) reads the arrays kept here.
"""

from __future__ import annotations

import numpy as np

from capplan import formatting
from capplan.analysis import candidate_sweeps
from capplan.artifacts import transfer
from capplan.artifacts.ranking import Evaluated
from capplan.engine.evaluate import Evaluation, Numeric, over_draws, run_batch
from capplan.engine.graph import build
from capplan.language import units
from capplan.loading import tablestatus
from capplan.loading.plan.candidates import KV_DTYPES
from capplan.loading.plan.entries import PREFILL_FACTS
from capplan.loading.sweeps import estimate

PINS = ("instance_max_rate", "compliant_share")
# what a candidate reads of the configuration the plan's sweep measured: the plan's own values
REFERENCE = ("reference_max_rate", "reference_decode_bound", "reference_decode_time", "reference_prefill_time")
# the model's λ* of a candidate no file measures, its band and the transfer's ratio (the estimate group)
LAMBDAS = ("estimated_max_rate", "estimate_band", "transferred_max_rate", "transfer_ratio")
# what each candidate's batch keeps, per scenario (base units)
KEEP = ("instance_max_rate", "safe_rate_per_replica", "active_replicas", "resilient_replicas", "active_gpus",
        "deployments.nodes", "deployments.deployed_gpus", "deployments.monthly_cost",
        "deployments.cost_per_million_tokens", "deployments.cost_per_million_compliant_tokens",
        "deployments.replicas_per_node", "deployments.nodes_per_replica", "deployments.fleet_holds", "rho_target", "peak_arrival_rate",
        "redundancy_replicas", "hours_per_month", "weight_memory", "usable_vram", "kv_pool",
        "max_concurrency_worst", "max_context_tokens", "ttft_bound", "deployments.node_hourly_cost",
        "deployments.gpus_per_node", "gpus_per_replica", "deployments.hourly_cost", "deployments.power_fits",
        "deployments.node_power", "deployments.facility_power", "site_power_budget", "rack_power_limit",
        "resilient_gpus", "compliant_share")
_FITS, _NODE = "kv_pool > 0", "deployments.nodes_per_replica"
# what a disaggregated plan's batch keeps besides: the pools' figures (the ranking reads them in place of
# the aggregated fleet's for a candidate ranked as pools) and what their feasibility reads
POOLS = ("prefill_max_rate", "decode_max_rate", "prefill_rate_derate", "decode_rate_derate", "prefill_gpus_per_replica",
         "prefill_active_replicas", "decode_active_replicas", "prefill_redundancy_replicas",
         "decode_redundancy_replicas", "prefill_resilient_replicas", "decode_resilient_replicas", "disaggregated_gpus",
         "deployments.prefill_nodes", "deployments.decode_nodes", "deployments.disaggregated_monthly_cost",
         "deployments.disaggregated_cost_per_million_tokens", "handoff_gate", "link_gate", "first_token_gap",
         "kv_transfer_time", "decode_peak_step", "decode_replica_load", "link_utilisation", "prefill_estimated_rate",
         "decode_estimated_rate", "prefill_measured_rate", "decode_measured_rate", "prefill_memory_gate",
         "prefill_memory_need", "prefill_usable_vram", "deployments.prefill_node_gpus", "deployments.prefill_node_cost",
         "prefill_pool_headroom", "decode_pool_headroom", "pools_hold")
# a pool's measured λ*, and whether it holds for a candidate's pool only on the plan's TP (the decode
# pool's; every candidate's prefill pool runs the plan's prefill_gpus_per_replica)
MEASURED_POOLS = {"prefill_measured_rate": False, "decode_measured_rate": True}
# what a candidate ranked as pools must pass in a scenario, its pools sized for it (the ranking's cheapest
# per scenario); its fleet_holds (the model's pools_hold) adds its nominal pools against the scenario's peak
POOL_GATES = ("handoff_gate", "link_gate", "prefill_memory_gate")
POOL_BASIS = "the pools' own rates, the model's disaggregation group: "
POOLED_NAMES = {"deployments.monthly_cost": "deployments.disaggregated_monthly_cost"}   # drawn_values' figures
# a figure the ranking reads, for a candidate ranked as pools: the model's values it is made of
POOLED = {
    "deployments.monthly_cost": lambda v: v["deployments.disaggregated_monthly_cost"],
    "deployments.cost_per_million_tokens": lambda v: v["deployments.disaggregated_cost_per_million_tokens"],
    "deployments.nodes": lambda v: v["deployments.prefill_nodes"] + v["deployments.decode_nodes"],
    "deployments.deployed_gpus": lambda v: (v["deployments.prefill_nodes"] * v["deployments.prefill_node_gpus"]
                                            + v["deployments.decode_nodes"] * v["deployments.gpus_per_node"]),
    "active_replicas": lambda v: v["prefill_active_replicas"] + v["decode_active_replicas"],
    "redundancy_replicas": lambda v: v["prefill_redundancy_replicas"] + v["decode_redundancy_replicas"],
    "resilient_replicas": lambda v: v["prefill_resilient_replicas"] + v["decode_resilient_replicas"],
    "active_gpus": lambda v: (v["prefill_active_replicas"] * v["prefill_gpus_per_replica"]
                              + v["decode_active_replicas"] * v["gpus_per_replica"]),
    "resilient_gpus": lambda v: v["disaggregated_gpus"],
    "deployments.fleet_holds": lambda v: v["pools_hold"],
    "deployments.cost_per_million_compliant_tokens": lambda v: np.zeros_like(v["deployments.disaggregated_monthly_cost"]),
}


def evaluate(evaluations: list[Evaluation]) -> Evaluated | None:
    """Every candidate in every scenario of the plan (None for a plan without ``candidates:``)."""
    plan = evaluations[0].plan
    if plan.candidates is None:
        return None
    cands = plan.candidates.candidates
    model = evaluations[0].model
    first = [run_candidates(e, cands, np.ones(len(cands)), np.zeros(len(cands)), nominal=None) for e in evaluations]
    lam, tags, basis, band, reference, compliant, transferred, estimated = _lambda_star(evaluations, cands, first)
    _pool_provenance(evaluations[0], cands, first[0][0], tags, basis, band)
    values: dict[str, list] = {}
    reasons = [""] * len(cands)
    nominal_values = None
    for j, e in enumerate(evaluations):
        out, holds, failed, broken = run_candidates(e, cands, lam[:, j], compliant[:, j], nominal=nominal_values)
        nominal_values = out if j == 0 else nominal_values
        for name in _kept(out):
            values.setdefault(name, []).append(np.broadcast_to(out[name][:, :1], (len(cands), 1)))
        if j == 0:
            reasons = _reasons(model, cands, out, failed, broken, lam[:, 0], tags, _tpot(e))
    kept = {n: np.concatenate(v, axis=1) for n, v in values.items()}
    return Evaluated(cands, tuple(e.scenario.name for e in evaluations), kept, tags, basis, band, reasons,
                     reference, plan.candidates.unpriced, transferred if reference is not None else None, plan.engine.name,
                     estimated)


def run_candidates(e: Evaluation, cands, lam: np.ndarray, compliant: np.ndarray, nominal, tile: int = 1,
         drawn: dict[str, np.ndarray] | None = None):
    """One scenario over every candidate (``tile`` times over, each tile one draw: candidate ``i``
    of draw ``d`` is row ``d·C + i``): the values, and what run_batch says of checks and failures."""
    graph, inputs, rows = _layout(e, cands, nominal is None)
    inputs = {n: (np.tile(v, (tile, 1)) if v.shape[0] > 1 else v) for n, v in inputs.items()}
    inputs.update(drawn or {})
    inputs["instance_max_rate"] = lam.reshape((-1, 1))
    inputs["compliant_share"] = np.asarray(compliant, dtype=float).reshape((-1, 1))
    out, holds, failed, broken = run_batch(graph, e.model, inputs, rows, nominal)
    return _as_pools(out, np.tile(_pooled(cands), tile)), holds, failed, broken


def _kept(out: dict) -> tuple[str, ...]:
    """What the batch keeps of each scenario: :data:`KEEP`, and the pools' figures where the plan has them."""
    return KEEP + tuple(n for n in POOLS if n in out)


def _pooled(cands) -> np.ndarray:
    """Which candidates are ranked as prefill and decode pools, ``(C,)``."""
    return np.array([c.pooled for c in cands], dtype=bool)


def _as_pools(out: dict, pooled: np.ndarray) -> dict:
    """The batch's values with the pools' figures in place of the aggregated fleet's for the rows
    ``pooled`` marks (:data:`POOLED`); the values as they are when no row is pooled."""
    if not pooled.any():
        return out
    column = pooled.reshape((-1, 1))
    for name, pools in POOLED.items():
        out[name] = np.where(column, np.asarray(pools(out), dtype=float), np.asarray(out[name], dtype=float))
    return out


def drawn_values(e: Evaluation, cands, compliant: np.ndarray, name: str, sources):
    """``name`` of every candidate over draws of ``sources`` (λ*, the plan's uncertain inputs):
    the function :func:`capplan.engine.evaluate.over_draws` returns, each row the one
    :func:`run_candidates` gives with ``tile`` draws, at a cost that grows only with the
    formulas the draws move."""
    graph, inputs, rows = _layout(e, cands, True)
    inputs["compliant_share"] = np.asarray(compliant, dtype=float).reshape((-1, 1))
    aggregated = over_draws(graph, inputs, rows, name, sources)
    pooled = _pooled(cands)
    if not pooled.any():
        return aggregated
    pools = over_draws(graph, inputs, rows, POOLED_NAMES[name], sources)

    def run(tile: int, drawn: dict[str, np.ndarray]) -> np.ndarray:
        return np.where(np.tile(pooled, tile).reshape((-1, 1)), pools(tile, drawn), aggregated(tile, drawn))
    return run


def _layout(e: Evaluation, cands, nominal: bool):
    """The scenario's graph with λ* pinned, its inputs (the scenario's own, the candidates' in
    place of the plan's; ``(1, …)`` or ``(C, 1)``) and its table rows (deployments: one, the offer)."""
    graph = _pruned(e.model, build(e.model, e.plan.switches, pinned_names(e, cands), nominal=nominal))
    rows = {t: len(d.rows) for t, d in e.scenario.tables.items()}
    rows["deployments"] = 1
    return graph, candidate_inputs(e, graph, cands), rows


def pinned_names(e: Evaluation, cands=()) -> frozenset[str]:
    """What a candidate's graph pins: the scenario's pins, λ* and the compliant share, the
    values of the plan's measured configuration that a transfer reads, and the prefill pool's GPU
    facts where one of ``cands`` prefills on a GPU of the section's ``prefill_gpus``."""
    listed = frozenset(PREFILL_FACTS.values()) if any(c.prefill_entry for c in cands) else frozenset()
    return (frozenset(n for n, i in e.scenario.inputs.items() if i.pinned) | frozenset(PINS)
            | frozenset(n for n in REFERENCE if n in e.values) | listed)


def candidate_inputs(e: Evaluation, graph, cands) -> dict[str, np.ndarray]:
    """Every input node of ``graph`` outside the deployments table: the scenario's value
    ``(1, …)``, or the candidates' ``(C, 1)`` where they set it (:func:`_candidate_inputs`)."""
    inputs = {}
    for name in graph.order:
        node = graph.nodes[name]
        q = node.quantity
        if node.formula is None and q.kind != "text" and q.table != "deployments":
            inputs[name] = np.asarray(e.values[name], dtype=float).reshape((1, -1))
    _candidate_inputs(e, graph, cands, inputs)
    return inputs


_PRUNED: dict[int, tuple] = {}


def _pruned(model, graph):
    """The graph cut to what a candidate's ranking reads (:data:`KEEP`, the λ* of each provenance,
    the model's checks) and what they are computed from: the queueing figures no ranking reads are
    left out."""
    held = _PRUNED.get(id(graph))
    if held is None or held[0] is not graph:
        held = _PRUNED[id(graph)] = (graph, graph.cut((*KEEP, *(n for n in LAMBDAS + POOLS if n in graph.nodes))))
    return held[1]


def _candidate_inputs(e: Evaluation, graph, cands, inputs: dict) -> None:
    """Each candidate's GPU facts, GPUs per replica, weight and KV bytes, offer and overrides
    (each value parsed once per GPU or format, then spread over the candidates by index)."""
    model, plan = e.model, e.plan
    n = len(cands)
    gpus = list({c.gpu.id: c.gpu for c in cands}.values())
    position = {g.id: k for k, g in enumerate(gpus)}
    which = np.array([position[c.gpu.id] for c in cands])
    derived: dict[str, np.ndarray] = {}
    for name in sorted({k for g in gpus for k in g.values} | set(plan.gpu.values)):
        if name not in graph.nodes:
            continue
        q = model.quantities[name]
        per_gpu = np.array([_scalar(e, name) if g.id == plan.gpu.id
                            else units.parse_value(g.values[name]["value"], q.unit) if name in g.values
                            else units.parse_value(q.default, q.unit) if q.default is not None else np.nan
                            for g in gpus])
        (inputs if graph.nodes[name].formula is None else derived)[name] = per_gpu[which].reshape((-1, 1))
    for name, column in derived.items():       # a derived fact some GPUs pin: the others compute it
        formula = model.quantities[name].formula_for(plan.switches)
        computed = np.broadcast_to(np.asarray(Numeric(inputs, batch=True).visit(formula.expr), dtype=float),
                                   column.shape)
        inputs[name] = np.where(np.isnan(column), computed, column)
    static = _static(plan, cands)
    inputs["gpus_per_replica"] = static["gpus_per_replica"]
    if "expert_parallel_size" in graph.nodes:
        inputs["expert_parallel_size"] = np.where(np.isnan(static["ep"]), _scalar(e, "expert_parallel_size"),
                                                  static["ep"])
    inputs["weight_bytes_per_param"] = np.where(np.isnan(static["weights"]), _scalar(e, "weight_bytes_per_param"),
                                                static["weights"])
    inputs["kv_bytes_per_element"] = np.where(np.isnan(static["kv"]), _scalar(e, "kv_bytes_per_element"), static["kv"])
    if "tensor_format_bits" in graph.nodes:       # a format that states no width computes at the model's default
        q = model.quantities["tensor_format_bits"]
        stated = np.where(np.isnan(static["tensor_bits"]), units.parse_value(q.default, q.unit), static["tensor_bits"])
        inputs["tensor_format_bits"] = np.where(np.isnan(static["weights"]), _scalar(e, "tensor_format_bits"), stated)
    _prefill_inputs(e, graph, cands, inputs)
    for name, on_tp in MEASURED_POOLS.items():
        if name in inputs:
            inputs[name] = np.where(_own_configuration(e, cands, on_tp).reshape((-1, 1)), inputs[name], 0.0)
    inputs["deployments.gpus_per_node"] = static["gpus_per_node"]
    inputs["deployments.node_hourly_cost"] = static["node_hourly_cost"]
    for name in sorted({i.name for c in cands for i in c.overrides} - set(PINS)):
        base = np.broadcast_to(inputs[name], (n, 1)).copy()
        for k, c in enumerate(cands):
            for given in c.overrides:
                if given.name == name:
                    base[k, 0] = given.value
        inputs[name] = base


def _prefill_inputs(e: Evaluation, graph, cands, inputs: dict) -> None:
    """Where candidates prefill on a GPU of the section's ``prefill_gpus``: each one's prefill pool GPU
    facts (that GPU's, else the plan's pinned prefill GPU's, else its own GPU's) and its prefill offer's
    price and GPUs a node (else the plan's), as ``(C, 1)`` columns."""
    if not any(c.prefill_entry for c in cands):
        return
    model = e.model
    for fact, name in PREFILL_FACTS.items():
        if name not in graph.nodes or graph.nodes[name].formula is not None:
            continue
        unit = model.quantities[name].unit
        pinned = e.scenario.inputs.get(name)
        inputs[name] = np.array([
            units.parse_value(c.prefill_entry.values[fact]["value"], unit)
            if c.prefill_entry is not None and fact in c.prefill_entry.values else np.nan if c.prefill_entry
            else pinned.value if pinned is not None and pinned.pinned
            else _scalar(e, fact) if c.gpu.id == e.plan.gpu.id
            else units.parse_value(c.gpu.values[fact]["value"], unit) if fact in c.gpu.values else np.nan
            for c in cands]).reshape((-1, 1))
    for name, field in (("prefill_node_hourly_cost", "node_hourly_cost"), ("prefill_gpus_per_node", "gpus_per_node")):
        if name in inputs:
            inputs[name] = np.array([getattr(c.prefill_offer, field) if c.prefill_offer is not None
                                     else _scalar(e, name) for c in cands]).reshape((-1, 1))


_STATIC: dict[int, tuple] = {}


def _static(plan, cands) -> dict[str, np.ndarray]:
    """What each candidate sets whatever the scenario, as ``(C, 1)`` columns (NaN: the plan's own),
    built once per candidate list (a batch asks for it in every scenario)."""
    held = _STATIC.get(id(cands))
    if held is None or held[0] is not cands:
        weights = {fmt: units.parse_value(spec["value"], "B") for fmt, spec in plan.model_entry.weights.items()}
        bits = {fmt: units.parse_value(f"{spec['tensor_bits']} bit", "bit") if spec.get("tensor_bits") else np.nan
                for fmt, spec in plan.model_entry.weights.items()}
        column = lambda xs: np.fromiter(xs, dtype=float, count=len(cands)).reshape((-1, 1))  # noqa: E731
        _STATIC.clear()
        _STATIC[id(cands)] = held = (cands, {
            "gpus_per_replica": column(c.gpus for c in cands),
            "ep": column(c.ep or np.nan for c in cands),
            "weights": column(weights[c.weights] if c.weights else np.nan for c in cands),
            "tensor_bits": column(bits[c.weights] if c.weights else np.nan for c in cands),   # base unit (B)
            "kv": column(KV_DTYPES.get(c.kv_cache_dtype) or np.nan for c in cands),
            "gpus_per_node": column(c.offer.gpus_per_node for c in cands),
            "node_hourly_cost": column(c.offer.node_hourly_cost for c in cands)})
    return held[1]


def _scalar(e: Evaluation, name: str) -> float:
    return float(np.asarray(e.values[name]).reshape(-1)[0])


def _column(values: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
    """A batch result as one value per candidate (a ``(1, 1)`` result is the same for all)."""
    return np.broadcast_to(values[name], (n, 1))[:, 0]


def _lambda_star(evaluations, cands, first):
    """λ* per candidate and scenario ``(C, S)``, with each candidate's tag, basis, band, compliant
    share ``(C, S)``, and the λ* a transfer and the built-in estimate give ``(C,)`` (the basis in words
    as the nominal scenario has it)."""
    n, s = len(cands), len(evaluations)
    measured = _plan_own(evaluations[0], cands)
    reference = int(np.flatnonzero(measured)[0]) if measured.any() else None
    given = {i: g for i, c in enumerate(cands) for g in c.overrides if g.name == "instance_max_rate"}
    swept, swept_share = candidate_sweeps.rates(evaluations, cands)
    files = np.array([c.evidence is not None for c in cands]) & ~measured
    files[list(given)] = False
    tag = np.full(n, transfer.ESTIMATED if reference is None else transfer.TRANSFERRED, dtype=object)
    tag[files] = [cands[i].evidence.kind for i in np.flatnonzero(files)]
    own_kind = _own_sweep_kind(evaluations[0])
    tag[measured] = own_kind
    tag[list(given)] = transfer.GIVEN
    lam = np.zeros((n, s))
    share = np.zeros((n, s))
    band = np.zeros(n)
    for j, (e, (values, *_)) in enumerate(zip(evaluations, first)):
        own = _scalar(e, "instance_max_rate")
        if reference is not None:
            lam[:, j] = _column(values, "transferred_max_rate", n)
            band[:] = transfer.TRANSFER_BAND
        else:
            lam[:, j] = _column(values, "estimated_max_rate", n)
            band[:] = _column(values, "estimate_band", n)
        if j == 0:
            transferred = lam[:, 0].copy()
            estimated = _column(values, "estimated_max_rate", n)
        lam[files, j] = swept[files, j]
        share[files, j] = swept_share[files, j]
        lam[measured, j] = own
        share[measured, j] = e.values.get("compliant_share", 0.0)
        for i, g in given.items():
            lam[i, j] = g.value
        if j == 0:
            ratio = _column(values, "transfer_ratio", n) if reference is not None else None
            decode = bool(_scalar(e, "reference_decode_bound")) if reference is not None else None
            basis = _basis(cands, tag, lam[:, 0], band, given, own, reference, ratio, decode, files, measured,
                           own_kind)
    for i in np.flatnonzero(files):
        band[i] = _tool_band(cands[i].evidence.files)
    if own_kind == transfer.ESTIMATED:
        band[measured] = _tool_band(evaluations[0].scenario.tables["load_sweep"].imported)
    band[(tag == transfer.MEASURED) | (tag == transfer.GIVEN)] = 0
    share[tag != transfer.MEASURED] = 0
    return (_settled(lam), list(tag), basis, band, reference, share, _settled(transferred),
            _settled(estimated))


SIGNIFICANT = 12      # digits of a λ* the model's batch computes: the last ones move with the library versions


def _settled(values: np.ndarray) -> np.ndarray:
    """λ* to :data:`SIGNIFICANT` digits. The batch evaluates the model's formulas in the order
    sympy prints them, which changes between sympy releases, so the last bits of a transferred
    or estimated λ* did (4.673522760444507 and …508 under sympy 1.12 and 1.14); the outputs,
    which the lowest and newest versions must write alike, carry the settled value."""
    return np.vectorize(lambda x: float(f"{x:.{SIGNIFICANT}g}"), otypes=[float])(values)


def _basis(cands, tag, lam, band, given, own, reference, ratio, decode, files, measured, own_kind) -> list[str]:
    """What each candidate's λ* rests on, in words (``own_kind``: whether the plan's own sweep was
    measured or predicted)."""
    measured_on = f"{_rate(own)} {own_kind} on {cands[reference].label}" if reference is not None else ""
    bound = ("decode-bound: HBM bandwidth × GPUs / bytes per decode step" if decode
             else "prefill-bound: tensor FLOP/s × GPUs")
    out = []
    for i, t in enumerate(tag):
        ev = cands[i].evidence
        if t == transfer.GIVEN:
            out.append(f"given: {given[i].source or 'the candidate sets instance_max_rate'}")
        elif files[i] and t == transfer.MEASURED:
            out.append(f"the sweep in {_files(ev)} ({_rate(lam[i])} at the plan's SLOs)")
        elif measured[i]:
            out.append(f"the plan's sweep ({_rate(own)})" if t == transfer.MEASURED else
                       f"the plan's own sweep, predictions of a performance model ({_rate(own)}; estimated, not measured)")
        elif files[i]:
            out.append(f"the predictions of {ev.tool_name} in {_files(ev)} ({_rate(lam[i])} at the plan's SLOs; its "
                       "latencies are the tool's predictions, not percentiles)")
        elif t == transfer.TRANSFERRED:
            out.append(f"{ratio[i]:.3g} × {measured_on} ({bound})")
        else:
            out.append(f"the mixed-batch roofline and Little's law at the engine's step factor ({_rate(lam[i])}, "
                       f"predicted: ±{100 * band[i]:.0f} % on the calibration points)")
    return out


def _files(ev) -> str:
    """'x.json (SHA-256 ab12…), …': the files an evidence item read, each with its digest."""
    return ", ".join(f"{f.path} (SHA-256 {f.sha256})" for f in ev.files)


def _tpot(e: Evaluation) -> str:
    """'the TPOT SLO of 50 ms': the tightest TPOT SLO of the scenario, as a pool's reason names it."""
    limits = [s.limit for s in e.model.slos if s.metric == "tpot"]
    if not limits:
        return "the TPOT SLO"
    name = min(limits, key=lambda n: _scalar(e, n))
    return f"the TPOT SLO of {_show(e.model, name, _scalar(e, name))}"


def _tool_band(files) -> float:
    """The band of a λ* from a performance model's estimate files: the tool's error measured on the engine
    whose database it ran (the widest where the files ran several), else the stated
    :data:`~capplan.artifacts.transfer.TOOL_BAND` where one of them is a tool or engine not measured."""
    bands = [estimate.tool_band(f.release) for f in files if f.format == estimate.FORMAT]
    return max(bands) if bands and None not in bands else transfer.TOOL_BAND


def _own_sweep_kind(e: Evaluation) -> str:
    """'measured', or 'estimated' when the plan's own load sweep is a performance model's predictions."""
    sweep = e.scenario.tables.get("load_sweep")
    estimated = sweep is not None and sweep.status is not None and sweep.status.status == tablestatus.ESTIMATED
    return transfer.ESTIMATED if estimated else transfer.MEASURED


def _plan_own(e: Evaluation, cands) -> np.ndarray:
    """Which candidates the plan's own sweep measured (none without a sweep: under ``sizing: estimate``
    the plan's own λ* is an estimate like the others')."""
    if "load_sweep" not in e.scenario.tables:
        return np.zeros(len(cands), dtype=bool)
    return _own_configuration(e, cands, True)


def _own_configuration(e: Evaluation, cands, on_tp: bool) -> np.ndarray:
    """Which candidates run the plan's own configuration, so that what the plan measured holds for them:
    its GPU, weights and KV bytes, and (``on_tp``) its GPUs per replica and expert-parallel size; without
    ``on_tp`` (a prefill pool's), the GPU a candidate's pools prefill on against the plan's prefill GPU."""
    plan = e.plan
    prefill = plan.prefill_gpu or plan.gpu.id
    own_w, own_kv, own_gpus = (_scalar(e, n) for n in ("weight_bytes_per_param", "kv_bytes_per_element",
                                                         "gpus_per_replica"))
    own_ep = _scalar(e, "expert_parallel_size") if "expert_parallel_size" in e.values else None
    same_w = {fmt: units.parse_value(spec["value"], "B") == own_w for fmt, spec in plan.model_entry.weights.items()}
    return np.array([(c.gpus == own_gpus and c.ep in (None, own_ep) and c.gpu.id == plan.gpu.id if on_tp
                      else (c.prefill_gpu or c.gpu.id) == prefill)
                     and (c.weights is None or same_w[c.weights])
                     and KV_DTYPES.get(c.kv_cache_dtype) in (None, own_kv) for c in cands])


def _pool_provenance(e: Evaluation, cands, values: dict, tags: list, basis: list, band: np.ndarray) -> None:
    """For each candidate ranked as pools, what its two rates rest on, in ``basis``: each pool's measured
    λ* with its source, or the estimate's. Its tag is 'measured' with no band when both pools are measured,
    else 'estimated' with the estimate's band: a pool's rate is never the transfer of the plan's sweep
    (``values``: the nominal scenario's batch)."""
    n = len(cands)
    for i in (i for i, c in enumerate(cands) if c.pooled):
        parts, measured = [], True
        for name, (pool, slo) in zip(MEASURED_POOLS, (("prefill λ*_P", "TTFT"), ("decode λ*_D", "TPOT"))):
            if _column(values, name, n)[i] > 0:
                parts.append(f"{pool} measured: {e.scenario.inputs[name].source or 'given as ' + name}")
            else:
                parts.append(f"{pool} estimated at the {slo} SLO")
                measured = False
        basis[i] = POOL_BASIS + "; ".join(parts)
        tags[i], band[i] = ((transfer.MEASURED, 0.0) if measured
                            else (transfer.ESTIMATED, _column(values, "estimate_band", n)[i]))


def _reasons(model, cands, out, failed, broken, lam, tags, tpot) -> list[str]:
    """Why each candidate cannot serve the plan ('' when it can), from the model's checks and quantities
    (``tpot``: the TPOT SLO the KV hand-off of a candidate ranked as pools must meet, in words)."""
    reasons = []
    by_check = {c.written: f for c, f in zip(model.checks, failed)}
    fits_fail = np.broadcast_to(by_check.get(_FITS, np.zeros((1, 1), bool)), (len(cands), 1))
    node_fail = np.broadcast_to(next((f for c, f in zip(model.checks, failed) if _NODE in c.written),
                                     np.zeros((1, 1), bool)), (len(cands), 1))
    worst = np.broadcast_to(out["max_concurrency_worst"], (len(cands), 1))
    broken = np.broadcast_to(broken, (len(cands), 1))
    for i, c in enumerate(cands):
        def value(name):
            return np.broadcast_to(out[name], (len(cands), 1))[i, 0]

        def show(name):
            return _show(model, name, value(name))
        if c.refused:
            reasons.append(c.refused)
        elif fits_fail[i, 0]:
            reasons.append(f"the weights do not fit: {show('weight_memory')} of weights in {show('usable_vram')} "
                           f"usable on {c.gpus} GPU(s)")
        elif worst[i, 0] < 1:
            reasons.append(f"the KV pool ({show('kv_pool')}) cannot hold one request of the longest context "
                           f"({show('max_context_tokens')})")
        elif node_fail[i, 0]:
            per_node = c.offer.gpus_per_node
            reasons.append(f"a replica of {c.gpus} GPUs does not fit a node of {per_node:g} GPU{'s' * (per_node != 1)} "
                           f"(max_nodes_per_replica)")
        elif not value("deployments.power_fits"):
            reasons.append(_over_power(value, show))
        elif c.pooled:
            reasons.append(_pool_reason(value, show, tpot))
        elif not lam[i] > 0:
            reasons.append(f"no λ*: the {tags[i]} step time exceeds the TPOT target at any rate")
        elif broken[i, 0] or not np.isfinite(np.broadcast_to(out["deployments.monthly_cost"],
                                                             (len(cands), 1))[i, 0]):
            reasons.append("a formula is undefined for this candidate (a division by zero)")
        else:
            reasons.append("")
    return reasons


def _pool_reason(value, show, tpot: str) -> str:
    """Why a candidate ranked as prefill and decode pools cannot serve the plan ('' when it can): a pool
    with no rate, a prefill replica short of memory, the KV hand-off past the TPOT SLO (``tpot``, shown), the
    links short of the peak's KV."""
    if not value("prefill_memory_gate"):
        return (f"a prefill replica cannot hold the weights and the longest prompt's KV cache: it needs "
                f"{show('prefill_memory_need')}, more than its {show('prefill_usable_vram')} usable (prefill_memory_gate)")
    if not value("prefill_max_rate") > 0:
        return "no prefill λ*: the longest prompt's prefill alone misses the TTFT SLO"
    if not value("decode_max_rate") > 0:
        return "no decode λ*: the decode step exceeds the TPOT target at any rate"
    if not value("handoff_gate"):
        if not value("decode_replica_load") < 1:
            return "the decode pool's step grows without bound at the peak"
        return (f"the KV hand-off misses the TPOT SLO: the first inter-token gap is {show('first_token_gap')} "
                f"({show('kv_transfer_time')} to hand the longest prompt's KV cache over, then a decode step of "
                f"{show('decode_peak_step')}), over {tpot} (handoff_gate)")
    if not value("link_gate"):
        return (f"the links cannot carry the peak's KV cache: it needs {formatting.number(100 * value('link_utilisation'), 3)} % "
                f"of their bandwidth (link_gate)")
    if not np.isfinite(value("deployments.monthly_cost")):
        return "a formula is undefined for this candidate (a division by zero)"
    return ""


def _over_power(value, show) -> str:
    """Why a candidate does not fit the site's power, naming the limit it passes: its node against
    the rack power limit first (a fleet of any size holds such nodes), else its fleet against the
    site's budget."""
    limit = value("rack_power_limit")
    if limit > 0 and value("deployments.node_power") > limit:
        return (f"a node draws {show('deployments.node_power')}, over the rack power limit of "
                f"{show('rack_power_limit')} (rack_power_limit)")
    return (f"its fleet of {show('deployments.nodes')} nodes draws {show('deployments.facility_power')} at the "
            f"facility, over the site's power budget of {show('site_power_budget')} (site_power_budget)")


def _show(model, name: str, value: float) -> str:
    q = model.quantities[name]
    return formatting.quantity(units.to_display(float(value), q.unit), q.unit, q.kind)


def _rate(value: float) -> str:
    return f"{formatting.number(float(value), 3)} req/s"
