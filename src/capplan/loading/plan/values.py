"""One value as a plan writes it, for an input, a table cell or a scenario's
``set:``: a number with its unit, or a mapping ``{value: ..., range: ...}``
whose range is what ``capplan simulate`` draws (:mod:`capplan.loading.uncertain`).
The value is converted to base units and checked against the quantity's domain."""

from __future__ import annotations

from capplan.errors import CapplanError
from capplan.language import domains, units
from capplan.loading import uncertain, unitrule
from capplan.loading.plan.context import Context
from capplan.names import nearest

CELL_KEYS = ("value", *uncertain.FIELDS)      # a table cell written as a mapping: an uncertain cell


def distribution(ctx: Context, fields: dict, q, value: float, path: tuple, unit: str | None = None,
                 declared: bool = False) -> uncertain.Distribution | None:
    try:
        return uncertain.parse(fields, q, value, unit, declared)
    except CapplanError as err:
        raise ctx.err(err.message, *path, err.key) from None


def cell(ctx: Context, raw, q, unit: str, path: tuple,
         declared: bool = False) -> tuple[float, uncertain.Distribution | None]:
    """A numeric table cell: a value, or ``{value: ..., range: ...}`` (an uncertain cell).
    In a column whose unit the table declares (``declared``) a bare number is in that unit."""
    fields = raw if isinstance(raw, dict) else {"value": raw}
    for key in fields:
        if key not in CELL_KEYS:
            raise ctx.err(f"unknown field '{key}'{nearest(str(key), CELL_KEYS)} (a cell takes "
                          f"{', '.join(CELL_KEYS)})", *path, key)
    try:
        value = units.parse_value(fields.get("value"), unit)
        domains.require(q, value, fields.get("value"))
        if not declared:
            unitrule.require(fields.get("value"), unit, ctx.known_units())
    except CapplanError as err:
        raise ctx.err(err.message, *path) from None
    return value, distribution(ctx, fields, q, value, path, unit, declared)
