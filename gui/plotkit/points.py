"""Points and lines on log-log plots, many per item: :class:`Spots` (markers that know what
they stand for, through a :class:`SpotRef`) and :class:`LineSet` (many lines, each with its own
pen, drawn by one item); :class:`SteadyBounds`, which holds a view's auto-range still while the
data moves a little; and :func:`log_log_plot`, a plot with a legend beside it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainterPath, QPainterPathStroker, QPen, QTransform

try:  # a C array of QLineF filled from numpy, as pyqtgraph's own curves use for segments
    from pyqtgraph.Qt.internals import PrimitiveArray
except ImportError:  # an older pyqtgraph: every line is drawn as a path
    PrimitiveArray = None

from ..look.style import style_plot
from .axes import log_axes
from .legend import AcceleratorLegend
from .plot import add_plot
from .text import PlotTitle


@dataclass(frozen=True)
class SpotRef:
    """What a spot of a plot stands for; stored in each spot's ``data``.

    ``role`` names the plot element ("roof", "tier", "ridge", "prefill", "decode" on the
    roofline; "sweep", "current" on the batch sweep); ``index`` is the tier (position in
    ``Roofline.slopes``) or the column of ``Frame.sweep_batches``."""

    accelerator: str
    role: str
    index: int = 0


def _view(values: np.ndarray, log: bool) -> np.ndarray:
    """Data units to view coordinates: log10 on a log axis (what PlotDataItem does)."""
    values = np.asarray(values, dtype=float)
    if not log:
        return values
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(values)


def _objects(values) -> np.ndarray:
    """An object array of ``values`` as they are: assigning a list to an object array makes
    numpy ask every element whether it is a sequence (~90 us for a thousand refs, ~200 us
    for two hundred pens), which fromiter does not."""
    return np.fromiter(values, dtype=object, count=len(values))


MAX_TIPS_SHOWN = 3  # distinct spots named in one tool tip, at most


class Spots(pg.ScatterPlotItem):
    """The markers of one role (a plot element: the decode points, the ridges, ...) for every
    shown accelerator, in one item.

    pyqtgraph pays a fixed Python cost per item at every paint (bounds, the view mask, the
    transform), about 0.16 ms for a scatter item: one item per accelerator and role made that
    cost grow with the accelerators shown. Here each spot has its own symbol, size, pen and
    brush, and carries a :class:`SpotRef` as its data, which tells hover tips and clicks which
    accelerator it stands for. Positions are in data units; on log axes the item places them
    at log10 itself (``setLogMode``), as PlotDataItem would.

    :meth:`set_spots` moves the spots in place when only their positions or data changed
    (a few µs; setData rebuilds every spot and looks its symbol up again), and does nothing
    when nothing did. Pens and brushes should be made once and passed again: pyqtgraph
    renders a symbol once per (symbol, size, pen, brush) and keys it on their identity.
    """

    def __init__(self, *, tip, symbol: str = "o", size: float = 10.0, hover_only: bool = False, **style) -> None:
        super().__init__(symbol=symbol, size=size, hoverable=True, tip=tip, **style)
        self._log = (False, False)
        self._x = np.empty(0)
        self._y = np.empty(0)
        self._refs: list = []
        self._styled: tuple | None = None  # what the spots were last styled with
        self._by_style: tuple[np.ndarray, tuple] | None = None  # (style ids, styles) of set_styled_spots
        self._style_columns: tuple[tuple, dict] | None = None  # (styles, each style column as an array)
        if hover_only:
            # Targets to be hovered and clicked, not seen: the view need not paint them (it
            # still finds them under the mouse). Painting them cost as much as visible ones.
            self.setFlag(self.GraphicsItemFlag.ItemHasNoContents, True)

    def setLogMode(self, x: bool, y: bool) -> None:
        self._log = (bool(x), bool(y))
        self._styled = None  # place every spot again
        by_style, self._by_style = self._by_style, None
        if by_style is not None:
            self.set_styled_spots(self._x, self._y, self._refs, *by_style)
        else:
            self.set_spots(self._x, self._y, self._refs)

    def hoverEvent(self, event) -> None:
        """The tool tip of the spots under the mouse, one line of text per spot it stands for,
        and only if no item above has claimed this hover.

        pyqtgraph hands one hover event to every item under the mouse, topmost first, and
        each scatter item sets the view's tool tip from its own spots: the last (the lowest,
        e.g. the hover targets along lines) overwrote a point's tip, and two targets of one
        line under the cursor gave its text twice. The event is shared by the items of one
        pass, so the first item with spots there marks it."""
        claimed = getattr(event, "spot_tip_claimed", False)
        view_box = self.getViewBox()
        tip = self.opts["tip"]
        if claimed or view_box is None or tip is None:
            return
        if event.exit:  # the mouse left this item and no other claimed the pass
            if view_box.toolTip():
                view_box.setToolTip("")
            return
        # The spot nearest the pointer first (then the one drawn on top): overlapping markers
        # of several accelerators are all named, the one pointed at first.
        pointer = self.mapToScene(event.pos())
        hovered = sorted(self.points()[self._maskAt(event.pos())][::-1],
                         key=lambda spot: (self.mapToScene(spot.pos()) - pointer).manhattanLength())
        texts: list[str] = []
        for spot in hovered:
            text = tip(x=spot.pos().x(), y=spot.pos().y(), data=spot.data())
            if text and text not in texts:
                texts.append(text)
        if texts:
            event.spot_tip_claimed = True
            shown = texts[:MAX_TIPS_SHOWN] + ([f"({len(texts) - MAX_TIPS_SHOWN} more)"] if len(texts) > MAX_TIPS_SHOWN else [])
            view_box.setToolTip("\n\n".join(shown))
        elif view_box.toolTip():
            view_box.setToolTip("")

    def set_spots(self, x, y, refs, *, symbols=None, sizes=None, pens=None, brushes=None) -> None:
        """Show one spot per (x, y) in data units, each carrying its ref; ``symbols``,
        ``sizes``, ``pens`` and ``brushes`` are per spot, or None for the item's default."""
        x, y, refs = np.asarray(x, dtype=float), np.asarray(y, dtype=float), list(refs)
        style = (
            len(refs),
            None if symbols is None else tuple(symbols),
            None if sizes is None else np.asarray(sizes, dtype=float).tobytes(),
            None if pens is None else tuple(map(id, pens)),
            None if brushes is None else tuple(map(id, brushes)),
        )
        same_place = (
            style == self._styled and np.array_equal(x, self._x) and np.array_equal(y, self._y)
            and all(a is b for a, b in zip(refs, self._refs, strict=True))
        )
        if same_place:
            return
        self._x, self._y, self._refs = x, y, refs
        self._by_style = None
        view_x, view_y = _view(x, self._log[0]), _view(y, self._log[1])
        styles = {key: value for key, value in
                  (("symbol", symbols), ("size", sizes), ("pen", pens), ("brush", brushes)) if value is not None}
        if self._styled is None or style[0] != self._styled[0] or any(
                (new is None) != (old is None) for new, old in zip(style[1:], self._styled[1:], strict=True)):
            data = _objects(refs)
            self.setData(x=view_x, y=view_y, data=data, **{key: list(value) for key, value in styles.items()})
            self._styled = style
            return
        # The same number of spots: what setData does, for the spots that changed only.
        self.prepareGeometryChange()
        self.data["x"], self.data["y"] = view_x, view_y
        self.data["data"] = _objects(refs)
        if style != self._styled:
            restyled = np.zeros(len(refs), dtype=bool)
            for key, values in styles.items():
                column = self.data[key]
                if key in ("pen", "brush"):  # made once by the panels: told apart by identity
                    changed = (np.fromiter(map(id, column), dtype=np.int64, count=len(refs))
                               != np.fromiter(map(id, values), dtype=np.int64, count=len(refs)))
                elif key == "size":
                    changed = column != np.asarray(values, dtype=float)
                else:
                    changed = np.fromiter((a != b for a, b in zip(column, values, strict=True)),
                                          dtype=bool, count=len(refs))
                for index in np.flatnonzero(changed):  # few, usually: no array of Qt objects built
                    column[index] = values[index]
                restyled |= changed
            self.data["sourceRect"][restyled] = 0  # their symbols are looked up again
            self._styled = style
            self.updateSpots()
        self.bounds = [None, None]  # the cached data bounds
        self.informViewBoundsChanged()
        self.invalidate()
        self.sigPlotChanged.emit(self)

    def set_styled_spots(self, x, y, refs, style_ids, styles: tuple) -> None:
        """:meth:`set_spots` for many spots drawn a few ways: ``styles`` lists the ways, each
        ``(symbol, size, pen, brush)``, and ``style_ids`` says which way each spot is drawn
        (an index into ``styles``; pass the same tuple again while the ways stay the same).

        pyqtgraph finds a restyled spot's symbol in its atlas one spot at a time (~2.5 us a
        spot: the sweep restyles hundreds when a change moves where its batches fit); here each
        way is looked up once, and the spots take their styles and symbols by one gather."""
        x, y, refs = np.asarray(x, dtype=float), np.asarray(y, dtype=float), list(refs)
        style_ids = np.asarray(style_ids, dtype=np.intp)
        if not len(x) == len(y) == len(refs) == len(style_ids):
            raise ValueError(f"{len(x)} x, {len(y)} y, {len(refs)} refs and {len(style_ids)} styles: one of each a spot")
        if len(style_ids) and not 0 <= style_ids.min() <= style_ids.max() < len(styles):
            raise ValueError(f"style ids from {style_ids.min()} to {style_ids.max()} for {len(styles)} styles")
        held = self._by_style
        if (held is not None and (held[1] is styles or held[1] == styles) and np.array_equal(held[0], style_ids)
                and np.array_equal(x, self._x) and np.array_equal(y, self._y)
                and all(a is b for a, b in zip(refs, self._refs, strict=True))):
            return
        view_x, view_y = _view(x, self._log[0]), _view(y, self._log[1])
        data = _objects(refs)
        if len(self.data) != len(refs):
            self.setData(x=view_x, y=view_y, data=data)  # the number changed: made again, then styled
        else:
            self.prepareGeometryChange()
            self.data["x"], self.data["y"] = view_x, view_y
            self.data["data"] = data
        self._x, self._y, self._refs = x, y, refs
        self._styled = None  # set_spots, if called next, styles every spot itself
        self._by_style = (style_ids, styles)
        if self._style_columns is None or self._style_columns[0] is not styles:
            self._style_columns = (styles, {
                column: (np.array(values, dtype=float) if column == "size" else _objects(values))
                for column, values in zip(("symbol", "size", "pen", "brush"),
                                          zip(*styles, strict=True) if styles else ((),) * 4, strict=True)})
        for column, table in self._style_columns[1].items():
            self.data[column] = table[style_ids]
        if self.opts["pxMode"] and self.opts["useCache"]:
            used = np.flatnonzero(np.bincount(style_ids, minlength=len(styles)))
            rects = np.zeros(len(styles), dtype=self.data["sourceRect"].dtype)
            if used.size:
                rects[used] = self.fragmentAtlas[[styles[i] for i in used.tolist()]]
            self.data["sourceRect"] = rects[style_ids]
            self._maybeRebuildAtlas()  # as updateSpots does: the atlas is not left to grow
            self._updateMaxSpotSizes(data=self.data)
        else:
            self.updateSpots()
        self.bounds = [None, None]  # the cached data bounds
        self.informViewBoundsChanged()
        self.invalidate()
        self.sigPlotChanged.emit(self)

    def move_spots(self, x, y) -> None:
        """Move the spots shown (data units, one per spot, in the same order), keeping what
        each stands for and how it is drawn: for a caller that knows only positions changed,
        without building and comparing every spot's style as :meth:`set_spots` does."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if len(x) != len(self._refs) or len(y) != len(self._refs):
            raise ValueError(f"{len(x)} x and {len(y)} y for {len(self._refs)} spots: set_spots changes their number")
        if np.array_equal(x, self._x) and np.array_equal(y, self._y):
            return
        self._x, self._y = x, y
        self.prepareGeometryChange()
        self.data["x"], self.data["y"] = _view(x, self._log[0]), _view(y, self._log[1])
        self.bounds = [None, None]  # the cached data bounds
        self.informViewBoundsChanged()
        self.invalidate()
        self.sigPlotChanged.emit(self)

    def shown_spots(self) -> tuple[np.ndarray, np.ndarray, list]:
        """(x, y, refs) of the spots shown, in data units."""
        return self._x, self._y, list(self._refs)

    def spot_style(self, index: int, name: str):
        """The symbol, size, pen or brush a spot is drawn with (its own, else the item's)."""
        value = self.data[name][index]
        if name == "size":
            return float(self.opts["size"]) if value < 0 else float(value)
        return self.opts[name] if value is None else value

    def index_of(self, accelerator_id: str, role: str | None = None) -> int | None:
        """The first spot of an accelerator (and role), or None."""
        for i, ref in enumerate(self._refs):
            if ref.accelerator == accelerator_id and (role is None or ref.role == role):
                return i
        return None


@dataclass
class _Path:
    """One line of a :class:`LineSet`: its data (data units), how it is drawn, and its path."""

    x: np.ndarray
    y: np.ndarray
    connect: np.ndarray | str
    pen: QPen
    z: float = 0.0
    visible: bool = True
    bounded: bool = True  # counts in the view's auto range
    # The line as a path in view coordinates, made when first asked for (see LineSet._path):
    # the screen draws most lines as segments and never needs it.
    path: QPainterPath | None = field(default_factory=QPainterPath)
    view_x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    view_y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    path_connect: np.ndarray | str = "all"
    # View-coordinate extent of the path's points ((x low, x high), (y low, y high)), or None.
    extent: tuple[tuple[float, float], tuple[float, float]] | None = None
    # The path's segments, [x0, y0, x1, y1] a row in view coordinates, and the same in device
    # pixels for the transform last painted with (see LineSet.paint).
    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    device_lines: object = None  # a PrimitiveArray of QLineF
    device_transform: tuple | None = None
    as_segments: bool = field(init=False)  # whether its pen draws it as separate segments (set with the pen)

    def __post_init__(self) -> None:
        self.as_segments = _segments_look_the_same(self.pen)


class LineSet(pg.GraphicsObject):
    """Many lines, each with its own pen, drawn by one item, in z order.

    A PlotCurveItem costs pyqtgraph's per-item Python at every paint and on every change
    (its bounds, pixel padding and the scene's index: ~4 bounding-rect calls per paint), which
    with forty lines on a plot was a large part of each frame. Here each line is a key
    (e.g. ``(accelerator id, "roof")``) with its data in data units (placed at log10 on log
    axes, as PlotDataItem would), its pen, z order and visibility; the item keeps one path per
    line and one bounding rect for all. A click within ``CLICK_WIDTH_PX`` of a line emits
    :attr:`sigClicked` with the key of the topmost such line.
    """

    CLICK_WIDTH_PX = 8.0
    sigClicked = Signal(object)  # the key of the line clicked

    def __init__(self, *, cached: bool = False) -> None:
        """``cached``: keep the drawn lines as a picture, redrawn only when a line or the view's
        scale changes. Antialiased 2-px lines are slow to stroke (~0.1 ms for a diagonal across
        the plot: forty roofs cost 4.7 ms a paint), while the picture is copied in a fraction of
        that; worth it where the lines stay put while other items move (the roofs under the
        operating points), not where they change with every control."""
        super().__init__()
        self._cached = cached
        if cached:
            self.setCacheMode(self.CacheMode.DeviceCoordinateCache)
        self._lines: dict[object, _Path] = {}
        self._log = (False, False)
        self._order: list[_Path] | None = None  # visible lines by z, when known
        self._extent: list | None = None  # [all visible, bounded visible] extents, when known
        self._rect: QRectF | None = None  # bounding rect, when known (depends on the view's scale)
        self._deferring = 0  # inside changes(): the geometry change is made once, at the end
        self._deferred = False

    # ---- lines ---------------------------------------------------------------------------

    def setLogMode(self, x: bool, y: bool) -> None:
        self._log = (bool(x), bool(y))
        self.set_lines([(key, line.x, line.y, line.connect) for key, line in self._lines.items()])

    def set_line(self, key: object, x, y, connect: np.ndarray | str = "all", *, pen: QPen | None = None,
                 bounded: bool = True) -> None:
        """Set a line's points (data units); ``connect`` as PlotCurveItem takes it (a bool per
        point: join it to the next). A new key needs a pen."""
        line = self._lines.get(key)
        if line is None:
            if pen is None:
                raise ValueError(f"line {key!r}: a new line needs a pen")
            self._lines[key] = _Path(np.empty(0), np.empty(0), "all", pen, bounded=bounded)
            self._order = None
        self.set_lines([(key, x, y, connect)])

    def set_lines(self, lines: list[tuple[object, np.ndarray, np.ndarray, np.ndarray | str]]) -> None:
        """Set many lines' points at once, each ``(key, x, y, connect)`` of a key set before
        (:meth:`set_line` is the case of one): their view coordinates, extents and segments are
        worked out together, in one numpy pass (one at a time, ~15 us a line; the sweep sets
        seventy a change, the roofline a hundred when a precision changes)."""
        if not lines:
            return  # nothing changed: the item is not repainted
        placed = []  # (line, connect) of the lines with points to place
        for key, x, y, connect in lines:
            line = self._lines[key]
            line.x, line.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            line.connect = connect
            connect = _joined(connect)
            if connect is None or not len(line.x):
                line.path, line.extent = QPainterPath(), None
            else:
                placed.append((line, connect))
            line.device_transform = None
        self._extent = None
        if placed:
            lengths = np.fromiter((len(line.x) for line, _ in placed), dtype=np.int64, count=len(placed))
            firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            x = _view(np.concatenate([line.x for line, _ in placed]), self._log[0])
            y = _view(np.concatenate([line.y for line, _ in placed]), self._log[1])
            finite = np.logical_and.reduceat(np.isfinite(x) & np.isfinite(y), firsts)
            extents = [np.minimum.reduceat(x, firsts), np.maximum.reduceat(x, firsts),
                       np.minimum.reduceat(y, firsts), np.maximum.reduceat(y, firsts)]
            joins = np.zeros(len(x), dtype=bool)  # joins[i]: a segment from point i to i + 1
            for (_line, connect), first, length in zip(placed, firsts.tolist(), lengths.tolist(), strict=True):
                joins[first + _segment_starts(connect, length)] = True
            starts = np.flatnonzero(joins)
            segments = np.column_stack([x[starts], y[starts], x[starts + 1], y[starts + 1]])
            counts = np.add.reduceat(joins, firsts)
            ends = np.cumsum(counts)
            for n, (line, connect) in enumerate(placed):
                first, last = int(firsts[n]), int(firsts[n] + lengths[n])
                if finite[n]:
                    line.path, line.path_connect = None, connect
                    line.view_x, line.view_y = x[first:last], y[first:last]
                    line.extent = ((float(extents[0][n]), float(extents[1][n])),
                                   (float(extents[2][n]), float(extents[3][n])))
                    line.segments = segments[ends[n] - counts[n]:ends[n]]
                else:  # a line that cannot be placed is not drawn (as PlotDataItem drops it)
                    line.path, line.extent = QPainterPath(), None
                    line.segments = np.zeros((0, 4))
        self._changed()

    def set_style(self, key: object, *, pen: QPen | None = None, z: float | None = None,
                  visible: bool | None = None) -> None:
        """Restyle a line; what does not change costs nothing."""
        line = self._lines[key]
        changed = False
        if pen is not None and pen is not line.pen:
            line.pen, line.as_segments, changed = pen, _segments_look_the_same(pen), True
        if z is not None and z != line.z:
            line.z, changed, self._order = z, True, None
        if visible is not None and visible != line.visible:
            line.visible, changed, self._order = visible, True, None
            self._extent = None
        if changed:
            self._changed()

    @contextmanager
    def changes(self):
        """Set and restyle many lines with one geometry change for all: each change alone tells
        the scene and the view that the item moved (~40 us, which seventy lines pay per frame)."""
        self._deferring += 1
        try:
            yield self
        finally:
            self._deferring -= 1
            if not self._deferring and self._deferred:
                self._deferred = False
                self._changed()

    def _changed(self, geometry: bool = True) -> None:
        if self._deferring:
            self._deferred = True
            return
        if geometry:
            self.prepareGeometryChange()
            self._rect = None
            self.informViewBoundsChanged()
        self.update()

    # ---- read back -------------------------------------------------------------------------

    def line_keys(self) -> list:
        return list(self._lines)

    def original(self, key: object) -> tuple[np.ndarray, np.ndarray]:
        """A line's (x, y) in data units."""
        return self._lines[key].x, self._lines[key].y

    def view_path(self, key: object) -> QPainterPath:
        """A line's path as drawn, in view coordinates (log10 on log axes)."""
        return self._path(self._lines[key])

    @staticmethod
    def _path(line: _Path) -> QPainterPath:
        if line.path is None:
            # Finite points, checked when the line was set.
            line.path = pg.arrayToQPath(line.view_x, line.view_y, connect=line.path_connect, finiteCheck=False)
        return line.path

    def connection(self, key: object) -> np.ndarray | str:
        return self._lines[key].connect

    def pen(self, key: object) -> QPen:
        return self._lines[key].pen

    def z(self, key: object) -> float:
        return self._lines[key].z

    def is_shown(self, key: object) -> bool:
        return key in self._lines and self._lines[key].visible and self.isVisible()

    # ---- drawing -------------------------------------------------------------------------

    def _visible(self) -> list[_Path]:
        if self._order is None:
            self._order = sorted((line for line in self._lines.values() if line.visible), key=lambda line: line.z)
        return self._order

    def _extents(self) -> list:
        """[(x range, y range) of every visible line, ... of those that count in the view's
        auto range], each None when there is none."""
        if self._extent is None:
            self._extent = []
            for lines in (self._visible(), [line for line in self._visible() if line.bounded]):
                extents = [line.extent for line in lines if line.extent is not None]
                if not extents:
                    self._extent.append(None)
                    continue
                self._extent.append((
                    (min(e[0][0] for e in extents), max(e[0][1] for e in extents)),
                    (min(e[1][0] for e in extents), max(e[1][1] for e in extents)),
                ))
        return self._extent

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        extent = self._extents()[1]
        return (None, None) if extent is None else extent[ax]

    def pixelPadding(self) -> float:
        return max((line.pen.widthF() for line in self._visible()), default=0.0) / 2 + 1

    def boundingRect(self) -> QRectF:
        if self._rect is None:
            extent = self._extents()[0]
            if extent is None:
                self._rect = QRectF()
            else:
                (x0, x1), (y0, y1) = extent
                px, py = self.pixelVectors()
                pad = self.pixelPadding()
                pad_x = 0.0 if px is None else px.length() * pad
                pad_y = 0.0 if py is None else py.length() * pad
                self._rect = QRectF(x0 - pad_x, y0 - pad_y, x1 - x0 + 2 * pad_x, y1 - y0 + 2 * pad_y)
        return self._rect

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()
        self._rect = None  # the padding is in pixels

    def setExportMode(self, export: bool, opts=None) -> bool:
        # Exports draw the lines themselves (an SVG keeps them as vectors), not the cached picture.
        if self._cached:
            self.setCacheMode(self.CacheMode.NoCache if export else self.CacheMode.DeviceCoordinateCache)
        return super().setExportMode(export, opts)

    def paint(self, painter, *args) -> None:
        exporting = self._exportOpts is not False
        antialias = self._exportOpts.get("antialias", True) if exporting else pg.getConfigOption("antialias")
        painter.setRenderHint(painter.RenderHint.Antialiasing, antialias)
        transform = painter.transform()
        # Qt strokes a polyline wider than a pixel as one outline (joins and all) and fills it,
        # ~3x slower than the same segments drawn as separate lines, which its raster engine
        # draws directly (~5 against ~2 ms for forty 2-px lines): segments, in device pixels,
        # wherever they look the same: an opaque cosmetic pen with flat or square ends (at each
        # joint the ends overlap in one colour), and no rotation. Exports keep their paths.
        segmented = (PrimitiveArray is not None and not exporting and painter.combinedTransform() == transform
                     and transform.type().value <= QTransform.TransformationType.TxScale.value)
        scale = (transform.m11(), transform.m22(), transform.dx(), transform.dy())
        in_pixels = False  # the painter set to device pixels, for the runs of lines drawn as segments
        try:
            for line in self._visible():
                if line.extent is None:  # an empty path (a dashed part where there is none) draws nothing
                    continue
                painter.setPen(line.pen)
                if segmented and line.as_segments:
                    if not in_pixels:
                        painter.setWorldTransform(QTransform())
                        in_pixels = True
                    painter.drawLines(*self._device_lines(line, scale))
                else:
                    if in_pixels:
                        painter.setWorldTransform(transform)
                        in_pixels = False
                    painter.drawPath(self._path(line))
        finally:
            if in_pixels:
                painter.setWorldTransform(transform)

    @staticmethod
    def _device_lines(line: _Path, scale: tuple[float, float, float, float]) -> tuple:
        """A line's segments in device pixels, as drawLines takes them (kept while the transform holds)."""
        if line.device_transform != scale:
            if line.device_lines is None:
                line.device_lines = PrimitiveArray(QLineF, 4)
            line.device_lines.resize(len(line.segments))
            m11, m22, dx, dy = scale
            device = line.device_lines.ndarray()
            device[:, 0::2] = line.segments[:, 0::2] * m11 + dx
            device[:, 1::2] = line.segments[:, 1::2] * m22 + dy
            line.device_transform = scale
        return line.device_lines.drawargs()

    # ---- clicks --------------------------------------------------------------------------

    def key_at(self, pos: QPointF) -> object | None:
        """The key of the topmost visible line within CLICK_WIDTH_PX of ``pos`` (item
        coordinates), or None."""
        view = self.getViewWidget()
        if view is None:
            return None
        to_device = self.deviceTransform(view.viewportTransform())
        stroker = QPainterPathStroker()
        stroker.setWidth(self.CLICK_WIDTH_PX)
        device_pos = to_device.map(pos)
        for line in reversed(self._visible()):
            if line.extent is not None and stroker.createStroke(to_device.map(self._path(line))).contains(device_pos):
                return next(key for key, value in self._lines.items() if value is line)
        return None

    def mouseClickEvent(self, event) -> None:
        key = self.key_at(event.pos()) if event.button() == Qt.MouseButton.LeftButton else None
        if key is None:
            event.ignore()
            return
        event.accept()
        self.sigClicked.emit(key)


def _joined(connect: np.ndarray | str) -> np.ndarray | str | None:
    """``connect`` as a line is drawn: None where no point joins the next (a dashed part where
    there is none), "all" where every point does (pyqtgraph's quicker path for whole lines:
    ~4 against ~16 us a line)."""
    if isinstance(connect, np.ndarray):
        joins = connect[:-1]
        if not joins.any():
            return None
        if joins.all():
            return "all"
    return connect


def _segment_starts(connect: np.ndarray | str, n: int) -> np.ndarray:
    """The points from which a segment runs to the next, for ``connect`` as arrayToQPath takes it."""
    if isinstance(connect, np.ndarray):
        return np.flatnonzero(connect[:-1])
    if connect == "pairs":
        return np.arange(0, n - 1, 2)
    return np.arange(n - 1)  # "all"


def _segments_look_the_same(pen: QPen) -> bool:
    """Whether a line drawn as separate segments looks as the path would (see LineSet.paint)."""
    return (pen.isCosmetic() and pen.color().alpha() == 255 and pen.brush().style() == Qt.BrushStyle.SolidPattern
            and pen.capStyle() in (Qt.PenCapStyle.FlatCap, Qt.PenCapStyle.SquareCap))


# The range a SteadyBounds holds (per axis, in view coordinates: decades on a log axis).
STEADY_ROOM = 0.08  # set anew: the data's span, and this share of it free on each side...
STEADY_MIN_ROOM = 0.1  # ...but at least this much (a tenth of a decade)
STEADY_FILL = 0.7  # kept while the data stays inside it and spans at least this share of it


def steady_range(held: tuple[float, float] | None, low: float, high: float) -> tuple[float, float]:
    """The range to hold for data spanning [low, high]: ``held`` while the data lies inside it
    and fills at least STEADY_FILL of it, else the data with room on each side."""
    if held is not None and held[0] <= low and high <= held[1] and high - low >= STEADY_FILL * (held[1] - held[0]):
        return held
    room = max(STEADY_ROOM * (high - low), STEADY_MIN_ROOM)
    return (low - room, high + room)


class SteadyBounds(pg.GraphicsObject):
    """An invisible item whose bounds hold the plot's data with room to spare (:func:`steady_range`).

    A view that auto-ranges to its data moves with every change of it, and each move lays its
    axes out anew (~6 ms for the two log axes of the batch sweep, with every accelerator shown),
    while the eye loses its bearings as the scale slides under the curves. With this item in
    the plot the auto-range follows its bounds instead: the scale holds while the curves move
    inside it, and is set anew only when they leave it or shrink well inside it. The items
    drawing the data keep their own bounds, which lie inside these."""

    def __init__(self) -> None:
        super().__init__()
        self._ranges: tuple[tuple[float, float] | None, tuple[float, float] | None] = (None, None)

    def follow(self, x: np.ndarray, y: np.ndarray) -> None:
        """Hold the points (view coordinates; those not finite are left out); none: no bounds."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        placed = np.isfinite(x) & np.isfinite(y)
        if not placed.any():
            ranges: tuple = (None, None)
        else:
            x, y = x[placed], y[placed]
            ranges = (steady_range(self._ranges[0], float(x.min()), float(x.max())),
                      steady_range(self._ranges[1], float(y.min()), float(y.max())))
        if ranges != self._ranges:
            self.prepareGeometryChange()
            self._ranges = ranges
            self.informViewBoundsChanged()

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        held = self._ranges[ax]
        return (None, None) if held is None else held

    def boundingRect(self) -> QRectF:
        (x_range, y_range) = self._ranges
        if x_range is None or y_range is None:
            return QRectF()
        return QRectF(x_range[0], y_range[0], x_range[1] - x_range[0], y_range[1] - y_range[0])

    def paint(self, painter, *args) -> None:
        """Nothing is drawn."""


def log_log_plot(*, title: str, x_label: str, x_unit: str, y_label: str, y_unit: str,
                 describe: Callable[[str], tuple[str, str]], on_select: Callable[[str], None]
                 ) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem, AcceleratorLegend]:
    """A log-log plot with plain-number axes and, beside it, a legend whose rows select
    (``describe`` and ``on_select`` as :class:`AcceleratorLegend` takes them)."""
    graphics = pg.GraphicsLayoutWidget()
    plot: pg.PlotItem = add_plot(graphics, row=0, col=0, axisItems=log_axes())
    plot.setLogMode(True, True)
    PlotTitle(plot)  # a title that breaks onto two lines, so the plot can narrow for its legend
    style_plot(plot, title=title, x_label=x_label, x_unit=x_unit, y_label=y_label, y_unit=y_unit)
    plot.setMenuEnabled(False)
    legend = AcceleratorLegend(graphics.ci, describe, on_select)
    graphics.ci.layout.setColumnStretchFactor(0, 1)
    return graphics, plot, legend
