"""Undo and redo of scenario changes (Edit → Undo, Ctrl+Z; Redo, Ctrl+Shift+Z).

A step is what the window shows once the controls come to rest (:data:`REST_MS` after the last
change): a slider dragged through forty values is one step, and so is a preset load, which
undo takes back to the edits it replaced, with their preset and unsaved mark. Looking at
another tab is no step. Undo and redo put the scenario back on the tab shown now.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from .presets import PresetFiles, Shown

REST_MS = 600
LIMIT = 100  # steps kept


class History(QObject):
    changed = Signal()  # what can be undone or redone changed
    message = Signal(str)  # for the status bar

    def __init__(self, presets: PresetFiles, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.presets = presets
        self._state: Shown = presets.shown()  # the last step
        self._undo: list[Shown] = []
        self._redo: list[Shown] = []
        self._restoring = False
        self._rest = QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.setInterval(REST_MS)
        self._rest.timeout.connect(self.commit)
        presets.controller.workspace_changed.connect(self._changed)

    def _changed(self, _workspace: object) -> None:
        if not self._restoring:
            self._rest.start()

    def commit(self) -> None:
        """Make what is shown a step now, if it differs from the last (tests, and before undo)."""
        self._rest.stop()
        shown = self.presets.shown()
        if shown.same_as(self._state):
            return
        self._undo = [*self._undo, self._state][-LIMIT:]
        self._redo.clear()
        self._state = shown
        self.changed.emit()

    def can_undo(self) -> bool:
        return bool(self._undo) or not self.presets.shown().same_as(self._state)

    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> None:
        self.commit()
        if not self._undo:
            self.message.emit("Nothing to undo")
            return
        self._redo.append(self._state)
        self._go(self._undo.pop())

    def redo(self) -> None:
        self.commit()
        if not self._redo:
            self.message.emit("Nothing to redo")
            return
        self._undo.append(self._state)
        self._go(self._redo.pop())

    def _go(self, shown: Shown) -> None:
        self._state = shown
        self._restoring = True
        try:
            self.presets.show_again(shown)
        finally:
            self._restoring = False
        self.changed.emit()
