"""Compare: the current scenario pinned as A, drawn behind every later one (B).

:class:`Comparison` holds A's Frame while it is pinned; every plot then draws A as ghosts
behind B, and the explanation opens with B's deltas against A.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.compare import comparison
from accelscope.engine.text.explain import Explanation

from .controller import Controller


class Comparison(QObject):
    changed = Signal(object)  # A's Frame when pinned, None when unpinned

    def __init__(self, controller: Controller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.frame: Frame | None = None  # scenario A, while pinned

    def toggle(self) -> None:
        self.pin(self.frame is None)

    def pin(self, on: bool) -> None:
        """Pin the current scenario as A (its latest frame, with any pending change computed
        first), or unpin it."""
        self.controller.throttle.flush()
        self.frame = self.controller.last_frame if on else None
        self.changed.emit(self.frame)

    def with_deltas(self, explanation: Explanation, frame: Frame, accelerator: str) -> Explanation:
        """``explanation`` of B on ``accelerator``, led by its deltas against A while A is pinned."""
        a = self.frame
        if a is None:
            return explanation
        a_result = a.result(accelerator) if accelerator in a.accelerators else None
        deltas = comparison(a.workspace, a_result, frame.result(accelerator))
        return Explanation(explanation.title, deltas.sections + explanation.sections)
