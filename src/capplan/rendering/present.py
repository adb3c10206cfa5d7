"""What a reader sees of a quantity: its value with unit, formula, numbers
substituted, tag.

Every output shows a value the same way: :func:`shown` gives the number in its
display unit (JSON-ready) and its text for humans. The Markdown record (and
``capplan explain``) show each derived quantity as ``formula → the same
formula with the numbers that went in → result``, with its tag and source;
:func:`row` turns an :class:`Evaluation` into those rows, and the templates
only lay them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy
from sympy.printing.latex import LatexPrinter

from capplan import formatting
from capplan.engine.evaluate import Evaluation
from capplan.engine.exact import factor
from capplan.language.formula import TABLE_FUNCTIONS, Formula
from capplan.loading import tablestatus
from capplan.loading.plan.candidates import ESTIMATE

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?")


@dataclass(frozen=True)
class Shown:
    """A value as every output shows it: ``value`` in the display unit,
    JSON-ready (12 significant digits, whole numbers as ints), ``text`` for
    humans (``9 GPUs``, ``$59,965.44``). ``str()`` is the text, so a Jinja
    sentence writes ``{{ x }}`` and reaches the number as ``x.value``."""

    value: object
    text: str

    def __str__(self) -> str:
        return self.text


def shown(e: Evaluation, name: str, index: int | None = None) -> Shown:
    """Quantity ``name`` (a table column when ``index`` is given) as shown."""
    value = e.display(name)
    return shown_value(e.model.quantities[name], value if index is None else value[index])


def shown_value(q, value) -> Shown:
    """One value of quantity ``q`` (display unit) as shown."""
    if is_unmeasured(q, value):
        return Shown(UNMEASURED, UNMEASURED)
    return Shown(formatting.plain(value), formatting.quantity(value, q.unit, q.kind))


UNMEASURED = "not measured"


def is_unmeasured(q, value) -> bool:
    """Whether ``value`` of ``q`` is the model's mark for "not measured" (``unmeasured:``)."""
    return q.unmeasured is not None and value == q.unmeasured


def replaced_formula(e: Evaluation, name: str) -> Formula | None:
    """The formula a pinned quantity replaces, under this plan's switches."""
    given = e.inputs.get(name)
    if given is None or not given.pinned:
        return None
    return e.model.quantities[name].formula_for(dict(e.graph.switches))


@dataclass(frozen=True)
class Row:
    name: str
    symbol: str             # LaTeX
    description: str
    value: str              # formatted with unit
    tag: str                # fact | policy | measurement | assumption | derived
    pending: bool           # a pending measurement (input) …
    rests_on_pending: tuple[str, ...]   # … or a result that depends on one
    pinned: bool
    source: str
    date: str
    note: str
    formula: str            # as written in the model ('' for inputs)
    latex: str              # the formula in LaTeX (for a pin: the formula it replaces)
    substituted: str        # numbers in place of names ('' when not helpful)
    rests_on: str           # the measurements and assumptions a result depends on


def row(e: Evaluation, name: str) -> Row:
    q = e.model.quantities[name]
    node = e.graph.nodes[name]
    value = shown(e, name).text
    if node.formula is None:
        given = e.inputs[name]
        replaced = replaced_formula(e, name)
        return Row(name, q.symbol, q.description, value, given.tag, given.pending, (), given.pinned,
                   given.source or "", given.date or "", given.note or "",
                   replaced.text if replaced else "", latex(e, replaced.expr) if replaced else "", "", "")
    return Row(name, q.symbol, q.description, value, "derived", False, tuple(e.pending_inputs(name)), False,
               "", "", "", node.formula.text, latex(e, node.formula.expr),
               conversion(e, name, node.formula) or substituted(e, node.formula),
               rests_on(e, name))


ESTIMATED_LAMBDA = "the throughput estimate: instance_max_rate (λ* estimated, not measured)"


def rests_on(e: Evaluation, name: str) -> str:
    """'measurements: load_sweep, hbm_efficiency (pending); assumptions: …', opening with the estimate
    where the result rests on a λ* that ``sizing: estimate`` took from the throughput estimate. An input
    at the model's mark for "not measured" (``unmeasured:``, as a pool's measured λ* at 0) is left out:
    the formulas take their estimate instead, so the result does not rest on it."""
    groups: dict[str, list[str]] = {"measurement": [], "assumption": []}
    for source in sorted(e.provenance.get(name, ())):
        if source in e.inputs:
            given = e.inputs[source]
            if given.tag in groups and not is_unmeasured(e.model.quantities[source], e.display(source)):
                groups[given.tag].append(source + (" (pending)" if given.pending else ""))
        elif source in e.model.tables and e.model.tables[source].tag in groups:
            groups[table_tag(e, source)].append(source)
    parts = [f"{tag}s: {', '.join(names)}" for tag, names in groups.items() if names]
    return "; ".join(([ESTIMATED_LAMBDA] if on_estimated_lambda(e, name) else []) + parts)


def on_estimated_lambda(e: Evaluation, name: str) -> bool:
    """Whether ``name`` is or rests on the plan's λ* under ``sizing: estimate``: the model's
    prediction stands where a load sweep's measurement would, and the reader must see which."""
    lam = "instance_max_rate"
    return (e.plan.switches.get("sizing") == ESTIMATE and lam in e.graph.nodes
            and (name == lam or lam in e.graph.upstream(name)))


def table_tag(e: Evaluation, name: str) -> str:
    """A table's tag as the model gives it, except that a sweep of a performance model's predictions
    is an assumption (an estimate), never a measurement."""
    data = e.scenario.tables.get(name)
    estimated = data is not None and data.status is not None and data.status.status == tablestatus.ESTIMATED
    return "assumption" if estimated else e.model.tables[name].tag


def latex(e: Evaluation, expr) -> str:
    names = {s: e.model.quantities[s.name].symbol for s in expr.free_symbols if s.name in e.model.quantities}
    return _Latex(names).doprint(expr)


def substituted(e: Evaluation, formula) -> str:
    """The formula as written, each name replaced by its value and unit.

    Formulas over whole table columns are left out: a column of numbers in
    one line helps nobody; the table itself is shown next to them.
    """
    if any(isinstance(node, tuple(TABLE_FUNCTIONS)) for node in sympy.preorder_traversal(formula.expr)):
        return ""
    text = _NAME.sub(lambda m: _operand(e, m.group(0)) if m.group(0) in formula.names else m.group(0),
                     _without_unit_annotations(formula.text))
    for plain, pretty in ((" * ", " × "), (" <= ", " ≤ "), (" >= ", " ≥ ")):
        text = text.replace(plain, pretty)
    return text


def _operand(e: Evaluation, name: str) -> str:
    """A value as a substituted formula shows it: its number even where it is the model's "not measured"
    mark (``if(0 req/s > 0, …)`` reads; ``if(not measured > 0, …)`` would not)."""
    q = e.model.quantities[name]
    value = e.display(name)
    return formatting.quantity(value, q.unit, q.kind) if is_unmeasured(q, value) else shown(e, name).text


def conversion(e: Evaluation, name: str, formula) -> str:
    """A formula that only changes the unit (``hours_per_month = days_per_month``)
    with the conversion written out: '30.5 days × 24 h/day = 732 h' (the
    workbook's cell multiplies by the same factor); '' for any other formula."""
    if not isinstance(formula.expr, sympy.Symbol) or formula.expr.name not in e.model.quantities:
        return ""
    source, target = e.model.quantities[formula.expr.name], e.model.quantities[name]
    ratio = factor(source.unit) / factor(target.unit)
    if ratio == 1 or source.table or target.table:
        return ""
    per = f"{formatting.unit_label(target.unit)}/{source.unit}"
    return f"{shown(e, formula.expr.name).text} × {formatting.number(float(ratio))} {per} = {shown(e, name).text}"


_ANNOTATION = re.compile(r"\b(?:per_token|per_gpu)\(")


def _without_unit_annotations(text: str) -> str:
    """``per_token(2 * layers)`` -> ``2 * layers``: the result's unit already says
    "per token", and the numbers substituted read better without the wrapper. After a ``/``
    or ``**`` an expression keeps its parentheses (``x ** (a * b)``), which bind it there."""
    while (match := _ANNOTATION.search(text)) is not None:
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        inner = text[match.end():end - 1]
        if text[:match.start()].rstrip().endswith(("/", "**")) and not _NAME.fullmatch(inner.strip()):
            inner = f"({inner})"
        text = text[:match.start()] + inner + text[end:]
    return text


class _Latex(LatexPrinter):
    """A formula in LaTeX for the record: sympy's printer, taught the formula language's own
    functions by the ``_print_<Node>`` convention every walk of a formula tree follows."""

    printmethod = None          # a node never prints itself: this printer knows every node it shows

    def __init__(self, names):
        super().__init__({"symbol_names": names, "order": "none", "mul_symbol": "dot"})

    def _print_TableSum(self, expr):
        return r"\sum_i " + self._print(expr.args[0])

    def _print_TableMax(self, expr):
        return r"\max_i " + self.parenthesize(expr.args[0], 1000)

    def _print_TableMin(self, expr):
        return r"\min_i " + self.parenthesize(expr.args[0], 1000)

    def _print_MaxBeforeFailure(self, expr):
        x, ok = (self._print(a) for a in expr.args)
        return rf"\max\{{{x} : {ok} \text{{ for all rates}} \le {x}\}}"

    def _print_MinFailure(self, expr):
        x, ok = (self._print(a) for a in expr.args)
        return rf"\min\{{{x} : \lnot {ok}\}}"

    def _print_Nominal(self, expr):
        """x^{nom}; a symbol with a superscript of its own in braces first (N_{P}^{res}^{nom} does not parse)."""
        printed = self._print(expr.args[0])
        return ("{" + printed + "}" if "^" in printed else printed) + r"^{nom}"

    def _print_ErlangC(self, expr):
        c, a = (self._print(x) for x in expr.args)
        return rf"C\left({c}, {a}\right)"

    def _print_PoissonExceeds(self, expr):
        k, m = (self._print(x) for x in expr.args)
        return rf"P\left(\mathrm{{Poisson}}\left({m}\right) > {k}\right)"

    def _print_Lag(self, expr):
        x, k = (self._print(a) for a in expr.args)
        return rf"{x}\left[t - {k}\right]"

    def _print_WindowMax(self, expr):
        x, k = (self._print(a) for a in expr.args)
        return rf"\max_{{t - {k} \le s \le t}} {x}\left[s\right]"

    def _print_WindowMin(self, expr):
        x, k = (self._print(a) for a in expr.args)
        return rf"\min_{{t - {k} \le s \le t}} {x}\left[s\right]"

    def _print_SumAbove(self, expr):
        x, level = (self._print(a) for a in expr.args)
        return rf"\sum_i \max\left(0, {x} - {level}\right)"

    def _print_KthLargest(self, expr):
        x, k = (self._print(a) for a in expr.args)
        return rf"\operatorname{{large}}_{{{k}}}\left({x}\right)"

    def _print_PerUnit(self, expr):
        return self._print(expr.args[0])       # the unit annotation shows in the result's unit

    _print_PerToken = _print_PerGpu = _print_PerUnit
