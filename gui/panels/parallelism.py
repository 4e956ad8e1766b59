"""Tensor vs data parallelism on a node, and expert vs tensor parallelism for MoE models — the
second paper's Figs. 4 and 6, computed by the engine (``parallelism.tp_dp_grid``,
``parallelism.ep_vs_tp``).

Left: for a device budget, each model's throughput per device under every TP × DP split of it,
coloured relative to that model's best split, with a star where TP beats the split with twice
the replicas because that split runs short of memory. Right: a MoE model on the same devices
under EP and under TP across batch sizes, with the ratio, and the bytes behind the gap on hover.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolTip, QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.units import compact, counted, short_bytes
from accelscope.engine.core.workspace import DEVICE_BUDGETS, VIEW_OPTION_DEFAULTS, Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.analysis import ParallelismStudy

from ..look.style import (
    PLOT_FONT_POINTS,
    html_text_colour,
    pen,
    plot_brush,
    plot_colour,
    plot_font,
    plot_pen,
    plot_text_colour,
    style_plot,
)
from ..look.theme import contrast_ratio
from ..plotkit.axes import LogValueAxis, RowAxis
from ..plotkit.bars import Bars, canvas, drawn_solid, hatched, set_bars
from ..plotkit.plot import add_plot
from ..plotkit.text import PlotTitle, TextPool, subtitle_label, swatch, tooltip_html
from .analysis import AnalysisPanel

# A sequential scale (canvas to blue: white to blue on a light canvas) for "share of the model's
# best split": values are written in the cells, so the colour only has to rank them.
HEAT_LOW = "#F4F8FC"
HEAT_HIGH = "#2166AC"
NO_FIT_CELL = "#9A9A9A"
CELL_SIZE = 0.94  # of a cell, so a white gap separates them
BEATS_OUTLINE = "#111111"
STAR_COLOUR = "#E6A100"
STAR_PX = 22
TP_COLOUR = "#0077BB"
EP_COLOUR = "#CC3311"
RATIO_COLOUR = "#555555"
BATCH_MARK_COLOUR = "#888888"
BATCH_LABEL_HIGH = 0.97  # the current batch's label hangs from near the top of the plot (a share of its height)
BATCH_LABEL_LOW = 0.03  # or stands near its bottom
SYMBOL_PX = 10
LEFT_AXIS_PX = 78  # the EP/TP plots' value axes: tick labels and the rotated title side by side


def legend_html() -> str:
    """The heatmap's legend and the EP vs TP curves', in the current plot theme. The curves'
    legend is here, above the plots, rather than in the EP vs TP plot: there it lay on the
    curves, whichever corner it took, at some batch and model."""
    return (swatch(HEAT_HIGH, "the model's best split (100%)") + " &nbsp; "
            + swatch("#C9DBEE", "lower share") + " &nbsp; "
            + swatch(NO_FIT_CELL, "weights do not fit", hatch=True) + " &nbsp; "
            + swatch(STAR_COLOUR, "TP beats DP because the split with more replicas runs out of memory",
                          glyph="★")
            + " &nbsp; " + swatch(BEATS_OUTLINE, "bold outline: TP beats DP", glyph="□")
            + " &nbsp; " + swatch(TP_COLOUR, "TP (experts sliced)", glyph="●")
            + " &nbsp; " + swatch(EP_COLOUR, "EP (experts whole)", glyph="■"))


def batch_label_texts(batch: int) -> tuple[str, ...]:
    """The current batch's label, longest first: a shorter one is used where the longer fits
    nowhere in the plot."""
    return f"current batch {batch:,}", f"batch {batch:,}", f"B={batch:,}"


def _heat_colour(share: float) -> QColor:
    """The cell colour of a share, in the current plot theme."""
    low, high = plot_colour(HEAT_LOW), plot_colour(HEAT_HIGH)
    t = min(max(share, 0.0), 1.0)
    return QColor.fromRgbF(low.redF() + t * (high.redF() - low.redF()),
                           low.greenF() + t * (high.greenF() - low.greenF()),
                           low.blueF() + t * (high.blueF() - low.blueF()))


BLACK, WHITE = QColor("#000000"), QColor("#FFFFFF")


def _text_on(fill: QColor) -> QColor:
    """Black or white, whichever reads better on ``fill``."""
    return BLACK if contrast_ratio(fill, BLACK) >= contrast_ratio(fill, WHITE) else WHITE


def _split_label(tp: int, dp: int) -> str:
    return f"TP {tp} × DP {dp}"


def _split_tick(tp: int, dp: int) -> str:
    """A heatmap column, short enough for five columns on a narrow tab (the axis says TP × DP)."""
    return f"{tp} × {dp}"


class ParallelismPanel(AnalysisPanel):
    title = "TP/DP · EP/TP"
    study_view = "parallelism"

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        self._heat_values = np.zeros((0, 0))  # [model, split] input + output tokens/s per device
        self._heat_shares = np.zeros((0, 0))
        self._heat_models: list[str] = []
        self._heat_splits: list[tuple[int, int]] = []

        self.header = subtitle_label("")
        # The legend never changes: a label of its own is laid out once, not with every header.
        self.legend = subtitle_label(legend_html())
        self.header.setContentsMargins(8, 4, 8, 0)
        self.legend.setContentsMargins(8, 0, 8, 2)
        budget_row = QHBoxLayout()
        budget_row.setContentsMargins(8, 2, 8, 2)
        budget_label = QLabel("Devices in the node:")
        self.budget = QComboBox()
        budget_label.setBuddy(self.budget)
        for n in DEVICE_BUDGETS:
            self.budget.addItem(f"{n} devices", n)
        self.budget.setCurrentIndex(DEVICE_BUDGETS.index(int(VIEW_OPTION_DEFAULTS["device_budget"])))
        self.budget.currentIndexChanged.connect(self._budget_changed)
        for widget in (budget_label, self.budget):
            font = widget.font()
            font.setPointSize(PLOT_FONT_POINTS)
            widget.setFont(font)
        budget_row.addWidget(budget_label)
        budget_row.addWidget(self.budget)
        budget_row.addStretch(1)

        self.canvas = canvas()
        # The current batch's label is placed in pixels, clear of the curves: again on a resize.
        self.canvas.resized.connect(lambda: self._mark_batch(self.frame.workspace.scenario.batch)
                                    if self.frame is not None else None)
        layout_ci = self.canvas.ci
        self.heat_plot = add_plot(layout_ci, row=0, col=0, rowspan=2,
                                           axisItems={"left": RowAxis("left"), "bottom": pg.AxisItem("bottom")})
        # Titles that break onto two lines: one-line titles kept each plot as wide as its title,
        # and the page scrolled sideways on a 1024 x 768 projector with both docks open.
        PlotTitle(self.heat_plot)
        style_plot(self.heat_plot, title="TP vs DP: tokens/s per device", x_label="TP × DP split of the node",
                   x_unit=None, y_label="", y_unit=None)
        self.heat_plot.getAxis("left").showLabel(False)
        self.heat_plot.showGrid(x=False, y=False)
        self.heat_plot.invertY(True)
        for plot_item in (self.heat_plot,):
            plot_item.setMouseEnabled(x=False, y=False)
            plot_item.setMenuEnabled(False)
            plot_item.hideButtons()
            plot_item.vb.disableAutoRange()
        self.cells = Bars(x=[], y=[], width=CELL_SIZE, height=CELL_SIZE, brush=plot_brush("w"), pen=None)
        self.heat_plot.addItem(self.cells)
        # Two single-line texts per cell (value, share): a one-line text centres on its anchor.
        self.cell_texts = TextPool(self.heat_plot, anchor=(0.5, 1.0))
        self.cell_shares = TextPool(self.heat_plot, anchor=(0.5, 0.0))
        self.stars = pg.ScatterPlotItem(symbol="star", size=STAR_PX, pen=plot_pen("#6B4A00", width=1),
                                        brush=plot_brush(STAR_COLOUR))
        self.stars.setZValue(10)
        self.heat_plot.addItem(self.stars)

        # Curves are drawn at log10 of their values on axes that label the values (1, 2, 5 × 10^k):
        # pyqtgraph's own log mode labels minor ticks as powers and crowds them.
        self.ep_plot = add_plot(layout_ci, row=0, col=1, axisItems={"bottom": LogValueAxis("bottom"),
                                                                  "left": LogValueAxis("left")})
        PlotTitle(self.ep_plot)
        style_plot(self.ep_plot, title="EP vs TP", x_label="batch, log scale", x_unit="sequences",
                   y_label="tokens/s (log)", y_unit=None)  # short: longer than the plot is tall, it ran into the next
        # Brushes made once: pyqtgraph caches a rendered symbol per brush object.
        self.tp_brush, self.ep_brush, self.hollow_brush = plot_brush(TP_COLOUR), plot_brush(EP_COLOUR), plot_brush("w")
        self.tp_curve = self.ep_plot.plot([], [], pen=pen(TP_COLOUR), symbol="o", symbolSize=SYMBOL_PX,
                                          symbolBrush=self.tp_brush, symbolPen=plot_pen(TP_COLOUR),
                                          name="TP (experts sliced)")
        self.ep_curve = self.ep_plot.plot([], [], pen=pen(EP_COLOUR), symbol="s", symbolSize=SYMBOL_PX,
                                          symbolBrush=self.ep_brush, symbolPen=plot_pen(EP_COLOUR),
                                          name="EP (experts whole)")
        self.ratio_plot = add_plot(layout_ci, row=1, col=1, axisItems={"bottom": LogValueAxis("bottom")})
        PlotTitle(self.ratio_plot)
        # What the ratio means in its title: a label on the parity line lay over the curve
        # wherever the ratio neared 1.
        style_plot(self.ratio_plot, title="TP faster above 1, EP below", x_label="batch, log scale",
                   x_unit="sequences", y_label="TP / EP", y_unit="×")
        self.ratio_plot.getAxis("left").enableAutoSIPrefix(False)
        self.ratio_plot.setXLink(self.ep_plot)
        for plot_item in (self.ep_plot, self.ratio_plot):  # one width, so the two plots line up
            plot_item.getAxis("left").setWidth(LEFT_AXIS_PX)
        self.ratio_curve = self.ratio_plot.plot([], [], pen=pen(RATIO_COLOUR), symbol="d", symbolSize=SYMBOL_PX,
                                                # Pen and brush objects made once: pyqtgraph caches a
                                                # rendered symbol per object, and a colour string
                                                # is a new object at every update.
                                                symbolBrush=plot_brush(RATIO_COLOUR), symbolPen=plot_pen(RATIO_COLOUR))
        # Nine finite points per curve: no clipping of huge values is needed, and without it
        # a range change does not re-feed every curve's points to its symbols.
        for curve in (self.tp_curve, self.ep_curve, self.ratio_curve):
            curve.setDynamicRangeLimit(None)
        self._drawn_ep_tp: tuple | None = None  # what the EP/TP curves show, to skip redrawing it
        self.parity = pg.InfiniteLine(pos=1.0, angle=0, movable=False, pen=pen("#999999", width=1.5, dashed=True))
        self.ratio_plot.addItem(self.parity, ignoreBounds=True)
        self.batch_marks: list[pg.InfiniteLine] = []
        for plot_item in (self.ep_plot, self.ratio_plot):
            plot_item.setMouseEnabled(x=False, y=False)
            plot_item.setMenuEnabled(False)
            plot_item.hideButtons()
            first = not self.batch_marks
            mark = pg.InfiniteLine(angle=90, movable=False, pen=pen(BATCH_MARK_COLOUR, width=1.5, dashed=True),
                                   label="batch" if first else None,
                                   labelOpts={"position": BATCH_LABEL_HIGH, "anchors": [(0, 0), (0, 0)],
                                              "color": plot_text_colour(BATCH_MARK_COLOUR)} if first else None)
            if first:
                mark.label.setFont(plot_font())
            plot_item.addItem(mark, ignoreBounds=True)
            self.batch_marks.append(mark)
        layout_ci.layout.setColumnStretchFactor(0, 5)
        layout_ci.layout.setColumnStretchFactor(1, 4)
        layout_ci.layout.setRowStretchFactor(0, 3)
        layout_ci.layout.setRowStretchFactor(1, 2)

        self.notes = subtitle_label("")
        self.hover_text = ""
        self.canvas.scene().sigMouseMoved.connect(self._hover)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.legend)
        layout.addLayout(budget_row)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.notes)

    # ---- options (presets) ------------------------------------------------------------------

    def device_budget(self) -> int:
        return int(self.budget.currentData())

    def options(self) -> dict:
        return {"device_budget": self.device_budget()}

    def set_options(self, options: dict) -> None:
        """Apply stored options; a budget that is not one of ``DEVICE_BUDGETS`` is ignored."""
        budget = options.get("device_budget")
        if not isinstance(budget, bool) and isinstance(budget, int) and budget in DEVICE_BUDGETS:
            self.budget.setCurrentIndex(DEVICE_BUDGETS.index(budget))

    def _budget_changed(self) -> None:
        self.view_option_changed.emit("device_budget", self.device_budget())
        if self.frame is not None:
            self.update_frame(self.frame)

    # ---- AnalysisPanel ---------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        # The workspace's budget wins when it changes (a preset was loaded); otherwise the
        # combo keeps what the user chose, even before the main window stores it.
        budget = frame.workspace.option("device_budget")
        previous = None if self.frame is None else self.frame.workspace.option("device_budget")
        if budget != previous and budget in DEVICE_BUDGETS and budget != self.device_budget():
            self.budget.blockSignals(True)
            self.budget.setCurrentIndex(DEVICE_BUDGETS.index(budget))
            self.budget.blockSignals(False)
        super().update_frame(frame)
        self._mark_batch(frame.workspace.scenario.batch)

    def study_workspace(self, frame: Frame) -> Workspace:
        return frame.workspace.with_options(device_budget=self.device_budget())

    def show_study(self, study: ParallelismStudy) -> None:
        self._show_header(study)
        self._show_grid(study)
        self._show_ep_tp(study)
        self._show_notes(study)
        if self.frame is not None:
            self._mark_batch(self.frame.workspace.scenario.batch)

    # ---- drawing ---------------------------------------------------------------------------

    def _show_header(self, study: ParallelismStudy) -> None:
        s = self.frame.workspace.scenario
        accelerator = self.catalog.accelerators.get(s.accelerator)
        device = accelerator.name if accelerator is not None else s.accelerator
        self.header.setText(
            f"On <b>{device}</b> · {s.input_len:,}-token prompts, {s.output_len:,} generated · "
            f"{s.weight_precision}/{s.activation_precision}/{s.kv_precision}. Left: every TP × DP split of the node, "
            "128 sequences per device (the second paper's Fig. 4): input + output tokens/s per device, and as a "
            "share of the model's best split. "
            f"Right: {study.ep_tp_note} (Fig. 6). Hover for why.")

    def _show_grid(self, study: ParallelismStudy) -> None:
        grid = study.grid
        if grid is None:
            self._heat_models, self._heat_splits = [], []
            self._heat_values = self._heat_shares = np.zeros((0, 0))
            set_bars(self.cells, np.zeros(0), np.zeros(0), np.zeros(0))
            self.cell_texts.set_texts([])
            self.cell_shares.set_texts([])
            self.stars.setData(x=[], y=[])
            self.heat_plot.getAxis("left").set_rows([])
            return
        models = list(dict.fromkeys(cell.model_id for cell in grid.cells))
        splits = list(dict.fromkeys((cell.tp, cell.dp) for cell in grid.cells))
        values = np.zeros((len(models), len(splits)))
        fits = np.zeros_like(values, bool)
        for cell in grid.cells:
            i, j = models.index(cell.model_id), splits.index((cell.tp, cell.dp))
            values[i, j] = cell.total_tok_s_per_device
            fits[i, j] = cell.result.fits
        best = values.max(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = np.where(best > 0, values / best, 0.0)
        self._heat_models, self._heat_splits = models, splits
        self._heat_values, self._heat_shares = values, shares

        xs, ys, brushes, texts, shares_text, text_colours, pens, star_x, star_y = [], [], [], [], [], [], [], [], []
        for cell in grid.cells:
            i, j = models.index(cell.model_id), splits.index((cell.tp, cell.dp))
            xs.append(float(j))
            ys.append(float(i))
            share = shares[i, j]
            if fits[i, j]:
                fill = _heat_colour(share)
                brushes.append(drawn_solid(fill.name()))
                texts.append(compact(values[i, j]))
                shares_text.append(f"{share:.0%}")
                text_colours.append(_text_on(fill))
            else:
                brushes.append(hatched(NO_FIT_CELL))
                texts.append("no fit")
                shares_text.append("")
                text_colours.append("#444444")
            pens.append(plot_pen(BEATS_OUTLINE, width=3.5) if cell.tp_beats_dp else pg.mkPen(None))
            if cell.because_of_memory:
                star_x.append(j + 0.5 * CELL_SIZE - 0.1)
                star_y.append(i - 0.5 * CELL_SIZE + 0.14)
        self.cells.setOpts(x=xs, y=ys, width=CELL_SIZE, height=CELL_SIZE, brushes=brushes, pens=pens)
        self.cell_texts.set(texts, xs, [y + 0.06 for y in ys], text_colours)
        self.cell_shares.set(shares_text, xs, [y + 0.06 for y in ys], text_colours)
        self.stars.setData(x=star_x, y=star_y)
        left = self.heat_plot.getAxis("left")
        names = [self.engine.model(m).name for m in models]
        left.set_rows([f"{n} (current)" if k == 0 else n for k, n in enumerate(names)],
                      ids=models, max_width=0.28 * max(self.canvas.width(), 600))
        self.heat_plot.getAxis("bottom").setTicks([[(float(j), _split_tick(tp, dp))
                                                    for j, (tp, dp) in enumerate(splits)], []])
        self.heat_plot.setXRange(-0.5, len(splits) - 0.5, padding=0.0)
        self.heat_plot.setYRange(-0.5, len(models) - 0.5, padding=0.0)

    def _show_ep_tp(self, study: ParallelismStudy) -> None:
        comparison = study.ep_tp
        if comparison is None:
            for curve in (self.tp_curve, self.ep_curve, self.ratio_curve):
                curve.setData([], [])
            self._drawn_ep_tp = None
            self.ep_plot.setTitle(f"EP vs TP: {study.ep_tp_problem}", size=f"{PLOT_FONT_POINTS + 1}pt")
            return
        batches = np.array([p.batch for p in comparison.points], float)
        tp = np.array([p.tp.throughput_output_tok_s for p in comparison.points])
        ep = np.array([p.ep.throughput_output_tok_s for p in comparison.points])
        ratio = np.array([p.tp_over_ep_throughput for p in comparison.points])
        tp_fits = tuple(p.tp.fits for p in comparison.points)
        ep_fits = tuple(p.ep.fits for p in comparison.points)
        drawn = (comparison.devices, batches.tobytes(), tp.tobytes(), ep.tobytes(), tp_fits, ep_fits)
        if drawn == self._drawn_ep_tp:
            return  # e.g. a budget beyond the model's experts leaves the EP/TP side as it was
        self._drawn_ep_tp = drawn
        # Hollow markers where a layout does not fit (the engine's numbers for a layout that could not run).
        log_batches = np.log10(batches)
        x_pad = 0.08 * (log_batches[-1] - log_batches[0] or 1.0)
        low, high = float(np.log10(min(tp.min(), ep.min()))), float(np.log10(max(tp.max(), ep.max())))
        y_pad = 0.08 * max(high - low, 1.0)
        # Ranges first, in one call per plot, so the new points are laid out once.
        self.ep_plot.setRange(xRange=(log_batches[0] - x_pad, log_batches[-1] + x_pad),
                              yRange=(low - y_pad, high + y_pad), padding=0.0)
        self.ratio_plot.setYRange(min(0.9, float(ratio.min()) * 0.95), max(1.1, float(ratio.max()) * 1.05),
                                  padding=0.0)
        self.tp_curve.setData(log_batches, np.log10(tp),
                              symbolBrush=[self.tp_brush if fits else self.hollow_brush for fits in tp_fits])
        self.ep_curve.setData(log_batches, np.log10(ep),
                              symbolBrush=[self.ep_brush if fits else self.hollow_brush for fits in ep_fits])
        self.ratio_curve.setData(log_batches, ratio)
        self.ep_plot.setTitle(f"EP vs TP on {comparison.devices} devices", size=f"{PLOT_FONT_POINTS + 2}pt")

    def _show_notes(self, study: ParallelismStudy) -> None:
        lines = []
        if study.grid_problem:
            lines.append(f"TP/DP: cannot compute: {study.grid_problem}")
        if study.ep_tp_problem:
            lines.append(f"EP/TP: cannot compute: {study.ep_tp_problem}")
        comparison = study.ep_tp
        if comparison is not None and comparison.points:
            first, last = comparison.points[0], comparison.points[-1]
            if not any(p.tp.fits or p.ep.fits for p in comparison.points):
                warning = html_text_colour("#B2182B")
                lines.append(f"<span style='color:{warning}'>⚠ Neither layout fits the weights on "
                             f"{comparison.devices} devices: the curves are the engine's numbers for layouts that "
                             "could not run.</span>")
            lines.append(
                f"EP/TP at batch {first.batch}: the busiest EP device reads "
                f"{short_bytes(first.expert_weight_bytes_read_ep)} of expert weights per step against TP's "
                f"{short_bytes(first.expert_weight_bytes_read_tp)} (whole experts vs 1/{comparison.devices} slices); "
                f"at batch {last.batch}: EP sends {short_bytes(last.all_reduce_bytes_ep + last.all_to_all_bytes_ep)} "
                f"per device per step (all-to-all {short_bytes(last.all_to_all_bytes_ep)}) against TP's all-reduces of "
                f"{short_bytes(last.all_reduce_bytes_tp)}. Hollow markers: the layout does not fit."
            )
        self.notes.setText("<br>".join(lines))

    def _mark_batch(self, batch: int) -> None:
        for mark in self.batch_marks:
            mark.setPos(math.log10(batch))
        label = self.batch_marks[0].label
        # The longest text that finds a place inside the plot and clear of the points: on a
        # narrow plot (a projector with both docks) "current batch 64" fits on neither side.
        best = None
        for text in batch_label_texts(batch):
            label.setFormat(text)
            place, covered = self._batch_label_place(math.log10(batch))
            if best is None or covered < best[2]:
                best = (text, place, covered)
            if covered == 0:
                break
        text, (anchor, position), _ = best
        if label.format != text:
            label.setFormat(text)
        if label.anchors[0] != anchor or label.orthoPos != position:
            label.anchors = [anchor, anchor]
            label.setPosition(position)
            label.updatePosition()

    def _batch_label_place(self, x: float) -> tuple[tuple[tuple[int, int], float], int]:
        """Where the current batch's label goes (its anchor and its height on the line), and how
        badly it fits there (points covered; more than any number of points if it leaves the
        plot): beside the line, inside the plot and clear of the curves' points. Throughput
        grows with the batch, so the curves run low on the left and high on the right: the
        label hangs from the top right of the line on the left half, and stands at the bottom
        left of it on the right; the other places are tried where that one covers a point."""
        (x0, x1), (y0, y1) = self.ep_plot.vb.viewRange()
        width_px, height_px = self.ep_plot.vb.width(), self.ep_plot.vb.height()
        high = ((0, 0), BATCH_LABEL_HIGH), ((1, 0), BATCH_LABEL_HIGH)
        low = ((1, 1), BATCH_LABEL_LOW), ((0, 1), BATCH_LABEL_LOW)
        places = high + low if x <= (x0 + x1) / 2 else low + high
        if width_px <= 0 or height_px <= 0:
            return places[0], 0  # not laid out yet: placed again on the resize
        text = self.batch_marks[0].label.boundingRect()
        w, h = text.width() * (x1 - x0) / width_px, text.height() * (y1 - y0) / height_px
        xs, ys = [], []
        for curve in (self.tp_curve, self.ep_curve):
            data_x, data_y = curve.getData()
            if data_x is not None:
                xs.extend(data_x)
                ys.extend(data_y)
        points = np.column_stack([xs, ys]) if xs else np.zeros((0, 2))
        # A point's marker reaches this far round it (view units).
        reach_x, reach_y = SYMBOL_PX * (x1 - x0) / width_px, SYMBOL_PX * (y1 - y0) / height_px

        def covered(place: tuple[tuple[int, int], float]) -> int:
            (side, hang), position = place
            left = x - side * w
            bottom = y0 + position * (y1 - y0) - (1 - hang) * h
            inside = x0 <= left and left + w <= x1
            hits = ((points[:, 0] > left - reach_x) & (points[:, 0] < left + w + reach_x)
                    & (points[:, 1] > bottom - reach_y) & (points[:, 1] < bottom + h + reach_y))
            return int(np.count_nonzero(hits)) + (0 if inside else len(points) + 1)

        scores = [covered(place) for place in places]
        best = scores.index(min(scores))  # the first of the least covered, in order of preference
        return places[best], scores[best]

    # ---- hover ------------------------------------------------------------------------------

    def _hover(self, scene_pos: QPointF) -> None:
        self.hover_text = self.tooltip_at(scene_pos)
        if self.hover_text:
            QToolTip.showText(self.canvas.mapToGlobal(self.canvas.mapFromScene(scene_pos)), self.hover_text,
                              self.canvas)
        else:
            QToolTip.hideText()

    def tooltip_at(self, scene_pos: QPointF) -> str:
        if self.heat_plot.vb.sceneBoundingRect().contains(scene_pos):
            point = self.heat_plot.vb.mapSceneToView(scene_pos)
            return self.cell_tooltip(round(point.y()), round(point.x()))
        for plot_item in (self.ep_plot, self.ratio_plot):
            if plot_item.vb.sceneBoundingRect().contains(scene_pos):
                point = plot_item.vb.mapSceneToView(scene_pos)
                return self.batch_tooltip(point.x())
        return ""

    def cell_tooltip(self, row: int, column: int) -> str:
        study = self.study
        if not isinstance(study, ParallelismStudy) or study.grid is None:
            return ""
        if not (0 <= row < len(self._heat_models) and 0 <= column < len(self._heat_splits)):
            return ""
        model_id = self._heat_models[row]
        tp, dp = self._heat_splits[column]
        cell = study.grid.cell(model_id, tp)
        r = cell.result
        lines = [(f"{_split_label(tp, dp)} on {study.grid.device_budget} devices; {cell.batch_per_replica:,} sequences "
                 "per replica")]
        if r.fits:
            lines += [
                (f"input + output: {compact(cell.total_tok_s_per_device)} tokens/s per device "
                f"({self._heat_shares[row, column]:.0%} of the model's best split)"),
                f"output: {compact(cell.output_tok_s_per_device)} tokens/s per device",
                f"ITL: {compact(r.itl_s * 1e3)} ms; TTFT: {compact(r.ttft_s * 1e3)} ms",
            ]
        lines.append(f"weights: {r.memory.weights_bytes / 1e9:.3g} GB per device, "
                     f"{r.memory.weights_fraction_of_usable:.0%} of usable memory")
        if cell.memory_limit:
            lines.append(f"memory: {cell.memory_limit}")
        if cell.tp_beats_dp:
            lines.append(f"<b>TP beats DP</b>{' because of memory' if cell.because_of_memory else ''}: {cell.why}")
        return tooltip_html(study.model_names.get(model_id, model_id), lines)

    def batch_tooltip(self, log_batch: float) -> str:
        study = self.study
        if not isinstance(study, ParallelismStudy) or study.ep_tp is None or not study.ep_tp.points:
            return ""
        points = study.ep_tp.points
        nearest = min(points, key=lambda p: abs(math.log10(p.batch) - log_batch))
        p, n = nearest, study.ep_tp.devices
        lines = [
            (f"output throughput: TP {compact(p.tp.throughput_output_tok_s)} tokens/s, "
            f"EP {compact(p.ep.throughput_output_tok_s)} tokens/s (TP/EP {p.tp_over_ep_throughput:.3g}×)"),
            (f"ITL: TP {compact(p.tp.itl_s * 1e3)} ms, EP {compact(p.ep.itl_s * 1e3)} ms "
            f"(p99 {compact(p.tp_spread.p99_s * 1e3)} ms, {compact(p.ep_spread.p99_s * 1e3)} ms)"),
            f"experts per device: TP all {p.experts_per_device_tp} as 1/{n} slices, EP {p.experts_per_device_ep} whole",
            (f"expert weights read per device per step: TP {short_bytes(p.expert_weight_bytes_read_tp)}, "
            f"EP {short_bytes(p.expert_weight_bytes_read_ep)}"),
            (f"sent per device per step: TP all-reduce {short_bytes(p.all_reduce_bytes_tp)}; EP all-reduce "
            f"{short_bytes(p.all_reduce_bytes_ep)} + all-to-all {short_bytes(p.all_to_all_bytes_ep)}"),
            (f"communication per stage pass: TP {compact(p.tp.decode.communication_time_s * 1e3)} ms, "
            f"EP {compact(p.ep.decode.communication_time_s * 1e3)} ms"),
            (f"EP load imbalance (busiest / mean): engine {p.imbalance_engine:.3g}×, "
            f"simulated {p.imbalance_simulated:.3g}×"),
        ]
        if not p.tp.fits:
            lines.append(f"⚠ TP does not fit: {p.tp.fit_reason}")
        if not p.ep.fits:
            lines.append(f"⚠ EP does not fit: {p.ep.fit_reason}")
        return tooltip_html(f"batch {p.batch:,} sequences on {counted(n, 'device')}", lines)

    # ---- what is drawn ---------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        opts = self.cells.opts
        x = np.asarray(opts.get("x"), float)
        y = np.asarray(opts.get("y"), float)
        star_x, star_y = self.stars.getData()
        return {
            "heat_models": np.array(self.heat_plot.getAxis("left").ids, dtype=object),
            "heat_splits": np.array(self._heat_splits, dtype=int).reshape(-1, 2),
            "heat_tok_s_per_device": self._heat_values.copy(),
            "heat_share": self._heat_shares.copy(),
            "heat_cell_x": x,
            "heat_cell_y": y,
            "heat_text": np.array(self.cell_texts.texts(), dtype=object),
            "heat_hatched": np.array([b.style() != Qt.BrushStyle.SolidPattern for b in opts.get("brushes") or []],
                                     bool),
            "star_cells": np.column_stack([np.round(star_y), np.round(star_x)]).astype(int)
            if len(star_x) else np.zeros((0, 2), int),
            "ep_tp_batch": 10.0 ** _curve(self.tp_curve)[0],
            "tp_tok_s": 10.0 ** _curve(self.tp_curve)[1],
            "ep_tok_s": 10.0 ** _curve(self.ep_curve)[1],
            "tp_over_ep": _curve(self.ratio_curve)[1],
        }


def _curve(curve: pg.PlotDataItem) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) as drawn (empty before the first study)."""
    if curve.xData is None:
        return np.zeros(0), np.zeros(0)
    return np.asarray(curve.xData, float), np.asarray(curve.yData, float)

