"""The explain panel: why the selected scenario performs as it does, in sentences.

A side dock widget (not a tab): the main window puts it in a ``QDockWidget`` and hands it an
:class:`~accelscope.engine.explain.Explanation` for the selected accelerator after each update.
It only lays the sentences out; every number in them comes from the engine.
"""

from __future__ import annotations

import re
from html import escape

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from accelscope.engine.explain import Explanation

EXPLAIN_FONT_POINTS = 12  # readable on a projector, like the plots' type
PLACEHOLDER = "Select an accelerator to see what bounds prefill and decode, and why."
_NUMBER_AND_UNIT = re.compile(r"(\d) (?=[A-Za-zµ×=+÷])")  # "5.33 ms", "3.35 TB/s × 0.85"


def _paragraph(sentence: str) -> str:
    """One sentence, with a number kept on the same line as its unit or operator."""
    return "<p>" + _NUMBER_AND_UNIT.sub(r"\1&nbsp;", escape(sentence)) + "</p>"


def explanation_html(explanation: Explanation) -> str:
    """Simple HTML: the title, then each section's heading and one paragraph per sentence."""
    parts = [f"<h3>{escape(explanation.title)}</h3>"]
    for heading, sentences in explanation.sections:
        parts.append(f"<h4>{escape(heading)}</h4>")
        parts.extend(_paragraph(sentence) for sentence in sentences)
    return "\n".join(parts)


class ExplainPanel(QWidget):
    """A read-only, selectable text view of one :class:`Explanation`."""

    title: str = "Explain"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setReadOnly(True)
        self.browser.setOpenLinks(False)
        font = self.browser.font()
        font.setPointSize(EXPLAIN_FONT_POINTS)
        self.browser.setFont(font)
        self.browser.setPlaceholderText(PLACEHOLDER)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.explanation: Explanation | None = None

    def show_explanation(self, explanation: Explanation) -> None:
        """Replace the text (one setHtml per update); the same explanation again is a no-op."""
        if explanation == self.explanation:
            return
        self.explanation = explanation
        # Keep the reader's place: setHtml would scroll back to the top on every update.
        scroll_bar = self.browser.verticalScrollBar()
        position = scroll_bar.value()
        self.browser.setHtml(explanation_html(explanation))
        scroll_bar.setValue(min(position, scroll_bar.maximum()))

    def clear(self) -> None:
        self.explanation = None
        self.browser.clear()

    def text(self) -> str:
        """What the panel shows, as plain text."""
        return self.browser.toPlainText()
