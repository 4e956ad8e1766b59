"""The sheet as simple HTML: symbols link to ``control:<id>`` (the control that changes them)
or ``#f-<key>`` (the formula that defines them)."""

from __future__ import annotations

from html import escape

from .sheet import CONTROL_LABELS, PLACEHOLDER, Formula, FormulaSheet, Section, Term


def _symbol_html(term: Term) -> str:
    if term.derived:
        return f'<a href="#f-{term.key}">{term.symbol}</a>'
    if term.controls:
        return f'<a href="control:{term.controls[0]}">{term.symbol}</a>'
    return term.symbol


def _definition_html(term: Term) -> str:
    """'<a href="control:batch">B = 8</a>: batch: ... (Batch)' — the link goes where the value is set."""
    text = f"{term.symbol} = {escape(term.text)}"
    if term.derived:
        head = f'<a href="#f-{term.key}">{text}</a>'
    elif term.controls:
        head = f'<a href="control:{term.controls[0]}">{text}</a>'
    else:
        head = text
    if term.derived:
        tail = ""
    elif term.controls:
        tail = " — set by " + ", ".join(
            f'<a href="control:{c}">{escape(CONTROL_LABELS[c])}</a>' for c in term.controls
        )
    else:
        tail = " — a constant"
    return f"<li>{head}: {term.meaning}{tail}</li>"


def formula_html(formula: Formula, defined: set[str] | None = None) -> str:
    """One formula: its name, the formula in symbols, the same with numbers, and the terms not
    in ``defined`` (those listed earlier in the section), which it then adds to ``defined``."""
    defined = set() if defined is None else defined
    parts = [f'<a name="f-{formula.result.key}"></a><p><b>{escape(formula.name)}</b></p>']
    if formula.quoted:
        parts.append(f"<p>&nbsp;&nbsp;{formula.result.symbol} = {escape(formula.result.text)} "
                     "(as the engine computes it)</p>")
    else:
        symbols = {term.key: _symbol_html(term) for term in formula.terms}
        rhs = PLACEHOLDER.sub(lambda m: symbols[m.group(1)], formula.template)
        parts.append(f"<p>&nbsp;&nbsp;{formula.result.symbol} = {rhs}</p>")
        parts.append(f"<p>&nbsp;&nbsp;{formula.substituted()}</p>")
    if formula.note:
        parts.append(f"<p><i>{formula.note}</i></p>")
    if not formula.agrees:
        parts.append(f"<p><i>The engine's own figure is {escape(formula.engine_text)}: it does more here than this "
                     "formula shows.</i></p>")
    new_terms = [term for term in formula.terms if term.key not in defined]
    if new_terms:
        parts.append("<ul>" + "".join(_definition_html(term) for term in new_terms) + "</ul>")
    defined.update(term.key for term in formula.terms)
    defined.add(formula.result.key)
    return "\n".join(parts)


def formulas_html(sections: tuple[Section, ...] | FormulaSheet, title: str | None = None) -> str:
    """Plain, readable HTML: a heading per section, each formula in symbols and with numbers,
    and its terms listed with links to the controls that change them."""
    if isinstance(sections, FormulaSheet):
        title = title or sections.title
        sections = sections.sections
    parts = [f"<h2>{escape(title)}</h2>"] if title else []
    parts.append("<p>Click a symbol to go to the control that changes it, or to the formula that defines it.</p>")
    for section in sections:
        parts.append(f'<a name="s-{section.key}"></a><h3>{escape(section.title)}</h3>')
        parts.extend(f"<p>{note}</p>" for note in section.notes)
        if section.note_controls:
            links = ", ".join(f'<a href="control:{c}">{escape(CONTROL_LABELS[c])}</a>' for c in section.note_controls)
            parts.append(f"<p>Set by {links}.</p>")
        defined: set[str] = set()  # each term is listed once per section, where it first appears
        parts.extend(formula_html(formula, defined) for formula in section.formulas)
    return "\n".join(parts)
