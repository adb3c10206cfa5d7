"""λ* for a candidate that was never swept: transferred from a measured one, or estimated.

Three provenances, each shown next to the candidate's cost:

- ``measured``: the plan's own sweep, when the candidate is the plan's GPU, GPUs
  per replica, weights and KV dtype, or a benchmark file under ``candidates:
  evidence:`` of the candidate's configuration (or a λ* a candidate's ``set:``
  gives); ``estimated`` with the tool's name when that file is a performance
  model's estimate file (:mod:`capplan.analysis.candidate_sweeps`);
- ``transferred``: a measured λ* times the ratio of the bound that limits it.
  At the measured point the step is split (below) into the time spent reading
  weights and KV and the time spent computing; where reading dominates it is
  decode-bound and the ratio is the candidate's memory bandwidth × GPUs per
  replica over the bytes one decode step reads (``decode_bytes_per_step``),
  against the same for the measured candidate; where computing dominates,
  the ratio of tensor FLOP/s × GPUs per replica. A transfer keeps what the
  bound ignores (communication, kernels) in the same proportion, so it
  carries a band of ±:data:`TRANSFER_BAND`, which the simulation draws from;
- ``estimated``: no measurement to scale, so Little's law and a **mixed-batch**
  decode step. A replica serving λ req/s holds ``B = λ·Ō·t`` requests in its
  decode batch (Little's law: each stays ``Ō`` steps of ``t``); each step
  reads the weights and the batch's KV cache, and also computes the batch's
  decode tokens and the prefill tokens that arrived during it (``λ·P̄·t``),
  because a chunked-prefill engine runs them in the same forward pass::

      t = R₀ + λ·t·(Ō·S̄·b/BW′ + (P̄ + Ō)·k)          R₀ = W/BW′,  k = c_f·N_act/(F′)

  so ``t(λ) = R₀ / (1 − λ·a)`` with ``a = Ō·S̄·b/BW′ + (P̄+Ō)·k``, and the
  highest rate whose step meets the TPOT target ``T`` (the TPOT SLO, or the
  E2E SLO less the TTFT bound spread over Ō tokens, whichever is tighter)
  is ``λ* = (T − R₀) / (T·a)``, capped where the batch ``λ·Ō·T`` outgrows
  the KV pool. Every latency it gives is a bound, not a percentile.

Measured against the real sweep in ``../shared/examples``
(tests/test_candidates_calibration.py: vLLM, Llama-3.3-70B TP8 on
A100-40GB, open loop), the measured mean TPOT is 1.40 to 1.56 times the
mixed-batch step at 1 and 4 req/s (the roofline leaves out kernel launches and
the tensor-parallel all-reduce), and λ* estimated at the bound, 10.1 req/s,
lies inside the sweep's knee bracket (4 to 16 req/s), above its measured 4.
So an estimate is the bound, and its band reaches down to the λ* of a step
:data:`ESTIMATE_SLOW` times slower (3.8 req/s on that plan). The GuideLLM
example keeps one synchronous request (no rate to compare), and the
InferenceX MiniMax-M2.5 files are of a model the catalog does not hold.
A λ* read from a performance model's estimate file (``candidates: evidence:``,
NVIDIA aiconfigurator's predictions) carries ±:data:`TOOL_BAND`: its low end
is a quarter of the prediction, because the tool's own users report
predictions 1.3 to 4.6 times above their benchmarks (ai-dynamo/aiconfigurator
#1396: 883.7 predicted against 192.4 tok/s/GPU measured), and on the
reference plan (plans/llama3.3-70b-candidates.yaml) its λ* lies 1.9 to 4.2
times above the λ* transferred from the measured A100 sweep for the same nine
H100, H200 and B200 configurations (stated, not fitted: no measured sweep of
those GPUs is at hand).
A transfer crosses checkpoint formats: the bytes one decode step reads carry
the weights' size (the prefill ratio uses BF16 FLOP/s whatever the format).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRANSFER_BAND = 0.35      # ± share of a transferred λ*: a roofline ratio across GPUs and TP (stated, not fitted)
TOOL_BAND = 0.75          # ± share of a performance model's λ* (estimate files): see the module docstring
ESTIMATE_SLOW = 1.6       # measured mean TPOT / mixed-batch step, the highest seen in the calibration (1.56)

MEASURED, TRANSFERRED, ESTIMATED, GIVEN = "measured", "transferred", "estimated", "given"

# the quantities each candidate's λ* reads, from the first batch evaluation
READS = ("weight_memory", "decode_bytes_per_step", "decode_step_time_bound", "avg_cached_tokens",
         "kv_bytes_per_token", "prefill_time_bound", "max_prompt_tokens", "prefill_batch", "avg_output_tokens",
         "avg_prompt_tokens", "ttft_bound", "max_concurrency_avg", "hbm_bandwidth", "bf16_peak_flops",
         "gpus_per_replica", "hbm_efficiency", "tensor_efficiency")


@dataclass(frozen=True)
class Step:
    """The mixed-batch decode step of each candidate (arrays over candidates, base units)."""

    r0: np.ndarray            # s: reading the weights once
    a: np.ndarray             # s per (req/s): what each unit of arrival rate adds, as a share of the step
    target: np.ndarray        # s: the step time the TPOT and E2E SLOs allow
    kv_cap: np.ndarray        # req/s: where the batch λ·Ō·T fills the KV pool
    read_share: np.ndarray    # s per (req/s) of a spent reading KV (the rest computes)

    def slower(self, factor: float) -> Step:
        """The same step ``factor`` times slower in every part (what the roofline leaves out)."""
        return Step(self.r0 * factor, self.a * factor, self.target, self.kv_cap, self.read_share * factor)

    def band(self) -> np.ndarray:
        """The share of λ* the estimate may be above the truth: down to the λ* of a step
        :data:`ESTIMATE_SLOW` times slower (at most 0.9)."""
        bound = self.rate()
        slow = self.slower(ESTIMATE_SLOW).rate()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.clip(np.where(bound > 0, 1 - slow / np.where(bound > 0, bound, 1), 0.9), 0.0, 0.9)

    def time(self, rate) -> np.ndarray:
        """The step time at ``rate`` req/s (inf where the replica cannot keep up)."""
        denom = 1 - rate * self.a
        return np.where(denom > 0, self.r0 / np.where(denom > 0, denom, 1), np.inf)

    def rate(self) -> np.ndarray:
        """λ*: the highest rate whose step meets the target, within the KV pool."""
        tpot = np.where(self.target > self.r0, (self.target - self.r0) / (self.target * self.a), 0.0)
        return np.maximum(np.minimum(tpot, self.kv_cap), 0.0)

    def decode_bound(self, rate) -> np.ndarray:
        """Whether reading (weights and KV) takes more of the step at ``rate`` than computing."""
        with np.errstate(invalid="ignore"):
            t = self.time(rate)
            reading = self.r0 + rate * t * self.read_share
            return reading >= t - reading


def step(v: dict[str, np.ndarray], tpot_slo: np.ndarray, e2e_slo: np.ndarray) -> Step:
    """The mixed-batch step from the model's own quantities (each ``(C, 1)`` or ``(1, 1)``)."""
    bw = v["decode_bytes_per_step"] / v["decode_step_time_bound"]           # B/s the replica reads
    r0 = v["weight_memory"] / bw
    per_token = v["prefill_time_bound"] / (v["max_prompt_tokens"] * v["prefill_batch"])   # s per token computed
    out = v["avg_output_tokens"]
    kv_read = out * v["avg_cached_tokens"] * v["kv_bytes_per_token"] / bw
    a = kv_read + (v["avg_prompt_tokens"] + out) * per_token
    target = np.minimum(tpot_slo, (e2e_slo - v["ttft_bound"]) / out)
    kv_cap = v["max_concurrency_avg"] / (out * target)
    shape = np.broadcast_shapes(*(np.shape(x) for x in (r0, a, target, kv_cap)))
    return Step(*(np.broadcast_to(x, shape) for x in (r0, a, target, kv_cap, kv_read)))


def ratio(v: dict[str, np.ndarray], ref: int, decode: bool) -> np.ndarray:
    """The bound ratio of every candidate to candidate ``ref``: decode-bound, bandwidth × GPUs per
    step bytes; prefill-bound, tensor FLOP/s × GPUs."""
    if decode:
        speed = v["hbm_bandwidth"] * v["gpus_per_replica"] * v["hbm_efficiency"] / v["decode_bytes_per_step"]
    else:
        speed = v["bf16_peak_flops"] * v["gpus_per_replica"] * v["tensor_efficiency"]
    speed = np.broadcast_to(speed, np.broadcast_shapes(*(np.shape(v[n]) for n in READS)))
    return speed / speed[ref]
