"""Texts on the plots show whole: no number cut by an ellipsis or the edge of a plot, no tick
labels run together, and accelerators and models named as the legends name them, not by id.

Each panel lists the texts its plots draw and whether each shows whole (``Panel.shown_texts``);
the window is tried at a desk's size and a classroom projector's.
"""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QFontMetricsF

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace

# A desk's window, and the window as the app lays it out on a projector's 1024×768 screen (one
# dock, the other tabbed with it); "side" is that screen with Explain opened beside the other
# docks (a ~430 px tab: the Memory page keeps its least width and scrolls sideways).
WINDOW_SIZES = [(1600, 1000), (1024, 768), "side"]
# Rows whose statuses are long: weights that need TP or offload, a KV cache in waves, weights
# offloaded to a far tier, and a model hundreds of thousands of times an SRAM chip's memory.
CROWDED = ("a100-40gb", "h100-sxm", "rtx-4090", "l4", "gh200", "max-1550", "wse-3", "groq-lpu", "mi300x",
           "ryzen-ai-max-395")
NUMBER = re.compile(r"\d")

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def show(window, qtbot, view: str, workspace: Workspace) -> None:
    window.controller.set_workspace(workspace)
    window.controller.throttle.flush()
    window.show_view(view)
    qtbot.wait(30)
    window.panels[view].grab()  # lays the page out, so positions are final


def cut(texts) -> list[str]:
    return [f"{t.text!r} (for {t.whole!r}) at {t.box.getRect()}" for t in texts if NUMBER.search(t.whole)
            and not t.fits]


@pytest.mark.parametrize("size", WINDOW_SIZES)
@pytest.mark.parametrize("scenario", [
    {"model": "llama-3.3-70b", "batch": 64, "input_len": 4096, "output_len": 1024},
    {"model": "deepseek-v3", "batch": 256, "input_len": 8192, "output_len": 1024, "offload": 0.5},
])
def test_no_number_on_the_memory_tab_is_cut(open_window, window_on, qtbot, size, scenario):
    from PySide6.QtCore import Qt

    if size == (1600, 1000):
        window = open_window(size=size)
    else:
        window = window_on((1024, 768))
    if size == "side":
        explain = window.arrangement.explain
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, explain)
        explain.show()
        window.resizeDocks([explain], [240], Qt.Orientation.Horizontal)
    show(window, qtbot, "memory", Workspace(Scenario(accelerator="h100-sxm", **scenario), shown=CROWDED))
    panel = window.panels["memory"]
    texts = panel.shown_texts()
    statuses = [t for t in texts if t.whole in set(panel.plotted()["status_shown"])]
    assert len(statuses) == len(CROWDED)
    assert any(t.text.startswith("×") for t in texts)  # some rows are cut at 200%, with their multiple
    assert cut(texts) == [], (panel.canvas.width(), window.width(), panel.plot.vb.sceneBoundingRect())
    if size == "side":  # the tab is narrower than the page: it scrolls rather than squeeze the bars
        scroll = window.tabs.scroll_area(window.tabs.currentIndex())
        assert scroll.viewport().width() < panel.width() and scroll.horizontalScrollBar().maximum() > 0


def test_a_status_too_wide_for_its_column_is_brief_with_every_number_kept(open_window, qtbot):
    window = open_window(size=(1024, 768))
    show(window, qtbot, "memory", Workspace(Scenario(model="llama-3.3-70b", accelerator="h100-sxm", batch=64,
                                                     input_len=4096, output_len=1024), shown=CROWDED))
    drawn = window.panels["memory"].plotted()
    briefed = [(whole, shown) for whole, shown in zip(drawn["status"], drawn["status_shown"], strict=True)
               if whole != shown]
    assert briefed  # the projector's narrow tab cannot hold "does not fit — needs TP=… or …% offload" whole
    for whole, shown in briefed:
        assert len(shown) < len(whole)
        assert re.findall(r"[\d.,]+", shown) == re.findall(r"[\d.,]+", whole)


@pytest.mark.parametrize("width", [150, 260, 600])
@pytest.mark.parametrize("decades", [(0.0, 7.0), (1.0, 3.5), (0.05, 0.28)])
def test_log_axis_labels_never_run_together_and_a_short_axis_keeps_numbers(qtbot, width, decades):
    """Bars at log10(value) over seven decades in a narrow plot wrote "10100100010k100k1M10M";
    a range inside one decade (1.1 to 1.9) wrote no label at all."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.axes import LogValueAxis
    from accelscope.gui.plotkit.fit import axis_texts

    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(width, 120)
    plot = view.addPlot(axisItems={"bottom": LogValueAxis("bottom")})
    plot.setXRange(*decades, padding=0.0)
    view.show()
    qtbot.waitExposed(view)
    labels = axis_texts(plot.getAxis("bottom"))
    assert len(labels) >= 2, labels
    boxes = sorted((box for _text, box in labels), key=lambda box: box.left())
    assert all(a.right() < b.left() for a, b in zip(boxes, boxes[1:], strict=False)), labels


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_no_page_scrolls_sideways_on_a_projector_but_the_regimes_grid_on_the_smallest(window_on, qtbot, size):
    """Long names shown ("GH200 Grace Hopper Superchip"): the Energy tab's names on one line
    and its note's legend entry kept whole made its page 865 px wide in a 672 px tab."""
    window = window_on(size)
    workspace = Workspace(Scenario(model="llama-3.3-70b", accelerator="h100-sxm", batch=64, input_len=4096,
                                   output_len=1024), shown=CROWDED)
    for view, panel in window.panels.items():
        show(window, qtbot, view, workspace.with_changes(view=view))
        scroll = window.tabs.scroll_area(window.tabs.currentIndex())
        if view == "regimes" and size == (1024, 768):
            # The names, eight computed columns at their least and the paper's eight grades
            # need more than the tab: the page keeps that width and scrolls.
            assert panel.heatmap.width() >= panel.heatmap.minimumSizeHint().width() > scroll.viewport().width()
            continue
        assert scroll.horizontalScrollBar().maximum() == 0, (view, panel.width(), scroll.viewport().width())


@pytest.mark.parametrize("extra_px", [0, 60, 400])
def test_the_regimes_columns_never_run_into_the_papers_grades(open_window, qtbot, extra_px):
    """At 700 px (its old least width, the tab beside a dock on a 1024 px screen) the computed
    columns were held at 30 px and ran under the paper's grades and the legend."""
    window = open_window(size=(1600, 1000))
    window.show_view("regimes")
    panel = window.panels["regimes"]
    panel.refresh_now()
    heatmap = panel.heatmap
    least = heatmap.minimumSizeHint().width()
    heatmap.resize(least + extra_px, heatmap.height())
    geometry = heatmap.geometry_now()
    regimes = len(heatmap.content.headers)
    assert geometry.cells_left + regimes * geometry.column_width <= geometry.paper_left
    assert geometry.paper_left + regimes * geometry.paper_column <= heatmap.width()
    score = QFontMetricsF(heatmap.font).horizontalAdvance("0.00")
    assert geometry.column_width >= score  # a score is whole in its cell


def test_the_memory_tiers_curves_keep_their_height_on_a_projector(window_on, qtbot):
    """At 1024x768 with a dock the notes beneath took the height and left the slowdown curves
    ~50 px; the page keeps the plots' least height and scrolls."""
    window = window_on((1024, 768))
    show(window, qtbot, "tiers", Workspace(Scenario(model="llama-3.1-8b", accelerator="h100-sxm"),
                                           shown=("h100-sxm",), view="tiers"))
    panel = window.panels["tiers"]
    panel.refresh_now()  # its study writes the long notes beneath the plots
    qtbot.wait(30)
    panel.grab()
    assert panel.slowdown_plot.vb.height() >= 100, panel.slowdown_plot.vb.height()
