"""The window on a classroom projector: 1024×768 and 1280×720, in normal and presentation mode.

The offscreen platform of the test run has a desktop screen and both projector screens
(tests/fixtures/screens.json); a window is put on one as the app shows it on its screen. The
same checks run on a real X window under Xvfb in a ``slow`` test (``pytest -m slow``), through
tests/window_probe.py in a process of its own, as does a layout saved on a small screen and
restored on a large one (a process has the screens it starts with).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelscope.gui.windows.arrangement import EXPLAIN_WIDTH_PX, READABLE_CENTRAL_PX, READABLE_DOCK_PX

PROJECTORS = [(1024, 768), (1280, 720)]
PROBE = Path(__file__).parent / "window_probe.py"
SCREENS = Path(__file__).parent / "fixtures" / "screens.json"


def settle(qtbot, ms: int = 50) -> None:
    qtbot.wait(ms)


def inside(inner, outer) -> bool:
    return outer.contains(inner)


def visible_docks(window) -> dict[str, tuple]:
    """Each shown dock: its area, whether it floats, and its place and size (None for a dock
    behind another's tab, which has no place of its own)."""
    return {dock.objectName(): (window.dockWidgetArea(dock), dock.isFloating(),
                                None if dock.visibleRegion().isEmpty() else dock.geometry().getRect())
            for dock in window.arrangement.docks if dock.isVisible()}


# ---- the parts of the window ---------------------------------------------------------------


def test_tabs_speak_of_the_panels_and_a_page_asks_for_little(open_window):
    from accelscope.gui.windows.pages import PAGE_MIN_HEIGHT_PX, PAGE_MIN_WIDTH_PX

    window = open_window()
    tabs = window.tabs
    assert [tabs.widget(i) for i in range(tabs.count())] == list(window.panels.values())
    assert tabs.currentWidget() is window.panels[window.current_view()]
    assert tabs.indexOf(window.panels["sweep"]) == list(window.panels).index("sweep")
    tabs.setCurrentWidget(window.panels["energy"])
    assert window.current_view() == "energy"
    # The widest panel (Scaling's table and plots) no longer sets the window's width: it scrolls.
    assert max(panel.minimumSizeHint().width() for panel in window.panels.values()) > PAGE_MIN_WIDTH_PX
    assert tabs.minimumSizeHint().width() < PAGE_MIN_WIDTH_PX + 40
    assert tabs.scroll_area(0).minimumSizeHint().height() == PAGE_MIN_HEIGHT_PX


def test_the_window_needs_less_than_a_small_projector_in_either_mode(open_window):
    window = open_window(size=(1200, 700))
    assert window.minimumSizeHint().width() <= 1024 and window.minimumSizeHint().height() <= 720
    window.set_presentation(True)
    assert window.minimumSizeHint().width() <= 1024 and window.minimumSizeHint().height() <= 720
    window.set_presentation(False)


def test_a_page_gets_the_least_height_its_notes_need_and_the_plot_the_rest(open_window, qtbot):
    """QScrollArea gave a page with wrapped notes its preferred height: it scrolled wherever a
    plot had less room than it would like. A page fits its area while its notes do."""
    window = open_window(size=(1024, 700))
    for index, view in enumerate(window.panels):
        window.tabs.setCurrentIndex(index)
        settle(qtbot, 20)
        scroll = window.tabs.scroll_area(index)
        area = scroll.maximumViewportSize()
        least = scroll.least_size(area.width())
        page = window.panels[view]
        if least.width() <= area.width() and least.height() <= area.height():
            assert (page.width(), page.height()) == (area.width(), area.height()), view
            assert not scroll.verticalScrollBar().isVisible() and not scroll.horizontalScrollBar().isVisible(), view
        else:  # it scrolls rather than being cut (a vertical scroll bar takes its width from the page)
            if least.height() > area.height():
                least = scroll.least_size(area.width() - scroll.verticalScrollBar().sizeHint().width())
            assert page.width() >= least.width() and page.height() >= least.height(), view


# ---- on a projector --------------------------------------------------------------------------


@pytest.mark.parametrize("size", PROJECTORS)
def test_the_window_fits_the_projector_with_its_controls_and_plots_readable(window_on, size):
    window = window_on(size)
    screen = window.screen().availableGeometry()
    assert inside(window.frameGeometry(), screen)
    assert window.controls_dock.isVisible() and window.controls_dock.width() >= READABLE_DOCK_PX
    assert window.centralWidget().width() >= READABLE_CENTRAL_PX
    # A narrow screen keeps Explain in a tab beside the controls, and the plots the rest.
    assert window.explain_dock in window.tabifiedDockWidgets(window.controls_dock)


@pytest.mark.parametrize("size", PROJECTORS)
def test_presentation_gives_the_plots_the_screen_and_f5_again_puts_the_layout_back(window_on, qtbot, size):
    window = window_on(size)
    screen = window.screen()
    before_frame, before_docks = window.frameGeometry(), visible_docks(window)
    before_central = window.centralWidget().size()
    window.qactions["view.presentation"].trigger()
    settle(qtbot)
    assert window.isFullScreen() and inside(window.frameGeometry(), screen.geometry())
    assert not any(dock.isVisible() for dock in window.arrangement.docks)
    assert not window.statusBar().isVisible()
    assert window.strip.isVisible()
    assert window.centralWidget().width() == screen.geometry().width()
    # The lecture's controls in the strip fit the screen: nothing is pushed into its overflow menu.
    assert window.strip.full_controls_button.isVisible()
    assert window.strip.geometry().right() <= screen.geometry().width()

    window.qactions["view.presentation"].trigger()
    settle(qtbot)
    assert not window.isFullScreen() and not window.strip.isVisible() and window.statusBar().isVisible()
    assert window.frameGeometry() == before_frame
    assert visible_docks(window) == before_docks
    assert window.centralWidget().size() == before_central


@pytest.mark.parametrize("size", PROJECTORS)
def test_one_key_brings_every_control_back_in_presentation(window_on, qtbot, size):
    window = window_on(size)
    window.set_presentation(True)
    settle(qtbot)
    full_controls = window.controls_dock.toggleViewAction()
    assert full_controls.shortcut().toString() == "F6"
    full_controls.trigger()
    settle(qtbot)
    assert window.controls_dock.isVisible() and window.strip.full_controls_button.isChecked()
    assert window.centralWidget().width() >= READABLE_CENTRAL_PX
    full_controls.trigger()
    settle(qtbot)
    assert not window.controls_dock.isVisible()
    assert window.centralWidget().width() == window.screen().geometry().width()
    window.set_presentation(False)


@pytest.mark.parametrize("size", PROJECTORS)
def test_every_dock_toggles_from_the_view_menu(window_on, qtbot, size):
    window = window_on(size)
    view_menu = window.menus["view"]
    for dock in window.arrangement.docks:
        action = dock.toggleViewAction()
        assert action in view_menu.actions(), dock.objectName()
        assert dock.features() & dock.DockWidgetFeature.DockWidgetClosable
        action.trigger()
        settle(qtbot, 20)
        assert not dock.isVisible(), dock.objectName()
        action.trigger()
        settle(qtbot, 20)
        assert dock.isVisible(), dock.objectName()  # and in front of the docks tabbed with it


@pytest.mark.parametrize("size", PROJECTORS)
def test_reset_layout_puts_every_dock_back(window_on, qtbot, size):
    from PySide6.QtCore import Qt

    window = window_on(size)
    default = visible_docks(window)
    window.explain_dock.setFloating(True)
    window.presets_dock.hide()
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.controls_dock)
    settle(qtbot)
    assert visible_docks(window) != default
    window.qactions["view.reset_layout"].trigger()
    settle(qtbot)
    assert visible_docks(window) == default
    assert all(dock.isVisibleTo(window) and not dock.isFloating() for dock in window.arrangement.docks)


def test_on_a_wide_screen_explain_has_a_column_of_its_own(window_on):
    from PySide6.QtCore import Qt

    window = window_on((1920, 1080))
    assert window.dockWidgetArea(window.explain_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert window.explain_dock.isVisible()
    assert EXPLAIN_WIDTH_PX[0] <= window.explain_dock.width() <= EXPLAIN_WIDTH_PX[1]


def test_a_layout_from_another_screen_is_arranged_for_this_one(window_on, qtbot):
    """A layout saved on a small screen (Explain squeezed to a sliver in a column of its own) and
    restored on a wide one gets the wide screen's arrangement; the docks closed stay closed."""
    from PySide6.QtCore import Qt

    window = window_on((1920, 1080))
    window.hide()
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.explain_dock)
    window.resizeDocks([window.explain_dock], [1], Qt.Orientation.Horizontal)
    window.presets_dock.hide()
    window._shown_before = False
    window.fit_layout_when_shown((1024, 768))
    window.show()
    settle(qtbot)
    assert window.dockWidgetArea(window.explain_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert window.explain_dock.width() >= EXPLAIN_WIDTH_PX[0]
    assert not window.presets_dock.isVisible()


# ---- the presentation strip ------------------------------------------------------------------


def test_the_strip_and_the_controls_show_one_workspace(open_window):
    window = open_window()
    strip = window.strip
    strip.batch_spin.setValue(48)
    assert window.controller.workspace.scenario.batch == 48
    assert window.controls.batch_spin.value() == 48
    window.controller.set_field("input_len", 4096)
    assert strip.input_spin.value() == 4096
    strip.weight_combo.setCurrentIndex(strip.weight_combo.findData("fp8"))
    assert window.controller.workspace.scenario.weight_precision == "fp8"
    model = "qwen3-32b"
    strip.model_combo.setCurrentIndex(strip.model_combo.findData(model))
    assert window.controller.workspace.scenario.model == model
    assert window.controls.model_combo.currentData() == model


def test_the_strip_ticks_accelerators_as_the_checklist_does(open_window):
    window = open_window()
    strip = window.strip
    shown = window.controller.workspace.shown
    hidden = next(a for a in window.engine.catalog.accelerators if a not in shown)
    strip._accelerator_actions[hidden].trigger()
    assert hidden in window.controller.workspace.shown
    assert window.controls.accelerator_item(hidden).checkState(0).name == "Checked"
    assert strip.accelerator_button.text() == f"Accelerators ({len(shown) + 1})"
    strip._accelerator_actions[shown[0]].trigger()
    assert shown[0] not in window.controller.workspace.shown
    window.controller.set_shown(shown)
    assert strip.shown() == shown


# ---- presentation's scale ------------------------------------------------------------------


def test_presentation_scales_text_to_the_same_share_of_any_screen():
    from accelscope.gui.look.display import PRESENTATION_PLOT_ZOOM, presentation_scale

    assert presentation_scale(1.5, 1000) == pytest.approx(1.5)
    assert presentation_scale(1.5, 1200) == pytest.approx(1.5)  # never above the reference's
    assert presentation_scale(1.5, 768) == pytest.approx(1.152)  # 1.5 × 768 / 1000
    assert presentation_scale(1.4, 720) == pytest.approx(1.008)
    assert presentation_scale(PRESENTATION_PLOT_ZOOM, 600) == 1.0  # never smaller than normal


def beside_the_bars_and_cut(panel) -> list[str]:
    """The run-here tab's texts beside its bars that reach past either side of the plot."""
    plot = panel.chart.plot.vb.sceneBoundingRect()
    beside = set(panel.plotted()["texts"])
    return [f"{t.text!r} at {t.box.left():.0f}..{t.box.right():.0f} (the plot {plot.left():.0f}..{plot.right():.0f})"
            for t in panel.shown_texts() if t.whole in beside
            and not (plot.left() - 1 <= t.box.left() and t.box.right() <= plot.right() + 1)]


def into_presentation_and_back(window_on, qtbot, view: str):
    """A 1024x768 window filling its screen (as on a projector's X screen, where it has no
    frame, so F5 resizes the canvas before the zoom and not after), on ``view`` with its study
    run; yields (window, panel, presentation) in presentation mode, then out of it again, the
    page laid out so positions are final."""
    window = window_on((1024, 768))
    window.showFullScreen()
    settle(qtbot, 100)
    window.show_view(view)
    panel = window.panels[view]
    panel.refresh_now()
    for presentation in (True, False):
        window.qactions["view.presentation"].trigger()
        settle(qtbot, 100)
        assert window.display.presentation == presentation
        panel.grab()
        yield window, panel, presentation


def test_the_texts_beside_the_bars_are_fitted_to_the_zoomed_plots_entering_and_leaving_presentation(
        window_on, qtbot):
    """Presentation mode zooms each plot's scene, narrowing the plots without resizing their
    canvas. Where the canvas is resized by F5 before the zoom and not after (a window already
    filling the screen, as on a projector's X screen, where it has no frame), the texts stayed
    fitted to the plot's width before the zoom: "INT4 weights · 300 tok/s · batch ≤" lost its
    number at the plot's edge."""
    import pyqtgraph as pg
    from PySide6.QtGui import QFontMetricsF

    from accelscope.gui.panels.run_here import BATCH_TEXT_MIN_PX

    for _window, panel, presentation in into_presentation_and_back(window_on, qtbot, "run_here"):
        texts = list(panel.plotted()["texts"])
        assert len(texts) == len(panel.row_ids) > 20
        # The largest batch is written where the plot has room for it (in presentation: it has).
        wide = panel.chart.plot.vb.width() >= BATCH_TEXT_MIN_PX
        assert wide == presentation
        assert all(("batch ≤" in text) == wide for text in texts if "tok/s" in text)
        assert beside_the_bars_and_cut(panel) == []
        ticks = [t for t in panel.shown_texts() if t.whole not in set(texts) | set(panel.chart.row_axis.labels)]
        assert ticks and [t.text for t in ticks if not t.fits] == []
        # Rows a line of their names' font apart (13 px rows of 17 px names ran into each other).
        line_px = QFontMetricsF(panel.chart.row_axis.style["tickFont"]).height()
        view = panel.chart.plot.vb
        centres = [view.mapViewToScene(pg.Point(0.0, float(row))).y() for row in (0, 1)]
        assert abs(centres[1] - centres[0]) >= line_px - 0.5, (presentation, centres, line_px)


def test_the_scaling_plots_share_the_zoomed_width_entering_and_leaving_presentation(window_on, qtbot):
    """The Scaling tab shares its canvas' width among its three plots by what their texts need:
    in presentation mode the width in the plots' own pixels is the canvas' divided by the zoom,
    and the plots are shared out again (else the last one reached past the canvas)."""
    for window, panel, presentation in into_presentation_and_back(window_on, qtbot, "scaling"):
        zoom = window.display.plot_zoom if presentation else 1.0
        scene_width = panel.canvas.width() / zoom  # the canvas' width in the plots' own pixels
        assert [plot.plot.vb.sceneBoundingRect().right() <= scene_width for plot in panel.plots] == [True] * 3
        numbers = [t.text for t in panel.shown_texts() if any(c.isdigit() for c in t.whole) and not t.fits]
        assert numbers == []


def test_the_slowdown_curves_keep_their_height_in_the_zoomed_plots_entering_and_leaving_presentation(
        window_on, qtbot):
    """Memory tiers' canvas is held at its plots' least height in the widget's pixels, zoom
    included: with a fixed least height, presentation mode's zoom left the slowdown curves ~90 px
    at 1024x768 and their log axis labelled only 3 and 10. The plots fit the canvas whole (the
    page scrolls for the notes), and the curves keep their least height of lines."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFontMetricsF

    from accelscope.gui.look.style import plot_font
    from accelscope.gui.panels.tiers import SLOWDOWN_VIEW_MIN_LINES

    for window, panel, presentation in into_presentation_and_back(window_on, qtbot, "tiers"):
        zoom = window.display.plot_zoom if presentation else 1.0
        least = panel.canvas.ci.layout.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()
        scene_height = panel.canvas.range.height()  # the canvas' height in the plots' own pixels
        assert scene_height >= least - 1, (presentation, scene_height, least)
        assert panel.canvas.height() >= least * zoom - 1
        curves = panel.slowdown_plot.vb
        assert curves.height() >= SLOWDOWN_VIEW_MIN_LINES * QFontMetricsF(plot_font()).height() - 1
        assert curves.sceneBoundingRect().bottom() <= scene_height
        assert panel.capacity_plot.sceneBoundingRect().bottom() <= scene_height + 1


def test_a_long_legend_takes_a_second_column_only_when_the_plot_is_too_short(open_window, qtbot):
    window = open_window(size=(1600, 1000))
    # A long legend that a 1000 px window still holds in one column (the whole catalog, 48 and
    # more, needs two even there).
    window.controller.set_shown(tuple(window.engine.catalog.accelerators)[:30])
    window.tabs.setCurrentIndex(0)
    settle(qtbot)
    legend = window.panels["roofline"].legend
    view = legend.views[0]
    assert len(legend.rows) > 20 and legend.columns == 1
    window.resize(1600, 560)
    settle(qtbot, 100)
    assert legend.columns == 2
    # Nothing reaches past the view: neither the legend nor the plot beside it (its axis stays in sight).
    assert legend.sceneBoundingRect().bottom() <= view.range.bottom()
    assert legend.host.geometry().height() <= view.range.height()
    window.resize(1600, 1000)
    settle(qtbot, 100)
    assert legend.columns == 1


@pytest.mark.parametrize("view", ["roofline", "sweep"])
def test_every_accelerator_is_named_whole_in_the_legend_on_a_projector(window_on, qtbot, view):
    """With every accelerator shown on a 1024x768 projector, the legend took its columns by
    the plot's height alone: its second column ran off the screen (half the accelerators
    unnamed), and in presentation mode long names were cut at its edge. Its rows now take about
    half the plot's width at most, long names on more lines: every name whole and on screen,
    beside the plot, and the plot's title whole above it, in normal and presentation mode."""
    from PySide6.QtCore import QPoint

    window = window_on((1024, 768))
    catalog = tuple(window.engine.catalog.accelerators)
    window.controller.set_shown(catalog)
    window.controller.throttle.flush()
    window.show_view(view)
    panel = window.panels[view]
    for presentation in (False, True):
        window.set_presentation(presentation)
        settle(qtbot, 100)
        panel.grab()
        legend, plot = panel.legend, panel.plot
        names = {t.whole: t for t in panel.shown_texts() if t.whole in set(legend.labels())}
        assert len(names) == len(catalog) == len(legend.rows)
        assert [name for name, t in names.items() if not t.fits] == [], presentation
        assert any(len(row.lines) > 1 for row in legend.rows) or presentation  # the narrow plot breaks names
        assert legend.sceneBoundingRect().left() >= plot.vb.sceneBoundingRect().right()
        view_widget = panel.graphics
        right_edge = view_widget.mapTo(window, QPoint(view_widget.width(), 0)).x()
        assert right_edge <= window.width()
        (title,) = [t for t in panel.shown_texts() if t.whole == plot.titleLabel.text]
        assert title.fits


def test_a_legend_name_breaks_at_spaces_and_only_a_word_too_wide_is_elided(qapp):
    from PySide6.QtGui import QFontMetricsF

    from accelscope.gui.look.style import plot_font
    from accelscope.gui.plotkit.legend import lines_within

    def ten_px_a_character(text: str) -> float:
        return 10.0 * len(text)

    metrics = QFontMetricsF(plot_font())
    name = "GH200 Grace Hopper Superchip"
    assert lines_within(name, metrics, 280, ten_px_a_character) == ([name], False)
    assert lines_within(name, metrics, 180, ten_px_a_character) == (["GH200 Grace Hopper", "Superchip"], False)
    assert lines_within(name, metrics, 110, ten_px_a_character) == (["GH200 Grace", "Hopper", "Superchip"], False)
    lines, elided = lines_within(name, metrics, 60, ten_px_a_character)
    assert elided and len(lines) == 4 and lines[1] == "Grace" and lines[3].endswith("…")


def test_a_plot_title_takes_two_lines_where_the_plot_is_narrow(qtbot):
    """pyqtgraph's title is one line and never narrower than its text, so a long title kept a
    plot from narrowing for its legend; this one breaks onto two lines, and is elided (its
    tool tip the whole title) only where a line is still too wide."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.text import PlotTitle

    graphics = pg.GraphicsLayoutWidget()
    qtbot.addWidget(graphics)
    plot = graphics.addPlot()
    title = PlotTitle(plot)
    plot.setTitle("Throughput against latency, batch 1 → 1024", size="13pt")
    assert plot.titleLabel is title and title.isVisible()
    whole = title.natural_width()
    for width, lines in ((whole + 40, 1), (whole * 0.7, 2)):
        graphics.resize(round(width) + 120, 400)  # the left axis and margins take the rest
        graphics.show()
        qtbot.waitExposed(graphics)
        qtbot.wait(20)
        assert title.size().width() > 0
        assert len(title.lines) == lines and not title.elided, (width, title.lines)
        assert " ".join(title.lines) == title.text and title.toolTip() == ""
        assert plot.layout.rowMaximumHeight(0) >= title.size().height() >= lines * 15
    graphics.resize(150, 400)
    qtbot.wait(20)
    assert title.elided and title.toolTip() == title.text
    plot.setTitle(None)
    assert not title.isVisible()

# ---- a real X window, and a layout carried between screens -----------------------------------


def run_probe(environment: dict, *arguments: str) -> dict:
    completed = subprocess.run([sys.executable, str(PROBE), *arguments], env=environment, capture_output=True,
                               text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def offscreen_screen(tmp_path: Path, size: tuple[int, int]) -> str:
    config = json.loads(SCREENS.read_text(encoding="utf-8"))
    config["screens"] = [{**config["screens"][0], "width": size[0], "height": size[1]}]
    path = tmp_path / f"screen-{size[0]}x{size[1]}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return f"offscreen:configfile={path}"


def check_probe(report: dict) -> None:
    """What the probe saw on a projector holds what the window promises there."""
    normal, presenting, after = report["normal"], report["presentation"], report["after_presentation"]
    screen = normal["screen"]
    for layout in (normal, presenting, after, report["reset"]):
        x, y, width, height = layout["frame"]
        assert screen[0] <= x and screen[1] <= y, layout["frame"]
        assert x + width <= screen[0] + screen[2] and y + height <= screen[1] + screen[3], (layout["frame"], screen)
    assert normal["central"][0] >= READABLE_CENTRAL_PX
    assert presenting["full_screen"] and presenting["strip"] and not presenting["status_bar"]
    assert not any(dock["visible"] for dock in presenting["docks"].values())
    assert presenting["central"][0] == screen[2]
    assert report["presentation_full_controls"]["docks"]["scenario-dock"]["visible"]
    before = report["after_toggles"]  # the layout F5 was pressed in
    for name, dock in before["docks"].items():
        assert after["docks"][name]["visible"] == dock["visible"]
        if dock["visible"] and dock["geometry"][0] >= 0:  # in front: a dock behind another's tab has no place
            assert after["docks"][name]["geometry"] == dock["geometry"], name
    assert after["frame"] == before["frame"] and after["central"] == before["central"]
    assert all(toggled == [True, False, True] for toggled in report["toggles"].values())
    def places(layout: dict) -> dict:
        return {name: (dock["area"], dock["floating"], dock["tabbed_with"]) for name, dock in layout["docks"].items()}

    assert places(report["reset"]) == places(normal)


@pytest.mark.slow  # two whole app starts in subprocesses, one touring every mode (~20 s)
def test_a_layout_saved_on_a_small_screen_is_fitted_to_a_large_one(tmp_path):
    environment = dict(os.environ, ACCELSCOPE_DATA_DIR=str(tmp_path / "data"))
    small = run_probe(dict(environment, QT_QPA_PLATFORM=offscreen_screen(tmp_path, (1024, 768))),
                      "--remember", "--save-narrow-explain")
    assert small["saved"]["docks"]["explain-dock"]["geometry"][2] <= READABLE_DOCK_PX
    check_probe(small)
    # The window as it starts there is what is checked: no tour of the presentation and docks.
    large = run_probe(dict(environment, QT_QPA_PLATFORM=offscreen_screen(tmp_path, (1920, 1080))), "--remember",
                      "--start-only")
    explain = large["normal"]["docks"]["explain-dock"]
    assert explain["visible"] and explain["area"] == "RightDockWidgetArea"
    assert explain["geometry"][2] >= EXPLAIN_WIDTH_PX[0]
    x, y, width, height = large["normal"]["frame"]
    assert width <= 1920 and height <= 1080


@pytest.mark.slow
@pytest.mark.parametrize("size", PROJECTORS)
def test_a_real_x_window_fits_the_projector_in_either_mode(tmp_path, size):
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (see PLATFORM.md)")
    display = next(f":{n}" for n in range(70, 120) if not Path(f"/tmp/.X{n}-lock").exists())
    server = subprocess.Popen(["Xvfb", display, "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if Path(f"/tmp/.X11-unix/X{display[1:]}").exists():
                break
            time.sleep(0.1)
        environment = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                           ACCELSCOPE_DATA_DIR=str(tmp_path / "data"))
        report = run_probe(environment)
    finally:
        server.terminate()
        server.wait(10)
    assert report["normal"]["screen"][2:] == list(size)
    check_probe(report)


def test_a_page_that_scrolls_sideways_wraps_its_texts_at_the_visible_edge(open_window, qtbot):
    """A page wider than its area (TP/DP · EP/TP on a 1024 px screen with both docks, before
    its plots' titles could break onto two lines; Memory still is) wrapped its notes at the
    page's width: every line ran past the visible edge, to be scrolled to for each line read.
    The texts wrap where the area ends; only the plots scroll."""
    from accelscope.gui.plotkit.text import WrappedLabel

    window = open_window(size=(1024, 700))
    checked = set()
    for index, view in enumerate(window.panels):
        window.tabs.setCurrentIndex(index)
        settle(qtbot, 20)
        scroll = window.tabs.scroll_area(index)
        page = window.panels[view]
        visible = scroll.viewport().width()
        if page.width() <= visible:
            continue
        for label in page.findChildren(WrappedLabel):
            if label.isVisibleTo(page) and label.text():
                right = label.mapTo(page, label.rect().topRight()).x()
                assert right <= visible, (view, label.text()[:60], right, visible)
                checked.add(view)
    assert "memory" in checked  # a page met the case at this size
