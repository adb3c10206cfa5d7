"""Where a candidate's λ* comes from, and the band each provenance carries.

Four provenances, each shown next to the candidate's cost:

- ``measured``: the plan's own sweep, when the candidate is the plan's GPU, GPUs
  per replica, weights and KV dtype, or a benchmark file under ``candidates:
  evidence:`` of the candidate's configuration (or a λ* a candidate's ``set:``
  gives: ``given``); ``estimated`` with the tool's name when that file is a
  performance model's estimate file (:mod:`capplan.analysis.candidate_sweeps`);
- ``transferred``: the measured λ* times the ratio of the bound that limits it,
  the model's ``transferred_max_rate`` (its estimate group: decode speed where
  reading bounds the measured configuration at its λ*, tensor throughput where
  computing does). A transfer keeps what the bound ignores (communication,
  kernels) in the same proportion, so it carries a band of
  ±:data:`TRANSFER_BAND`, which the simulation draws from: the band that holds 75 % of the
  calibration set's 76 transfers between rows of one model, engine, source and lengths (another
  GPU, TP or format; ``benchmarks/bench_calibration.py --fit``: median factor off 1.42, 39 of 76
  inside ±0.35, the band first assumed). Every pair is TensorRT-LLM's, scaled by the prefill or
  the decode-step bound as the reference's own limit says;
- ``estimated``: no measurement to scale, so the model's ``estimated_max_rate``:
  Little's law and a **mixed-batch** decode step at the serving engine's step factor,
  ``t = f·R₀ / (1 − λ·f·a)``, whose highest rate meeting the SLOs' step target lies within
  the KV pool (``capplan explain PLAN estimated_max_rate`` shows the derivation). Its band is
  the model's ``estimate_band`` on both sides, the prediction's error on the published
  measurements of ``../shared/calibration`` (docs/calibration.md).

A λ* read from a performance model's estimate file (``candidates: evidence:``,
NVIDIA aiconfigurator's predictions) carries the tool's band measured on the
engine whose database it ran: ``tool_band`` in model/catalog/engines.yaml, the
smallest band holding 75 % of its predictions of the calibration set
(``benchmarks/bench_calibration.py --tool aiconfigurator``, docs/calibration.md;
:func:`capplan.loading.sweeps.estimate.tool_band`). A tool or engine capplan has
not measured keeps ±:data:`TOOL_BAND`, stated, not fitted: the tool's own users
report predictions 1.3 to 4.6 times above their benchmarks (ai-dynamo/aiconfigurator
#1396: 883.7 predicted against 192.4 tok/s/GPU measured).
"""

from __future__ import annotations

TRANSFER_BAND = 0.55      # ± share of a transferred λ*: holds 75 % of the calibration set's 76 transfers
TOOL_BAND = 0.75          # ± share of the λ* of a tool or engine whose error is not measured: see the module docstring

MEASURED, TRANSFERRED, ESTIMATED, GIVEN = "measured", "transferred", "estimated", "given"
