"""Horizontal bar charts with one row per item (an accelerator, a strategy), as the memory,
latency, energy and analysis tabs draw them.

Rows run top to bottom (row i at y = i on an inverted y axis). Values spanning orders of
magnitude are drawn as log10(value) bars from a common base on a :class:`LogValueAxis`,
because ``BarGraphItem`` has no log mode. ``BarGraphItem`` has no tooltips or click signal
either: :class:`picking.RowPicker` maps the scene's mouse moves and clicks to the row under
the cursor.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPaintEngine, QPen
from PySide6.QtWidgets import QGraphicsView, QLabel, QVBoxLayout, QWidget

from ..look import theme
from ..look.style import plot_brush, plot_colour, plot_pen, style_plot
from .axes import GridAxis, LogValueAxis, RowAxis, opaque_over
from .plot import add_plot
from .text import TextPool, swatch

BAR_HEIGHT = 0.7  # of a row
OUTLINE_WIDTH = 1.5
SELECTED_OUTLINE = "#000000"
SELECTED_OUTLINE_WIDTH = 3.5
SELECTION_BAND = (255, 196, 0, 55)  # light amber behind the selected row
MAX_TEXT_SHARE = 0.7  # of a plot's width, at most, for the value written beside a bar
VIEW_WIDTH_STEP_PX = 16  # a bar plot's least width moves in these steps (see LogBarPlot)
LEAST_SIZE_STEP_PX = 24  # a plot canvas' least size moves in these steps (see RowCanvas)
TEXT_GAP_PX = 3.0  # between a bar and its text (which has a margin of its own)
FALLBACK_VIEW_PX = 300.0  # before the first layout
NO_FIT_PATTERN = Qt.BrushStyle.BDiagPattern  # hatching for scenarios that do not fit
NO_FIT_PATTERN_LIGHT = Qt.BrushStyle.FDiagPattern  # the same, on a lighter second bar of a row
RIGHT_END_STEP = 0.05  # decades: the right end of a log bar axis moves in steps of this
# The pinned scenario A behind each bar: a faint grey bar to A's value, ended by a tick that
# shows on any bar colour (black, ringed in white), a little taller than the bar.
REFERENCE_FILL = (0, 0, 0, 38)
REFERENCE_TICK_PX = 4.0
REFERENCE_TICK_OVERHANG = 1.2  # of the bar's height
REFERENCE_Z, REFERENCE_TICK_Z = -1.0, 4.0  # the faint bar beneath the bars, the tick over them


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


_NO_PEN = QPen(Qt.PenStyle.NoPen)


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
    for every row. Texts may take at most 70% of the plot."""
    room = np.maximum(view_px - np.minimum(text_px, MAX_TEXT_SHARE * view_px), 1.0)
    spans = (ends - base) * view_px / room
    return base + float(max(np.max(spans, initial=0.0), 1.0))


def log_bar_widths(values: np.ndarray, base: float) -> np.ndarray:
    """Length of each bar from ``base`` to log10(value); zero where there is no value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log10(values)
    return np.where(np.isfinite(logs) & (values > 0), np.maximum(logs - base, 0.0), 0.0)


def row_plot(layout: pg.GraphicsLayout, row: int, col: int, *, title: str | None, x_label: str,
             x_unit: str | None, log_x: bool, row_labels: bool, status_axis: bool = False) -> pg.PlotItem:
    """A plot with one row per accelerator, y inverted so the first is at the top; fixed
    ranges (set by the panel), no mouse panning or zooming, no context menu."""
    axes: dict[str, pg.AxisItem] = {"left": RowAxis("left")}
    axes["bottom"] = LogValueAxis("bottom") if log_x else GridAxis("bottom")
    if status_axis:
        axes["right"] = RowAxis("right")
    plot = add_plot(layout, row=row, col=col, axisItems=axes)
    style_plot(plot, title=title, x_label=x_label, x_unit=x_unit, y_label="", y_unit=None)
    plot.getAxis("bottom").enableAutoSIPrefix(False)
    left = plot.getAxis("left")
    left.showLabel(False)
    left.setGrid(False)  # rows need no horizontal rules; the bars line up with their labels
    if not row_labels:
        left.setStyle(showValues=False)
        left.setWidth(1)
    elif title:
        # The title over the names and the bars together: over the bars alone, the plot was
        # never narrower than its names and its title side by side, and three such plots made
        # a projector's tab scroll sideways.
        plot.layout.removeItem(plot.titleLabel)
        plot.layout.addItem(plot.titleLabel, 0, 0, 1, 2)
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


def reference_bars_note() -> str:
    """The legend of the pinned scenario's ghost bars (in the current plot theme)."""
    tick = "light tick" if theme.current().dark else "black tick"
    return ("<b>ghost: A (pinned)</b> — "
            + swatch("#C4C4C4", "faint grey bar to A's value")
            + " &nbsp; "
            + swatch("#000000", f"{tick}: where A's bar ends", glyph="┃")
            + " &nbsp; (hover a row for A's values)")


class Bars(pg.BarGraphItem):
    """pyqtgraph's bar item, drawn straight onto the screen.

    With a pen or brush per bar, ``BarGraphItem`` records its bars into a QPicture whenever
    they change (at most changes of a bar tab) and plays it at each paint: both cost more than
    drawing the bars, ~0.3 ms for forty. On the screen the bars are drawn at each paint, their
    pen and brush set only when they change from the bar before; other painters (an SVG
    export) get pyqtgraph's own picture."""

    def paint(self, p, *args) -> None:
        engine = p.paintEngine()
        if self._singleColor or engine is None or engine.type() != QPaintEngine.Type.Raster:
            super().paint(p, *args)
            return
        rects = self._rectarray.instances()
        pens, brushes = self._pens, self._brushes
        if pens is None and brushes is not None and self._sharedPen.style() == Qt.PenStyle.NoPen:
            for rect, brush in zip(rects, brushes, strict=False):
                p.fillRect(rect, brush)
            return
        if pens is None:
            p.setPen(self._sharedPen)
        if brushes is None:
            p.setBrush(self._sharedBrush)
        pen = brush = None
        for i, rect in enumerate(rects):
            if pens is not None and pens[i] is not pen:
                pen = pens[i]
                p.setPen(pen)
            if brushes is not None and brushes[i] is not brush:
                brush = brushes[i]
                p.setBrush(brush)
            p.drawRect(rect)


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


class RowCanvas(pg.GraphicsLayoutWidget):
    """The panels' plot area. ``resized`` is emitted once the plots are given a new width, so
    texts can be refitted in pixels: when the canvas is resized, and when presentation mode
    zooms its scene (gui/look/display.py), which narrows or widens the plots without resizing
    the widget. Both change the view's range: ``GraphicsView.setRange`` lays the plots out in
    it, then calls ``updateMatrix``, where the width is looked at. Not when only the height
    changed (a refit lays every text out again). (A ViewBox's own sigResized also fires while
    the scene is being torn down, when touching its items crashes; a closed view tells nothing.)"""

    resized = Signal()
    _told_width: float | None = None  # the plots' width (scene pixels) ``resized`` last told of
    _least = QSize(0, 0)  # the plots' least size the widget's minimum size hint last gave

    def __init__(self) -> None:
        super().__init__()
        # A change repaints the bounding rectangle of what it touched, not the exact region:
        # a change moves most rows' bars and texts, and the region of their many small
        # rectangles made every item of the paint draw under a clip of many rectangles, on
        # Qt's slower path for lines and outlines (the grid, the bars' edges). Latency tab, 60
        # mixed changes, two interleaved pairs: view paint 5.6/5.3 -> 4.0/4.0 ms a change.
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.ci.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:
        """The plots' least size (their titles, axes, row labels a line apart, their texts'
        room), zoom included: a page that cannot give it scrolls (gui/windows/pages.py) rather
        than cut the plots, and the numbers beside their bars, at its edge, or run their rows'
        names into each other."""
        return self._least.expandedTo(super().minimumSizeHint())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The plots' layout asks to be laid out again (an axis, a title or the rows changed).
        if event.type() == QEvent.Type.LayoutRequest and watched is getattr(self, "ci", None):
            self._tell_least_size()
        return False

    def paintEvent(self, event) -> None:
        # Laying the plots out can change their least size again (an axis' tick labels widen
        # it once the axis has its new length) without asking for another layout.
        self._tell_least_size()
        super().paintEvent(event)

    def _tell_least_size(self) -> None:
        """Tell the page when the plots' least size (in the widget's pixels) changed."""
        layout = getattr(self, "ci", None)  # None while pyqtgraph sets the view up
        if layout is None or self.closed:
            return
        least = layout.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        zoom = max(1.0, self.width() / max(self.scene_width(), 1.0))  # presentation mode zooms the scene
        frame = 2 * self.frameWidth()
        width = _stepped(self._least.width(), math.ceil(least.width() * zoom) + frame)
        size = QSize(width, _stepped(self._least.height(), math.ceil(least.height() * zoom) + frame))
        if size != self._least:
            self._least = size
            self.updateGeometry()

    def updateMatrix(self, propagate: bool = True) -> None:
        super().updateMatrix(propagate)
        width = self.scene_width()
        # pyqtgraph calls this while it sets the view up, before it has its plots.
        if width != self._told_width and getattr(self, "centralWidget", None) is not None and not self.closed:
            self._told_width = width
            self.resized.emit()
            self._tell_least_size()  # the zoom may have changed with the width

    def scene_width(self) -> float:
        """The width the plots are given, in their own pixels: the widget's, or less while
        presentation mode zooms the scene. (The view's range, not the plots' laid-out width,
        which stays at their least width when the range is narrower than that: the plots
        are told, so they can share out less.)"""
        return float(self.range.width())

    def settle(self) -> None:
        """Lay the plots out now, after an axis changed width, so their sizes are current: the
        canvas' grid, then each plot's own (which places its view box between its axes)."""
        self.ci.layout.activate()
        for item in self.ci.items:
            if isinstance(item, pg.PlotItem):
                item.layout.activate()


def _stepped(told: int, needed: int) -> int:
    """A least size in steps: raised at once to the step that holds ``needed``, lowered only
    when two steps too large. An axis' tick labels widen and narrow it a little with every
    range; each new least size lays the page out again (and, where the page is at its least,
    resizes the canvas and repaints every plot)."""
    stepped = math.ceil(needed / LEAST_SIZE_STEP_PX) * LEAST_SIZE_STEP_PX
    return stepped if stepped > told or stepped <= told - 2 * LEAST_SIZE_STEP_PX else told


def hold_least_width(view: pg.ViewBox, needed: int, rows: object, rows_told: object) -> bool:
    """Give a plot's view the least width its texts need (``needed`` pixels) when it is
    narrower than that, and lower it only when its rows changed (``rows`` against the rows it
    was last set for): a new least width lays the page out again and repaints every plot,
    and the texts change width with every frame. Whether it was set."""
    current = view.minimumWidth()
    if (needed > current and needed > view.width()) or (rows != rows_told and needed < current):
        view.setMinimumWidth(needed)
        return True
    return False


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
            item = Bars(x0=[], width=[], y=[], height=height, brush=plot_brush("k"), pen=plot_pen("k"))
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
        # Whether the view keeps a least width for its texts (off where a panel shares the
        # width among its plots itself, from needed_view_px).
        self.keeps_room_for_texts = True
        self._room_rows = 0  # the rows the least width was last set for
        self._colours: list[str] = []
        self._fits = np.zeros(0, bool)
        self._selected_row: int | None = None
        self._drawn: dict[str, np.ndarray] = {}  # per series, the rows that have a bar
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
        for key, offset, height, alpha in self.series:
            widths = log_bar_widths(values[key], base)
            self._drawn[key] = widths > 0
            set_bars(self.items[key], np.full(n, base), widths, rows + offset, height=height,
                     brushes=self._brushes(alpha), pens=self._pens(key))
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
        self._keep_room_for_texts()

    def _keep_room_for_texts(self) -> None:
        """The view's least width: its widest text in its share of it, so a narrow tab scrolls
        rather than cut "1.12 M" at the plot's edge. Raised, in steps, only when the view is
        narrower than that, and lowered only when the rows change: a new least width lays the
        page out again (~1-5 ms with its notes) and the texts change width on every frame."""
        if not self.keeps_room_for_texts:
            return
        needed = math.ceil(self.needed_view_px() / VIEW_WIDTH_STEP_PX) * VIEW_WIDTH_STEP_PX
        rows = len(self._labels)
        if hold_least_width(self.plot.vb, needed, rows, self._room_rows):
            self._room_rows = rows
            # Lay the plots out now, before they paint, and place the texts in the new width.
            grid = self.plot.parentItem()
            if isinstance(grid, pg.GraphicsLayout):
                grid.layout.activate()
                self.plot.layout.activate()
                self.fit_x_range()  # this least width again: nothing more to lay out

    def needed_view_px(self) -> float:
        """The narrowest view (pixels) in which :meth:`fit_x_range` leaves every row's text
        its room beside the bars (a text may take MAX_TEXT_SHARE of the view)."""
        text_px = self.texts.widths_of(self._labels) + TEXT_GAP_PX
        return float(np.max(text_px, initial=0.0)) / MAX_TEXT_SHARE

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
            for key, item in self.items.items():
                set_pens(item, self._pens(key))

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

    def colours(self) -> list[str]:
        """Each row's bar colour, as given to :meth:`update`."""
        return list(self._colours)

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

    def _pens(self, key: str) -> list[QPen]:
        """Each bar's outline; none where the row has no bar (a value not known), which would
        otherwise be drawn as a hairline at the base, like a value near zero."""
        drawn = self._drawn.get(key)
        return [outline(colour, i == self._selected_row) if drawn is None or drawn[i] else _NO_PEN
                for i, colour in enumerate(self._colours)]
