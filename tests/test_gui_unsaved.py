"""No lost work: loading a preset, starting a new scenario or quitting with unsaved edits asks
first (save, discard or cancel); scenario changes can be undone and redone (Ctrl+Z,
Ctrl+Shift+Z), a preset load among them; and the next session comes back with its preset's name
and unsaved mark, a bundled preset's too."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QCloseEvent

from accelscope.engine.catalog.presets import bundled_preset_files
from accelscope.engine.physics.engine import Engine
from accelscope.gui.main_window import MainWindow
from accelscope.gui.state import session

FIRST, SECOND = "teach-roofline-basics", "brunetta-fig2-batch-sweep"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path))
    return tmp_path


def bundled(stem: str):
    return next(entry for entry in bundled_preset_files() if entry.name == f"{stem}.json")


def make_window(qtbot, **kwargs) -> MainWindow:
    window = MainWindow(Engine(), **kwargs)
    qtbot.addWidget(window)
    window.start(synchronous=True)
    return window


@pytest.fixture
def window(qtbot, data_dir):
    return make_window(qtbot)


@pytest.fixture
def answers(window):
    """The answers the prompt gets, in turn; what it was asked is kept in ``asked``."""
    class Answers(list):
        asked: list[str]

    given = Answers()
    asked: list[str] = []

    def ask(parent, name, action):
        asked.append(f"{name}: {action}")
        return given.pop(0)

    window.presets.ask_unsaved = ask
    given.asked = asked
    return given


def edited(window, batch: int = 48) -> None:
    window.presets.open_file(bundled(FIRST), bundled=True)
    window.controller.set_field("batch", batch)
    window.controller.throttle.flush()
    assert window.presets.modified and window.isWindowModified()


def test_loading_another_preset_asks_and_cancel_keeps_the_edits(window, answers):
    edited(window)
    answers += ["cancel"]
    entry = next(e for e in window.presets_panel.entries() if e.path.name == f"{SECOND}.json")
    window.presets_panel.preset_chosen.emit(entry)  # a click in the presets dock
    assert answers.asked == [f"{window.presets.name}: opening {SECOND}"]
    assert window.controller.workspace.scenario.batch == 48 and window.presets.modified


def test_discard_loads_and_save_writes_first(window, answers, data_dir):
    edited(window)
    answers += ["discard"]
    assert window.presets.ask_open(bundled(SECOND), bundled=True)
    assert window.presets.current.source.stem == SECOND and not window.presets.modified

    # A user preset, edited, then saved on the way to the next load.
    window.presets.save_to(data_dir / "mine.json", "Mine", "")
    window.controller.set_field("batch", 96)
    answers += ["save"]
    assert window.presets.ask_open(bundled(FIRST), bundled=True)
    from accelscope.engine.catalog.presets import load_preset

    assert load_preset(data_dir / "mine.json", window.engine.catalog).workspace.scenario.batch == 96


def test_new_and_quit_ask_too(window, answers):
    edited(window)
    answers += ["cancel", "cancel"]
    window.qactions["file.new"].trigger()
    assert window.controller.workspace.scenario.batch == 48
    window.qactions["file.quit"].trigger()
    assert answers.asked[-1].endswith(": quitting")
    # Closed by the window manager (a spontaneous close event): asked the same way.
    answers += ["cancel"]
    event = QCloseEvent()
    event.setAccepted(True)
    event.spontaneous = lambda: True  # type: ignore[method-assign]
    window.closeEvent(event)
    assert not event.isAccepted() and len(answers.asked) == 3


def test_nothing_is_asked_without_edits(window, answers):
    assert window.presets.ask_open(bundled(SECOND), bundled=True)
    assert answers.asked == []


def test_undo_and_redo_scenario_changes_a_drag_as_one_step(window):
    history = window.history
    start = window.controller.workspace.scenario.batch
    for batch in (2, 4, 8, 16, 32):  # a slider dragged: one step when it comes to rest
        window.controller.set_field("batch", batch)
    history.commit()
    window.controller.set_field("tp", 2)
    window.show_view("sweep")  # looking at another tab is no step
    history.commit()
    window.qactions["edit.undo"].trigger()
    scenario = window.controller.workspace.scenario
    assert (scenario.batch, scenario.tp) == (32, 1) and window.controller.workspace.view == "sweep"
    window.qactions["edit.undo"].trigger()
    assert window.controller.workspace.scenario.batch == start
    assert window.controls.batch_spin.value() == start  # the controls follow
    window.qactions["edit.redo"].trigger()
    window.qactions["edit.redo"].trigger()
    assert (window.controller.workspace.scenario.batch, window.controller.workspace.scenario.tp) == (32, 2)
    assert window.qactions["edit.undo"].shortcut().toString() == "Ctrl+Z"
    assert window.qactions["edit.redo"].shortcut().toString() == "Ctrl+Shift+Z"


def test_undo_takes_a_preset_load_back_to_the_edits_it_replaced(window, answers):
    edited(window, batch=48)
    window.history.commit()
    answers += ["discard"]
    window.presets.ask_open(bundled(SECOND), bundled=True)
    window.history.undo()
    assert window.controller.workspace.scenario.batch == 48
    assert window.presets.current.source.stem == FIRST and window.presets.modified
    assert window.windowTitle().startswith(f"accelscope — {window.presets.name}") and window.isWindowModified()


@pytest.mark.parametrize("own", [False, True], ids=["bundled", "user"])
def test_the_next_session_keeps_the_preset_and_its_unsaved_mark(qtbot, data_dir, own):
    first = make_window(qtbot, remember_session=True)
    if own:
        first.presets.open_file(bundled(FIRST), bundled=True)
        first.presets.save_to(data_dir / "mine.json", "Mine", "")
    else:
        first.presets.open_file(bundled(FIRST), bundled=True)
    name = first.presets.name
    first.controller.set_field("batch", 48)
    first.controller.throttle.flush()
    first.close()  # closed by the program: not asked
    assert session.load_layout().preset_bundled is (not own)

    second = make_window(qtbot, remember_session=True)
    assert second.presets.name == name and "Unsaved" not in second.windowTitle()
    assert second.presets.modified and second.isWindowModified()
    assert second.controller.workspace.scenario.batch == 48
    second.close()
