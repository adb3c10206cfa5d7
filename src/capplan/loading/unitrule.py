"""A plan writes the unit of every value that has a scale to get wrong.

``ttft_p95_slo: 0.8`` meant as seconds was read as 0.8 ms, and nothing said
so until the sweep failed everywhere. So a bare number is refused for a
quantity whose unit has a scale (time, bytes, money, FLOPs, rates of them),
with the quantity's display unit in the message. Counts need none: a value
whose dimensions are only things counted one by one (tokens, requests, GPUs)
or none at all (a ratio, an efficiency) has one obvious unit. A table column
whose ``units:`` the plan declares is written in that unit, so its cells may
be bare (the caller skips the rule there).
"""

from __future__ import annotations

import math

from capplan.errors import CapplanError
from capplan.language import units

COUNTED = frozenset({"[token]", "[request]", "[gpu]"})   # base dimensions counted one by one
_SHOWN = (1e-3, 1e5)     # an equivalent outside this is no help as an example


def needs_unit(unit_text: str) -> bool:
    """Whether a value in ``unit_text`` must say its unit: some dimension of it has a scale."""
    return any(dim not in COUNTED for dim in units.dimensions(unit_text))


def require(raw, unit_text: str, known_units) -> None:
    """Refuse ``raw`` (a plan value already read) when it is a bare number that needs a unit.
    ``known_units`` are the model's units, among which the example's other unit is chosen."""
    if isinstance(raw, bool) or not needs_unit(unit_text):
        return
    if isinstance(raw, (int, float)):
        number = float(raw)
    elif isinstance(raw, str) and not units.written(raw, unit_text).unit:
        number = units.written(raw, unit_text).magnitude
    else:
        return
    raise CapplanError(f"write the unit, e.g. {example(number, unit_text, known_units)}")


def example(number: float, unit_text: str, known_units) -> str:
    """``'0.8 s' or '800 ms'``: the number in the nearest other unit of the same dimensions
    and what that is in the display unit; ``'0.8 ms'`` when no other unit reads sensibly."""
    dims = units.dimensions(unit_text)
    others = sorted((u for u in set(known_units) if u != unit_text and units.dimensions(u) == dims),
                    key=lambda u: (abs(math.log(units.factor(u) / units.factor(unit_text))), u))
    if others:
        shown = units.to_display(units.from_display(number, others[0]), unit_text)
        if _SHOWN[0] <= abs(shown) <= _SHOWN[1]:
            return f"'{number:g} {others[0]}' or '{shown:g} {unit_text}'"
    return f"'{number:g} {unit_text}'"
