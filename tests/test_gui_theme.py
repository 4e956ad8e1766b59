"""The dark theme darkens the plot canvases too: every panel is built in the plot theme's
colours, accelerator colours and texts stand out from the dark canvas, switching themes keeps
every plotted number, and exports and reports draw the theme that is shown."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from accelscope.engine.core.workspace import VIEWS
from accelscope.engine.physics.engine import Engine
from accelscope.gui.look import palette, theme
from accelscope.gui.look.theme import DARK, DARK_PRESENTATION, GRAPHIC_CONTRAST, LIGHT, TEXT_CONTRAST, contrast_ratio

DARK_THEMES = (DARK, DARK_PRESENTATION)
WINDOW = {"size": (1400, 900), "every_accelerator": True}  # of the tests that take ``window`` (conftest)
ACCELERATOR_AND_SPARE_COLOURS = (*palette.ACCELERATOR_COLOURS.values(), *palette._SPARE_COLOURS)
# Colours the panels write text in (status beside the memory bars, notes, labels).
TEXT_COLOURS = ("#000000", "#1B6E2E", "#A14800", "#B2182B", "#808080", "#222222", "#333333", "#444444",
                "#555555", "#888888", "#2E8B57")


# ---- the colours ------------------------------------------------------------------------------


def test_contrast_ratio_is_wcag():
    assert contrast_ratio(QColor("#000000"), QColor("#FFFFFF")) == pytest.approx(21.0)
    assert contrast_ratio(QColor("#777777"), QColor("#FFFFFF")) == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio(QColor("#123456"), QColor("#123456")) == pytest.approx(1.0)


def test_the_light_theme_changes_nothing():
    for colour in ("#000000", "#FFFFFF", "#DDCC77", "#0077BB", (255, 196, 0, 55)):
        assert LIGHT.colour(colour) == QColor(*colour) if isinstance(colour, tuple) else QColor(colour)


@pytest.mark.parametrize("dark", DARK_THEMES, ids=lambda t: t.name)
def test_ink_and_paper_swap_on_a_dark_canvas(dark):
    assert dark.colour("k") == QColor(dark.foreground)
    assert dark.colour("w") == QColor(dark.background)
    assert dark.colour("#000000") == QColor(dark.foreground)
    grey = dark.colour("#777777")  # a mid grey stays between the two
    assert QColor(dark.background).lightness() < grey.lightness() < QColor(dark.foreground).lightness()
    band = dark.colour((255, 196, 0, 55))  # a translucent amber band keeps its hue and alpha
    assert band.alpha() == 55 and band.hslHue() == QColor(255, 196, 0).hslHue()
    pale = dark.colour("#E6E6E6")  # a pale backing becomes dark
    assert pale.lightnessF() < 0.3


@pytest.mark.parametrize("dark", DARK_THEMES, ids=lambda t: t.name)
def test_every_accelerator_colour_stands_out_on_a_dark_canvas(dark):
    canvas = QColor(dark.background)
    for colour in ACCELERATOR_AND_SPARE_COLOURS:
        drawn = dark.colour(colour)
        assert contrast_ratio(drawn, canvas) >= GRAPHIC_CONTRAST - 1e-6, (colour, drawn.name())
        original = QColor(colour)
        if original.hslSaturationF() >= theme.GREY_SATURATION:  # a colour keeps its hue
            assert abs(drawn.hslHue() - original.hslHue()) <= 2, (colour, drawn.name())
    # Those that already stood out are left as they are.
    assert dark.colour("#EE3377") == QColor("#EE3377")


@pytest.mark.parametrize("dark", DARK_THEMES, ids=lambda t: t.name)
def test_texts_read_on_a_dark_canvas(dark):
    canvas = QColor(dark.background)
    for colour in TEXT_COLOURS:
        assert contrast_ratio(dark.text_colour(colour), canvas) >= TEXT_CONTRAST - 1e-6, colour


# ---- the window --------------------------------------------------------------------------------


def _canvases(window) -> list:
    import pyqtgraph as pg

    return [view for panel in window.panels.values() for view in panel.findChildren(pg.GraphicsView)]


def _everything_plotted(window) -> dict[str, dict]:
    drawn = {}
    for view in VIEWS:
        panel = window.refresh_panel(view)
        if hasattr(panel, "refresh_now"):
            panel.refresh_now()
        drawn[view] = panel.plotted()
    return drawn


def _same(first: dict, second: dict) -> None:
    assert first.keys() == second.keys()
    for key in first:
        a, b = first[key], second[key]
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            np.testing.assert_array_equal(a, b, err_msg=key)
        elif isinstance(a, np.ndarray):
            assert a.tolist() == b.tolist(), key
        else:
            assert a == b, key


@pytest.mark.slow  # every tab's study of every accelerator, three times (~17 s); the other dark tests stay
def test_the_dark_theme_darkens_every_canvas_and_keeps_every_number(window):
    # Runs of 100 requests rather than the default 1,000: the Serving study of every accelerator
    # is computed three times here (~2 s each at 1,000), and a theme keeps its numbers whatever they are.
    assert window.controller.set_serving("requests", 100)
    light_numbers = _everything_plotted(window)
    light_panels = dict(window.panels)
    assert all(view.backgroundBrush().color() == QColor("#FFFFFF") for view in _canvases(window))

    shown = window.controller.workspace.shown
    window.set_theme("dark")
    assert theme.current() == DARK
    assert window.controller.workspace.shown == shown  # repainting the swatches changes nothing shown
    swatch = window.controls._accelerator_items["sn40l"].icon(0).pixmap(14, 14).toImage()
    assert QColor(swatch.pixel(7, 7)) == DARK.colour("#000000")  # SN40L's black drawn light, as in the plots
    assert all(window.panels[view] is not light_panels[view] for view in VIEWS)  # built anew, in dark
    canvases = _canvases(window)
    assert canvases and all(view.backgroundBrush().color() == QColor(DARK.background) for view in canvases)
    axis = window.panels["roofline"].plot.getAxis("bottom")
    assert axis.pen().color() == QColor(DARK.foreground) and axis.textPen().color() == QColor(DARK.foreground)
    for view, numbers in _everything_plotted(window).items():
        _same(light_numbers[view], numbers)
    # The tab shown, the selection and the accelerators are as they were.
    assert window.tabs.currentWidget() is window.panels[VIEWS[window.tabs.currentIndex()]]

    window.set_theme("light")
    assert theme.current() == LIGHT
    assert all(view.backgroundBrush().color() == QColor("#FFFFFF") for view in _canvases(window))
    for view, numbers in _everything_plotted(window).items():
        _same(light_numbers[view], numbers)


def test_presentation_in_the_dark_theme_is_white_on_black(window):
    window.set_theme("dark")
    window.set_presentation(True)
    assert theme.current() == DARK_PRESENTATION
    assert all(view.backgroundBrush().color() == QColor("#000000") for view in _canvases(window))
    window.set_presentation(False)
    assert theme.current() == DARK


def test_a_theme_switch_keeps_the_pinned_scenario_drawn(window):
    window.comparison.pin(True)
    window.controls.batch_slider.setValue(window.controls.batch_slider.maximum() // 2)
    window.controller.throttle.flush()
    window.set_theme("dark")
    panel = window.refresh_panel("sweep")
    assert panel.reference is window.comparison.frame
    assert np.isfinite(panel.plotted()["reference_x"]).any()


def test_closing_the_window_leaves_plots_light_for_what_comes_next(qtbot, window):
    window.set_theme("dark")
    window.close()
    assert theme.current() == LIGHT


def test_an_exported_plot_is_light_unless_dark_is_asked(window, tmp_path):
    """A handout is for paper: the window's dark theme does not reach it; a dark page is drawn
    when asked for (dark slides)."""
    from PySide6.QtGui import QImage

    window.tabs.setCurrentIndex(VIEWS.index("roofline"))
    window.set_theme("dark")

    def corner_and_canvas(theme_name):
        written = window.exports.export_plot(tmp_path / f"roofline-{theme_name}.png", scale=1.0,
                                             theme_name=theme_name)
        image = QImage(str(written[0]))
        corner = QColor(image.pixel(image.width() // 2, 3))  # above the title: the page's background
        canvas = [QColor(image.pixel(x, image.height() // 2)) for x in range(0, image.width(), 7)]
        return corner.lightness(), sum(p.lightness() < 60 for p in canvas) / len(canvas)

    corner, dark_share = corner_and_canvas("light")
    assert corner > 200 and dark_share < 0.2
    corner, dark_share = corner_and_canvas("dark")
    assert corner < 80 and dark_share > 0.5


def test_a_report_in_the_dark_theme(tmp_path):
    from PySide6.QtGui import QImage

    from accelscope.engine.catalog.presets import find_preset
    from accelscope.gui.export.report import write_report

    engine = Engine()
    preset = find_preset("teach-roofline-basics", engine.catalog)
    written = write_report(preset, tmp_path, engine, scale=1.0, theme_name="dark")
    pngs = [path for path in written if path.suffix == ".png"]
    # Every tab, the Energy tab's cost page and the Serving tab's run page.
    assert sorted(path.name for path in pngs) == sorted(
        [f"{index}-{view}.png" for index, view in enumerate(VIEWS, start=1)]
        + [f"{VIEWS.index('energy') + 1}-energy-cost.png", f"{VIEWS.index('serving') + 1}-serving-run.png"])
    for path in pngs:
        image = QImage(str(path))
        sample = [QColor(image.pixel(x, y)) for x in range(0, image.width(), 23) for y in range(0, image.height(), 23)]
        # Dark canvases and panels: near-white is only thin text and lines, never a background.
        assert sum(p.lightness() > 240 for p in sample) < 0.05 * len(sample), path.name
        assert QColor(image.pixel(4, 4)).lightness() < 80, path.name
    assert theme.current() == LIGHT  # a report leaves the next plots light
    with pytest.raises(ValueError, match="theme must be one of"):
        write_report(preset, tmp_path / "again", engine, theme_name="sepia")
