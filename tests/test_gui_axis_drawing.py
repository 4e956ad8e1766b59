"""An axis kept as an :class:`~accelscope.gui.plotkit.axes.AxisDrawing` draws on the screen what
pyqtgraph's ``drawPicture`` draws straight onto the same painter: the axis line, ticks and grid
lines pixel for pixel, and each label with the same ink in the same place (a glyph may land a
sub-pixel step away, which antialiasing shows in a few edge pixels, never a pixel's shift).
Painters other than the screen's (an SVG export) get the recorded calls, so exported labels stay
text. Every axis of every tab is checked, with the whole catalog shown."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

OFFSET = (2.37, 2.61)  # a sub-pixel placement, as an axis has in its view
LABEL_MARGIN_PX = 2  # around a label's box: its antialiased edge
CENTROID_TOLERANCE_PX = 0.25  # a label's ink may move a sub-pixel step, not a pixel
INK_TOLERANCE = 0.04  # and its amount by a few percent (edge pixels)


def specs_of(axis):
    from PySide6.QtGui import QPainter, QPicture

    picture = QPicture()
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        return axis.generateDrawSpecs(painter)
    finally:
        painter.end()


def rendered(axis, draw) -> np.ndarray:
    """``draw(painter)`` onto a white raster image around the axis, as greyscale ink (0: none)."""
    from PySide6.QtGui import QColor, QImage, QPainter

    bounds = axis.boundingRect().toAlignedRect()
    image = QImage(bounds.width() + 6, bounds.height() + 6, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.translate(-bounds.x() + OFFSET[0], -bounds.y() + OFFSET[1])
    try:
        draw(painter)
    finally:
        painter.end()
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4)
    return 255.0 - pixels[:, :, :3].astype(float).mean(axis=2)


def direct(axis):
    """pyqtgraph's drawing of the axis, straight onto the painter (no picture in between)."""
    specs = specs_of(axis)

    def draw(painter):
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        if specs is not None:
            axis.drawPicture(painter, *specs)

    return draw, specs


def label_boxes(axis, specs, shape) -> list[tuple[slice, slice]]:
    """Each label's box in the image (with its antialiased margin). RowAxis draws a row's lines
    in boxes of its own; the whole label column is taken for it."""
    from accelscope.gui.plotkit.axes import RowAxis

    bounds = axis.boundingRect().toAlignedRect()
    if isinstance(axis, RowAxis):
        return [(slice(0, shape[0]), slice(0, shape[1]))]
    boxes = []
    for rect, _flags, _text in specs[2]:
        top = int(rect.top() - bounds.y() + OFFSET[1]) - LABEL_MARGIN_PX - 4  # drawText's line is taller than the box
        left = int(rect.left() - bounds.x() + OFFSET[0]) - LABEL_MARGIN_PX - 2
        boxes.append((slice(max(top, 0), int(top + rect.height() + 2 * LABEL_MARGIN_PX + 10)),
                      slice(max(left, 0), int(left + rect.width() + 2 * LABEL_MARGIN_PX + 4))))
    return boxes


def differences(expected: np.ndarray, drawn: np.ndarray, boxes) -> list[str]:
    """What differs beyond sub-pixel glyph placement: any pixel outside the labels' boxes, and
    any label whose ink moved or changed in amount."""
    found = []
    outside = np.ones(expected.shape, bool)
    for rows, cols in boxes:
        outside[rows, cols] = False
    if (expected[outside] != drawn[outside]).any():
        found.append(f"{int((expected[outside] != drawn[outside]).sum())} pixels differ outside the labels")
    for rows, cols in boxes:
        a, b = expected[rows, cols], drawn[rows, cols]
        ink_a, ink_b = a.sum(), b.sum()
        if ink_a == 0 and ink_b == 0:
            continue
        if abs(ink_a - ink_b) > INK_TOLERANCE * max(ink_a, ink_b):
            found.append(f"a label's ink {ink_b:.0f} against {ink_a:.0f}")
            continue
        for axis_index in (0, 1):
            places = np.arange(a.shape[axis_index])
            centre_a = (a.sum(axis=1 - axis_index) * places).sum() / ink_a
            centre_b = (b.sum(axis=1 - axis_index) * places).sum() / ink_b
            if abs(centre_a - centre_b) > CENTROID_TOLERANCE_PX:
                found.append(f"a label moved {centre_b - centre_a:+.2f} px along axis {axis_index}")
    return found


def every_axis(window, qtbot):
    from PySide6.QtWidgets import QApplication

    from accelscope.gui.plotkit.axes import axes_of

    for view, panel in window.panels.items():
        window.show_view(view)
        QApplication.processEvents()
        for graphics in panel._views():
            for axis in axes_of(graphics):
                if axis.isVisible() and axis.boundingRect().width() > 0:
                    yield view, axis


def test_every_axis_draws_as_pyqtgraph_draws_it(open_window, qtbot):
    from accelscope.gui.plotkit.axes import AxisDrawing

    window = open_window(size=(1600, 1000), every_accelerator=True)
    checked = 0
    for view, axis in every_axis(window, qtbot):
        draw, specs = direct(axis)
        expected = rendered(axis, draw)
        drawn = rendered(axis, AxisDrawing.of(axis).play)
        assert expected.sum() > 0, f"{view}: the axis drew nothing"
        boxes = label_boxes(axis, specs, expected.shape) if specs is not None else []
        assert differences(expected, drawn, boxes) == [], f"{view}, {type(axis).__name__} {axis.orientation}"
        checked += 1
    assert checked >= 40  # every tab's axes were reached (over fifty with the whole catalog)


def test_the_comparison_finds_a_label_a_pixel_off(open_window, qtbot):
    """The check above, against a drawing with one label moved by a pixel: it must fail."""
    from PySide6.QtCore import QPointF

    from accelscope.gui.plotkit.axes import AxisDrawing

    window = open_window(size=(1600, 1000), every_accelerator=True)
    window.show_view("sweep")
    axis = window.panels["sweep"].plot.getAxis("bottom")
    draw, specs = direct(axis)
    expected = rendered(axis, draw)
    drawing = AxisDrawing.of(axis)
    at = next(i for i, step in enumerate(drawing._steps) if step[0] == "text")
    kind, pen, font, origin, static = drawing._steps[at]
    drawing._steps[at] = (kind, pen, font, origin + QPointF(0.0, 1.0), static)
    found = differences(expected, rendered(axis, drawing.play), label_boxes(axis, specs, expected.shape))
    assert any("moved" in text for text in found)


def test_an_axis_keeps_its_drawing_until_it_changes(open_window, qtbot):
    from PySide6.QtWidgets import QApplication

    from accelscope.gui.plotkit.axes import AxisDrawing

    window = open_window(size=(1600, 1000), every_accelerator=True)
    window.show_view("latency")
    QApplication.processEvents()
    window.panels["latency"].grab()
    axis = window.panels["latency"].ttft.plot.getAxis("bottom")
    assert isinstance(axis.picture, AxisDrawing)
    kept = axis.picture
    window.panels["latency"].grab()
    assert axis.picture is kept  # played again, not laid out again
    axis.setRange(0.0, 5.0)  # a new range: drawn anew at the next paint
    window.panels["latency"].grab()
    assert isinstance(axis.picture, AxisDrawing) and axis.picture is not kept


def test_an_svg_export_gets_the_labels_as_text(open_window, qtbot):
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    from accelscope.gui.plotkit.axes import AxisDrawing

    window = open_window(size=(1600, 1000), every_accelerator=True)
    window.show_view("sweep")
    axis = window.panels["sweep"].plot.getAxis("bottom")
    drawing = AxisDrawing.of(axis)
    labels = [step[4].text() for step in drawing._steps if step[0] == "text"]
    assert labels
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(axis.boundingRect().toAlignedRect().size())
    painter = QPainter(generator)
    drawing.play(painter)
    painter.end()
    svg = bytes(data).decode()
    assert all(f">{label}</text>" in svg for label in labels)
