"""The data an importer produces: one run (:class:`SweepPoint`) and one file.

Units of a :class:`SweepPoint` are capplan's display units: ``arrival_rate``
req/s (``math.inf`` for a run that is not open-loop), each SLO's percentile
in its metric's unit (``latency['ttft_p95']`` ms, ``latency['e2e_p99']``
**s**; the keys are the plan's load_sweep columns), ``output_throughput``
tok/s, ``goodput`` req/s.

``sent`` and ``achieved_rate`` say whether the point delivered the load it was
offered: a run where requests did not complete, or whose achieved rate falls
short of the offered one, was overloaded whatever its percentiles say (they
cover only the requests that finished). 0 means the file does not tell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from capplan.errors import CapplanError


@dataclass(frozen=True)
class SweepPoint:
    """One benchmark run at one offered arrival rate, in capplan's units."""

    arrival_rate: float        # req/s; math.inf for a closed burst / closed loop
    latency: dict[str, float]  # SLO column ('ttft_p95') -> its percentile (ms; E2E in s)
    output_throughput: float   # output tok/s
    completed: int
    failed: int
    sent: int                  # requests sent (completed + failed + unfinished); 0 = not recorded
    achieved_rate: float       # req/s the tool measured as delivered; 0 = not measured
    goodput: float | None      # req/s if the file reports it, else None
    file: str                  # path relative to the plan folder (POSIX)
    methods: tuple[str, ...]   # how each value was obtained
    missing: dict[str, str] = field(default_factory=dict)   # SLO column -> why the file lacks it
    # each successful request's (TTFT ms, TPOT ms, E2E s), where the file keeps them (goodput)
    per_request: tuple[tuple[float, float, float], ...] = ()
    # the configuration the run measured (model, TP, client concurrency cap, server
    # settings): runs of different configurations are separate series, never replicates
    config: tuple[tuple[str, str], ...] = ()
    strategy: str = ""         # how the load was offered: 'open-loop Poisson', 'constant', 'burst', ...
    tokens: tuple[float, float] | None = None   # mean prompt and output tokens of its completed requests
    sources: dict[str, str] = field(default_factory=dict)   # SLO column -> 'summary' | 'computed' | ...

    @property
    def series(self) -> str:
        """'max_concurrency=16, model_id="llama"' (empty for a file that records none)."""
        return ", ".join(f"{k}={v}" for k, v in self.config)


@dataclass(frozen=True)
class SweepFile:
    """One imported file: where it is, its digest, format and runs."""

    path: str
    sha256: str
    format: str
    points: tuple[SweepPoint, ...]
    release: str = ""          # the tool's version as the file records it (GuideLLM's guidellm_version)
    evidence: tuple[str, ...] = ()   # what it measured against the plan (model, parallelism, tokens): see evidence

    @property
    def tool(self) -> tuple[str, str]:
        """(the tool that wrote the file, its version): the release the file records
        (GuideLLM 0.5 on), else what its layout shows (vLLM's files record none)."""
        if self.format.startswith("vllm-bench-sweep-serve"):
            return "vllm bench sweep serve", self.format.removeprefix("vllm-bench-sweep-serve ")
        name, layout = _TOOLS.get(self.format, (self.format, ""))
        return name, self.release or layout


_TOOLS = {
    "vllm-benchmark-serving": ("vLLM benchmarks/benchmark_serving.py", "legacy layout"),
    "vllm-bench-serve": ("vllm bench serve", "--save-result"),
    "vllm-bench-serve-jsonl": ("vllm bench serve", "JSON Lines (--append-result)"),
    "inferencex": ("InferenceX benchmark_serving (vLLM's result layout)", "summary in seconds"),
    "guidellm-v0.3": ("GuideLLM", "v0.3"),
    "guidellm-v0.4": ("GuideLLM", "v0.4"),
    "guidellm-v0.5-v0.6": ("GuideLLM", "v0.5-v0.6 (metadata.version 1)"),
    "guidellm-v0.7+": ("GuideLLM", "v0.7+ (metadata.version 2)"),
    "csv": ("CSV table", "capplan's columns"),
}


def source_of(text: str) -> str:
    """'computed' when a method computed the percentile from per-request data, else 'summary'."""
    return "computed" if "np.percentile" in text else "summary"


class MissingPercentile(CapplanError):
    """A run lacks a percentile an SLO of the plan needs: neither in the file's
    summary nor computable from per-request data. ``slo`` names the SLO, so
    the plan can point at its line."""

    def __init__(self, message: str, slo, key: str | None = None, line: int | None = None):
        super().__init__(message, key=key, line=line)
        self.slo = slo


def run_percentiles(slos, rate: float, completed: int, sent: int, find, methods: list[str], none_text: str,
                    line: int | None = None):
    """Each SLO's percentile of one run, ``find(slo) -> (value, how)`` in every format:
    ``(latency, missing, sources)``. A run where no request completed has every latency
    inf (it fails any SLO); a closed burst that lacks a percentile is shown without it
    (it never counts, so it never aborts the import); an open-loop run that lacks one
    raises :class:`MissingPercentile`. A run that records no request at all (none
    completed, failed or unfinished: ``sent`` 0) is no sweep point and is refused."""
    latency: dict[str, float] = {}
    missing: dict[str, str] = {}
    sources: dict[str, str] = {}
    if completed == 0 and sent == 0:
        raise CapplanError("the run records no request (none completed, failed or unfinished): a run that "
                           "sent nothing is no sweep point", key="completed", line=line)
    if completed == 0:
        methods.append(f"{', '.join(s.column for s in slos)}: {none_text}")
        return {slo.column: math.inf for slo in slos}, missing, sources
    for slo in slos:
        try:
            latency[slo.column], text = find(slo)
            sources[slo.column] = source_of(text)
        except MissingPercentile as missed:
            if not math.isinf(rate):
                raise
            missing[slo.column] = missed.message
            sources[slo.column] = "missing"
            text = f"{slo.column}: {missed.message}"
        methods.append(text)
    return latency, missing, sources
