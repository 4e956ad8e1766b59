"""What the app remembers between runs, keyboard access, and the loading-problems banner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.presets import load_preset
from accelscope.engine.physics.engine import Engine
from accelscope.gui.main_window import MainWindow
from accelscope.gui.state import session


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path))
    return tmp_path


def _window(qtbot, engine: Engine | None = None, **kwargs) -> MainWindow:
    window = MainWindow(engine or Engine(), **kwargs)
    qtbot.addWidget(window)
    window.start(synchronous=True)
    return window


def test_last_scenario_and_view_come_back_on_the_next_start(qtbot, data_dir):
    first = _window(qtbot, remember_session=True)
    first.controls.bindings["batch"].set_value(48)
    first.controller.set_field("batch", 48)
    first.controller.set_field("kv_precision", "fp8")
    first.tabs.setCurrentIndex(3)
    first.controller.throttle.flush()
    first.close()
    assert session.session_preset_path().is_file()
    assert session.layout_path().is_file()

    second = _window(qtbot, remember_session=True)
    scenario = second.controller.workspace.scenario
    assert (scenario.batch, scenario.kv_precision) == (48, "fp8")
    assert second.controller.workspace.view == "sweep"
    assert second.tabs.currentIndex() == 3
    assert second.controls.batch_spin.value() == 48
    assert not second.banner.isVisible() and second.problems == []


def test_without_remembering_nothing_is_written(qtbot, data_dir):
    window = _window(qtbot)
    window.controller.set_field("batch", 7)
    window.close()
    assert not session.session_preset_path().exists()
    assert not session.layout_path().exists()


def test_a_damaged_session_file_gives_the_default_scenario_and_says_so(qtbot, data_dir):
    session.session_preset_path().write_text('{"schema": "accelscope.preset/1", "name": 3', encoding="utf-8")
    session.layout_path().write_text("[not a layout", encoding="utf-8")
    window = _window(qtbot, remember_session=True)
    window.show()
    assert window.controller.workspace.scenario.batch == 1  # the default scenario
    assert window.banner.isVisible()
    assert "last session could not be restored" in window.banner.label.text()
    assert "session.preset.json" in window.problems[0]


def test_a_bad_user_accelerator_is_listed_and_the_good_one_appears(qtbot, data_dir, engine):
    folder = data_dir / "accelerators"
    folder.mkdir()
    text = Path(engine.catalog.accelerators["h100-sxm"].source_file).read_text(encoding="utf-8")
    (folder / "my-h100.toml").write_text(text.replace('id = "h100-sxm"', 'id = "my-h100"'), encoding="utf-8")
    (folder / "broken.toml").write_text('id = "broken"\nname = 5\n', encoding="utf-8")
    catalog = Catalog.load()
    assert "my-h100" in catalog.accelerators
    window = _window(qtbot, Engine(catalog))
    window.show()
    assert "my-h100" in window.controls._accelerator_items  # in the checklist
    assert window.banner.isVisible()
    assert "broken.toml" in window.banner.label.text()
    assert any("broken.toml" in problem for problem in window.problems)


def test_every_menu_shortcut_and_control_key_is_listed(qtbot, data_dir):
    window = _window(qtbot)
    keys = dict(window.shortcut_list())
    for expected in ("Ctrl+O", "Ctrl+S", "Ctrl+E", "Ctrl+/", "Ctrl+]", "Alt+B", "Alt+T", "Alt+S"):
        assert expected in keys, expected
    # Each Alt key is used once.
    alt_keys = [k for k, _ in window.shortcut_list() if k.startswith("Alt+")]
    assert len(alt_keys) == len(set(alt_keys))


def test_alt_letter_moves_focus_to_its_control(qtbot, data_dir):
    window = _window(qtbot)
    window.show()
    qtbot.waitExposed(window)
    labels = {label.text(): label for label in window.controls.findChildren(type(window.summary_label))}
    assert labels["&Batch"].buddy() is window.controls.batch_spin
    assert labels["&TP"].buddy() is window.controls.parallel_spins["tp"]


def test_select_next_accelerator_by_keyboard(qtbot, data_dir):
    window = _window(qtbot)
    shown = window.controller.workspace.shown
    start = shown.index(window.controller.workspace.selected)
    window.controller.select_neighbour(+1)
    assert window.controller.workspace.selected == shown[(start + 1) % len(shown)]
    window.controller.select_neighbour(-1)
    window.controller.select_neighbour(-1)
    assert window.controller.workspace.selected == shown[(start - 1) % len(shown)]


def test_layout_file_survives_garbage(data_dir):
    session.layout_path().write_text(json.dumps({"geometry": "%%%", "theme": "neon", "presentation": "yes"}))
    layout = session.load_layout()
    assert layout == session.WindowLayout()


def test_group_box_letters_focus_their_first_control(qtbot, data_dir):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    window = _window(qtbot)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.controls.batch_spin.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.AltModifier)
    assert QApplication.focusWidget() is window.controls.parallel_spins["tp"]
    qtbot.keyClick(window, Qt.Key.Key_M, Qt.KeyboardModifier.AltModifier)
    assert QApplication.focusWidget() is window.controls.model_combo


def test_f1_opens_the_formulas_and_a_term_link_focuses_its_control(qtbot, data_dir):
    from PySide6.QtWidgets import QApplication

    window = _window(qtbot)
    window.show()
    qtbot.waitExposed(window)
    keys = dict(window.shortcut_list())
    assert keys["F1"] == "Help → Formulas…"
    formulas = window.side.show_formulas()
    assert formulas.isVisible()
    assert "control:batch" in formulas.browser.toHtml()
    window.focus_control("tp")
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.controls.parallel_spins["tp"])
    formulas.close()


def test_presentation_mode_enlarges_plots_and_text_and_hides_secondary_panels(qtbot, data_dir):
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from accelscope.gui.look.display import PRESENTATION_FONT_SCALE, PRESENTATION_PLOT_ZOOM

    window = _window(qtbot)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    base_points = QApplication.font().pointSizeF()
    view = window.panels["roofline"].findChildren(pg.GraphicsView)[0]
    assert view.transform().m11() == pytest.approx(1.0)
    window.presets_dock.show()
    window.set_presentation(True)
    assert QApplication.font().pointSizeF() == pytest.approx(base_points * PRESENTATION_FONT_SCALE)
    assert view.transform().m11() == pytest.approx(PRESENTATION_PLOT_ZOOM, rel=0.02)
    assert not window.presets_dock.isVisible() and not window.statusBar().isVisible()
    window.resize(1200, 800)  # the zoom survives a resize
    qtbot.wait(50)
    assert view.transform().m11() == pytest.approx(PRESENTATION_PLOT_ZOOM, rel=0.02)
    window.toggle_presentation()
    assert QApplication.font().pointSizeF() == pytest.approx(base_points)
    assert view.transform().m11() == pytest.approx(1.0)
    assert window.presets_dock.isVisible() and window.statusBar().isVisible()


def test_presentation_and_theme_are_remembered_and_given_back_on_close(qtbot, data_dir):
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    base_window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    first = _window(qtbot, remember_session=True)
    first.show()
    first.set_theme("dark")
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
    first.set_presentation(True)
    first.close()
    assert QApplication.palette().color(QPalette.ColorRole.Window) == base_window_colour
    layout = session.load_layout()
    assert (layout.presentation, layout.theme) == (True, "dark")

    second = _window(qtbot, remember_session=True)
    second.show()
    assert second.display.presentation and second.display.theme == "dark"
    assert second.qactions["view.presentation"].isChecked() and second.qactions["view.theme.dark"].isChecked()
    second.close()


def test_compare_pins_a_and_the_explain_panel_opens_with_the_deltas(qtbot, data_dir):
    window = _window(qtbot)
    window.controller.set_field("batch", 1)
    window.controller.throttle.flush()
    window.comparison.pin(True)
    a_frame = window.comparison.frame
    assert a_frame is window.controller.last_frame and window.qactions["view.compare"].isChecked()
    window.controller.set_field("batch", 64)
    window.controller.throttle.flush()
    window.update_explanation()
    text = window.explain_panel.text()
    assert "B against A (pinned)" in text and "batch 1 → 64" in text
    selected = window.controller.workspace.selected
    a_itl = a_frame.result(selected).itl_s
    b_itl = window.controller.last_frame.result(selected).itl_s
    assert f"{b_itl / a_itl - 1:+.1%}" in text
    window.comparison.toggle()
    assert window.comparison.frame is None and not window.qactions["view.compare"].isChecked()
    text = window.explain_panel.text()
    assert "B against A" not in text


def test_every_analysis_tab_setting_reaches_the_workspace(qtbot, data_dir):
    window = _window(qtbot)
    window.panels["tiers"].view_option_changed.emit("far_tier", "cxl2-expander-x16")
    window.panels["parallelism"].view_option_changed.emit("device_budget", 8)
    window.panels["scaling"].view_option_changed.emit("routing_skew", 1.5)
    workspace = window.controller.workspace
    assert (workspace.option("far_tier"), workspace.option("device_budget"), workspace.option("routing_skew")) == (
        "cxl2-expander-x16", 8, 1.5)


def _pinned(qtbot) -> MainWindow:
    window = _window(qtbot)
    window.controller.throttle.flush()
    window.comparison.pin(True)
    assert window.comparison.frame is not None
    return window


def test_compare_keeps_a_through_changes_of_the_same_model(qtbot, data_dir):
    window = _pinned(qtbot)
    window.controller.set_field("batch", 16)
    window.controller.set_field("accelerator", window.controller.workspace.shown[-1])
    assert window.comparison.frame is not None and window.qactions["view.compare"].isChecked()


def test_compare_unpins_a_when_the_model_changes_and_says_so(qtbot, data_dir):
    window = _pinned(qtbot)
    window.controller.set_field("model", "qwen3-8b")
    window.controller.throttle.flush()
    assert window.comparison.frame is None and not window.qactions["view.compare"].isChecked()
    message = window.statusBar().currentMessage()
    assert "Unpinned A" in message and "model changed" in message
    window.update_explanation()
    assert "B against A" not in window.explain_panel.text()


def test_compare_unpins_a_when_a_preset_is_loaded_and_says_so(qtbot, data_dir):
    window = _pinned(qtbot)
    entry = next(e for e in window.presets_panel.entries()
                 if load_preset(e.path, window.engine.catalog).workspace.scenario.model
                 == window.controller.workspace.scenario.model)  # the same model: the load alone unpins
    assert window.presets.open_file(entry.path, bundled=True)
    assert window.comparison.frame is None and not window.compare_label.isVisibleTo(window)
    assert f"the preset {entry.name} was loaded" in window.statusBar().currentMessage()


def test_the_start_up_notice_counts_every_bad_file_a_preset_too(qtbot, data_dir):
    (data_dir / "accelerators").mkdir()
    (data_dir / "accelerators" / "broken.toml").write_text('id = "broken"\nname = 5\n', encoding="utf-8")
    (data_dir / "presets").mkdir()
    (data_dir / "presets" / "broken-preset.json").write_text("{not json", encoding="utf-8")
    window = _window(qtbot, Engine(Catalog.load()))
    window.show()
    assert len(window.problems) == 2 and any("broken-preset.json" in problem for problem in window.problems)
    assert "2 files could not be loaded" in window.banner.label.text()


def test_the_presets_hint_names_the_menu_entry_as_the_menu_shows_it(qtbot, data_dir):
    from accelscope.gui.actions import plain

    window = _window(qtbot)
    hints = [window.presets_panel.list.item(row).text() for row in range(window.presets_panel.list.count())]
    hint = next(text for text in hints if "adds yours here" in text)
    assert plain(window.qactions["file.save_as"].text()) in hint and plain(window.menus["file"].title()) in hint


def test_escape_closes_model_vs_paper(qtbot, data_dir, monkeypatch):
    from PySide6.QtCore import Qt

    from accelscope.gui.windows.validation import ValidationWindow

    monkeypatch.setattr(ValidationWindow, "start", lambda self, synchronous=False: None)
    window = _window(qtbot)
    validation = window.side.show_validation()
    assert validation.isVisible()
    qtbot.keyClick(validation.table, Qt.Key.Key_Escape)
    assert not validation.isVisible()


def test_keyboard_shortcuts_need_no_horizontal_scrolling(qtbot, data_dir):
    from PySide6.QtWidgets import QTableWidget

    window = _window(qtbot)
    window.side.show_shortcuts()
    dialog = window.side.shortcuts
    qtbot.addWidget(dialog)
    qtbot.waitExposed(dialog)
    table = dialog.findChild(QTableWidget)
    assert table.horizontalScrollBar().maximum() == 0 and not table.horizontalScrollBar().isVisible()
    for column in range(2):  # and nothing is cut instead
        needed = max(table.sizeHintForColumn(column), table.horizontalHeader().sectionSizeHint(column))
        assert table.columnWidth(column) >= needed


def test_every_control_label_explains_as_its_control_does(qtbot, data_dir):
    from PySide6.QtWidgets import QLabel

    window = _window(qtbot)
    labels = [label for label in window.controls.findChildren(QLabel)
              if label.buddy() is not None and label.buddy().toolTip()]
    assert len(labels) >= 8
    for label in labels:
        assert label.toolTip() == label.buddy().toolTip(), label.text()
    ep = window.controls.parallel_spins["ep"]
    ep_label = next(label for label in labels if label.buddy() is ep)
    window.controller.set_field("model", "qwen3-235b-a22b")  # a mixture of experts: EP's tool tip changes
    window.controller.throttle.flush()
    assert ep_label.toolTip() == ep.toolTip() and "routed experts" in ep.toolTip()
