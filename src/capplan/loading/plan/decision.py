"""``decision:``: what a reviewer signs, as an architecture decision record states it.

Status (proposed, approved, superseded, rejected), the owner (by default the plan's ``owner:``),
the approver, the date, the commitment term (how long the money is committed: "month to month",
"12 months reserved") and the review trigger (what reopens the decision: "peak above 75 req/s or
a price change of 10 %"). Every field may be left out: the record then says "proposed", "not yet
named", "not stated", and ``capplan check`` warns about each (``--strict`` fails on it), as it
does about a TODO placeholder.
"""

from __future__ import annotations

import datetime as dt
import re

from capplan.loading.plan.context import Context, kind
from capplan.loading.plan.data import Decision
from capplan.names import nearest

STATUSES = ("proposed", "approved", "superseded", "rejected")
KEYS = ("status", "owner", "approver", "date", "commitment", "review_trigger")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")

SCHEMA = {
    "type": "object",
    "description": "The decision a reviewer signs, as an architecture decision record states it; each field left "
                   "out is shown as a default (proposed, the plan's owner, not yet named, not stated) and "
                   "`capplan check` warns about it.",
    "properties": {
        "status": {"type": "string", "enum": list(STATUSES), "default": "proposed",
                   "description": "Where the decision stands."},
        "owner": {"type": "string", "description": "Who owns the decision (default: the plan's owner)."},
        "approver": {"type": "string", "description": "Who approves it (required once the status is approved)."},
        "date": {"type": "string", "format": "date", "description": "The date of the status, YYYY-MM-DD."},
        "commitment": {"type": "string",
                       "description": "How long the spend is committed: 'month to month', '12 months reserved'."},
        "review_trigger": {"type": "string", "description": "What reopens the decision: 'peak above 75 req/s or "
                                                            "a price change of 10 %'."},
    },
    "additionalProperties": False,
}


def read(ctx: Context, owner: str) -> Decision:
    """The plan's ``decision:`` (the defaults where it has none), ``owner`` the plan's own."""
    raw = ctx.data.get("decision")
    if raw is None:
        return Decision(owner=owner)
    if not isinstance(raw, dict):
        raise ctx.err(f"expected a mapping of {', '.join(KEYS)}, got {kind(raw)}", "decision")
    for key in raw:
        if key not in KEYS:
            raise ctx.err(f"unknown key '{key}'{nearest(str(key), KEYS)} (decision keys: {', '.join(KEYS)})",
                          "decision", key)
    status = raw.get("status", STATUSES[0])
    if status not in STATUSES:
        raise ctx.err(f"status must be one of {', '.join(STATUSES)}, got {kind(status)}", "decision", "status")
    texts = {k: ctx.text(raw.get(k), "decision", k) or "" for k in ("owner", "approver", "commitment",
                                                                     "review_trigger")}
    if status == "approved" and not texts["approver"]:
        raise ctx.err("an approved decision names who approved it (approver: a name or a role)",
                      "decision", "approver")
    return Decision(status=status, owner=texts["owner"] or owner, approver=texts["approver"],
                    date=_date(ctx, raw.get("date")), commitment=texts["commitment"],
                    review_trigger=texts["review_trigger"], line=ctx.doc.line(("decision",)))


def _date(ctx: Context, value) -> str:
    """A YYYY-MM-DD date (YAML reads an unquoted one as a date), or '' when none is given."""
    text = ctx.text(value, "decision", "date") or ""
    if text and not _is_date(text):
        raise ctx.err(f"'{text}' is not a date (YYYY-MM-DD)", "decision", "date")
    return text


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return bool(_ISO.fullmatch(text))
