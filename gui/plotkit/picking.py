"""What is under the mouse: the row of a bar plot, or the accelerator a point or line stands
for. Hover shows its tool tip; a left click selects it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtWidgets import QToolTip

from .points import LineSet, SpotRef, Spots


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
        widget.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Answer the view's own tool-tip event with the row's text. Left to the scene, it
        finds no item with a tool tip under the mouse and hides the one :meth:`hover` showed
        (about a second after it appeared, with the pointer resting)."""
        if event.type() == QEvent.Type.ToolTip and self.hover_text:
            QToolTip.showText(event.globalPos(), self.hover_text, self.widget)
            return True
        return super().eventFilter(watched, event)

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


class SpotRefs:
    """The :class:`SpotRef` of each (accelerator, role, index), made once: spots that did not
    change then carry the same object, which :meth:`Spots.set_spots` tells by identity."""

    def __init__(self) -> None:
        self._refs: dict[tuple[str, str, int], SpotRef] = {}

    def __call__(self, accelerator_id: str, role: str, index: int = 0) -> SpotRef:
        key = (accelerator_id, role, index)
        ref = self._refs.get(key)
        if ref is None:
            ref = self._refs[key] = SpotRef(accelerator_id, role, index)
        return ref


def spot_tip(tip_for: Callable[[SpotRef], str]) -> Callable[..., str]:
    """A :class:`Spots` tool tip (pyqtgraph passes x, y and the spot's data) from the spot's ref."""
    return lambda x, y, data: tip_for(data)


def select_on_click(spots: Iterable[Spots], lines: LineSet | None, select: Callable[[str], None]) -> None:
    """A left click on any of ``spots`` or on a line of ``lines`` (keyed by (accelerator id, ...))
    selects the accelerator it stands for."""
    for item in spots:
        item.sigClicked.connect(lambda _item, points, _event: select(points[0].data().accelerator) if len(points)
                                else None)
    if lines is not None:
        lines.sigClicked.connect(lambda key: select(key[0]))
