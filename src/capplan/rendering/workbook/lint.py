"""The formula lint: what LibreOffice would forgive in a generated formula but Excel would not.

Unbalanced parentheses, functions newer than Excel 2007 without their
``_xlfn.`` prefix, dynamic-array functions, names that read as cell
addresses, unknown names, formulas longer than Excel allows.
"""

from __future__ import annotations

import re

from capplan.rendering.workbook.functions import FUNCTIONS
from capplan.rendering.workbook.names import looks_like_cell

_CELL_REF = re.compile(
    r"^(?:(?:'[^']+'|[A-Za-z_][\w.]*)!)?\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?$")
_SHEET_NAME = re.compile(r"^(?:('[^']+'|[A-Za-z_][\w.]*)!)?(.+)$")
DYNAMIC_ARRAY = {"FILTER", "SORT", "SORTBY", "UNIQUE", "SEQUENCE", "RANDARRAY", "LET", "LAMBDA",
                 "XLOOKUP", "XMATCH", "MAP", "REDUCE", "SCAN", "MAKEARRAY", "BYROW", "BYCOL",
                 "VSTACK", "HSTACK", "TOCOL", "TOROW", "TAKE", "DROP", "CHOOSECOLS", "CHOOSEROWS"}


EXCEL_MAX_FORMULA = 8192        # characters: Excel's specifications and limits
TOO_LONG = f"longer than Excel's {EXCEL_MAX_FORMULA:,} characters"

# The tokens of a formula, as the lint needs them: a function call's name and its
# parenthesis, a bracket, an operand that is a reference or a name (optionally on a
# named sheet, optionally a range), and everything else (numbers, text, errors,
# operators) as "other". tests/test_excel_printer.py checks it against openpyxl's
# tokenizer on every formula of every workbook in out/.
_TOKEN = re.compile(r"""
      (?P<text>"(?:[^"]|"")*")
    | (?P<function>[A-Za-z_][\w.]*)\(
    | (?P<operand>(?:(?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?\$?[A-Za-z_][\w.$]*(?::\$?[A-Za-z]{1,3}\$?\d+)?)
    | (?P<other>(?:\d+\.?\d*|\.\d+)(?:[Ee][+-]?\d+)?|\#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A)
                |<=|>=|<>|[-+*/^&=<>,;%\s])
    | (?P<open>[({])
    | (?P<close>[)}])
    """, re.VERBOSE)
_LOGICAL = {"TRUE", "FALSE"}


def formula_tokens(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` for each token of a formula (without its '='); kind is
    'function', 'open', 'close', 'operand' or 'other'. Raises ValueError at a
    character no token starts with."""
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise ValueError(f"unreadable at character {at + 1}: {text[at:at + 20]!r}")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "text" or (kind == "operand" and value.upper() in _LOGICAL):
            kind = "other"
        tokens.append((kind, value))
        at = match.end()
    return tokens


def lint_formula(text: str, names: set[str] | None = None) -> list[str]:
    """Problems Excel would have with a formula that LibreOffice may forgive.

    ``names``: the defined names (lower-case) the formula may use; ``None``
    skips the unknown-name check.
    """
    problems = []
    if not text.startswith("="):
        return [f"not a formula: {text}"]
    if len(text) > EXCEL_MAX_FORMULA:
        problems.append(f"{TOO_LONG}: {len(text):,} characters")
    if "[" in text:
        return problems + [f"structured reference or external link in {text}"]
    try:
        tokens = formula_tokens(text[1:])
    except ValueError as err:
        return problems + [f"{err} in {text}"]
    depth = 0
    for kind, value in tokens:
        if kind in ("function", "open"):
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth < 0:
                problems.append(f"unbalanced parentheses in {text}")
                depth = 0
        if kind == "function":
            fn = value.upper()
            bare = fn.split(".", 1)[1] if fn.startswith(("_XLFN.", "_XLWS.")) else fn
            if bare in DYNAMIC_ARRAY:
                problems.append(f"dynamic-array function {bare} in {text}")
            elif not fn.startswith(("_XLFN.", "_XLWS.", "_XLUDF.")) and fn not in FUNCTIONS:
                problems.append(f"{fn} is unknown to Excel 2007 and needs the _xlfn. prefix in {text}")
        if kind == "operand":
            if _CELL_REF.match(value):
                continue
            match = _SHEET_NAME.match(value)
            name = match.group(2)
            if match.group(1) and re.match(r"[A-Za-z]{1,3}\d", name):
                problems.append(f"sheet-qualified name '{value}' starts like a cell address "
                                f"(LibreOffice reads it as a cell) in {text}")
            elif looks_like_cell(name):
                problems.append(f"name '{name}' reads as a cell address in {text}")
            elif names is not None and name.lower() not in names:
                problems.append(f"unknown name '{name}' in {text}")
    if depth:
        problems.append(f"unbalanced parentheses in {text}")
    return problems
