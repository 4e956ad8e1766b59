"""The roofline panel: each shown accelerator's roofline, with the scenario's prefill and
decode operating points on it.

Everything drawn comes from the Frame: the lines from its Roofline objects, the points from
the kernel outputs (FLOPs, bytes and time per device). The panel only scales to display
units (TFLOP/s) and picks the intensity range the lines span.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from accelscope.engine import codes
from accelscope.engine import kernels as k
from accelscope.engine.accelerator import Accelerator
from accelscope.engine.catalog import Catalog
from accelscope.engine.frame import Frame
from accelscope.engine.roofline import Roofline, RooflineSlope

from .. import palette
from ..style import LINE_WIDTH, PLOT_FONT_POINTS, pen, plot_font, style_plot
from .bars import GridAxis
from .base import Panel

TFLOPS = 1e12  # display unit of the performance axis
INTENSITY_RANGE = (0.1, 1e5)  # FLOP/byte, widened to take in every operating point
POINTS_PER_DECADE = 12  # hover targets about every 14 px on a 1000 px plot (the lines are straight in log-log)

MARKER_SIZE = 13.0
SELECTED_MARKER_SIZE = 19.0
RIDGE_SIZE = 9.0  # smaller than the operating points, and it does not grow when selected
SELECTED_LINE_WIDTH = 4.5
HOVER_TARGET_SIZE = 16.0  # invisible markers along lines that carry their tool tip
NO_BRUSH = pg.mkBrush(None)  # hollow markers (one object: pyqtgraph caches symbols by brush identity)

LEVEL_NAMES = {"on-chip": "on-chip", "device": "device memory", "far": "far tier"}


@dataclass(frozen=True)
class SpotRef:
    """What a spot of a plot stands for; stored in each spot's ``data``.

    ``role`` names the plot element ("roof", "tier", "ridge", "prefill", "decode" on the
    roofline; "sweep", "current" on the batch sweep); ``index`` is the tier (position in
    ``Roofline.slopes``) or the column of ``Frame.sweep_batches``."""

    accelerator: str
    role: str
    index: int = 0


def accelerator_label(accelerator: Accelerator) -> str:
    """A short name for legends: the catalog name without the vendor and parentheses."""
    name = accelerator.name
    if name.startswith(accelerator.vendor + " "):
        name = name[len(accelerator.vendor) + 1 :]
    name = name.split(" (")[0].strip()
    return name or accelerator.id


def number(value: float) -> str:
    """Three significant digits, thousands separated: 0.0123, 14.3, 989, 15,500."""
    if not np.isfinite(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{float(f'{value:.3g}'):,.0f}"
    return f"{value:.3g}"


def bandwidth_text(bandwidth_Bps: float) -> str:
    if bandwidth_Bps >= 1e12:
        return f"{number(bandwidth_Bps / 1e12)} TB/s"
    return f"{number(bandwidth_Bps / 1e9)} GB/s"


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def tick_text(value: float) -> str:
    """0.001 … 99,999 as plain numbers, powers of ten beyond."""
    value = float(f"{value:.3g}")
    if 1e-3 <= abs(value) < 1e5:
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"
    exponent = int(np.floor(np.log10(abs(value))))
    mantissa = round(value / 10.0**exponent, 2)
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if mantissa == 1 else f"{mantissa:g}·{power}"


class LogAxis(GridAxis):
    """Log-axis tick labels that read at a glance: plain numbers, every decade labelled, and
    minor ticks labelled at 2 and 5 only when a decade is long enough on screen (all of them
    when it is very long), so labels never run into each other."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)  # keep the unit as labelled (no 'kTFLOP/s')

    def logTickStrings(self, values, scale, spacing):
        decades = max(abs(self.range[1] - self.range[0]), 1e-6)
        length = self.size().width() if self.orientation in ("top", "bottom") else self.size().height()
        per_decade = length / decades  # pixels
        labelled = {1, 2, 3, 4, 5, 6, 7, 8, 9} if per_decade > 700 else {1, 2, 5} if per_decade > 160 else {1}
        strings = []
        for v in values:
            value = 10.0 ** float(v) * scale
            mantissa = round(value / 10.0 ** np.floor(np.log10(value) + 1e-9))
            # None, not "": pyqtgraph would count an empty label's height and drop the level
            strings.append(tick_text(value) if spacing is not None or mantissa in labelled else None)
        return strings


def log_axes() -> dict[str, LogAxis]:
    return {"left": LogAxis("left"), "bottom": LogAxis("bottom")}


def is_hollow(item: pg.PlotDataItem) -> bool:
    return pg.mkBrush(item.opts["symbolBrush"]).style() == Qt.BrushStyle.NoBrush


class Marker(pg.ScatterPlotItem):
    """One marker that moves on every frame (an operating point, the current batch): a
    ScatterPlotItem holding at most one spot.

    A PlotDataItem (a curve and a scatter, with its dataset bookkeeping) takes about 150 µs
    to move its spot and ScatterPlotItem.setData about 50 µs (it rebuilds the spot and looks
    its symbol up again); moving the spot in place, when only its position changed, takes a
    few µs. That counts with two points per accelerator moving on every frame of a slider
    drag. (Moving in place writes ScatterPlotItem's spot record and drops its cached bounds,
    as setData does; tests/test_gui_roofline_sweep.py checks the spot lands where its data
    says.) It keeps the PlotDataItem calls the panels use — ``setLogMode``,
    ``getOriginalDataset``, ``scatter``, ``sigPointsClicked``, ``setSymbolSize`` and the
    ``symbol…`` entries of ``opts`` — so it stands where one was. Pens and brushes should be
    made once and passed again: pyqtgraph caches the rendered symbol by their identity.
    """

    def __init__(self, *, symbol: str, size: float, tip, pen=None, brush=None) -> None:
        super().__init__(symbol=symbol, size=size, pen=pen, brush=brush, hoverable=True, tip=tip)
        self.sigPointsClicked = self.sigClicked
        self._log = (False, False)
        self._xy: tuple[float, float] | None = None
        self._ref: object = None
        self.opts.update(symbol=symbol, symbolSize=size, symbolPen=pen, symbolBrush=brush)

    @property
    def scatter(self) -> Marker:
        return self

    def setLogMode(self, x: bool, y: bool) -> None:
        self._log = (bool(x), bool(y))
        self._place()

    def set_point(self, x: float, y: float, ref: object, *, symbol: str | None = None,
                  pen=None, brush=None, restyle: bool = False) -> None:
        """Put the spot at (x, y) in data units, carrying ``ref`` as its data. With
        ``restyle``, set its symbol (if given), pen and brush first."""
        if restyle:
            if symbol is not None:
                self.setSymbol(symbol, update=False)
                self.opts["symbol"] = symbol
            self.setPen(pen, update=False)
            self.setBrush(brush, update=False)
            self.opts.update(symbolPen=pen, symbolBrush=brush)
        self._xy, self._ref = (float(x), float(y)), ref
        self._place(rebuild=restyle)

    def clear_point(self) -> None:
        self._xy = None
        self._place()

    def _place(self, rebuild: bool = True) -> None:
        if self._xy is None:
            self.setData(x=[], y=[])
            return
        x, y = self._xy
        x, y = (np.log10(x) if self._log[0] else x), (np.log10(y) if self._log[1] else y)
        if rebuild or len(self.data) != 1:
            self.setData(x=[x], y=[y], data=[self._ref])
            return
        # The same spot, moved: what setData does after it has rebuilt the spot's style.
        self.prepareGeometryChange()
        self.data["x"][0], self.data["y"][0], self.data["data"][0] = x, y, self._ref
        self.bounds = [None, None]  # the cached data bounds
        self.informViewBoundsChanged()
        self.invalidate()
        self.sigPlotChanged.emit(self)

    def getOriginalDataset(self) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
        if self._xy is None:
            return None, None
        return np.array([self._xy[0]]), np.array([self._xy[1]])

    def setSymbolSize(self, size: float) -> None:
        self.setSize(size)
        self.opts["symbolSize"] = size


class SelectingSample(pg.ItemSample):
    """A legend sample that selects its accelerator when clicked (instead of hiding it)."""

    def mouseClickEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            event.accept()
            self.sigClicked.emit(self.item)


class AcceleratorLegend:
    """A legend beside the plot (not over the data): one row per shown accelerator, in its
    colour and class marker; clicking a row selects the accelerator; the selected row is bold."""

    def __init__(self, layout: pg.GraphicsLayout, catalog: Catalog, on_select) -> None:
        self.legend = pg.LegendItem(
            labelTextSize=f"{PLOT_FONT_POINTS}pt", sampleType=SelectingSample, verSpacing=-4, frame=False
        )
        layout.addItem(self.legend, row=0, col=1)
        # Keep the rows together at the top instead of spread over the plot's height.
        self.legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        layout.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.catalog = catalog
        self.on_select = on_select
        self.samples: dict[str, pg.PlotDataItem] = {}  # not in any plot: only drawn by the legend
        self.shown: tuple[str, ...] = ()
        self.selected: str | None = None

    def _sample(self, accelerator_id: str) -> pg.PlotDataItem:
        if accelerator_id not in self.samples:
            colour = palette.colour_for(accelerator_id)
            symbol = palette.symbol_for(self.catalog.accelerators[accelerator_id].architecture_class)
            self.samples[accelerator_id] = pg.PlotDataItem(
                pen=pen(colour), symbol=symbol, symbolBrush=colour, symbolPen=colour, symbolSize=11
            )
        return self.samples[accelerator_id]

    def show(self, accelerators: tuple[str, ...], selected: str | None) -> None:
        rebuilt = accelerators != self.shown
        if rebuilt:
            self.legend.clear()
            for accelerator_id in accelerators:
                self.legend.addItem(self._sample(accelerator_id), self._label(accelerator_id))
                sample, _label = self.legend.items[-1]
                sample.sigClicked.connect(lambda _item, a=accelerator_id: self.on_select(a))
            self.shown = accelerators
        if rebuilt or selected != self.selected:
            for (_sample, label), accelerator_id in zip(self.legend.items, self.shown, strict=True):
                label.setText(self._label(accelerator_id), bold=accelerator_id == selected, size=f"{PLOT_FONT_POINTS}pt")
            self.selected = selected

    def _label(self, accelerator_id: str) -> str:
        return accelerator_label(self.catalog.accelerators[accelerator_id])

    def labels(self) -> list[str]:
        return [label.text for _sample, label in self.legend.items]


@dataclass
class _RooflineItems:
    """The plot items of one accelerator, created the first time it is shown."""

    roof: pg.PlotDataItem  # min(peak, main-tier bandwidth x intensity)
    ridge: pg.PlotDataItem
    prefill: Marker
    decode: Marker
    tiers: list[pg.PlotDataItem] = field(default_factory=list)  # one per other tier, dashed
    drawn: tuple | None = None  # (roofline, x range) the lines were last drawn for
    styled_selected: bool | None = None  # whether the items are styled as the selected one
    # What each operating point was last drawn with: (intensity, achieved, fits) or None
    # when it is empty, so that a frame only touches the points that moved.
    points_drawn: dict[str, tuple | None] = field(default_factory=dict)
    tiers_used: int = 0  # tier lines the roofline has (the others are hidden)
    marker_styles: dict[bool, tuple] = field(default_factory=dict)  # fits -> (brush, pen), made once
    refs: dict[str, SpotRef] = field(default_factory=dict)  # phase -> the spot data, made once
    visible: bool = False

    def all(self) -> list[pg.GraphicsObject]:
        return [self.roof, self.ridge, self.prefill, self.decode, *self.tiers]


def log_log_plot(panel: Panel, *, title: str, x_label: str, x_unit: str, y_label: str, y_unit: str
                 ) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem, AcceleratorLegend]:
    """A log-log plot with plain-number axes and, beside it, a legend whose rows select."""
    graphics = pg.GraphicsLayoutWidget()
    plot: pg.PlotItem = graphics.addPlot(row=0, col=0, axisItems=log_axes())
    plot.setLogMode(True, True)
    style_plot(plot, title=title, x_label=x_label, x_unit=x_unit, y_label=y_label, y_unit=y_unit)
    plot.setMenuEnabled(False)
    legend = AcceleratorLegend(graphics.ci, panel.catalog, panel.accelerator_selected.emit)
    graphics.ci.layout.setColumnStretchFactor(0, 1)
    return graphics, plot, legend


class RooflinePanel(Panel):
    title = "Roofline"

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.graphics, self.plot, self.legend = log_log_plot(
            self, title="Roofline", x_label="Operational intensity", x_unit="FLOP/byte",
            y_label="Performance per device", y_unit="TFLOP/s",
        )

        self.note = QLabel(
            "Lines: attainable FLOP/s per device, min(peak, bandwidth × intensity). "
            "Solid: device memory (HBM; on-chip SRAM on SRAM machines); dashed: the other "
            "tiers (on-chip SRAM, host memory over PCIe or C2C). The class-shaped marker on each "
            "line is its ridge point. ▲ prefill, ● decode step of the current scenario; "
            "hollow: does not fit (hypothetical). Hover for values, click to select."
        )
        self.note.setWordWrap(True)
        self.note.setFont(plot_font())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, stretch=1)
        layout.addWidget(self.note)

        self.items: dict[str, _RooflineItems] = {}
        self._title = ""

    # ---- items ---------------------------------------------------------------------------

    def _hoverable(self, item: pg.PlotDataItem) -> pg.PlotDataItem:
        item.scatter.setData(hoverable=True, tip=self._tip)
        item.sigPointsClicked.connect(self._points_clicked)
        return item

    def _marker(self, symbol: str) -> Marker:
        marker = Marker(symbol=symbol, size=MARKER_SIZE, tip=self._tip)
        marker.sigPointsClicked.connect(self._points_clicked)
        return marker

    def _line(self, accelerator_id: str, *, dashed: bool) -> pg.PlotDataItem:
        """A line with invisible markers along it, so that hovering it shows a tip."""
        item = pg.PlotDataItem(
            pen=pen(palette.colour_for(accelerator_id), dashed=dashed),
            symbol="o",
            symbolSize=HOVER_TARGET_SIZE,
            symbolPen=None,
            symbolBrush=None,
        )
        item.setCurveClickable(True, width=8)
        # The curve itself (points report through sigPointsClicked).
        item.curve.sigClicked.connect(lambda _curve, _ev, a=accelerator_id: self.accelerator_selected.emit(a))
        # The markers are there to be hovered, not seen: the view need not paint them (it
        # still finds them under the mouse). Painting them cost as much as the visible ones.
        item.scatter.setFlag(item.scatter.GraphicsItemFlag.ItemHasNoContents, True)
        return self._hoverable(item)

    def _items_for(self, accelerator_id: str) -> _RooflineItems:
        if accelerator_id in self.items:
            return self.items[accelerator_id]
        colour = palette.colour_for(accelerator_id)
        symbol = palette.symbol_for(self.catalog.accelerators[accelerator_id].architecture_class)
        items = _RooflineItems(
            roof=self._line(accelerator_id, dashed=False),
            ridge=self._hoverable(
                pg.PlotDataItem(
                    pen=None, symbol=symbol, symbolSize=RIDGE_SIZE, symbolBrush=colour, symbolPen=pg.mkPen("w", width=1)
                )
            ),
            prefill=self._marker(palette.PREFILL_SYMBOL),
            decode=self._marker(palette.DECODE_SYMBOL),
        )
        for z, item in ((1, items.roof), (3, items.ridge), (4, items.prefill), (4, items.decode)):
            item.setZValue(z)
            self.plot.addItem(item)
        self.items[accelerator_id] = items
        return items

    def _tier_item(self, accelerator_id: str, items: _RooflineItems, n: int) -> pg.PlotDataItem:
        while len(items.tiers) <= n:
            item = self._line(accelerator_id, dashed=True)
            item.setZValue(0)
            # Far tiers reach far below the device roofs; they must not stretch the view.
            self.plot.addItem(item, ignoreBounds=True)
            items.tiers.append(item)
        return items.tiers[n]

    # ---- updates -------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        shown = set(frame.accelerators)
        for accelerator_id, items in self.items.items():
            if accelerator_id not in shown:
                self._show(items, False)

        intensity = {}
        for phase, flops_row, bytes_row in (("prefill", k.O_PRE_FLOPS, k.O_PRE_BYTES), ("decode", k.O_DEC_FLOPS, k.O_DEC_BYTES)):
            with np.errstate(divide="ignore", invalid="ignore"):
                intensity[phase] = frame.values(flops_row) / frame.values(bytes_row)
        x_range = self._intensity_range(np.concatenate(list(intensity.values())))

        current = frame.current
        fits = current[k.O_FITS]
        with np.errstate(divide="ignore", invalid="ignore"):
            achieved = {
                "prefill": current[k.O_PRE_FLOPS] / current[k.O_PRE_TIME] / TFLOPS,
                "decode": current[k.O_DEC_FLOPS] / current[k.O_DEC_TIME] / TFLOPS,
            }
        for j, accelerator_id in enumerate(frame.accelerators):
            items = self._items_for(accelerator_id)
            self._draw_lines(accelerator_id, items, frame.rooflines[j], x_range)
            self._show(items, True)
            for phase in ("prefill", "decode"):
                self._draw_point(items, accelerator_id, phase, float(intensity[phase][j]),
                                 float(achieved[phase][j]), bool(fits[j]))
        self._set_title(frame)
        self.legend.show(frame.accelerators, self.selected)
        self._apply_selection()

    @staticmethod
    def _show(items: _RooflineItems, visible: bool) -> None:
        """Show or hide an accelerator's items (only on a change: each call makes Qt work)."""
        if items.visible == visible:
            return
        for item in (items.roof, items.ridge, items.prefill, items.decode):
            item.setVisible(visible)
        for item in items.tiers[: items.tiers_used]:
            item.setVisible(visible)
        items.visible = visible

    @staticmethod
    def _intensity_range(operating_intensities: np.ndarray) -> tuple[float, float]:
        """The default range, widened by whole decades to take in every operating point."""
        low, high = INTENSITY_RANGE
        finite = operating_intensities[np.isfinite(operating_intensities) & (operating_intensities > 0)]
        if finite.size:
            low = min(low, 10.0 ** np.floor(np.log10(finite.min() / 2)))
            high = max(high, 10.0 ** np.ceil(np.log10(finite.max() * 2)))
        return float(low), float(high)

    def _draw_lines(self, accelerator_id: str, items: _RooflineItems, roof: Roofline, x_range: tuple[float, float]) -> None:
        key = (roof, x_range)
        if items.drawn == key:  # lines depend only on the device, precision and range
            return
        low, high = x_range
        n = round(np.log10(high / low) * POINTS_PER_DECADE) + 1
        main = roof.main_slope
        ridge = main.ridge_point(roof.peak_flops)
        x = np.geomspace(low, high, n)
        if low < ridge < high:
            x = np.union1d(x, [ridge])  # a sharp corner at the ridge
        y = np.minimum(roof.peak_flops, main.bandwidth_Bps * x) / TFLOPS
        items.roof.setData(x, y, data=[SpotRef(accelerator_id, "roof")] * len(x))
        if low <= ridge <= high:
            items.ridge.setData([ridge], [roof.peak_flops / TFLOPS], data=[SpotRef(accelerator_id, "ridge")])
        else:
            items.ridge.setData([], [])

        others = [(i, s) for i, s in enumerate(roof.slopes) if s is not main]
        for n_tier, (i, slope) in enumerate(others):
            end = min(slope.ridge_point(roof.peak_flops), high)
            item = self._tier_item(accelerator_id, items, n_tier)
            item.setVisible(items.visible)
            if end <= low:
                item.setData([], [])
                continue
            xt = np.geomspace(low, end, max(2, round(np.log10(end / low) * POINTS_PER_DECADE) + 1))
            item.setData(xt, slope.bandwidth_Bps * xt / TFLOPS, data=[SpotRef(accelerator_id, "tier", i)] * len(xt))
        for item in items.tiers[len(others) :]:
            item.setVisible(False)
        items.tiers_used = len(others)
        items.drawn = key

    def _marker_style(self, items: _RooflineItems, accelerator_id: str, fits: bool) -> tuple:
        """Brush and pen of an operating point: filled and ringed in black where the scenario
        fits, hollow in the accelerator's colour where it does not. Made once per state, so
        pyqtgraph's symbol cache (keyed on the pen and brush objects) keeps hitting."""
        if fits not in items.marker_styles:
            colour = palette.colour_for(accelerator_id)
            if fits:
                items.marker_styles[fits] = (pg.mkBrush(colour), pg.mkPen("k", width=1))
            else:
                items.marker_styles[fits] = (NO_BRUSH, pg.mkPen(colour, width=2.5))
        return items.marker_styles[fits]

    def _draw_point(self, items: _RooflineItems, accelerator_id: str, phase: str, intensity: float,
                    achieved: float, fits: bool) -> None:
        """Move an operating point; a point that did not move is not touched, and the marker
        is restyled only when its fit changes."""
        item = items.prefill if phase == "prefill" else items.decode
        last = items.points_drawn.get(phase, ())  # () never drawn, None drawn empty
        if not (np.isfinite(intensity) and intensity > 0 and np.isfinite(achieved) and achieved > 0):
            if last is not None:
                item.clear_point()
                items.points_drawn[phase] = None
            return
        state = (intensity, achieved, fits)
        if state == last:
            return
        restyle = not last or last[2] != fits
        brush, symbol_pen = self._marker_style(items, accelerator_id, fits)
        if phase not in items.refs:
            items.refs[phase] = SpotRef(accelerator_id, phase)
        item.set_point(intensity, achieved, items.refs[phase], pen=symbol_pen, brush=brush, restyle=restyle)
        items.points_drawn[phase] = state

    def _set_title(self, frame: Frame) -> None:
        precisions: dict[str, list[str]] = {}
        for roof in frame.rooflines:
            precisions.setdefault(roof.compute_precision.upper(), []).append(roof.accelerator_id)
        if not precisions:
            title = "Roofline"
        else:
            ranked = sorted(precisions, key=lambda p: -len(precisions[p]))
            title = f"Roofline — {ranked[0]} ceilings"
            for other in ranked[1:]:
                title += f"; {other} on {', '.join(precisions[other])}"
        if title != self._title:
            self.plot.setTitle(title, size=f"{PLOT_FONT_POINTS + 2}pt")
            self._title = title

    # ---- selection -----------------------------------------------------------------------

    def set_selected(self, accelerator_id: str | None) -> None:
        if self.frame is not None:
            self.legend.show(self.frame.accelerators, accelerator_id)
        super().set_selected(accelerator_id)  # then restyles the items

    def _apply_selection(self) -> None:
        """The selected accelerator: thicker roof, bigger points, drawn on top. The others keep
        their look, so the comparison stays readable."""
        for accelerator_id, items in self.items.items():
            chosen = accelerator_id == self.selected
            if items.styled_selected == chosen:
                continue  # restyling makes pyqtgraph redo the item: only on a change
            items.styled_selected = chosen
            colour = palette.colour_for(accelerator_id)
            items.roof.setPen(pen(colour, width=SELECTED_LINE_WIDTH if chosen else LINE_WIDTH))
            for item in (items.prefill, items.decode):
                item.setSymbolSize(SELECTED_MARKER_SIZE if chosen else MARKER_SIZE)
            lift = 10 if chosen else 0
            for z, item in ((1, items.roof), (3, items.ridge), (4, items.prefill), (4, items.decode)):
                item.setZValue(z + lift)

    def _points_clicked(self, _item, points, _event) -> None:
        if len(points):
            self.accelerator_selected.emit(points[0].data().accelerator)

    # ---- hover ---------------------------------------------------------------------------

    def _tip(self, x: float, y: float, data: SpotRef) -> str:
        return self.tip_for(data)

    def tip_for(self, ref: SpotRef) -> str:
        """The tool tip of a spot, from the current frame."""
        frame = self.frame
        if frame is None or ref.accelerator not in frame.accelerators:
            return ""
        accelerator = self.catalog.accelerators[ref.accelerator]
        roof = frame.roofline(ref.accelerator)
        if ref.role in ("prefill", "decode"):
            return self._point_tip(frame, accelerator, roof, ref.role)
        if ref.role == "tier":
            slope = roof.slopes[ref.index]
            return (
                f"{accelerator.name}\n{self._slope_text(slope, roof)}\n"
                f"{roof.compute_precision.upper()} peak: {number(roof.peak_flops / TFLOPS)} TFLOP/s"
            )
        lines = [
            f"{accelerator.name} — {roof.compute_precision.upper()} roofline",
            f"peak: {number(roof.peak_flops / TFLOPS)} TFLOP/s (sustained ≈ {number(roof.sustained_flops / TFLOPS)})",
        ]
        lines += [self._slope_text(s, roof) + (" (this line)" if s is roof.main_slope else "") for s in roof.slopes]
        return "\n".join(lines)

    @staticmethod
    def _slope_text(slope: RooflineSlope, roof: Roofline) -> str:
        return (
            f"{slope.tier_name} ({LEVEL_NAMES.get(slope.level, slope.level)}): "
            f"{bandwidth_text(slope.bandwidth_Bps)}, ridge {number(slope.ridge_point(roof.peak_flops))} FLOP/byte"
        )

    @staticmethod
    def _point_tip(frame: Frame, accelerator: Accelerator, roof: Roofline, phase: str) -> str:
        rows = {
            "prefill": (k.O_PRE_FLOPS, k.O_PRE_BYTES, k.O_PRE_TIME, k.O_PRE_BOUND),
            "decode": (k.O_DEC_FLOPS, k.O_DEC_BYTES, k.O_DEC_TIME, k.O_DEC_BOUND),
        }[phase]
        flops, bytes_, time_s, bound = (frame.value(row, accelerator.id) for row in rows)
        achieved = flops / time_s
        lines = [
            f"{accelerator.name} — {'prefill' if phase == 'prefill' else 'decode step'}",
            f"operational intensity: {number(flops / bytes_)} FLOP/byte",
            (
                f"achieved: {number(achieved / TFLOPS)} TFLOP/s per device "
                f"({achieved / roof.peak_flops:.1%} of the {roof.compute_precision.upper()} peak)"
            ),
            f"bound: {codes.BOUNDS[int(bound)]}",
        ]
        if not frame.value(k.O_FITS, accelerator.id):
            reason = codes.FIT_REASONS.get(int(frame.value(k.O_FIT_CODE, accelerator.id)), "")
            lines.append(f"does not fit (hypothetical): {reason}")
        elif frame.value(k.O_WAVES, accelerator.id) > 1:
            lines.append(f"KV cache does not fit: runs in {int(frame.value(k.O_WAVES, accelerator.id))} waves")
        return "\n".join(lines)

    # ---- read back -------------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn, read back from the items: intensities in FLOP/byte, performance in
        TFLOP/s, one entry per shown accelerator (NaN where a point is not drawn)."""
        shown = [a for a in (self.frame.accelerators if self.frame else ()) if self.items[a].roof.isVisible()]

        def first(item: pg.PlotDataItem) -> tuple[float, float]:
            x, y = item.getOriginalDataset()
            if x is None or len(x) == 0:
                return np.nan, np.nan
            return float(x[0]), float(y[0])

        out: dict[str, np.ndarray] = {"accelerators": np.array(shown, dtype=object)}
        for name in ("prefill", "decode", "ridge"):
            points = [first(getattr(self.items[a], name)) for a in shown]
            out[f"{name}_x"] = np.array([p[0] for p in points])
            out[f"{name}_y"] = np.array([p[1] for p in points])
        for name in ("prefill", "decode"):
            out[f"{name}_hollow"] = np.array([is_hollow(getattr(self.items[a], name)) for a in shown])
        out["roof_top_y"] = np.array([np.nanmax(self.items[a].roof.getOriginalDataset()[1]) for a in shown])
        out["tiers_drawn"] = np.array([sum(t.isVisible() for t in self.items[a].tiers) for a in shown])
        out["title"] = np.array(self._title)
        return out
