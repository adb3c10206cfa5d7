"""Sentences made of results, written in Jinja in ``templates/layout.yaml``.

A team rewords the record's headline or a sensitivity cell there, not in
Python. Values arrive as :class:`~capplan.rendering.present.Shown` (their
text, with ``.value`` for the number); three filters cover what plain text
cannot: ``count`` ("1 node" / "2 nodes"), ``money`` ("$59,965.44") and
``and_list`` ("a, b and c").
"""

from __future__ import annotations

from functools import lru_cache

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from capplan import formatting


def count(x, word: str) -> str:
    value = getattr(x, "value", x)
    return f"{formatting.number(value)} {word}{'' if value == 1 else 's'}"


@lru_cache(maxsize=None)
def _template(source: str) -> jinja2.Template:
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
    env.filters.update(count=count, money=formatting.money, and_list=formatting.and_list)
    return env.from_string(source)


def render(source: str, context: dict) -> str:
    return " ".join(_template(source).render(**context).split())
