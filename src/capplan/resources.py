"""Where the editable data lives: ``model/`` and ``templates/``.

In an installed wheel they sit inside the package (``capplan/model``,
``capplan/templates``); in a source checkout they sit at the repository root,
where a team edits them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from capplan.errors import InternalError

_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def _data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise InternalError(f"capplan's data folder '{name}' is missing from the installation (a packaging bug)")


def model_dir() -> Path:
    return _data_dir("model")


def templates_dir() -> Path:
    return _data_dir("templates")
