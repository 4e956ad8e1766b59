"""Start the desktop app."""

from __future__ import annotations

import sys


def run(argv: list[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    app.setApplicationName("accelscope")
    app.setOrganizationName("accelscope")

    from .style import configure_pyqtgraph

    configure_pyqtgraph()
    from .main_window import MainWindow

    window = MainWindow()
    window.show()
    window.start()  # kernels compile (or load from cache) off the GUI thread
    return app.exec()
