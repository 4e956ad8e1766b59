"""Where the main window's docks go: the default layout for the screen the window is on, a
restored layout fitted to that screen, and presentation mode's, which gives the plots the
screen and puts the layout before it back when it ends.

A classroom projector is 1024×768 or 1280×720. There the default layout keeps the controls on
the left and puts Explain in a tab beside them, so the plots keep the rest; from
:data:`WIDE_SCREEN_PX` Explain has its own column on the right. Every dock can be closed,
tabbed or floated, and View → Reset layout brings this default back.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow, QToolBar, QWidget

WIDE_SCREEN_PX = 1400  # from this available width, Explain has a column of its own
SIDE_MAX_SHARE = 0.34  # the most of the window's width a side column takes by default
EXPLAIN_WIDTH_SHARE = 0.24  # Explain's column, as a share of the window's width ...
EXPLAIN_WIDTH_PX = (280, 440)  # ... within these bounds
# A dock narrower than this cannot be read (a layout saved on a small screen, or dragged thin):
# it gets its default width back when a layout is restored.
READABLE_DOCK_PX = 200
# Below this the plots are too small to read: a restored layout leaving the plots less falls
# back to the default layout for the screen.
READABLE_CENTRAL_PX = 520
Area = Qt.DockWidgetArea


def available_geometry(widget: QWidget) -> QRect:
    """The part of the widget's screen (or the primary screen) that windows may use."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


class Arrangement:
    """The docks of one main window: ``controls`` (the Scenario dock), ``presets`` and
    ``explain``, and ``strip`` (the presentation controls, shown only in presentation mode).
    ``controls_width()`` is the width the controls are comfortable at."""

    def __init__(self, window: QMainWindow, controls: QDockWidget, presets: QDockWidget, explain: QDockWidget,
                 strip: QToolBar, controls_width: Callable[[], int]) -> None:
        self.window = window
        self.controls, self.presets, self.explain = controls, presets, explain
        self.docks = (controls, presets, explain)
        self.strip = strip
        self.controls_width = controls_width
        # The geometry and dock state before presentation mode, while it is on.
        self.before_presentation: tuple[QByteArray, QByteArray] | None = None
        self.presenting = False
        self._window_state_before = Qt.WindowState.WindowNoState
        self._fit_pending: tuple[tuple[int, int] | None] | None = None  # a fit asked for in presentation mode

    # -- the default layout ----------------------------------------------------------------

    def wide(self) -> bool:
        return available_geometry(self.window).width() >= WIDE_SCREEN_PX

    def reset(self) -> None:
        """The default layout for the screen the window is on: Scenario and Presets tabbed on the
        left (Scenario in front); Explain in a column on the right on a wide screen, else in a
        third tab on the left. Every dock is docked and shown."""
        window = self.window
        for dock in self.docks:
            dock.setFloating(False)
        window.addDockWidget(Area.LeftDockWidgetArea, self.controls)
        window.addDockWidget(Area.LeftDockWidgetArea, self.presets)
        window.tabifyDockWidget(self.controls, self.presets)
        if self.wide():
            window.addDockWidget(Area.RightDockWidgetArea, self.explain)
        else:
            window.addDockWidget(Area.LeftDockWidgetArea, self.explain)
            window.tabifyDockWidget(self.presets, self.explain)
        for dock in self.docks:
            dock.show()
        self.controls.raise_()
        self.size_docks()

    def rearrange(self) -> None:
        """The default layout for this screen, the docks that are closed staying closed."""
        closed = [dock for dock in self.docks if not dock.isVisibleTo(self.window)]
        self.reset()
        for dock in closed:
            dock.hide()

    def _window_width(self) -> int:
        """The window's width, or the screen's where the window is wider than its screen."""
        return min(self.window.width(), available_geometry(self.window).width())

    def default_width(self, dock: QDockWidget) -> int:
        """The width ``dock`` (and the docks tabbed with it) get by default: Explain's own column
        a share of the window; a column with the controls as wide as they are comfortable,
        within :data:`SIDE_MAX_SHARE` of the window."""
        width = self._window_width()
        group = [dock, *self.window.tabifiedDockWidgets(dock)]
        least = max(member.minimumSizeHint().width() for member in group)
        if self.controls not in group:
            low, high = EXPLAIN_WIDTH_PX
            return max(least, low, min(high, round(EXPLAIN_WIDTH_SHARE * width)))
        return max(least, min(self.controls_width(), round(SIDE_MAX_SHARE * width)))

    def size_docks(self) -> None:
        """Give each side column of docks its default width."""
        columns: list[QDockWidget] = []
        seen: set[QDockWidget] = set()
        for dock in self.docks:
            if dock in seen or not self._in_side_column(dock):
                continue
            seen.update([dock, *self.window.tabifiedDockWidgets(dock)])
            columns.append(dock)
        if columns:
            self.window.resizeDocks(columns, [self.default_width(dock) for dock in columns], Qt.Orientation.Horizontal)

    def _in_side_column(self, dock: QDockWidget) -> bool:
        return (dock.isVisibleTo(self.window) and not dock.isFloating()
                and self.window.dockWidgetArea(dock) in (Area.LeftDockWidgetArea, Area.RightDockWidgetArea))

    # -- a restored layout -----------------------------------------------------------------

    def fit_to_screen(self, made_on: tuple[int, int] | None = None) -> None:
        """Fit the layout to the screen the window is on: the window's frame inside the screen,
        every side dock readable, and the plots left room (a layout that cannot give them that
        becomes the default layout for this screen).

        ``made_on``: the available size of the screen a restored layout was made on ((0, 0):
        unknown, None: the layout was not restored). A layout made on another screen gets the
        docks arranged for this one, the docks that were closed staying closed. In presentation
        mode this waits for the layout presentation puts back."""
        if self.presenting:
            self._fit_pending = (made_on,)
            return
        window = self.window
        screen = available_geometry(window)
        if made_on is not None and made_on != (screen.width(), screen.height()):
            self.rearrange()
        if window.isFullScreen():
            return
        frame, inner = window.frameGeometry(), window.geometry()
        frame_width, frame_height = frame.width() - inner.width(), frame.height() - inner.height()
        if frame.width() > screen.width() or frame.height() > screen.height():
            window.resize(min(inner.width(), screen.width() - frame_width),
                          min(inner.height(), screen.height() - frame_height))
        frame = window.frameGeometry()
        x = min(max(frame.x(), screen.left()), screen.right() + 1 - frame.width())
        y = min(max(frame.y(), screen.top()), screen.bottom() + 1 - frame.height())
        if (x, y) != (frame.x(), frame.y()):
            window.move(x, y)
        if window.layout() is not None:
            window.layout().activate()  # the docks' widths for the window's new size
        central = window.centralWidget()
        if central is not None and central.isVisibleTo(window) and central.width() < READABLE_CENTRAL_PX \
                and window.width() >= READABLE_CENTRAL_PX + 2 * READABLE_DOCK_PX:
            self.rearrange()
            return
        thin = [dock for dock in self.docks if self._in_side_column(dock) and dock.width() < READABLE_DOCK_PX]
        if thin:
            window.resizeDocks(thin, [self.default_width(dock) for dock in thin], Qt.Orientation.Horizontal)

    # -- presentation mode -----------------------------------------------------------------

    def present(self) -> None:
        """The plots take the screen: the docks and the status bar make way, the strip of
        lecture controls appears, and the window goes full screen (once shown)."""
        if self.presenting:
            return
        window = self.window
        self.presenting = True
        self.before_presentation = (window.saveGeometry(), window.saveState())
        self._window_state_before = window.windowState()
        for dock in self.docks:
            dock.hide()
        window.statusBar().hide()
        self.strip.show()
        if window.isVisible():
            window.showFullScreen()

    def leave_presentation(self) -> None:
        """Put back exactly the layout before presentation mode: the window's place and size
        (and whether it was maximised), each dock where it was, as wide, shown or hidden."""
        if not self.presenting:
            return
        window = self.window
        self.presenting = False
        self.strip.hide()
        window.statusBar().show()
        _geometry, state = self.before_presentation
        self.before_presentation = None
        if window.isFullScreen():
            # Maximised again, or back to the place and size it had (Qt remembers it through full screen).
            if self._window_state_before & Qt.WindowState.WindowMaximized:
                window.showMaximized()
            else:
                window.showNormal()
        window.restoreState(state)
        if self._fit_pending is not None:
            (made_on,), self._fit_pending = self._fit_pending, None
            self.fit_to_screen(made_on)

    def normal_state(self) -> tuple[QByteArray, QByteArray]:
        """(geometry, dock state) of the layout outside presentation mode: what is kept between runs."""
        if self.before_presentation is not None:
            return self.before_presentation
        return self.window.saveGeometry(), self.window.saveState()
