"""What :func:`~accelscope.engine.text.explain.explain` returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    """A title and sections of sentences, e.g. ("Decode", ("Each decode step reads ...", ...))."""

    title: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]

    def section(self, heading: str) -> tuple[str, ...]:
        """The sentences of one section; empty if there is no such section."""
        return next((sentences for name, sentences in self.sections if name == heading), ())

    def plain_text(self) -> str:
        parts = [self.title]
        for heading, sentences in self.sections:
            parts.append("")
            parts.append(heading)
            parts.extend(sentences)
        return "\n".join(parts) + "\n"
