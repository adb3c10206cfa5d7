"""Uncertain values: a distribution written next to a plan value.

A forecast peak is a guess and a pending measurement is a hope, so any input,
table cell or pin may say how far off it may be, the way Squiggle users write
it::

    peak_arrival_rate: {value: 60 req/s, range: 45 to 80 req/s}
    hbm_efficiency: {value: 0.76, range: 0.6 to 0.85, dist: normal}
    node_hourly_cost: {value: 40.96 USD/h, range: 22.5 to 40.96 USD/h, dist: uniform}

``value`` stays the point the deterministic record, workbook and JSON use,
and it must lie inside its own range (``value: 45 req/s`` beside ``range: 22
to 40 req/s`` is a typo in one of them, and a simulation drawn around the
wrong one misleads); only ``capplan simulate`` (and the record's simulation
section) draws from the distribution. ``range`` is a 90 % interval for
``lognormal`` and ``normal`` and the whole support for ``uniform`` and
``triangular`` (whose mode is ``value``). Without ``dist:`` a quantity that
cannot be 0 or negative (its domain says so) is lognormal, any other normal.
The range is read with the value's unit rules (:mod:`capplan.loading.unitrule`:
a quantity with a scale writes its unit, which the low end may borrow from the
high end; a bare number in a column whose unit the table declares is in that
unit) and both ends must lie in its domain; the sampler
(:mod:`capplan.engine.sampling`) redraws the tails that leave it.
A class ``weight`` with a range is drawn and then divided, with the other
weights, by each draw's sum (:mod:`capplan.engine.montecarlo`), so the
weights of every draw sum to 1 as the plan's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capplan.language import domains, units
from capplan.loading import unitrule
from capplan.errors import CapplanError

KINDS = ("lognormal", "normal", "uniform", "triangular")
FIELDS = ("range", "dist")
_RANGE = re.compile(r"^\s*(.+?)\s+to\s+(.+?)\s*$")


@dataclass(frozen=True)
class Distribution:
    """A distribution in base units: ``low``/``high`` as written (the 90 %
    interval or the support), ``mode`` the plan's point value."""

    kind: str
    low: float
    high: float
    mode: float
    text: str            # 'lognormal, 90 % in 45 to 80 req/s'

    def as_json(self) -> dict:
        return {"dist": self.kind, "text": self.text}


def parse(fields: dict, q, value: float, unit: str | None = None, declared: bool = False) -> Distribution | None:
    """The distribution of an input's mapping (``None`` when it gives no
    ``range:``); ``q`` is the quantity, ``value`` its point in base units,
    ``unit`` the one its bare numbers are in when ``declared`` by the table
    (else the quantity's display unit, and a bare number needs one).
    A CapplanError's ``key`` is the field at fault (``range``, ``dist``)."""
    unit = q.unit if unit is None else unit
    if "range" not in fields:
        if "dist" in fields:
            raise CapplanError("'dist:' needs a 'range:' (e.g. range: 45 to 80 req/s)", key="dist")
        return None
    raw = fields["range"]
    match = _RANGE.match(raw) if isinstance(raw, str) else None
    if match is None:
        raise CapplanError(f"expected 'LOW to HIGH' with a unit, e.g. '{_example(q)}', got {raw!r}", key="range")
    low_text, high_text = match.groups()
    high_unit = units.written(high_text, unit).unit if _starts_number(high_text) else ""
    if high_unit and _starts_number(low_text) and not units.written(low_text, unit).unit:
        low_text = f"{low_text} {high_unit}"            # '45 to 80 req/s': the low end borrows the unit
    try:
        low, high = (units.parse_value(t, unit) for t in (low_text, high_text))
        if not declared and unitrule.needs_unit(unit) and not high_unit:
            raise CapplanError(f"write the unit, e.g. '{low_text} to {high_text} {unit}'")
        for bound, text in ((low, low_text), (high, high_text)):
            domains.require(q, bound, text)
    except CapplanError as err:
        raise CapplanError(err.message, key="range") from None
    kind = fields.get("dist") or _default_kind(q)
    if kind not in KINDS:
        raise CapplanError(f"dist must be one of {', '.join(KINDS)}, got {kind!r}", key="dist")
    if not low < high:
        raise CapplanError(f"the low end {low_text} must be below the high end {high_text}", key="range")
    if kind == "lognormal" and low <= 0:
        raise CapplanError(f"a lognormal range must be positive; {low_text} is not (say dist: normal)", key="range")
    if kind == "triangular" and not low <= value <= high:
        shown = units.to_display(value, unit)
        raise CapplanError(f"a triangular range's mode is the value, and {shown:g} {unit}".rstrip() +
                           f" lies outside {raw}", key="range")
    if not low <= value <= high:
        shown = units.to_display(value, unit)
        raise CapplanError(f"the value {shown:g} {unit}".rstrip() + f" lies outside its own range {raw.strip()} "
                           f"({'the 90 % interval' if kind in ('lognormal', 'normal') else 'the support'} of a "
                           f"{kind}); correct the value or the range", key="range")
    share = "90 % in" if kind in ("lognormal", "normal") else "from"
    return Distribution(kind, low, high, value, f"{kind}, {share} {raw.strip()}")


def _default_kind(q) -> str:
    """Lognormal for a quantity its domain keeps strictly positive, else normal."""
    d = q.domain
    positive = d is not None and (d.low > 0 or (d.low == 0 and d.low_open))
    return "lognormal" if positive else "normal"


def _starts_number(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] in "+-.")


def _example(q) -> str:
    unit = f" {q.unit}" if q.unit else ""
    return f"45 to 80{unit}"
