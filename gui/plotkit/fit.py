"""Which texts a plot area shows, and whether each is shown whole: drawn in full (not cut with
an ellipsis), inside the widget and the view that clips it, and clear of its neighbours on an
axis. Tests ask every panel this, at the window sizes a classroom uses."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFontMetricsF, QImage, QPainter

from .axes import RowAxis
from .legend import AcceleratorLegend
from .text import PlotTitle, _Texts

ELLIPSIS = "…"
EDGE_SLACK_PX = 1.0  # rounding of text boxes against the edges they must stay within


@dataclass(frozen=True)
class ShownText:
    """A text drawn in a plot area: ``text`` as drawn, ``whole`` the text it stands for,
    ``box`` where it is (the view's pixels), ``fits`` whether it shows whole."""

    where: str
    text: str
    whole: str
    box: QRectF
    fits: bool


def _inside(box: QRectF, area: QRectF) -> bool:
    return area.adjusted(-EDGE_SLACK_PX, -EDGE_SLACK_PX, EDGE_SLACK_PX, EDGE_SLACK_PX).contains(box)


def _without_margin(box: QRectF, margin_px: float) -> QRectF:
    """A text's box without the empty margin round it (nothing is drawn there, so a margin
    past an edge cuts nothing)."""
    return box.adjusted(margin_px, margin_px, -margin_px, -margin_px)


def _clipping_view(item: pg.GraphicsItem) -> QRectF | None:
    """The scene rectangle of the view box that clips ``item`` (None if none does)."""
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, pg.ViewBox):
            return parent.sceneBoundingRect()
        parent = parent.parentItem()
    return None


def axis_texts(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """The tick labels an axis draws at its current size, each with its box in scene pixels."""
    if not axis.isVisible() or not axis.style["showValues"]:
        return []
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    if specs is None:
        return []
    return [(text, axis.mapRectToScene(rect)) for rect, _flags, text in specs[2] if text]


def _apart(box: QRectF, others: list[QRectF]) -> bool:
    return all(not box.intersects(other) for other in others)


def _row_texts(axis: RowAxis, area: QRectF, where: str) -> list[ShownText]:
    """Each row label of a row axis, boxed by the axis' width and the row's lines."""
    strip = axis.mapRectToScene(QRectF(0, 0, axis.width(), axis.height()))
    metrics = QFontMetricsF(axis.style["tickFont"] or axis.font())
    view = axis.linkedView()
    texts: list[ShownText] = []
    boxes = []
    for row in range(len(axis.labels)):
        lines = axis.drawn_lines(row)
        centre = view.mapViewToScene(QPointF(0.0, float(row))).y() if view is not None else strip.center().y()
        height = metrics.height() * len(lines)
        boxes.append(QRectF(strip.left(), centre - height / 2, strip.width(), height))
    for row, (label, drawn) in enumerate(zip(axis.labels, axis.drawn_labels(), strict=True)):
        lines, box = axis.drawn_lines(row), boxes[row]
        apart = _apart(box, boxes[max(row - 1, 0):row] + boxes[row + 1:row + 2])
        wide_enough = max(metrics.horizontalAdvance(line) for line in lines) <= strip.width()
        whole = ELLIPSIS not in drawn or ELLIPSIS in label
        texts.append(ShownText(where, drawn, label, box, whole and wide_enough and apart and _inside(box, area)))
    return texts


def texts_in(view: pg.GraphicsView, where: str = "") -> list[ShownText]:
    """Every text the plots of ``view`` draw: axis tick labels, row labels, the texts beside
    bars and points (``TextPool``, ``TextItem``), plot titles and legend rows, with whether
    each shows whole."""
    area = view.mapToScene(view.viewport().rect()).boundingRect()
    shown: list[ShownText] = []
    for item in view.scene().items():
        if not item.isVisible():
            continue
        if isinstance(item, RowAxis):
            shown.extend(_row_texts(item, area, where))
        elif isinstance(item, pg.AxisItem):
            labels = axis_texts(item)
            boxes = [box for _text, box in labels]
            for k, (text, box) in enumerate(labels):
                fits = _inside(box, area) and _apart(box, boxes[:k] + boxes[k + 1:])
                shown.append(ShownText(where, text, text, box, fits))
        elif isinstance(item, _Texts):
            clip = _clipping_view(item)
            for text, box in zip(item.texts, item.boxes(), strict=True):
                if text:
                    ink = _without_margin(box, item.MARGIN_PX)
                    fits = _inside(ink, area) and (clip is None or _inside(ink, clip))
                    shown.append(ShownText(where, text, text, ink, fits))
        elif isinstance(item, AcceleratorLegend):
            for row in item.rows:
                box = item.mapRectToScene(row.rect)
                shown.append(ShownText(where, " ".join(row.lines), row.name, box, not row.elided and _inside(box, area)))
        elif isinstance(item, PlotTitle):
            if item.text:
                box = item.sceneBoundingRect()
                shown.append(ShownText(where, " ".join(item.lines), item.text, box, not item.elided and _inside(box, area)))
        elif isinstance(item, pg.TextItem):
            text = item.toPlainText()
            if text:
                ink = _without_margin(item.sceneBoundingRect(), item.textItem.document().documentMargin())
                clip = _clipping_view(item)
                fits = _inside(ink, area) and (clip is None or _inside(ink, clip))
                shown.append(ShownText(where, text, text, ink, fits))
    return shown
