"""Reading values out of a benchmark file, the same way for every format.

Every importer reads numbers, counts and rates with these helpers, so that a
malformed field gets the same located message whatever the format, and every
percentile is computed with the one method vLLM uses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from capplan.errors import CapplanError

PERCENTILE_METHOD = "linear"   # numpy's default; vLLM calls np.percentile(x, p)
NP = f"np.percentile (method='{PERCENTILE_METHOD}', as vLLM)"


def short(x: float) -> str:
    """A short, deterministic rendering of a number for ``methods`` text."""
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.6g}"


def show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def err(message: str, key: str | None = None, line: int | None = None) -> CapplanError:
    return CapplanError(message, key=key, line=line)


def finite(value: Any, key: str, line: int | None = None, *,
           allow_negative: bool = False) -> float:
    """A finite JSON number (bools and strings refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise err(f"expected a number, got {show(value)}", key, line)
    result = float(value)
    if not math.isfinite(result):
        raise err(f"expected a finite number, got {show(value)}", key, line)
    if result < 0 and not allow_negative:
        raise err(f"must not be negative, got {short(result)}", key, line)
    return result


def whole(value: Any, key: str, line: int | None = None, *, at_least: int | None = None) -> int:
    """A whole JSON number: a count (not negative), or one of at least ``at_least`` where a count of
    nothing means nothing (a client concurrency cap of 0 requests in flight, a parallel size of 0)."""
    result = finite(value, key, line, allow_negative=at_least is not None)
    if result != int(result):
        raise err(f"expected a whole number, got {short(result)}", key, line)
    if at_least is not None and result < at_least:
        raise err(f"must be at least {at_least}, got {short(result)}", key, line)
    return int(result)


def percentile(values: Iterable[float], q: float) -> float:
    arr = np.asarray(values if isinstance(values, list) else list(values), dtype=float)
    return float(np.percentile(arr, q, method=PERCENTILE_METHOD))


def dig(obj: Any, *path: str) -> Any:
    """Follow dict keys; ``None`` as soon as one is missing."""
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def rate_from(value: Any, key: str, line: int | None = None) -> float:
    """An offered rate: positive number, or inf given as float or string."""
    if isinstance(value, bool):
        raise err(f"expected a rate in req/s or 'inf', got {show(value)}", key, line)
    if isinstance(value, (int, float)):
        rate = float(value)
    elif isinstance(value, str):
        try:
            rate = float(value.strip())
        except ValueError:
            raise err(f"expected a rate in req/s or 'inf', got {show(value)}",
                      key, line) from None
    else:
        raise err(f"expected a rate in req/s or 'inf', got {show(value)}", key, line)
    if math.isnan(rate) or rate <= 0:
        raise err(f"expected a positive rate in req/s or 'inf', got {show(value)}",
                  key, line)
    return rate
