"""Regime fitness: every accelerator of the catalog scored on the first paper's eight
operational regimes (its Fig. 8, computed), beside the paper's own grades.

Rows are all accelerators of the catalog, not only those shown in the other tabs: a score is
a fraction of the best accelerator of the catalog, so a cell reads the same whatever else is
shown (and the same as regimes.csv of ``accelscope report``), and the paper's seven graded
accelerators are always there to compare with its figure. The paper's seven come first, in
its order, then the rest in catalog order; those shown in the other tabs carry their colour
dot. The grid depends on nothing the controls set, so it is computed once per catalog.

The heatmap is painted by hand (a QWidget) rather than with plot items: its cells hold
wrapped headers, text, hatching and a second grid, and it stays crisp when exported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QLinearGradient, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QToolTip, QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.regimes import RegimeDefinitions, load_regimes
from accelscope.engine.core.units import grid_value, times_text
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.regimes import RegimeGrid, architecture_spreads

from ..look.palette import colour_for
from ..look.style import PLOT_FONT_POINTS, plot_colour, plot_text_colour
from ..plotkit.bars import SELECTION_BAND
from ..plotkit.text import subtitle_label, tooltip_html
from .analysis import AnalysisPanel

COLOUR_MAP = "cividis"  # sequential, readable by the colour-blind and in greyscale
# As on a white canvas (the theme maps them, see gui.theme).
NO_FIT_FILL = "#E6E6E6"
NO_FIT_HATCH = "#9A9A9A"
MUTED_TEXT = "#444444"
SHOWN_DOT = "#666666"
# Text on a score's colour: whichever reads on it, in any theme (the colours are the data's).
DARK_TEXT = QColor("#000000")
LIGHT_TEXT = QColor("#FFFFFF")
MARGIN_PX = 8
DOT_PX = 10  # the colour dot of an accelerator shown in the other tabs
LABEL_GAP_PX = 8
PAPER_GAP_PX = 30  # between the computed grid and the paper's
PAPER_COLUMN_PX = 40
MIN_PAPER_COLUMN_PX = 30
GROUP_GAP_PX = 8  # between the paper's seven accelerators and the rest
MAX_ROW_PX = 46
# The least the heat map asks for with few rows (a layout honours an explicit minimum size over
# the hint, so these live in the hint, which grows with the rows).
HEATMAP_MIN_WIDTH_PX = 700
HEATMAP_MIN_HEIGHT_PX = 420
MIN_ROW_PX = 16
COLOUR_BAR_PX = 16
CELL_PADDING_PX = 3  # each side of a cell's text, at the least column width
LEAST_CELL_TEXT = "0.00"  # the common width of a score


def grade_letters(grade: str) -> str:
    """"Very Good" -> "VG": the initials, short enough for a narrow cell."""
    return "".join(word[0] for word in grade.split()).upper()


# Where a regime runs but its metric is 0 the score is 0 for a reason, not from rounding: the
# cell says the reason in a word short enough for a narrow column (the legend says it in a
# phrase, the hover with the numbers).
ZERO_WORDS: dict[str, tuple[str, str]] = {
    "requests_within_itl": ("slow", "runs, but over its ITL target at every batch (hover: why)"),
    "models_resident": ("full", "runs, but no copy fits with its KV cache (hover: why)"),
}
ZERO_WORD = ("none", "runs, but its metric is 0 (hover: why)")


def zero_word(metric: str) -> tuple[str, str]:
    """(the cell's word, the legend's phrase) for a regime that runs with a metric of 0."""
    return ZERO_WORDS.get(metric, ZERO_WORD)


def score_text(score: float, fits: bool, value: float, metric: str) -> str:
    """A cell's text: "—" where the regime cannot run, a word where it runs with a metric of 0,
    "<0.01" for any other score below 0.01 (even one that underflowed to 0), else the score."""
    if not fits:
        return "—"
    if value <= 0.0:
        return zero_word(metric)[0]
    if score < 0.01:
        return "<0.01"
    return f"{score:.2f}"


@dataclass(frozen=True)
class HeatmapContent:
    """What the heatmap draws, in row order."""

    ids: tuple[str, ...]
    names: tuple[str, ...]  # each row's accelerator as the legends name it
    headers: tuple[str, ...]  # "1. Low-latency single stream"
    units: tuple[str, ...]  # "ms · lower is better"
    scores: np.ndarray  # [rows, regimes], 0..1
    fits: np.ndarray  # [rows, regimes] bool
    texts: tuple[tuple[str, ...], ...]  # [rows][regimes]
    best: np.ndarray  # [rows, regimes] bool: the best of its regime
    paper: tuple[tuple[str, ...], ...]  # [paper rows][regimes]: grade names
    paper_rows: int  # the first rows, graded by the paper
    grades: tuple[str, ...]  # the paper's grades, best first
    paper_title: str
    zero_words: tuple[tuple[str, str], ...]  # (word, meaning) of the cells that run with a metric of 0


@dataclass
class _Geometry:
    label_left: float
    label_width: float
    cells_left: float
    column_width: float
    header_top: float
    header_height: float
    rows_top: float
    row_height: float
    paper_left: float
    paper_column: float
    legend_top: float

    def row_top(self, row: int, paper_rows: int) -> float:
        gap = GROUP_GAP_PX if 0 < paper_rows <= row else 0.0
        return self.rows_top + row * self.row_height + gap

    def cell(self, row: int, column: int, paper_rows: int) -> QRectF:
        return QRectF(self.cells_left + column * self.column_width, self.row_top(row, paper_rows),
                      self.column_width, self.row_height)

    def paper_cell(self, row: int, column: int, paper_rows: int) -> QRectF:
        return QRectF(self.paper_left + column * self.paper_column, self.row_top(row, paper_rows),
                      self.paper_column, self.row_height)


SHORT_NAMES = {
    "single_stream": "Single stream",
    "moderate_batch": "Moderate batch",
    "high_throughput": "High throughput",
    "long_context": "Long context",
    "multi_model": "Multi-model",
    "moe": "MoE",
    "embedding": "Embedding",
    "highly_quantized": "Quantized",
}
SHORT_UNITS = {
    "tokens/s per device": "tok/s/dev",
    "requests/s per device": "req/s/dev",
    "tokens/s": "tok/s",
    "models per device": "models/dev",
}


class RegimeHeatmap(QWidget):
    """Accelerators x regimes, coloured by score, with the paper's grades in a second grid.

    ``tooltip(kind, row, column)`` gives the hover text ("cell", "paper" or "label"),
    ``clicked(row)`` is called on a left click anywhere along a row."""

    def __init__(self, tooltip, clicked, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tooltip = tooltip
        self.clicked = clicked
        self.content: HeatmapContent | None = None
        self.shown: frozenset[str] = frozenset()
        self.selected_row: int | None = None
        self.hover_text = ""
        self.colour_map = pg.colormap.get(COLOUR_MAP)
        self.font = QFont(self.font())
        self.font.setPointSize(PLOT_FONT_POINTS)
        self.bold = QFont(self.font)
        self.bold.setBold(True)
        self.setMouseTracking(True)
        self._geometry: _Geometry | None = None
        # The painted heat map, kept until what it shows changes: a control change leaves it as
        # it is, and a tab switch then draws one pixmap instead of ~400 cells and their texts.
        self._painted: QPixmap | None = None
        self._colours: dict[float, QColor] = {}
        # Colours of the current plot theme; the white between cells is the canvas.
        self._canvas = plot_colour("w")
        self._ink = plot_text_colour("k")
        self._muted = plot_text_colour(MUTED_TEXT)
        self._no_fit_fill = plot_colour(NO_FIT_FILL)
        self._no_fit_hatch = plot_colour(NO_FIT_HATCH)
        self._selected_band = plot_colour(SELECTION_BAND)
        self._selected_outline = plot_colour("k")
        self._shown_dot = plot_colour(SHOWN_DOT)

    # ---- content -------------------------------------------------------------------------

    def set_content(self, content: HeatmapContent) -> None:
        self.content = content
        self._geometry = None
        self._painted = None
        self.updateGeometry()  # its least height follows its rows
        self.update()

    def minimumSizeHint(self) -> QSize:
        """Tall enough for every row at the least row height: on a short screen (a projector in
        presentation mode) the page then scrolls, where the rows past the bottom were cut off."""
        least = QSize(HEATMAP_MIN_WIDTH_PX, HEATMAP_MIN_HEIGHT_PX)
        geometry = self.geometry_now()
        if geometry is None:
            return least
        content = self.content
        rows_height = len(content.ids) * MIN_ROW_PX + (GROUP_GAP_PX if content.paper_rows else 0)
        height = int(math.ceil(geometry.rows_top + rows_height + MARGIN_PX))
        return least.expandedTo(QSize(self._least_width(geometry.label_width), height))

    def _least_column_width(self) -> float:
        """A computed column as narrow as a score ("0.45") allows; a wider text ("<0.01", a bold
        best score) then reaches the cell's edges but stays whole (texts are not clipped)."""
        return QFontMetricsF(self.font).horizontalAdvance(LEAST_CELL_TEXT) + 2 * CELL_PADDING_PX

    def _least_width(self, label_width: float) -> int:
        """The names (``label_width``), every computed column at its least and the paper's at
        theirs: narrower, the columns ran into the paper's grades and the legend (the tab beside a
        dock at 1024 px). The page scrolls sideways instead."""
        regimes = max(len(self.content.headers), 1)
        return int(math.ceil(2 * MARGIN_PX + label_width + regimes * self._least_column_width()
                             + PAPER_GAP_PX + regimes * MIN_PAPER_COLUMN_PX))

    def set_shown(self, shown: frozenset[str]) -> None:
        if shown != self.shown:
            self.shown = shown
            self._painted = None
            self.update()

    def set_selected_row(self, row: int | None) -> None:
        if row != self.selected_row:
            self.selected_row = row
            self._painted = None
            self.update()

    def colour(self, score: float) -> QColor:
        score = float(np.clip(score, 0.0, 1.0))
        colour = self._colours.get(score)
        if colour is None:  # the map's interpolation is most of a cell's cost: once per score
            colour = self._colours[score] = self.colour_map.map(score, mode="qcolor")
        return colour

    def grade_score(self, grade: str) -> float:
        """A grade's place on the score's colours, by rank: the best 1, the worst 0."""
        grades = self.content.grades
        return 1.0 - grades.index(grade) / max(len(grades) - 1, 1)

    # ---- geometry ------------------------------------------------------------------------

    def geometry_now(self) -> _Geometry | None:
        if self.content is None:
            return None
        if self._geometry is None:
            self._geometry = self._layout()
        return self._geometry

    def resizeEvent(self, event) -> None:
        self._geometry = None
        self._painted = None
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            # The headers stand upright in narrow columns, which changes the least height: asked
            # again once this resize is done, not from inside it.
            QTimer.singleShot(0, self, self.updateGeometry)

    def _layout(self) -> _Geometry:
        content = self.content
        bold = QFontMetricsF(self.bold)
        normal = QFontMetricsF(self.font)
        label_width = max((bold.horizontalAdvance(i) for i in content.names), default=40.0) + DOT_PX + 2 * LABEL_GAP_PX
        regimes = max(len(content.headers), 1)
        cells_left = MARGIN_PX + label_width
        # The paper's columns narrow (down to a two-letter grade) before a header word is cut.
        widest_word = max((bold.horizontalAdvance(word) for header in content.headers
                           for word in header.replace("-", "- ").split()),
                          default=0.0) + 8
        paper_column = float(PAPER_COLUMN_PX)
        main_room = self.width() - MARGIN_PX - PAPER_GAP_PX - cells_left
        if (main_room - paper_column * regimes) / regimes < widest_word:
            paper_column = max(MIN_PAPER_COLUMN_PX, (main_room - widest_word * regimes) / regimes)
        paper_left = self.width() - MARGIN_PX - paper_column * regimes
        column_width = max((paper_left - PAPER_GAP_PX - cells_left) / regimes, self._least_column_width())
        wrap = int(Qt.TextFlag.TextWordWrap)
        header_height = 0.0
        # Narrow columns (the tab beside both docks) get their headers turned upright rather
        # than broken mid-word.
        self._upright_headers = widest_word > column_width
        for header, unit in zip(content.headers, content.units, strict=True):
            if self._upright_headers:
                height = bold.horizontalAdvance(header) + normal.horizontalAdvance(f"  {unit}")
            else:
                box = QRectF(0, 0, column_width - 8, 1000)
                height = (bold.boundingRect(box, wrap, header).height()
                          + normal.boundingRect(box, wrap, unit).height())
            header_height = max(header_height, height)
        header_height += 10
        rows = len(content.ids)
        rows_top = MARGIN_PX + header_height
        room = self.height() - rows_top - MARGIN_PX - (GROUP_GAP_PX if content.paper_rows else 0)
        row_height = float(np.clip(room / max(rows, 1), MIN_ROW_PX, MAX_ROW_PX))
        legend_top = rows_top + content.paper_rows * row_height + GROUP_GAP_PX + 12
        return _Geometry(MARGIN_PX, label_width, cells_left, column_width, MARGIN_PX, header_height, rows_top,
                         row_height, paper_left, paper_column, legend_top)

    def hit(self, point: QPointF) -> tuple[str, int, int] | None:
        """("cell" | "paper" | "label", row, column) under a point, or None."""
        g = self.geometry_now()
        if g is None:
            return None
        content = self.content
        for row in range(len(content.ids)):
            top = g.row_top(row, content.paper_rows)
            if not top <= point.y() < top + g.row_height:
                continue
            x = point.x()
            if g.label_left <= x < g.cells_left:
                return ("label", row, -1)
            column = int((x - g.cells_left) // g.column_width)
            if 0 <= column < len(content.headers) and x >= g.cells_left:
                return ("cell", row, column)
            column = int((x - g.paper_left) // g.paper_column)
            if row < content.paper_rows and 0 <= column < len(content.headers) and x >= g.paper_left:
                return ("paper", row, column)
            return None
        return None

    def cell_centre(self, kind: str, row: int, column: int) -> QPoint:
        g = self.geometry_now()
        rect = (g.cell if kind == "cell" else g.paper_cell)(row, column, self.content.paper_rows)
        return rect.center().toPoint()

    # ---- mouse ---------------------------------------------------------------------------

    def mouseMoveEvent(self, event) -> None:
        self.hover(event.position())
        super().mouseMoveEvent(event)

    def hover(self, point: QPointF) -> None:
        target = self.hit(point)
        self.hover_text = self.tooltip(*target) if target is not None else ""
        if self.hover_text:
            QToolTip.showText(self.mapToGlobal(point.toPoint()), self.hover_text, self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            target = self.hit(event.position())
            if target is not None:
                self.clicked(target[1])
        super().mousePressEvent(event)

    # ---- painting ------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        ratio = self.devicePixelRatioF()
        if self._painted is None or self._painted.devicePixelRatio() != ratio:
            pixmap = QPixmap(self.size() * ratio)
            pixmap.setDevicePixelRatio(ratio)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            self.paint_canvas(painter)
            painter.end()
            self._painted = pixmap
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._painted)
        painter.end()

    def paint_canvas(self, painter: QPainter) -> None:
        """The heat-map at the widget's size, on any painter (the screen, or an export's image or SVG)."""
        painter.fillRect(self.rect(), self._canvas)
        g = self.geometry_now()
        if g is not None:
            self._paint_headers(painter, g)
            self._paint_rows(painter, g)
            self._paint_paper(painter, g)
            self._paint_legend(painter, g)

    def _paint_headers(self, painter: QPainter, g: _Geometry) -> None:
        content = self.content
        bold, normal = QFontMetricsF(self.bold), QFontMetricsF(self.font)
        wrap = int(Qt.TextFlag.TextWordWrap)
        bottom = g.header_top + g.header_height - 4
        if getattr(self, "_upright_headers", False):
            for column, (header, unit) in enumerate(zip(content.headers, content.units, strict=True)):
                centre = g.cells_left + (column + 0.5) * g.column_width
                painter.save()
                painter.translate(centre + bold.ascent() / 2 - 1, bottom)
                painter.rotate(-90)
                painter.setPen(self._ink)
                painter.setFont(self.bold)
                painter.drawText(QPointF(0, 0), header)
                painter.setFont(self.font)
                painter.setPen(self._muted)
                painter.drawText(QPointF(bold.horizontalAdvance(header) + normal.horizontalAdvance("  "), 0), unit)
                painter.restore()
            return
        for column, (header, unit) in enumerate(zip(content.headers, content.units, strict=True)):
            left = g.cells_left + column * g.column_width + 4
            width = g.column_width - 8
            unit_box = normal.boundingRect(QRectF(0, 0, width, 1000), wrap, unit)
            header_box = bold.boundingRect(QRectF(0, 0, width, 1000), wrap, header)
            unit_top = bottom - unit_box.height()
            painter.setPen(self._ink)
            painter.setFont(self.bold)
            painter.drawText(QRectF(left, unit_top - header_box.height(), width, header_box.height()),
                             wrap | int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom), header)
            painter.setFont(self.font)
            painter.setPen(self._muted)
            painter.drawText(QRectF(left, unit_top, width, unit_box.height()),
                             wrap | int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), unit)

    def _paint_rows(self, painter: QPainter, g: _Geometry) -> None:
        content = self.content
        centre = int(Qt.AlignmentFlag.AlignCenter)
        for row, (accelerator, name) in enumerate(zip(content.ids, content.names, strict=True)):
            top = g.row_top(row, content.paper_rows)
            selected = row == self.selected_row
            if selected:
                right = g.paper_left + g.paper_column * len(content.headers) if row < content.paper_rows \
                    else g.cells_left + g.column_width * len(content.headers)
                painter.fillRect(QRectF(g.label_left, top, right - g.label_left, g.row_height), self._selected_band)
            # Label: a colour dot if shown in the other tabs, then the name, right-aligned.
            label_right = g.cells_left - LABEL_GAP_PX
            painter.setFont(self.bold if selected else self.font)
            painter.setPen(self._ink)
            painter.drawText(QRectF(g.label_left, top, label_right - g.label_left, g.row_height),
                             int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), name)
            if accelerator in self.shown:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(plot_colour(colour_for(accelerator)))
                painter.drawEllipse(QPointF(g.label_left + DOT_PX / 2 + 1, top + g.row_height / 2), DOT_PX / 2,
                                    DOT_PX / 2)
            for column in range(len(content.headers)):
                rect = g.cell(row, column, content.paper_rows)
                fits = bool(content.fits[row, column])
                if fits:
                    fill = self.colour(content.scores[row, column])
                    painter.fillRect(rect, fill)
                    text_colour = LIGHT_TEXT if fill.lightnessF() < 0.5 else DARK_TEXT
                else:
                    painter.fillRect(rect, self._no_fit_fill)
                    painter.fillRect(rect, QBrush(self._no_fit_hatch, Qt.BrushStyle.BDiagPattern))
                    text_colour = self._ink
                painter.setPen(QPen(self._canvas, 1.5))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
                text = content.texts[row][column]
                if text:
                    painter.setFont(self.bold if content.best[row, column] else self.font)
                    if not fits:  # a white box behind the dash, so the hatching does not cross it
                        painter.fillRect(QRectF(rect.center().x() - 12, rect.center().y() - 9, 24, 18),
                                         self._no_fit_fill)
                    painter.setPen(text_colour)
                    painter.drawText(rect, centre, text)
            if selected:
                cells = g.cell(row, 0, content.paper_rows).united(
                    g.cell(row, len(content.headers) - 1, content.paper_rows))
                painter.setPen(QPen(self._selected_outline, 3))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(cells)

    def _paint_paper(self, painter: QPainter, g: _Geometry) -> None:
        content = self.content
        regimes = len(content.headers)
        width = g.paper_column * regimes
        normal = QFontMetricsF(self.font)
        wrap = int(Qt.TextFlag.TextWordWrap)
        # Title at the top of the header band, column numbers at its bottom (as in the main grid).
        painter.setFont(self.bold)
        painter.setPen(self._ink)
        number_height = normal.height() + 4
        title_box = QRectF(g.paper_left - PAPER_GAP_PX / 2, g.header_top, width + PAPER_GAP_PX / 2,
                           g.header_height - number_height - 2)
        painter.drawText(title_box, wrap | int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom),
                         content.paper_title)
        painter.setFont(self.font)
        for column in range(regimes):
            painter.drawText(QRectF(g.paper_left + column * g.paper_column, g.rows_top - number_height,
                                    g.paper_column, number_height),
                             int(Qt.AlignmentFlag.AlignCenter), str(column + 1))
        for row in range(content.paper_rows):
            for column in range(regimes):
                rect = g.paper_cell(row, column, content.paper_rows)
                grade = content.paper[row][column]
                if grade:
                    fill = self.colour(self.grade_score(grade))
                    painter.fillRect(rect, fill)
                    painter.setPen(LIGHT_TEXT if fill.lightnessF() < 0.5 else DARK_TEXT)
                    painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), grade_letters(grade))
                painter.setPen(QPen(self._canvas, 1.5))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
            if row == self.selected_row:
                painter.setPen(QPen(self._selected_outline, 3))
                painter.drawRect(g.paper_cell(row, 0, content.paper_rows).united(
                    g.paper_cell(row, regimes - 1, content.paper_rows)))

    def _paint_legend(self, painter: QPainter, g: _Geometry) -> None:
        """Under the paper's grid: its grade letters, the colour bar, the no-fit and shown marks."""
        content = self.content
        normal = QFontMetricsF(self.font)
        line = normal.height() + 6
        left = g.paper_left - PAPER_GAP_PX / 2
        width = self.width() - MARGIN_PX - left
        y = g.legend_top
        painter.setFont(self.font)
        chip = line - 8
        half = width / 2
        for index, grade in enumerate(content.grades):  # in two columns, best first
            x = left + (index % 2) * half
            top = y + (index // 2) * line
            fill = self.colour(self.grade_score(grade))
            box = QRectF(x, top + 4, chip * 1.6, chip)
            painter.fillRect(box, fill)
            painter.setPen(LIGHT_TEXT if fill.lightnessF() < 0.5 else DARK_TEXT)
            painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), grade_letters(grade))
            painter.setPen(self._ink)
            painter.drawText(QRectF(x + chip * 1.6 + 6, top, half - chip * 1.6 - 6, line),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), grade)
        y += ((len(content.grades) + 1) // 2) * line
        y += 8
        painter.drawText(QRectF(left, y, width, line), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         "score: fraction of the best")
        y += line
        bar = QRectF(left + 6, y, width - 24, COLOUR_BAR_PX)
        gradient = QLinearGradient(bar.topLeft(), bar.topRight())
        for stop in np.linspace(0.0, 1.0, 11):
            gradient.setColorAt(float(stop), self.colour(float(stop)))
        painter.fillRect(bar, QBrush(gradient))
        painter.setPen(self._ink)
        for stop in (0.0, 0.25, 0.5, 0.75, 1.0):
            x = bar.left() + stop * bar.width()
            painter.drawLine(QPointF(x, bar.bottom()), QPointF(x, bar.bottom() + 4))
            painter.drawText(QRectF(x - 25, bar.bottom() + 4, 50, line), int(Qt.AlignmentFlag.AlignHCenter),
                             f"{stop:g}")
        y = bar.bottom() + line + 12
        swatch = QRectF(left, y + 3, chip * 1.6, chip)
        painter.fillRect(swatch, self._no_fit_fill)
        painter.fillRect(swatch, QBrush(self._no_fit_hatch, Qt.BrushStyle.BDiagPattern))
        painter.drawText(swatch, int(Qt.AlignmentFlag.AlignCenter), "—")
        painter.drawText(QRectF(left + chip * 1.6 + 8, y, width, line),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), "cannot run (hover: why)")
        y += line + 4
        zero_fill = self.colour(0.0)
        wrap = int(Qt.TextFlag.TextWordWrap)
        for word, meaning in content.zero_words:  # as its cells show it: on the colour of a score of 0
            box = QRectF(left, y + 3, max(chip * 1.6, normal.horizontalAdvance(word) + 8), chip)
            painter.fillRect(box, zero_fill)
            painter.setPen(LIGHT_TEXT if zero_fill.lightnessF() < 0.5 else DARK_TEXT)
            painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), word)
            painter.setPen(self._ink)
            text_width = width - box.width() - 8
            height = max(line, normal.boundingRect(QRectF(0, 0, text_width, 1000), wrap, meaning).height() + 6)
            painter.drawText(QRectF(box.right() + 8, y, text_width, height),
                             wrap | int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), meaning)
            y += height + 4
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._shown_dot)
        painter.drawEllipse(QPointF(left + chip * 0.8, y + line / 2), DOT_PX / 2, DOT_PX / 2)
        painter.setPen(self._ink)
        painter.drawText(QRectF(left + chip * 1.6 + 8, y, width, line),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), "shown in the other tabs")


class RegimesPanel(AnalysisPanel):
    title = "Regimes"
    study_view = "regimes"

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        self.definitions: RegimeDefinitions = load_regimes()
        self.row_ids: tuple[str, ...] = ()
        self.heatmap = RegimeHeatmap(self._tooltip, self._clicked_row, self)
        self.note = subtitle_label("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.heatmap, 1)
        layout.addWidget(self.note)
        self._set_note()

    # ---- AnalysisPanel -------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        super().update_frame(frame)
        self.heatmap.set_shown(frozenset(frame.accelerators))

    def show_study(self, study: RegimeGrid) -> None:
        grid = study
        self.row_ids = grid.accelerators
        graded = [a for a in grid.accelerators if a in self.definitions.paper_ratings]
        paper_rows = len(graded) if tuple(graded) == grid.accelerators[: len(graded)] else 0
        # Column headers are short (the full name and the metric are in each cell's hover): eight
        # columns share the tab with the docks open, and long names broke mid-word there.
        headers = tuple(f"{i + 1}. {SHORT_NAMES.get(regime.id, regime.name)}" for i, regime in enumerate(grid.regimes))
        units = tuple(SHORT_UNITS.get(regime.unit, regime.unit) + (" ↓" if regime.direction == "lower" else "")
                      for regime in grid.regimes)
        texts = tuple(
            tuple(score_text(grid.scores[a, r], bool(grid.fits[a, r]), grid.values[a, r], regime.metric)
                  for r, regime in enumerate(grid.regimes))
            for a in range(len(grid.accelerators))
        )
        zero_words = tuple(dict.fromkeys(
            zero_word(regime.metric) for r, regime in enumerate(grid.regimes)
            if np.any(grid.fits[:, r] & (grid.values[:, r] <= 0.0))
        ))
        best = np.zeros(grid.scores.shape, dtype=bool)
        for r, regime in enumerate(grid.regimes):
            winner = grid.best(regime.id)
            if winner is not None:
                best[:, r] = grid.scores[:, r] == 1.0
        paper = tuple(
            tuple(self.definitions.paper_ratings[a].get(regime.id, "") for regime in grid.regimes)
            for a in grid.accelerators[:paper_rows]
        )
        self.heatmap.set_content(HeatmapContent(
            ids=grid.accelerators, names=tuple(self.accelerator_name(a) for a in grid.accelerators),
            headers=headers, units=units, scores=grid.scores.copy(), fits=grid.fits.copy(),
            texts=texts, best=best, paper=paper, paper_rows=paper_rows, grades=self.definitions.paper_grades,
            paper_title="Paper's grades (Fig. 8)", zero_words=zero_words,
        ))
        if self.frame is not None:
            self.heatmap.set_shown(frozenset(self.frame.accelerators))
        self._set_note()
        self._apply_selection()

    def figure_accelerators(self) -> tuple[str, ...]:
        """Every accelerator of the grid, not only the shown ones."""
        return tuple(self.row_ids)

    def plotted(self) -> dict[str, np.ndarray]:
        content = self.heatmap.content
        if content is None:
            return {}
        return {
            "accelerators": np.array(content.ids, dtype=object),
            "rows": np.array(content.names, dtype=object),
            "scores": content.scores,
            "fits": content.fits,
            "texts": np.array(content.texts, dtype=object),
            "paper": np.array(content.paper, dtype=object).reshape(content.paper_rows, len(content.headers)),
            "shown": np.array([a in self.heatmap.shown for a in content.ids]),
        }

    # ---- selection, hover, click ---------------------------------------------------------

    def _apply_selection(self) -> None:
        row = self.row_ids.index(self.selected) if self.selected in self.row_ids else None
        self.heatmap.set_selected_row(row)

    def _clicked_row(self, row: int) -> None:
        self.accelerator_selected.emit(self.row_ids[row])

    def _name(self, accelerator_id: str) -> str:
        accelerator = self.catalog.accelerators.get(accelerator_id) or self.engine.catalog.accelerators.get(
            accelerator_id)
        return accelerator.name if accelerator is not None else accelerator_id

    def _tooltip(self, kind: str, row: int, column: int) -> str:
        grid: RegimeGrid | None = self.study
        if grid is None:
            return ""
        accelerator = grid.accelerators[row]
        title = f"{self._name(accelerator)} ({accelerator})"
        if kind == "label":
            graded = "graded by the paper" if accelerator in self.definitions.paper_ratings else "not graded by the paper"
            return tooltip_html(title, [f"{graded}; click to select it"])
        regime = grid.regimes[column]
        cell = grid.cells[row][column]
        best = grid.best(regime.id)
        best_text = (f" (best: {best}, {grid_value(grid.cell(best, regime.id).value)} {regime.unit})"
                     if best is not None else "")
        if kind == "paper":
            if cell.fits and cell.value > 0.0:
                computed = f"computed score: {cell.score:.3f}{best_text}"
            elif cell.fits:
                computed = f"computed: {zero_word(regime.metric)[0]}, score 0 — {cell.reason}"
            else:
                computed = f"computed: cannot run — {cell.reason}"
            return tooltip_html(f"{title} — {column + 1}. {regime.name}", [
                f"paper's grade: <b>{cell.paper_rating}</b> ({grid.paper_source})", computed])
        lines = [f"metric: {regime.metric_text}"]
        if cell.fits and cell.value > 0.0:
            lines.append(f"value: <b>{grid_value(cell.value)} {regime.unit}</b> ({regime.direction} is better)")
            lines.append(f"score: {cell.score:.3f} of the best{best_text}")
        elif cell.fits:
            lines.append(f"<b>{zero_word(regime.metric)[0]}</b>: value 0 {regime.unit}, score 0 — {cell.reason}")
        else:
            lines.append(f"<b>cannot run</b>: {cell.reason}")
        if cell.devices:
            device_word = "device" if cell.devices == 1 else "devices"
            lines.append(f"layout: {cell.devices} {device_word} (TP {cell.tp} × PP {cell.pp})"
                         + (f", batch {cell.batch:,}" if cell.batch else ""))
        if cell.detail:
            lines.append(cell.detail)
        lines.append(f"model: {regime.model}, weights {regime.weight_precision}, activations "
                     f"{regime.activation_precision}, KV {regime.kv_precision}; {regime.input_len:,} tokens in, "
                     f"{regime.output_len:,} out")
        lines.append(f"paper's grade: {cell.paper_rating}" if cell.paper_rating else "paper: not graded")
        return _wrapped_tooltip(f"{title} — {column + 1}. {regime.name}", lines)

    def _set_note(self) -> None:
        rule = self.definitions.layout
        count = len(self.row_ids) or len(self.engine.catalog.accelerators)
        self.note.setText(
            f"Score = each regime's metric (under its name; hover a cell for its definition, raw value and layout) "
            f"divided by the best of the catalog's {count} accelerators, or best ÷ own where lower is better (↓): 1.00 is "
            f"the best (in bold), and colour follows the score linearly. Each regime runs its own model and workload on the "
            f"fewest devices that hold it (tensor parallel up to {rule.max_tp}, then pipeline stages) or on one "
            f"device, as it states; “—” (hatched) where it cannot run. Right: the grades of "
            f"{self.definitions.paper_source}, on the same colours by rank (ordinal, not measured). "
            f"{self._spread_sentence()}Click a row to select the accelerator."
        )

    def _spread_sentence(self) -> str:
        """The graded accelerators' spread per regime beside the paper's "up to 3.7x"."""
        if self.study is None:
            return ""
        graded = [a for a in self.definitions.paper_ratings if a in self.study.accelerators]
        spreads = architecture_spreads(self.study, graded)
        if not spreads:
            return ""
        low = min(spreads, key=lambda spread: spread.ratio)
        high = max(spreads, key=lambda spread: spread.ratio)
        names = {regime.id: SHORT_NAMES.get(regime.id, regime.name) for regime in self.study.regimes}
        return (
            f"Best over worst of the paper's {len(graded)} graded accelerators runs from "
            f"{times_text(low.ratio)} ({names[low.regime]}) to {times_text(high.ratio)} ({names[high.regime]}, "
            "per device) against the paper's “up to 3.7×” (View → Model vs paper). "
        )


def _wrapped_tooltip(title: str, lines: list[str]) -> str:
    """Rich text in paragraphs, which a tool tip wraps (metric definitions run long)."""
    body = "".join(f"<p style='margin:0 0 3px 0'>{line}</p>" for line in lines)
    return f"<p style='margin:0 0 3px 0'><b>{title}</b></p>{body}"
