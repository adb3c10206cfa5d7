"""Numbers for humans: one rounding rule for the record, the CLI and messages.

* whole numbers: thousands separators (``450,379``);
* money: dollars and cents (``$59,965.44``, ``$40.96/h``, ``$9.36/1M tok``);
* anything else: 4 significant digits, rounded half-up on the decimal text
  (``71.685 -> 71.69``), thousands separators above 1,000, a power of ten
  below 0.0001 (``1.685e-30``) — and, whatever the digits asked for, below
  :data:`TINY`, so a far tail never shows as 0 (``3.317e-250``; the
  workbook's ``0.00E+00``; money keeps its cents). The ``e`` form, not ``3.317 × 10⁻²⁵⁰``: it is the
  same in the record, a chart, a terminal and a spreadsheet, fits a narrow
  table column, and a reader can paste it into a plan;
* pass/fail results: ``PASS`` / ``FAIL``.

Values arrive in their display unit; the unit is shown as a reader writes it.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

UNIT_LABELS = {
    "": "", "token/request": "tokens", "request": "requests", "token": "tokens", "GPU": "GPUs",
    "token/s": "tok/s", "token/s/request": "tok/s per request", "day": "days", "B/token": "B",
}
SINGULAR = {"tokens": "token", "requests": "request", "GPUs": "GPU", "days": "day"}
TINY = 1e-6        # a non-zero number below this shows as a power of ten, in every output
MONEY_UNITS = {"USD": "$", "USD/h": "$/h", "USD/Mtoken": "$/1M tok"}
MONEY_SUFFIX = {"USD": "", "USD/h": "/h", "USD/Mtoken": "/1M tok"}


def unit_label(unit: str) -> str:
    return UNIT_LABELS.get(unit, unit)


def number(value: float, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 10 ** digits:
        return f"{_round(value, 0):,.0f}"
    if 0 < abs(value) < max(10 ** -digits, TINY):       # a far tail probability: 1.685e-30, not 33 decimals
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    exponent = math.floor(math.log10(abs(value)))
    places = max(digits - 1 - exponent, 0)
    rounded = _round(value, places)
    text = f"{rounded:,.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _round(value: float, places: int) -> float:
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP))


def money(value: float, unit: str = "USD") -> str:
    if value is None or math.isnan(value):
        return "–"
    sign = "-" if value < 0 else ""
    return f"{sign}${_round(abs(value), 2):,.2f}{MONEY_SUFFIX.get(unit, ' ' + unit)}"


def quantity(value, unit: str, kind: str = "number") -> str:
    """A value with its unit, as the record shows it."""
    if kind == "bool":
        return "PASS" if value else "FAIL"
    if kind == "text":
        return str(value)
    if kind == "money":
        return money(value, unit)
    label = unit_label(unit)
    text = number(value)
    if not label:
        return text
    if text == "1" and label in SINGULAR:
        label = SINGULAR[label]
    return f"{text} {label}"


def plain(value):
    """A number for JSON and comparisons: 12 significant digits (no float
    noise such as 7.000000000000001 in a diff), whole numbers as ints, NaN as
    null."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        value = float(f"{value:.12g}")
        if value.is_integer() and abs(value) < 2 ** 53:
            return int(value)
    return value


def key_text(value) -> str:
    """A table row's key as a name: text as is, a number (a swept rate) as ``10`` or ``2.5``."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def and_list(items) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = [str(i) for i in items]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)
