"""Start the desktop app, and tune the process for it (garbage collector, allocator)."""

from __future__ import annotations

import ctypes
import gc
import sys


def freeze_start_up_objects() -> None:
    """Collect once, then keep every object alive now out of later garbage collections.

    After start-up the process holds ~160,000 objects the collector tracks (numba's
    dispatchers and type system, Qt wrappers, the catalog), nearly all of them alive until
    exit. A full collection walks them all — 58–74 ms measured, on top of whatever update
    it lands in; frozen, it walks only what was made since (~0 ms). Objects frozen here are
    never freed by the collector, so this is for the app's one window, after its first frame.
    """
    gc.collect()
    gc.freeze()


# glibc's initial threshold above which a block gets its own memory mapping (returned to the
# system when freed); M_MMAP_THRESHOLD is mallopt's parameter number for it.
ALLOCATOR_MMAP_THRESHOLD_BYTES = 128 * 1024
_M_MMAP_THRESHOLD = -3


def pin_allocator_threshold() -> bool:
    """Keep glibc's mmap threshold at its initial 128 kB; True where it was set (Linux, glibc).

    glibc raises the threshold each time a large block is freed (up to 32 MB), and the app frees
    multi-MB numpy arrays and Qt images from its first change on; from then, blocks of that size
    come from the main heap, which fragments and cannot shrink. Over 10,000 control changes that
    held ~27 MB of freed memory resident (malloc_trim returned it); with the threshold pinned the
    same soak grew 17 MB, flat from change 5,000. The cost is a mapping per large array.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, ALLOCATOR_MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):  # another C library (musl) has no such switch
        return False


# How often the GUI thread looks whether a collection is due (as the interpreter would have
# started one: gc's thresholds). Short, so each collection finds few new objects (~1 ms).
COLLECT_INTERVAL_S = 0.1


def collect_on_gui_thread():
    """Run Python's cyclic garbage collector on the GUI thread only, from a timer there
    (pyqtgraph's ``GarbageCollector``: automatic collection off, the same thresholds checked
    every :data:`COLLECT_INTERVAL_S`). Returns it; it works while it is kept alive.

    Left automatic, a collection runs in whichever thread happens to allocate when a threshold
    is crossed: the kernels' warm-up, the validation report's worker, a study. Plot items that
    a tab dropped (a re-layout, a theme change, a closed window) sit in reference cycles until
    then, and collecting them deletes their Qt objects — a QGraphicsItem's destructor run on
    that thread while the GUI thread paints or lays out the same scene. That is undefined
    behaviour in Qt, seen as rare aborts ("pure virtual method called") after the Scaling tab
    rebuilt its plots. A stress run (the GUI thread rebuilding plots, a worker allocating)
    had 510 of 570 dropped items deleted on the worker without this, none with it.
    """
    from pyqtgraph.util.garbage_collector import GarbageCollector

    return GarbageCollector(interval=COLLECT_INTERVAL_S)


def stop_collecting_on_gui_thread(collector) -> None:
    """Stop ``collector`` (from :func:`collect_on_gui_thread`) and give collection back to the interpreter."""
    collector.timer.stop()
    gc.enable()


def freeze_when_drawn(controller) -> None:
    """Freeze the start-up objects (:func:`freeze_start_up_objects`) once ``controller`` (a
    gui.state.controller.Controller) has drawn its first frame: the turn of the event loop after
    it, so the window's first paint has made its objects. For the app's one window; tests and
    reports make many and leave the collector alone."""
    from PySide6.QtCore import QTimer

    def drawn() -> None:
        controller.engine_ready.disconnect(drawn)
        QTimer.singleShot(0, freeze_start_up_objects)

    controller.engine_ready.connect(drawn)


def show_main_window(window, *, restored: bool) -> None:
    """Show the main window (a gui.main_window.MainWindow) where and as large as it was last time
    (``restored``), else filling its screen; full screen if it is in presentation mode."""
    if window.display.presentation:
        window.showFullScreen()
    elif restored:
        window.show()
    else:
        # Fill the screen (also where no window manager honours "maximised", e.g. a virtual screen).
        window.resize(window.screen().availableGeometry().size())
        window.showMaximized()


def run(argv: list[str] | None = None) -> int:
    from importlib.resources import files

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

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
    collector = collect_on_gui_thread()  # before any thread but this one runs

    from .look.style import configure_pyqtgraph

    configure_pyqtgraph()
    from .main_window import MainWindow
    from .state import session

    window = MainWindow(remember_session=True)
    freeze_when_drawn(window.controller)
    show_main_window(window, restored=bool(session.load_layout().geometry))
    window.start()  # kernels compile (or load from cache) off the GUI thread
    code = app.exec()
    # Destroy the window while Qt is alive: pyqtgraph items left to the interpreter's
    # teardown, in whatever order it picks, can crash the process on exit.
    from PySide6.QtCore import QEvent

    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    stop_collecting_on_gui_thread(collector)
    return code
