"""The engine's and the simulation's worst inputs (docs/limits.md, "The engine").

Each case edits the main reference plan the way an untrusted pull request might:
a tiny ``rho_target`` (60 million replicas), a ``rho_target`` range reaching 0.001,
500 classes each with a ranged weight, 500 deployments each with a ranged price, ten
million draws, and the most draws the main plan is allowed.
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


def _wide_rho(folder: Path) -> Path:
    return _edited(folder, RHO, "rho_target: {value: 0.7, range: 0.001 to 0.9, source: SRE headroom policy}")


def _wide_rho_simulate(folder: Path) -> list[str]:
    _wide_rho(folder)
    return ["simulate", "plans/plan.yaml"]


def _wide_rho_build(folder: Path) -> list[str]:
    _wide_rho(folder)
    return ["build", "plans/plan.yaml"]


def _ranged_classes(folder: Path) -> list[str]:
    """500 classes, each weight ranged (0.001 to 0.003 around 0.002), drawn to sum to 1."""
    text = (ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml").read_text(encoding="utf-8")
    start, end = text.index("      - {name: short-chat,"), text.index("  load_sweep:")
    rows = "".join(f"      - {{name: c{i}, weight: {{value: 0.002, range: 0.001 to 0.003}}, prompt_tokens: {32 + i}, "
                   f"output_tokens: 64}}\n" for i in range(500))
    text = text[:start] + rows + text[end:]
    (folder / "plans").mkdir(exist_ok=True)
    (folder / "plans" / "plan.yaml").write_text(text[:text.index("\nscenarios:")] + "\n", encoding="utf-8")
    return ["simulate", "plans/plan.yaml"]


def _ranged_deployments(folder: Path) -> list[str]:
    """500 deployments, each price ranged: 3,500 per-row key results, refused at 100,000 draws."""
    text = (ROOT / "plans" / "llama3-8b-a100-chat-mix.yaml").read_text(encoding="utf-8")
    start, end = text.index("      - {name: aws-p4de.24xlarge"), text.index("\nscenarios:")
    rows = "".join(f"      - {{name: d{i}, gpus_per_node: 8, node_hourly_cost: {{value: 40 USD/h, range: 30 to 50 USD/h}}}}\n"
                   for i in range(500))
    (folder / "plans").mkdir(exist_ok=True)
    (folder / "plans" / "plan.yaml").write_text(text[:start] + rows, encoding="utf-8")
    return ["simulate", "plans/plan.yaml"]


def _ten_million(folder: Path) -> list[str]:
    _edited(folder, RHO, RHO)
    return ["simulate", "plans/plan.yaml", "--samples", "10000000"]


def _most_draws(folder: Path) -> list[str]:
    """The largest --samples the main plan is allowed (the refusal of 10^7 names it)."""
    _edited(folder, RHO, RHO)
    return ["simulate", "plans/plan.yaml", "--samples", "1118481"]


CASES = [
    Case("engine: eval, rho_target 1e-7 (60 million replicas)", _tiny_rho, budget_s=10, budget_mib=500),
    Case("engine: simulate, rho_target range 0.001 to 0.9", _wide_rho_simulate, budget_s=30, budget_mib=1024),
    Case("engine: build, rho_target range 0.001 to 0.9", _wide_rho_build, budget_s=30, budget_mib=1024),
    Case("engine: simulate, 500 classes with ranged weights", _ranged_classes, budget_s=60, budget_mib=1024),
    Case("engine: simulate, 500 deployments with ranged prices (refused)", _ranged_deployments, budget_s=10,
         budget_mib=500),
    Case("engine: simulate --samples 10^7", _ten_million, budget_s=10, budget_mib=500),
    Case("engine: simulate --samples 1,118,481 (the most allowed)", _most_draws, budget_s=60, budget_mib=1024),
]
