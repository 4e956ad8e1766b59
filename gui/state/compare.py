"""Compare: the current scenario pinned as A, drawn behind every later one (B).

:class:`Comparison` holds A's Frame while it is pinned; every plot then draws A as ghosts
behind B, and the explanation opens with B's deltas against A. A is unpinned when B stops being
a variation of it: another model, or a whole scenario loaded (a preset, a Model vs paper row).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.compare import comparison
from accelscope.engine.text.explain import Explanation

from .controller import Controller


class Comparison(QObject):
    changed = Signal(object)  # A's Frame when pinned, None when unpinned
    message = Signal(str)  # for the status bar

    def __init__(self, controller: Controller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.frame: Frame | None = None  # scenario A, while pinned
        controller.workspace_changed.connect(self._follow_model)

    def toggle(self) -> None:
        self.pin(self.frame is None)

    def pin(self, on: bool) -> None:
        """Pin the current scenario as A (its latest frame, with any pending change computed
        first), or unpin it."""
        self.controller.throttle.flush()
        self.frame = self.controller.last_frame if on else None
        self.changed.emit(self.frame)

    def release(self, reason: str) -> None:
        """Unpin A, if pinned, because ``reason`` (a whole scenario was loaded), and say so."""
        if self.frame is None:
            return
        self.pin(False)
        self.message.emit(f"Unpinned A: {reason}. Ctrl+K pins the scenario shown now.")

    def _follow_model(self, workspace: Workspace) -> None:
        a = self.frame
        if a is None or workspace.scenario.model == a.workspace.scenario.model:
            return
        self.frame = None  # no flush of the pending change: it is B's
        self.changed.emit(None)
        self.message.emit(f"Unpinned A: the model changed ({self._model_name(a.workspace.scenario.model)} → "
                          f"{self._model_name(workspace.scenario.model)}); two models' outputs are not a "
                          "before and after. Ctrl+K pins the scenario shown now.")

    def _name_of(self, field: str, catalog_id: str) -> str:
        """A model's or an accelerator's name as the legends give it (an imported or synthetic
        model by its name, not its generated id)."""
        if field == "model":
            return self._model_name(catalog_id)
        accelerator = self.controller.engine.catalog.accelerators.get(catalog_id)
        return accelerator.name if accelerator is not None else catalog_id

    def _model_name(self, model_id: str) -> str:
        try:
            return self.controller.engine.model(model_id).name
        except (AccelscopeError, OSError):
            return model_id

    def with_deltas(self, explanation: Explanation, frame: Frame, accelerator: str) -> Explanation:
        """``explanation`` of B on ``accelerator``, led by its deltas against A while A is pinned."""
        a = self.frame
        if a is None:
            return explanation
        a_result = a.result(accelerator) if accelerator in a.accelerators else None
        deltas = comparison(a.workspace, a_result, frame.result(accelerator), self._name_of)
        return Explanation(explanation.title, deltas.sections + explanation.sections)
