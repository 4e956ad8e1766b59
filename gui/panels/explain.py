"""The explain panel: why the selected scenario performs as it does, in sentences.

A side dock widget (not a tab): the main window puts it in a ``QDockWidget`` and hands it an
:class:`~accelscope.engine.text.explain.Explanation` for the selected accelerator after each update.
It only lays the sentences out; every number in them comes from the engine.
"""

from __future__ import annotations

import re
from html import escape

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from accelscope.engine.text.explain import Explanation

EXPLAIN_FONT_POINTS = 12  # readable on a projector, like the plots' type
PLACEHOLDER = "Select an accelerator to see what bounds prefill and decode, and why."
_NUMBER_AND_UNIT = re.compile(r"(\d) (?=[A-Za-zµ×=+÷])")  # "5.33 ms", "3.35 TB/s × 0.85"
NO_BREAK_SPACE = "\u00a0"


def _paragraph(sentence: str) -> str:
    """One sentence, with a number kept on the same line as its unit or operator."""
    return "<p>" + _NUMBER_AND_UNIT.sub(r"\1&nbsp;", escape(sentence)) + "</p>"


def explanation_blocks(explanation: Explanation) -> list[tuple[str, str]]:
    """The paragraphs of the text in order, as (kind, plain text): the title, then each
    section's heading and its sentences (a number kept on the same line as its unit)."""
    blocks = [("title", explanation.title)]
    for heading, sentences in explanation.sections:
        blocks.append(("heading", heading))
        blocks.extend(("sentence", _NUMBER_AND_UNIT.sub("\\1" + NO_BREAK_SPACE, sentence)) for sentence in sentences)
    return blocks


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
        # Opaque: when the text's height changes, the scroll bar repaints, and without this
        # its repaint would repaint the dock widget beneath it too.
        self.setAutoFillBackground(True)
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
        self._blocks: list[tuple[str, str]] | None = None  # what the document holds, paragraph by paragraph

    def show_explanation(self, explanation: Explanation) -> None:
        """Show an explanation; the same explanation again is a no-op.

        A control change usually changes numbers, not the shape of the text: then only the
        paragraphs whose text changed are rewritten in place, in one edit. The document lays
        out just those again and the view keeps its place, where setHtml parsed and laid out
        the whole text, scrolled to the top and back (two scroll-bar repaints) and repainted
        it all. A text of another shape is set whole."""
        if explanation == self.explanation:
            return
        self.explanation = explanation
        blocks = explanation_blocks(explanation)
        if self._blocks is not None and [kind for kind, _ in blocks] == [kind for kind, _ in self._blocks]:
            self._rewrite(blocks)
        else:
            self._set_whole(explanation, blocks)

    def _set_whole(self, explanation: Explanation, blocks: list[tuple[str, str]]) -> None:
        # Keep the reader's place: setHtml would scroll back to the top on every update.
        scroll_bar = self.browser.verticalScrollBar()
        position = scroll_bar.value()
        self.browser.setHtml(explanation_html(explanation))
        scroll_bar.setValue(min(position, scroll_bar.maximum()))
        # In-place rewrites need one document block per paragraph; otherwise always set it whole.
        self._blocks = blocks if self.browser.document().blockCount() == len(blocks) else None

    def _rewrite(self, blocks: list[tuple[str, str]]) -> None:
        """Replace the text of the paragraphs that changed, each keeping its character format
        (a heading stays a heading)."""
        document = self.browser.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        for number, ((_kind, text), (_old_kind, old_text)) in enumerate(zip(blocks, self._blocks, strict=True)):
            if text == old_text:
                continue
            block = document.findBlockByNumber(number)
            first_character = QTextCursor(block)
            first_character.movePosition(QTextCursor.MoveOperation.NextCharacter)
            character_format = first_character.charFormat()
            cursor.setPosition(block.position())
            cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(text, character_format)
        cursor.endEditBlock()
        self._blocks = blocks

    def clear(self) -> None:
        self.explanation = None
        self._blocks = None
        self.browser.clear()

    def text(self) -> str:
        """What the panel shows, as plain text."""
        return self.browser.toPlainText()
