"""The public benchmark files in the shared folder beside the repository.

They come from other projects and must not be copied into this one, so tests
read them where they are: ``$CAPPLAN_SHARED`` or ``<repository>/../shared``,
and skip, saying why, when the folder is not there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT

SHARED = Path(os.environ.get("CAPPLAN_SHARED") or ROOT.parent / "shared")
VLLM_70B = ("vllm-bench", "llama-3.3-70b-tp8")
GUIDELLM_V03 = ("guidellm", "v0.3-stripped")


def example(*parts: str) -> Path:
    """``<shared>/examples/<parts>``, or skip the test when it is absent."""
    path = SHARED.joinpath("examples", *parts)
    if not path.exists():
        pytest.skip(f"the shared example files are not here: {path} (set CAPPLAN_SHARED "
                    "to the folder that holds examples/)")
    return path
