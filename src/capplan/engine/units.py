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
from functools import lru_cache

import pint

from capplan.errors import CapplanError
from capplan.resources import model_dir

ureg = pint.UnitRegistry(str(model_dir() / "units.txt"), autoconvert_offset_to_baseunit=False)

Dimensions = pint.util.UnitsContainer
DIMENSIONLESS = Dimensions()

_NUMBER = re.compile(r"^\s*[-+]?(\d[\d_,]*\.?\d*|\.\d+)([eE][-+]?\d+)?")


@lru_cache(maxsize=None)
def unit(text: str) -> pint.Unit:
    """The pint unit for a display-unit string ('' is dimensionless)."""
    if not text:
        return ureg.dimensionless
    try:
        return ureg.parse_units(text)
    except (pint.errors.UndefinedUnitError, pint.errors.DefinitionSyntaxError, ValueError,
            AttributeError, TypeError) as err:
        raise CapplanError(f"unknown unit '{text}' ({err})") from None


@lru_cache(maxsize=None)
def dimensions(text: str) -> Dimensions:
    """The dimensions of a unit string, e.g. 'GiB' -> [information]."""
    return ureg.get_dimensionality(unit(text))


@lru_cache(maxsize=None)
def factor(text: str) -> float:
    """How many base units one display unit holds (GiB -> 1073741824)."""
    return float(ureg.Quantity(1.0, unit(text)).to_base_units().magnitude)


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


def parse_value(raw: object, unit_text: str) -> float:
    """A plan value (``60 req/s``, ``0.7``, ``1 s``) as a float in base units.

    A bare number is read in the quantity's display unit. A value with a unit
    must have the quantity's dimensions: ``80 GB/s`` for a memory size is an
    error that names both dimensions.
    """
    if isinstance(raw, bool):
        raise CapplanError(f"expected a number in {unit_text or 'no unit'}, got {raw!r}")
    if isinstance(raw, (int, float)):
        value = float(raw)
        if not math.isfinite(value):
            raise CapplanError(f"expected a finite number, got {raw!r}")
        return from_display(value, unit_text)
    if not isinstance(raw, str):
        raise CapplanError(f"expected a number with a unit such as '{_example(unit_text)}', got {raw!r}")
    text = raw.strip().replace(",", "")
    match = _NUMBER.match(text)
    if not match:
        raise CapplanError(f"expected a number with a unit such as '{_example(unit_text)}', got '{raw}'")
    magnitude = float(match.group(0).replace("_", ""))
    rest = text[match.end():].strip()
    if not rest:
        return from_display(magnitude, unit_text)
    given = unit(rest)
    want = dimensions(unit_text)
    got = ureg.get_dimensionality(given)
    if got != want:
        raise CapplanError(
            f"'{raw}' has dimensions {describe(got)}, but this value needs {describe(want)}"
            f" (e.g. '{_example(unit_text)}')")
    return float(ureg.Quantity(magnitude, given).to_base_units().magnitude)


def _example(unit_text: str) -> str:
    return f"1 {unit_text}" if unit_text else "0.5"
