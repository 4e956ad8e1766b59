"""The main window: controls on the left, one tab per plot, the explain panel on the right."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog, user_data_dir
from accelscope.engine.catalog.presets import (
    Preset,
    PresetEntry,
    load_preset,
    new_preset,
    save_preset,
    user_preset_path,
    user_presets_dir,
    write_atomically,
)
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.model import ModelArch
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.compare import comparison
from accelscope.engine.text.explain import Explanation, explain

from .controls.presets_dock import PresetsPanel
from .controls.scenario_panel import ControlsPanel
from .export.files import PNG_SCALES, export_all, export_view, write_sidecar
from .look import theme
from .look.display import THEMES, Display
from .look.style import configure_pyqtgraph
from .panels import PANELS, make_panels
from .panels.analysis import AnalysisPanel
from .panels.base import Panel
from .panels.explain import ExplainPanel
from .panels.scaling import ScalingPanel
from .state import session
from .state.controller import Controller, Throttle
from .windows.formulas import FormulasWindow
from .windows.validation import ValidationWindow

TABS = tuple(PANELS)  # view ids, in tab order
EXPLAIN_INTERVAL_MS = 120  # text refreshes more slowly than curves
RECENT_LIMIT = 8
UNSAVED_NAME = "Unsaved scenario"
DEFAULT_MODEL = "llama-3.1-8b"
DEFAULT_SELECTED = "h100-sxm"


def default_workspace(catalog: Catalog) -> Workspace:
    """Llama-3.1-8B in BF16, batch 1, 1024 tokens in and 256 out, on every GPU."""
    gpus = tuple(a.id for a in catalog.accelerators.values() if a.architecture_class == "gpu-simt")
    model = DEFAULT_MODEL if DEFAULT_MODEL in catalog.models else next(iter(catalog.models))
    selected = DEFAULT_SELECTED if DEFAULT_SELECTED in gpus else (gpus or tuple(catalog.accelerators))[0]
    scenario = Scenario(model, selected, batch=1, input_len=1024, output_len=256)
    return Workspace(scenario, shown=gpus or (selected,))


class _SaveDialog(QDialog):
    """Name and description of a preset."""

    def __init__(self, parent: QWidget, name: str, description: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Save preset as")
        self.name = QLineEdit(name)
        self.name.setPlaceholderText("e.g. Qwen3-32B on two MI300X")
        self.description = QPlainTextEdit(description)
        self.description.setPlaceholderText("What this scenario shows and what to look at.")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QFormLayout(self)
        layout.addRow("Name", self.name)
        layout.addRow("Description", self.description)
        layout.addRow(buttons)

    def _accept(self) -> None:
        if self.name.text().strip():
            self.accept()

    def values(self) -> tuple[str, str]:
        return self.name.text().strip(), self.description.toPlainText().strip()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str) -> str:
    """A menu text without its mnemonic markers ("&&" is a literal "&")."""
    return re.sub(r"&(.)", r"\1", text)


def _no_mnemonic(text: str) -> str:
    """Qt reads "&" in tab and menu texts as a shortcut marker; show it as itself."""
    return text.replace("&", "&&")


class _ProblemBanner(QWidget):
    """A visible, dismissable notice above the plots (e.g. user catalog files that did not load)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problem-banner")
        self.setStyleSheet("#problem-banner { background: #FFF3CD; border-bottom: 1px solid #E0C36A; }"
                           "#problem-banner QLabel { color: #5C4400; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QPushButton("Dismiss")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.show()


class MainWindow(QMainWindow):
    @property
    def engine(self) -> Engine:
        """The controller's engine: it knows every model imported or made in this window."""
        return self.controller.engine

    def __init__(self, engine: Engine | None = None, workspace: Workspace | None = None, *,
                 remember_session: bool = False) -> None:
        """``remember_session``: start from the last session's scenario and layout and save them on
        close (the app does; tests and benchmarks leave it off so runs do not affect each other)."""
        super().__init__()
        engine = engine or Engine()
        catalog = engine.catalog
        self.remember_session = remember_session
        restored, session_problem = (None, None)
        if remember_session and workspace is None:
            restored, session_problem = session.load_session(catalog)
            if restored is not None and restored.model is not None:
                engine = engine.with_models(restored.model)
        workspace = workspace or (restored.workspace if restored else None) or default_workspace(catalog)
        self.controller = Controller(engine, workspace, self)
        self.setWindowTitle(f"accelscope — {UNSAVED_NAME}")
        self.resize(1500, 950)

        # The plots are built in the theme they will be shown in (the last session's, or light).
        layout = session.load_layout() if remember_session else None
        configure_pyqtgraph(theme.for_display(layout.theme, layout.presentation) if layout else theme.LIGHT)
        self.panels = self._make_panels()
        self.tabs = QTabWidget()
        for view, panel in self.panels.items():
            self.tabs.addTab(panel, "")
            self._connect_panel(view, panel)
        self.tabs.setCurrentIndex(TABS.index(workspace.view))
        self.tabs.currentChanged.connect(self._tab_changed)
        self.banner = _ProblemBanner()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.banner)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.controls = ControlsPanel(catalog)
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.controls_scroll = scroll
        self._fit_controls_dock()
        self.controls_dock = self._dock("Scenario", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.presets_panel = PresetsPanel(catalog)
        self.presets_dock = self._dock("Presets", self.presets_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.controls_dock, self.presets_dock)
        self.controls_dock.raise_()
        self.explain_panel = ExplainPanel()
        self.explain_dock = self._dock("Explain", self.explain_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.explain_dock], [360], Qt.Orientation.Horizontal)

        self.summary_label = QLabel()
        self.timing_label = QLabel("Preparing the engine (the first start compiles its kernels)…")
        self.statusBar().addWidget(self.summary_label, 1)
        self.statusBar().addPermanentWidget(self.timing_label)
        self.compare_label = QLabel("<b>Comparing with A</b> (Ctrl+K unpins)")
        self.compare_label.setStyleSheet("QLabel { background: #FFE9A8; color: #000; padding: 1px 6px; }")
        self.compare_label.hide()
        self.statusBar().addPermanentWidget(self.compare_label)
        self.compare_frame: Frame | None = None

        self.display = Display(self)
        self._build_menus()
        self.controls.bind_to(self.controller)
        self._workspace_shown = workspace  # the workspace the tabs last followed
        self.controller.workspace_changed.connect(self._follow_view)
        self.controls.import_requested.connect(self.import_config)
        self.presets_panel.preset_chosen.connect(self._preset_chosen)
        self.current_preset: Preset | None = None
        self.controller.frame_ready.connect(self.show_frame)
        self.controller.failed.connect(self._show_problem)
        self.explain_throttle = Throttle(EXPLAIN_INTERVAL_MS, self.update_explanation, self)
        self.formulas_window: FormulasWindow | None = None  # created on first Help → Formulas
        self.last_repaint_seconds = 0.0
        self._panel_frames: dict[str, Frame] = {}  # the frame each panel last drew
        if layout is not None:
            self._restore_layout(layout)
        self.validation_window: ValidationWindow | None = None
        self.problems: list[str] = []
        problems = [*catalog.problems] + ([session_problem] if session_problem else [])
        if problems:
            self.show_problems(problems)

    # -- the tabs --------------------------------------------------------------------------------

    def _make_panels(self) -> dict[str, Panel]:
        """Every tab's panel, in the current plot theme."""
        return make_panels(self.engine.catalog, self.engine)

    def _connect_panel(self, view: str, panel: Panel) -> None:
        index = TABS.index(view)
        self.tabs.setTabText(index, _no_mnemonic(PANELS[view].label))
        self.tabs.setTabToolTip(index, panel.title)
        panel.accelerator_selected.connect(self.controller.select)
        if PANELS[view].analysis:
            panel.view_option_changed.connect(self._view_option_changed)
        if isinstance(panel, ScalingPanel):
            panel.model_requested.connect(self.use_model)

    def _apply_plot_theme(self) -> None:
        """Build the tabs anew when the plot theme changes (light or dark, presentation's high
        contrast): a panel makes its pens and colours once, when it is built."""
        wanted = self.display.plot_theme()
        if wanted == theme.current():
            return
        configure_pyqtgraph(wanted)
        self.controls.restyle_swatches()
        current = self.tabs.currentIndex()
        old = self.panels
        self.panels = self._make_panels()
        self.tabs.blockSignals(True)  # the workspace's view does not change
        for index, (view, panel) in enumerate(self.panels.items()):
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, panel, "")
            self._connect_panel(view, panel)
        self.tabs.setCurrentIndex(current)
        self.tabs.blockSignals(False)
        for panel in old.values():
            panel.deleteLater()
        self._panel_frames.clear()
        for panel in self.panels.values():
            panel.set_reference(self.compare_frame)
        self.display.zoom_plots()
        self.refresh_panel(TABS[current])

    # -- what is remembered between runs -------------------------------------------------------

    def _restore_layout(self, layout: session.WindowLayout) -> None:
        if layout.geometry:
            self.restoreGeometry(layout.geometry)
        if layout.state:
            self.restoreState(layout.state)
        if layout.theme != "light":
            self.set_theme(layout.theme)
        if layout.presentation:
            self.set_presentation(True)
        if layout.preset_path:
            try:
                self.current_preset = load_preset(Path(layout.preset_path), self.engine.catalog)
            except AccelscopeError:
                self.current_preset = None
            self._show_preset_name()

    def remember(self) -> list[str]:
        """Save the scenario and the layout for the next run; returns any problems (never raises)."""
        self.controller.throttle.flush()
        current = self.current_preset
        presentation = self.display.presentation
        if presentation:
            self.set_presentation(False)  # the dock layout as it is outside presentation mode
        state = bytes(self.saveState().data())
        if presentation:
            self.set_presentation(True)
        problems = [
            session.save_session(self.preset_of_workspace(session.SESSION_PRESET_NAME, "")),
            session.save_layout(session.WindowLayout(
                geometry=bytes(self.saveGeometry().data()),
                state=state,
                presentation=presentation,
                theme=self.display.theme,
                preset_path=str(current.source) if current and current.source and not current.bundled else "",
            )),
        ]
        return [problem for problem in problems if problem]

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.remember_session:
            self.remember()
        if self.validation_window is not None:
            self.validation_window.stop()
            self.validation_window.close()
        # Fonts, palette and style are the application's: give them back as they were, and let
        # plots built after this window (another window, a report) start light.
        self.display.set_presentation(False, [self.presets_dock, self.statusBar()])
        self.display.set_theme("light")
        configure_pyqtgraph(theme.LIGHT)
        super().closeEvent(event)

    def show_problems(self, problems: list[str]) -> None:
        """List what could not be loaded (user catalog files, the last session) above the plots."""
        self.problems = list(problems)
        count = len(problems)
        shown = problems[:3] + ([f"… and {count - 3} more (Help → Loading problems)"] if count > 3 else [])
        self.banner.show_text(
            f"<b>{count} file{'s' if count != 1 else ''} could not be loaded; the rest loaded as usual.</b><br>"
            + "<br>".join(_escape(problem) for problem in shown)
        )

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}-dock")
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, menu: QMenu, text: str, slot, shortcut: QKeySequence | str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda checked=False: slot())
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&New scenario", self.new_scenario, QKeySequence.StandardKey.New)
        self._action(file_menu, "&Open preset…", self.open_preset_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self._action(file_menu, "&Save preset", self.save_preset_action, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Save preset &as…", self.save_preset_as_dialog, QKeySequence.StandardKey.SaveAs)
        file_menu.addSeparator()
        self._action(file_menu, "&Import config.json…", self.import_config, "Ctrl+I")
        file_menu.addSeparator()
        self._action(file_menu, "&Export this plot…", self.export_plot_dialog, "Ctrl+E")
        self._action(file_menu, "Export &all plots and tables…", self.export_all_dialog, "Ctrl+Shift+E")
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, "Ctrl+Q")
        self._refresh_recent_menu()
        view_menu = self.menuBar().addMenu("&View")
        for index, panel in enumerate(self.panels.values()):
            self._action(view_menu, _no_mnemonic(panel.title), lambda index=index: self.tabs.setCurrentIndex(index),
                         f"Ctrl+{index + 1}")
        view_menu.addSeparator()
        self._action(view_menu, "&Model vs paper…", self.show_validation, "Ctrl+M")
        view_menu.addSeparator()
        self._action(view_menu, "Select &next accelerator", lambda: self.select_neighbour(+1), "Ctrl+]")
        self._action(view_menu, "Select &previous accelerator", lambda: self.select_neighbour(-1), "Ctrl+[")
        view_menu.addSeparator()
        self.compare_action = self._action(view_menu, "&Compare: pin this scenario as A", self.toggle_compare, "Ctrl+K")
        self.compare_action.setCheckable(True)
        self.presentation_action = self._action(view_menu, "P&resentation mode", self.toggle_presentation, "F5")
        self.presentation_action.setCheckable(True)
        theme_menu = view_menu.addMenu("&Theme")
        self.theme_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for name in THEMES:
            action = self._action(theme_menu, name.capitalize(), lambda name=name: self.set_theme(name))
            action.setCheckable(True)
            action.setChecked(name == "light")
            group.addAction(action)
            self.theme_actions[name] = action
        view_menu.addSeparator()
        view_menu.addAction(self.controls_dock.toggleViewAction())
        view_menu.addAction(self.presets_dock.toggleViewAction())
        view_menu.addAction(self.explain_dock.toggleViewAction())
        self.help_menu = self.menuBar().addMenu("&Help")
        self._action(self.help_menu, "&Formulas…", self.show_formulas, "F1")
        self._action(self.help_menu, "&Keyboard shortcuts", self.show_shortcuts, "Ctrl+/")
        self._action(self.help_menu, "&Loading problems…", self.show_loading_problems)
        self._action(self.help_menu, "&About accelscope", self.show_about)

    # -- compare: a pinned scenario A drawn behind the current one, B ------------------------------

    def toggle_compare(self) -> None:
        self.set_compare(self.compare_frame is None)

    def set_compare(self, on: bool) -> None:
        """Pin the current scenario as A (every plot then shows A as ghosts behind B, and the
        explain panel opens with the deltas), or unpin it."""
        self.controller.throttle.flush()
        self.compare_frame = self.controller.last_frame if on else None
        self.compare_action.setChecked(self.compare_frame is not None)
        for panel in self.panels.values():
            panel.set_reference(self.compare_frame)
        self.compare_label.setVisible(self.compare_frame is not None)
        self.update_explanation()

    def _fit_controls_dock(self) -> None:
        """Wide enough for every control and its typed entry, beside a vertical scroll bar."""
        self.controls.adjustSize()
        scroll = self.controls_scroll
        scroll.setMinimumWidth(self.controls.sizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)

    def toggle_presentation(self) -> None:
        self.set_presentation(not self.display.presentation)

    def set_presentation(self, on: bool) -> None:
        """Large type, thick lines, black on white, presets and status bar hidden (F5 again leaves)."""
        self.display.set_presentation(on, [self.presets_dock, self.statusBar()])
        self._apply_plot_theme()
        self.presentation_action.setChecked(on)
        # The controls' text changed size; their new size is known once the font change is delivered.
        QTimer.singleShot(0, self._fit_controls_dock)

    def set_theme(self, name: str) -> None:
        """The light or dark theme, for the window and the plots (exports draw what is shown)."""
        self.display.set_theme(name)
        self._apply_plot_theme()
        self.theme_actions[name].setChecked(True)

    def shortcut_list(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every menu action that has a shortcut, and the controls' keys."""
        rows: list[tuple[str, str]] = []

        def walk(menu: QMenu, path: str) -> None:
            for action in menu.actions():
                if action.menu() is not None:
                    walk(action.menu(), f"{path} → {_plain(action.text())}")
                elif not action.shortcut().isEmpty():
                    rows.append((action.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
                                 f"{path} → {_plain(action.text())}"))

        for action in self.menuBar().actions():
            if action.menu() is not None:
                walk(action.menu(), _plain(action.text()))
        rows.extend(self.controls.keyboard_shortcuts())
        rows.extend([
            ("Tab / Shift+Tab", "Move between controls"),
            ("Arrow keys, Page Up/Down", "Change the focused slider or box"),
        ])
        return rows

    def show_shortcuts(self) -> None:
        rows = self.shortcut_list()
        dialog = QDialog(self)
        dialog.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["Keys", "Does"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (keys, does) in enumerate(rows):
            table.setItem(row, 0, QTableWidgetItem(keys))
            table.setItem(row, 1, QTableWidgetItem(does))
        table.resizeColumnsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(table)
        layout.addWidget(buttons)
        dialog.resize(560, 620)
        dialog.show()
        self.shortcuts_dialog = dialog

    def show_loading_problems(self) -> None:
        if self.problems:
            text = "\n\n".join(self.problems)
        else:
            text = f"Every catalog file loaded. Your own accelerators and models go in {user_data_dir()}."
        QMessageBox.information(self, "Loading problems", text)

    def show_about(self) -> None:
        catalog = self.engine.catalog
        QMessageBox.about(
            self, "About accelscope",
            f"<b>accelscope</b>: LLM inference across AI accelerators — roofline, memory fit, latency, "
            f"throughput and energy from the architecture, computed live.<br><br>"
            f"{len(catalog.accelerators)} accelerators and {len(catalog.models)} models loaded; every catalog "
            f"number carries its source (see <code>accelscope catalog</code>). How close the numbers are to "
            f"published measurements: <code>accelscope validate</code>.<br>Your own accelerators, models and "
            f"presets: {_escape(str(user_data_dir()))}",
        )

    def show_formulas(self) -> FormulasWindow:
        """Help → Formulas: a separate window that follows the scenario while it is open."""
        if self.formulas_window is None:
            self.formulas_window = FormulasWindow(self.engine, self)
            self.formulas_window.control_requested.connect(self.focus_control)
        self.formulas_window.show()
        self.formulas_window.raise_()
        self.formulas_window.activateWindow()
        frame = self.controller.last_frame
        self.formulas_window.update_frame(frame, frame.workspace.selected if frame else "")
        return self.formulas_window

    def focus_control(self, control: str) -> None:
        """Bring the control a formula term links to into view and give it the keyboard focus."""
        if control == "model":
            widget = self.controls.model_combo
        elif control == "accelerator":
            widget = self.controls.accelerator_tree
        elif control in self.controls.bindings:
            binding = self.controls.bindings[control]
            widget = getattr(binding, "spin", None) or getattr(binding, "combo", None)
        else:
            return  # a control the panel does not have
        if widget is None:
            return
        self.controls_dock.show()
        self.controls_dock.raise_()
        self.controls_dock.widget().ensureWidgetVisible(widget)  # the dock holds the controls' QScrollArea
        self.activateWindow()
        widget.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_validation(self) -> ValidationWindow:
        """The papers' measurements beside the model's numbers; a selected row loads its setup."""
        if self.validation_window is None:
            self.validation_window = ValidationWindow(self.engine.catalog)
            self.validation_window.workspace_requested.connect(self.set_workspace)
            self.validation_window.start()
        self.validation_window.shown_now = self.controller.workspace.shown
        self.validation_window.show()
        self.validation_window.raise_()
        return self.validation_window

    def select_neighbour(self, step: int) -> None:
        """Select the next (or previous) shown accelerator, for the explain panel, by keyboard."""
        workspace = self.controller.workspace
        if not workspace.shown:
            return
        if workspace.selected in workspace.shown:
            index = (workspace.shown.index(workspace.selected) + step) % len(workspace.shown)
        else:
            index = 0
        self.controller.select(workspace.shown[index])

    def start(self, synchronous: bool = False) -> None:
        self.controller.start(synchronous=synchronous)

    # -- changes ---------------------------------------------------------------------------

    def _view_option_changed(self, name: str, value: object) -> None:
        """An analysis tab's own setting (e.g. the far tier) is part of the scenario: presets keep it."""
        self.controller.set_workspace(self.controller.workspace.with_options(**{name: value}))

    def _tab_changed(self, index: int) -> None:
        self.controller.set_workspace(self.controller.workspace.with_changes(view=TABS[index]))
        self.refresh_panel(TABS[index])

    def refresh_panel(self, view: str) -> Panel:
        """Bring one panel up to the latest frame (hidden tabs are brought up when shown)."""
        panel = self.panels[view]
        frame = self.controller.last_frame
        if frame is not None and self._panel_frames.get(view) is not frame:
            panel.update_frame(frame)
            panel.set_selected(frame.workspace.selected)
            self._panel_frames[view] = frame
            panel.prepare_paint()  # a tab being shown, or repainted below, is then painted once
        return panel

    def set_workspace(self, workspace: Workspace) -> None:
        """Show a whole new workspace (a preset): the controls and the tab follow it, one recompute."""
        self.controller.set_workspace(workspace)

    def _follow_view(self, workspace: Workspace) -> None:
        """Show the tab of the workspace's view, whoever set it (a preset, the validation window).
        The frame that the change brings draws it; a change of the view alone brings none, so
        the tab is drawn now from the last frame."""
        previous, self._workspace_shown = self._workspace_shown, workspace
        index = TABS.index(workspace.view)
        if index == self.tabs.currentIndex():
            return
        with QSignalBlocker(self.tabs):
            self.tabs.setCurrentIndex(index)
        if workspace.with_changes(view=previous.view) == previous:
            self.refresh_panel(workspace.view)

    def import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import a model", "", "Model files (config.json *.json *.toml);;All files (*)"
        )
        if path:
            self.import_model_file(path)

    def use_model(self, model: ModelArch) -> None:
        """Add a model (imported or synthetic) to the engine and the model list, and show it."""
        self.controller.use_models(model)
        self.controller.set_field("model", model.id)

    def import_model_file(self, path: str) -> bool:
        try:
            model = self.engine.catalog.model(path)
        except AccelscopeError as error:
            QMessageBox.warning(self, "Cannot import the model", str(error))
            return False
        self.use_model(model)
        self.statusBar().showMessage(f"Imported {model.name} from {path}", 5000)
        return True

    # -- presets -----------------------------------------------------------------------------

    def new_scenario(self) -> None:
        self.current_preset = None
        self.set_workspace(default_workspace(self.engine.catalog))
        self._show_preset_name()

    def open_preset_dialog(self) -> None:
        folder = user_presets_dir()
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a preset", str(folder if folder.is_dir() else Path.home()), "Presets (*.json);;All files (*)"
        )
        if path:
            self.open_preset_file(path)

    def open_preset_file(self, path: str | Path, bundled: bool = False) -> bool:
        """Load a preset and apply every field at once; on a bad file say why and change nothing."""
        try:
            preset = load_preset(Path(path), self.engine.catalog, bundled=bundled)
        except AccelscopeError as error:
            QMessageBox.warning(self, "Cannot open the preset", str(error))
            return False
        self.apply_preset(preset)
        if not bundled:
            self._remember_recent(Path(path))
        return True

    def apply_preset(self, preset: Preset) -> None:
        if preset.model is not None:
            self.controller.use_models(preset.model)
        self.current_preset = preset
        self.set_workspace(preset.workspace)
        self._show_preset_name()
        self.presets_panel.select(preset.name)

    def _preset_chosen(self, entry: PresetEntry) -> None:
        self.open_preset_file(entry.path, bundled=entry.bundled)

    def preset_of_workspace(self, name: str | None = None, description: str | None = None) -> Preset:
        """The current workspace as a preset (embedding the model when it is not bundled)."""
        current = self.current_preset
        workspace = self.controller.workspace
        return new_preset(
            name or (current.name if current else UNSAVED_NAME),
            description if description is not None else (current.description if current else ""),
            workspace,
            self.engine.model(workspace.scenario.model),
        )

    def save_preset_action(self) -> None:
        current = self.current_preset
        if current is None or current.bundled or current.source is None:
            self.save_preset_as_dialog()
            return
        self.save_preset_to(current.source, current.name, current.description)

    def save_preset_as_dialog(self) -> None:
        current = self.current_preset
        dialog = _SaveDialog(self, current.name if current and not current.bundled else "",
                             current.description if current else "")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        name, description = dialog.values()
        path = user_preset_path(name)
        if path.exists() and QMessageBox.question(
            self, "Replace the preset?", f"A preset file {path.name} exists. Replace it?"
        ) != QMessageBox.StandardButton.Yes:
            return
        self.save_preset_to(path, name, description)

    def save_preset_to(self, path: Path, name: str, description: str) -> bool:
        self.controller.throttle.flush()
        preset = self.preset_of_workspace(name, description)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_preset(preset, path)
        except (OSError, AccelscopeError, ValueError) as error:
            QMessageBox.warning(self, "Cannot save the preset", f"{path}: {error}")
            return False
        self.current_preset = load_preset(path, self.engine.catalog)
        self._remember_recent(path)
        self.presets_panel.refresh()
        self.presets_panel.select(name)
        self._show_preset_name()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def _show_preset_name(self) -> None:
        name = self.current_preset.name if self.current_preset else UNSAVED_NAME
        self.setWindowTitle(f"accelscope — {name}")

    # -- recent presets (a small JSON list in the user data folder) ---------------------------

    def recent_presets(self) -> list[Path]:
        try:
            recent = user_data_dir() / "recent.json"
            if not recent.is_file():  # missing, or a pipe or device that would block the start
                return []
            paths = json.loads(recent.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(paths, list):
            return []
        return [Path(p) for p in paths if isinstance(p, str) and Path(p).is_file()][:RECENT_LIMIT]

    def _remember_recent(self, path: Path) -> None:
        recent = [path.resolve()] + [p for p in self.recent_presets() if p.resolve() != path.resolve()]
        paths = [str(p) for p in recent[:RECENT_LIMIT]]
        try:
            write_atomically(user_data_dir() / "recent.json", lambda stream: json.dump(paths, stream))
        except OSError:
            return  # the list is a convenience; never fail a load or save over it
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_presets()
        for path in recent:
            self._action(self.recent_menu, path.name, lambda path=path: self.open_preset_file(path))
        self.recent_menu.setEnabled(bool(recent))

    # -- export --------------------------------------------------------------------------------

    def export_plot_dialog(self) -> None:
        view = TABS[self.tabs.currentIndex()]
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export this plot", str(Path.home() / f"accelscope-{view}.png"),
            "PNG image (*.png);;SVG drawing (*.svg);;CSV table (*.csv)",
        )
        if not path:
            return
        scale = 2.0
        if Path(path).suffix.lower() == ".png" or "PNG" in chosen:
            labels = [f"{factor:g}× ({round(self.tabs.currentWidget().width() * factor)} px wide)" for factor in PNG_SCALES]
            label, accepted = QInputDialog.getItem(self, "PNG resolution", "Resolution:", labels, 1, False)
            if not accepted:
                return
            scale = PNG_SCALES[labels.index(label)]
        self.export_plot(Path(path), scale)

    def export_plot(self, path: Path, scale: float = 2.0) -> list[Path]:
        """The current tab as PNG, SVG or CSV (by the file's suffix), with a sidecar preset."""
        frame = self.controller.last_frame
        view = TABS[self.tabs.currentIndex()]
        suffix = path.suffix.lower().lstrip(".") or "png"
        if frame is None or suffix not in ("png", "svg", "csv"):
            QMessageBox.warning(self, "Cannot export", "Export to a .png, .svg or .csv file.")
            return []
        panel = self.refresh_panel(view)
        preset = self.preset_of_workspace()
        try:
            written = export_view(view, panel, frame, self.engine.catalog, path.with_suffix(""),
                                  formats=(suffix,), scale=scale, preset=preset)
            written.append(write_sidecar(preset, written[0]))
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self, "Cannot export", f"{path}: {error}")
            return []
        self.statusBar().showMessage(f"Exported {written[0]} (scenario in {written[-1].name})", 5000)
        return written

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export every plot and table into a folder", str(Path.home()))
        if folder:
            self.export_all_to(Path(folder))

    def export_all_to(self, folder: Path, scale: float = 2.0) -> list[Path]:
        frame = self.controller.last_frame
        if frame is None:
            return []
        page_size = self.tabs.currentWidget().size()
        for view in TABS:
            # Hidden tabs may not have been laid out at the current size yet.
            self.refresh_panel(view).resize(page_size)
        explanation = explain(self.engine, frame.workspace.scenario) if frame.accelerators else None
        try:
            written = export_all(self.panels, frame, self.engine.catalog, folder, self.preset_of_workspace(),
                                 explanation, scale=scale)
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self, "Cannot export", f"{folder}: {error}")
            return []
        self.statusBar().showMessage(f"Exported {len(written)} files to {folder}", 5000)
        return written

    # -- output ----------------------------------------------------------------------------

    def show_frame(self, frame: Frame) -> None:
        """Draw the visible panel now; the others catch up when their tab is shown."""
        started = time.perf_counter()
        panel = self.refresh_panel(TABS[self.tabs.currentIndex()])
        if not isinstance(panel, AnalysisPanel):  # an analysis tab draws when its study has run
            panel.repaint()
        self.last_repaint_seconds = time.perf_counter() - started
        s = frame.workspace.scenario
        model = self.engine.model(s.model)
        self.summary_label.setText(
            f"{model.name} · batch {s.batch:,} · {s.input_len:,} in / {s.output_len:,} out · "
            f"W {s.weight_precision.upper()} A {s.activation_precision.upper()} KV {s.kv_precision.upper()} · "
            f"TP {s.tp} PP {s.pp} EP {s.ep} DP {s.dp}" + (f" · offload {s.offload:.0%}" if s.offload else "")
            + (f" · KV offload {s.kv_offload:.0%}" if s.kv_offload else "")
        )
        self.timing_label.setText(
            f"engine {frame.engine_seconds * 1e3:.1f} ms · repaint {self.last_repaint_seconds * 1e3:.1f} ms"
        )
        self.explain_throttle.request()

    def update_explanation(self) -> None:
        frame = self.controller.last_frame
        if self.formulas_window is not None and self.formulas_window.isVisible():
            self.formulas_window.update_frame(frame, frame.workspace.selected if frame else "")
        if frame is None or not frame.accelerators:
            self.explain_panel.clear()  # shows the placeholder: choose an accelerator
            return
        scenario = frame.workspace.scenario
        if scenario.accelerator not in frame.accelerators:
            scenario = scenario.with_changes(accelerator=frame.accelerators[0])
        explanation = explain(self.engine, scenario)
        if self.compare_frame is not None:
            a = self.compare_frame
            accelerator = scenario.accelerator
            a_result = a.result(accelerator) if accelerator in a.accelerators else None
            deltas = comparison(a.workspace, a_result, frame.result(accelerator))
            explanation = Explanation(explanation.title, deltas.sections + explanation.sections)
        self.explain_panel.show_explanation(explanation)

    def _show_problem(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)
