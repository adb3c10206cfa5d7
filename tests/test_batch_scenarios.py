"""Scenarios that share a graph are evaluated as one batch (engine.evaluate._batched), and each
one's Evaluation is the one evaluate() makes alone: the same values to the bit, the same types,
the same errors in the same order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from capplan.analysis.pipeline import load_plan
from capplan.engine import evaluate as ev
from capplan.errors import CapplanError
from capplan.language.model import standard_model

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml"


def _one_by_one(plan, model):
    model = model.with_slos(plan.slos)
    nominal = ev.evaluate(plan, plan.nominal, model)
    return [nominal] + [ev.evaluate(plan, s, model, nominal) for s in plan.scenarios[1:]]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


def _generated(tmp_path: Path, extra: dict | None = None) -> Path:
    """The main plan with 60 generated scenarios: rates, an SLO and a table cell, each moved."""
    data = yaml.safe_load(MAIN.read_text(encoding="utf-8"))
    data.pop("expect", None)
    for i in range(20):
        data["scenarios"][f"rate_{i}"] = {"set": {"peak_arrival_rate": f"{30 + 7 * i} req/s"}}
        data["scenarios"][f"slo_{i}"] = {"set": {"ttft_p95_slo": f"{420 + 15 * i} ms"}}
        data["scenarios"][f"cell_{i}"] = {"set": {"classes[summarization].prompt_tokens": 300 + 24 * i}}
    data["scenarios"].update(extra or {})
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("path", [MAIN, ROOT / "plans" / "llama3-8b-a100-diurnal.yaml", "generated"],
                         ids=["main", "diurnal", "generated"])
def test_a_batch_member_is_the_scenario_evaluated_alone(path, tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "BATCH_FROM", 1)            # the reference plans' few scenarios batched too
    model = standard_model()
    plan = load_plan(_generated(tmp_path) if path == "generated" else path, model)
    batched = ev._batched(plan, plan.scenarios[1:], model.with_slos(plan.slos),
                          ev.evaluate(plan, plan.nominal, model.with_slos(plan.slos)))
    assert len(batched) >= len(plan.scenarios) - 2         # all but a pinned one or so
    together, alone = ev.evaluate_all(plan, model), _one_by_one(plan, model)
    for a, b in zip(together, alone, strict=True):
        assert a.values.keys() == b.values.keys() and a.inputs == b.inputs and a.provenance == b.provenance
        assert a.graph is b.graph and a.scenario is b.scenario
        different = [n for n in b.values if not _same(a.values[n], b.values[n])]
        assert not different, (a.scenario.name, different)


def test_a_failing_member_is_reported_as_when_alone(tmp_path, monkeypatch):
    """Members the scalar evaluation would stop at are left to it: the first in plan order raises
    its own message; the members before and after it came from the batch."""
    path = _generated(tmp_path, {"too_strict": {"set": {"ttft_p95_slo": "50 ms"}},
                                 "later_too": {"set": {"ttft_p95_slo": "40 ms"}}})
    model = standard_model()
    plan = load_plan(path, model)
    with pytest.raises(CapplanError) as alone:
        _one_by_one(plan, model)
    assert "no load_sweep row meets every SLO" in alone.value.message
    calls = []
    real = ev.evaluate
    monkeypatch.setattr(ev, "evaluate", lambda plan, s, *args: calls.append(s.name) or real(plan, s, *args))
    with pytest.raises(CapplanError) as together:
        ev.evaluate_all(plan, model)
    assert str(together.value) == str(alone.value) and "too_strict" in together.value.message
    assert calls[0] == "nominal" and calls[-1] == "too_strict"
    assert set(calls[1:-1]) <= {"context_x2", "ttft_400ms"}     # pins: graphs of their own, one scenario each
    # the 60 generated scenarios came from the batch


def test_a_large_group_is_evaluated_in_chunks(tmp_path, monkeypatch):
    """A batch holds at most BATCH_CELLS table cells per column: 63 scenarios of 12 rows with
    room for 100 cells go in chunks of 16 (the fewest a batch takes), with the same values."""
    monkeypatch.setattr(ev, "BATCH_CELLS", 100)
    sizes = []
    real = ev._batch
    monkeypatch.setattr(ev, "_batch", lambda plan, batch, *args: sizes.append(len(batch)) or real(plan, batch, *args))
    model = standard_model()
    plan = load_plan(_generated(tmp_path), model)
    together, alone = ev.evaluate_all(plan, model), _one_by_one(plan, model)
    assert sizes == [16, 16, 16, 15]        # the 60 and the plan's 3 scenarios without a pin
    for a, b in zip(together, alone, strict=True):
        assert all(_same(a.values[n], b.values[n]) for n in b.values)
