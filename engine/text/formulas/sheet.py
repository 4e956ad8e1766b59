"""A formula sheet's parts: terms (symbols with their value in this scenario and the controls
that change them), formulas whose value is computed from their template, sections; and the
controls a term can depend on.

A template is written once, in symbols, e.g. ``"{Q_dec}/({beta}·{eta_m})"``: the sheet shows it
as it reads (with each ``{key}`` as its term's symbol, then its value) and :func:`evaluate`
computes the formula's value from it, so what is shown is what is computed.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from html import escape

from ...core.scenario import Scenario

# The ids of the app's controls a term can depend on: the Scenario's fields, the accelerator
# among them (chosen by clicking a plot or in the accelerators list rather than in the panel).
CONTROLS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(Scenario))
CONTROL_LABELS: dict[str, str] = {
    "model": "Model",
    "accelerator": "Accelerator",
    "batch": "Batch",
    "input_len": "Input tokens",
    "output_len": "Output tokens",
    "weight_precision": "Weight precision",
    "activation_precision": "Activation precision",
    "kv_precision": "KV-cache precision",
    "tp": "TP",
    "pp": "PP",
    "ep": "EP",
    "dp": "DP",
    "offload": "Offload",
    "kv_offload": "KV offload",
}

PLACEHOLDER = re.compile(r"\{(\w+)\}")
_TAG = re.compile(r"<[^>]+>")


# ---- evaluating a template ---------------------------------------------------------------------

# Template notation → Python. Powers are written as superscripts (x<sup>n</sup>) or x^n.
_NOTATION = (("·", "*"), ("×", "*"), ("−", "-"), ("⌈", "ceil("), ("⌉", ")"), ("⌊", "floor("), ("⌋", ")"),
             ("<sup>", "**("), ("</sup>", ")"), ("^", "**"), ("√", "sqrt"), ("log₂", "log2"))
_FUNCTIONS = {"ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt, "log2": math.log2, "min": min, "max": max}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


@lru_cache(maxsize=1024)
def _parse(template: str) -> tuple[ast.expr, tuple[str, ...]]:
    """The expression tree of a template and its term keys, the n-th key named ``_n`` in it."""
    keys: dict[str, str] = {}

    def name(match: re.Match) -> str:
        return keys.setdefault(match.group(1), f"_{len(keys)}")

    expression = PLACEHOLDER.sub(name, template)
    for symbol, python in _NOTATION:
        expression = expression.replace(symbol, python)
    return ast.parse(expression, mode="eval").body, tuple(keys)


def _value(node: ast.expr, bound: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_value(node.left, bound), _value(node.right, bound))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand, bound))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and not node.keywords):
        return _FUNCTIONS[node.func.id](*(_value(argument, bound) for argument in node.args))
    raise ValueError(f"not a formula: {ast.unparse(node)}")


def evaluate(template: str, terms: Mapping[str, float] | Iterable[Term]) -> float:
    """The value of a template over its terms (a mapping of key to value, or Terms):
    ``evaluate("{B}·({s_in} + {s_out})", {"B": 8, "s_in": 1024, "s_out": 256}) == 10240``.

    The notation is the sheet's: ``·`` and ``×`` multiply, ``−`` subtracts, ``⌈x⌉``/``⌊x⌋``
    round up/down, ``x<sup>n</sup>`` or ``x^n`` raise, ``√(x)``, ``log₂(x)``, ``min``, ``max``.
    Nothing else is evaluated (no names, attributes or calls beyond these)."""
    values = terms if isinstance(terms, Mapping) else {term.key: term.value for term in terms}
    tree, keys = _parse(template)
    return float(_value(tree, {f"_{index}": float(values[key]) for index, key in enumerate(keys)}))


# ---- the parts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """One symbol of a formula, e.g. B = 8 (batch), with the controls that change it."""

    key: str  # unique within one set of sections, e.g. "batch", "t_m_dec"
    symbol: str  # Unicode with HTML <sub>/<sup>, e.g. "p<sub>w</sub>"
    meaning: str
    value: float  # in SI units (bytes, s, FLOP, FLOP/s, B/s, W, J) or a plain count
    text: str  # value with its unit, for people: "3.35 TB/s", "8 sequences"
    controls: tuple[str, ...]  # of CONTROLS; empty for a constant no control changes
    derived: bool = False  # defined by a formula of these sections (links there, not to a control)

    @property
    def plain_symbol(self) -> str:
        return plain(self.symbol)


@dataclass(frozen=True)
class Formula:
    """``result = template``: a right-hand side over terms, and what it evaluates to.

    The result's value is the template evaluated over the terms (:meth:`evaluated`).
    ``engine_value`` is the engine's own number for the result (None where the engine has no
    such number). A formula without a template quotes the engine.
    """

    name: str
    result: Term
    template: str | None  # e.g. "{Q_dec}/({beta}·{eta_m})"; None: the engine's figure, quoted
    terms: tuple[Term, ...]  # those the template uses, in order of first use
    engine_value: float | None
    engine_text: str = ""  # the engine's number, formatted as the result is
    note: str = ""  # HTML: one sentence on what the engine does beyond the formula
    at_least: float | None = None  # the least the result can be, where the template may go below (a count)

    @property
    def value(self) -> float:
        return self.result.value

    @property
    def quoted(self) -> bool:
        return self.template is None

    def evaluated(self) -> float:
        """The template over its terms (the engine's figure for a quoted formula), at least
        ``at_least``."""
        if self.template is None:
            return self.result.value
        value = evaluate(self.template, self.terms)
        return value if self.at_least is None else max(value, self.at_least)

    @property
    def agrees(self) -> bool:
        """The plugged-in value equals the engine's number (to rounding)."""
        return self.engine_value is None or same(self.value, self.engine_value)

    def expression(self) -> str:
        """The formula in symbols: 't<sub>m</sub> = Q/(β·η<sub>m</sub>)'."""
        if self.template is None:
            return self.result.symbol
        symbols = {term.key: term.symbol for term in self.terms}
        return f"{self.result.symbol} = {PLACEHOLDER.sub(lambda m: symbols[m.group(1)], self.template)}"

    def substituted(self) -> str:
        """The same with this scenario's values: '= 16.1 GB/(3.35 TB/s × 0.85) = 5.65 ms'."""
        if self.template is None:
            return f"= {escape(self.result.text)}"
        if PLACEHOLDER.fullmatch(self.template):  # e.g. TTFT = t_prefill: the value once
            return f"= {escape(self.result.text)}"
        values = {term.key: escape(term.text) for term in self.terms}
        rhs = PLACEHOLDER.sub(lambda m: values[m.group(1)], self.template.replace("·", " × "))
        return f"= {rhs} = {escape(self.result.text)}"

    def plain(self) -> str:
        """Both lines as plain text (subscripts as _x, powers as ^x)."""
        return f"{plain(self.expression())} {plain(self.substituted())}"

    @property
    def controls(self) -> tuple[str, ...]:
        return union(term.controls for term in (self.result, *self.terms))


@dataclass(frozen=True)
class Section:
    key: str  # "memory", "decode", ...
    title: str
    formulas: tuple[Formula, ...]
    notes: tuple[str, ...] = ()  # HTML, one sentence each: what the engine does that no formula shows
    note_controls: tuple[str, ...] = ()  # controls the notes speak of (e.g. TP when there is none)

    @property
    def controls(self) -> tuple[str, ...]:
        return union([*(formula.controls for formula in self.formulas), self.note_controls])

    def formula(self, key: str) -> Formula:
        """The formula whose result term has this key."""
        return next(f for f in self.formulas if f.result.key == key)


@dataclass(frozen=True)
class FormulaSheet:
    title: str
    sections: tuple[Section, ...]

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)

    def formula(self, key: str) -> Formula:
        return next(f for s in self.sections for f in s.formulas if f.result.key == key)

    def formulas(self) -> tuple[Formula, ...]:
        return tuple(f for s in self.sections for f in s.formulas)


def union(groups: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """The controls of several groups, once each, in the order of CONTROLS."""
    seen: dict[str, None] = {}
    for group in groups:
        for control in group:
            seen.setdefault(control, None)
    return tuple(c for c in CONTROLS if c in seen)


def same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def plain(html: str) -> str:
    text = _TAG.sub("", html.replace("<sub>", "_").replace("<sup>", "^"))
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
