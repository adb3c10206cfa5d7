"""Labels a finance reader reads: words from the model's description, the symbol beside them.

A quantity's canonical name (``peak_arrival_rate``) is what formulas and defined
names use; a printed sheet leads with words instead — "Peak arrival rate the
fleet must carry (λ_peak)" — made from the model's own description and symbol,
so a new quantity is labelled without anyone writing a label. The words are
the description's first clause (up to the first parenthesis, semicolon, colon
or comma) or, where that runs longer than ``LONGEST`` characters (it would wrap
into a tall row), the name in words; the symbol is its LaTeX spelled in plain
Unicode.
"""

from __future__ import annotations

import re
from functools import cache

GREEK = {"lambda": "λ", "Lambda": "Λ", "eta": "η", "mu": "μ", "rho": "ρ", "Delta": "Δ", "sum": "Σ",
         "sigma": "σ", "alpha": "α", "beta": "β", "gamma": "γ", "tau": "τ"}
ACCENTS = {"bar": "\u0304", "hat": "\u0302"}
_ACCENT = re.compile(r"\\(bar|hat)\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)\s*")
_CLAUSE = re.compile(r" \(|; |: |, ")
LONGEST = 44


@cache
def plain_symbol(latex: str) -> str:
    """``\\lambda_{peak}`` -> ``λ_peak``, ``\\bar{S}_{KV}`` -> ``S̄_KV``, ``TTFT^{p95}_i`` -> ``TTFT^p95_i``."""
    text = _ACCENT.sub(lambda m: m.group(2) + ACCENTS[m.group(1)], latex)
    text = _COMMAND.sub(lambda m: GREEK.get(m.group(1), m.group(1)), text)
    return text.replace("{", "").replace("}", "")


@cache
def words(description: str, fallback: str) -> str:
    """The description's first clause, without a closing full stop; the name in words
    (``fleet_burst_probability`` -> 'Fleet burst probability') where there is none or it is long."""
    first = _CLAUSE.split(description.strip(), maxsplit=1)[0].rstrip(". ")
    if not first or len(first) > LONGEST:
        first = fallback.replace("_", " ")
        first = first[:1].upper() + first[1:]
    return first


def label(q) -> str:
    """'Peak arrival rate the fleet must carry (λ_peak)'; a symbol that only repeats the
    name (a table's key column) is left out."""
    text = words(q.description or "", q.column)
    symbol = plain_symbol(q.symbol or "")
    if not symbol or symbol in (q.name, q.column):
        return text
    return f"{text} ({symbol})"
