"""``expect:`` (of the plan or a scenario): a value a quantity or a table
cell must come out at, to the precision it is written with (``'12.5 GiB'``
holds within 0.05 GiB), or true/false for a pass/fail result."""

from __future__ import annotations

from capplan import names
from capplan.errors import CapplanError
from capplan.language import domains, units
from capplan.loading.plan.context import Context
from capplan.loading.plan.data import Expectation
from capplan.names import nearest


def read(ctx: Context, raw, path) -> list[Expectation]:
    if not isinstance(raw, dict):
        raise ctx.err("expected a mapping of quantity: value", *path)
    out = []
    for target, value in raw.items():
        tpath = path + (target,)
        cell = names.cell(target)
        q = ctx.model.quantities.get(f"{cell[0]}.{cell[2]}" if cell else str(target))
        if q is None or (not cell and q.table):
            raise ctx.err(f"unknown quantity '{target}'{nearest(str(target), ctx.model.quantities)}", *tpath)
        if q.kind == "bool":
            if not isinstance(value, bool):
                raise ctx.err("expected true or false", *tpath)
            out.append(Expectation(str(target), value, value, "", 0.0, ctx.doc.line(tpath)))
            continue
        try:
            base = units.parse_value(value, q.unit)
            written = units.written(value if isinstance(value, str) else repr(value), q.unit)
            domains.require(q, base, value)      # an expectation outside it can never hold
        except CapplanError as err:
            raise ctx.err(err.message, *tpath) from None
        unit_text = written.unit or q.unit
        tolerance = written.resolution / 2
        out.append(Expectation(str(target), value, units.to_display(base, unit_text), unit_text,
                               tolerance, ctx.doc.line(tpath)))
    return out
