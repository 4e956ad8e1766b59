"""The main window: controls on the left, one tab per plot, the explain panel on the right."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QTabWidget,
    QWidget,
)

from accelscope.engine.api import Engine
from accelscope.engine.catalog import Catalog
from accelscope.engine.errors import AccelscopeError
from accelscope.engine.explain import explain
from accelscope.engine.frame import Frame
from accelscope.engine.scenario import Scenario
from accelscope.engine.workspace import VIEWS, Workspace

from .controller import Controller, Throttle
from .controls import ControlsPanel
from .panels.base import Panel
from .panels.energy import EnergyPanel
from .panels.explain import ExplainPanel
from .panels.latency import LatencyPanel
from .panels.memory import MemoryPanel
from .panels.roofline import RooflinePanel
from .panels.sweep import SweepPanel

EXPLAIN_INTERVAL_MS = 120  # text refreshes more slowly than curves
DEFAULT_MODEL = "llama-3.1-8b"
DEFAULT_SELECTED = "h100-sxm"


def default_workspace(catalog: Catalog) -> Workspace:
    """Llama-3.1-8B in BF16, batch 1, 1024 tokens in and 256 out, on every GPU."""
    gpus = tuple(a.id for a in catalog.accelerators.values() if a.architecture_class == "gpu-simt")
    model = DEFAULT_MODEL if DEFAULT_MODEL in catalog.models else next(iter(catalog.models))
    selected = DEFAULT_SELECTED if DEFAULT_SELECTED in gpus else (gpus or tuple(catalog.accelerators))[0]
    scenario = Scenario(model, selected, batch=1, input_len=1024, output_len=256)
    return Workspace(scenario, shown=gpus or (selected,))


def _no_mnemonic(text: str) -> str:
    """Qt reads "&" in tab and menu texts as a shortcut marker; show it as itself."""
    return text.replace("&", "&&")


class MainWindow(QMainWindow):
    def __init__(self, engine: Engine | None = None, workspace: Workspace | None = None) -> None:
        super().__init__()
        self.engine = engine or Engine()
        catalog = self.engine.catalog
        workspace = workspace or default_workspace(catalog)
        self.controller = Controller(self.engine, workspace, self)
        self.setWindowTitle("accelscope")
        self.resize(1500, 950)

        self.panels: dict[str, Panel] = {
            "roofline": RooflinePanel(catalog),
            "memory": MemoryPanel(catalog),
            "latency": LatencyPanel(catalog),
            "sweep": SweepPanel(catalog),
            "energy": EnergyPanel(catalog),
        }
        assert tuple(self.panels) == VIEWS
        self.tabs = QTabWidget()
        for panel in self.panels.values():
            self.tabs.addTab(panel, _no_mnemonic(panel.title))
            panel.accelerator_selected.connect(self.controller.select)
        self.tabs.setCurrentIndex(VIEWS.index(workspace.view))
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(self.tabs)

        self.controls = ControlsPanel(catalog)
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Wide enough for every control and its typed entry, beside a vertical scroll bar.
        scroll.setMinimumWidth(self.controls.sizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.controls_dock = self._dock("Scenario", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.explain_panel = ExplainPanel()
        self.explain_dock = self._dock("Explain", self.explain_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.explain_dock], [360], Qt.Orientation.Horizontal)

        self.summary_label = QLabel()
        self.timing_label = QLabel("Preparing the engine (the first start compiles its kernels)…")
        self.statusBar().addWidget(self.summary_label, 1)
        self.statusBar().addPermanentWidget(self.timing_label)

        self._build_menus()
        self.controls.set_workspace(workspace, self.engine.model(workspace.scenario.model))
        self.controls.scenario_changed.connect(self._field_changed)
        self.controls.shown_changed.connect(self.controller.set_shown)
        self.controls.import_requested.connect(self.import_config)
        self.controller.frame_ready.connect(self.show_frame)
        self.controller.failed.connect(self._show_problem)
        self.explain_throttle = Throttle(EXPLAIN_INTERVAL_MS, self.update_explanation, self)
        self.last_repaint_seconds = 0.0
        self._panel_frames: dict[str, Frame] = {}  # the frame each panel last drew

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}-dock")
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        import_action = QAction("&Import config.json…", self)
        import_action.setShortcut(QKeySequence("Ctrl+I"))
        import_action.triggered.connect(self.import_config)
        file_menu.addAction(import_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view_menu = self.menuBar().addMenu("&View")
        for index, panel in enumerate(self.panels.values()):
            action = QAction(_no_mnemonic(panel.title), self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda checked=False, index=index: self.tabs.setCurrentIndex(index))
            view_menu.addAction(action)

    def start(self, synchronous: bool = False) -> None:
        self.controller.start(synchronous=synchronous)

    # -- changes ---------------------------------------------------------------------------

    def _field_changed(self, field: str, value: object) -> None:
        if field == "model":
            self.controls.set_model_info(self.engine.model(str(value)))
        self.controller.set_field(field, value)

    def _tab_changed(self, index: int) -> None:
        self.controller.set_workspace(self.controller.workspace.with_changes(view=VIEWS[index]))
        self.refresh_panel(VIEWS[index])

    def refresh_panel(self, view: str) -> Panel:
        """Bring one panel up to the latest frame (hidden tabs are brought up when shown)."""
        panel = self.panels[view]
        frame = self.controller.last_frame
        if frame is not None and self._panel_frames.get(view) is not frame:
            panel.update_frame(frame)
            panel.set_selected(frame.workspace.selected)
            self._panel_frames[view] = frame
        return panel

    def set_workspace(self, workspace: Workspace) -> None:
        """Show a whole new workspace (a preset): every control at once, one recompute."""
        self.controls.set_workspace(workspace, self.engine.model(workspace.scenario.model))
        self.tabs.setCurrentIndex(VIEWS.index(workspace.view))
        self.controller.set_workspace(workspace)

    def import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import a model", "", "Model files (config.json *.json *.toml);;All files (*)"
        )
        if path:
            self.import_model_file(path)

    def import_model_file(self, path: str) -> bool:
        try:
            model = self.engine.catalog.model(path)
        except AccelscopeError as error:
            QMessageBox.warning(self, "Cannot import the model", str(error))
            return False
        self.engine.add_model(model)
        self.controls.add_model(model)
        workspace = self.controller.workspace.with_scenario(model=model.id)
        self.controls.set_workspace(workspace, model)
        self.controller.set_workspace(workspace)
        self.statusBar().showMessage(f"Imported {model.name} from {path}", 5000)
        return True

    # -- output ----------------------------------------------------------------------------

    def show_frame(self, frame: Frame) -> None:
        """Draw the visible panel now; the others catch up when their tab is shown."""
        started = time.perf_counter()
        self.refresh_panel(VIEWS[self.tabs.currentIndex()])
        self.tabs.currentWidget().repaint()
        self.last_repaint_seconds = time.perf_counter() - started
        s = frame.workspace.scenario
        model = self.engine.model(s.model)
        self.setWindowTitle(f"accelscope — {model.name}")
        self.summary_label.setText(
            f"{model.name} · batch {s.batch:,} · {s.input_len:,} in / {s.output_len:,} out · "
            f"W {s.weight_precision.upper()} A {s.activation_precision.upper()} KV {s.kv_precision.upper()} · "
            f"TP {s.tp} PP {s.pp} EP {s.ep} DP {s.dp}" + (f" · offload {s.offload:.0%}" if s.offload else "")
        )
        self.timing_label.setText(
            f"engine {frame.engine_seconds * 1e3:.1f} ms · repaint {self.last_repaint_seconds * 1e3:.1f} ms"
        )
        self.explain_throttle.request()

    def update_explanation(self) -> None:
        frame = self.controller.last_frame
        if frame is None or not frame.accelerators:
            self.explain_panel.clear()  # shows the placeholder: choose an accelerator
            return
        scenario = frame.workspace.scenario
        if scenario.accelerator not in frame.accelerators:
            scenario = scenario.with_changes(accelerator=frame.accelerators[0])
        self.explain_panel.show_explanation(explain(self.engine, scenario))

    def _show_problem(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)
