"""How fast capplan refuses the worst hostile plans (each must take under 1 s).

    python benchmarks/bench_hostile.py [--runs 3] [--loader libyaml|python] [--baseline SRC]

Each case is a plan file written to a scratch folder and refused by
``capplan eval`` in a child process, which first evaluates a valid plan (to
pay the imports and the standard model), then times the hostile one and
reports how much its peak resident memory grew. The child runs under a 2 GiB address-space limit and a
timeout, so a case that would hang or swell is reported, not suffered.
``--loader python`` forces the pure-Python YAML fallback; ``--baseline SRC``
adds a column for another checkout's ``src`` (e.g. the main branch before
this work) to show what the same files did there.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 10.0          # seconds before a child counts as hung
MEMORY = 2 * 2 ** 30    # address-space limit of a child

PLAN = """gpu: a100-sxm4-80gb
model: llama-3-8b
inputs:
  peak_arrival_rate: {rate}
  peak_to_average_ratio: 3
  ttft_p95_slo: 1 s
  tpot_p95_slo: 25 ms
  e2e_p99_slo: 5 s
  rho_target: {rho}
tables:
  classes: {{rows: [{{name: chat, weight: 1, prompt_tokens: 32, output_tokens: 64}}]}}
  load_sweep: {{rows: [{{arrival_rate: 2, ttft_p95: 85, tpot_p95: 12.1, e2e_p99: 1.82}}]}}
  deployments: {{rows: [{{name: node8, gpus_per_node: 8, node_hourly_cost: 40 USD/h}}]}}
"""


def plan(rate: str = "60 req/s", rho: str = "0.7", extra: str = "") -> str:
    return PLAN.format(rate=rate, rho=rho) + extra


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """``notes:`` holding the "billion laughs": level i repeats level i-1 ``width`` times."""
    lines = [f"  l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "notes:\n" + "\n".join(lines) + "\n"


CASES = {
    "alias bomb (9 levels of 9 aliases)": lambda: plan() + alias_bomb(),
    "5,000-deep flow nesting": lambda: plan() + "notes: " + "[" * 5000 + "]" * 5000 + "\n",
    "5,000-deep mapping nesting": lambda: plan() + "notes: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
    "exponent bomb req/s**10**10**10": lambda: plan(rate="60 req/s**10**10**10"),
    "exponent bomb s^9^9^9": lambda: plan(rate="60 s^9^9^9"),
    "1,500 chained factors": lambda: plan(rate="60 req/s" + "*s/s" * 1500),
    "3,000 nested parentheses": lambda: plan(rate="60 req/" + "(" * 3000 + "s" + ")" * 3000),
    "5,000-digit integer": lambda: plan(rate="9" * 5000),
    "4 MiB of values": lambda: plan() + "notes: [" + "1," * (2 * 2 ** 20 - 400) + "1]\n",
    "tiny rate, ceil() explodes": lambda: plan(rho="1e-300"),
}

CHILD = """
import io, json, os, resource, sys, time, contextlib
import yaml
if os.environ.get("LOADER") == "python":
    from capplan.language import yamlfile
    yamlfile._LOADER = yaml.SafeLoader
from capplan.cli import main
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    main(["eval", sys.argv[2]])     # warm-up on a valid plan: the lazy imports and the standard model
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
err = io.StringIO()
start = time.perf_counter()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(["eval", sys.argv[1]])
elapsed = time.perf_counter() - start
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"code": code, "seconds": elapsed, "kib": grown, "message": err.getvalue().strip()}))
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def refuse(path: Path, src: Path, loader: str) -> dict:
    env = {"PYTHONPATH": str(src), "LOADER": loader, "PATH": "/usr/bin:/bin"}
    valid = path.with_name("valid.yaml")
    valid.write_text(plan(), encoding="utf-8")
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(valid)], capture_output=True, text=True,
                              check=False, timeout=TIMEOUT, preexec_fn=_limit, env=env, cwd=path.parent.parent)
    except subprocess.TimeoutExpired:
        return {"code": "hang", "seconds": TIMEOUT, "kib": 0, "message": f"no answer within {TIMEOUT:.0f} s"}
    if proc.returncode != 0 or not proc.stdout.strip():
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"code": "crash", "seconds": 0.0, "kib": 0, "message": last}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(path: Path, src: Path, loader: str, runs: int) -> dict:
    results = [refuse(path, src, loader) for _ in range(runs)]
    best = dict(results[0])
    best["seconds"] = statistics.median(r["seconds"] for r in results)
    best["kib"] = max(r["kib"] for r in results)
    return best


def cell(result: dict) -> str:
    if result["code"] in ("hang", "crash"):
        return f"{result['code']} ({result['message'][:40]})"
    return f"{result['seconds'] * 1000:,.0f} ms, +{result['kib'] / 1024:,.0f} MiB, exit {result['code']}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loader", choices=("libyaml", "python"), default="libyaml")
    parser.add_argument("--baseline", type=Path, help="another checkout's src/ to compare with")
    args = parser.parse_args()
    slow = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "plans"
        folder.mkdir()
        header = f"| hostile plan | refused in (median of {args.runs}), memory growth, exit |"
        if args.baseline:
            header += f" {args.baseline} |"
        print(header)
        print("| --- | --- |" + (" --- |" if args.baseline else ""))
        for name, make in CASES.items():
            path = folder / "hostile.yaml"
            path.write_text(make(), encoding="utf-8")
            now = measure(path, ROOT / "src", args.loader, args.runs)
            row = f"| {name} | {cell(now)} |"
            if args.baseline:
                row += f" {cell(measure(path, args.baseline, args.loader, 1))} |"
            print(row, flush=True)
            if now["code"] != 1 or now["seconds"] >= 1.0:
                slow.append(name)
            print(f"|   ↳ | `{now['message'][:150]}` |" + (" |" if args.baseline else ""))
    if slow:
        print(f"\nnot refused within 1 s: {', '.join(slow)}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
