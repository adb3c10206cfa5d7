"""Units are dimensions of their own; formulas are dimension-checked; cycles are named."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pint
import pytest

from capplan.language import units
from capplan.engine.graph import build
from capplan.engine.unitcheck import check
from capplan.language.model import model_from_dict, standard_model
from capplan.errors import CapplanError


def test_bytes_are_a_dimension_not_a_number():
    with pytest.raises(pint.errors.DimensionalityError):
        units.ureg.Quantity(1, "GiB") + 3
    with pytest.raises(pint.errors.DimensionalityError):
        units.ureg.Quantity(1, "GiB") + units.ureg.Quantity(1, "token")


@pytest.mark.parametrize("unit, factor", [
    ("GiB", 2 ** 30), ("GB", 1e9), ("KiB/token", 1024), ("ms", 1e-3), ("h", 3600),
    ("TFLOP/s", 1e12), ("USD/Mtoken", 1e-6), ("req/s", 1), ("day", 86400),
])
def test_display_unit_factors(unit, factor):
    assert units.factor(unit) == pytest.approx(factor)


def test_values_convert_between_compatible_units():
    assert units.parse_value("1 s", "ms") == 1.0
    assert units.parse_value("81920 MiB", "GiB") == 80 * 2 ** 30
    assert units.parse_value("1,000 tok/s", "token/s") == 1000
    assert units.parse_value(0.7, "") == 0.7


@pytest.mark.parametrize("raw, unit, message", [
    ("80 GB/s", "GiB", "'80 GB/s' has dimensions [information] / [time], but this value needs [information]"),
    ("5 tokens", "ms", "has dimensions [token]"),
    ("sixty", "req/s", "expected a number with a unit"),
    (True, "", "expected a number"),
])
def test_bad_values(raw, unit, message):
    with pytest.raises(CapplanError) as err:
        units.parse_value(raw, unit)
    assert message in str(err.value)


def _model(quantities: dict, **extra):
    """A small model; its inputs take any number (the standard model declares real domains)."""
    for spec in quantities.values():
        if "formula" not in spec:
            spec.setdefault("domain", {"range": "(-inf, inf)", "why": "any number in a test model"})
    return model_from_dict({"switches": {}, "groups": {"g": {"quantities": quantities}}, **extra})


def _checked(model, switches):
    """The graph after the units stage, which the engine runs before computing (not graph.build)."""
    graph = build(model, switches)
    check(model, graph)
    return graph


def test_unit_mismatch_names_formula_operator_and_both_dimensions():
    model = _model({
        "memory": {"unit": "GiB", "tag": "fact"},
        "tokens": {"unit": "token", "tag": "fact"},
        "bad": {"unit": "GiB", "formula": "memory - tokens"},
    })
    with pytest.raises(CapplanError) as err:
        _checked(model, {})
    assert str(err.value).endswith(
        "bad = memory - tokens: cannot subtract tokens ([token]) from memory ([information])")


def test_the_units_check_is_a_stage_of_its_own():
    """Building a graph computes no dimensions; the units stage, which the engine runs first, does."""
    model = _model({"memory": {"unit": "GiB", "tag": "fact"}, "tokens": {"unit": "token", "tag": "fact"},
                    "bad": {"unit": "GiB", "formula": "memory - tokens"}})
    graph = build(model, {})
    assert set(graph.order) == {"bad", "memory", "tokens"}
    with pytest.raises(CapplanError, match="cannot subtract tokens"):
        check(model, graph)


def test_comparison_and_result_dimensions_are_checked():
    model = _model({
        "t": {"unit": "s", "tag": "fact"}, "n": {"unit": "token", "tag": "fact"},
        "ok": {"unit": "", "kind": "bool", "formula": "t <= n"},
    })
    with pytest.raises(CapplanError, match=r"comparison '<=' needs operands of one dimension: t \(\[time\]\) vs n \(\[token\]\)"):
        _checked(model, {})
    model = _model({"m": {"unit": "GiB", "tag": "fact"}, "r": {"unit": "GB/s", "formula": "m * 2"}})
    with pytest.raises(CapplanError, match=r"the formula gives \[information\], but r is declared in 'GB/s'"):
        _checked(model, {})


def test_zero_fits_any_dimension():
    model = _model({"m": {"unit": "GiB", "tag": "fact"}, "ok": {"unit": "", "kind": "bool", "formula": "m > 0"}})
    graph = _checked(model, {})
    assert graph.order == ("m", "ok") and graph.nodes["ok"].deps == ("m",)
    one = _model({"m": {"unit": "GiB", "tag": "fact"}, "ok": {"unit": "", "kind": "bool", "formula": "m > 1"}})
    with pytest.raises(CapplanError, match=r"comparison '>' needs operands of one dimension: m \(\[information\]\) "
                                           r"vs 1 \(dimensionless\)"):
        _checked(one, {})


def test_every_formula_of_the_standard_model_parses():
    """Model formulas are parsed on first use (so `capplan schema` needs no sympy);
    this parses all of them, under every switch, as reading the model once did."""
    model = standard_model()
    parsed = [f for q in model.quantities.values() for _, f in q.formulas] + [c.require for c in model.checks]
    written = [t for q in model.quantities.values() for _, t in q.written] + [c.written for c in model.checks]
    assert [f.text for f in parsed] == written and len(parsed) > 50


def test_a_model_formula_that_does_not_parse_is_named_at_its_key():
    model = _model({"m": {"unit": "GiB", "tag": "fact"}, "bad": {"unit": "GiB", "formula": "m +* 2"}})
    with pytest.raises(CapplanError) as err:
        build(model, {})
    assert str(err.value).startswith("model: quantities.bad.formula: cannot parse formula 'm +* 2'")


def test_cycle_is_reported_with_its_path():
    model = _model({
        "a": {"unit": "", "formula": "b + 1"},
        "b": {"unit": "", "formula": "c * 2"},
        "c": {"unit": "", "formula": "a"},
    })
    with pytest.raises(CapplanError, match=r"cycle in the model: a -> b -> c -> a"):
        build(model, {})


def test_unknown_name_in_a_model_formula_is_named():
    model = _model({"a": {"unit": "", "tag": "fact"}, "b": {"unit": "", "formula": "aa + 1"}})
    with pytest.raises(CapplanError, match=r"b uses unknown quantity 'aa'; did you mean a"):
        build(model, {})


# Switch combinations no plan can have: the plan reader refuses them by name (loading/plan/candidates.switch):
# sizing: estimate reads the candidates' estimate group, candidates rank on a λ* that Little's-law sizing
# does not have, and expert parallelism needs the engine's accounting (document.expert_parallel).
REFUSED = ({"sizing": "estimate", "candidates": "none"}, {"sizing": "littles_law", "candidates": "ranked"},
           {"expert_parallel": "split", "memory_accounting": "reserve"})


def test_standard_model_checks_under_every_switch_combination():
    model = standard_model()
    names = sorted(model.switches)
    for cases in itertools.product(*(model.switches[n]["cases"] for n in names)):
        switches = dict(zip(names, cases))
        if any(all(switches[k] == v for k, v in r.items()) for r in REFUSED):
            continue
        graph = _checked(model, switches)
        assert "resilient_gpus" in graph.order and "kv_pool" in graph.order


def test_pinning_a_derived_quantity_cuts_its_dependencies():
    model = standard_model()
    switches = model.default_switches()
    pinned = build(model, switches, frozenset({"instance_max_rate"}))
    assert pinned.nodes["instance_max_rate"].is_input
    assert "load_sweep.meets_slo" not in pinned.upstream("active_gpus")
    assert "load_sweep.meets_slo" in build(model, switches).upstream("active_gpus")


@pytest.mark.parametrize("value", [2.7777777777777776e-07, 2.777777777777778e-07, 1 / 3600000])
def test_a_unit_factor_a_last_bit_apart_is_the_same_rational(value):
    """USD/kWh's factor differs in its last bit between pint versions; the workbook folds it
    as 1/3600000 under both, so out/ is the same bytes at either end of the supported range."""
    assert units.exact_ratio(value) == Fraction(1, 3600000)
    assert units.exact_ratio(0.1 + 0.2) == Fraction(3, 10)       # 0.30000000000000004: one ulp from 3/10
    assert units.exact_ratio(1 / 3) == Fraction(1, 3)


def test_a_scenario_graph_looks_for_nominal_reads_only_in_formulas_that_have_them(monkeypatch):
    """Outside the nominal scenario a graph drops the names read only through nominal(): a formula
    without nominal() is not rewritten to find them, and one that has it is looked at once for
    all the graphs of a model (every set of switches and pins asks for the same formulas)."""
    import sympy
    from conftest import MAIN_PLAN

    from capplan.analysis.pipeline import load_plan
    from capplan.language.formula import Nominal

    plan = load_plan(MAIN_PLAN)
    model = standard_model()
    rewritten = []
    real = sympy.Basic.replace
    monkeypatch.setattr(sympy.Basic, "replace", lambda self, *a, **k: rewritten.append(self) or real(self, *a, **k))
    first = build(model, plan.switches, frozenset({"gpu_power"}), nominal=False)
    build(model, plan.switches, frozenset({"kv_pool"}), nominal=False)
    having = {n.formula.expr for n in first.nodes.values() if n.formula is not None and n.formula.expr.has(Nominal)}
    assert having and set(rewritten) <= having and len(rewritten) <= len(having)
