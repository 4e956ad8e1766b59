"""Test set-up: headless Qt, and a private user-data folder so no test touches the real one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Qt must be told before it is first imported (pytest-qt imports it early). Headless, with a
# desktop screen and the two projector screens the window must fit (tests/fixtures/screens.json).
SCREENS = Path(__file__).parent / "fixtures" / "screens.json"
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREENS}"
# User catalogs and presets go to a throw-away folder for the whole run.
os.environ["ACCELSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="accelscope-test-data-")

import pytest  # noqa: E402

NUMBA_SETTINGS = ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")
KERNEL_WARM_UP = Path(__file__).parent / "warm_kernels.py"
WARM_UP = pytest.StashKey[tuple]()
# Test files that run the serving simulator, in a worker or in a process of their own (the
# command line): over xdist they run last, when the warm-up has compiled it (~150 s on two
# cores). Only the order depends on this list: a test missing from it waits for the compile in
# a worker, or compiles it again in a process of its own (test_cli_hostile's report did, ~240 s;
# with test_cost among the first files, both workers waited for it).
SERVING_LAST = ("serving", "test_cli.py", "test_cli_hostile.py", "test_cli_serve.py", "test_cost.py",
                "test_cost_cli.py", "test_explain.py", "test_fuzz_loaders.py", "test_gui_export.py",
                "test_gui_serving.py", "test_gui_theme.py", "test_gui_validation.py", "test_hybrid_physics.py",
                "test_reference_hand.py", "test_report.py", "test_studies_analysis.py", "test_tiering.py",
                "test_validate.py")


def _compile_locks() -> str:
    from accelscope.engine.physics.jit import CACHE_BASE

    return os.path.join(CACHE_BASE, "compile-locks")


def pytest_configure(config):
    """Over xdist workers (``-n 2``) each kernel is compiled once (tests/xdist_compiles.py), and
    the controller compiles the physics and serving kernels beside them (tests/warm_kernels.py):
    the serving simulator's compile, the longest, runs beside the tests that need none of it."""
    if hasattr(config, "workerinput"):
        from xdist_compiles import compile_once_across_workers

        compile_once_across_workers(_compile_locks())
    elif config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None) \
            and not config.option.collectonly:
        import subprocess
        import sys

        log = tempfile.TemporaryFile()
        process = subprocess.Popen([sys.executable, str(KERNEL_WARM_UP), _compile_locks()],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        config.stash[WARM_UP] = (process, log)


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # each worker orders the same collection the same way, as xdist needs
        tests = Path(__file__).parent
        items.sort(key=lambda item: item.path.relative_to(tests).parts[0] in SERVING_LAST)


def pytest_unconfigure(config):
    process, log = config.stash.get(WARM_UP, (None, None))
    if process is None:
        return
    if process.poll() is None:  # the run ended first (stopped, or nothing needed the kernels)
        process.kill()
    if process.wait() > 0:  # the tests compiled what it did not
        log.seek(0)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"tests/warm_kernels.py failed ({process.returncode}):\n"
                                f"{log.read().decode(errors='replace')[-2000:]}", yellow=True)
    log.close()


@pytest.fixture(autouse=True)
def _numba_settings_left_as_found():
    """No test leaves numba's settings changed in the environment, where every later subprocess
    would inherit them (a cache folder left behind had each one compile every kernel anew)."""
    before = {name: os.environ.get(name) for name in NUMBA_SETTINGS}
    yield
    after = {name: os.environ.get(name) for name in NUMBA_SETTINGS}
    assert after == before, f"the test left numba's settings changed: {before} -> {after}"


_FROZEN = False


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread(request):
    """In a test with Qt, Python's collector runs on the GUI thread only, as in the app
    (gui.app.collect_on_gui_thread); after it, what the test dropped is collected here, on the
    GUI thread, before automatic collection resumes. Otherwise plot items of one test were
    deleted by a collection in whichever thread allocated next (a validation worker, a warm-up)."""
    if "qapp" not in request.fixturenames:
        yield
        return
    import gc

    from accelscope.gui.app import collect_on_gui_thread, stop_collecting_on_gui_thread

    global _FROZEN
    if not _FROZEN:
        # What lives for the whole run (modules, classes, the session's engine) is set aside from
        # the collector once, as the app does once drawn (gui.app.freeze_when_drawn): each test's
        # collection below then walks what the tests made, not the ~200,000 objects of the code.
        import accelscope.gui.main_window  # noqa: F401  (its modules among what is set aside)

        gc.collect()
        gc.freeze()
        _FROZEN = True
    collector = collect_on_gui_thread()
    yield
    gc.collect()
    stop_collecting_on_gui_thread(collector)


@pytest.fixture(scope="session")
def engine():
    from accelscope.engine.physics.engine import Engine

    return Engine()


@pytest.fixture(scope="session")
def catalog(engine):
    return engine.catalog


@pytest.fixture(scope="session")
def validation_report(engine, request):
    """The catalog run against every published figure (``validate``), once for the run: a whole
    validation takes ~20 CPU s, and the validation tests and the Model vs paper window read the
    same. Over xdist workers the first to need it validates and leaves it in a file of this run's
    own; another waits for it there rather than validating again."""
    import fcntl
    import pickle

    from accelscope.engine.validation.report import validate

    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is None:
        return validate(engine)
    path = Path(tempfile.gettempdir()) / f"accelscope-validation-{workerinput['testrunuid']}.pickle"
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        if path.exists():
            with open(path, "rb") as stream:
                return pickle.load(stream)
        report = validate(engine)
        with open(f"{path}.part", "wb") as stream:
            pickle.dump(report, stream)
        os.replace(f"{path}.part", path)
        return report


@pytest.fixture
def open_window(qtbot, monkeypatch, tmp_path):
    """Makes a main window with its own engine (imports must not leak into other tests) and its
    own user data folder, its kernels ready. ``size``: shown at that size (else not shown);
    ``every_accelerator``: the whole catalog shown, and the frame for it drawn."""

    def make(*, size: tuple[int, int] | None = None, every_accelerator: bool = False):
        from accelscope.engine.physics.engine import Engine
        from accelscope.gui.look.style import configure_pyqtgraph
        from accelscope.gui.main_window import MainWindow

        monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path / "data"))
        configure_pyqtgraph()
        window = MainWindow(Engine())
        qtbot.addWidget(window)
        if size is not None:
            window.resize(*size)
            window.show()
        window.start(synchronous=True)
        if every_accelerator:
            window.controller.set_shown(tuple(window.engine.catalog.accelerators))
            window.controller.throttle.flush()
        return window

    return make


@pytest.fixture
def window(open_window, request):
    """A main window made by ``open_window`` with the test module's ``WINDOW`` options (``size``,
    ``every_accelerator``); a module without them gets one started and not shown."""
    return open_window(**getattr(request.module, "WINDOW", {}))


def _screen_of_size(size: tuple[int, int]):
    from PySide6.QtWidgets import QApplication

    for screen in QApplication.screens():
        if (screen.geometry().width(), screen.geometry().height()) == size:
            return screen
    pytest.skip(f"no {size[0]}x{size[1]} screen on this platform (tests/fixtures/screens.json sets them up)")


@pytest.fixture
def window_on(qtbot, monkeypatch, tmp_path):
    """A main window shown on the screen of the given size as the app shows it there (the
    default layout for that screen, filling it), its kernels ready."""

    def make(size: tuple[int, int]):
        from accelscope.engine.physics.engine import Engine
        from accelscope.gui.app import show_main_window
        from accelscope.gui.look.style import configure_pyqtgraph
        from accelscope.gui.main_window import MainWindow

        monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path / "data"))
        configure_pyqtgraph()
        screen = _screen_of_size(size)
        window = MainWindow(Engine())
        qtbot.addWidget(window)
        window.setScreen(screen)
        window.move(screen.geometry().topLeft())
        window.arrangement.reset()  # the default layout for the screen it is on now
        show_main_window(window, restored=False)
        qtbot.waitExposed(window)
        window.start(synchronous=True)
        qtbot.wait(50)  # settle
        return window

    return make


@pytest.fixture
def settle_plots(qtbot):
    """A function that lets a panel's page take the size its plots need (each plot canvas tells
    it of its least size once its plots are laid out; the page then grows, or scrolls) and lays
    it out, so positions are final."""
    from accelscope.gui.plotkit.bars import RowCanvas

    def least(canvas: RowCanvas) -> tuple[int, int]:
        # A size the panel sets itself (Scaling shares its width out) wins over the hint, as in a layout.
        hint, set_size = canvas.minimumSizeHint(), canvas.minimumSize()
        return (set_size.width() or hint.width(), set_size.height() or hint.height())

    def settle(panel) -> None:
        def canvases_fit() -> bool:
            # Each paint may find a canvas' least size grown again (an axis widens once laid out).
            for _ in range(3):
                panel.grab()
                qtbot.wait(10)
            return all(canvas.width() >= least(canvas)[0] and canvas.height() >= least(canvas)[1]
                       for canvas in panel.findChildren(RowCanvas) if canvas.isVisibleTo(panel))

        qtbot.wait(30)
        qtbot.waitUntil(canvases_fit, timeout=3000)
        panel.grab()

    return settle
