"""A legend beside a plot whose rows select what they name."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy

from ..look import palette, theme
from ..look.style import pen, plot_colour, plot_font

SAMPLE_PX = 20.0  # a row's sample: a short line in the accelerator's pen with its marker on it
MARKER_PX = 11.0
SAMPLE_TEXT_GAP_PX = 5.0
COLUMN_GAP_PX = 14.0
EDGE_PX = 2.0  # round the rows, so the first and last are not flush with the plot's edge
# A row is one text line high plus this much leading: as much as there is room for, down to the
# last before another column is taken (a short plot on a projector).
ROW_LEADINGS_PX = (5.0, 3.0, 0.0)
# The legend takes at most this share of the plot's width: beyond it names break into lines, so
# that the plot keeps its room and a second column is never pushed off the screen. Where the
# names do not fit whole in the first share, the second is tried before a word is elided.
LEGEND_WIDTH_SHARES = (0.45, 0.55)
MIN_COLUMN_CHARACTERS = 4  # no column narrower than this many average characters


def lines_within(text: str, metrics: QFontMetricsF, width: float,
                  advance: Callable[[str], float] | None = None) -> tuple[list[str], bool]:
    """``text`` broken at spaces into as few lines as fit ``width`` pixels, each line as full as
    it can be; a word wider than ``width`` alone is elided. Returns the lines and whether any
    word was elided. ``advance`` measures a text (``metrics`` by default; a cache of it)."""
    advance = advance or metrics.horizontalAdvance
    lines: list[str] = []
    elided = False
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and advance(joined) <= width:
            lines[-1] = joined
            continue
        if advance(word) > width:
            word = metrics.elidedText(word, Qt.TextElideMode.ElideRight, width)
            elided = True
        lines.append(word)
    return lines, elided


@dataclass
class LegendRow:
    """One accelerator's row: its name as drawn (on as many lines as its column needs), where
    it is in the legend, and its colour and marker."""

    accelerator_id: str
    name: str
    symbol: str
    colour: QColor
    line_pen: QPen
    marker_pen: QPen
    marker_brush: QBrush
    lines: tuple[str, ...] = ()
    elided: bool = False
    rect: QRectF = field(default_factory=QRectF)


class AcceleratorLegend(pg.GraphicsWidget):
    """A legend beside the plot (not over the data): one row per shown accelerator, in its
    colour and class marker; clicking a row selects the accelerator; the selected row is bold.
    It draws every row itself (one item, not two per row: a switch to a tab with 38
    accelerators painted 76 items).

    It fits the room beside the plot: its rows take as many columns as the plot's height needs
    (a projector's screen is short: two dozen rows in one column made the plot taller than its
    view, and cut its axis off), and at most ``LEGEND_WIDTH_SHARES`` of the width (two columns of
    long names ran off a 1024 px screen): names that are then too wide take more lines.

    ``describe(accelerator_id)`` gives the row's (label, marker symbol)."""

    def __init__(self, layout: pg.GraphicsLayout, describe: Callable[[str], tuple[str, str]],
                 on_select: Callable[[str], None]) -> None:
        super().__init__()
        self.describe = describe
        self.on_select = on_select
        self.host = layout
        self.rows: list[LegendRow] = []
        self.shown: tuple[str, ...] = ()
        self.selected: str | None = None
        self.columns = 0
        self.leading = ROW_LEADINGS_PX[0]
        self._size = QSizeF(0.0, 0.0)
        self._font = plot_font()
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        # Widths with the bold face: selecting a row does not move the others.
        self._metrics = QFontMetricsF(self._bold)
        self._widths: dict[str, float] = {}
        self._ink = QColor(theme.current().foreground)
        self._hovered: LegendRow | None = None
        self.setAcceptHoverEvents(True)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        layout.addItem(self, row=0, col=1)
        # Keep the rows together at the top instead of spread over the plot's height.
        layout.layout.setAlignment(self, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout.geometryChanged.connect(self.fit_columns)
        # The view's shown range is the room there is (the layout grows past it when its rows do not fit).
        self.views: list[pg.GraphicsView] = list(layout.scene().views()) if layout.scene() is not None else []
        for view in self.views:
            view.sigDeviceRangeChanged.connect(lambda *_args: self.fit_columns())

    # ---- what is shown -----------------------------------------------------------------------

    def _row(self, accelerator_id: str) -> LegendRow:
        name, symbol = self.describe(accelerator_id)
        colour = palette.colour_for(accelerator_id)
        drawn = plot_colour(colour)
        return LegendRow(accelerator_id, name, symbol, drawn, pen(colour), pg.mkPen(drawn), pg.mkBrush(drawn))

    def set_rows(self, accelerators: tuple[str, ...], selected: str | None) -> None:
        """Show a row for each of ``accelerators``, in that order, ``selected`` in bold."""
        rebuilt = accelerators != self.shown
        if rebuilt:
            self.rows = [self._row(accelerator_id) for accelerator_id in accelerators]
            self.shown = accelerators
        if rebuilt or selected != self.selected:
            self.selected = selected
            self.update()
        if rebuilt:
            self.fit_columns()

    def labels(self) -> list[str]:
        return [row.name for row in self.rows]

    def is_bold(self, accelerator_id: str) -> bool:
        return accelerator_id == self.selected

    # ---- fitting the room beside the plot ----------------------------------------------------

    def _room(self) -> tuple[float, float]:
        """The width and height the legend may take beside the plot."""
        left, top, right, bottom = self.host.layout.getContentsMargins()
        bounds = [self.host.geometry(), *(view.range for view in self.views)]
        width = min(rect.width() for rect in bounds) - left - right
        height = min(rect.height() for rect in bounds) - top - bottom
        return width, height - 2 * EDGE_PX

    def _advance(self, text: str) -> float:
        """A text's width, measured once (a fit tries several column widths)."""
        width = self._widths.get(text)
        if width is None:
            width = self._widths[text] = self._metrics.horizontalAdvance(text)
        return width

    def _line_pitch(self) -> float:
        return max(self._metrics.height(), MARKER_PX)

    def _layout(self, columns: int, text_width: float, leading: float) -> tuple[list[list[tuple[list[str], bool]]], float]:
        """Each row's lines and whether they are elided, in ``columns`` columns (read down, then
        across), and the tallest column's height."""
        per_column = math.ceil(len(self.rows) / columns)
        laid: list[list[tuple[list[str], bool]]] = []
        tallest = 0.0
        for start in range(0, len(self.rows), per_column):
            column = [lines_within(row.name, self._metrics, text_width, self._advance) for row in self.rows[start:start + per_column]]
            laid.append(column)
            tallest = max(tallest, sum(self._row_height(lines, leading) for lines, _elided in column))
        return laid, tallest

    def _row_height(self, lines: list[str], leading: float) -> float:
        return self._line_pitch() + leading + (len(lines) - 1) * self._metrics.lineSpacing()

    def fit_columns(self) -> None:
        """Lay the rows out in the fewest columns that fit the height beside the plot (drawing
        them closer together first where that is enough), each column no wider than its share of
        the width allows (the first share, else the second), with no name cut; where that cannot
        be, the layout that cuts fewest names and overflows least."""
        if not self.rows:
            self._resize(QSizeF(0.0, 0.0))
            return
        width, height = self._room()
        if height <= 0 or width <= 0:
            return
        natural = max(self._advance(row.name) for row in self.rows)
        narrowest = self._metrics.averageCharWidth() * MIN_COLUMN_CHARACTERS
        chosen, best = None, None
        for columns in range(1, len(self.rows) + 1):
            for share in LEGEND_WIDTH_SHARES:
                room = (width * share - (columns - 1) * COLUMN_GAP_PX) / columns - SAMPLE_PX - SAMPLE_TEXT_GAP_PX
                text_width = max(min(natural, room), narrowest)
                for leading in ROW_LEADINGS_PX:
                    laid, tallest = self._layout(columns, text_width, leading)
                    cut = sum(elided for column in laid for _lines, elided in column)
                    overflow = max(tallest - height, 0.0)
                    if not cut and not overflow:
                        chosen = (columns, leading, laid, tallest)
                        break
                    rank = (cut, overflow, columns, share)
                    if best is None or rank < best[0]:
                        best = (rank, (columns, leading, laid, tallest))
                if chosen:
                    break
            if chosen or (width * LEGEND_WIDTH_SHARES[-1] - (columns - 1) * COLUMN_GAP_PX) / columns < narrowest:
                break  # fitted, or more columns would be too narrow for a word
        columns, leading, laid, tallest = chosen or best[1]
        widths = [SAMPLE_PX + SAMPLE_TEXT_GAP_PX + max(self._advance(line) for lines, _elided in column for line in lines)
                  for column in laid]
        left = 0.0
        rows = iter(self.rows)
        for column, width in zip(laid, widths, strict=True):
            top = EDGE_PX
            for lines, elided in column:
                row = next(rows)
                row.lines, row.elided = tuple(lines), elided
                row.rect = QRectF(left, top, width, self._row_height(lines, leading))
                top += row.rect.height()
            left += width + COLUMN_GAP_PX
        self.columns, self.leading = columns, leading
        size = QSizeF(math.ceil(left - COLUMN_GAP_PX), math.ceil(tallest + 2 * EDGE_PX))
        if size != self._size:
            self._resize(size)
        self.update()

    def _resize(self, size: QSizeF) -> None:
        self._size = size
        self.setMinimumSize(size)
        self.setMaximumSize(size)
        self.setPreferredSize(size)
        self.updateGeometry()
        for view in self.views:
            if view.centralWidget is self.host:
                # The layout may have grown past the view for the rows as they were: fit it to the view again.
                self.host.setGeometry(view.range)

    # ---- drawing and the mouse ---------------------------------------------------------------

    def paint(self, painter: QPainter, *_args) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        ascent, descent = self._metrics.ascent(), self._metrics.descent()
        pitch = self._line_pitch()
        for row in self.rows:
            if row.rect.isEmpty():
                continue
            middle = row.rect.top() + (pitch + self.leading) / 2
            painter.setPen(row.line_pen)
            painter.drawLine(QPointF(row.rect.left(), middle), QPointF(row.rect.left() + SAMPLE_PX, middle))
            painter.save()
            painter.translate(row.rect.left() + SAMPLE_PX / 2, middle)
            drawSymbol(painter, row.symbol, MARKER_PX, row.marker_pen, row.marker_brush)
            painter.restore()
            painter.setPen(self._ink)
            painter.setFont(self._bold if row.accelerator_id == self.selected else self._font)
            baseline = middle - (ascent + descent) / 2 + ascent
            x = row.rect.left() + SAMPLE_PX + SAMPLE_TEXT_GAP_PX
            for k, line in enumerate(row.lines):
                painter.drawText(QPointF(x, baseline + k * self._metrics.lineSpacing()), line)

    def row_at(self, position: QPointF) -> LegendRow | None:
        """The row under ``position`` (the legend's own coordinates)."""
        return next((row for row in self.rows if row.rect.contains(position)), None)

    def mouseClickEvent(self, event) -> None:
        row = self.row_at(event.pos())
        if event.button() == Qt.MouseButton.LeftButton and row is not None:
            event.accept()
            self.on_select(row.accelerator_id)

    def hoverEvent(self, event) -> None:
        """Over a row whose name had to be cut, the whole name as a tool tip."""
        row = None if event.isExit() else self.row_at(event.pos())
        if row is not self._hovered:
            self._hovered = row
            self.setToolTip(row.name if row is not None and row.elided else "")
