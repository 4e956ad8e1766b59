"""Horizontal bar charts with one row per accelerator: the pieces the memory, latency and
energy panels share.

Rows run top to bottom in the frame's accelerator order (row i at y = i on an inverted y
axis). Values spanning orders of magnitude are drawn as log10(value) bars from a common base
on a :class:`LogValueAxis`, because ``BarGraphItem`` has no log mode. ``BarGraphItem`` has no
tooltips or click signal either, so :class:`RowPicker` maps the scene's mouse moves and clicks
to the row under the cursor.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen, QStaticText
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from accelscope.engine.core.units import log_tick_text

from ..look import theme
from ..look.style import (
    PLOT_FONT_POINTS,
    html_colour,
    plot_brush,
    plot_colour,
    plot_font,
    plot_pen,
    plot_text_colour,
    style_plot,
)
from .base import WrappedLabel

BAR_HEIGHT = 0.7  # of a row
OUTLINE_WIDTH = 1.5
SELECTED_OUTLINE = "#000000"
SELECTED_OUTLINE_WIDTH = 3.5
SELECTION_BAND = (255, 196, 0, 55)  # light amber behind the selected row
MAX_TEXT_SHARE = 0.6  # of a plot's width, at most, for the value written beside a bar
TEXT_GAP_PX = 3.0  # between a bar and its text (which has a margin of its own)
FALLBACK_VIEW_PX = 300.0  # before the first layout
VALUE_FONT_POINTS = PLOT_FONT_POINTS
NO_FIT_PATTERN = Qt.BrushStyle.BDiagPattern  # hatching for scenarios that do not fit
NO_FIT_PATTERN_LIGHT = Qt.BrushStyle.FDiagPattern  # the same, on a lighter second bar of a row
RIGHT_END_STEP = 0.05  # decades: the right end of a log bar axis moves in steps of this
ROW_LABEL_SLACK_PX = 8  # room beside a row label so the bold (selected) one is not clipped
# A row label wider than this is cut with an ellipsis (hover shows it whole): long accelerator
# names would otherwise narrow the plots until the values beside the bars no longer fit.
ROW_LABEL_MAX_PX = 110
ROW_WIDTH_STEP_PX = 48  # a row-label axis narrows only when it would lose this much
# The pinned scenario A behind each bar: a faint grey bar to A's value, ended by a tick that
# shows on any bar colour (black, ringed in white), a little taller than the bar.
REFERENCE_FILL = (0, 0, 0, 38)
REFERENCE_TICK_PX = 4.0
REFERENCE_TICK_OVERHANG = 1.2  # of the bar's height
REFERENCE_Z, REFERENCE_TICK_Z = -1.0, 4.0  # the faint bar beneath the bars, the tick over them
REFERENCE_NOTE_COLOUR = "#808080"  # A's texts (e.g. its fit status)


# Brushes and pens are made once per theme, colour and state and shared by every bar that uses
# them (nothing modifies them), so a new frame makes no Qt objects and an unchanged style can be
# told by identity. Colours are given as on a white canvas (see gui.theme).


def hatched(colour: str) -> QBrush:
    return _hatched(theme.current(), colour)


def hatched_light(colour: str, alpha: int) -> QBrush:
    """The hatching of a lighter second bar of a row: the other way, at least 120 alpha."""
    return _hatched_light(theme.current(), colour, alpha)


def solid(colour: str, alpha: int = 255) -> QBrush:
    return _solid(theme.current(), colour, alpha)


def outline(colour: str, selected: bool) -> QPen:
    return _outline(theme.current(), colour, selected)


@functools.cache
def drawn_solid(colour: str) -> QBrush:
    """A solid brush of a colour already in the theme (e.g. computed from themed colours)."""
    return QBrush(QColor(colour))


@functools.cache
def _hatched(plot_theme: theme.PlotTheme, colour: str) -> QBrush:
    return QBrush(plot_theme.colour(colour), NO_FIT_PATTERN)


@functools.cache
def _hatched_light(plot_theme: theme.PlotTheme, colour: str, alpha: int) -> QBrush:
    faded = plot_theme.colour(colour)
    faded.setAlpha(max(alpha, 120))
    return QBrush(faded, NO_FIT_PATTERN_LIGHT)


@functools.cache
def _solid(plot_theme: theme.PlotTheme, colour: str, alpha: int) -> QBrush:
    c = plot_theme.colour(colour)
    c.setAlpha(alpha)
    return QBrush(c)


@functools.cache
def _outline(plot_theme: theme.PlotTheme, colour: str, selected: bool) -> QPen:
    if selected:
        return plot_theme.pen(SELECTED_OUTLINE, width=SELECTED_OUTLINE_WIDTH)
    return plot_theme.pen(colour, width=OUTLINE_WIDTH)


def _same_objects(old: Sequence | None, new: Sequence | None) -> bool:
    if old is None or new is None:
        return old is new
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


def _same_array(old: object, new: np.ndarray) -> bool:
    return isinstance(old, np.ndarray) and np.array_equal(old, new, equal_nan=True)


def set_bars(item: pg.BarGraphItem, x0: np.ndarray, width: np.ndarray, y: np.ndarray, *,
             height: float | np.ndarray = BAR_HEIGHT, brushes: Sequence[QBrush] | None = None,
             pens: Sequence[QPen] | None = None) -> None:
    """Update a bar item in place, passing only what changed (every change makes the item
    redraw its picture), and nothing at all when nothing did. ``height``: one for every bar,
    or one per bar. Empty rows pass no per-bar pens or brushes, which ``BarGraphItem`` cannot
    take as empty lists."""
    new: dict[str, object] = {"x0": np.asarray(x0, float), "width": np.asarray(width, float),
                              "y": np.asarray(y, float)}
    opts: dict[str, object] = {key: value for key, value in new.items() if not _same_array(item.opts.get(key), value)}
    if isinstance(height, np.ndarray):
        if not _same_array(item.opts.get("height"), height):
            opts["height"] = height
    elif isinstance(item.opts.get("height"), np.ndarray) or item.opts.get("height") != height:
        opts["height"] = height
    rows = len(new["x0"])  # type: ignore[arg-type]
    for key, styles in (("brushes", brushes), ("pens", pens)):
        if styles is None:
            continue
        value = list(styles) if rows else None
        if not _same_objects(item.opts.get(key), value):
            opts[key] = value
    if opts:
        item.setOpts(**opts)


def set_pens(item: pg.BarGraphItem, pens: Sequence[QPen]) -> None:
    """Give each bar its pen (the bars are there), unless it has it already."""
    if not _same_objects(item.opts.get("pens"), list(pens)):
        item.setOpts(pens=list(pens))


def bar_ends(item: pg.BarGraphItem) -> np.ndarray:
    """Right ends of the drawn bars, in view coordinates."""
    return np.asarray(item.opts["x0"], float) + np.asarray(item.opts["width"], float)


def bar_widths(item: pg.BarGraphItem) -> np.ndarray:
    return np.asarray(item.opts["width"], float)


# ---- axes ----------------------------------------------------------------------------------


GRID_Z = -200.0  # below pyqtgraph's view box (z = -100), so the data is drawn over the grid


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


class _MeasuringPainter:
    """Stands in for the painter while pyqtgraph lays out an axis' ticks: it asks the painter
    only for the font to use and the size of each label, and sizes come from a cache. Laying
    out the text of each label again (QPainter.boundingRect) was most of the cost of an axis
    whose range changed, which a bar plot's does on most frames (its texts need room)."""

    def __init__(self, painter, sizes: dict) -> None:
        self._painter = painter
        self._sizes = sizes

    def setFont(self, font: QFont) -> None:
        self._painter.setFont(font)

    def boundingRect(self, rect, flags, text: str):
        key = (self._painter.font().key(), rect.x(), rect.y(), rect.width(), rect.height(), int(flags), text)
        if key not in self._sizes:
            if len(self._sizes) >= MEASURED_LABELS:
                self._sizes.clear()
            self._sizes[key] = self._painter.boundingRect(rect, flags, text)
        return QRectF(self._sizes[key])  # a copy: pyqtgraph changes the one it gets


MEASURED_LABELS = 4000  # label sizes an axis remembers, at most


def measured_draw_specs(sizes: dict, painter, generate):
    """``generate(painter)`` (pyqtgraph's generateDrawSpecs) with label sizes from ``sizes``."""
    return generate(_MeasuringPainter(painter, sizes))


class GridAxis(pg.AxisItem):
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


class RowAxis(pg.AxisItem):
    """An axis naming one row per tick: the accelerators on the left, or a status text per
    row on the right. Each row can have its own colour; the selected row is bold."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self._labels: list[str] = []
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
        return list(self._labels)

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
        """One label per row; labels wider than ``max_width`` pixels are cut with an ellipsis
        (hover shows them whole). ``ids``: what each row stands for, if not its label.
        ``notes``: a second line per row, in grey beneath the label ("" for none).
        The same rows again change nothing (new ticks would make the axis redraw and the
        layout recompute its width)."""
        key = (tuple(labels), None if colours is None else tuple(colours), max_width,
               None if ids is None else tuple(ids), None if notes is None else tuple(notes))
        if key == self._rows_set:
            return
        self._rows_set = key
        self._ids = list(ids) if ids is not None else list(labels)
        notes = list(notes) if notes is not None else [""] * len(labels)
        if max_width is not None:
            metrics = QFontMetricsF(self._bold_font())
            labels = [metrics.elidedText(text, Qt.TextElideMode.ElideRight, max_width) for text in labels]
            notes = [metrics.elidedText(text, Qt.TextElideMode.ElideRight, max_width) for text in notes]
        self._notes = notes
        self._labels = list(labels)
        self._colours = [plot_text_colour(c) for c in colours] if colours is not None else []
        self.setTicks([[(float(i), text) for i, text in enumerate(self._labels)], []])
        self._fit_width()

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
        widest = max((metrics.horizontalAdvance(text) for text in self._labels + self._notes), default=0.0)
        offset = self.style["tickTextOffset"][0]
        needed = math.ceil(widest) + offset + ROW_LABEL_SLACK_PX
        current = self._fitted_width
        if current is None or needed > current or needed <= current - ROW_WIDTH_STEP_PX:
            self._fitted_width = needed
            self.setWidth(needed)

    def generateDrawSpecs(self, p):
        return measured_draw_specs(self._label_sizes, p, super().generateDrawSpecs)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])
        view = self.linkedView()
        normal = QFont(self.style["tickFont"] or plot_font())
        bold = QFont(normal)
        bold.setBold(True)
        default_pen = self.textPen()
        for rect, flags, text in textSpecs:
            row = None
            if view is not None:
                row = round(view.mapSceneToView(self.mapToScene(rect.center())).y())
            p.setFont(bold if row is not None and row == self._bold_row else normal)
            if row is not None and 0 <= row < len(self._colours):
                p.setPen(QPen(self._colours[row]))
            else:
                p.setPen(default_pen)
            note = self._notes[row] if row is not None and 0 <= row < len(self._notes) else ""
            if self.orientation == "left":  # right-aligned: grow leftwards for bold text
                grow = (-ROW_LABEL_SLACK_PX * 4 - self.width(), 0, 0, 0)
            else:
                grow = (0, 0, ROW_LABEL_SLACK_PX * 4 + self.width(), 0)
            rect = rect.adjusted(*grow)
            if note:  # the label and its note as two lines centred on the row
                half = rect.height() / 2
                p.drawText(rect.translated(0, -half), int(flags), text)
                p.setFont(normal)
                p.setPen(QPen(plot_text_colour(REFERENCE_NOTE_COLOUR)))
                p.drawText(rect.translated(0, half), int(flags), note)
            else:
                p.drawText(rect, int(flags), text)


class LogValueAxis(GridAxis):
    """A bottom axis for bars drawn at log10(value): ticks at 1, 2, 5 × 10^k labelled with
    the value itself (0.1, 1, 10, 100, 1000, 10k, 1M)."""

    def __init__(self, orientation: str = "bottom") -> None:
        super().__init__(orientation)
        self.setStyle(maxTextLevel=1)

    def tickValues(self, minVal, maxVal, size):
        if not (math.isfinite(minVal) and math.isfinite(maxVal)) or maxVal <= minVal:
            return []
        low, high = math.floor(minVal), math.ceil(maxVal)
        decades = [float(k) for k in range(low, high + 1) if minVal <= k <= maxVal]
        twos_fives = [k + math.log10(m) for k in range(low, high) for m in (2, 5)
                      if minVal <= k + math.log10(m) <= maxVal]
        others = [k + math.log10(m) for k in range(low, high) for m in (3, 4, 6, 7, 8, 9)
                  if minVal <= k + math.log10(m) <= maxVal]
        return [(1.0, decades), (0.5, twos_fives), (0.1, others)]

    def tickStrings(self, values, scale, spacing):
        if spacing == 0.1:
            return ["" for _ in values]
        return [log_tick_text(v) for v in values]


def log_base(values: np.ndarray) -> tuple[float, float]:
    """Base and top (log10) of a log bar axis: the base is a whole decade at least 0.3 of a
    decade below the smallest value, so every bar shows; the top is the largest value, at
    least a decade above the base."""
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size == 0:
        return 0.0, 1.0
    lowest, highest = math.log10(float(positive.min())), math.log10(float(positive.max()))
    base = float(math.floor(lowest - 0.3))
    return base, max(highest, base + 1.0)


def right_end_for_texts(base: float, ends: np.ndarray, text_px: np.ndarray, view_px: float) -> float:
    """The right end of the axis that leaves each row room for its text (``text_px`` wide,
    gap included) beside its bar ending at ``ends``: (end_i − base)/(right − base)·W + t_i ≤ W
    for every row. Texts may take at most 60% of the plot."""
    room = np.maximum(view_px - np.minimum(text_px, MAX_TEXT_SHARE * view_px), 1.0)
    spans = (ends - base) * view_px / room
    return base + float(max(np.max(spans, initial=0.0), 1.0))


def log_bar_widths(values: np.ndarray, base: float) -> np.ndarray:
    """Length of each bar from ``base`` to log10(value); zero where there is no value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log10(values)
    return np.where(np.isfinite(logs) & (values > 0), np.maximum(logs - base, 0.0), 0.0)


# ---- plots ---------------------------------------------------------------------------------


def row_plot(layout: pg.GraphicsLayout, row: int, col: int, *, title: str | None, x_label: str,
             x_unit: str | None, log_x: bool, row_labels: bool, status_axis: bool = False) -> pg.PlotItem:
    """A plot with one row per accelerator, y inverted so the first is at the top; fixed
    ranges (set by the panel), no mouse panning or zooming, no context menu."""
    axes: dict[str, pg.AxisItem] = {"left": RowAxis("left")}
    axes["bottom"] = LogValueAxis("bottom") if log_x else GridAxis("bottom")
    if status_axis:
        axes["right"] = RowAxis("right")
    plot = layout.addPlot(row=row, col=col, axisItems=axes)
    style_plot(plot, title=title, x_label=x_label, x_unit=x_unit, y_label="", y_unit=None)
    plot.getAxis("bottom").enableAutoSIPrefix(False)
    left = plot.getAxis("left")
    left.showLabel(False)
    left.setGrid(False)  # rows need no horizontal rules; the bars line up with their labels
    if not row_labels:
        left.setStyle(showValues=False)
        left.setWidth(1)
    if status_axis:
        plot.showAxis("right")
        plot.getAxis("right").showLabel(False)
        plot.getAxis("right").setGrid(False)
    plot.invertY(True)
    plot.setMouseEnabled(x=False, y=False)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.vb.disableAutoRange()
    return plot


def set_row_range(plot: pg.PlotItem, rows: int, head_room: float = 0.0) -> None:
    """Show rows 0..rows−1, with ``head_room`` rows of free space above the first."""
    set_range(plot, 1, -0.5 - head_room, max(rows, 1) - 0.5)


def set_range(plot: pg.PlotItem, axis: int, low: float, high: float) -> None:
    """Set one axis' range (0: x, 1: y), without padding, if it is not already that: setting
    a range, even the same, makes the view and its axes redo their work."""
    if plot.vb.viewRange()[axis] != [low, high]:
        if axis == 0:
            plot.setXRange(low, high, padding=0.0)
        else:
            plot.setYRange(low, high, padding=0.0)


def subtitle_label(html: str) -> QLabel:
    label = WrappedLabel(html)
    label.setTextFormat(Qt.TextFormat.RichText)
    font = label.font()
    font.setPointSize(PLOT_FONT_POINTS)
    label.setFont(font)
    label.setContentsMargins(8, 4, 8, 2)
    return label


def swatch(colour: str, text: str, *, hatch: bool = False, glyph: str | None = None) -> str:
    """A legend entry as rich text: a coloured block (or ``glyph``) in the current plot theme,
    and its meaning."""
    glyph = glyph or ("▨" if hatch else "■")
    return (f'<span style="white-space:nowrap"><span style="color:{html_colour(colour)}; '
            f'font-size:{PLOT_FONT_POINTS + 5}pt">{glyph}</span>&nbsp;{text}</span>')



def reference_bars_note() -> str:
    """The legend of the pinned scenario's ghost bars (in the current plot theme)."""
    tick = "light tick" if theme.current().dark else "black tick"
    return ("<b>ghost: A (pinned)</b> — "
            + swatch("#C4C4C4", "faint grey bar to A's value")
            + " &nbsp; "
            + swatch("#000000", f"{tick}: where A's bar ends", glyph="┃")
            + " &nbsp; (hover a row for A's values)")


class SelectionBand:
    """A light band behind the selected row of a plot: one bar wider than any view range of
    the panels (percent, or decades on a log axis)."""

    HALF_SPAN = 1e4

    def __init__(self, plot: pg.PlotItem) -> None:
        self.item = pg.BarGraphItem(x0=[-self.HALF_SPAN], width=[2 * self.HALF_SPAN], y=[0.0], height=1.0,
                                    brush=plot_brush(SELECTION_BAND), pen=pg.mkPen(None))
        self.item.setZValue(-100)
        self.item.setVisible(False)
        plot.addItem(self.item, ignoreBounds=True)
        self.row: int | None = None

    def show_row(self, row: int | None) -> None:
        if row == self.row:
            return
        self.row = row
        if row is None:
            self.item.setVisible(False)
            return
        self.item.setOpts(y=[float(row)])
        self.item.setVisible(True)


class _Texts(pg.GraphicsObject):
    """The texts of a :class:`TextPool`, drawn by one item: each at a point of the plot (view
    coordinates), in screen pixels beside it (a view's scale does not stretch them), placed by
    its anchor as a ``TextItem`` would be (its box, margins included, has the point at
    ``anchor`` of its width and height)."""

    MARGIN_PX = 4.0  # a TextItem's document margin, so the texts sit where TextItems did

    def __init__(self, font: QFont, anchor: tuple[float, float]) -> None:
        super().__init__()
        self.font = font
        self.anchor = anchor
        self.metrics = QFontMetricsF(font)
        self.texts: list[str] = []
        self.colours: list[QColor] = []
        self.places = np.zeros((0, 2))
        self._static: dict[str, QStaticText] = {}
        self._rect: QRectF | None = None

    def set(self, texts: list[str], colours: list[QColor], places: np.ndarray) -> None:
        self.prepareGeometryChange()
        self.texts, self.colours, self.places = texts, colours, places
        self._rect = None
        self.update()

    def width_px(self, text: str) -> float:
        return self.metrics.horizontalAdvance(text) + 2 * self.MARGIN_PX

    def boxes(self) -> list[QRectF]:
        """Each text's box in scene coordinates (pixels), margins included; empty where none."""
        to_scene = self.sceneTransform()
        height = self.metrics.height() + 2 * self.MARGIN_PX
        boxes = []
        for text, (x, y) in zip(self.texts, self.places, strict=True):
            if not text:
                boxes.append(QRectF())
                continue
            point = to_scene.map(QPointF(x, y))
            width = self.width_px(text)
            boxes.append(QRectF(point.x() - self.anchor[0] * width, point.y() - self.anchor[1] * height, width, height))
        return boxes

    def boundingRect(self) -> QRectF:
        if self._rect is None:
            united = QRectF()
            for box in self.boxes():
                if not box.isEmpty():
                    united = united.united(box)
            from_scene, invertible = self.sceneTransform().inverted()
            self._rect = from_scene.mapRect(united) if invertible and not united.isEmpty() else QRectF()
        return self._rect

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()
        self._rect = None  # the texts keep their size in pixels

    def paint(self, painter, *args) -> None:
        from_scene, invertible = self.sceneTransform().inverted()
        if not invertible:
            return
        # Draw in scene pixels: the view's scale drops out, an export's scale stays.
        painter.setTransform(from_scene * painter.transform())
        painter.setFont(self.font)
        painter.setRenderHint(painter.RenderHint.TextAntialiasing, True)
        for text, colour, box in zip(self.texts, self.colours, self.boxes(), strict=True):
            if not text:
                continue
            static = self._static.get(text)
            if static is None:
                if len(self._static) >= TextPool.MEASURED_TEXTS:
                    self._static.clear()
                static = self._static[text] = QStaticText(text)
                static.setTextFormat(Qt.TextFormat.PlainText)
            painter.setPen(colour)
            painter.drawStaticText(QPointF(box.x() + self.MARGIN_PX, box.y() + self.MARGIN_PX), static)


class TextPool:
    """Text labels in a plot, one per row, drawn by one item (:class:`_Texts`).

    One TextItem per label made every label cost pyqtgraph's per-item work at each paint
    (its transform is redone before every paint, its text laid out again on every change);
    the latency panel has sixty of them. Here a new frame only stores the texts and places
    that changed, and the paint draws them all with cached layouts (QStaticText)."""

    MEASURED_TEXTS = 2000  # widths and layouts remembered, at most

    def __init__(self, plot: pg.PlotItem, anchor: tuple[float, float] = (0.0, 0.5),
                 points: int = VALUE_FONT_POINTS) -> None:
        self.plot = plot
        self.anchor = anchor
        self.font = plot_font()
        self.font.setPointSize(points)
        self.item = _Texts(self.font, anchor)
        # The texts do not count in the view's bounds (the row plots do not autorange).
        plot.addItem(self.item, ignoreBounds=True)
        self._texts: list[str] = []  # per row: its text, "" for none
        self._colours: list[QColor] = []
        self._places = np.zeros((0, 2))
        self._widths: dict[str, float] = {}  # pixels, by text (one font)

    def set(self, texts: Sequence[str], xs: Sequence[float], ys: Sequence[float],
            colours: Sequence[str | QColor] | str = "k") -> None:
        self.set_texts(texts, colours)
        self.place(xs, ys)

    def set_texts(self, texts: Sequence[str], colours: Sequence[str | QColor] | str = "k") -> None:
        """The text of each row ("" for none); :meth:`place` puts them. ``colours``: one for all
        or one per row, each as on a white canvas, or a QColor already chosen for the theme."""
        texts = list(texts)
        colours = [_colour(colours if isinstance(colours, str) else colours[i]) for i in range(len(texts))]
        if texts == self._texts and colours == self._colours:
            return
        self._texts, self._colours = texts, colours
        if len(self._places) != len(texts):
            places = np.full((len(texts), 2), np.nan)
            shared = min(len(texts), len(self._places))
            places[:shared] = self._places[:shared]
            self._places = places
        self.item.set(self._texts, self._colours, self._places)

    def place(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        """Put each row's text at (x, y), in view coordinates."""
        n = len(self._texts)
        places = np.column_stack([np.asarray(xs, float)[:n], np.asarray(ys, float)[:n]]) if n else np.zeros((0, 2))
        if np.array_equal(places, self._places, equal_nan=True):
            return
        self._places = places
        self.item.set(self._texts, self._colours, self._places)

    def widths_px(self) -> np.ndarray:
        """Width of each row's text on screen, margins included (0 where none is shown)."""
        return np.array([self._width(text) if text else 0.0 for text in self._texts])

    def _width(self, text: str) -> float:
        width = self._widths.get(text)
        if width is None:
            if len(self._widths) >= self.MEASURED_TEXTS:
                self._widths.clear()
            width = self._widths[text] = self.item.width_px(text)
        return width

    def texts(self) -> list[str]:
        """The text of each row ("" where none is shown)."""
        return list(self._texts)

    def scene_boxes(self) -> list[QRectF]:
        """Each row's text box in scene coordinates (empty where none is shown)."""
        return self.item.boxes()


def _colour(colour) -> QColor:
    """A text colour in the current plot theme: a QColor is taken as it is (already chosen for
    the theme, e.g. black or white against a cell it sits on); anything else is a colour as on
    a white canvas."""
    if isinstance(colour, QColor):
        return colour
    return _named_colour(theme.current(), colour) if isinstance(colour, str) else plot_text_colour(colour)


@functools.cache
def _named_colour(plot_theme: theme.PlotTheme, colour: str) -> QColor:
    return plot_theme.text_colour(colour)


class RowPicker(QObject):
    """Hover and click over the rows of plots that share one scene.

    The row under the cursor (anywhere across its band, so even a short bar is easy to hit,
    and over its label) gets a tooltip from ``tooltip(row)``; a left click calls
    ``clicked(row)``.
    """

    def __init__(self, widget: pg.GraphicsView, plots: Sequence[pg.PlotItem], rows: Callable[[], int],
                 tooltip: Callable[[int], str], clicked: Callable[[int], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.widget = widget
        self.plots = list(plots)
        self.rows = rows
        self.tooltip = tooltip
        self.clicked = clicked
        self.hover_text = ""
        scene = widget.scene()
        scene.sigMouseMoved.connect(self.hover)
        scene.sigMouseClicked.connect(self._on_click)

    def row_at(self, scene_pos: QPointF) -> int | None:
        for plot in self.plots:
            if not plot.sceneBoundingRect().contains(scene_pos):
                continue
            y = plot.vb.mapSceneToView(scene_pos).y()
            row = round(y)
            if 0 <= row < self.rows() and abs(y - row) <= 0.5:
                return row
        return None

    def hover(self, scene_pos: QPointF) -> None:
        row = self.row_at(scene_pos)
        self.hover_text = self.tooltip(row) if row is not None else ""
        if self.hover_text:
            view_pos = self.widget.mapFromScene(scene_pos)
            QToolTip.showText(self.widget.mapToGlobal(view_pos), self.hover_text, self.widget)
        else:
            QToolTip.hideText()

    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        row = self.row_at(event.scenePos())
        if row is not None:
            self.clicked(row)


def tooltip_html(title: str, lines: Sequence[str]) -> str:
    body = "<br>".join(lines)
    return f"<p style='white-space:pre'><b>{title}</b><br>{body}</p>"


class RowCanvas(pg.GraphicsLayoutWidget):
    """The panels' plot area. ``resized`` is emitted once the plots inside have their new
    size, so texts can be refitted in pixels. (A ViewBox's own sigResized also fires while
    the scene is being torn down, when touching its items crashes.)"""

    resized = Signal()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event is not None:  # pyqtgraph calls it with None while it sets itself up
            self.resized.emit()

    def settle(self) -> None:
        """Lay the plots out now, after an axis changed width, so their sizes are current."""
        self.ci.layout.activate()


def canvas() -> RowCanvas:
    widget = RowCanvas()
    widget.ci.setContentsMargins(6, 6, 6, 6)
    return widget


def panel_layout(panel: QWidget, header: QLabel, view: pg.GraphicsLayoutWidget) -> None:
    layout = QVBoxLayout(panel)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(header)
    layout.addWidget(view, 1)


class LogBarPlot:
    """One log-scale bar plot of a row panel: one or more bar series per row (each at its own
    offset within the row), drawn from a common base, with each row's value written beside
    its bars. Scenarios that do not fit are hatched. The axis leaves room in pixels for the
    texts, and is refitted when the plot is resized."""

    def __init__(self, view: RowCanvas, col: int, *, title: str, x_label: str,
                 x_unit: str | None, row_labels: bool,
                 series: Sequence[tuple[str, float, float, int]] = (("value", 0.0, BAR_HEIGHT, 255),)) -> None:
        """``series``: (key, y offset in the row, bar height, fill alpha) per bar of a row."""
        self.plot = row_plot(view.ci, 0, col, title=title, x_label=x_label, x_unit=x_unit, log_x=True,
                             row_labels=row_labels)
        self.band = SelectionBand(self.plot)
        self.series = tuple(series)
        self.items: dict[str, pg.BarGraphItem] = {}
        for key, _, height, _ in self.series:
            item = pg.BarGraphItem(x0=[], width=[], y=[], height=height, brush=plot_brush("k"), pen=plot_pen("k"))
            self.plot.addItem(item)
            self.items[key] = item
        # The pinned scenario A: made once, hidden while nothing is pinned (then they cost no paint).
        # Opaque (the faint grey over the canvas): Qt fills translucent shapes much more slowly.
        self.reference_bars = pg.BarGraphItem(x0=[], width=[], y=[], height=BAR_HEIGHT,
                                              brush=pg.mkBrush(opaque_over(plot_colour(REFERENCE_FILL))),
                                              pen=pg.mkPen(None))
        self.reference_ticks = pg.BarGraphItem(x0=[], width=[], y=[], height=BAR_HEIGHT,
                                               brush=plot_brush("k"), pen=plot_pen("w", width=1))
        for item, z in ((self.reference_bars, REFERENCE_Z), (self.reference_ticks, REFERENCE_TICK_Z)):
            item.setZValue(z)
            item.setVisible(False)
            self.plot.addItem(item)
        self._reference: dict[str, np.ndarray] | None = None  # A's values per series and row (NaN: none)
        self._reference_logs = np.zeros(0)  # log10 of A's values, every series' rows in turn (NaN: none)
        self._reference_rows = np.zeros(0)  # their y
        self._reference_heights = np.zeros(0)  # their bars' heights
        self.texts = TextPool(self.plot, anchor=(0.0, 0.5))
        self._colours: list[str] = []
        self._fits = np.zeros(0, bool)
        self._selected_row: int | None = None
        self._base = 0.0
        self._ends = np.zeros(0)
        self._labels: list[str] = []
        view.resized.connect(self.fit_x_range)

    @property
    def row_axis(self) -> RowAxis:
        return self.plot.getAxis("left")

    def update(self, values: dict[str, np.ndarray], colours: Sequence[str], fits: np.ndarray,
               texts: Sequence[str], reference: dict[str, np.ndarray] | None = None) -> None:
        """``reference``: the pinned scenario A's values per series and row (NaN where A did
        not show the accelerator), drawn as ghosts; None when nothing is pinned."""
        self._colours = list(colours)
        self._fits = np.asarray(fits, bool)
        self._labels = list(texts)
        self._reference = reference
        n = len(self._colours)
        rows = np.arange(n, dtype=float)
        keys = [key for key, *_ in self.series]
        shown_values = [values[key] for key in keys] + ([reference[key] for key in keys] if reference else [])
        base, _ = log_base(np.concatenate(shown_values))
        ends = np.full(n, base)
        pens = self._pens()
        for key, offset, height, alpha in self.series:
            widths = log_bar_widths(values[key], base)
            set_bars(self.items[key], np.full(n, base), widths, rows + offset, height=height,
                     brushes=self._brushes(alpha), pens=pens)
            ends = np.maximum(ends, base + widths)
        self._base, self._ends = base, ends
        self._draw_reference_bars(n)
        self.fit_x_range()
        set_row_range(self.plot, n)

    def _draw_reference_bars(self, n: int) -> None:
        """A's faint bars (from the common base to A's value); its ticks are placed with the
        texts, as their width is in pixels."""
        reference = self._reference
        shown = reference is not None and n > 0
        for item in (self.reference_bars, self.reference_ticks):
            if item.isVisible() != shown:
                item.setVisible(shown)
        if not shown:
            self._reference_logs = np.zeros(0)
            return
        rows = np.arange(n, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = [np.where(reference[key] > 0, np.log10(reference[key]), np.nan) for key, *_ in self.series]
        self._reference_logs = np.concatenate(logs)
        self._reference_rows = np.concatenate([rows + offset for _key, offset, _h, _a in self.series])
        self._reference_heights = np.concatenate([np.full(n, height) for _key, _o, height, _a in self.series])
        drawn = np.isfinite(self._reference_logs)
        widths = np.where(drawn, np.maximum(np.nan_to_num(self._reference_logs) - self._base, 0.0), 0.0)
        # One height for all: a BarGraphItem takes one per item (or per bar, as an array).
        set_bars(self.reference_bars, np.full(len(widths), self._base), widths, self._reference_rows,
                 height=self._reference_heights if len(self.series) > 1 else float(self._reference_heights[0]))

    def fit_x_range(self) -> None:
        """Leave each row room, in pixels, for the value written beside its bars."""
        view_px = self.plot.vb.width() or FALLBACK_VIEW_PX
        rows = np.arange(len(self._labels), dtype=float)
        self.texts.set_texts(self._labels)
        text_px = self.texts.widths_px() + TEXT_GAP_PX
        if len(self._reference_logs):
            right, text_ends = self._fit_beside_reference(text_px, view_px)
        else:
            right, text_ends = right_end_for_texts(self._base, self._ends, text_px, view_px), self._ends
        # In steps, beyond the room needed: a drag that changes the values a little then
        # leaves the axis alone (a new range makes it lay out and draw its ticks again).
        right = self._base + math.ceil((right - self._base) / RIGHT_END_STEP - 1e-9) * RIGHT_END_STEP
        per_px = (right - self._base) / view_px
        if len(self._reference_logs):
            drawn = np.isfinite(self._reference_logs)
            tick = REFERENCE_TICK_PX * per_px
            set_bars(self.reference_ticks, np.where(drawn, np.nan_to_num(self._reference_logs) - tick / 2, self._base),
                     np.where(drawn, tick, 0.0), self._reference_rows,
                     height=self._reference_heights * REFERENCE_TICK_OVERHANG)
        self.texts.place(text_ends + TEXT_GAP_PX * per_px, rows)
        set_range(self.plot, 0, self._base, right)

    def _fit_beside_reference(self, text_px: np.ndarray, view_px: float) -> tuple[float, np.ndarray]:
        """The right end of the axis and where each row's text starts (view units, before
        the gap) while A's ghosts are drawn: beside B's bars, as without them, unless A's
        tick would fall under the text; then beyond the tick. A's bars and ticks get room too."""
        n = len(self._ends)
        reference_ends = np.where(np.isfinite(self._reference_logs), self._reference_logs, -np.inf)
        reference_ends = reference_ends.reshape(-1, n).max(axis=0)
        tick_px = np.full(n, REFERENCE_TICK_PX + 6.0)  # the tick clear of the plot's edge
        text_ends = self._ends
        right = 0.0
        for _ in range(2):  # where a text goes depends on the scale, and the scale on the texts
            right = right_end_for_texts(self._base, np.concatenate([text_ends, np.maximum(reference_ends, self._base)]),
                                        np.concatenate([text_px, tick_px]), view_px)
            per_px = (right - self._base) / view_px
            under_text = ((reference_ends + REFERENCE_TICK_PX * per_px >= self._ends)
                          & (reference_ends - REFERENCE_TICK_PX * per_px <= self._ends + text_px * per_px))
            text_ends = np.where(under_text, np.maximum(self._ends, reference_ends + REFERENCE_TICK_PX / 2 * per_px),
                                 self._ends)
        right = right_end_for_texts(self._base, np.concatenate([text_ends, np.maximum(reference_ends, self._base)]),
                                    np.concatenate([text_px, tick_px]), view_px)
        return right, text_ends

    def set_selected_row(self, row: int | None) -> None:
        self._selected_row = row
        self.band.show_row(row)
        if self._colours:
            pens = self._pens()
            for item in self.items.values():
                set_pens(item, pens)

    def values(self, key: str) -> np.ndarray:
        """The drawn values of a series (0 where there is no bar)."""
        item = self.items[key]
        widths = bar_widths(item)
        return np.where(widths > 0, 10.0 ** bar_ends(item), 0.0)

    def reference_values(self, key: str, part: str = "tick") -> np.ndarray:
        """The pinned scenario A's drawn values of a series: where its ticks are centred
        (``part="tick"``) or its faint bars end (``"bar"``); NaN where none is drawn, and
        empty when nothing is pinned."""
        n = len(self._colours)
        item = self.reference_ticks if part == "tick" else self.reference_bars
        if not item.isVisible() or n == 0:
            return np.empty(0)
        rows = slice([s[0] for s in self.series].index(key) * n, None)
        widths = bar_widths(item)[rows][:n]
        ends = bar_ends(item)[rows][:n]
        if part == "tick":
            return np.where(widths > 0, 10.0 ** (ends - widths / 2), np.nan)
        drawn = np.isfinite(self._reference_logs[rows][:n])
        return np.where(drawn, 10.0 ** ends, np.nan)

    def hatched_rows(self) -> np.ndarray:
        brushes = self.items[self.series[0][0]].opts["brushes"] or []
        return np.array([b.style() != Qt.BrushStyle.SolidPattern for b in brushes], bool)

    def _brushes(self, alpha: int) -> list[QBrush]:
        brushes = []
        for colour, fits in zip(self._colours, self._fits, strict=True):
            if fits:
                brushes.append(solid(colour, alpha))
            elif alpha < 255:  # a lighter second bar: hatched the other way
                brushes.append(hatched_light(colour, alpha))
            else:
                brushes.append(hatched(colour))
        return brushes

    def _pens(self) -> list[QPen]:
        return [outline(colour, i == self._selected_row) for i, colour in enumerate(self._colours)]
