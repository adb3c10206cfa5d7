"""The engine's and the simulation's worst inputs (docs/limits.md, "The engine").

Each case edits the main reference plan the way an untrusted pull request might:
a tiny ``rho_target`` (60 million replicas), a ``rho_target`` range reaching 0.001,
500 classes each with a ranged weight, and ten million draws.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.worst.harness import Case

ROOT = Path(__file__).resolve().parents[2]
RHO = "rho_target: {value: 0.70, source: SRE headroom policy}"


def _edited(folder: Path, old: str, new: str) -> Path:
    text = (ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml").read_text(encoding="utf-8")
    assert old in text, old
    (folder / "plans").mkdir(exist_ok=True)
    path = folder / "plans" / "plan.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _tiny_rho(folder: Path) -> list[str]:
    _edited(folder, RHO, "rho_target: {value: 0.0000001, source: SRE headroom policy}")
    return ["eval", "plans/plan.yaml"]


CASES = [
    Case("engine: eval, rho_target 1e-7 (60 million replicas)", _tiny_rho, budget_s=10, budget_mib=500),
]
