"""What a saved picture of a panel must show, checked rather than only written: the panel's size,
not blank, more than the background in each plot's data area and each legend, and the colour of
every accelerator the picture is meant to show in its plots."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage

MIN_COLOURS = 20  # a drawn plot: text, axes, several series and their antialiased edges
MIN_INK = 0.002  # share of a region's pixels not of the picture's background
MIN_REGION_COLOURS = 3  # more than a background and a frame
MIN_SERIES_PIXELS = 10  # of an accelerator's colour in the plots: a line, a point, an outline
COLOUR_TOLERANCE = 6  # per channel: where an antialiased line is still its colour


def picture(widget) -> QImage:
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def pixels(image: QImage, rect: QRect | None = None) -> np.ndarray:
    """The 0xAARRGGBB pixels of ``image`` (Format_RGB32) inside ``rect``, as a 2-D array."""
    assert image.format() == QImage.Format.Format_RGB32
    whole = np.frombuffer(image.constBits(), dtype=np.uint32, count=image.height() * image.bytesPerLine() // 4)
    whole = whole.reshape(image.height(), image.bytesPerLine() // 4)[:, : image.width()]
    rect = (rect or image.rect()).intersected(image.rect())
    return whole[rect.top() : rect.bottom() + 1, rect.left() : rect.right() + 1]


def assert_picture_file(path, *, size: tuple[int, int] | None = None) -> QImage:
    """``path`` holds a picture (of ``size``, where given) that is not blank."""
    image = QImage(str(path))
    assert not image.isNull(), f"not a picture: {path}"
    if size is not None:
        assert (image.width(), image.height()) == size, path
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    assert len(np.unique(pixels(image))) >= MIN_COLOURS, f"a blank picture: {path}"
    return image


def _in_widget(widget, view: pg.GraphicsView, item) -> QRect:
    """Where ``item`` of ``view``'s scene is drawn, in ``widget``'s pixels."""
    rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return QRect(view.viewport().mapTo(widget, rect.topLeft()), rect.size())


def _views(widget) -> list[pg.GraphicsView]:
    return [view for view in widget.findChildren(pg.GraphicsView) if view.isVisibleTo(widget)]


def plot_areas(widget) -> list[QRect]:
    """Each shown plot's data area (its view box), in ``widget``'s pixels."""
    return [_in_widget(widget, view, item.vb) for view in _views(widget) for item in view.scene().items()
            if isinstance(item, pg.PlotItem) and item.isVisible() and item.vb.isVisible()]


def legend_areas(widget) -> list[QRect]:
    """Each shown accelerator legend, in ``widget``'s pixels."""
    from accelscope.gui.plotkit.legend import AcceleratorLegend

    return [_in_widget(widget, view, item) for view in _views(widget) for item in view.scene().items()
            if isinstance(item, AcceleratorLegend) and item.isVisible()]


def near(region: np.ndarray, colour: QColor) -> int:
    """How many pixels of ``region`` are ``colour``, within the tolerance."""
    channels = [(region >> shift) & 0xFF for shift in (16, 8, 0)]
    wanted = (colour.red(), colour.green(), colour.blue())
    close = np.ones(region.shape, dtype=bool)
    for channel, value in zip(channels, wanted, strict=True):
        close &= np.abs(channel.astype(np.int16) - value) <= COLOUR_TOLERANCE
    return int(close.sum())


def assert_shows(image: QImage, widget, *, plots: int, legends: int = 0, accelerators=()) -> None:
    """``image`` is a picture of ``widget`` at its size, not blank, with ``plots`` data areas and
    ``legends`` legends, each drawn in, and each of ``accelerators`` in its colour in the plots."""
    from accelscope.gui.look.palette import colour_for

    ratio = widget.devicePixelRatioF()
    assert (image.width(), image.height()) == (round(widget.width() * ratio), round(widget.height() * ratio))
    values, counts = np.unique(pixels(image), return_counts=True)
    assert len(values) >= MIN_COLOURS, f"a blank picture: {len(values)} colours"
    background = values[counts.argmax()]
    regions = {"plot": plot_areas(widget), "legend": legend_areas(widget)}
    assert (len(regions["plot"]), len(regions["legend"])) == (plots, legends)
    drawn = dict.fromkeys(accelerators, 0)
    for name, rects in regions.items():
        for rect in rects:
            region = pixels(image, QRect(rect.topLeft() * ratio, rect.size() * ratio))
            assert region.size, f"the {name} at {rect} is outside the picture"
            ink = float((region != background).mean())
            assert ink >= MIN_INK and len(np.unique(region)) >= MIN_REGION_COLOURS, (
                f"nothing drawn in the {name} at {rect}: {ink:.2%} ink")
            if name == "plot":
                for accelerator in drawn:
                    drawn[accelerator] += near(region, QColor(colour_for(accelerator)))
    missing = {accelerator: count for accelerator, count in drawn.items() if count < MIN_SERIES_PIXELS}
    assert not missing, f"not drawn in its colour in any plot (pixels of it): {missing}"
