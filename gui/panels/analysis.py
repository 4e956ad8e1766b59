"""The base of the analysis tabs (scaling, parallelism, regimes, memory tiers).

Unlike the plot tabs, which draw the Frame's arrays, an analysis tab asks the engine for a
study of its own (a scaling comparison, a regime grid, an offload sweep) that can take tens of
milliseconds. So it never computes inside ``update_frame``: it keeps the latest frame and
computes once the controls have been still for ``SETTLE_MS`` — and only while it is visible —
so dragging a slider stays smooth and hidden tabs cost nothing.

The study is the engine's (``engine.studies.analysis``): a function of the engine and the
workspace that declares the Scenario fields and view options it reads. A tab recomputes only
when one of those (or the engine) changes, and its tables are the study's, so the same CSVs
can be written without the app. Subclasses name their study (:attr:`study_view`), draw it
(:meth:`show_study`) and, where the tab keeps a setting of its own, put it into the workspace
the study sees (:meth:`study_workspace`). :meth:`refresh_now` computes and draws at once
(tests, export).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.table import Table
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.analysis import ANALYSIS_STUDIES, study_inputs, study_tables

from .base import Panel

SETTLE_MS = 150  # a study waits for the controls to rest this long


class AnalysisPanel(Panel):
    study_view = ""  # the key of the tab's study in ANALYSIS_STUDIES

    # A setting of the tab's own that belongs to the scenario (a Workspace view option, e.g.
    # ("far_tier", id)): the main window puts it into the workspace, so presets keep it.
    view_option_changed = Signal(str, object)

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self._engine = engine
        self.study: object | None = None
        self.study_frame: Frame | None = None  # the frame the study was computed for
        self.study_seconds = 0.0
        self._study_inputs: tuple | None = None  # what the study was computed from (study_inputs)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._settled)

    @property
    def engine(self) -> Engine:
        """The engine of the last frame (it knows the models imported since the tab was made)."""
        return self.frame.engine if self.frame is not None and self.frame.engine is not None else self._engine

    # -- what subclasses provide --------------------------------------------------------------

    def show_study(self, study: object) -> None:
        raise NotImplementedError

    def study_workspace(self, frame: Frame) -> Workspace:
        """The workspace the study is computed for: the frame's, with the tab's own setting
        where the tab keeps one ahead of the workspace (the user changed it; the main window
        stores it next)."""
        return frame.workspace

    # -- the study -----------------------------------------------------------------------------

    def compute(self, frame: Frame) -> object:
        """The study for the frame's workspace (engine calls only)."""
        return ANALYSIS_STUDIES[self.study_view].run(self.engine, self.study_workspace(frame))

    def study_inputs(self, frame: Frame) -> tuple:
        """What the study is a function of: the engine, and the workspace's values of the fields
        and options the study declares."""
        engine = frame.engine if frame.engine is not None else self._engine
        return engine, study_inputs(ANALYSIS_STUDIES[self.study_view].depends_on, self.study_workspace(frame))

    def inputs_changed(self, old: Frame | None, new: Frame) -> bool:
        """Whether the study must be computed again for ``new``: only when one of its inputs changed."""
        return old is None or self._study_inputs != self.study_inputs(new)

    def tables(self) -> dict[str, Table]:
        """The study's tables with units in their headers, by name ({} before the first study)."""
        return study_tables(self.study_view, self.study)

    def table(self) -> Table | None:
        """The study's first table (None before the first study)."""
        return next(iter(self.tables().values()), None)

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
        self._study_inputs = self.study_inputs(frame)
        self.study = self.compute(frame)
        self.study_seconds = time.perf_counter() - started
        self.study_frame = frame
        self.show_study(self.study)
        self.prepare_paint()

    def figure_accelerators(self) -> tuple[str, ...]:
        """A study of one device (scaling, layouts, tiers) is of the selected accelerator."""
        return (self.frame.workspace.scenario.accelerator,) if self.frame is not None else ()

    def pending(self) -> bool:
        return self._timer.isActive()
