"""The base of every plot panel: a view of the latest Frame that can select an accelerator."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.accelerator import Accelerator
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs
from accelscope.engine.text.summary import accelerator_short_name

from ..look import palette
from ..look.style import plot_font
from ..plotkit.axes import axes_of, draw_axis_ahead
from ..plotkit.fit import ShownText, texts_in
from ..plotkit.snapshot import ViewSnapshot
from ..plotkit.text import FigureText, WrappedLabel

# Rounds of pyqtgraph's deferred work, layout and axes in Panel.prepare_paint: the work, an axis
# that widens for its labels, the plot laid out for it, the view's range fitted to its new width.
PREPARE_PASSES = 3


def accelerator_label(accelerator: Accelerator) -> str:
    """A short name for legends: the catalog name without the vendor and parentheses."""
    return accelerator_short_name(accelerator)


def _setting_text(label: QLabel) -> str:
    """A control's label and the value it shows ("Rate: 2.000 req/s"); empty for other labels."""
    control = label.buddy()
    if isinstance(control, QComboBox):
        value = control.currentText()
    elif isinstance(control, QAbstractSpinBox):
        value = control.text()
    else:
        return ""
    name = label.text().replace("&", "").rstrip(" :")
    return f"{name}: {value}" if name[-1:] not in "≤≥<>=" else f"{name} {value}"


def reference_note_label(html: str) -> QLabel:
    """The legend entry of the pinned scenario's ghosts: rich text, hidden until A is pinned."""
    label = WrappedLabel(html)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setFont(plot_font())
    label.setContentsMargins(8, 2, 8, 2)
    label.setVisible(False)
    return label


class PageStack(QWidget):
    """A tab's pages, one shown at a time, that asks for the room of the page shown alone. A
    QStackedWidget asks for its largest page's (its layout measures hidden pages too): the tall
    cost sweep, hidden, made the energy page beside it scroll on a projector. Here the pages
    share a box layout, which leaves hidden widgets out."""

    def __init__(self) -> None:
        super().__init__()
        self._pages: list[QWidget] = []
        self._current = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)

    def addWidget(self, page: QWidget) -> None:
        self._pages.append(page)
        self.layout().addWidget(page, 1)
        page.setVisible(len(self._pages) - 1 == self._current)

    def currentIndex(self) -> int:
        return self._current

    def setCurrentIndex(self, index: int) -> None:
        if index == self._current or not 0 <= index < len(self._pages):
            return
        # Show the new page before hiding the old, so the tab never lays out with neither.
        self._pages[index].setVisible(True)
        self._pages[self._current].setVisible(False)
        self._current = index


class Panel(QWidget):
    """A tab of the main window.

    Subclasses create their plot items once and update them with ``setData`` in
    :meth:`update_frame`; they emit :attr:`accelerator_selected` when the user clicks an
    accelerator's bar or point, and highlight the selected one in :meth:`set_selected`.
    :meth:`plotted` returns what is currently drawn (read back from the plot items, in display
    units), so tests can compare it with the engine.

    In compare mode :attr:`reference` is the pinned scenario A's Frame: panels that draw it
    (as ghosts behind the current scenario) override :meth:`_apply_reference`, and show
    :attr:`reference_note` (the legend entry for the ghosts) only while comparing.
    """

    title: str = ""
    accelerator_selected = Signal(str)
    # Whether update_frame draws the selection (``self.selected``) with the frame: the window
    # then sets it before the update rather than applying it again after (set_selected).
    update_applies_selection = False

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        # Opaque: repainting the panel (every frame) then does not repaint the tab widget's
        # frame beneath it first.
        self.setAutoFillBackground(True)
        self.frame: Frame | None = None
        self.selected: str | None = None
        self.reference: Frame | None = None
        self.reference_note: QLabel | None = None  # made by panels that draw ghosts
        self._graphics_views: list[pg.GraphicsView] | None = None  # found once: panels make their plots up front
        self._axes: dict[pg.GraphicsView, list[pg.AxisItem]] | None = None  # each view's plots' axes, likewise
        self._snapshots: dict[pg.GraphicsView, ViewSnapshot] = {}  # pictures drawn ahead while hidden
        self._laid_out = False  # a tab never shown nor laid out hidden: its plots have no size to draw at

    def _views(self) -> list[pg.GraphicsView]:
        """The panel's plot views, found once (panels make their plots up front)."""
        if self._graphics_views is None:
            self._graphics_views = self.findChildren(pg.GraphicsView)
        return self._graphics_views

    def prepare_paint(self) -> None:
        """Finish the plots' deferred work now, so that the next paint draws each plot once.

        pyqtgraph leaves a view's auto-range, the axes that follow it and text placement until the
        view is about to paint; what that changes then marks the plot dirty again, and Qt paints
        the whole plot a second time (1.5-1.8 paints per change were counted on the bar and sweep
        tabs). Running it here, then the layouts it invalidated and the axes' pictures (a hidden
        tab brought up to date while the controls rest is then shown without laying out its
        ticks and labels, ~3 ms of a bar tab's switch), then the scene's queued marking of changed
        items, leaves nothing for the paint to change. (Delivering that marking may paint the
        window there and then: all the rest must be done before it.)"""
        if not self._views():
            return
        if self._axes is None:
            self._axes = {view: axes_of(view) for view in self._graphics_views}
        for _ in range(PREPARE_PASSES):
            for view in self._graphics_views:
                view.scene().prepareForPaint()
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
            # An axis laid out may find its labels wider than its room and widen (pyqtgraph does
            # this in the paint, after which the plot was laid out and painted again): it does so
            # here, the second pass lays the plot out for it, and the third fits the view's range
            # to its new width (the lines' padding is in pixels).
            for view, axes in self._axes.items():
                if view.isVisibleTo(self):  # not the plots of a page the panel does not show (Serving's run page)
                    for axis in axes:
                        draw_axis_ahead(axis)
        for view in self._graphics_views:
            QCoreApplication.sendPostedEvents(view.scene(), QEvent.Type.MetaCall.value)

    def snapshot_due(self, drawn: set) -> ViewSnapshot | None:
        """A plot of the page shown in this (hidden) tab whose picture is not yet drawn ahead
        (:mod:`plotkit.snapshot`), and not among ``drawn``, if any."""
        if not self._laid_out:
            return None
        for view in self._views():
            if not view.isVisibleTo(self):
                continue
            snapshot = self._snapshots[view]  # made for each view once the page is laid out
            if snapshot.due and snapshot not in drawn:
                return snapshot
        return None

    def showEvent(self, event) -> None:
        self.laid_out()
        super().showEvent(event)

    def laid_out(self) -> None:
        """The page has its size and layout: shown, or laid out while hidden (PageTabs.lay_out_hidden_page).
        Each plot's snapshot is made here, once, rather than the first time its tab is due to
        be drawn ahead: that can first happen many changes later, and the objects a window
        holds should not grow with the changes replayed in it."""
        if not self._laid_out:
            self._snapshots = {view: ViewSnapshot(view) for view in self._views()}
            self._laid_out = True

    def drop_snapshots(self) -> None:
        """Forget the pictures drawn ahead: the panel is about to draw something else. (The
        scene's own report of a change drops them too; this is in case a repaint of the tab
        comes before that report is delivered.)"""
        for snapshot in self._snapshots.values():
            snapshot.drop()

    def update_frame(self, frame: Frame) -> None:
        raise NotImplementedError

    def describe_accelerator(self, accelerator_id: str) -> tuple[str, str]:
        """(legend label, marker symbol) of an accelerator, for :class:`plotkit.legend.AcceleratorLegend`."""
        accelerator = self.catalog.accelerators[accelerator_id]
        return accelerator_label(accelerator), palette.symbol_for(accelerator.architecture_class)

    def retire(self) -> None:
        """The panel is about to go (the window closes, or new tabs replace it): stop work it
        runs in the background; none by default."""

    def explanation_sections(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Sections this tab adds to the explain panel while it is shown (e.g. the Serving tab's
        run); none by default."""
        return ()

    def set_selected(self, accelerator_id: str | None) -> None:
        self.selected = accelerator_id
        self._apply_selection()

    def _apply_selection(self) -> None:
        """Restyle the items for ``self.selected``; panels that highlight it override this."""

    def set_reference(self, frame: Frame | None) -> None:
        """Pin scenario A (its Frame) to be drawn behind the current one, or unpin (None)."""
        self.reference = frame
        if self.reference_note is not None:
            self.reference_note.setVisible(frame is not None)
        self._apply_reference()

    def _apply_reference(self) -> None:
        """Draw (or remove) the ghosts of ``self.reference``; panels that draw them override this."""

    def _reference_columns(self) -> np.ndarray:
        """For each row of the current frame, A's column for that accelerator; -1 where A did
        not show it (or nothing is pinned)."""
        frame, reference = self.frame, self.reference
        if frame is None:
            return np.empty(0, dtype=np.int64)
        if reference is None:
            return np.full(len(frame.accelerators), -1, dtype=np.int64)
        columns = {a: j for j, a in enumerate(reference.accelerators)}
        return np.array([columns.get(a, -1) for a in frame.accelerators], dtype=np.int64)

    def _reference_values(self, name: str) -> np.ndarray | None:
        """One output (a field of ``results.Result``, e.g. ``"itl_s"``) of the pinned scenario A for each row of the current
        frame, NaN where A did not show the accelerator; None when nothing is pinned."""
        if self.reference is None or self.frame is None:
            return None
        columns = self._reference_columns()
        return np.where(columns >= 0, Outputs(self.reference.current).row(name)[np.maximum(columns, 0)], np.nan)

    def plotted(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def shown_texts(self) -> list[ShownText]:
        """The texts the panel's plots draw where it is shown, and whether each shows whole."""
        views = [view for view in self.findChildren(pg.GraphicsView) if view.isVisibleTo(self)]
        return [text for view in views for text in texts_in(view, self.title)]

    def figure_parts(self) -> list[QWidget | FigureText]:
        """What an export draws of the tab as shown, top to bottom: its plot canvases (pyqtgraph
        views, or widgets that paint themselves with ``paint_canvas``), the captions and legends
        beside them as text, and the tab's own settings as one line of text ("Devices in the
        node: 8 devices"). Not its controls, nor the tables and side forms in scroll areas (their
        data goes to the CSV export)."""
        found: list[tuple[int, int, QWidget | FigureText | str]] = []

        def visit(parent: QWidget) -> None:
            for child in parent.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
                if not child.isVisibleTo(self):
                    continue
                place = child.mapTo(self, QPoint(0, 0))
                if isinstance(child, pg.GraphicsView) or hasattr(child, "paint_canvas"):
                    found.append((place.y(), place.x(), child))
                elif isinstance(child, WrappedLabel):
                    if child.text():
                        found.append((place.y(), place.x(), FigureText.of_label(child)))
                elif isinstance(child, QLabel):
                    setting = _setting_text(child)
                    if setting:
                        found.append((place.y(), place.x(), setting))
                elif not isinstance(child, (QAbstractScrollArea, QGroupBox)):
                    visit(child)

        visit(self)
        parts: list[QWidget | FigureText] = []
        settings: list[str] = []
        for _y, _x, part in sorted(found, key=lambda entry: entry[:2]):
            if isinstance(part, str):
                settings.append(part)
                continue
            if settings:
                parts.append(FigureText(" · ".join(settings), plot_font(), self._ink()))
                settings = []
            parts.append(part)
        if settings:
            parts.append(FigureText(" · ".join(settings), plot_font(), self._ink()))
        return parts

    def _ink(self) -> QColor:
        return QColor(self.palette().color(QPalette.ColorRole.WindowText))

    def figure_accelerators(self) -> tuple[str, ...]:
        """The accelerators the tab's figure is about: every shown one by default."""
        return self.frame.accelerators if self.frame is not None else ()

    def accelerator_name(self, accelerator_id: str) -> str:
        """An accelerator as the legends name it (its id only if the catalog has no entry)."""
        accelerator = self.catalog.accelerators.get(accelerator_id)
        return accelerator_label(accelerator) if accelerator is not None else accelerator_id

    # -- rows: one per shown accelerator, in the frame's order ------------------------------

    def _rows(self) -> int:
        return len(self.frame.accelerators) if self.frame is not None else 0

    def _selected_row(self) -> int | None:
        if self.frame is None or self.selected not in self.frame.accelerators:
            return None
        return self.frame.index(self.selected)

    def _rows_selected_last(self) -> list[int]:
        """Every row, the selected one last: drawn last, it stays on top of the others."""
        chosen = self._selected_row()
        return [r for r in range(self._rows()) if r != chosen] + ([] if chosen is None else [chosen])

    def _row(self, row: int) -> tuple[str, np.ndarray, str]:
        """(accelerator id, its column of kernel outputs, its display name) for a row."""
        accelerator_id = self.frame.accelerators[row]
        accelerator = self.catalog.accelerators.get(accelerator_id)
        name = accelerator.name if accelerator is not None else accelerator_id
        return accelerator_id, self.frame.current[:, row], name

    def _clicked(self, row: int) -> None:
        if self.frame is not None:
            self.accelerator_selected.emit(self.frame.accelerators[row])
