"""Run one worst-case input as a user would (the whole ``capplan`` command in a child
process) and measure it: wall time, CPU time and peak resident memory.

A case is ``Case(name, setup, budget_s, budget_mib)``: ``setup(folder)`` writes the
case's files into a scratch folder and returns the command line (after ``capplan``)
to run there. The child runs under an address-space limit a little above the
budget and a timeout of twice the time budget, so a case that would hang or swell
is reported as over budget, not suffered.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Case:
    name: str
    setup: Callable[[Path], list[str]]     # writes the files, returns capplan's arguments
    budget_s: float                         # wall time on the 2-core machine
    budget_mib: float                       # peak resident memory of the command


@dataclass(frozen=True)
class Measured:
    case: Case
    seconds: float
    cpu_seconds: float
    peak_mib: float
    exit_code: int | None                   # None: killed at the timeout
    said: str                               # the last line of stderr (or stdout)

    @property
    def within(self) -> bool:
        return (self.exit_code in (0, 1) and self.seconds <= self.case.budget_s
                and self.peak_mib <= self.case.budget_mib)


def _limits(memory: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return apply


def measure(case: Case) -> Measured:
    """The case run once in a fresh child (peak memory is the child's alone: each case
    runs through a separate ``python -c`` wrapper whose own children are counted)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        args = case.setup(folder)
        address_space = int((case.budget_mib + 1024) * 2 ** 20)   # Python and numpy map more than they touch
        wrapper = ("import resource, subprocess, sys, time\n"
                   "t = time.perf_counter()\n"
                   "p = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True, "
                   "errors='replace')\n"
                   "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
                   "said = (p.stderr.strip() or p.stdout.strip()).splitlines()\n"
                   "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024, p.returncode)\n"
                   "print(said[-1][:300] if said else '')\n")
        command = [sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                   "from capplan.cli import main; sys.exit(main())" % str(SRC), *args]
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", wrapper, str(folder), *command], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, preexec_fn=_limits(address_space),
                                 start_new_session=True)
        try:
            stdout, stderr = child.communicate(timeout=2 * case.budget_s + 5)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)        # the wrapper and capplan under it
            child.communicate()
            return Measured(case, time.perf_counter() - start, float("nan"), float("nan"), None, "timed out")
        done = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
        lines = done.stdout.splitlines()
        if len(lines) < 1 or len(lines[0].split()) != 4:
            return Measured(case, time.perf_counter() - start, float("nan"), float("nan"), done.returncode,
                            done.stderr.strip()[-300:])
        seconds, cpu, peak, code = lines[0].split()
        return Measured(case, float(seconds), float(cpu), float(peak), int(code), lines[1] if len(lines) > 1 else "")


def table(results: list[Measured]) -> str:
    """A Markdown table of the measurements against their budgets."""
    rows = ["| case | exit | time s (budget) | CPU s | peak MiB (budget) | within | said |",
            "| --- | ---: | ---: | ---: | ---: | :---: | --- |"]
    for m in results:
        said = m.said.replace("|", "\\|")[:120]
        rows.append(f"| {m.case.name} | {m.exit_code} | {m.seconds:.2f} ({m.case.budget_s:g}) | {m.cpu_seconds:.2f} "
                    f"| {m.peak_mib:.0f} ({m.case.budget_mib:g}) | {'yes' if m.within else '**no**'} | {said} |")
    return "\n".join(rows)
