"""Excel data validation on the workbook's input cells, from the model's domains.

A finance user who types 1.5 into ``gpu_memory_utilization`` should be
refused by the spreadsheet itself, with the same words capplan uses for a plan
("gpu_memory_utilization must be in (0, 1]: the engine cannot use more than
the whole GPU"), not discover it in a number nobody can defend. Each input
cell whose quantity declares a domain gets a data validation built from
:meth:`capplan.language.domains.Domain.excel`; the cells of one quantity on one
sheet (a table column) share one rule. No input prompt: an input cell's
comment already shows its source on hover, and the refusal says why.

Cells hold display-unit values, the unit the domain's bounds are written in,
so the bounds go into the rule unconverted.
"""

from __future__ import annotations

from functools import cache

from capplan.xlsx.sheetmodel import MESSAGE_LIMIT, TITLE_LIMIT, Validation, fit


def validate_input(ws, cells: list[str], q) -> None:
    """Attach quantity ``q``'s domain to input cells of ``ws`` (their coordinates;
    nothing for a quantity without one). Cells of a column must come top row
    first: a 'custom' rule's formula is relative to the first cell."""
    if q.domain is None or not cells:
        return
    message = _message(q.domain, q.name)
    found = ws.validations.get(message)
    if found is None:
        rule = {**q.domain.excel(cells[0]), "allowBlank": 1 if q.optional else 0, "showErrorMessage": 1,
                "errorStyle": "stop", "errorTitle": fit(q.name, TITLE_LIMIT), "error": message}
        found = ws.validations[message] = Validation(rule)
    found.cells.extend(cells)


@cache
def _message(domain, name: str) -> str:
    """The refusal's words, made once per quantity (a column's every cell asks)."""
    return fit(domain.sentence(name) + ".", MESSAGE_LIMIT)
