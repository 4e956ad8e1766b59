"""An exported picture is the figure: the tab's plots, legends and captions and a one-line
scenario, drawn from the plots' scenes and the captions' text, never from the tab's widgets
(no button, combo box, scroll bar or cut table reaches a handout)."""

from __future__ import annotations

import re

import pytest

from accelscope.engine.core.workspace import VIEWS
from accelscope.gui.export.report import PAGES as PAGE_SIZES

SHOWN = ("h100-sxm", "mi300x", "wse-3", "gaudi3")
PAGES = [(view, None) for view in VIEWS] + [("energy", "cost"), ("serving", "run")]


@pytest.fixture(scope="module")
def exporting_window(qapp, tmp_path_factory):
    """One window for every tab's export, with several accelerators shown (a module fixture:
    the tabs' studies are computed once)."""
    from accelscope.engine.physics.engine import Engine
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.main_window import MainWindow

    with pytest.MonkeyPatch.context() as patch:  # the folder is the module's: later modules get the run's back
        patch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        configure_pyqtgraph()
        window = MainWindow(Engine())
        window.resize(1400, 900)
        window.show()
        window.start(synchronous=True)
        window.controller.set_shown(SHOWN)
        window.controller.throttle.flush()
        yield window
        window.close()
        window.deleteLater()


def svg_texts(path) -> str:
    """Every text the SVG draws, joined, whitespace collapsed."""
    runs = re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", " ".join(runs))


@pytest.mark.parametrize("view, page", PAGES, ids=[f"{v}-{p}" if p else v for v, p in PAGES])
def test_an_exported_picture_is_the_figure_without_widgets(exporting_window, monkeypatch, tmp_path, view, page):
    import html

    import pyqtgraph as pg
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QWidget

    from accelscope.gui.export.files import figure_of
    from accelscope.gui.plotkit.text import INTERACTION_HINT

    window = exporting_window
    window.tabs.setCurrentIndex(VIEWS.index(view))
    panel = window.refresh_panel(view)
    if page is not None:
        panel.show_page(page)
    if hasattr(panel, "refresh_now"):
        panel.refresh_now()
    frame = window.controller.last_frame
    # Nothing of the tab is drawn as a widget: not grabbed, not rendered (a pyqtgraph view is
    # drawn from its scene, the heat-map by its own painting).
    # (The window's own tabs may draw their snapshots meanwhile: the export draws on tabs of its own.)
    rendered: list[QWidget] = []

    def exported(widget, *args, **kwargs):
        if not window.isAncestorOf(widget):
            rendered.append(widget)

    monkeypatch.setattr(QWidget, "render", exported)
    monkeypatch.setattr(QWidget, "grab", exported)
    figure = figure_of(panel, frame, window.engine.catalog)
    assert figure.canvases() and all(isinstance(c, pg.GraphicsView) or hasattr(c, "paint_canvas")
                                     for c in figure.canvases())

    written = window.exports.export_plot(tmp_path / f"{view}.png", scale=2.0)
    svg = window.exports.export_plot(tmp_path / f"{view}.svg")[0]
    assert rendered == []

    # The scenario, in one line under the title, with the accelerators by their legends' names.
    line = figure.scenario
    model = window.engine.model(frame.workspace.scenario.model).name
    assert model in line and f"batch {frame.workspace.scenario.batch:,}" in line
    assert figure.texts()[0].startswith(panel.title) and line in figure.texts()[0].replace("\n", " ")
    assert all(INTERACTION_HINT not in text for text in figure.texts())
    for fragment in line.split(" · "):
        assert html.escape(fragment, quote=False) in svg_texts(svg), fragment

    # A picture of sensible size, twice the handout page's figure (not the window's), not blank.
    image = QImage(str(written[0]))
    width, height = PAGE_SIZES["handout"]
    assert 2 * 500 <= image.width() <= 2 * width and 2 * 300 <= image.height() <= 2 * 2 * height
    step = max(1, image.width() // 200)
    colours = {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}
    assert len(colours) > 20


def test_controls_show_as_their_settings_and_tables_are_left_to_the_csv(exporting_window):
    import pyqtgraph as pg
    from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QComboBox, QLabel

    window = exporting_window
    serving = window.refresh_panel("serving")
    serving.show_page("rate")
    parts = serving.figure_parts()
    for part in parts:  # only canvases and texts, never a control or a label widget
        assert not isinstance(part, (QAbstractButton, QComboBox, QLabel))
        assert not isinstance(part, QAbstractScrollArea) or isinstance(part, pg.GraphicsView)
    texts = [part.text for part in parts if hasattr(part, "text") and isinstance(part.text, str)]
    assert any(text.startswith("Arrivals: ") and "Scheduler: " in text for text in texts)
    scaling = window.refresh_panel("scaling")
    scaling.refresh_now()
    table_words = "output tokens/s: system · device"
    assert all(table_words not in getattr(part, "text", "") for part in scaling.figure_parts())


def visible_texts(panel) -> list[str]:
    """Every text a tab shows: its plots' labels, values, titles and legends, its captions, and
    the heat-map's rows."""
    import pyqtgraph as pg

    texts = [shown.whole for shown in panel.shown_texts()]
    for view in panel.findChildren(pg.GraphicsView):
        if view.isVisibleTo(panel):
            texts += [item.text for item in view.scene().items() if isinstance(item, pg.LabelItem)]
    texts += [getattr(part, "text", "") for part in panel.figure_parts()]
    heatmap = getattr(panel, "heatmap", None)
    if heatmap is not None and heatmap.content is not None:
        texts += list(heatmap.content.names)
    return texts


def test_no_tab_names_an_accelerator_or_model_by_its_catalog_id(exporting_window):
    """Where the catalog has a display name, a label says it, as the legends do, not the id."""
    window = exporting_window
    catalog = window.engine.catalog
    ids = {a.id for a in catalog.accelerators.values() if a.name != a.id}
    ids |= {m.id for m in catalog.models.values() if m.name != m.id}
    # A mixture-of-experts model (the EP/TP plot's rows) and an accelerator it does not fit (the
    # serving tab's "cannot serve" text), beside those shown.
    window.controller.set_field("model", "mixtral-8x22b")
    window.controller.set_shown((*SHOWN, "gc200"))
    window.controller.throttle.flush()
    for view in VIEWS:
        window.tabs.setCurrentIndex(VIEWS.index(view))
        panel = window.refresh_panel(view)
        if hasattr(panel, "refresh_now"):
            panel.refresh_now()
        pages = [None, *getattr(panel, "extra_pages", ())]
        for page in pages:
            if page is not None:
                panel.show_page(page)
            for text in visible_texts(panel):
                plain = re.sub(r"<[^>]+>", "\n", text)
                fragments = {f.strip() for f in re.split(r"\n| on |: |, |; |\(|\)", plain)}
                assert not fragments & ids, f"{view} {page or ''}: {text!r} names {fragments & ids}"
        if pages[1:]:
            panel.show_page(panel.main_page)


def test_an_export_does_not_depend_on_the_window(exporting_window, tmp_path):
    """The same file from a window at 1600 × 1000 and from one at 1024 × 768 in presentation mode
    and the dark theme: exports are composed on the page, in the light theme unless asked."""
    from PySide6.QtGui import QImage

    window = exporting_window
    window.tabs.setCurrentIndex(VIEWS.index("latency"))
    window.resize(1600, 1000)
    big = window.exports.export_plot(tmp_path / "big.png", scale=1.0)[0]
    try:
        window.resize(1024, 768)
        window.display.set_presentation(True)
        window.display.set_theme("dark")
        window.tabs.setCurrentIndex(VIEWS.index("latency"))
        small = window.exports.export_plot(tmp_path / "small.png", scale=1.0)[0]
        dark = window.exports.export_all_to(tmp_path / "dark", scale=1.0, page="slide", theme_name="dark")
    finally:
        window.display.set_presentation(False)
        window.display.set_theme("light")
        window.resize(1400, 900)
    assert QImage(str(small)) == QImage(str(big))
    light = QImage(str(big))
    assert light.pixelColor(2, 2).lightness() > 200  # a light page
    slide = QImage(str(next(path for path in dark if path.name == "3-latency.png")))
    assert slide.pixelColor(2, 2).lightness() < 80  # dark, as asked
    assert slide.width() > light.width()  # the slide's page is wider than the handout's
