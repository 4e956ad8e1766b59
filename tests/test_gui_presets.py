"""Presets and export in the window: a preset applies every field at once (one recompute),
saves round-trip exactly, a bad file changes nothing and says why, exports carry the scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pictures import assert_picture_file

from accelscope.engine.catalog.presets import BUNDLED_ORDER, list_presets, load_preset, user_presets_dir
from accelscope.engine.physics.engine import Engine


@pytest.fixture
def warnings(monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    return shown


def frames_during(window, action) -> list:
    frames: list = []
    window.controller.frame_ready.connect(frames.append)
    action()
    window.controller.throttle.flush()
    window.controller.frame_ready.disconnect(frames.append)
    return frames


def test_the_presets_list_shows_every_bundled_preset(window):
    names = [entry.name for entry in window.presets_panel.entries()]
    bundled = [entry.name for entry in list_presets(window.engine.catalog) if entry.bundled]
    assert names == bundled and len(names) == len(BUNDLED_ORDER)


def test_loading_a_preset_applies_every_field_at_once(window):
    entry = next(e for e in window.presets_panel.entries() if "Fig. 4" in e.name or "fig4" in e.path.name)
    preset = load_preset(entry.path, window.engine.catalog, bundled=True)
    frames = frames_during(window, lambda: window.presets_panel.preset_chosen.emit(entry))
    assert len(frames) == 1  # one recompute, never a half-applied state
    assert frames[0].workspace == preset.workspace
    assert window.controller.workspace == preset.workspace
    s = preset.workspace.scenario
    assert window.controls.batch_spin.value() == s.batch
    assert window.controls.parallel_spins["tp"].value() == s.tp
    assert window.controls.parallel_spins["dp"].value() == s.dp
    assert window.controls.shown() == preset.workspace.shown
    assert window.tabs.currentIndex() == ("roofline", "memory", "latency", "sweep", "energy").index(
        preset.workspace.view
    )


def test_every_bundled_preset_loads_in_the_window(window):
    for entry in window.presets_panel.entries():
        assert window.presets.open_file(entry.path, bundled=True), entry.name
        window.controller.throttle.flush()
        frame = window.controller.last_frame
        assert frame.workspace.scenario.model == load_preset(entry.path, window.engine.catalog).workspace.scenario.model


def test_save_as_and_reload_round_trip(window):
    window.controls.batch_spin.setValue(48)
    window.controls.parallel_spins["tp"].setValue(2)
    window.controller.throttle.flush()
    path = user_presets_dir() / "my-scenario.json"
    assert window.presets.save_to(path, "My scenario", "Batch 48 at TP 2.")
    saved = window.controller.workspace
    assert "My scenario" in [entry.name for entry in window.presets_panel.entries()]
    window.presets.new()
    window.controller.throttle.flush()
    assert window.controller.workspace != saved
    assert window.presets.open_file(path)
    assert window.controller.workspace == saved
    assert window.presets.recent()[0] == path.resolve()


def test_an_imported_model_is_embedded_in_the_preset(window):
    config = Path(__file__).parent / "fixtures" / "hf" / "qwen3-8b" / "config.json"
    assert window.models.import_file(str(config))
    window.controller.throttle.flush()
    path = user_presets_dir() / "imported.json"
    assert window.presets.save_to(path, "Imported", "")
    data = json.loads(path.read_text())
    assert isinstance(data["model"], dict)  # the architecture travels with the preset
    fresh = Engine()
    preset = load_preset(path, fresh.catalog)
    assert preset.model is not None and preset.workspace.scenario.model == preset.model.id


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("not json at all", "JSON"),
        ('{"schema": "accelscope.preset/2", "name": "x"}', "newer"),
        ("[1, 2, 3]", "object"),
    ],
)
def test_a_bad_preset_changes_nothing(window, warnings, tmp_path, content, fragment):
    bad = tmp_path / "broken-preset.json"
    bad.write_text(content)
    before = window.controller.workspace
    assert not window.presets.open_file(bad)
    assert len(warnings) == 1 and "broken-preset.json" in warnings[0] and fragment in warnings[0]
    assert window.controller.workspace == before


def test_export_this_plot_with_its_scenario(window, qtbot, tmp_path):
    from PySide6.QtGui import QImage

    from accelscope.gui.export.report import PAGES

    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentIndex(1)  # memory
    written = window.exports.export_plot(tmp_path / "memory.png", scale=2.0)
    png, sidecar = written
    assert png.name == "memory.png" and sidecar.name == "memory.preset.json"
    image = QImage(str(png))
    # The figure is composed on the handout page, not the window's tab: as wide as the page's
    # plot; as tall as its plot, captions and scenario line.
    width, height = PAGES["handout"]
    assert 2 * 0.9 * width <= image.width() <= 2 * width and image.height() >= 2 * height * 0.8
    assert load_preset(sidecar, window.engine.catalog).workspace == window.controller.workspace
    csv_file = window.exports.export_plot(tmp_path / "memory.csv")[0]
    assert csv_file.read_text().startswith("# Memory fit")
    svg = window.exports.export_plot(tmp_path / "memory.svg")[0]
    assert "<svg" in svg.read_text()


def test_export_all(window, tmp_path):
    written = window.exports.export_all_to(tmp_path / "all", scale=1.0)
    names = {path.name for path in written}
    assert {"1-roofline.png", "4-sweep.svg", "5-energy.csv", "explain.txt", "scenario.preset.json"} <= names
    assert all(path.stat().st_size > 0 for path in written)
    for png in (path for path in written if path.suffix == ".png"):
        assert_picture_file(png)


# ---- saving: the title marks changes, and Save writes only the preset the scenario came from ----


def test_the_title_marks_changes_since_the_last_load_or_save(window):
    def marked() -> bool:
        assert window.windowTitle().endswith("[*]")  # Qt shows "*" there while the window is modified
        return window.isWindowModified()

    assert not marked() and "Unsaved scenario" in window.windowTitle()
    window.controls.batch_spin.setValue(48)
    assert marked()
    window.presets.new()
    assert not marked()
    window.controller.set_workspace(window.controller.workspace.with_changes(view="energy"))
    assert not marked()  # another tab is no change of scenario
    entry = window.presets_panel.entries()[0]
    assert window.presets.open_file(entry.path, bundled=True)
    assert not marked() and entry.name in window.windowTitle()
    batch = window.controller.workspace.scenario.batch
    window.controller.set_field("batch", batch + 1)
    assert marked() and entry.name in window.windowTitle()
    window.controller.set_field("batch", batch)
    assert not marked()  # back as it was loaded
    window.controller.set_field("batch", batch + 1)
    assert window.presets.save_to(user_presets_dir() / "mine.json", "Mine", "")
    assert not marked() and "Mine" in window.windowTitle()


@pytest.fixture
def save_as_asked(window, monkeypatch):
    asked: list[bool] = []
    monkeypatch.setattr(window.presets, "save_as_dialog", lambda: asked.append(True))
    return asked


def test_save_writes_the_user_preset_the_scenario_came_from(window, save_as_asked):
    path = user_presets_dir() / "mine.json"
    assert window.presets.save_to(path, "Mine", "Mine, at batch 3.")
    window.controller.set_field("batch", 3)
    window.presets.save()
    assert save_as_asked == [] and not window.isWindowModified()
    assert load_preset(path, window.engine.catalog).workspace.scenario.batch == 3


def test_save_of_a_bundled_preset_asks_for_a_name(window, save_as_asked):
    entry = window.presets_panel.entries()[0]
    assert window.presets.open_file(entry.path, bundled=True)
    before = entry.path.read_bytes()
    window.controller.set_field("batch", window.controller.workspace.scenario.batch + 1)
    window.presets.save()
    assert save_as_asked == [True] and entry.path.read_bytes() == before


def test_a_model_vs_paper_row_is_no_presets_and_save_does_not_overwrite_it(window, save_as_asked, monkeypatch):
    from accelscope.gui.windows.validation import ValidationWindow

    monkeypatch.setattr(ValidationWindow, "start", lambda self, synchronous=False: None)  # no report needed
    path = user_presets_dir() / "mine.json"
    assert window.presets.save_to(path, "Mine", "")
    saved = path.read_bytes()
    row = window.controller.workspace.with_scenario(model="qwen3-8b", batch=16)  # as a row's setup would be
    window.side.show_validation().workspace_requested.emit(row)
    window.side.validation.close()
    assert window.controller.workspace == row
    assert "Mine" not in window.windowTitle() and window.presets.current is None
    assert not window.isWindowModified()  # shown as loaded
    window.presets.save()
    assert save_as_asked == [True] and path.read_bytes() == saved
