"""What the long soak found growing, checked in a few seconds: replaying the same control
changes must not add to pyqtgraph's per-item symbol caches, nor leave plot items or Qt objects
behind.

pyqtgraph renders each scatter symbol once into an atlas (a numpy image plus a QPixmap copy)
keyed on the *identity* of its pen and brush objects. A pen or brush given as ``None`` or a
colour is turned into a new QPen/QBrush at every ``setData``, so each update rendered and
stored the same symbol again — about 1.7 kB per entry, kept until an item holds 1,000 entries
(pyqtgraph then rebuilds the atlas), i.e. tens of MB over a long session. That was the soak's
linear growth of ~3 MB per 1,000 changes (~5 MB per 1,000 with the roofline tab alone). Panels
avoid it by making every pen and brush once and passing the same objects again.

The check: bring the window to a fixed scenario, replay a fixed sequence of changes (sliders,
combo boxes, spin boxes, selection, tab switches) to warm every cache, then replay it again
from the same scenario. The checked pass draws exactly the scenarios of the pass before it, so
every symbol it needs is already rendered; any new atlas entry is a style made anew per update.
"""

from __future__ import annotations

import random
import sys

import pytest

from accelscope.engine.core.precision import PRECISIONS
from accelscope.engine.physics.engine import Engine

CHANGES_PER_PASS = 60
WINDOW = {"size": (1600, 1000)}  # of the tests that take ``window`` (conftest)
# The first pass starts from the window as built, the later ones from the end of a pass: two
# warm-up passes make the checked pass start exactly as the one before it.
WARM_PASSES = 2
SEED = 11


def replay(window, start) -> None:
    """From the workspace ``start``, the same CHANGES_PER_PASS changes every time."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    controls = window.controls
    every_accelerator = tuple(window.engine.catalog.accelerators)
    rng = random.Random(SEED)

    def settle() -> None:
        window.controller.throttle.flush()
        window.flush_explanation()
        app.processEvents()
        panel = window.tabs.currentWidget()
        if callable(getattr(panel, "pending", None)) and panel.pending():
            panel.refresh_now()  # an analysis tab's study, which the app runs once the controls rest
            app.processEvents()

    moves = [
        lambda: controls.batch_slider.setValue(rng.randint(0, controls.batch_slider.maximum())),
        lambda: controls.input_slider.setValue(rng.randint(0, controls.input_slider.maximum())),
        lambda: controls.offload_slider.setValue(rng.randint(0, controls.offload_slider.maximum())),
        lambda: controls.precision_combos["weight_precision"].setCurrentIndex(rng.randrange(len(PRECISIONS))),
        lambda: controls.precision_combos["kv_precision"].setCurrentIndex(rng.randrange(len(PRECISIONS))),
        lambda: controls.parallel_spins["tp"].setValue(rng.choice((1, 2, 4, 8))),
        lambda: controls.model_combo.setCurrentIndex(rng.randrange(controls.model_combo.count())),
        lambda: window.controller.select(rng.choice(every_accelerator)),
        lambda: window.tabs.setCurrentIndex(rng.randrange(window.tabs.count())),
    ]
    window.controller.set_workspace(start)
    settle()
    for _ in range(CHANGES_PER_PASS):
        rng.choice(moves)()
        settle()
    # Every tab drawn, with a dense and a mixture-of-experts model (some plots draw only for
    # one of them): hidden tabs catch up only when shown.
    catalog = window.engine.catalog
    dense = next(model.id for model in catalog.models.values() if model.moe is None)
    experts = next(model.id for model in catalog.models.values() if model.moe is not None)
    for model in (dense, experts):
        controls.model_combo.setCurrentIndex(controls.model_combo.findData(model))
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            settle()


def census(window) -> dict[str, object]:
    """Symbol-cache entries per scatter item, plot items per plot, and Qt objects."""
    import pyqtgraph as pg
    from PySide6.QtCore import QObject

    views = window.findChildren(pg.GraphicsView)
    scatter = {
        f"{type(item.parentItem()).__name__}/{type(item).__name__}#{number}": len(item.fragmentAtlas)
        for view in views
        for number, item in enumerate(i for i in view.scene().items() if isinstance(i, pg.ScatterPlotItem))
    }
    return {
        "atlas entries": scatter,
        "plot items": [len(view.scene().items()) for view in views],
        "Qt objects": len(window.findChildren(QObject)),
    }


@pytest.mark.slow  # a soak: hundreds of replayed changes (~30 s)
def test_replaying_changes_adds_no_symbols_items_or_objects(window):
    every_accelerator = tuple(window.engine.catalog.accelerators)
    window.controller.set_shown(every_accelerator)
    window.controller.throttle.flush()
    start = window.controller.workspace

    for _ in range(WARM_PASSES):
        replay(window, start)
    warmed = census(window)
    assert sum(warmed["atlas entries"].values()) > 0, "no scatter symbols drawn: the check would see nothing"

    replay(window, start)
    again = census(window)
    grown = {
        name: (warmed["atlas entries"].get(name, 0), count)
        for name, count in again["atlas entries"].items()
        if count > warmed["atlas entries"].get(name, 0)
    }
    assert not grown, f"symbols rendered again for the same scenarios (before, after): {grown}"
    assert again["plot items"] == warmed["plot items"]
    assert again["Qt objects"] == warmed["Qt objects"]


def test_the_app_start_freezes_start_up_objects_once_drawn(qtbot, monkeypatch):
    """A full garbage collection walks every object the collector tracks: ~160,000 after
    start-up (numba, Qt wrappers, the catalog), ~60 ms landing inside whichever update it
    interrupts. The app's start freezes them after its first frame; a synchronous start (tests,
    reports, several windows in one process) leaves the collector alone."""
    import gc

    from accelscope.gui import app as app_module
    from accelscope.gui.state.controller import Controller
    from accelscope.gui.state.session import default_workspace

    real_freeze = app_module.freeze_start_up_objects
    frozen: list[int] = []
    monkeypatch.setattr(app_module, "freeze_start_up_objects", lambda: frozen.append(1))
    engine = Engine()

    synchronous = Controller(engine, default_workspace(engine.catalog))
    synchronous.start(synchronous=True)
    assert synchronous.last_frame is not None
    qtbot.wait(1)  # any timer queued by the start has run
    assert frozen == []

    in_the_app = Controller(engine, default_workspace(engine.catalog))
    app_module.freeze_when_drawn(in_the_app)  # as the app's start does
    with qtbot.waitSignal(in_the_app.frame_ready, timeout=120_000):
        in_the_app.start()
    qtbot.waitUntil(lambda: frozen == [1], timeout=5_000)

    try:
        real_freeze()
        assert gc.get_freeze_count() > 0  # every object alive now is out of the collector's sight
    finally:
        gc.unfreeze()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator switch")
def test_the_allocator_threshold_can_be_pinned():
    from accelscope.gui.app import pin_allocator_threshold

    assert pin_allocator_threshold() is True


def test_garbage_is_collected_on_the_gui_thread_only(qtbot):
    """A plot item in a reference cycle, dropped by the GUI thread, must be deleted there: a
    worker that allocates past the collector's thresholds does not collect it; the GUI
    thread's timer does. (Collected on the worker, its Qt destructor ran beside the GUI
    thread's painting: rare aborts after a tab rebuilt its plots.)"""
    import gc
    import threading
    import weakref

    import pyqtgraph as pg

    from accelscope.gui.app import collect_on_gui_thread, stop_collecting_on_gui_thread

    stop_collecting_on_gui_thread(collect_on_gui_thread())  # the test's own is running (conftest)
    collector = collect_on_gui_thread()
    try:
        assert not gc.isenabled()
        deleted_on: list[str] = []
        item = pg.BarGraphItem(x0=[0.0], width=[1.0], y=[0.0], height=0.7)
        item.itself = item  # a cycle: only the collector frees it
        weakref.finalize(item, lambda: deleted_on.append(threading.current_thread().name))
        del item

        kept: list = []

        def allocate() -> None:
            kept.extend({"n": [i]} for i in range(20_000))  # far past gc's first threshold (700)

        worker = threading.Thread(target=allocate, name="worker")
        worker.start()
        worker.join()
        assert deleted_on == []  # not by the worker
        assert gc.get_count()[0] > gc.get_threshold()[0]  # though a collection was due there
        qtbot.waitUntil(lambda: deleted_on != [], timeout=5_000)
        assert deleted_on == [threading.main_thread().name]
    finally:
        stop_collecting_on_gui_thread(collector)
        kept.clear()
    assert gc.isenabled()


def test_the_app_collects_on_the_gui_thread_while_it_runs(qtbot, monkeypatch):
    """The app's start switches automatic collection off before any other thread runs, and its
    end switches it back on."""
    import gc
    from types import SimpleNamespace

    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QApplication, QMainWindow

    from accelscope.gui import app as app_module
    from accelscope.gui import main_window

    seen: dict[str, bool] = {}

    class Controller(QObject):
        engine_ready = Signal()

    class Window(QMainWindow):
        def __init__(self, **_options) -> None:
            super().__init__()
            seen["collector off when the window is made"] = not gc.isenabled()
            self.controller = Controller(self)
            self.display = SimpleNamespace(presentation=False)  # shown as a window, not full screen

        def start(self) -> None:
            seen["collector off when the workers start"] = not gc.isenabled()

    def run_the_loop(_app) -> int:
        seen["collector off while the app runs"] = not gc.isenabled()
        return 0

    monkeypatch.setattr(main_window, "MainWindow", Window)
    monkeypatch.setattr(QApplication, "exec", run_the_loop)
    monkeypatch.setattr(app_module, "pin_allocator_threshold", lambda: False)
    assert app_module.run([]) == 0
    assert seen == dict.fromkeys(("collector off when the window is made", "collector off when the workers start",
                                  "collector off while the app runs"), True)
    assert gc.isenabled()
