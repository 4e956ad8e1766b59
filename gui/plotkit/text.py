"""Text on and beside plots: labels that wrap cheaply, rich-text legends and tool tips, and
:class:`TextPool`, one item drawing a text per row of a plot."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QStaticText
from PySide6.QtWidgets import QLabel, QWidget

from ..look import theme
from ..look.style import PLOT_FONT_POINTS, html_colour, plot_font, plot_text_colour
from .axes import fitted_lines

VALUE_FONT_POINTS = PLOT_FONT_POINTS
# Said beneath interactive plots; a picture on paper has nothing to hover, so exports leave it out.
INTERACTION_HINT = "Hover for values, click to select."


class WrappedLabel(QLabel):
    """A word-wrapped label that remembers its height for each width it was asked about.

    Qt lays a wrapped label's text out anew each time a layout asks its height for a width,
    and a window's layout asks many times per pass: switching tabs (which shows a page and
    re-lays out the whole window) spent three quarters of its ~5 ms of layout laying out the
    panels' notes again. The heights are forgotten when the text, font or style changes."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._heights: dict[int, int] = {}
        self._least_lines = 0

    REMEMBERED_WIDTHS = 256  # a long session of window resizes asks about many widths

    def hold_lines(self, lines: int) -> None:
        """Be at least ``lines`` lines tall, whatever the text: a text that changes with every
        frame and wraps onto one line or two moved the plot below it up and down, and each
        move laid out and painted the whole page again (and, where the page then fitted or no
        longer did, its scroll bar came and went, laying it out once more)."""
        self._least_lines = lines
        self._heights.clear()
        self.updateGeometry()

    def heightForWidth(self, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) >= self.REMEMBERED_WIDTHS:
                self._heights.clear()
            height = super().heightForWidth(width)
            if self._least_lines:
                margins = self.contentsMargins()
                least = math.ceil(self._least_lines * self.fontMetrics().lineSpacing()) + margins.top() + margins.bottom()
                height = max(height, least)
            self._heights[width] = height
        return height

    def setText(self, text: str) -> None:
        if text != self.text():
            self._heights.clear()
            super().setText(text)

    def setTextFormat(self, text_format: Qt.TextFormat) -> None:
        self._heights.clear()
        super().setTextFormat(text_format)

    def setContentsMargins(self, *margins) -> None:
        self._heights.clear()
        super().setContentsMargins(*margins)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.ContentsRectChange):
            self._heights.clear()
        super().changeEvent(event)


@dataclass(frozen=True)
class FigureText:
    """A caption or legend of a figure as text, which an export draws itself (never its label widget)."""

    text: str  # rich or plain, as the label shows it
    font: QFont
    colour: QColor  # of text without a colour of its own

    @classmethod
    def of_label(cls, label: QLabel) -> FigureText:
        text = label.text().replace(" " + INTERACTION_HINT, "").replace(INTERACTION_HINT, "")
        return cls(text, QFont(label.font()), QColor(label.palette().color(label.foregroundRole())))


def subtitle_label(html: str) -> QLabel:
    label = WrappedLabel(html)
    label.setTextFormat(Qt.TextFormat.RichText)
    font = label.font()
    font.setPointSize(PLOT_FONT_POINTS)
    label.setFont(font)
    label.setContentsMargins(8, 4, 8, 2)
    return label


SWATCH_ONE_LINE_CHARS = 40  # a legend entry up to this long is never broken


def swatch(colour: str, text: str, *, hatch: bool = False, glyph: str | None = None) -> str:
    """A legend entry as rich text: a coloured block (or ``glyph``) in the current plot theme,
    and its meaning."""
    glyph = glyph or ("▨" if hatch else "■")
    # A legend entry stays on one line; a sentence-long meaning wraps after its first word
    # (kept whole, the Energy tab's note made its page wider than a projector's tab).
    if len(text) <= SWATCH_ONE_LINE_CHARS or " " not in text:
        first, rest = text, ""
    else:
        first, rest = text.split(" ", 1)
    return (f'<span style="white-space:nowrap"><span style="color:{html_colour(colour)}; '
            f'font-size:{PLOT_FONT_POINTS + 5}pt">{glyph}</span>&nbsp;{first}</span>' + (f" {rest}" if rest else ""))


def tooltip_html(title: str, lines: Sequence[str]) -> str:
    body = "<br>".join(lines)
    return f"<p style='white-space:pre'><b>{title}</b><br>{body}</p>"


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
        self._widths: dict[str, float] = {}
        self._rect: QRectF | None = None
        self._boxes: tuple[tuple, list[QRectF]] | None = None  # (scene transform, boxes) of _scene_boxes

    def set(self, texts: list[str], colours: list[QColor], places: np.ndarray) -> None:
        self.prepareGeometryChange()
        self.texts, self.colours, self.places = texts, colours, places
        self._rect = None
        self._boxes = None
        self.update()

    def width_px(self, text: str) -> float:
        width = self._widths.get(text)
        if width is None:  # measured once: the boxes are asked for at every paint and bounds query
            if len(self._widths) >= TextPool.MEASURED_TEXTS:
                self._widths.clear()
            width = self._widths[text] = self.metrics.horizontalAdvance(text) + 2 * self.MARGIN_PX
        return width

    def boxes(self) -> list[QRectF]:
        """Each text's box in scene coordinates (pixels), margins included; empty where none."""
        return [QRectF(box) for box in self._scene_boxes()]

    def _scene_boxes(self) -> list[QRectF]:
        """:meth:`boxes`, kept while the texts and the item's place in the scene hold: the
        bounds and the paint both ask for them (~0.2 ms for forty texts each time)."""
        to_scene = self.sceneTransform()
        key = (to_scene.m11(), to_scene.m12(), to_scene.m21(), to_scene.m22(), to_scene.dx(), to_scene.dy())
        if self._boxes is not None and self._boxes[0] == key:
            return self._boxes[1]
        height = self.metrics.height() + 2 * self.MARGIN_PX
        boxes = []
        for text, (x, y) in zip(self.texts, self.places, strict=True):
            if not text:
                boxes.append(QRectF())
                continue
            point = to_scene.map(QPointF(x, y))
            width = self.width_px(text)
            boxes.append(QRectF(point.x() - self.anchor[0] * width, point.y() - self.anchor[1] * height, width, height))
        self._boxes = (key, boxes)
        return boxes

    def boundingRect(self) -> QRectF:
        if self._rect is None:
            united = QRectF()
            for box in self._scene_boxes():
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
        pen_colour = None
        for text, colour, box in zip(self.texts, self.colours, self._scene_boxes(), strict=True):
            if not text:
                continue
            static = self._static.get(text)
            if static is None:
                if len(self._static) >= TextPool.MEASURED_TEXTS:
                    self._static.clear()
                static = self._static[text] = QStaticText(text)
                static.setTextFormat(Qt.TextFormat.PlainText)
            if colour is not pen_colour:  # most rows share one colour
                painter.setPen(colour)
                pen_colour = colour
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
        return self.widths_of(self._texts)

    def widths_of(self, texts: Sequence[str]) -> np.ndarray:
        """Width each of ``texts`` would take on screen, margins included (0 for "")."""
        return np.array([self.item.width_px(text) if text else 0.0 for text in texts])

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


class PlotTitle(pg.GraphicsWidget):
    """A plot's title that fits the plot's width: on one line where it can, on two where it
    must (broken at a space, as axis titles are), elided only where a line is still too wide
    (the whole title is then its tool tip). pyqtgraph's title is one line, as wide as its text
    and never narrower: a long title kept the plot from shrinking, and what sat beside the plot
    (a legend) was pushed off a projector's screen.

    It stands in for a ``PlotItem``'s ``titleLabel``: ``PlotItem.setTitle`` shows it and sets
    its text."""

    PAD_PX = 4.0  # above and below the lines, as pyqtgraph's title row has

    def __init__(self, plot: pg.PlotItem) -> None:
        super().__init__()
        self.plot = plot
        self.text = ""
        self.lines: tuple[str, ...] = ()
        self.elided = False
        self.font = plot_font()
        self.colour = QColor(theme.current().foreground)
        self._fitted_width = -1.0
        old = plot.titleLabel
        plot.layout.removeItem(old)
        old.setParentItem(None)
        if old.scene() is not None:
            old.scene().removeItem(old)
        plot.titleLabel = self
        plot.layout.addItem(self, 0, 1)
        self.setSizePolicy(pg.QtWidgets.QSizePolicy.Policy.Ignored, pg.QtWidgets.QSizePolicy.Policy.Fixed)
        self.setVisible(False)

    def setText(self, text: str, size: str | None = None, color: object = None, **_style) -> None:
        """As ``LabelItem.setText``: the text, and its size in points ("13pt") and colour."""
        self.text = str(text)
        if size is not None and size.endswith("pt"):
            self.font = QFont(self.font)
            self.font.setPointSizeF(float(size[:-2]))
        if color is not None:
            self.colour = QColor(color)
        self._fit(force=True)

    def natural_width(self) -> float:
        return QFontMetricsF(self.font).horizontalAdvance(self.text)

    def _fit(self, force: bool = False) -> None:
        width = self.size().width()
        if not force and width == self._fitted_width:
            return
        self._fitted_width = width
        metrics = QFontMetricsF(self.font)
        lines, self.elided = fitted_lines(self.text, metrics, width) if width > 0 else ([self.text], False)
        self.lines = tuple(lines)
        self.setToolTip(self.text if self.elided else "")
        height = math.ceil(len(lines) * metrics.lineSpacing() + 2 * self.PAD_PX)
        if self.isVisible() or force:
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)
            if self.plot.layout.rowMinimumHeight(0) != height or self.plot.layout.rowMaximumHeight(0) != height:
                self.plot.layout.setRowFixedHeight(0, height)
        self.update()

    def resizeEvent(self, event) -> None:
        self._fit()

    def paint(self, painter, *_args) -> None:
        metrics = QFontMetricsF(self.font)
        painter.setPen(self.colour)
        painter.setFont(self.font)
        width = self.size().width()
        for k, line in enumerate(self.lines):
            x = (width - metrics.horizontalAdvance(line)) / 2
            painter.drawText(QPointF(x, self.PAD_PX + metrics.ascent() + k * metrics.lineSpacing()), line)
