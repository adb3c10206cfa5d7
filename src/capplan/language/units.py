"""Units: one pint registry, built from ``model/units.txt``.

Values travel through the engine as plain floats in *base units* (second,
byte, token, request, GPU, FLOP, USD). A quantity's display unit (GiB, ms,
USD/h, …) only matters at the edges: when a plan gives a value and when a
result is shown. This module is those edges plus the dimension algebra the
unit checker uses.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import pint

from capplan.language import unitsyntax
from capplan.errors import CapplanError
from capplan.resources import model_dir

ureg = pint.UnitRegistry(str(model_dir() / "units.txt"), autoconvert_offset_to_baseunit=False)

Dimensions = pint.util.UnitsContainer
DIMENSIONLESS = Dimensions()

# A written number: digits with optional thousands commas (1,000) or underscores,
# a decimal point, an exponent. ASCII only: float() would also take Arabic-Indic digits.
_NUMBER = re.compile(r"\s*([-+]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9][0-9_]*)(?:\.([0-9]*))?|[-+]?\.([0-9]+))"
                     r"(?:[eE]([-+]?[0-9]+))?")
# The largest magnitude a value may have in its display unit: beyond 2**53 a
# float no longer holds every whole number, so counts and cents would drift.
LIMIT = 2 ** 53
_MAX_EXPONENT_DIGITS = 3


@lru_cache(maxsize=4096)
def unit(text: str) -> pint.Unit:
    """The pint unit for a unit string ('' is dimensionless).

    The text is read by :mod:`capplan.language.unitsyntax`; pint only looks up
    each unit name (with its prefix: ``GiB`` is gibi + byte), so no text a
    plan writes is evaluated.
    """
    if not text:
        return ureg.dimensionless
    powers: dict[str, int] = {}
    for name, power in unitsyntax.parse(text).items():
        try:
            canonical = ureg.get_name(name)
        except pint.errors.UndefinedUnitError:
            raise CapplanError(f"unknown unit '{text}' ('{name}' is not a unit capplan knows)") from None
        powers[canonical] = powers.get(canonical, 0) + power
    return ureg.Unit(pint.util.UnitsContainer({n: p for n, p in powers.items() if p}))


@lru_cache(maxsize=4096)
def dimensions(text: str) -> Dimensions:
    """The dimensions of a unit string, e.g. 'GiB' -> [information]."""
    return ureg.get_dimensionality(unit(text))


@lru_cache(maxsize=4096)
def factor(text: str) -> float:
    """How many base units one display unit holds (GiB -> 1073741824)."""
    return float(ureg.Quantity(1.0, unit(text)).to_base_units().magnitude)


def exact_ratio(value: float) -> Fraction:
    """The rational a float unit factor stands for (0.001 -> 1/1000, 1/3600 -> 1/3600)."""
    if not math.isfinite(value) or value <= 0:
        raise CapplanError(f"unit factor {value!r} is not a positive number")
    candidates = [Fraction(repr(value)), Fraction(value).limit_denominator(10**12)]
    # a few ulps apart is the same factor: pint versions differ in the last bit of a
    # compound unit's factor (USD/kWh is 2.7777777777777776e-07 in one, 2.777777777777778e-07 in another)
    exact = [c for c in candidates if abs(float(c) - value) <= 4 * math.ulp(value)]
    return min(exact or candidates[:1], key=lambda f: (f.denominator, f.numerator))


def to_display(base_value: float, unit_text: str) -> float:
    return base_value / factor(unit_text)


def from_display(value: float, unit_text: str) -> float:
    return value * factor(unit_text)


def describe(dims: Dimensions) -> str:
    """Dimensions as a reader writes them: '[information] / [token]'."""
    if dims == DIMENSIONLESS:
        return "dimensionless"
    up = [f"{d}" + (f"^{p:g}" if p != 1 else "") for d, p in sorted(dims.items()) if p > 0]
    down = [f"{d}" + (f"^{-p:g}" if p != -1 else "") for d, p in sorted(dims.items()) if p < 0]
    text = " * ".join(up) if up else "1"
    if down:
        text += " / " + " / ".join(down)
    return text


@dataclass(frozen=True)
class Written:
    """A value as the plan writes it: ``'10.96 ms'`` -> 10.96, resolution 0.01, unit 'ms'."""

    magnitude: float
    resolution: float       # one unit in the last digit written (0.01 for 10.96, 100 for 1.2e3)
    unit: str               # the unit written after the number ('' for a bare number)


def written(raw: str, unit_text: str) -> Written:
    """Split a written value into its number and its unit text, refusing what is not one."""
    text = raw.strip()
    match = _NUMBER.match(text)
    if not match:
        raise CapplanError(f"expected a number with a unit such as '{_example(unit_text)}', got "
                           f"'{_short(raw)}'{_first_char_hint(text)}")
    exponent_text = match.group(4) or "0"
    decimals = len(match.group(2) or match.group(3) or "")
    resolution = float(f"1e{int(exponent_text) - decimals}") if len(exponent_text) <= _MAX_EXPONENT_DIGITS + 1 else 0.0
    if not 0 < resolution < math.inf:
        raise CapplanError(f"'{_short(raw)}' is out of the range a number may have (its exponent or its decimals)")
    magnitude = float(match.group(1).replace(",", "").replace("_", "") + "e" + exponent_text)
    rest = text[match.end():]
    if rest.startswith(","):
        raise CapplanError(f"'{_short(raw)}': a comma separates thousands (1,000); write decimals with a point (0.5)")
    return Written(_finite(magnitude, raw), resolution, rest.strip())


def parse_value(raw: object, unit_text: str) -> float:
    """A plan value (``60 req/s``, ``0.7``, ``1 s``) as a float in base units.

    A bare number is read in the quantity's display unit. A value with a unit
    must have the quantity's dimensions: ``80 GB/s`` for a memory size is an
    error that names both dimensions. Every value is finite and, in the
    display unit, within ±2**53 (:data:`LIMIT`), so results built from it stay
    exact enough to count GPUs and cents.
    """
    if isinstance(raw, bool):
        raise CapplanError(f"expected a number in {unit_text or 'no unit'}, got {raw!r}")
    if isinstance(raw, (int, float)):
        if isinstance(raw, int) and raw.bit_length() > 64:
            raise CapplanError(f"a whole number of {len(str(raw)):,} digits is beyond ±2^53 "
                               f"({LIMIT:,}), the largest a plan value may be")
        base = from_display(_finite(float(raw), raw), unit_text)
    elif isinstance(raw, str):
        value = written(raw, unit_text)
        if not value.unit:
            base = from_display(value.magnitude, unit_text)
        else:
            given = unit(value.unit)
            want = dimensions(unit_text)
            got = ureg.get_dimensionality(given)
            if got != want:
                raise CapplanError(
                    f"'{raw}' has dimensions {describe(got)}, but this value needs {describe(want)}"
                    f" (e.g. '{_example(unit_text)}')")
            base = value.magnitude * factor(value.unit)
    else:
        raise CapplanError(f"expected a number with a unit such as '{_example(unit_text)}', got {_kind(raw)}")
    shown = to_display(base, unit_text)
    if not math.isfinite(shown):
        raise _overflow(raw)
    if abs(shown) > LIMIT:
        raise CapplanError(f"'{_short(str(raw))}' is {shown:.4g} {unit_text}".rstrip() +
                           f", beyond ±2^53 ({LIMIT:,}), the largest a plan value may be in its unit")
    return base


def _finite(value: float, raw) -> float:
    if not math.isfinite(value):
        if isinstance(raw, float):
            raise CapplanError(f"expected a finite number, got {raw!r}")
        raise _overflow(raw)
    return value


def _overflow(raw) -> CapplanError:
    return CapplanError(f"'{_short(str(raw))}' is too large to hold (it overflows to infinity)")


def _kind(raw) -> str:
    return {dict: "a mapping", list: "a list"}.get(type(raw), f"{raw!r}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _first_char_hint(text: str) -> str:
    """Name a look-alike character a reader cannot see (a Unicode minus, a NUL byte)."""
    char = text.lstrip()[:1]
    if not char or (char.isascii() and char.isprintable()):
        return ""
    return f" (it holds {unitsyntax.describe(char)})"


def _example(unit_text: str) -> str:
    return f"1 {unit_text}" if unit_text else "0.5"
