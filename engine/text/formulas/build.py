"""Building a sheet: the sections register themselves with what they need, and a
:class:`Builder` collects their terms and formulas in an order that resolves those needs.

A section is a function ``build(sheet, ctx)`` registered with ``@section(key, title,
needs=(...))``: it adds terms and formulas to the sheet and returns its notes (HTML sentences),
or None when it has nothing to show (no experts in a dense model). ``needs`` names the sections
whose terms its templates use; they are built first. Sections are shown in the order they are
listed in ``sections.SHOWN`` (the reference model's order), built in the order their needs
resolve to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..context import Context
from .sheet import PLACEHOLDER, Formula, Section, Term, evaluate, union


class Builder:
    """Collects terms and formulas; a formula's result becomes a term later formulas use."""

    def __init__(self) -> None:
        self.terms: dict[str, Term] = {}
        self.formulas: dict[str, list[Formula]] = {}
        self.building = ""  # the section being built
        self.section = ""  # where new formulas are shown: the section being built, unless shown_in says
        self._origin: dict[int, str] = {}  # the section that built each term, by the term's id

    def leaf(self, key: str, symbol: str, meaning: str, value: float, text: str, *controls: str) -> str:
        """A term no formula of the sheet defines: a control, a catalog figure, a constant or
        a fact of the engine's; the first definition of a key stands."""
        if key not in self.terms:
            self._define(Term(key, symbol, meaning, float(value), text, tuple(controls)))
        return key

    def value(self, key: str) -> float:
        return self.terms[key].value

    def evaluate(self, template: str) -> float:
        """A template over the sheet's terms (for a note that states one)."""
        return evaluate(template, {key: term.value for key, term in self.terms.items()})

    def derive(
        self,
        name: str,
        key: str,
        symbol: str,
        meaning: str,
        template: str,
        text: Callable[[float], str],
        engine_value: float | None = None,
        note: str = "",
        at_least: float | None = None,
    ) -> Formula:
        """A formula whose result is a new term, valued by its template; its controls are those
        of its inputs."""
        used = list(dict.fromkeys(PLACEHOLDER.findall(template)))
        inputs = tuple(self.terms[k] for k in used)
        value = evaluate(template, inputs)
        if at_least is not None:
            value = max(value, at_least)
        result = Term(key, symbol, meaning, value, text(value), union(t.controls for t in inputs), True)
        self._define(result)
        engine_text = text(engine_value) if engine_value is not None else ""
        return self._add(Formula(name, result, template, inputs, engine_value, engine_text, note, at_least))

    def quote(
        self, name: str, key: str, symbol: str, meaning: str, engine_value: float, text: Callable[[float], str],
        controls: tuple[str, ...], note: str,
    ) -> Formula:
        """The engine's figure where no short formula reproduces it; ``note`` says why."""
        result = Term(key, symbol, meaning, float(engine_value), text(engine_value), union([controls]), True)
        self._define(result)
        return self._add(Formula(name, result, None, (), engine_value, result.text, note))

    @contextmanager
    def shown_in(self, section: str) -> Iterator[None]:
        """Formulas built here are shown in ``section`` (built with another that needs them)."""
        built_in, self.section = self.section, section
        try:
            yield
        finally:
            self.section = built_in

    def origin(self, term: Term) -> str:
        """The section that built ``term`` (a later term may take its key: P_dec is a decode
        pass's positions, then its power)."""
        return self._origin[id(term)]

    def _define(self, term: Term) -> None:
        self.terms[term.key] = term
        self._origin[id(term)] = self.building

    def _add(self, formula: Formula) -> Formula:
        self.formulas.setdefault(self.section, []).append(formula)
        return formula


# ---- the sections --------------------------------------------------------------------------------

Notes = tuple[str, ...] | None
Build = Callable[[Builder, Context], Notes]


@dataclass(frozen=True)
class SectionKind:
    key: str
    title: str | None  # None: terms only, never shown (the inputs)
    needs: tuple[str, ...]
    build: Build
    note_controls: tuple[str, ...] = ()  # controls the notes speak of


SECTIONS: dict[str, SectionKind] = {}  # by key, as registered


def section(key: str, title: str | None, needs: tuple[str, ...] = (),
            note_controls: tuple[str, ...] = ()) -> Callable[[Build], Build]:
    """Register a section's ``build(sheet, ctx) -> notes`` (None: not shown this time)."""

    def register(build: Build) -> Build:
        if key in SECTIONS:
            raise ValueError(f"section {key!r} is registered twice")
        SECTIONS[key] = SectionKind(key, title, tuple(needs), build, tuple(note_controls))
        return build

    return register


def shown_order() -> list[SectionKind]:
    """Every registered section, in the order the sheet shows them."""
    from .sections import SHOWN

    if set(SHOWN) != set(SECTIONS):
        raise ValueError(f"sections shown {sorted(SHOWN)} are not those registered {sorted(SECTIONS)}")
    return [SECTIONS[key] for key in SHOWN]


def build_order(kinds: list[SectionKind]) -> list[SectionKind]:
    """Each section after those it needs; otherwise in the order given."""
    keys = {kind.key for kind in kinds}
    for kind in kinds:
        if not set(kind.needs) <= keys:
            raise ValueError(f"section {kind.key!r} needs unknown sections {sorted(set(kind.needs) - keys)}")
    order: list[SectionKind] = []
    done: set[str] = set()
    while len(order) < len(kinds):
        ready = next((k for k in kinds if k.key not in done and set(k.needs) <= done), None)
        if ready is None:
            raise ValueError(f"sections need each other: {sorted(keys - done)}")
        order.append(ready)
        done.add(ready.key)
    return order


def build(ctx: Context) -> tuple[Builder, dict[str, Notes]]:
    """The sheet's terms and formulas for one evaluated scenario, and each section's notes,
    built in the order of the sections' needs."""
    sheet = Builder()
    notes: dict[str, Notes] = {}
    for kind in build_order(shown_order()):
        sheet.building = sheet.section = kind.key
        notes[kind.key] = kind.build(sheet, ctx)
    return sheet, notes


def build_sections(ctx: Context) -> tuple[Section, ...]:
    """Every section of the sheet for one evaluated scenario, shown in the order of
    ``sections.SHOWN``."""
    sheet, notes = build(ctx)
    return tuple(
        Section(kind.key, kind.title, tuple(sheet.formulas.get(kind.key, ())), notes[kind.key], kind.note_controls)
        for kind in shown_order()
        if kind.title is not None and notes[kind.key] is not None
    )
