"""The base of the analysis tabs (scaling, parallelism, regimes, memory tiers).

Unlike the plot tabs, which draw the Frame's arrays, an analysis tab asks the engine for a
study of its own (a scaling comparison, a regime grid, an offload sweep) that can take tens of
milliseconds. So it never computes inside ``update_frame``: it keeps the latest frame and
computes once the controls have been still for ``SETTLE_MS`` — and only while it is visible —
so dragging a slider stays smooth and hidden tabs cost nothing.

Subclasses implement :meth:`compute` (engine calls only, returning the study) and
:meth:`show_study` (draw it), and :meth:`table` (the study as an engine Table, for CSV
export). :meth:`refresh_now` computes and draws at once (tests, export).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.table import Table
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame

from .base import Panel

SETTLE_MS = 150  # a study waits for the controls to rest this long


class AnalysisPanel(Panel):
    # A setting of the tab's own that belongs to the scenario (a Workspace view option, e.g.
    # ("far_tier", id)): the main window puts it into the workspace, so presets keep it.
    view_option_changed = Signal(str, object)

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self._engine = engine
        self.study: object | None = None
        self.study_frame: Frame | None = None  # the frame the study was computed for
        self.study_seconds = 0.0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._settled)

    @property
    def engine(self) -> Engine:
        """The engine of the last frame (it knows the models imported since the tab was made)."""
        return self.frame.engine if self.frame is not None and self.frame.engine is not None else self._engine

    # -- what subclasses provide --------------------------------------------------------------

    def compute(self, frame: Frame) -> object:
        """The study for the frame's workspace (engine calls only)."""
        raise NotImplementedError

    def show_study(self, study: object) -> None:
        raise NotImplementedError

    def table(self) -> Table | None:
        """The study as a table with units in its headers (None before the first study)."""
        raise NotImplementedError

    def inputs_changed(self, old: Frame | None, new: Frame) -> bool:
        """Whether the study depends on what changed; by default, on anything."""
        return old is None or old.workspace != new.workspace

    # -- plumbing --------------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        if not self.inputs_changed(self.study_frame, frame):
            return
        if self.isVisible():
            # Restarted by every change: computes once the hand rests. The interval is given each
            # time: showEvent's start(0) would otherwise stay the timer's interval.
            self._timer.start(SETTLE_MS)
        # Hidden: nothing now; showEvent or refresh_now brings it up to date.

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.frame is not None and self.inputs_changed(self.study_frame, self.frame):
            self._timer.start(0)

    def _settled(self) -> None:
        # A tab left before its timer fired computes when it is shown again, not in the background.
        if self.frame is not None and self.isVisible():
            self.refresh_now()

    def hold(self) -> None:
        """Drop a pending computation; showing the tab or refresh_now brings the study up to date."""
        self._timer.stop()

    def refresh_now(self) -> None:
        """Compute the study for the latest frame and draw it, now."""
        self._timer.stop()
        frame = self.frame
        if frame is None:
            return
        started = time.perf_counter()
        self.study = self.compute(frame)
        self.study_seconds = time.perf_counter() - started
        self.study_frame = frame
        self.show_study(self.study)
        self.prepare_paint()

    def pending(self) -> bool:
        return self._timer.isActive()
