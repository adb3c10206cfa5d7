"""Domains: the values an input can take, declared once in the model.

``gpu_memory_utilization: 1.5`` is a typo no formula catches: the engine
would happily report a larger KV pool. So every input quantity and every
input column of ``model/quantities.yaml`` says which values it can take and,
in a few words, why::

    domain: {range: "(0, 1]", why: the engine cannot use more than the whole GPU}
    domain: {range: positive, integer: true, why: a model has whole layers}
    domain: {range: "(0, 31] day", why: a calendar month has at most 31 days}

``range`` is ``positive``, ``non-negative`` or an interval with round
brackets for open and square brackets for closed ends (``inf`` for no upper
bound). The bounds are in the quantity's **display unit**; a quantity with a
unit whose interval has a bound other than 0 or inf must write that unit
after the interval, so that changing ``unit:`` cannot silently re-scale the
bounds. ``integer: true`` marks a count (layers, replicas, GPUs).

One declaration drives four checks, so they cannot drift apart: the plan
loader (:func:`require`, on every route a value takes), the JSON Schema
(:meth:`Domain.json_schema`), the Excel data validation on each input cell
(:meth:`Domain.excel`) and the words of every message (:meth:`Domain.words`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from capplan.language import units
from capplan.errors import CapplanError

FIELDS = ("range", "integer", "why")
WORDS = {"positive": (0.0, True), "non-negative": (0.0, False)}     # name -> (lower bound, open)
WHY_LIMIT = 150     # Excel keeps 255 characters of an error message: name + range + why must fit
_BOUND = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)\s*"
_INTERVAL = re.compile(rf"^\s*([\[(]){_BOUND},{_BOUND}([\])])\s*(.*?)\s*$")


@dataclass(frozen=True)
class Domain:
    """An interval of the real line (maybe only its whole numbers), in a display unit."""

    low: float
    high: float
    low_open: bool
    high_open: bool
    integer: bool
    why: str
    text: str            # the range as declared: 'positive', '(0, 1]', '(0, 31] day'
    unit: str = ""       # the display unit the bounds are written in ('' when they need none)

    def contains(self, value: float) -> bool:
        """Whether a display-unit value lies in the domain."""
        if math.isnan(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below and not (self.integer and not _is_whole(value))

    def words(self) -> str:
        """'in (0, 1]', 'at least 1', 'positive', 'a positive whole number', 'a whole number in [1, 8]'."""
        if self.text in WORDS:
            return f"a {self.text} whole number" if self.integer else self.text
        if math.isinf(self.high):
            bound = f"{'greater than' if self.low_open else 'at least'} {_text_number(self.low)} {self.unit}"
        elif math.isinf(self.low):
            bound = f"{'less than' if self.high_open else 'at most'} {_text_number(self.high)} {self.unit}"
        else:
            bound = f"in {self.text}"
        return f"a whole number {bound.strip()}" if self.integer else bound.strip()

    def sentence(self, name: str) -> str:
        return f"{name} must be {self.words()}: {self.why}"

    def json_schema(self) -> dict:
        """JSON-Schema keywords for the number form of a value (a keyword such
        as ``minimum`` ignores strings, so a value with a unit passes through
        to the loader; ``multipleOf: 1`` rather than ``type: integer`` for the same reason)."""
        out: dict = {}
        if math.isfinite(self.low):
            out["exclusiveMinimum" if self.low_open else "minimum"] = _json_number(self.low)
        if math.isfinite(self.high):
            out["exclusiveMaximum" if self.high_open else "maximum"] = _json_number(self.high)
        if self.integer:
            out["multipleOf"] = 1
        return out

    def excel(self, cell: str) -> dict:
        """An Excel data-validation rule for a cell (its top-left cell ``cell``):
        'whole' or 'decimal' with an operator where Excel's inclusive
        operators say it exactly, else a 'custom' formula over the cell."""
        kind = "whole" if self.integer else "decimal"
        low, high = math.isfinite(self.low), math.isfinite(self.high)
        if low and high and not (self.low_open or self.high_open):
            return {"type": kind, "operator": "between",
                    "formula1": _excel_number(self.low), "formula2": _excel_number(self.high)}
        if low and not high:
            return {"type": kind, "operator": "greaterThan" if self.low_open else "greaterThanOrEqual",
                    "formula1": _excel_number(self.low)}
        if high and not low:
            return {"type": kind, "operator": "lessThan" if self.high_open else "lessThanOrEqual",
                    "formula1": _excel_number(self.high)}
        tests = [f"ISNUMBER({cell})"]
        if low:
            tests.append(f"{cell}{'>' if self.low_open else '>='}{_excel_number(self.low)}")
        if high:
            tests.append(f"{cell}{'<' if self.high_open else '<='}{_excel_number(self.high)}")
        if self.integer:
            tests.append(f"{cell}=INT({cell})")
        return {"type": "custom", "formula1": f"AND({','.join(tests)})"}


def parse(spec, unit: str) -> Domain:
    """A ``domain:`` declaration of a quantity displayed in ``unit``."""
    if not isinstance(spec, dict):
        raise CapplanError("domain must be a mapping {range: ..., integer: true|false, why: ...}, "
                           f"got {spec!r}")
    unknown = sorted(str(k) for k in spec if k not in FIELDS)
    if unknown:
        raise CapplanError(f"unknown domain field(s) {', '.join(unknown)} (fields: {', '.join(FIELDS)})")
    why = spec.get("why")
    if not isinstance(why, str) or not why.strip():
        raise CapplanError("domain needs 'why:', a few words saying why values outside it are impossible")
    why = " ".join(why.split())
    if len(why) > WHY_LIMIT:
        raise CapplanError(f"domain 'why:' is {len(why)} characters; keep it under {WHY_LIMIT} "
                           "(the workbook shows it in its 255-character error message)")
    integer = spec.get("integer", False)
    if not isinstance(integer, bool):
        raise CapplanError(f"domain 'integer:' must be true or false, got {integer!r}")
    text = spec.get("range")
    if not isinstance(text, str):
        raise CapplanError(f"domain needs 'range:' (positive, non-negative or an interval such as "
                           f"\"(0, 1]\"), got {text!r}")
    text = " ".join(text.split())
    if text in WORDS:
        low, low_open = WORDS[text]
        return Domain(low, math.inf, low_open, True, integer, why, text)
    return _interval(text, unit, integer, why)


def _interval(text: str, unit: str, integer: bool, why: str) -> Domain:
    match = _INTERVAL.match(text)
    if not match:
        raise CapplanError(f"domain range '{text}' is not positive, non-negative or an interval "
                           "such as \"(0, 1]\", \"[1, inf)\" or \"(0, 31] day\"")
    opening, low_text, high_text, closing, bound_unit = match.groups()
    low, high = float(low_text), float(high_text)
    low_open, high_open = opening == "(", closing == ")"
    if (math.isinf(low) and not low_open) or (math.isinf(high) and not high_open):
        raise CapplanError(f"domain range '{text}': an infinite end is open, '(' or ')'")
    if not low < high:
        raise CapplanError(f"domain range '{text}' is empty or a single point: the lower end must be below the upper")
    if bound_unit and bound_unit != unit:
        raise CapplanError(f"domain range '{text}' is written in '{bound_unit}'; write it in the quantity's "
                           f"display unit, '{unit}'" if unit else
                           f"domain range '{text}' names a unit, but the quantity has none")
    if unit and not bound_unit and any(math.isfinite(b) and b != 0 for b in (low, high)):
        raise CapplanError(f"domain range '{text}' must name its unit, the quantity's display unit: "
                           f"\"{text} {unit}\"")
    canonical = f"{opening}{_text_number(low)}, {_text_number(high)}{closing}" + (f" {unit}" if bound_unit else "")
    return Domain(low, high, low_open, high_open, integer, why, canonical, bound_unit)


def require(q, base_value: float, raw: object) -> None:
    """Refuse a value (base units, as the plan gave it: ``raw``) outside the
    domain of quantity ``q``; nothing to do for a quantity without one.

    The value is compared in the display unit the domain is written in.
    """
    domain = q.domain
    if domain is None:
        return
    shown = units.to_display(base_value, q.unit)
    if not domain.contains(shown):
        raise CapplanError(f"{domain.sentence(q.name)}; got {_got(raw, shown, q.unit, domain)}")


def _got(raw, shown: float, unit: str, domain: Domain) -> str:
    """The value as written; with its display-unit value when that is what the bounds are in."""
    as_written = raw.strip() if isinstance(raw, str) else _text_number(float(raw))
    in_unit = f"{_text_number(shown)} {unit}".strip()
    if isinstance(raw, str) and domain.unit and as_written != in_unit:
        return f"{as_written} (= {in_unit})"
    return as_written if isinstance(raw, str) or not unit else in_unit


def _is_whole(value: float) -> bool:
    return math.isfinite(value) and abs(value - round(value)) <= 1e-9 * max(1.0, abs(value))


def _text_number(value: float) -> str:
    return f"{value:.12g}".replace("e+", "e")


def _excel_number(value: float) -> str:
    return f"{value:.15g}"


def _json_number(value: float):
    return int(value) if float(value).is_integer() else value
