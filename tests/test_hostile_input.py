"""Plans written by an attacker: each is refused fast, in bounded memory, with a located message.

A plan may come from an untrusted pull request. These cases are the file
itself turned against the loader (alias bombs, deep nesting, tags that build
Python objects, numbers Python refuses to convert) and unit strings turned
against the unit parser. The pure-Python YAML fallback must refuse them as
well as libyaml does, and read every YAML file of the repository exactly as
libyaml does.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest
import yaml
from conftest import ROOT

from capplan.language import units
from capplan.errors import CapplanError
from capplan.language import yamlfile

LOADERS = [pytest.param(yaml.SafeLoader, id="pure-python")]
if yaml.__with_libyaml__:
    LOADERS.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))

RAW = {   # YAML text -> fragments of the one-line message
    "alias bomb (9^9 values)": (ALIAS_BOMB, [":5: e[1]", "more than 20,000 values once its aliases (*name) are expanded"]),
    "5,000-deep flow nesting": ("gpu: l4\ntitle: " + "[" * 5000 + "]" * 5000 + "\n", [":2: title"]),
    "5,000-deep mapping nesting": ("gpu: l4\ntitle: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
                                   [":2: title.a.a.a… (64 levels): the YAML nests deeper than 64 levels"]),
    "alias inside its own anchor": ("gpu: l4\nnotes: &n [1, *n]\n", [":2: notes[1]: alias *n refers to a collection that contains it"]),
    "alias without an anchor": ("gpu: l4\nnotes: *n\n", [":2: notes: alias *n has no anchor &n before it"]),
    "python object tag": ("gpu: !!python/object/apply:os.system ['true']\n", [":1: gpu: unsupported YAML tag '!!python/object/apply:os.system'"]),
    "python name tag": ("model: !!python/name:os.system\n", [":1: model: unsupported YAML tag '!!python/name:os.system'"]),
    "binary tag": ("gpu: !!binary aGVsbG8=\n", [":1: gpu: unsupported YAML tag '!!binary'"]),
    "local tag": ("gpu: !include other.yaml\n", [":1: gpu: unsupported YAML tag '!include'"]),
    "merge key": ("inputs:\n  <<: {peak_arrival_rate: 1}\n", [":2: inputs: merge keys (<<) are not supported"]),
    "5,000-digit integer (Python's 4,300-digit limit)": (
        "gpu: l4\ninputs:\n  peak_arrival_rate: " + "9" * 5000 + "\n",
        [":3: inputs.peak_arrival_rate: a number of 5,000 characters is not a plan value"]),
    "date that does not exist": ("tables:\n  deployments:\n    as_of: 2026-13-45\n",
                                 [":3: tables.deployments.as_of: '2026-13-45' is not a valid timestamp: month must be in 1..12"]),
    "a second document": ("gpu: l4\n---\ngpu: l40s\n", [":2: a plan file holds one YAML document"]),
    "a list as a key": ("? [1, 2]\n: x\n", [":1: a key must be text"]),
    "duplicate key through an alias": ("a: &k gpu\n*k : 1\ngpu: 2\n", [":3: duplicate key 'gpu'"]),
    "a null key": ("gpu: l4\ninputs:\n  ~: 3\n", [":3: inputs: a key must be text"]),
    "half a surrogate pair": ('title: "x\\uD800y"\n', [":1: title: "]),
    "a plan that is a list": ("- gpu: l4\n", [": a plan must be a YAML mapping (title:, gpu:, model:, inputs:, tables:, …)"]),
}


@pytest.mark.parametrize("case", list(RAW))
def test_hostile_file_is_refused_with_a_located_message(case, write_plan, run_main, tmp_path, monkeypatch):
    text, expected = RAW[case]
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main("eval", write_plan(text))
    assert code == 1, err
    first = err.splitlines()[0]
    assert first.startswith("error: plans/test-plan.yaml:")
    for fragment in expected:
        assert fragment in first, f"{fragment!r} not in {first!r}"


@pytest.mark.parametrize("text, expected", [
    ("gpu: !!bool maybe\n", ":1: gpu: 'maybe' is not a valid bool: "),
    ("tables:\n  as_of: !!timestamp soon\n", ":2: tables.as_of: 'soon' is not a valid timestamp: "),
    ("gpu: !!float fast\n", ":1: gpu: 'fast' is not a valid float: "),
], ids=["bool", "timestamp", "float"])
def test_a_tagged_value_that_its_tag_cannot_build_is_refused(text, expected, write_plan, run_main, tmp_path,
                                                              monkeypatch):
    """An explicit tag (!!bool, !!timestamp) on text that is no such value is a located
    message, as an impossible date is, never a traceback."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main("eval", write_plan(text))
    assert code == 1, err
    assert expected in err.splitlines()[0]


BOMBS = {
    "alias bomb": ALIAS_BOMB,
    "deep flow nesting": "a: " + "[" * 5000 + "]" * 5000,
    "deep interleaved nesting": "a: " + "[a, " * 5000 + "]" * 5000,
    "deep mapping nesting": "a: " + "{a: " * 5000 + "1" + "}" * 5000,
    "4 MiB of values": "a: [" + "1," * (yamlfile.MAX_BYTES // 2 - 4) + "1]",
    "one key per value": "{" + ", ".join(f"k{i}: 1" for i in range(50_000)) + "}",
}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("case", list(BOMBS))
def test_bombs_are_refused_within_a_second(case, loader, monkeypatch):
    """libyaml refuses each bomb in milliseconds; the pure-Python scanner, a fallback
    only, costs ~30 µs a token, so it gets three times the budget. CPU time, so that
    other work on a shared machine does not count."""
    monkeypatch.setattr(yamlfile, "_LOADER", loader)
    start = time.process_time()
    with pytest.raises(CapplanError) as refused:
        yamlfile.parse(BOMBS[case], "bomb.yaml")
    elapsed = time.process_time() - start
    assert str(refused.value).startswith("bomb.yaml:")
    assert elapsed < (1.0 if loader is not yaml.SafeLoader else 3.0), f"{case} took {elapsed:.2f} s"


@pytest.mark.parametrize("case", list(BOMBS))
def test_bombs_are_refused_in_bounded_memory(case):
    tracemalloc.start()
    try:
        with pytest.raises(CapplanError):
            yamlfile.parse(BOMBS[case], "bomb.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"{case} peaked at {peak / 2 ** 20:.0f} MiB"


def test_file_larger_than_the_limit_is_not_read_whole(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"a: 1\n" * (yamlfile.MAX_BYTES // 5 + 1))
    with pytest.raises(CapplanError, match="the file is larger than 4 MiB"):
        yamlfile.read(path)
    with pytest.raises(CapplanError, match="the file is larger than 4 MiB"):    # text from git, for diff --base
        yamlfile.parse("a: 1\n" * (yamlfile.MAX_BYTES // 5 + 1), "huge.yaml")


def test_aliases_expand_with_the_lines_of_their_anchor():
    doc = yamlfile.parse("rows: &r\n  - {name: a}\ncopy: *r\n", "f.yaml")
    assert doc.data == {"rows": [{"name": "a"}], "copy": [{"name": "a"}]}
    assert doc.data["copy"] is not doc.data["rows"]     # an expansion, not a shared object
    assert doc.line(("copy",)) == 3 and doc.line(("copy", 0, "name")) == 2


REPO_YAML = sorted([*ROOT.glob("plans/*.yaml"), *ROOT.glob("model/**/*.yaml"), *ROOT.glob("templates/*.yaml")])


@pytest.mark.parametrize("path", REPO_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_both_loaders_read_the_repository_as_pyyaml_does(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    reads = []
    for loader in (yaml.SafeLoader, *([yaml.CSafeLoader] if yaml.__with_libyaml__ else [])):
        monkeypatch.setattr(yamlfile, "_LOADER", loader)
        reads.append(yamlfile.parse(text, path.name))
    assert reads[0].data == yaml.safe_load(text)
    assert all(r.data == reads[0].data and r.lines == reads[0].lines for r in reads)


# -- units -------------------------------------------------------------------------

AGREES_WITH_PINT = ["req/s", "GiB/GPU", "TFLOP/s/GPU", "B/(token*request)", "s^-1", "s**2", "1/s", "%", "µs",
                    "USD/Mtoken", "KiB/token", "token/s/request", "GB / s", "tokens/requests", "kiloUSD/h"]


@pytest.mark.parametrize("text", AGREES_WITH_PINT)
def test_unit_grammar_reads_what_pint_reads(text):
    assert units.unit(text) == units.ureg.parse_units(text)


REFUSED_UNITS = {
    "req/s**10**10**10": "has the exponent '10'; an exponent is a whole number from -9 to 9",
    "s^9^9^9": "gives an exponent an exponent",
    "req/s**-1**-1": "gives an exponent an exponent",
    "s^0.5": "has an unexpected '.'",
    "s^(1/0)": "has the exponent '('",
    "req/s" + "*s/s" * 1500: "a unit of 6,005 characters is too long (at most 100)",
    "*".join(["s"] * 17): "has more than 16 factors",
    "req/" + "(" * 5 + "s" + ")" * 5: "nests parentheses deeper than 4",
    "(req/s": "has a '(' without its ')'",
    "req/s)": "has an unexpected ')'",
    "req/": "ends where a unit name is expected",
    "1/0": "holds the number 0; a unit holds no number but 1",
    "req s": "has an unexpected 's'",
    "req/s.__class__": "has an unexpected '.'",
    "__import__": "'__import__' is not a unit capplan knows",
    "req/s\u2212s": "has an unexpected character U+2212 MINUS SIGN (write ASCII '-')",
    "req/s\u200b": "has an unexpected character U+200B ZERO WIDTH SPACE",
}


@pytest.mark.parametrize("text", list(REFUSED_UNITS), ids=lambda t: t[:24])
def test_unit_grammar_refuses_what_is_not_a_unit(text):
    start = time.process_time()
    with pytest.raises(CapplanError) as refused:
        units.unit(text)
    assert REFUSED_UNITS[text] in str(refused.value)
    assert time.process_time() - start < 0.1


@pytest.mark.parametrize("raw, unit, base", [
    ("1,000.5 ms", "s", 1.0005), ("1_000 ms", "s", 1.0), ("+.5", "", 0.5), ("-.5e-1", "", -0.05),
    ("60req/s", "req/s", 60.0), ("1.75 GiB", "GiB", 1.75 * 2 ** 30), (2 ** 53, "", 2.0 ** 53),
])
def test_numbers_as_plans_write_them(raw, unit, base):
    assert units.parse_value(raw, unit) == pytest.approx(base, rel=1e-15)


@pytest.mark.parametrize("raw, message", [
    (2 ** 53 + 2, "'9007199254740994' is 9.007e+15, beyond ±2^53"),
    ("1e290 TB", "'1e290 TB' is 9.313e+292 GiB, beyond ±2^53"),
    ("1e300 TB", "'1e300 TB' is too large to hold (it overflows to infinity)"),
    (float("inf"), "expected a finite number, got inf"),
    ("9" * 400, "is too large to hold (it overflows to infinity)"),
    (10 ** 400, "a whole number of 401 digits is beyond ±2^53"),
    ("1e" + "9" * 5000, "is out of the range a number may have"),
    ("0,5", "a comma separates thousands (1,000); write decimals with a point (0.5)"),
    ("\u221260", "(it holds character U+2212 MINUS SIGN (write ASCII '-'))"),
    ("\u0663", "(it holds character U+0663 ARABIC-INDIC DIGIT THREE)"),
    ({"value": 1}, "got a mapping"),
], ids=["2^53 + 2", "1e290 TB", "1e300 TB", "inf", "400 nines", "401 digits", "a huge exponent", "a decimal comma", "a minus sign", "an Arabic-Indic digit", "a mapping"])
def test_numbers_no_plan_may_hold(raw, message):
    with pytest.raises(CapplanError) as refused:
        units.parse_value(raw, "GiB" if "TB" in str(raw) else "")
    assert message in str(refused.value)


@pytest.mark.parametrize("loader", LOADERS)
def test_half_a_surrogate_pair_is_refused_by_both_loaders(loader, monkeypatch):
    """libyaml refuses the escape "\\uD800"; the pure-Python parser builds the string, which no
    output could encode, so the loader refuses it there itself."""
    monkeypatch.setattr(yamlfile, "_LOADER", loader)
    with pytest.raises(CapplanError) as refused:
        yamlfile.parse('notes: ok\ntitle: "x\\uD800y"\n', "f.yaml")
    assert str(refused.value).startswith("f.yaml:2: title: ")


def test_an_alias_bomb_in_an_imported_benchmark_file_is_refused(base_plan, write_plan, run_main, tmp_path):
    """Benchmark YAML is read by the same event loader: however large the
    report, aliases cannot expand it past the number of characters it has."""
    plan = write_plan(dict(base_plan, tables=dict(base_plan["tables"], load_sweep={"source": "t", "import": ["bomb.yaml"]})))
    (plan.parent / "bomb.yaml").write_text(ALIAS_BOMB)
    start = time.process_time()
    code, _, err = run_main("eval", plan)
    assert time.process_time() - start < 1.0
    assert code == 1 and "bomb.yaml" in err
    assert "once its aliases (*name) are expanded" in err
