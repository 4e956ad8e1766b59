"""The scaling tab's layout in the main window, at its default size (MainWindow sizes itself
1500 × 950; the app then fills the screen) and at its least size (what its layouts allow), for
a MoE model (the routing histogram shows), a dense model (two rows are "n/a") and a MoE model
one strategy of which does not fit: every axis title, tick label, value beside a bar, histogram
label and table header is whole, inside its plot or widget, and clear of its neighbours, and
the header, plots and table lie one under another.

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
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QApplication, QLabel

from accelscope.engine.api import Engine
from accelscope.gui.panels import bars
from accelscope.gui.style import configure_pyqtgraph

DEFAULT = "default"
LEAST = "least"
MODELS = ("mixtral-8x7b", "llama-3.3-70b", "deepseek-r1")
SLACK_PX = 0.5  # floating-point slack on "inside"

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


def settle(window) -> None:
    for _ in range(3):
        QApplication.processEvents()
    window.panels["scaling"].prepare_paint()
    QApplication.processEvents()


@pytest.fixture(scope="module")
def engine():
    return Engine()  # this module's own: nothing it registers reaches other tests


@pytest.fixture(scope="module", params=[*itertools.product((DEFAULT, LEAST), MODELS, ("side",)),
                                        (DEFAULT, "deepseek-r1", "no side")],
                ids=lambda p: "-".join(p).replace(" ", "-"))
def tab(request, qapp, engine):
    """The scaling tab of a main window at the default or least size, on a model, with the side
    column shown (the plots' least room) or hidden."""
    from accelscope.gui.main_window import MainWindow, default_workspace

    size, model, side = request.param
    configure_pyqtgraph()
    workspace = default_workspace(engine.catalog).with_changes(view="scaling").with_scenario(model=model)
    window = MainWindow(engine, workspace)
    window.show()
    window.start(synchronous=True)
    settle(window)
    if size == LEAST:
        for _ in range(3):  # the least size can grow once the tab is laid out at it
            window.resize(window.minimumSize())
            settle(window)
    panel = window.panels["scaling"]
    panel.side_button.setChecked(side == "side")
    panel.refresh_now()
    settle(window)
    assert panel.isVisible() and panel.side.isVisible() == (side == "side")
    if size == DEFAULT:
        assert window.size().toTuple() == (1500, 950)
    else:
        assert window.size() == window.minimumSize()
    yield SimpleNamespace(size=size, model=model, panel=panel)
    window.close()
    window.deleteLater()
    QApplication.processEvents()


def inner(rect: QRectF, margin: float) -> QRectF:
    return rect.adjusted(margin, margin, -margin, -margin)


def title_rect(axis: pg.AxisItem) -> QRectF:
    """Where an axis title's text is drawn (its box less the document margin), in scene pixels."""
    label = axis.label
    margin = label.document().documentMargin()
    return label.mapRectToScene(inner(label.boundingRect(), margin))


def shown_title(axis: pg.AxisItem) -> str:
    """The title as drawn, its lines joined with spaces."""
    return " ".join(axis.label.toPlainText().split())


def whole_title(axis: pg.AxisItem) -> str:
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


def tick_rects(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """Each tick label the axis draws, with its box in scene pixels."""
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(text, axis.mapRectToScene(rect)) for rect, _flags, text in specs[2] if text]


def inside(rect: QRectF, bounds: QRectF) -> bool:
    return (rect.left() >= bounds.left() - SLACK_PX and rect.right() <= bounds.right() + SLACK_PX
            and rect.top() >= bounds.top() - SLACK_PX and rect.bottom() <= bounds.bottom() + SLACK_PX)


def apart(a: QRectF, b: QRectF) -> bool:
    return not a.adjusted(SLACK_PX, SLACK_PX, -SLACK_PX, -SLACK_PX).intersects(b)


# ---- 1. the bar plots' axis titles and tick labels ------------------------------------------------


def test_axis_titles_stay_under_their_own_plot(tab):
    """Each x-axis title lies within its plot's width, inside the canvas, whole (not elided),
    and clear of the other titles; the three view boxes stay level whatever lines each takes."""
    scaling = tab.panel
    canvas = QRectF(scaling.canvas.viewport().rect())
    titles = []
    for plot in scaling.plots:
        axis = plot.plot.getAxis("bottom")
        rect = title_rect(axis)
        shown = shown_title(axis)
        assert rect.left() >= plot.plot.sceneBoundingRect().left() - SLACK_PX, shown
        assert rect.right() <= plot.plot.sceneBoundingRect().right() + SLACK_PX, shown
        assert inside(rect, canvas), shown
        assert shown == whole_title(axis)  # on one or two lines, not elided
        titles.append(rect)
    for a, b in itertools.combinations(titles, 2):
        assert apart(a, b)
    views = [plot.plot.vb.sceneBoundingRect() for plot in scaling.plots]
    assert len({(round(v.top(), 3), round(v.height(), 3)) for v in views}) == 1


def test_tick_labels_do_not_run_together(tab):
    """Tick labels of one axis are apart from each other and from the axis title; labels of
    neighbouring axes are apart too."""
    scaling = tab.panel
    every = []
    for plot in scaling.plots:
        axis = plot.plot.getAxis("bottom")
        ticks = tick_rects(axis)
        assert ticks, "an axis without a labelled tick"
        for (text_a, a), (text_b, b) in itertools.combinations(ticks, 2):
            assert apart(a, b), (text_a, text_b)
        title = title_rect(axis)
        for text, rect in ticks:
            assert apart(rect, title), text
            assert inside(rect, plot.plot.sceneBoundingRect()), text
        every += ticks
    for (text_a, a), (text_b, b) in itertools.combinations(every, 2):
        assert apart(a, b), (text_a, text_b)


# ---- 2. values beside the bars --------------------------------------------------------------------


def test_values_beside_bars_are_whole_and_inside_their_view(tab):
    """The value written beside each row's bars lies inside its plot's view box (not cut by
    it), is not elided, and does not touch the next row's."""
    scaling = tab.panel
    checked = 0
    for plot in scaling.plots:
        view = plot.plot.vb.sceneBoundingRect()
        boxes = []
        for text, box in zip(plot.texts.texts(), plot.texts.scene_boxes(), strict=True):
            if not text:
                continue
            drawn = inner(box, bars._Texts.MARGIN_PX)
            assert inside(drawn, view), text
            assert "…" not in text
            boxes.append((text, drawn))
            checked += 1
        for (text_a, a), (text_b, b) in itertools.pairwise(boxes):
            assert apart(a, b), (text_a, text_b)
    assert checked >= 12


# ---- 3. the routing histogram's title ---------------------------------------------------------------


def test_histogram_title_is_whole_inside_the_histogram(tab):
    scaling = tab.panel
    if not scaling.side.isVisible():
        return
    if not scaling.histogram.isVisible():
        assert not scaling.study.is_moe or scaling.study.routing is None
        return
    axis = scaling.histogram.getPlotItem().getAxis("bottom")
    rect = title_rect(axis)
    widget = QRectF(scaling.histogram.viewport().rect())
    assert inside(scaling.histogram.mapFromScene(rect).boundingRect().toRectF(), widget)
    assert inside(rect, axis.sceneBoundingRect().adjusted(0, 0, 0, 10))  # pyqtgraph sets titles 5 px low
    assert shown_title(axis) == whole_title(axis)
    assert shown_title(axis).endswith("(×)")  # what, and its unit
    for text, tick in tick_rects(axis):
        assert apart(tick, rect), text
    # The p50, p99 and engine lines' labels: their text inside the plot, no label's box (it is
    # filled) over another's.
    view = scaling.histogram.getPlotItem().vb.sceneBoundingRect()
    lines = (scaling.p50_line, scaling.p99_line, scaling.engine_line)
    for line in lines:
        text = line.label.textItem
        assert inside(text.mapRectToScene(inner(text.boundingRect(), text.document().documentMargin())), view)
    boxes = [line.label.mapRectToScene(line.label.boundingRect()) for line in lines]
    for a, b in itertools.combinations(boxes, 2):
        assert apart(a, b)


# ---- 4. the numbers table, and what lies around it --------------------------------------------------


def test_table_header_is_whole_and_the_table_fits_or_scrolls(tab):
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
    if notes.width() > viewport.width():
        bar = area.horizontalScrollBar()
        assert bar.isVisible() and bar.maximum() == notes.width() - viewport.width()
    if notes.height() > viewport.height():
        assert area.verticalScrollBar().isVisible()
    # Whatever does not fit scrolls (above), and the area always shows a header and three
    # strategies or more. Whether the whole table fits without scrolling at the default size
    # depends on the fonts installed (here it has 10-20 px to spare), so it is not asserted.
    assert viewport.height() >= rows_height(notes, 3)


def test_header_plots_and_table_do_not_overlap(tab):
    """The header and legend are as tall as their wrapped text; the header, legend, plots and
    table lie one under the other, none over another, all within the tab."""
    scaling = tab.panel
    for label in (scaling.header, scaling.legend):
        assert label.height() >= label.heightForWidth(label.width())
    rects = [in_panel(scaling, part) for part in (scaling.header, scaling.legend, scaling.canvas, scaling.notes_scroll)]
    for above, below in itertools.pairwise(rects):
        assert above.bottom() < below.top()
    assert rects[-1].bottom() <= scaling.rect().bottom()
    assert scaling.canvas.height() >= scaling.canvas.minimumHeight()


# ---- the pieces, on their own --------------------------------------------------------------------


def test_a_title_wraps_then_is_elided_with_the_whole_in_its_tool_tip(qtbot):
    configure_pyqtgraph()
    title = "output tokens per second, whole system"
    axis = bars.FittedTitleAxis("bottom")
    widget = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(widget)
    widget.getPlotItem().setLabel("bottom", title)
    axis.fit_title()
    metrics = QFontMetricsF(axis._title_font())
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
        rect = title_rect(axis)
        assert rect.left() >= axis.sceneBoundingRect().left() - SLACK_PX
        assert rect.right() <= axis.sceneBoundingRect().right() + SLACK_PX
    assert axis.title_lines[0].startswith("output tokens") and any(line.endswith("…") for line in axis.title_lines)


def test_fitted_lines_break_after_a_comma_or_evenly(qapp):
    metrics = QFontMetricsF(QFont())
    lines, elided = bars.fitted_lines("devices to fit, log scale", metrics,
                                      metrics.horizontalAdvance("devices to fit,") + 1)
    assert lines == ["devices to fit,", "log scale"] and not elided
    lines, _ = bars.fitted_lines("busiest\u00a0/\u00a0mean device load (×)", metrics,
                                 metrics.horizontalAdvance("device load (×)") + 1)
    assert lines == ["busiest\u00a0/\u00a0mean", "device load (×)"]


def test_log_axis_labels_every_other_decade_when_decades_are_narrow(qtbot):
    axis = bars.LogValueAxis("bottom")
    axis.setTickFont(QFont())
    levels = axis.tickValues(0.0, 5.0, 130)  # 26 px a decade: "1000" and "10k" would touch
    decades = levels[0][1]
    labels = axis.tickStrings(decades, 1.0, 1.0)
    assert [label for label in labels if label] == ["1", "100", "10k"]
    assert not any(axis.tickStrings(levels[1][1], 1.0, 0.5))
    wide = axis.tickValues(0.0, 2.0, 600)
    assert axis.tickStrings(wide[0][1], 1.0, 1.0) == ["1", "10", "100"]
    assert all(axis.tickStrings(wide[1][1], 1.0, 0.5))


def test_a_value_too_wide_for_its_plot_is_elided_inside_it(qtbot):
    configure_pyqtgraph()
    canvas = bars.canvas()
    qtbot.addWidget(canvas)
    plot = bars.LogBarPlot(canvas, 0, title="", x_label="value", x_unit=None, row_labels=False)
    canvas.resize(110, 200)
    canvas.show()
    qtbot.waitExposed(canvas)
    plot.update({"value": np.array([1000.0, 10.0])}, ["#332288", "#117733"], np.ones(2, bool),
                ["1000 tokens per second, whole system", "10"])
    QApplication.processEvents()
    view = plot.plot.vb.sceneBoundingRect()
    texts, boxes = plot.texts.texts(), plot.texts.scene_boxes()
    assert texts[0].endswith("…") and texts[1] == "10"
    for box in boxes:
        assert inside(inner(box, bars._Texts.MARGIN_PX), view)
