"""Builds the main window as the app does, on whatever screen the platform gives it, puts it
through presentation mode, the dock toggles and Reset layout, and prints what it saw as one
JSON object. Run in a process of its own by tests/test_gui_projector.py, which chooses the
platform and the screen's size (offscreen with a configured screen, or xcb on Xvfb).

    python tests/window_probe.py [--remember] [--save-narrow-explain] [--start-only]

``--remember``: start from (and on close save) the session in ACCELSCOPE_DATA_DIR, as the app
does. ``--save-narrow-explain``: before closing, put Explain in a column of its own at its
least width (the layout a small screen leaves). ``--start-only``: only the window as it
starts (``normal``), without the tour.
"""

from __future__ import annotations

import json
import sys
import time


def settle(app, seconds: float = 0.15) -> None:
    """Let the window system and the layouts finish (a real X server answers asynchronously)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    app.processEvents()


def rect(r) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def docks_of(window) -> dict:
    found = {}
    for dock in window.arrangement.docks:
        found[dock.objectName()] = {
            "visible": dock.isVisible(),
            "floating": dock.isFloating(),
            "area": window.dockWidgetArea(dock).name,
            "geometry": rect(dock.geometry()),
            "tabbed_with": sorted(other.objectName() for other in window.tabifiedDockWidgets(dock)),
        }
    return found


def layout_of(window, app) -> dict:
    """Where everything is, and for each tab what its page needs and the room it has (each tab
    shown in turn: a hidden page is not laid out)."""
    screen = window.screen().availableGeometry()
    central = window.centralWidget()
    pages = {}
    current = window.tabs.currentIndex()
    for index, view in enumerate(window.panels):
        window.tabs.setCurrentIndex(index)
        settle(app, 0.05)
        scroll = window.tabs.scroll_area(index)
        area = scroll.maximumViewportSize()
        least = scroll.least_size(area.width())
        pages[view] = {"needs": [least.width(), least.height()], "area": [area.width(), area.height()],
                       "scrolls": [scroll.horizontalScrollBar().isVisible(), scroll.verticalScrollBar().isVisible()]}
    window.tabs.setCurrentIndex(current)
    settle(app, 0.05)
    return {
        "screen": rect(screen),
        "frame": rect(window.frameGeometry()),
        "geometry": rect(window.geometry()),
        "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
        "central": [central.width(), central.height()],
        "docks": docks_of(window),
        "strip": window.strip.isVisible(),
        "status_bar": window.statusBar().isVisible(),
        "full_screen": window.isFullScreen(),
        "pages": pages,
    }


def main(argv: list[str]) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    app = QApplication(["accelscope-probe"])
    from accelscope.gui.app import show_main_window
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.main_window import MainWindow
    from accelscope.gui.state import session

    configure_pyqtgraph()
    remember = "--remember" in argv
    window = MainWindow(remember_session=remember)
    show_main_window(window, restored=remember and bool(session.load_layout().geometry))
    window.start(synchronous=True)
    settle(app, 0.5)
    report: dict = {"normal": layout_of(window, app)}
    if "--start-only" in argv:
        window.close()
        settle(app)
        print(json.dumps(report))
        return

    toggles = {}
    for dock in window.arrangement.docks:
        action = dock.toggleViewAction()
        before = dock.isVisible()
        action.trigger()
        settle(app)
        toggled = dock.isVisible()
        action.trigger()
        settle(app)
        toggles[dock.objectName()] = [before, toggled, dock.isVisible()]
    report["toggles"] = toggles
    report["after_toggles"] = layout_of(window, app)

    window.qactions["view.presentation"].trigger()
    settle(app, 0.5)
    report["presentation"] = layout_of(window, app)
    window.controls_dock.toggleViewAction().trigger()  # F6: every control back
    settle(app)
    report["presentation_full_controls"] = layout_of(window, app)
    window.controls_dock.toggleViewAction().trigger()
    settle(app)
    window.qactions["view.presentation"].trigger()
    settle(app, 0.5)
    report["after_presentation"] = layout_of(window, app)

    window.explain_dock.setFloating(True)
    window.presets_dock.hide()
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.controls_dock)
    settle(app)
    report["disarranged"] = layout_of(window, app)
    window.qactions["view.reset_layout"].trigger()
    settle(app)
    report["reset"] = layout_of(window, app)

    if "--save-narrow-explain" in argv:
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.explain_dock)
        window.explain_dock.show()
        window.resizeDocks([window.explain_dock], [1], Qt.Orientation.Horizontal)
        settle(app)
        report["saved"] = layout_of(window, app)
    window.close()
    settle(app)
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
