"""The Scaling tab's layout in the main window, at a desk's size (1600 × 1000) and a classroom
projector's (1024 × 768, both docks open), for a MoE model (the routing histogram shows), a
dense model (two rows are "n/a") and a MoE model one strategy of which does not fit: every
axis title, tick label, value beside a bar, histogram label and table header is whole, inside
its plot or widget, and clear of its neighbours; the header, plots and table lie one under
another; where the tab is too narrow for the plots' numbers the page scrolls rather than cut
them.

Geometry is measured offscreen, in the scene of each plot canvas and in the panel's widgets.
The side column (synthetic form and routing) is shown, as it leaves the plots the least room,
except in one case.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication, QLabel

from accelscope.engine.physics.engine import Engine
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.plotkit.axes import GridAxis, fitted_lines
from accelscope.gui.plotkit.bars import LogBarPlot, canvas
from accelscope.gui.plotkit.fit import axis_texts
from accelscope.gui.plotkit.text import _Texts

DESK, PROJECTOR = (1600, 1000), (1024, 768)
MODELS = ("mixtral-8x7b", "llama-3.3-70b", "deepseek-r1")
SLACK_PX = 0.5  # floating-point slack on "inside"

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def settle(window) -> None:
    for _ in range(3):
        QApplication.processEvents()
    window.panels["scaling"].prepare_paint()
    QApplication.processEvents()


@pytest.fixture(scope="module")
def engine():
    return Engine()  # this module's own: the models the studies register reach no other test


@pytest.fixture(scope="module", params=[*itertools.product((DESK, PROJECTOR), MODELS, ("side",)),
                                        (DESK, "deepseek-r1", "no side"), (PROJECTOR, "mixtral-8x7b", "no side")],
                ids=lambda p: f"{p[0][0]}x{p[0][1]}-{p[1]}-{p[2].replace(' ', '-')}")
def tab(request, qapp, engine, tmp_path_factory):
    """The Scaling tab of a main window of the given size on a model, with the side column
    shown (the plots' least room) or hidden."""
    from accelscope.gui.main_window import MainWindow
    from accelscope.gui.state.session import default_workspace

    size, model, side = request.param
    with pytest.MonkeyPatch.context() as patch:  # the folder is the tab's: later modules get the run's back
        patch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        configure_pyqtgraph()
        workspace = default_workspace(engine.catalog).with_changes(view="scaling").with_scenario(model=model)
        window = MainWindow(engine, workspace)
        window.resize(*size)
        window.show()
        window.start(synchronous=True)
        settle(window)
        panel = window.panels["scaling"]
        for _ in range(2 if panel.side_button.isChecked() == (side == "side") else 1):
            panel.side_button.click()  # as the user: the width no longer decides
        panel.refresh_now()
        settle(window)
        assert panel.isVisible() and panel.side.isVisible() == (side == "side")
        yield SimpleNamespace(size=size, model=model, panel=panel, window=window)
        window.close()
        window.deleteLater()
    QApplication.processEvents()


def inner(rect: QRectF, margin: float) -> QRectF:
    return rect.adjusted(margin, margin, -margin, -margin)


def shown_title(axis) -> str:
    """The title as drawn, its lines joined with spaces."""
    return " ".join(axis.label.toPlainText().split())


def whole_title(axis) -> str:
    units = f" ({axis.labelUnits})" if axis.labelUnits else ""
    return " ".join(f"{axis.labelText}{units}".split())


def table_headers(table) -> list:
    grid = table.layout()
    return [grid.itemAtPosition(0, column).widget() for column in range(grid.columnCount())
            if grid.itemAtPosition(0, column) is not None]


def rows_height(table, rows: int) -> int:
    """The height of the table's header row and its first ``rows`` strategies."""
    grid = table.layout()
    header = max(label.sizeHint().height() for label in table_headers(table))
    row = grid.itemAtPosition(1, 0).widget().sizeHint().height()
    return grid.contentsMargins().top() + header + rows * (row + grid.verticalSpacing())


def in_panel(panel, widget) -> QRect:
    return QRect(widget.mapTo(panel, QPoint(0, 0)), widget.size())


def inside(rect: QRectF, bounds: QRectF) -> bool:
    return (rect.left() >= bounds.left() - SLACK_PX and rect.right() <= bounds.right() + SLACK_PX
            and rect.top() >= bounds.top() - SLACK_PX and rect.bottom() <= bounds.bottom() + SLACK_PX)


def apart(a: QRectF, b: QRectF) -> bool:
    return not a.adjusted(SLACK_PX, SLACK_PX, -SLACK_PX, -SLACK_PX).intersects(b)


# ---- the bar plots' axis titles and tick labels ----------------------------------------------------


def test_axis_titles_stay_under_their_own_plot(tab):
    """Each x-axis title lies within its plot's width, inside the canvas, whole (not elided),
    and clear of the other titles; the three view boxes stay level whatever lines each takes."""
    scaling = tab.panel
    canvas_rect = QRectF(scaling.canvas.viewport().rect())
    titles = []
    for plot in scaling.plots:
        axis = plot.plot.getAxis("bottom")
        rect = axis.title_box()
        shown = shown_title(axis)
        assert rect.left() >= plot.plot.sceneBoundingRect().left() - SLACK_PX, shown
        assert rect.right() <= plot.plot.sceneBoundingRect().right() + SLACK_PX, shown
        assert inside(rect, canvas_rect), shown
        assert shown == whole_title(axis), (axis.width(), axis.needed_width())  # on one or two lines, not elided
        titles.append(rect)
    for a, b in itertools.combinations(titles, 2):
        assert apart(a, b)
    views = [plot.plot.vb.sceneBoundingRect() for plot in scaling.plots]
    assert len({(round(v.top(), 3), round(v.height(), 3)) for v in views}) == 1


def test_tick_labels_do_not_run_together_or_into_a_title(tab):
    scaling = tab.panel
    every = []
    for plot in scaling.plots:
        axis = plot.plot.getAxis("bottom")
        ticks = axis_texts(axis)
        assert ticks, "an axis without a labelled tick"
        title = axis.title_box()
        for text, rect in ticks:
            assert apart(rect, title), text
            assert inside(rect, plot.plot.sceneBoundingRect()), text
        every += ticks
    for (text_a, a), (text_b, b) in itertools.combinations(every, 2):
        assert apart(a, b), (text_a, text_b)


# ---- values beside the bars ---------------------------------------------------------------------


def test_values_beside_bars_are_whole_and_inside_their_view(tab):
    """The value written beside each row's bars lies inside its plot's view box (not cut by
    it) and does not touch the next row's; no number is cut anywhere on the plots."""
    scaling = tab.panel
    checked = 0
    for plot in scaling.plots:
        view = plot.plot.vb.sceneBoundingRect()
        boxes = []
        for text, box in zip(plot.texts.texts(), plot.texts.scene_boxes(), strict=True):
            if not text:
                continue
            drawn = inner(box, _Texts.MARGIN_PX)
            assert inside(drawn, view), (text, drawn, view)
            boxes.append((text, drawn))
            checked += 1
        for (text_a, a), (text_b, b) in itertools.pairwise(boxes):
            assert apart(a, b), (text_a, text_b)
    assert checked >= 12
    numbers = [t for t in scaling.shown_texts() if any(c.isdigit() for c in t.whole) and not t.fits]
    assert numbers == []


def test_the_page_scrolls_rather_than_squeeze_the_plots_below_their_numbers(tab):
    """The canvas is never narrower than its plots' texts need; when the tab is narrower than
    that, the page scrolls sideways to reach them."""
    scaling = tab.panel
    assert scaling.canvas.width() >= scaling.canvas.minimumWidth()
    window = tab.window
    scroll = window.tabs.scroll_area(window.tabs.indexOf(scaling))
    if scaling.width() > scroll.viewport().width():
        assert scroll.horizontalScrollBar().maximum() >= scaling.width() - scroll.viewport().width()


# ---- the routing histogram's title ----------------------------------------------------------------


def test_histogram_title_is_whole_inside_the_histogram(tab):
    scaling = tab.panel
    if not scaling.side.isVisible() or not scaling.histogram.isVisible():
        assert not scaling.side.isVisible() or not scaling.study.is_moe or scaling.study.routing is None
        return
    axis = scaling.histogram.getPlotItem().getAxis("bottom")
    rect = axis.title_box()
    widget = QRectF(scaling.histogram.viewport().rect())
    assert inside(scaling.histogram.mapFromScene(rect).boundingRect().toRectF(), widget)
    assert shown_title(axis) == whole_title(axis)
    assert shown_title(axis).endswith("(×)")  # what, and its unit
    for text, tick in axis_texts(axis):
        assert apart(tick, rect), text
    # The p50, p99 and engine lines' labels: their text inside the plot, no label's (filled)
    # box over another's.
    view = scaling.histogram.getPlotItem().vb.sceneBoundingRect()
    lines = (scaling.p50_line, scaling.p99_line, scaling.engine_line)
    for line in lines:
        text = line.label.textItem
        assert inside(text.mapRectToScene(inner(text.boundingRect(), text.document().documentMargin())), view)
    boxes = [line.label.mapRectToScene(line.label.boundingRect()) for line in lines]
    for a, b in itertools.combinations(boxes, 2):
        assert apart(a, b)


# ---- the numbers table, and what lies around it ---------------------------------------------------


def test_table_columns_are_whole_and_the_table_fits_or_scrolls(tab):
    scaling = tab.panel
    notes, area = scaling.notes, scaling.notes_scroll
    headers = table_headers(notes)
    assert len(headers) == 7
    for header in headers:
        assert header.width() >= header.sizeHint().width()
        assert header.height() >= header.sizeHint().height()
    shown = [label for label in notes.findChildren(QLabel) if label.isVisibleTo(notes)]
    assert {label.font().pointSizeF() for label in shown} == {notes.font().pointSizeF()}  # one size
    for label in shown:
        assert label.width() >= label.sizeHint().width(), label.text()
    viewport = area.viewport()
    last = headers[-1]
    right = last.mapTo(notes, QPoint(last.width(), 0)).x()
    if right > viewport.width():  # the last column lies beyond the view: it can be scrolled to
        bar = area.horizontalScrollBar()
        assert bar.isVisibleTo(area) and bar.maximum() >= right - viewport.width()
    if notes.height() > viewport.height():
        assert area.verticalScrollBar().isVisibleTo(area)
    assert viewport.height() >= rows_height(notes, 3)
    if tab.size == DESK:  # the table spans the tab: at a desk's size every column shows
        assert right <= viewport.width()


def test_header_plots_and_table_do_not_overlap(tab):
    scaling = tab.panel
    rects = [in_panel(scaling, part) for part in (scaling.header, scaling.legend, scaling.canvas, scaling.notes_scroll)]
    for label in (scaling.header, scaling.legend):
        assert label.height() >= label.heightForWidth(label.width())
    for above, below in itertools.pairwise(rects):
        assert above.bottom() < below.top()
    assert rects[-1].bottom() <= scaling.rect().bottom()
    assert scaling.canvas.height() >= scaling.canvas.minimumHeight()


@pytest.mark.parametrize("size", [DESK, PROJECTOR])
def test_the_side_column_gives_way_on_a_narrow_tab_until_the_user_chooses(open_window, qtbot, size):
    window = open_window(size=size)
    window.show_view("scaling")
    panel = window.refresh_panel("scaling")
    panel.refresh_now()
    qtbot.wait(30)
    room = panel.parentWidget().width()
    fits_beside = room >= panel.canvas.minimumWidth() + panel.side.minimumWidth() + panel.splitter.handleWidth()
    assert fits_beside == (size == DESK)  # 1024 px with both docks open leaves the tab ~390 px
    assert panel.side.isVisibleTo(panel) == fits_beside == panel.side_button.isChecked()
    panel.side_button.click()
    window.resize(size[0] - 10, size[1])
    qtbot.wait(30)
    assert panel.side.isVisibleTo(panel) == (not fits_beside)


# ---- the pieces, on their own ---------------------------------------------------------------------


def test_a_title_wraps_then_is_elided_with_the_whole_in_its_tool_tip(qtbot):
    configure_pyqtgraph()
    title = "output tokens per second, whole system"
    axis = GridAxis("bottom")
    widget = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(widget)
    widget.getPlotItem().setLabel("bottom", title)
    axis.fit_title()
    metrics = QFontMetricsF(axis.title_font())
    chrome = 80  # the left axis and the margins, more than enough
    widget.show()
    qtbot.waitExposed(widget)
    for width, lines, elided in ((metrics.horizontalAdvance(title) + chrome, 1, False),
                                 (metrics.horizontalAdvance("output tokens per second,") + chrome, 2, False),
                                 (metrics.horizontalAdvance("output tokens") + chrome, 2, True)):
        widget.resize(round(width), 200)
        QApplication.processEvents()
        assert len(axis.title_lines) == lines and axis.title_elided == elided, width
        assert axis.label.toolTip() == (title if elided else "")
        rect = axis.title_box()
        assert rect.left() >= axis.sceneBoundingRect().left() - SLACK_PX
        assert rect.right() <= axis.sceneBoundingRect().right() + SLACK_PX
    assert axis.title_lines[0].startswith("output tokens") and any(line.endswith("…") for line in axis.title_lines)


def test_fitted_lines_break_after_a_comma_or_evenly(qapp):
    metrics = QFontMetricsF(QFont())
    lines, elided = fitted_lines("devices to fit, log scale", metrics, metrics.horizontalAdvance("devices to fit,") + 1)
    assert lines == ["devices to fit,", "log scale"] and not elided
    lines, _ = fitted_lines("busiest\u00a0/\u00a0mean device load (×)", metrics,
                            metrics.horizontalAdvance("device load (×)") + 1)
    assert lines == ["busiest\u00a0/\u00a0mean", "device load (×)"]


def test_a_bar_plot_asks_for_the_view_its_widest_value_needs(qtbot):
    configure_pyqtgraph()
    view = canvas()
    qtbot.addWidget(view)
    plot = LogBarPlot(view, 0, title="", x_label="value", x_unit=None, row_labels=False)
    view.resize(600, 200)
    view.show()
    qtbot.waitExposed(view)
    plot.update({"value": np.array([1000.0, 10.0])}, ["#332288", "#117733"], np.ones(2, bool),
                ["1000 · 125 · 3.5", "10"])
    need = plot.needed_view_px()
    assert need > plot.texts.widths_of(["1000 · 125 · 3.5"])[0]
    view.resize(round(need + 2 * 6 + 20), 200)  # the view: the canvas less its margins and the left axis
    QApplication.processEvents()
    plot.fit_x_range()
    box = inner(plot.texts.scene_boxes()[0], _Texts.MARGIN_PX)
    assert inside(box, plot.plot.vb.sceneBoundingRect())
