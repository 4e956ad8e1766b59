"""A control's label that explains what its control does, as the control's own tool tip does."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QWidget


class BuddyLabel(QLabel):
    """A label for ``buddy``: its underlined letter focuses the buddy, and hovering it shows the
    buddy's tool tip, kept the same when the buddy's changes (e.g. EP's, with the model)."""

    def __init__(self, text: str, buddy: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setBuddy(buddy)
        self.setToolTip(buddy.toolTip())
        buddy.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTipChange and watched is self.buddy():
            self.setToolTip(self.buddy().toolTip())
        return False
