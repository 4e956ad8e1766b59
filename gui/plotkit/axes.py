"""Axes for plots that span decades and for plots with one row per item.

:class:`GridAxis` lays its grid under the data in opaque colours; :class:`RowAxis` names one
row per tick (a label, an optional grey second line, the selected row in bold);
:class:`LogValueAxis` labels bars drawn at log10(value) with the value itself; :class:`LogAxis`
labels true log axes with plain numbers.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPaintEngine, QPainter, QPen, QPicture, QStaticText, QTransform

from accelscope.engine.core.units import log_tick_text, tick_text

from ..look import theme
from ..look.style import plot_font, plot_pen, plot_text_colour

ROW_LABEL_SLACK_PX = 8  # room beside a row label so the bold (selected) one is not clipped
# A row label wider than this goes on two lines, broken at a space: long accelerator names
# would otherwise narrow the plots until the values beside the bars no longer fit.
ROW_LABEL_MAX_PX = 110
ROW_WIDTH_STEP_PX = 48  # a row-label axis narrows only when it would lose this much
# Labels go on two lines (narrower) only while two-line rows, a line apart, need at most this
# height: many rows (the whole catalog) keep one line each, so they fit a desk's window without
# scrolling (two lines each made 38 rows ~1,400 px tall).
WRAPPED_ROWS_MAX_PX = 600
REFERENCE_NOTE_COLOUR = "#808080"  # A's texts (e.g. its fit status)
TICK_LABEL_GAP_PX = 6.0  # between neighbouring tick labels, at least
GRID_Z = -200.0  # below pyqtgraph's view box (z = -100), so the data is drawn over the grid
AXIS_TITLE_END_PX = 2.0  # kept clear at each end of an axis beside its fitted title


def opaque_over(colour: QColor, background: QColor | None = None) -> QColor:
    """The opaque colour a translucent ``colour`` blends to over ``background`` (by default the
    current theme's canvas). Both are drawing colours, already in the theme."""
    if background is None:
        background = QColor(theme.current().background)
    alpha = colour.alphaF()
    return QColor.fromRgbF(
        colour.redF() * alpha + background.redF() * (1.0 - alpha),
        colour.greenF() * alpha + background.greenF() * (1.0 - alpha),
        colour.blueF() * alpha + background.blueF() * (1.0 - alpha),
        1.0,
    )


def axes_of(view: pg.GraphicsView) -> list[pg.AxisItem]:
    """The axes of the plots a view shows (in its layout, nested layouts included)."""
    found: list[pg.AxisItem] = []
    pending = [view.centralWidget]
    while pending:
        item = pending.pop()
        if isinstance(item, pg.PlotItem):
            found += [entry["item"] for entry in item.axes.values()]
        elif isinstance(item, pg.GraphicsLayout):
            pending += list(item.items)
    return found


def draw_axis_ahead(axis: pg.AxisItem) -> None:
    """Draw an axis' picture now, as its next paint would (pyqtgraph's ``AxisItem.paint``):
    the paint then only plays it. Run for the hidden tabs while the controls rest, this takes
    the axes' layout of ticks and labels (~3 ms a bar tab) out of the switch to the tab."""
    if axis.picture is not None or not axis.isVisible():
        return
    axis.picture = AxisDrawing.of(axis)


class AxisDrawing:
    """An axis' lines and labels as pyqtgraph's ``drawPicture`` draws them, kept between
    paints in place of its QPicture (pyqtgraph plays ``axis.picture`` at each paint).

    A QPicture replays each label's ``drawText``, which lays the text out again at every
    paint, and each line with its own pen: ~0.4 ms for a log axis with its grid, three of
    them on a bar tab at every change. Played on the screen, this draws the lines in one call
    per pen and the labels as laid-out texts (QStaticText, kept by the axis from one drawing
    to the next). Other painters (an SVG, a printer) get the calls as recorded, through a
    QPicture, as before."""

    RenderHint = QPainter.RenderHint  # drawPicture asks its painter for it

    def __init__(self, font: QFont, texts: dict, heights: dict) -> None:
        self._calls: list[tuple[str, tuple]] = []  # as drawPicture made them, for other painters
        self._font = QFont(font)
        self._font_key = self._font.key()  # asked once a font, not once a label (~2 us a call)
        self._texts = texts  # (font key, text) -> QStaticText, the axis' own, across drawings
        self._heights = heights  # font key -> its line height
        self._pen = QPen()
        self._antialias = True
        # For the screen: ("lines", pen, antialias, [QLineF]), ("text", pen, font, QPointF,
        # QStaticText) and ("clip", QRectF), in drawing order.
        self._steps: list[tuple] = []
        self._picture: QPicture | None = None

    @classmethod
    def of(cls, axis: pg.AxisItem) -> AxisDrawing:
        """The axis drawn as pyqtgraph's paint would (its layout of ticks and labels, then its
        ``drawPicture``), recorded."""
        texts = axis.__dict__.setdefault("_static_labels", {})
        heights = axis.__dict__.setdefault("_label_heights", {})
        # The layout measures its labels with a painter's font metrics: one on a picture, as pyqtgraph's.
        measuring = QPicture()
        painter = QPainter(measuring)
        try:
            if axis.style["tickFont"]:
                painter.setFont(axis.style["tickFont"])
            drawing = cls(painter.font(), texts, heights)
            specs = axis.generateDrawSpecs(painter)
            if specs is not None:
                axis.drawPicture(drawing, *specs)
        finally:
            painter.end()
        return drawing

    # ---- the painter calls drawPicture makes ----------------------------------------------

    def setRenderHint(self, hint, on: bool = True) -> None:
        self._calls.append(("setRenderHint", (hint, on)))
        if hint == QPainter.RenderHint.Antialiasing:
            self._antialias = bool(on)

    def setPen(self, pen) -> None:
        pen = QPen(pen)
        self._calls.append(("setPen", (pen,)))
        self._pen = pen

    def setFont(self, font: QFont) -> None:
        font = QFont(font)
        self._calls.append(("setFont", (font,)))
        self._font = font
        self._font_key = font.key()

    def font(self) -> QFont:
        return QFont(self._font)

    def setClipRect(self, rect) -> None:
        rect = QRectF(rect)
        self._calls.append(("setClipRect", (rect,)))
        self._steps.append(("clip", rect))

    def drawLine(self, p1: QPointF, p2: QPointF) -> None:
        line = QLineF(p1, p2)
        self._calls.append(("drawLine", (line,)))
        last = self._steps[-1] if self._steps else None
        if last is not None and last[0] == "lines" and last[2] == self._antialias and last[1] == self._pen:
            last[3].append(line)
        else:
            self._steps.append(("lines", self._pen, self._antialias, [line]))

    def drawText(self, rect, flags, text: str) -> None:
        rect = QRectF(rect)
        self._calls.append(("drawText", (rect, int(flags), text)))
        if not text:
            return
        key = (self._font_key, text)
        static = self._texts.get(key)
        if static is None:
            if len(self._texts) >= MEASURED_LABELS:
                self._texts.clear()
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(QTransform(), self._font)
            self._texts[key] = static
        # drawText aligns a line of the font's height (QStaticText's own is rounded up)
        height = self._heights.get(key[0])
        if height is None:
            height = self._heights[key[0]] = QFontMetricsF(self._font).height()
        origin = aligned_text_origin(rect, int(flags), static.size().width(), height)
        self._steps.append(("text", self._pen, self._font, origin, static))

    # ---- played at each paint ------------------------------------------------------------

    def play(self, painter: QPainter) -> None:
        if painter.paintEngine() is None or painter.paintEngine().type() != QPaintEngine.Type.Raster:
            self._as_picture().play(painter)
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        antialias = None
        for step in self._steps:
            kind = step[0]
            if kind == "lines":
                _kind, pen, on, lines = step
                if on != antialias:
                    painter.setRenderHint(QPainter.RenderHint.Antialiasing, on)
                    antialias = on
                painter.setPen(pen)
                painter.drawLines(lines)
            elif kind == "text":
                _kind, pen, font, origin, static = step
                painter.setPen(pen)
                painter.setFont(font)
                painter.drawStaticText(origin, static)
            else:
                painter.setClipRect(step[1], Qt.ClipOperation.IntersectClip)
        painter.restore()

    def _as_picture(self) -> QPicture:
        if self._picture is None:
            picture = QPicture()
            painter = QPainter(picture)
            try:
                for name, args in self._calls:
                    getattr(painter, name)(*args)
            finally:
                painter.end()
            self._picture = picture
        return self._picture


# The alignments as plain ints: an int and a Qt flag make a Python enum (~1.6 us an
# operation, four a label).
_ALIGN_RIGHT, _ALIGN_H_CENTRE, _ALIGN_BOTTOM, _ALIGN_V_CENTRE = (
    Qt.AlignmentFlag.AlignRight.value, Qt.AlignmentFlag.AlignHCenter.value,
    Qt.AlignmentFlag.AlignBottom.value, Qt.AlignmentFlag.AlignVCenter.value)


def aligned_text_origin(rect: QRectF, flags: int, width: float, height: float) -> QPointF:
    """Where a one-line text ``width`` by ``height`` pixels starts (its top left) when
    ``drawText(rect, flags, text)`` aligns it in ``rect`` (unclipped: it may overflow it).
    Qt's text layout places a line within its width in 1/64 pixels (QFixed): so here, or a
    glyph could land a sub-pixel step away from drawText's."""
    free = (rect.width() - width) * 64
    if flags & _ALIGN_RIGHT:
        x = rect.left() + round(free) / 64
    elif flags & _ALIGN_H_CENTRE:
        x = rect.left() + round(free / 2) / 64
    else:
        x = rect.left()
    if flags & _ALIGN_BOTTOM:
        y = rect.bottom() - height
    elif flags & _ALIGN_V_CENTRE:
        y = rect.top() + (rect.height() - height) / 2
    else:
        y = rect.top()
    return QPointF(x, y)


def lean_specs_apply(axis: pg.AxisItem) -> bool:
    """Whether :func:`lean_draw_specs` lays ``axis`` out: tick alpha by level and axis lines
    that do not stop at the ticks, as every axis here has."""
    style = axis.style
    return style["tickAlpha"] is None and not any(style["stopAxisAtTick"])


def lean_draw_specs(axis: pg.AxisItem, painter, opaque: Callable[[QPen], QPen]):
    """pyqtgraph's ``AxisItem.generateDrawSpecs`` (0.13-0.14) for the axes here, step for step with
    the same arithmetic, with less Python round it: the pen of a level is made once (and made
    opaque by ``opaque`` for a grid) instead of once a tick, points are plain ``QPointF``, and
    the axis' bounding rectangle is asked for once. A log axis lays out ~60 ticks and grid
    lines, and its range moves with most changes of a sweep or a bar plot: this took ~2.3 ms an
    axis. Held equal to pyqtgraph's in the tests, for every kind of axis and orientation here."""
    style = axis.style
    if style["tickFont"] is not None:
        painter.setFont(style["tickFont"])
    bounds = axis.mapRectFromParent(axis.geometry())
    view = axis.linkedView()
    tick_bounds = bounds if view is None or axis.grid is False else view.mapRectToItem(axis, view.boundingRect())
    orientation = axis.orientation
    if orientation == "left":
        span = (bounds.topRight() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(-1.0, 1.0))
        tick_start, tick_stop, tick_dir, along = tick_bounds.right(), bounds.right(), -1, 0
    elif orientation == "right":
        span = (bounds.topLeft() + QPointF(1.0, -1.0), bounds.bottomLeft() + QPointF(1.0, 1.0))
        tick_start, tick_stop, tick_dir, along = tick_bounds.left(), bounds.left(), 1, 0
    elif orientation == "top":
        span = (bounds.bottomLeft() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(1.0, -1.0))
        tick_start, tick_stop, tick_dir, along = tick_bounds.bottom(), bounds.bottom(), -1, 1
    else:
        span = (bounds.topLeft() + QPointF(-1.0, 1.0), bounds.topRight() + QPointF(1.0, 1.0))
        tick_start, tick_stop, tick_dir, along = tick_bounds.top(), bounds.top(), 1, 1
    ends = [axis.mapToDevice(point) for point in span]
    if None in ends:
        return None
    length_px = math.hypot(ends[1].x() - ends[0].x(), ends[1].y() - ends[0].y())
    if length_px == 0:
        return None
    if axis._tickLevels is None:  # ticks the axis computes, labelled by tickStrings
        levels = axis.tickValues(axis.range[0], axis.range[1], length_px)
        fixed_strings = None
    else:  # ticks set by hand (setTicks), each with its label
        levels = [(None, [value for value, _text in level]) for level in axis._tickLevels]
        fixed_strings = [[text for _value, text in level] for level in axis._tickLevels]

    dif = axis.range[1] - axis.range[0]
    if dif == 0:
        scale, offset = 1, 0
    elif along == 0:
        scale = -bounds.height() / dif
        offset = axis.range[0] * scale - bounds.height()
    else:
        scale = bounds.width() / dif
        offset = axis.range[0] * scale
    low, high = sorted(x * scale - offset for x in axis.range)

    positions: list[list[float | None]] = []
    tick_specs = []
    grid = axis.grid
    for i, (_spacing, ticks) in enumerate(levels):
        tick_length = style["tickLength"] / ((i * 0.5) + 1.0)
        alpha = 255 / (i + 1)
        if grid is not False:
            alpha *= grid / 255. * min(max(0.05 * length_px / (len(ticks) + 1), 0.0), 1.0)
        tick_pen = axis.tickPen()
        if tick_pen.brush().style() == Qt.BrushStyle.SolidPattern:
            tick_pen = QPen(tick_pen)
            colour = QColor(tick_pen.color())
            colour.setAlpha(int(alpha))
            tick_pen.setColor(colour)
        if grid is not False:
            tick_pen = opaque(tick_pen)
        stop = tick_stop if grid is not False else tick_stop + tick_length * tick_dir
        level_positions: list[float | None] = []
        for value in ticks:
            x = (value * scale) - offset
            if x < low or x > high:
                level_positions.append(None)
                continue
            level_positions.append(x)
            if along == 0:
                tick_specs.append((tick_pen, QPointF(tick_start, x), QPointF(stop, x)))
            else:
                tick_specs.append((tick_pen, QPointF(x, tick_start), QPointF(x, stop)))
        positions.append(level_positions)
    axis_spec = (axis.pen(), span[0], span[1])

    text_specs: list = []
    if not style["showValues"]:
        return axis_spec, tick_specs, text_specs
    text_offset = style["tickTextOffset"][along]
    label_offset = max(0, style["tickLength"]) + text_offset
    if orientation == "left":
        align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    elif orientation == "right":
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    elif orientation == "top":
        align = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom
    else:
        align = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
    flags = align | Qt.TextFlag.TextDontClip
    item_bounds = axis.boundingRect()
    text_rects: list[QRectF] = []
    last_size_across = 0
    measure_box = QRectF(0, 0, 100, 100)
    for i in range(min(len(levels), style["maxTextLevel"] + 1)):
        spacing, values = levels[i]
        if fixed_strings is None:
            strings = list(axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing))
        else:
            strings = fixed_strings[i]
        if len(strings) == 0:
            continue
        rects: list[QRectF | None] = []
        for j, text in enumerate(strings):
            if positions[i][j] is None or text is None:
                rects.append(None)
                continue
            rect = painter.boundingRect(measure_box, Qt.AlignmentFlag.AlignCenter, text)
            rect.setHeight(rect.height() * 0.8)  # as pyqtgraph: a bounding box is a little too tall
            rects.append(rect)
            text_rects.append(rect)
        if text_rects:
            if along == 0:
                size_along = np.sum([r.height() for r in text_rects])
                size_across = np.max([r.width() for r in text_rects])
            else:
                size_along = np.sum([r.width() for r in text_rects])
                size_across = np.max([r.height() for r in text_rects])
        else:
            size_along = size_across = 0
        if i > 0:  # a crowded level and those after it are left without text
            fill = float(size_along) / length_px
            if any(len(text_specs) >= count and fill >= limit for count, limit in style["textFillLimits"]):
                break
        last_size_across = size_across
        for j, text in enumerate(strings):
            rect = rects[j]
            if rect is None:
                continue
            x, height, width = positions[i][j], rect.height(), rect.width()
            if orientation == "left":
                placed = QRectF(tick_stop - label_offset - width, x - (height / 2), width, height)
            elif orientation == "right":
                placed = QRectF(tick_stop + label_offset, x - (height / 2), width, height)
            elif orientation == "top":
                placed = QRectF(x - width / 2., tick_stop - label_offset - height, width, height)
            else:
                placed = QRectF(x - width / 2., tick_stop + label_offset, width, height)
            if item_bounds.intersected(placed) != placed:
                continue
            text_specs.append((placed, flags, text))
    axis._updateMaxTextSize(last_size_across)
    return axis_spec, tick_specs, text_specs


class _MeasuringPainter:
    """Stands in for the painter while pyqtgraph lays out an axis' ticks: it asks the painter
    only for the font to use and the size of each label, and sizes come from a cache. Laying
    out the text of each label again (QPainter.boundingRect) was most of the cost of an axis
    whose range changed, which a bar plot's does on most frames (its texts need room)."""

    def __init__(self, painter, sizes: dict) -> None:
        self._painter = painter
        self._sizes = sizes
        self._font_key = painter.font().key()  # kept with the font: asked once, not once a label

    def setFont(self, font: QFont) -> None:
        self._painter.setFont(font)
        self._font_key = self._painter.font().key()

    def boundingRect(self, rect, flags, text: str):
        key = (self._font_key, rect.x(), rect.y(), rect.width(), rect.height(), int(flags), text)
        if key not in self._sizes:
            if len(self._sizes) >= MEASURED_LABELS:
                self._sizes.clear()
            self._sizes[key] = self._painter.boundingRect(rect, flags, text)
        return QRectF(self._sizes[key])  # a copy: pyqtgraph changes the one it gets


MEASURED_LABELS = 4000  # label sizes an axis remembers, at most


def measured_draw_specs(sizes: dict, painter, generate):
    """``generate(painter)`` (pyqtgraph's generateDrawSpecs) with label sizes from ``sizes``."""
    return generate(_MeasuringPainter(painter, sizes))


def apart_labels(text_specs: list) -> list:
    """pyqtgraph's tick labels (rect, flags, text), less any that would touch one kept before it:
    labels come level by level (the round numbers first), so those are the ones kept."""
    kept: list = []
    for spec in text_specs:
        rect = spec[0].adjusted(-TICK_LABEL_GAP_PX / 2, 0, TICK_LABEL_GAP_PX / 2, 0)
        if all(not rect.intersects(other[0]) for other in kept):
            kept.append(spec)
    return kept


def fitted_lines(text: str, metrics: QFontMetricsF, width: float) -> tuple[list[str], bool]:
    """``text`` on one line if it is at most ``width`` pixels wide, else on two, broken at a
    space (not a no-break space): after a comma if both lines then fit, else where the wider
    line is narrowest; a line still too wide is elided. Returns the lines and whether any was
    elided."""
    if metrics.horizontalAdvance(text) <= width:
        return [text], False
    lines = [text]
    best = (True, math.inf)
    for pair, widest in _two_lines(text, metrics):
        rank = (not (pair[0].endswith(",") and widest <= width), widest)
        if rank < best:
            lines, best = pair, rank
    fitted = [metrics.elidedText(line, Qt.TextElideMode.ElideRight, max(width, 0.0)) for line in lines]
    return fitted, fitted != lines


def two_line_width(text: str, metrics: QFontMetricsF) -> float:
    """The least width (pixels) at which :func:`fitted_lines` writes ``text`` whole: on one
    line if it cannot be broken, else on two, after a comma if there is one."""
    pairs = list(_two_lines(text, metrics))
    if not pairs:
        return metrics.horizontalAdvance(text)
    after_comma = [widest for pair, widest in pairs if pair[0].endswith(",")]
    return min(after_comma or [widest for _pair, widest in pairs])


def _two_lines(text: str, metrics: QFontMetricsF):
    """Each way to break ``text`` at a space: the two lines and the wider one's width."""
    words = text.split(" ")
    for cut in range(1, len(words)):
        pair = [" ".join(words[:cut]), " ".join(words[cut:])]
        yield pair, max(metrics.horizontalAdvance(line) for line in pair)


class DrawnAxis(pg.AxisItem):
    """An axis kept between paints as an :class:`AxisDrawing` rather than a QPicture."""

    def paint(self, p, opt, widget) -> None:
        if self.picture is None:
            self.picture = AxisDrawing.of(self)
        self.picture.play(p)


class FittedTitleAxis(DrawnAxis):
    """A horizontal axis whose title stays within the axis' length, once :meth:`fit_title` is
    called.

    pyqtgraph centres an axis' title under the axis whatever its width, so a title longer than
    a narrow plot runs over its neighbours' (or out of the widget). Here a title that does not
    fit goes on two lines (:func:`fitted_lines`) and, only if a line still does not fit, is
    elided, whole in its tool tip. Axes of plots side by side can share one height
    (``group``), so their view boxes, and the rows in them, stay level whatever number of
    lines each title takes. Titles are plain text."""

    _fit_title = False
    _title_group: list | None = None
    _fitted_width: int | None = None
    _natural_height = 0.0
    title_lines: tuple[str, ...] = ()
    title_elided = False

    def fit_title(self, group: list | None = None) -> None:
        """Keep the title within the axis from now on; ``group``: a list shared by the bottom
        axes of plots side by side (this axis joins it)."""
        if self.orientation not in ("bottom", "top"):
            raise ValueError("only a horizontal axis fits its title to its length")
        self._fit_title = True
        if group is not None:
            group.append(self)
            self._title_group = group
        self._updateLabel()

    def needed_width(self) -> float:
        """The least length (pixels) at which the title shows whole (on two lines if it must)."""
        return two_line_width(self.title_text(), QFontMetricsF(self.title_font())) + 2 * AXIS_TITLE_END_PX

    def title_font(self) -> QFont:
        """The font the title is drawn in: the label's, at the size its style asks for."""
        font = QFont(self.label.font())
        size = str(self.labelStyle.get("font-size", ""))
        if size.endswith("pt"):
            font.setPointSizeF(float(size[:-2]))
        elif size.endswith("px"):
            font.setPixelSize(round(float(size[:-2])))
        return font

    def title_text(self) -> str:
        """The whole title, units included, on one line."""
        if self.labelUnits:
            return f"{self.labelText} ({self.labelUnitPrefix}{self.labelUnits})".strip()
        return str(self.labelText).strip()

    def _updateLabel(self) -> None:
        if not self._fit_title:
            super()._updateLabel()
            return
        style = ";".join(f"{key}: {value}" for key, value in self.labelStyle.items())
        width = self.size().width()
        self._fitted_width = round(width)
        text = self.title_text()
        lines, elided = fitted_lines(text, QFontMetricsF(self.title_font()), width - 2 * AXIS_TITLE_END_PX)
        self.title_lines, self.title_elided = tuple(lines), elided
        self.label.setTextWidth(-1)
        self.label.setHtml(f"<span style='{style}'>{'<br>'.join(escape(line) for line in lines)}</span>")
        if len(lines) > 1:  # a text width of its own, so the lines are centred within it
            option = self.label.document().defaultTextOption()
            option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            self.label.document().setDefaultTextOption(option)
            self.label.setTextWidth(math.ceil(self.label.boundingRect().width()) + 1)
        self.label.setToolTip(text if elided else "")
        self._adjustSize()
        self.picture = None
        self.update()

    def resizeEvent(self, ev=None) -> None:
        if self._fit_title and self.label is not None and round(self.size().width()) != self._fitted_width:
            self._updateLabel()
        super().resizeEvent(ev)

    def _updateHeight(self) -> None:
        super()._updateHeight()
        self._natural_height = self.maximumHeight()
        if self._title_group:
            tallest = max(axis._natural_height for axis in self._title_group)
            for axis in self._title_group:
                axis._hold_height(max(tallest, axis._natural_height))

    def _hold_height(self, height: float) -> None:
        if self.maximumHeight() != height or self.minimumHeight() != height:
            self.setMaximumHeight(height)
            self.setMinimumHeight(height)
            self.picture = None

    def title_box(self) -> QRectF:
        """Where the title's text is drawn (its document's margin left out), in scene pixels;
        empty if it is hidden."""
        if self.label is None or not self.label.isVisible() or not self.isVisible():
            return QRectF()
        margin = self.label.document().documentMargin()
        return self.label.mapRectToScene(self.label.boundingRect().adjusted(margin, margin, -margin, -margin))


class GridAxis(FittedTitleAxis):
    """An axis whose grid lines are opaque and lie beneath the data.

    pyqtgraph draws grid lines as translucent one-pixel lines over the data. Qt's raster
    engine strokes a translucent line pixel by pixel (so as never to blend a pixel twice),
    about 20 times slower than an opaque one (36 ms against 1.6 ms for 120 lines), and the
    grid is repainted whenever anything in the plot moves. Here each grid line takes the
    opaque colour it would blend to over the white background, and the axis sits beneath the
    view box, so the data is drawn over the grid rather than through it.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._opaque_pens: dict[tuple[int, int], QPen] = {}
        self._label_sizes: dict = {}

    def setZValue(self, z: float) -> None:
        # PlotItem puts its axes at z = 0.5, over the data; a grid axis stays beneath it.
        super().setZValue(min(z, GRID_Z) if self.grid is not False else z)

    def setGrid(self, grid: float | bool) -> None:
        super().setGrid(grid)
        self.setZValue(self.zValue())

    def generateDrawSpecs(self, p):
        if lean_specs_apply(self):
            specs = lean_draw_specs(self, _MeasuringPainter(p, self._label_sizes), self._opaque)
        else:
            specs = self.reference_draw_specs(p)
        if specs is None:
            return specs
        axis_spec, tick_specs, text_specs = specs
        return axis_spec, tick_specs, apart_labels(text_specs)

    def reference_draw_specs(self, p):
        """pyqtgraph's own layout of the ticks and labels (label sizes from the cache), its tick
        pens made opaque: what :func:`lean_draw_specs` is held equal to."""
        specs = measured_draw_specs(self._label_sizes, p, super().generateDrawSpecs)
        if specs is None or self.grid is False:
            return specs
        axis_spec, tick_specs, text_specs = specs
        return axis_spec, [(self._opaque(pen), p1, p2) for pen, p1, p2 in tick_specs], text_specs

    def _opaque(self, pen: QPen) -> QPen:
        colour = pen.color()
        if colour.alpha() == 255 or pen.brush().style() != Qt.BrushStyle.SolidPattern:
            return pen
        key = (colour.rgba(), int(pen.widthF() * 100))
        if key not in self._opaque_pens:
            opaque = QPen(pen)
            opaque.setColor(opaque_over(colour))
            self._opaque_pens[key] = opaque
        return self._opaque_pens[key]


def wrapped_lines(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """``text`` on one line if it is at most ``width`` pixels wide, else on two, broken at the
    space that makes the wider line narrowest. Nothing is cut: a line may stay wider than
    ``width`` (a row is two lines high at least, so more lines would run into the next row)."""
    if metrics.horizontalAdvance(text) <= width:
        return [text]
    words = text.split(" ")
    pairs = [[" ".join(words[:cut]), " ".join(words[cut:])] for cut in range(1, len(words))]
    if not pairs:
        return [text]
    return min(pairs, key=lambda lines: max(metrics.horizontalAdvance(line) for line in lines))


class RowAxis(DrawnAxis):
    """An axis naming one row per tick: the accelerators on the left, or a status text per
    row on the right. Each row can have its own colour; the selected row is bold."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self._labels: list[str] = []  # as given
        self._drawn: list[str] = []  # as drawn: wrapped onto lines ("\n"), elided where a line is too wide
        self._ids: list[str] = []
        self._colours: list[QColor] = []
        self._bold_row: int | None = None
        self._notes: list[str] = []  # per row: a second, grey line beneath its label ("" for none)
        self._rows_set: tuple | None = None  # the arguments of the last set_rows
        self._label_sizes: dict = {}
        self._fitted_width: int | None = None  # the width last set for the labels, in pixels
        self.setStyle(tickLength=0)
        self.setTickFont(plot_font())
        self.setPen(plot_pen("k", width=1))
        self.setTextPen(plot_pen("k"))

    @property
    def labels(self) -> list[str]:
        """Each row's label as given (:meth:`drawn_labels`: as drawn)."""
        return list(self._labels)

    def drawn_labels(self) -> list[str]:
        """Each row's label as drawn, its lines joined by a space: the label itself unless it
        had to be cut."""
        return [text.replace("\n", " ") for text in self._drawn]

    def drawn_lines(self, row: int) -> list[str]:
        """The lines drawn for a row: its label's, then its note if it has one."""
        note = self._notes[row] if row < len(self._notes) else ""
        return self._drawn[row].split("\n") + ([note] if note else [])

    @property
    def ids(self) -> list[str]:
        return list(self._ids)

    @property
    def notes(self) -> list[str]:
        return list(self._notes)

    @property
    def bold_row(self) -> int | None:
        return self._bold_row

    def set_rows(self, labels: Sequence[str], colours: Sequence[str] | None = None,
                 max_width: float | None = None, ids: Sequence[str] | None = None,
                 notes: Sequence[str] | None = None) -> None:
        """One label per row; a label wider than ``max_width`` pixels goes on two lines, broken
        at a space (unless the rows are many: WRAPPED_ROWS_MAX_PX); notes wider than that are
        cut with an ellipsis.
        ``ids``: what each row stands for, if not its label. ``notes``: a line more per row, in
        grey beneath the label ("" for none).
        The same rows again change nothing (new ticks would make the axis redraw and the
        layout recompute its width)."""
        key = (tuple(labels), None if colours is None else tuple(colours), max_width,
               None if ids is None else tuple(ids), None if notes is None else tuple(notes))
        if key == self._rows_set:
            return
        self._rows_set = key
        self._ids = list(ids) if ids is not None else list(labels)
        self._labels = list(labels)
        notes = list(notes) if notes is not None else [""] * len(labels)
        drawn = list(labels)
        if max_width is not None:
            metrics = QFontMetricsF(self._bold_font())
            if len(labels) * 2 * metrics.height() <= WRAPPED_ROWS_MAX_PX:
                drawn = ["\n".join(wrapped_lines(text, metrics, max_width)) for text in labels]
            notes = [metrics.elidedText(text, Qt.TextElideMode.ElideRight, max_width) for text in notes]
        self._notes = notes
        self._drawn = drawn
        self._colours = [plot_text_colour(c) for c in colours] if colours is not None else []
        # pyqtgraph places and measures one line per tick (a taller text would be dropped near the
        # axis' ends); each row's lines are drawn in drawPicture.
        self.setTicks([[(float(i), text.split("\n")[0]) for i, text in enumerate(self._drawn)], []])
        self._fit_width()
        self._keep_rows_apart()

    def _keep_rows_apart(self) -> None:
        """Ask for the height at which no row's lines run into the next row's: rows are evenly
        spaced, so two neighbours need half their lines each, and the first and last rows half
        theirs inside the plot; a plot may show up to a row more than its rows at its ends
        (room for a label). (The plot, its canvas and the page grow with it; a page with less
        room scrolls.)"""
        lines = [len(self.drawn_lines(row)) for row in range(len(self._drawn))]
        needs = [(above + below) / 2 for above, below in zip(lines, lines[1:], strict=False)] + lines[:1] + lines[-1:]
        line_px = QFontMetricsF(self._bold_font()).height()
        least = math.ceil(max(needs, default=0) * line_px * (len(lines) + 1)) if lines else 0
        if self.minimumHeight() != least:
            self.setMinimumHeight(least)

    def forget_width(self) -> None:
        """Let the next rows set the width anew, narrower by any amount (the panel was resized)."""
        self._fitted_width = None
        self._rows_set = None

    def set_bold_row(self, row: int | None) -> None:
        if row != self._bold_row:
            self._bold_row = row
            self.picture = None
            self.update()

    def _bold_font(self) -> QFont:
        font = QFont(self.style["tickFont"] or plot_font())
        font.setBold(True)
        return font

    def _fit_width(self) -> None:
        # A fixed width measured in bold, so selecting a row neither clips its label nor
        # shifts the plots sideways. It grows at once but shrinks only by a whole step: a new
        # width lays the plots out again and redraws their axes, and texts that change on
        # every frame (the memory status column) would otherwise do that on every frame.
        metrics = QFontMetricsF(self._bold_font())
        lines = [line for text in self._drawn for line in text.split("\n")] + self._notes
        widest = max((metrics.horizontalAdvance(line) for line in lines), default=0.0)
        offset = self.style["tickTextOffset"][0]
        needed = math.ceil(widest) + offset + ROW_LABEL_SLACK_PX
        current = self._fitted_width
        if current is None or needed > current or needed <= current - ROW_WIDTH_STEP_PX:
            self._fitted_width = needed
            self.setWidth(needed)

    def generateDrawSpecs(self, p):
        if lean_specs_apply(self):
            return lean_draw_specs(self, _MeasuringPainter(p, self._label_sizes), lambda pen: pen)
        return self.reference_draw_specs(p)

    def reference_draw_specs(self, p):
        """pyqtgraph's own layout of the rows' ticks and labels (label sizes from the cache):
        what :func:`lean_draw_specs` is held equal to."""
        return measured_draw_specs(self._label_sizes, p, super().generateDrawSpecs)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])
        view = self.linkedView()
        normal = QFont(self.style["tickFont"] or plot_font())
        bold = QFont(normal)
        bold.setBold(True)
        line_px = {False: QFontMetricsF(normal).height(), True: QFontMetricsF(bold).height()}
        default_pen = self.textPen()
        # From this axis to the view's coordinates, where row i is at y = i (once, not per label).
        to_view = None
        if view is not None:
            view.updateMatrix()  # as mapSceneToView does first
            to_view, mapped = self.itemTransform(view.childGroup)
            if not mapped:
                to_view = None
        if self.orientation == "left":  # right-aligned: grow leftwards for bold text
            grow = (-ROW_LABEL_SLACK_PX * 4 - self.width(), 0, 0, 0)
        else:
            grow = (0, 0, ROW_LABEL_SLACK_PX * 4 + self.width(), 0)
        # Fonts and pens are set only when they change, and a colour's pen is made once: the
        # drawing copies each one it is given (forty rows, every time a status changes).
        pens: dict[int, QPen] = {}  # by colour (its RGBA)
        note_pen = None
        font_set = pen_set = None
        for rect, flags, text in textSpecs:
            row = None
            if to_view is not None:
                row = round(to_view.map(rect.center()).y())
            is_bold = row is not None and row == self._bold_row
            font = bold if is_bold else normal
            if font is not font_set:
                p.setFont(font)
                font_set = font
            if row is not None and 0 <= row < len(self._colours):
                colour = self._colours[row]
                pen = pens.get(colour.rgba())
                if pen is None:
                    pen = pens[colour.rgba()] = QPen(colour)
            else:
                pen = default_pen
            if pen is not pen_set:
                p.setPen(pen)
                pen_set = pen
            note = self._notes[row] if row is not None and 0 <= row < len(self._notes) else ""
            # The label's lines and its note, one under another, centred on the row.
            lines = (self._drawn[row] if row is not None and 0 <= row < len(self._drawn) else text).split("\n")
            height = line_px[is_bold]
            top = rect.center().y() - height * (len(lines) + bool(note)) / 2
            rect = QRectF(rect.left() + grow[0], top, rect.width() - grow[0] + grow[2], height)
            flags = int(flags)
            for line in lines:
                p.drawText(rect, flags, line)
                rect.translate(0, height)
            if note:
                p.setFont(normal)
                font_set = normal
                if note_pen is None:
                    note_pen = QPen(plot_text_colour(REFERENCE_NOTE_COLOUR))
                p.setPen(note_pen)
                pen_set = note_pen
                p.drawText(rect, flags, note)


MANTISSA_TIERS = ((1,), (2, 5), (3, 4, 6, 7, 8, 9))  # which ticks of a decade are labelled first
FINE_MANTISSAS = (1.2, 1.4, 1.5, 1.6, 1.8, 2.5, 3.5, 4.5)  # for a range too short for whole mantissas


def log_ticks(low: float, high: float) -> list[list[float]]:
    """The ticks of a log axis between log10 values ``low`` and ``high``, by tier: the decades,
    then 2 and 5, then the other whole mantissas (and finer ones if the range holds too few)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [[] for _ in MANTISSA_TIERS]
    decades = range(math.floor(low), math.ceil(high) + 1)
    tiers = [[k + math.log10(m) for k in decades for m in mantissas if low <= k + math.log10(m) <= high]
             for mantissas in MANTISSA_TIERS]
    if sum(len(tier) for tier in tiers) < 2:  # a range inside a decade: ticks between the whole mantissas
        tiers[2] += [k + math.log10(m) for k in decades for m in FINE_MANTISSAS if low <= k + math.log10(m) <= high]
    return tiers


def labelled_log_ticks(tiers: Sequence[Sequence[float]], px_per_decade: float, extent) -> set[float]:
    """The ticks (log10 values) to label so that no two labels run together on screen:
    ``extent(value)`` is a label's length along the axis in pixels.

    Every decade if they fit, else every 2nd, 3rd … decade (the multiples of that step); then,
    when every decade is labelled, the 2s and 5s, then the other mantissas, each tick whose
    label keeps clear of those already labelled. Without a decade in view the 2s and 5s (or the
    others) are labelled as far as they fit, so a short axis still has numbers."""

    def clear_of(value: float, chosen: list[float]) -> bool:
        """Whether ``value``'s label keeps clear of its neighbours among ``chosen`` (sorted): labels
        that keep clear of each other and of a neighbour keep clear of those beyond it too."""
        at = bisect.bisect_left(chosen, value)
        return all(abs(value - other) * px_per_decade >= (extent(value) + extent(other)) / 2 + TICK_LABEL_GAP_PX
                   for other in chosen[max(at - 1, 0):at + 1])

    def apart(values: list[float]) -> bool:
        return all(clear_of(b, [a]) for a, b in zip(values, values[1:], strict=False))

    decades = sorted(tiers[0])
    step = 1
    while step < len(decades) and not apart([d for d in decades if round(d) % step == 0]):
        step += 1
    chosen = [d for d in decades if round(d) % step == 0]
    if step > 1:
        return set(chosen)
    for tier in tiers[1:]:
        for value in sorted(tier):
            if clear_of(value, chosen):
                bisect.insort(chosen, value)
    return set(chosen)


class _LogLabels:
    """Tick labels of an axis over log10 values: only those that fit are written (measured in
    the tick font), thinned by :func:`labelled_log_ticks`. The ticks and grid lines all stay."""

    _labelled: set[float] = set()

    def log_tick_levels(self, low: float, high: float, size: float) -> list[tuple[float, list[float]]]:
        low, high = sorted((low, high))
        tiers = log_ticks(low, high)
        metrics = QFontMetricsF(self.style["tickFont"] or self.font())
        horizontal = self.orientation in ("top", "bottom")

        extents: dict[float, float] = {}  # each label is measured once, not at every comparison

        def extent(value: float) -> float:
            if value not in extents:
                extents[value] = metrics.horizontalAdvance(self.label_text(value)) if horizontal else metrics.height()
            return extents[value]

        self._labelled = {round(v, 9) for v in labelled_log_ticks(tiers, size / max(high - low, 1e-9), extent)}
        return [(1.0, tiers[0]), (0.5, tiers[1]), (0.1, tiers[2])]

    def label_text(self, value: float) -> str:
        raise NotImplementedError

    def log_tick_strings(self, values) -> list[str | None]:
        # None, not "": pyqtgraph would count an empty label's size and stop drawing the level
        return [self.label_text(v) if round(v, 9) in self._labelled else None for v in values]


class LogValueAxis(_LogLabels, GridAxis):
    """An axis for bars (or points) drawn at log10(value): ticks at each whole mantissa,
    labelled with the value itself (0.1, 1, 10, 100, 1000, 10k, 1M) where the labels fit."""

    def __init__(self, orientation: str = "bottom") -> None:
        super().__init__(orientation)
        # Labels are thinned by measure here; pyqtgraph's own crowding limit would drop whole levels.
        self.setStyle(maxTextLevel=2, textFillLimits=[(0, 1.0)])

    def tickValues(self, minVal, maxVal, size):
        return self.log_tick_levels(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):
        return self.log_tick_strings(values)

    def label_text(self, value: float) -> str:
        return log_tick_text(value)


class LogAxis(_LogLabels, GridAxis):
    """The axis of a true log plot (pyqtgraph's log mode), labelled with plain numbers where
    the labels fit: every decade if there is room, then 2 and 5, then the rest."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)  # keep the unit as labelled (no 'kTFLOP/s')
        self._linear_style = {key: self.style[key] for key in ("maxTextLevel", "textFillLimits")}

    def setLogMode(self, *args, **kwargs) -> None:
        super().setLogMode(*args, **kwargs)
        # In log mode the labels are thinned by measure; pyqtgraph's crowding limit would drop whole levels.
        self.setStyle(**({"maxTextLevel": 2, "textFillLimits": [(0, 1.0)]} if self.logMode else self._linear_style))

    def tickValues(self, minVal, maxVal, size):
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        return self.log_tick_levels(minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        return self.log_tick_strings(values)

    def label_text(self, value: float) -> str:
        return tick_text(10.0 ** float(value) * self.scale)


def log_axes() -> dict[str, LogAxis]:
    left = LogAxis("left")
    # Its labels' room only grows: given back whenever the widest label narrowed (e.g. "100k"
    # to "50"), the plot jumped sideways and was laid out and its axes drawn again, at many
    # changes of a drag; it keeps the widest room it has needed instead.
    left.setStyle(autoReduceTextSpace=False)
    return {"left": left, "bottom": LogAxis("bottom")}
