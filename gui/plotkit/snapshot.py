"""A hidden plot's picture, drawn ahead, so that showing its tab copies it instead of drawing
the whole scene while the user waits.

A switch to a tab paints every plot on its page (10-25 ms a page at 1600x1000 with every
accelerator shown: antialiased lines, markers, axes and their labels). While the controls rest,
the window brings its hidden tabs up to date one at a time; :class:`ViewSnapshot` then draws
each of their plots into a pixmap, one plot per turn of the event loop. The first paint after
the tab is shown copies that pixmap, if nothing has changed since: the scene has not reported
a change (``QGraphicsScene.changed``) and the view has the same size, transform and scene
rectangle (presentation mode's zoom changes these, not the scene). The pixmap is used once;
every later paint draws the scene as before. Its scene is no longer deactivated when the view
is hidden (see :meth:`ViewSnapshot.eventFilter`).

The scene's report of a change is listened to only while a picture is held: a scene with any
listener to ``changed`` takes Qt's older update path, in which the view repaints the whole of
itself at nearly every change (the legend, the title and every axis of the sweep beside its
curves, ~1.5 ms of legend alone), and in which Qt makes the view a listener too. Both listeners
go once the picture is used or dropped, and the scene is back on the path where each change
repaints only what it touched."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import SIGNAL, SLOT, QCoreApplication, QEvent, QObject
from PySide6.QtGui import QPainter, QPixmap


class ViewSnapshot(QObject):
    """The picture of one view's plots, taken while it is hidden and shown once."""

    def __init__(self, view: pg.GraphicsView) -> None:
        super().__init__(view)
        self.view = view
        self.pixmap: QPixmap | None = None
        self._key: tuple | None = None
        self._taking = False
        self.used = 0  # paints served from a snapshot (for tests and figures)
        self._listening = False  # to the scene's report of a change: only while a picture is held
        scene = view.scene()
        scene.installEventFilter(self)
        if not scene.isActive():  # made active now, while hidden, and kept so (see eventFilter)
            QCoreApplication.sendEvent(scene, QEvent(QEvent.Type.WindowActivate))
        view.viewport().installEventFilter(self)

    def _state(self) -> tuple:
        """What, besides the scene, decides what the view draws."""
        view = self.view
        transform = view.transform()
        return (view.viewport().size().toTuple(), view.sceneRect().getRect(),
                (transform.m11(), transform.m12(), transform.m21(), transform.m22(), transform.dx(), transform.dy()),
                view.horizontalScrollBar().value(), view.verticalScrollBar().value())

    @property
    def valid(self) -> bool:
        return self.pixmap is not None and self._key == self._state()

    @property
    def due(self) -> bool:
        """Not drawn for the view as it is, and the view has a size to draw at."""
        viewport = self.view.viewport()
        return not self.valid and viewport.width() > 0 and viewport.height() > 0

    def take(self) -> None:
        """Draw the view into the snapshot now (the view hidden; nothing to do if shown or not due)."""
        viewport = self.view.viewport()
        if viewport.isVisible() or not self.due:
            return
        scene = self.view.scene()
        # Changes queued before this picture (the scene's activation, see __init__) are reported first.
        QCoreApplication.sendPostedEvents(scene, QEvent.Type.MetaCall.value)
        self._listen(True)
        self._taking = True
        try:
            pixmap = viewport.grab()
            # The changes the paint itself made (pyqtgraph finishes its ranges then) are in the picture.
            QCoreApplication.sendPostedEvents(scene, QEvent.Type.MetaCall.value)
        finally:
            self._taking = False
        self.pixmap, self._key = pixmap, self._state()

    def drop(self) -> None:
        self.pixmap = self._key = None
        self._listen(False)

    def _listen(self, on: bool) -> None:
        """Listen to the scene's report of a change, or stop (see the module's note); stopping
        also takes away the view's own listener, which Qt adds on the older path. A view
        hidden meanwhile misses nothing by it: shown again, it is painted whole."""
        if on == self._listening:
            return
        scene = self.view.scene()
        if on:
            scene.changed.connect(self._scene_changed)
        else:
            scene.changed.disconnect(self._scene_changed)
            QObject.disconnect(scene, SIGNAL("changed(QList<QRectF>)"), self.view, SLOT("updateScene(QList<QRectF>)"))
        self._listening = on

    def _scene_changed(self, _rects) -> None:
        if not self._taking:
            self.drop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.WindowDeactivate and watched is self.view.scene():
            # A view hidden (its tab left) deactivates its scene, and shown again activates it:
            # each time every widget item of the scene repaints, though nothing drawn here
            # depends on it, and the scene reports that as a change, which would drop the
            # snapshot whenever a tab is shown. The scene stays active instead.
            return True
        if event.type() != QEvent.Type.Paint or self._taking or self.pixmap is None:
            return False
        if not self.valid or not self.view.isVisible():
            self.drop()
            return False
        painter = QPainter(self.view.viewport())
        try:
            painter.drawPixmap(0, 0, self.pixmap)
        finally:
            painter.end()
        self.drop()  # once: what the view draws next comes from the scene
        self.used += 1
        return True
