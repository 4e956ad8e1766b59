"""Start the desktop app."""

from __future__ import annotations

import sys


def run(argv: list[str] | None = None) -> int:
    from importlib.resources import files

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from .state.controller import pin_allocator_threshold

    pin_allocator_threshold()  # before the app allocates: keeps freed large blocks from staying resident
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    app.setApplicationName("accelscope")
    app.setOrganizationName("accelscope")
    # Ties the window to packaging/accelscope.desktop (Wayland, task bars) and gives it the icon.
    app.setDesktopFileName("accelscope")
    icons = files("accelscope.resources") / "icons"
    icon = QIcon()
    for size_px in (48, 128, 256):
        icon.addFile(str(icons / f"accelscope-{size_px}.png"))
    app.setWindowIcon(icon)

    from .look.style import configure_pyqtgraph

    configure_pyqtgraph()
    from .main_window import MainWindow
    from .state import session

    window = MainWindow(remember_session=True)
    if session.load_layout().geometry:
        window.show()  # where and how large it was last time
    else:
        # Fill the screen (also where no window manager honours "maximised", e.g. a virtual screen).
        window.resize(app.primaryScreen().availableGeometry().size())
        window.showMaximized()
    window.start()  # kernels compile (or load from cache) off the GUI thread
    code = app.exec()
    # Destroy the window while Qt is alive: pyqtgraph items left to the interpreter's
    # teardown, in whatever order it picks, can crash the process on exit.
    from PySide6.QtCore import QEvent

    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    return code
