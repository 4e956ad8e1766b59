"""Axes for plots that span decades and for plots with one row per item.

:class:`GridAxis` lays its grid under the data in opaque colours; :class:`RowAxis` names one
row per tick (a label, an optional grey second line, the selected row in bold);
:class:`LogValueAxis` labels bars drawn at log10(value) with the value itself; :class:`LogAxis`
labels true log axes with plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen

from accelscope.engine.core.units import log_tick_text, tick_text

from ..look import theme
from ..look.style import plot_font, plot_pen, plot_text_colour

ROW_LABEL_SLACK_PX = 8  # room beside a row label so the bold (selected) one is not clipped
# A row label wider than this is cut with an ellipsis (hover shows it whole): long accelerator
# names would otherwise narrow the plots until the values beside the bars no longer fit.
ROW_LABEL_MAX_PX = 110
ROW_WIDTH_STEP_PX = 48  # a row-label axis narrows only when it would lose this much
REFERENCE_NOTE_COLOUR = "#808080"  # A's texts (e.g. its fit status)
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


class LogAxis(GridAxis):
    """Log-axis tick labels that read at a glance: plain numbers, every decade labelled, and
    minor ticks labelled at 2 and 5 only when a decade is long enough on screen (all of them
    when it is very long), so labels never run into each other."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)  # keep the unit as labelled (no 'kTFLOP/s')

    def logTickStrings(self, values, scale, spacing):
        decades = max(abs(self.range[1] - self.range[0]), 1e-6)
        length = self.size().width() if self.orientation in ("top", "bottom") else self.size().height()
        per_decade = length / decades  # pixels
        labelled = {1, 2, 3, 4, 5, 6, 7, 8, 9} if per_decade > 700 else {1, 2, 5} if per_decade > 160 else {1}
        strings = []
        for v in values:
            value = 10.0 ** float(v) * scale
            mantissa = round(value / 10.0 ** np.floor(np.log10(value) + 1e-9))
            # None, not "": pyqtgraph would count an empty label's height and drop the level
            strings.append(tick_text(value) if spacing is not None or mantissa in labelled else None)
        return strings


def log_axes() -> dict[str, LogAxis]:
    return {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
