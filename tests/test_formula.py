"""The formula parser: a small whitelisted language, never eval."""

from __future__ import annotations

import pytest
import sympy

from capplan.language.formula import MaxBeforeFailure, TableSum, parse
from capplan.errors import CapplanError


def test_dependencies_come_from_the_parsed_expression():
    f = parse("ceil(peak_arrival_rate / safe_rate_per_replica)")
    assert f.names == {"peak_arrival_rate", "safe_rate_per_replica"}
    assert isinstance(f.expr, sympy.ceiling)


def test_subtraction_chain_keeps_written_order():
    f = parse("usable_vram - weight_memory - workspace_reserve")
    assert [str(a) for a in f.expr.args] == ["usable_vram", "-weight_memory", "-workspace_reserve"]


def test_table_references_and_row_scope():
    f = parse("sum(classes.weight * classes.prompt_tokens)")
    assert isinstance(f.expr, TableSum)
    assert f.names == {"classes.weight", "classes.prompt_tokens"}
    row = parse("prompt_tokens + output_tokens", columns={"prompt_tokens": "classes.prompt_tokens",
                                                          "output_tokens": "classes.output_tokens"})
    assert row.names == {"classes.prompt_tokens", "classes.output_tokens"}


def test_lambda_star_rule_and_conditionals():
    assert isinstance(parse("max_before_failure(t.x, t.ok)").expr, MaxBeforeFailure)
    f = parse("if(a > b and not c, a, -b ** 2)")
    assert isinstance(f.expr, sympy.Piecewise)
    assert f.names == {"a", "b", "c"}


@pytest.mark.parametrize("text, message", [
    ("__import__('os').system('x')", "function calls on attributes are not allowed"),
    ("__import__('os')", "unknown function '__import__'"),
    ("open('/etc/passwd').read()", "function calls on attributes are not allowed"),
    ("eval('1')", "unknown function 'eval'"),
    ("(lambda: 1)()", "function calls on attributes are not allowed"),
    ("lambda: 1", "is not allowed in a formula"),
    ("x[0]", "is not allowed in a formula"),
    ("a.__class__", "is not a table column"),
    ("_private + 1", "name '_private' is not allowed"),
    ("'text'", "is not a number"),
    ("[1, 2]", "is not allowed in a formula"),
    ("a if b else c", "is not allowed in a formula"),
    ("ceil(x, 2)", "ceil() takes 1 argument(s), got 2"),
    ("max(x, key=y)", "takes no keyword arguments"),
    ("a +* b", "cannot parse formula"),
    ("a // b", "operator FloorDiv is not allowed"),
    ("", "a formula must be non-empty text"),
])
def test_rejected(text, message):
    with pytest.raises(CapplanError) as err:
        parse(text)
    assert message in str(err.value)


def test_parsing_runs_no_code(tmp_path):
    marker = tmp_path / "pwned"
    for text in (f"__import__('pathlib').Path('{marker}').touch()",
                 f"__import__('os').system('touch {marker}')"):
        with pytest.raises(CapplanError):
            parse(text)
    assert not marker.exists()


def test_comparisons_forgive_float_noise_as_ceil_and_floor_do():
    """1998 replicas at 0.20020020020020018 req/s (400/1998 as a plan computed it) carry
    400 req/s, not 399.99999999999994."""
    from capplan.engine.evaluate import compare

    carried = 1998 * 0.20020020020020018
    assert carried < 400                                    # the float noise this is about
    assert [bool(compare(op, carried, 400)) for op in ("<=", "<", ">=", ">", "==", "!=")] == \
        [True, False, True, False, True, False]
    assert [bool(compare(op, 400 * (1 + 1e-12), 400)) for op in ("<=", "<", ">=", ">", "==", "!=")] == \
        [False, False, True, True, False, True]             # a real difference stays one
    assert bool(compare("==", float("inf"), float("inf"))) and bool(compare("!=", float("nan"), float("nan")))
    assert [bool(compare(op, float("inf"), 5.0)) for op in ("<=", "<", ">=", ">", "==", "!=")] == \
        [False, False, True, True, False, True]             # infinity is not within 1e-14 of 5
    assert not bool(compare(">=", float("nan"), 1.0))
