"""Help → Formulas: the physics of the selected scenario, with its numbers plugged in.

A non-modal window over a read-only text view. The formulas, their values and the links come
from :mod:`accelscope.engine.text.formulas`; this window only shows them, keeps the reader's place
as they update, follows links to other formulas, and asks the main window (through
``control_requested``) to focus the control a term links to.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.formulas import FormulaSheet, formula_sheet, formulas_html

FORMULAS_FONT_POINTS = 12  # as the explain panel: readable on a projector
PLACEHOLDER = "Show at least one accelerator to see the formulas of the scenario on it."
CONTROL_SCHEME = "control"


class FormulasWindow(QWidget):
    """A separate window (not a dialog that blocks the app) showing one :class:`FormulaSheet`."""

    control_requested = Signal(str)  # a control id of accelscope.engine.text.formulas.CONTROLS

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.engine = engine
        self.setWindowTitle("Formulas")
        self.setObjectName("formulas-window")
        self.resize(820, 900)
        self.browser = QTextBrowser(self)
        self.browser.setReadOnly(True)
        self.browser.setOpenLinks(False)  # links are handled here: controls and in-page formulas
        self.browser.setAccessibleName("Formulas")
        font = self.browser.font()
        font.setPointSize(FORMULAS_FONT_POINTS)
        self.browser.setFont(font)
        self.browser.setPlaceholderText(PLACEHOLDER)
        self.browser.anchorClicked.connect(self._link_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.close)
        self.sheet: FormulaSheet | None = None
        self._pending: tuple[Frame, str] | None = None  # the latest frame, while the window is hidden

    # -- updates -------------------------------------------------------------------------------

    def update_frame(self, frame: Frame | None, selected_accelerator: str) -> None:
        """Show the formulas of ``frame``'s scenario on the selected accelerator (the first shown
        one if it is not shown). While hidden, only the latest frame is kept, for when it shows."""
        if frame is None or not frame.accelerators:
            self._pending = None
            self.sheet = None
            self.browser.clear()
            self.setWindowTitle("Formulas")
            return
        if not self.isVisible():
            self._pending = (frame, selected_accelerator)
            return
        self._pending = None
        accelerator = selected_accelerator if selected_accelerator in frame.accelerators else frame.accelerators[0]
        self.show_sheet(formula_sheet(frame.engine or self.engine, frame, accelerator))

    def show_sheet(self, sheet: FormulaSheet) -> None:
        """Replace the text (one setHtml); the same sheet again is a no-op."""
        if sheet == self.sheet:
            return
        self.sheet = sheet
        self.setWindowTitle(f"Formulas — {sheet.title}")
        # Keep the reader's place: setHtml scrolls back to the top.
        scroll_bar = self.browser.verticalScrollBar()
        position = scroll_bar.value()
        self.browser.setHtml(formulas_html(sheet))
        scroll_bar.setValue(min(position, scroll_bar.maximum()))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._pending is not None:
            frame, selected = self._pending
            self.update_frame(frame, selected)

    def text(self) -> str:
        """What the window shows, as plain text."""
        return self.browser.toPlainText()

    # -- links ---------------------------------------------------------------------------------

    def _link_clicked(self, url: QUrl) -> None:
        if url.scheme() == CONTROL_SCHEME:
            self.control_requested.emit(url.path())
        elif url.hasFragment():
            self.browser.scrollToAnchor(url.fragment())
