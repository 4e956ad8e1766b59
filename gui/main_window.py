"""The main window: controls on the left, one tab per view, the explain panel beside them.

Assembly only: the tabs come from the panel registry (gui/panels), the menus from
gui/actions.py, presets and the pinned scenario A from gui/state, exports from gui/export,
dialogs, the tab pages and the docks' layout from gui/windows. The controller owns the
workspace; the controls and the tabs follow it.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication, QEvent, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.explain import explain
from accelscope.engine.text.explain.explanation import Explanation
from accelscope.engine.text.summary import scenario_summary

from .actions import add_action, install_menus, no_mnemonic, plain, shortcut_rows
from .controls.bindings import bind_view
from .controls.presets_dock import PresetsPanel
from .controls.scenario_panel import ControlsPanel, ControlsScroll
from .controls.strip import PresentationStrip
from .export.dialogs import Exports
from .look import theme
from .look.display import Display
from .look.style import configure_pyqtgraph
from .panels import PANELS, make_panels
from .panels.base import Panel
from .panels.explain import ExplainPanel
from .panels.run_here import RunHerePanel
from .panels.scaling import ScalingPanel
from .panels.serving import ServingPanel
from .state import session
from .state.compare import Comparison
from .state.controller import Controller, Throttle
from .state.history import History
from .state.models import ModelImport
from .state.presets import PresetFiles
from .windows.arrangement import READABLE_DOCK_PX, Arrangement, available_geometry
from .windows.pages import PageTabs
from .windows.problems import ProblemBanner
from .windows.side import SideWindows

TABS = tuple(PANELS)  # view ids, in tab order
EXPLAIN_INTERVAL_MS = 120  # text refreshes more slowly than curves
TIMING_ROOM_TEXT = "engine 00.0 ms · repaint 000.0 ms"  # the status bar keeps this much room for its timings
# The explanation waits for the window's next paint; if none comes this soon, it runs anyway.
EXPLAIN_FALLBACK_MS = 50
# Hidden tabs are brought up to date once the controls have rested this long (as an analysis
# tab's study waits for them: ``panels.analysis.SETTLE_MS``).
CATCH_UP_REST_MS = 150
FIRST_SIZE_PX = (1500, 950)  # the window's size before it is shown, where the screen has room


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
        engine, restored, session_problem = (session.resume(engine) if remember_session and workspace is None
                                             else (engine, None, None))
        workspace = workspace or restored or session.default_workspace(catalog)
        self.controller = Controller(engine, workspace, self)
        self.presets = PresetFiles(self.controller, self)
        self.models = ModelImport(self.controller, self)
        self.comparison = Comparison(self.controller, self)
        self.history = History(self.presets, self)
        self.exports = Exports(self)
        self.side = SideWindows(self)
        screen = available_geometry(self)
        self.resize(min(FIRST_SIZE_PX[0], screen.width()), min(FIRST_SIZE_PX[1], screen.height()))

        # The plots are built in the theme they will be shown in (the last session's, or light).
        layout = session.load_layout() if remember_session else None
        configure_pyqtgraph(theme.for_display(layout.theme, layout.presentation) if layout else theme.LIGHT)
        self.tabs = PageTabs()
        self._set_panels(make_panels(catalog, engine), TABS.index(workspace.view))
        bind_view(self.controller, self.tabs, TABS, self.refresh_panel)
        self.banner = ProblemBanner()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.banner)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.controls = ControlsPanel(catalog)
        self.controls_scroll = ControlsScroll(self.controls)
        self.controls_dock = self._dock("Scenario", self.controls_scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.presets_panel = PresetsPanel(catalog)
        self.presets_dock = self._dock("Presets", self.presets_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.explain_panel = ExplainPanel()
        self.explain_dock = self._dock("Explain", self.explain_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.explain_dock.setMinimumWidth(READABLE_DOCK_PX)
        self.strip = PresentationStrip(catalog)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.strip)
        self.strip.hide()
        self.arrangement = Arrangement(self, self.controls_dock, self.presets_dock, self.explain_dock, self.strip,
                                       self.controls_scroll.comfortable_width)
        self.arrangement.reset()
        self._shown_before = False
        self._layout_screen: tuple[int, int] | None = None  # the screen a restored layout was made on

        self.summary_label = QLabel()
        self.timing_label = QLabel("Preparing the engine (the first start compiles its kernels)…")
        self.compare_label = QLabel("<b>Comparing with A</b> (Ctrl+K unpins)")
        self.compare_label.setStyleSheet("QLabel { background: #FFE9A8; color: #000; padding: 1px 6px; }")
        self.compare_label.hide()
        self.statusBar().addWidget(self.summary_label, 1)
        self.statusBar().addPermanentWidget(self.timing_label)
        self.statusBar().addPermanentWidget(self.compare_label)

        self.display = Display(self)
        self.qactions, self.menus = install_menus(self)
        self.strip.add_full_controls(self.controls_dock.toggleViewAction())
        for dock in self.arrangement.docks:
            # A dock shown from the View menu comes to the front of the docks tabbed with it.
            dock.toggleViewAction().triggered.connect(lambda checked, dock=dock: checked and dock.raise_())
        self._refresh_recent_menu()
        self.presets_panel.set_save_as_path(
            f"{plain(self.menus['file'].title())} → {plain(self.qactions['file.save_as'].text())}")
        self.controls.bind_to(self.controller)
        self.strip.bind_to(self.controller)
        self.controller.frame_ready.connect(self.show_frame)
        self.controller.failed.connect(lambda message: self.statusBar().showMessage(message, 10000))
        self.controls.import_requested.connect(self.models.import_dialog)
        self.presets_panel.preset_chosen.connect(lambda entry: self.presets.ask_open(entry.path, bundled=entry.bundled))
        self.presets.current_changed.connect(lambda _preset: self._show_title())
        self.presets.modified_changed.connect(self.setWindowModified)
        self.presets.replacing.connect(self.comparison.release)
        self.presets.applied.connect(lambda preset: self.presets_panel.select(preset.name))
        self.presets.saved.connect(lambda _preset: self.presets_panel.refresh())  # lists the new file, then:
        self.presets.saved.connect(lambda preset: self.presets_panel.select(preset.name))
        self.presets.recent_changed.connect(self._refresh_recent_menu)
        for source in (self.presets, self.models, self.exports, self.comparison, self.history):
            source.message.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.comparison.changed.connect(self._show_comparison)
        self._show_title()
        # The explanation follows a frame once the frame is on screen (see _explain_after_frame).
        self.explain_throttle = Throttle(EXPLAIN_INTERVAL_MS, self._explain_after_frame, self)
        self._explanation_due = False
        self._explanation_fallback = QTimer(self)  # if no paint comes (nothing changed on screen)
        self._explanation_fallback.setSingleShot(True)
        self._explanation_fallback.setInterval(EXPLAIN_FALLBACK_MS)
        self._explanation_fallback.timeout.connect(self._run_due_explanation)
        # (perf_counter(), process_time()) when the last explanation began: the bench's end of a frame.
        self.explanation_started: tuple[float, float] | None = None
        self._catch_up_timer = QTimer(self)  # hidden tabs follow the frame once the controls rest
        self._catch_up_timer.setSingleShot(True)
        self._catch_up_timer.timeout.connect(self._catch_up)
        self._drawn_ahead: set = set()  # the plots drawn ahead in this rest (see _catch_up)
        self._laid_out_pages: set[int] = set()  # the hidden pages laid out in this rest (see _catch_up)
        # A tab may add to the explanation (Serving): it follows the tab shown. A switch between
        # tabs that add nothing leaves it as it is (rebuilding it took ~7 ms of a switch).
        self._explained_sections: tuple = ()  # the tab's sections the explanation shows now
        self.tabs.currentChanged.connect(self._explanation_follows_tab)
        # The tab left behind is drawn ahead too, once the hand rests (a switch back then copies it).
        self.tabs.currentChanged.connect(lambda _index: self._rest_then_catch_up())
        self.last_repaint_seconds = 0.0
        if layout is not None:
            session.restore(self, layout)
        # Every file that did not load: catalog files, the last session, and presets (listed greyed in their dock).
        self.problems: list[str] = ([*catalog.problems] + ([session_problem] if session_problem else [])
                                    + [entry.problem for entry in self.presets_panel.entries() if entry.problem])
        if self.problems:
            self.banner.show_problems(self.problems)

    # -- the tabs --------------------------------------------------------------------------------

    def _set_panels(self, panels: dict[str, Panel], current: int) -> None:
        """Show ``panels`` as the tabs (in the registry's order), ``current`` shown; the
        workspace's view does not change."""
        self.panels = panels
        self._panel_frames: dict[str, Frame] = {}  # the frame each panel last drew
        with QSignalBlocker(self.tabs):
            for index, (view, panel) in enumerate(panels.items()):
                if index < self.tabs.count():
                    self.tabs.removeTab(index)
                self.tabs.insertTab(index, panel, no_mnemonic(PANELS[view].label))
                self.tabs.setTabToolTip(index, panel.title)
                panel.accelerator_selected.connect(self.controller.select)
                if PANELS[view].analysis:
                    panel.view_option_changed.connect(self.controller.set_option)
                if isinstance(panel, ScalingPanel):
                    panel.model_requested.connect(self.models.use)
                if isinstance(panel, RunHerePanel):
                    panel.model_requested.connect(self.models.use)
                if isinstance(panel, ServingPanel):
                    panel.serving_changed.connect(self.set_serving)
                    panel.explanation_changed.connect(self._panel_explanation_changed)
            self.tabs.setCurrentIndex(current)

    def set_serving(self, name: str, value: object) -> None:
        """A Serving-tab setting; one the spec refuses puts the tab's controls back (the status
        bar says why)."""
        if not self.controller.set_serving(name, value):
            panel = self.panels.get("serving")
            if isinstance(panel, ServingPanel):
                panel.show_settings(self.controller.workspace.serving)

    def _panel_explanation_changed(self) -> None:
        if self.current_view() == "serving":
            self.explain_throttle.request()

    def _explanation_follows_tab(self) -> None:
        if self.panels[self.current_view()].explanation_sections() != self._explained_sections:
            self.explain_throttle.request()

    def current_view(self) -> str:
        return TABS[self.tabs.currentIndex()]

    def show_view(self, view: str) -> None:
        self.tabs.setCurrentIndex(TABS.index(view))

    def _apply_plot_theme(self) -> None:
        """Build the tabs anew when the plot theme changes (light or dark, presentation's high
        contrast): a panel makes its pens and colours once, when it is built."""
        wanted = self.display.plot_theme()
        if wanted == theme.current():
            return
        configure_pyqtgraph(wanted)
        self.controls.restyle_swatches()
        self.strip.restyle_swatches()
        old = self.panels
        self._set_panels(make_panels(self.engine.catalog, self.engine), self.tabs.currentIndex())
        for panel in old.values():
            panel.retire()
            panel.deleteLater()
        for panel in self.panels.values():
            panel.drop_snapshots()
            panel.set_reference(self.comparison.frame)
        self.display.zoom_plots()
        self.refresh_panel(self.current_view())

    def refresh_panel(self, view: str) -> Panel:
        """Bring one panel up to the latest frame (hidden tabs are brought up when shown)."""
        panel = self.panels[view]
        frame = self.controller.last_frame
        if frame is not None and self._panel_frames.get(view) is not frame:
            panel.drop_snapshots()
            if panel.update_applies_selection:
                # Drawn with the frame: applied once (applying it again after cost ~0.3 ms a
                # change on the sweep, its points and labels placed twice).
                panel.selected = frame.workspace.selected
                panel.update_frame(frame)
            else:
                panel.update_frame(frame)
                panel.set_selected(frame.workspace.selected)
            self._panel_frames[view] = frame
        # A tab being shown, or repainted below, is then painted once. Even a tab already up to
        # date: showing its page asks for a layout of the tab widget, which marks its plots
        # changed again after the first paint (a second paint, ~4 ms on a bar tab).
        panel.prepare_paint()
        return panel

    def quit(self) -> None:
        """File → Quit: after asking about unsaved edits."""
        if self._may_close():
            self._asked_to_close = True
            self.close()

    def _may_close(self) -> bool:
        if not self.presets.may_discard("quitting"):
            return False
        if self.presets.modified:  # discarded: the next session starts from the preset as saved
            self.presets.revert()
        return True

    def closeEvent(self, event: QCloseEvent) -> None:
        # Closed by the user (the title bar's button, the window manager): ask about unsaved
        # edits, as File → Quit does. Closed by the program (tests, the app quitting): do not.
        if event.spontaneous() and not getattr(self, "_asked_to_close", False) and not self._may_close():
            event.ignore()
            return
        if self.remember_session:
            session.remember(self)
        for panel in self.panels.values():
            panel.retire()
        self.side.close()
        # Fonts, palette and style are the application's: give them back as they were, and let
        # plots built after this window (another window, a report) start light.
        self.display.set_presentation(False)
        self.display.set_theme("light")
        configure_pyqtgraph(theme.LIGHT)
        super().closeEvent(event)

    def _show_title(self) -> None:
        """The preset shown, and "*" (Qt's [*] place holder) while it has unsaved changes."""
        self.setWindowTitle(f"accelscope — {self.presets.name}[*]")
        self.setWindowModified(self.presets.modified)

    # -- docks, display ---------------------------------------------------------------------------

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}-dock")  # the name saveState and restoreState know it by
        dock.setWidget(widget)
        features = QDockWidget.DockWidgetFeature
        dock.setFeatures(features.DockWidgetClosable | features.DockWidgetMovable | features.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_before:  # laid out now: the frame and the docks have their sizes
            self._shown_before = True
            self.arrangement.fit_to_screen(self._layout_screen)

    def fit_layout_when_shown(self, screen_size: tuple[int, int]) -> None:
        """A layout made on a screen of ``screen_size`` ((0, 0): unknown) was restored: fit it
        to this screen once the window is shown."""
        self._layout_screen = screen_size

    def reset_layout(self) -> None:
        """View → Reset layout: the docks as they are by default on this screen (in presentation
        mode, the layout it goes back to; the plots keep the screen meanwhile)."""
        if self.arrangement.presenting:
            self.set_presentation(False)
            self.arrangement.reset()
            self.set_presentation(True)
        else:
            self.arrangement.reset()

    def toggle_presentation(self) -> None:
        self.set_presentation(not self.display.presentation)

    def set_presentation(self, on: bool) -> None:
        """Large type, thick lines, black on white; the plots take the screen, with the lecture's
        controls in a strip above them (F6 brings all the controls back, F5 again leaves and puts
        the layout back as it was)."""
        if on == self.display.presentation:
            return
        if on:
            self.arrangement.present()
        self.display.set_presentation(on)
        self._apply_plot_theme()
        # The text changed size: the layouts learn their new sizes, and the controls their least
        # width, before the docks are given back their widths (which that width bounds).
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
        self.controls_scroll.fit_width()
        if not on:
            self.arrangement.leave_presentation()
        self.qactions["view.presentation"].setChecked(on)

    def set_theme(self, name: str) -> None:
        """The light or dark theme, for the window and the plots (exports draw what is shown)."""
        self.display.set_theme(name)
        self._apply_plot_theme()
        self.qactions[f"view.theme.{name}"].setChecked(True)

    def _show_comparison(self, a: Frame | None) -> None:
        """Scenario A pinned (every plot draws it as ghosts behind B) or unpinned."""
        self.qactions["view.compare"].setChecked(a is not None)
        for panel in self.panels.values():
            panel.drop_snapshots()
            panel.set_reference(a)
        self.compare_label.setVisible(a is not None)
        self.update_explanation()

    # -- other windows and dialogs ---------------------------------------------------------------

    def shortcut_list(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every menu action that has a shortcut, and the controls' keys."""
        return [*shortcut_rows(), *self.controls.keyboard_shortcuts(),
                ("Tab / Shift+Tab", "Move between controls"), ("Arrow keys, Page Up/Down", "Change the focused slider or box")]

    def focus_control(self, control: str) -> None:
        """Bring the control a formula term links to into view and give it the keyboard focus."""
        widget = self.controls.widget_for(control)
        if widget is None:
            return
        self.controls_dock.show()
        self.controls_dock.raise_()
        self.controls_scroll.ensureWidgetVisible(widget)
        self.activateWindow()
        widget.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- changes ---------------------------------------------------------------------------------

    def start(self, synchronous: bool = False) -> None:
        self.controller.start(synchronous=synchronous)

    def _refresh_recent_menu(self) -> None:
        menu = self.menus["file.recent"]
        menu.clear()
        recent = self.presets.recent()
        for path in recent:
            add_action(self, menu, path.name, self.presets.ask_open, args=(path,))
        menu.setEnabled(bool(recent))

    # -- output ----------------------------------------------------------------------------------

    def show_frame(self, frame: Frame) -> None:
        """Draw the visible panel now; the other tabs catch up once the controls rest
        (:meth:`_catch_up`), or when their tab is shown if that comes first."""
        started = time.perf_counter()
        self.refresh_panel(self.current_view())
        if not PANELS[self.current_view()].analysis:  # an analysis tab draws when its study has run
            # Paint what the frame changed, now (the window's pending update; repaint() painted
            # the whole panel, every note and caption on it too, at each change).
            QCoreApplication.sendPostedEvents(self, QEvent.Type.UpdateRequest.value)
        self.last_repaint_seconds = time.perf_counter() - started
        s = frame.workspace.scenario
        self.summary_label.setText(scenario_summary(s, self.engine.model(s.model).name))
        self.timing_label.setText(
            f"engine {frame.engine_seconds * 1e3:.1f} ms · repaint {self.last_repaint_seconds * 1e3:.1f} ms"
        )
        if self.timing_label.minimumWidth() == 0:
            # Room for the usual figures: a width that followed them laid the status bar out, and
            # repainted both its texts, at most changes.
            room = self.timing_label.fontMetrics().horizontalAdvance(TIMING_ROOM_TEXT)
            self.timing_label.setMinimumWidth(room + self.timing_label.contentsMargins().left()
                                              + self.timing_label.contentsMargins().right())
        self.explain_throttle.request()
        self._rest_then_catch_up()  # restarted by every frame: waits for a rest

    def _rest_then_catch_up(self) -> None:
        self._drawn_ahead.clear()
        self._laid_out_pages.clear()
        self._catch_up_timer.start(CATCH_UP_REST_MS)

    def _catch_up(self) -> None:
        """Bring one hidden tab up to the latest frame, then the next on the next turn of the
        event loop, until none is behind.

        Showing a tab that missed changes drew it then (a switch to the sweep after a model
        change: ~28 ms, ~14 ms when already up to date); a hand on its way from the controls to
        the tab bar gives the time to draw it before. One tab per turn (~4-10 ms each), and only
        once the controls have rested, so a drag is never slowed by tabs it does not show.
        An analysis tab hidden only notes the frame (its study runs once it is shown); its plots,
        which show its last study until then, are drawn ahead as a plot tab's are. First, a
        hidden page not at the shown page's size is laid out at it (PageTabs.lay_out_hidden_page),
        so what is drawn ahead is drawn at the size it is shown at."""
        index = self.tabs.hidden_page_out_of_size(self._laid_out_pages) if self.isVisible() else None
        if index is not None:
            self._lay_out_hidden_page(index)
            self._laid_out_pages.add(index)  # once a rest, whatever a page's layout asks for next
            self._catch_up_timer.start(0)
            return
        behind = self._tabs_behind() if self.isVisible() else []
        if behind:
            self.refresh_panel(behind[0])
            self._catch_up_timer.start(0)
            return
        # Then each hidden tab's plots are drawn ahead, one plot a turn, so a switch copies them.
        snapshot = self._snapshot_due(self._drawn_ahead) if self.isVisible() else None
        if snapshot is not None:
            snapshot.take()
            self._drawn_ahead.add(snapshot)  # once a rest: a scene that keeps changing is not drawn again and again
            self._catch_up_timer.start(0)

    def catch_up_now(self) -> None:
        """Bring every hidden tab up to the latest frame and draw its plots ahead now (what
        a rest of the controls does a tab or a plot per turn; the bench, before a tab is picked)."""
        self._catch_up_timer.stop()
        laid_out: set[int] = set()
        while (index := self.tabs.hidden_page_out_of_size(laid_out)) is not None:
            self._lay_out_hidden_page(index)
            laid_out.add(index)
        for view in self._tabs_behind():
            self.refresh_panel(view)
        drawn: set = set()
        while (snapshot := self._snapshot_due(drawn)) is not None:
            snapshot.take()
            drawn.add(snapshot)

    def _lay_out_hidden_page(self, index: int) -> None:
        self.tabs.lay_out_hidden_page(index)
        page = self.tabs.widget(index)
        if isinstance(page, Panel):
            page.laid_out()  # its plots can now be drawn ahead

    def _snapshot_due(self, drawn: set):
        """A plot of a hidden tab brought up to the latest frame, whose picture is not drawn
        ahead yet (nor was drawn ahead already in this rest: ``drawn``). A tab behind the frame
        is left out: showing it draws it anew, so its picture would be thrown away."""
        frame = self.controller.last_frame
        for view, panel in self.panels.items():
            if view != self.current_view() and self._panel_frames.get(view) is frame:
                snapshot = panel.snapshot_due(drawn)
                if snapshot is not None:
                    return snapshot
        return None

    def _tabs_behind(self) -> list[str]:
        """The hidden tabs not brought up to the latest frame."""
        frame = self.controller.last_frame
        if frame is None:
            return []
        return [view for view in self.panels
                if view != self.current_view() and self._panel_frames.get(view) is not frame]

    def _explain_after_frame(self) -> None:
        """Rebuild the explanation once the window has painted the frame that asked for it.

        The explanation (the reference model's trace, its sentences and their layout in the
        text view: ~4-6 ms) would otherwise delay every change's repaint; the plots and the
        controls reach the screen first and the text follows in the next paint. A window not
        shown paints nothing: its explanation is rebuilt at once."""
        if not self.isVisible():
            self.update_explanation()
            return
        self._explanation_due = True
        self._explanation_fallback.start()

    def flush_explanation(self) -> None:
        """Rebuild a requested explanation now, whether or not its frame has painted (tests,
        the bench, and the fallback when no paint comes)."""
        self.explain_throttle.flush()
        self._run_due_explanation()

    def _run_due_explanation(self) -> None:
        if self._explanation_due:
            self._explanation_due = False
            self._explanation_fallback.stop()
            self.update_explanation()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        # The top-level window's update request is where its changed widgets are painted and
        # put on screen: the frame is shown, so the explanation it asked for can follow.
        if event.type() == QEvent.Type.UpdateRequest:
            self._run_due_explanation()
        return handled

    def update_explanation(self) -> None:
        self.explanation_started = (time.perf_counter(), time.process_time())
        frame = self.controller.last_frame
        self.side.follow(frame)
        if frame is None or not frame.accelerators:
            self.explain_panel.clear()  # shows the placeholder: choose an accelerator
            self._explained_sections = ()
            return
        scenario = frame.workspace.scenario
        if scenario.accelerator not in frame.accelerators:
            scenario = scenario.with_changes(accelerator=frame.accelerators[0])
        explanation = explain(self.engine, scenario, frame.workspace.cost)
        # A tab with an explanation of its own (Serving: its current run) puts it first.
        extra = self._explained_sections = self.panels[self.current_view()].explanation_sections()
        if extra:
            explanation = Explanation(explanation.title, (*extra, *explanation.sections))
        self.explain_panel.show_explanation(self.comparison.with_deltas(explanation, frame, scenario.accelerator))
