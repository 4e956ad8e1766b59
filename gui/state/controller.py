"""Owns the workspace and turns its changes into frames, without ever queueing stale work.

Every control change replaces the workspace and asks for an update. Updates are throttled:
the first change answers at once, further changes within the interval collapse into one
update that runs when it ends, so the last value always lands and a drag never builds a
backlog. A full update (one kernel call and the repaint) takes a few milliseconds, so it
runs on the GUI thread; only the first compilation of the kernels runs on a worker thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.model import ModelArch, weight_precision_for_model
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.serving.run import warm_up_simulator
from accelscope.engine.physics.frame import Frame, compute_frame

UPDATE_INTERVAL_MS = 16  # one frame at 60 Hz


class Throttle(QObject):
    """Calls ``callback`` at most once per interval: at once when idle (leading edge), and
    once more at the end of the interval if requests arrived meanwhile (trailing edge)."""

    def __init__(self, interval_ms: int, callback: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._callback = callback
        self._pending = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)

    def request(self) -> None:
        if self._timer.isActive():
            self._pending = True
            return
        self._timer.start()
        self._callback()

    def flush(self) -> None:
        """Run a pending call now (tests, and before a preset is saved)."""
        if self._pending:
            self._pending = False
            self._timer.stop()
            self._callback()

    @property
    def pending(self) -> bool:
        return self._pending

    def _on_timeout(self) -> None:
        if self._pending:
            self._pending = False
            self._timer.start()
            self._callback()


class Controller(QObject):
    frame_ready = Signal(object)  # Frame
    workspace_changed = Signal(object)  # Workspace
    engine_ready = Signal()
    failed = Signal(str)  # a message for the status bar
    _warmed = Signal(object)  # from the warm-up thread: None or an error message

    def __init__(self, engine: Engine, workspace: Workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._workspace = workspace
        self.ready = False
        self.last_frame: Frame | None = None
        self.throttle = Throttle(UPDATE_INTERVAL_MS, self.update_now, self)
        self._warmed.connect(self._on_warmed)

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def set_workspace(self, workspace: Workspace) -> None:
        if workspace == self._workspace:
            return
        # A frame does not depend on which tab is shown: the window draws the newly shown tab
        # from the last frame, so switching tabs costs one page paint, not a recompute as well.
        view_only = workspace.with_changes(view=self._workspace.view) == self._workspace
        self._workspace = workspace
        self.workspace_changed.emit(workspace)
        if not view_only:
            self.request_update()

    def use_models(self, *models: ModelArch) -> None:
        """Compute with an engine that also knows ``models`` (imported or synthetic)."""
        self.engine = self.engine.with_models(*models)

    def set_field(self, field: str, value: object) -> None:
        changes = {field: value}
        if field == "model" and value != self._workspace.scenario.model:
            # A model published in its own weight format starts in it (the user may change it).
            changes["weight_precision"] = self._weight_precision_for(str(value))
        self.set_workspace(self._workspace.with_scenario(**changes))

    def _weight_precision_for(self, model_id: str) -> str:
        current = self._workspace.scenario.weight_precision
        try:
            new = self.engine.model(model_id)
        except (AccelscopeError, OSError):
            return current  # an unknown id or unreadable file: update_now says why
        try:
            previous = self.engine.model(self._workspace.scenario.model)
        except (AccelscopeError, OSError):
            previous = None
        return weight_precision_for_model(new, current, previous)

    def set_shown(self, shown: tuple[str, ...]) -> None:
        selected = self._workspace.selected
        if shown and selected not in shown:
            selected = shown[0]
        self.set_workspace(self._workspace.with_changes(shown=tuple(shown)).with_scenario(accelerator=selected))

    def select(self, accelerator_id: str) -> None:
        self.set_field("accelerator", accelerator_id)

    def select_neighbour(self, step: int) -> None:
        """Select the next (``step`` 1) or previous (-1) shown accelerator, for the keyboard."""
        workspace = self._workspace
        if not workspace.shown:
            return
        index = 0
        if workspace.selected in workspace.shown:
            index = (workspace.shown.index(workspace.selected) + step) % len(workspace.shown)
        self.select(workspace.shown[index])

    def set_serving(self, name: str, value: object) -> bool:
        """Change one serving setting (Serving tab); a value the spec refuses leaves the
        workspace as it is and says why in the status bar. Returns whether it was taken."""
        try:
            serving = self._workspace.serving.with_changes(**{name: value}).validate()
        except AccelscopeError as error:
            self.failed.emit(str(error))
            return False
        self.set_workspace(self._workspace.with_changes(serving=serving))
        return True

    def set_option(self, name: str, value: object) -> None:
        """An analysis tab's own setting (e.g. the far tier) is part of the workspace: presets keep it."""
        self.set_workspace(self._workspace.with_options(**{name: value}))

    def request_update(self) -> None:
        if self.ready:
            self.throttle.request()

    def update_now(self) -> None:
        try:
            scenario = self.engine.resolve(self._workspace.scenario)
        except AccelscopeError as error:
            self.failed.emit(str(error))
            return
        frame = compute_frame(self.engine, self._workspace.with_changes(scenario=scenario))
        self.last_frame = frame
        self.frame_ready.emit(frame)

    # -- first start -----------------------------------------------------------------------

    def start(self, synchronous: bool = False) -> None:
        """Compile (or load from the on-disk cache) the kernels off the GUI thread, then draw
        the first frame. ``synchronous`` is for tests and the headless report."""
        if synchronous:
            self.engine.warm_up()
            self._on_warmed(None)
            return
        threading.Thread(target=self._warm_up, name="accelscope-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self.engine.warm_up()
        except Exception as error:  # noqa: BLE001 — reported in the window, never a crash
            self._warmed.emit(f"the engine failed to start: {error}")
            return
        self.warm_up_seconds = time.perf_counter() - started
        self._warmed.emit(None)
        # Then the serving simulator, before the Serving tab first asks for it (the tab says it is
        # being prepared meanwhile).
        try:
            warm_up_simulator()
        except Exception:  # noqa: BLE001 — the tab's first run compiles it, and reports what fails
            pass

    def _on_warmed(self, problem: object) -> None:
        if problem is not None:
            self.failed.emit(str(problem))
            return
        self.ready = True
        self.engine_ready.emit()
        self.update_now()
