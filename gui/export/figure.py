"""An exported figure: a tab's plots, their legends and captions, and the scenario in one line.

It is drawn with QPainter from the plots' scenes (or a canvas's own painting) and from the
captions' text, never by rendering the tab's widgets: buttons, boxes, scroll bars and tables
cannot reach a handout that way, whatever a tab holds.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6 import QtGui
from PySide6.QtCore import QCoreApplication, QRectF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QFont, QPainter, QPalette, QTextDocument, QTransform
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.physics.frame import Frame
from accelscope.engine.text.summary import figure_scenario_line

from ..look.style import plot_font
from ..panels.base import Panel
from ..plotkit.text import FigureText

MARGIN_PX = 8  # around the figure and either side of its texts
GAP_PX = 4  # between its parts


def scenario_line(panel: Panel, frame: Frame, catalog: Catalog) -> str:
    """The scenario of ``frame`` with the accelerators ``panel`` shows, as the status bar words it."""
    scenario = frame.workspace.scenario
    model = frame.engine.model(scenario.model) if frame.engine is not None else catalog.model(scenario.model)
    shown = [catalog.accelerators[a] for a in panel.figure_accelerators() if a in catalog.accelerators]
    return figure_scenario_line(scenario, model.name, shown)


@dataclass(frozen=True)
class _Canvas:
    top: float
    widget: QWidget  # a pyqtgraph view, or a widget with paint_canvas(painter)


@dataclass(frozen=True)
class _Text:
    top: float
    document: QTextDocument
    colour: QColor


def _document(part: FigureText, width: float) -> QTextDocument:
    document = QTextDocument()
    document.setDefaultFont(QFont(part.font))
    document.setDocumentMargin(0)
    if QtGui.Qt.mightBeRichText(part.text):
        document.setHtml(part.text)
    else:
        document.setPlainText(part.text)
    document.setTextWidth(width)
    return document


class Figure:
    """A tab as a figure, laid out top to bottom at the width of its widest plot: the title and
    scenario line, then the plots and texts in the order the tab shows them."""

    def __init__(self, panel: Panel, scenario: str) -> None:
        QCoreApplication.sendPostedEvents()  # a new theme's palette and pending layouts reach the tab first
        panel.ensurePolished()  # the window's style, even on a tab never shown
        panel.prepare_paint()  # the plots' deferred layout done, as before a paint
        self.title = panel.title
        self.scenario = scenario
        self.background = panel.palette().color(panel.backgroundRole())
        parts = panel.figure_parts()
        canvases = [part for part in parts if not isinstance(part, FigureText)]
        self.width = max((canvas.width() for canvas in canvases), default=panel.width())
        ink = panel.palette().color(QPalette.ColorRole.WindowText)
        heading = FigureText(f"<b>{html.escape(self.title)}</b> — {html.escape(scenario)}", plot_font(), ink)
        self.parts: list[_Canvas | _Text] = []
        top = float(MARGIN_PX)
        for part in (heading, *parts):
            if isinstance(part, FigureText):
                document = _document(part, self.width - 2 * MARGIN_PX)
                self.parts.append(_Text(top, document, part.colour))
                top += document.size().height()
            else:
                self.parts.append(_Canvas(top, part))
                top += part.height()
            top += GAP_PX
        self.height = round(top - GAP_PX + MARGIN_PX)

    def texts(self) -> list[str]:
        """The figure's texts as drawn (plain), the scenario line's first."""
        return [part.document.toPlainText() for part in self.parts if isinstance(part, _Text)]

    def canvases(self) -> list[QWidget]:
        return [part.widget for part in self.parts if isinstance(part, _Canvas)]

    def plot_areas(self) -> list[tuple[tuple[float, ...], tuple[float, float, float, float]]]:
        """Each plot's data transform (data to figure pixels, as an SVG ``matrix``) and the
        rectangle (left, top, right, bottom) its data is clipped to, in figure pixels."""
        areas = []
        for part in self.parts:
            if not isinstance(part, _Canvas) or not isinstance(part.widget, pg.GraphicsView):
                continue
            widget = part.widget
            source = widget.mapToScene(widget.viewport().rect()).boundingRect()
            if source.width() <= 0 or source.height() <= 0:
                continue
            to_figure = QTransform.fromTranslate(-source.left(), -source.top())
            to_figure *= QTransform.fromScale(widget.width() / source.width(), widget.height() / source.height())
            to_figure *= QTransform.fromTranslate(0, part.top)
            for item in widget.scene().items():
                if isinstance(item, pg.ViewBox) and item.isVisible():
                    m = item.childGroup.sceneTransform() * to_figure
                    rect = to_figure.mapRect(item.sceneBoundingRect())
                    areas.append(((m.m11(), m.m12(), m.m21(), m.m22(), m.dx(), m.dy()),
                                  (rect.left(), rect.top(), rect.right(), rect.bottom())))
        return areas

    def paint(self, painter: QPainter) -> None:
        painter.fillRect(QRectF(0, 0, self.width, self.height), self.background)
        for part in self.parts:
            if isinstance(part, _Text):
                painter.save()
                painter.translate(MARGIN_PX, part.top)
                context = QAbstractTextDocumentLayout.PaintContext()
                palette = QPalette(context.palette)
                palette.setColor(QPalette.ColorRole.Text, part.colour)
                context.palette = palette
                part.document.documentLayout().draw(painter, context)
                painter.restore()
            else:
                _paint_canvas(painter, part.widget, QRectF(0, part.top, part.widget.width(), part.widget.height()))


def _paint_canvas(painter: QPainter, widget: QWidget, target: QRectF) -> None:
    painter.save()
    painter.setClipRect(target)
    if isinstance(widget, pg.GraphicsView):
        painter.fillRect(target, widget.backgroundBrush())
        source = widget.mapToScene(widget.viewport().rect()).boundingRect()
        widget.scene().render(painter, target, source, Qt.AspectRatioMode.IgnoreAspectRatio)
    else:
        painter.translate(target.topLeft())
        widget.paint_canvas(painter)
    painter.restore()
