"""Memory tiers: what keeping weights or KV cache in a far memory tier costs and buys.

For the current model, selected accelerator and workload, with a far tier chosen here (the
device's own, or one of ``resources/far_tiers.toml``): decode slowdown (inter-token latency
against everything in device memory) over the share offloaded — weights, KV cache, and both
— with the scenario's own shares marked; the largest model that fits with the tier and
without; and the first paper's "5-10x larger models at 15-30% slowdown" checked against the
tier. Every number is the engine's (``studies.tiering``, ``studies.claims``); this panel only draws them.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFontMetricsF
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.far_tiers import FarTierOption, load_far_tiers
from accelscope.engine.core.units import format_params, format_time
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.analysis import TierStudy
from accelscope.engine.studies.claims import CLAIM_CAPACITY_MULTIPLES, CLAIM_SLOWDOWNS
from accelscope.engine.studies.tiering import (
    OWN_TIER,
    OffloadSweep,
    nearest_index,
    offload_curves,
    own_far_tier,
    resolve_far_tier,
)

from ..look.style import PLOT_FONT_POINTS, plot_brush, plot_font, plot_pen, plot_text_colour, style_plot
from ..plotkit.axes import GridAxis, LogValueAxis
from ..plotkit.bars import (
    FALLBACK_VIEW_PX,
    TEXT_GAP_PX,
    canvas,
    log_bar_widths,
    log_base,
    right_end_for_texts,
    row_plot,
    set_bars,
    set_range,
    set_row_range,
)
from ..plotkit.plot import add_plot
from ..plotkit.text import TextPool, WrappedLabel, subtitle_label, swatch
from .analysis import AnalysisPanel

# The capacity bars' area holds the model line's name and two rows of text, each a line high
# with a line's worth of gaps between: at 64 px (the canvas at its least) the rows touched.
CAPACITY_VIEW_MIN_LINES = 4
# The slowdown curves' area, in lines of the plot font. The canvas is held at least as tall as
# its plots need, zoom included (_hold_plots_height), and the page scrolls below that: with the
# notes beneath taking the rest, the curves had ~50 px at 1024x768 with a dock, and with a
# fixed least height for the canvas ~90 px in presentation mode, whose zoom it left out (the
# log axis labelled only 3 and 10).
SLOWDOWN_VIEW_MIN_LINES = 11

# (key, legend text, colour, marker): weights and KV cache in the memory panel's colours.
CURVES: tuple[tuple[str, str, str, str], ...] = (
    ("weights", "weights offloaded", "#4C72B0", "o"),
    ("kv", "KV cache offloaded", "#DD8452", "s"),
    ("both", "both, the same share", "#7B3294", "t"),
)
MARKER_PX = 9
CURRENT_MARKER_PX = 22
CURRENT_COLOUR = "#000000"
CLAIM_BAND_BRUSH = (46, 139, 87, 60)  # translucent green: the paper's slowdown range
CLAIM_LINE_COLOUR = "#2E8B57"
CLAIM_LABEL_HEIGHTS = (0.85, 0.6)  # of the plot's height, from its foot: the 5x and the 10x model's labels
BAND_LABEL_GAP_PERCENT = 1.5  # of the share axis: the claim band's name ends this far left of the 5x model's line
CAPACITY_COLOURS = ("#7F7F7F", "#4C72B0")  # device memory alone, with the far tier
MODEL_LINE_COLOUR = "#B2182B"
CAPACITY_BAR_HEIGHT = 0.5  # of a row
MODEL_NAME_POSITION = 0.02  # the model line's name hangs this share of the plot's height below its top
MIN_HEAD_ROOM_ROWS = 0.9  # free space above the first bar, in rows, however tall the plot
HEAD_GAP_PX = 3  # between the model line's name and the first bar's text
MAX_HEAD_SHARE = 0.8  # of the plot's height for the head room, at most (a plot squeezed flat)
MIN_DECADES = math.log10(2.0)  # the slowdown axis shows at least 1x to 2x


class TiersPanel(AnalysisPanel):
    title = "Memory tiers"
    study_view = "tiers"

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        self.far_tiers = load_far_tiers()
        self.far_tier = OWN_TIER  # what the user chose; resolved per accelerator
        self._workspace_tier: object = None  # the workspace's far_tier last seen
        self._combo_accelerator: str | None = None

        font = plot_font()
        self.combo = QComboBox()
        self.combo.setFont(font)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.currentIndexChanged.connect(self._combo_changed)
        tier_label = QLabel("Far memory tier:")
        tier_label.setBuddy(self.combo)
        tier_label.setFont(font)
        self.tier_info = WrappedLabel("")
        self.tier_info.setFont(font)
        controls = QHBoxLayout()
        controls.setContentsMargins(8, 6, 8, 2)
        controls.addWidget(tier_label)
        controls.addWidget(self.combo)
        controls.addStretch(1)
        # On a line of its own: beside the combo box on a narrow screen its lines were cut.
        self.tier_info.setContentsMargins(8, 0, 8, 2)

        self.canvas = canvas()
        self.canvas.resized.connect(self._fit_capacity_texts)
        self._build_slowdown_plot()
        self._build_capacity_plot()
        # The capacity bars in a strip beneath the curves: side by side, the two plots did not
        # both fit a tab between the docks.
        self.canvas.ci.layout.setRowStretchFactor(0, 5)
        self.canvas.ci.layout.setRowStretchFactor(1, 2)
        self.canvas.resized.connect(self._hold_plots_height)
        self._hold_plots_height()

        legend = " &nbsp; ".join(swatch(colour, text, glyph=_glyph(marker)) for _, text, colour, marker in CURVES)
        self.legend = subtitle_label(
            legend + " &nbsp; " + swatch(CURVES[0][2], "hollow: does not fit", glyph="○")
            + " &nbsp; " + swatch(CURRENT_COLOUR, "the scenario's shares", glyph="★")
            + " &nbsp; " + swatch(CLAIM_LINE_COLOUR, f"the paper's claim: {_claim_range()}", glyph="▬")
        )
        self.current_text = subtitle_label("")
        self.claim_text = subtitle_label("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(controls)
        layout.addWidget(self.tier_info)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.current_text)
        layout.addWidget(self.claim_text)

    # ---- building ------------------------------------------------------------------------

    def _build_slowdown_plot(self) -> None:
        plot = add_plot(self.canvas, row=0, col=0, axisItems={"left": LogValueAxis("left"),
                                                            "bottom": GridAxis("bottom")})
        style_plot(plot, title="Decode slowdown against everything in device memory",
                   x_label="share kept in the far tier", x_unit="%", y_label="slowdown",
                   y_unit="×")
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.getAxis("bottom").enableAutoSIPrefix(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.vb.disableAutoRange()
        plot.vb.setMinimumHeight(SLOWDOWN_VIEW_MIN_LINES * QFontMetricsF(plot_font()).height())
        plot.setXRange(-3, 103, padding=0.0)
        low, high = (math.log10(s) for s in CLAIM_SLOWDOWNS)
        self.claim_band = pg.LinearRegionItem(values=(low, high), orientation="horizontal", movable=False,
                                              brush=plot_brush(CLAIM_BAND_BRUSH), pen=pg.mkPen(None))
        self.claim_band.setZValue(-10)
        plot.addItem(self.claim_band, ignoreBounds=True)
        band_text = f"the paper's {100 * (CLAIM_SLOWDOWNS[0] - 1):.0f}–{100 * (CLAIM_SLOWDOWNS[1] - 1):.0f}% slower"
        self.band_label = pg.TextItem(band_text, color=plot_text_colour(CLAIM_LINE_COLOUR), anchor=(1.0, 1.0),
                                      fill=plot_brush((255, 255, 255, 190)))
        self.band_label.setFont(plot_font())
        # Ending just left of the first model line: at the plot's right end it crossed the
        # lines (and their dashes ran through its text).
        first_line_share = 100.0 * (1.0 - 1.0 / min(CLAIM_CAPACITY_MULTIPLES))
        self.band_label.setPos(first_line_share - BAND_LABEL_GAP_PERCENT, high)
        plot.addItem(self.band_label, ignoreBounds=True)
        self.claim_lines = []
        for index, multiple in enumerate(CLAIM_CAPACITY_MULTIPLES):
            share = 100.0 * (1.0 - 1.0 / multiple)
            # Left of their lines (the last lies near the plot's right end, where a label right
            # of it was cut), each at its own height so close lines' labels do not collide.
            anchor, height = (1, 0), CLAIM_LABEL_HEIGHTS[index % len(CLAIM_LABEL_HEIGHTS)]
            line = pg.InfiniteLine(pos=share, angle=90, movable=False,
                                   pen=plot_pen(CLAIM_LINE_COLOUR, width=1.5, style=Qt.PenStyle.DashLine),
                                   label=f"{multiple:g}× model",
                                   labelOpts={"position": height, "color": plot_text_colour(CLAIM_LINE_COLOUR),
                                              "anchors": [anchor, anchor], "fill": plot_brush((255, 255, 255, 210))})
            line.label.setFont(plot_font())
            plot.addItem(line, ignoreBounds=True)
            self.claim_lines.append(line)
        self.curves: dict[str, pg.PlotDataItem] = {}
        # (filled, hollow) per curve, made once: pyqtgraph caches a rendered symbol per brush
        # object, so a new brush at every update would grow its cache without end.
        self._point_brushes: dict[str, tuple[QBrush, QBrush]] = {}
        for key, _, colour, marker in CURVES:
            filled = plot_brush(colour)
            curve = pg.PlotDataItem([], [], pen=plot_pen(colour, width=2.5), symbol=marker, symbolSize=MARKER_PX,
                                    symbolPen=plot_pen(colour, width=1.5), symbolBrush=filled)
            plot.addItem(curve)
            self.curves[key] = curve
            self._point_brushes[key] = (filled, pg.mkBrush(None))
        self.current = pg.ScatterPlotItem(symbol="star", size=CURRENT_MARKER_PX, pen=plot_pen("w", width=1),
                                          brush=plot_brush(CURRENT_COLOUR))
        self.current.setZValue(10)
        plot.addItem(self.current)
        self.slowdown_plot = plot

    def _build_capacity_plot(self) -> None:
        plot = row_plot(self.canvas.ci, 1, 0, title="Largest model that fits", x_label="parameters",
                             x_unit="billion", log_x=True, row_labels=True)
        self.capacity_bars = pg.BarGraphItem(x0=[], width=[], y=[], height=CAPACITY_BAR_HEIGHT,
                                             brush=plot_brush("k"), pen=plot_pen("k", width=1))
        self._capacity_brushes = [plot_brush(colour) for colour in CAPACITY_COLOURS]
        plot.addItem(self.capacity_bars)
        self.capacity_texts = TextPool(plot, anchor=(0.0, 0.5))
        self.model_line = pg.InfiniteLine(pos=0.0, angle=90, movable=False,
                                          pen=plot_pen(MODEL_LINE_COLOUR, width=2, style=Qt.PenStyle.DashLine),
                                          # At the top (the rows run downwards), hanging into the head room.
                                          label="", labelOpts={"position": MODEL_NAME_POSITION,
                                                               "color": plot_text_colour(MODEL_LINE_COLOUR),
                                                               "anchors": [(0, 0), (0, 0)], "fill": plot_brush("w")})
        self.model_line.label.setFont(plot_font())
        plot.vb.setMinimumHeight(CAPACITY_VIEW_MIN_LINES * QFontMetricsF(plot_font()).height())
        plot.addItem(self.model_line, ignoreBounds=True)
        self.capacity_plot = plot
        self._capacity_values = np.zeros(2)
        self._capacity_axis: tuple[float, float, np.ndarray, float] | None = None
        self.canvas.ci.layout.activate()

    # ---- options -------------------------------------------------------------------------

    def options(self) -> dict:
        return {"far_tier": self.far_tier}

    def set_options(self, options: dict) -> None:
        tier = options.get("far_tier", self.far_tier)
        if tier != OWN_TIER and tier not in self.far_tiers:
            raise ValueError(f"unknown far tier {tier!r}; known: {OWN_TIER}, {', '.join(self.far_tiers)}")
        if tier == self.far_tier:
            return
        self.far_tier = tier
        self._sync_combo()
        self._tier_changed()

    def resolved_tier(self, accelerator_id: str) -> tuple[str, FarTierOption]:
        """The tier to use on an accelerator: the chosen one, or the fallback where the choice
        is the device's own and it has none."""
        return resolve_far_tier(self.engine, accelerator_id, self.far_tier, self.far_tiers)

    # ---- AnalysisPanel -------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        option = getattr(frame.workspace, "option", None)
        workspace_tier = option("far_tier") if option is not None else None
        if workspace_tier is not None and workspace_tier != self._workspace_tier:
            # A new value from the workspace (a preset): follow it.
            self._workspace_tier = workspace_tier
            if workspace_tier == OWN_TIER or workspace_tier in self.far_tiers:
                self.far_tier = workspace_tier
        self.frame = frame
        if frame.workspace.scenario.accelerator != self._combo_accelerator:
            self._combo_accelerator = frame.workspace.scenario.accelerator
            self._sync_combo()
        super().update_frame(frame)

    def study_workspace(self, frame: Frame) -> Workspace:
        return frame.workspace.with_options(far_tier=self.far_tier)

    def show_study(self, study: TierStudy) -> None:
        sweep = study.sweep
        self._show_curves(study)
        self._show_capacity(study)
        self._show_texts(study)
        # Two lines: a title is as wide as its longest line, and one long line took the
        # capacity plot's column from it in a window with both docks open.
        self.slowdown_plot.setTitle(
            f"Decode slowdown against everything in device memory<br>{self.engine.model(sweep.model).name} on "
            f"{self.accelerator_name(sweep.accelerator)}",
            size=f"{PLOT_FONT_POINTS + 2}pt")

    def plotted(self) -> dict[str, np.ndarray]:
        drawn: dict[str, np.ndarray] = {}
        for key, curve in self.curves.items():
            x, y = curve.getData()
            drawn[f"{key}_share_pct"] = np.asarray(x if x is not None else [], dtype=float)
            drawn[f"{key}_slowdown"] = 10.0 ** np.asarray(y if y is not None else [], dtype=float)
            brushes = curve.opts["symbolBrush"]
            drawn[f"{key}_filled"] = np.array([pg.mkBrush(b).style() != Qt.BrushStyle.NoBrush for b in brushes]
                                              if isinstance(brushes, list) else [], dtype=bool)
        points = self.current.getData()
        drawn["current_share_pct"] = np.asarray(points[0], dtype=float)
        drawn["current_slowdown"] = 10.0 ** np.asarray(points[1], dtype=float)
        drawn["capacity_billion_params"] = self._capacity_values.copy()
        drawn["capacity_texts"] = np.array(self.capacity_texts.texts(), dtype=object)
        drawn["capacity_rows"] = np.array(self.capacity_plot.getAxis("left").labels, dtype=object)
        return drawn

    # ---- drawing -------------------------------------------------------------------------

    @staticmethod
    def _series(sweep: OffloadSweep) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """(shares, {curve: (ITL s, slowdown, fits)}) along the sweep's rows, columns and diagonal."""
        return offload_curves(sweep)

    def _show_curves(self, study: TierStudy) -> None:
        sweep = study.sweep
        shares, series = self._series(sweep)
        x = 100.0 * shares
        top = MIN_DECADES
        bottom = 0.0
        for key, *_ in CURVES:
            _, slowdown, fits = series[key]
            y = np.log10(slowdown)
            # Hollow where the scenario does not fit: drawn, not dropped.
            filled, hollow = self._point_brushes[key]
            brushes = [filled if ok else hollow for ok in fits]
            self.curves[key].setData(x, y, symbolBrush=brushes)
            top = max(top, float(np.nanmax(y)))
            bottom = min(bottom, float(np.nanmin(y)))
        w = nearest_index(sweep.weight_fractions, study.current_offload)
        v = nearest_index(sweep.kv_fractions, study.current_kv_offload)
        marks_x = [100.0 * study.current_offload, 100.0 * study.current_kv_offload]
        marks_y = [math.log10(sweep.itl_slowdown[w, 0]), math.log10(sweep.itl_slowdown[0, v])]
        self.current.setData(marks_x, marks_y)
        span = top - bottom
        self.slowdown_plot.setYRange(bottom - 0.04 * span, top + 0.06 * span, padding=0.0)

    def _show_capacity(self, study: TierStudy) -> None:
        largest = study.sweep.largest
        values = np.array([largest.device_only_params, largest.with_tier_params]) / 1e9
        self._capacity_values = values
        model_billions = study.model_params / 1e9
        base, top = log_base(np.append(values, model_billions))
        widths = log_bar_widths(values, base)
        rows = np.arange(2, dtype=float)
        set_bars(self.capacity_bars, np.full(2, base), widths, rows, height=CAPACITY_BAR_HEIGHT,
                      brushes=self._capacity_brushes)
        tier_name = _short_tier_name(study.sweep.tier.name)
        self.capacity_plot.getAxis("left").set_rows(["device memory alone", f"+ {tier_name}"],
                                                    ids=["device_only", "with_tier"], max_width=190)
        self.canvas.settle()  # the plot's width after its names', for the texts beside the bars
        if largest.device_only_params > 0:
            texts = [format_params(largest.device_only_params),
                     f"{format_params(largest.with_tier_params)} (×{largest.capacity_multiple:.3g})"]
        else:
            texts = ["none: KV cache and workspace fill the device", "none"]
        self.capacity_texts.set_texts(texts)
        self._capacity_axis = (base, top, base + widths, math.log10(model_billions))
        self.model_line.setValue(math.log10(model_billions))
        self.model_line.label.setFormat(
            f"{self.engine.model(study.sweep.model).name}: {format_params(study.model_params)}")
        self._fit_capacity_texts()

    def _hold_plots_height(self) -> None:
        """The canvas at least as tall as its plots' least height (the two views' least heights,
        titles and axes), in the widget's pixels: presentation mode zooms the scene, and the
        page sizes its notes by their height for the width, leaving the canvas only its own
        least height, not its plots' hint (the page scrolls instead)."""
        least = self.canvas.ci.layout.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()
        zoom = max(1.0, self.canvas.width() / max(self.canvas.scene_width(), 1.0))
        height = math.ceil(least * zoom) + 2 * self.canvas.frameWidth()
        if height != self.canvas.minimumHeight():
            self.canvas.setMinimumHeight(height)

    def _fit_capacity_texts(self) -> None:
        """Leave room right of the bars for their texts, in pixels (refitted on resize)."""
        if self._capacity_axis is None:
            return
        base, top, ends, model_log = self._capacity_axis
        set_row_range(self.capacity_plot, 2, head_room=self._capacity_head_room())
        view_px = self.capacity_plot.vb.width() or FALLBACK_VIEW_PX
        right = right_end_for_texts(base, ends, self.capacity_texts.widths_px() + TEXT_GAP_PX, view_px)
        right = max(right, top + 0.15, model_log + 0.15)
        set_range(self.capacity_plot, 0, base, right)
        self.capacity_texts.place(ends + TEXT_GAP_PX * (right - base) / view_px, np.arange(len(ends), dtype=float))
        # The model line's name hangs right of the line, or left of it where it would run past
        # the plot's end (a large model on a narrow plot).
        label = self.model_line.label
        line_px = (model_log - base) / (right - base) * view_px
        side = 1.0 if line_px + label.boundingRect().width() > view_px else 0.0
        if label.anchors[0][0] != side:
            label.anchors = [(side, 0.0), (side, 0.0)]
            label.updatePosition()

    def _capacity_head_room(self) -> float:
        """Rows of free space above the first bar for the model line's name: enough that the
        name (hung from the top) ends above the first bar's text at this plot height. A fixed
        share of a row was less than the name's height on a short plot, and the name's white
        ground covered the top of that text."""
        height_px = self.capacity_plot.vb.height()
        if height_px <= 0:
            return MIN_HEAD_ROOM_ROWS
        name_px = self.model_line.label.boundingRect().height()
        boxes = [box.height() for box in self.capacity_texts.scene_boxes() if not box.isEmpty()]
        half_text_px = (max(boxes) if boxes else name_px) / 2
        # The first row's centre lies (0.5 + head) / (2 + head) of the height down; the name
        # ends MODEL_NAME_POSITION of it plus its own height down.
        share = min((MODEL_NAME_POSITION * height_px + name_px + half_text_px + HEAD_GAP_PX) / height_px,
                    MAX_HEAD_SHARE)
        return max(MIN_HEAD_ROOM_ROWS, (2 * share - 0.5) / (1 - share))

    def _show_texts(self, study: TierStudy) -> None:
        sweep = study.sweep
        tier = sweep.tier
        fallback = ""
        if self.far_tier == OWN_TIER and study.tier_id != OWN_TIER:
            own = self.catalog.accelerators[sweep.accelerator].name
            fallback = f" — the {own} has no far tier of its own, so {tier.name} is shown. "
        self.tier_info.setText(
            f"{tier.name} sustains {sweep.far_bandwidth_Bps / 1e9:.3g} GB/s, 1/{sweep.bandwidth_ratio:.3g} of "
            f"device memory's {sweep.near_bandwidth_Bps / 1e12:.3g} TB/s; holds {float(tier.capacity_bytes) / 1e9:,.0f} GB"
            f"{fallback}"
        )
        scenario = sweep.scenario
        baseline = "" if sweep.baseline_fits else (
            " Everything in device memory does not fit this workload, so the slowdowns are against a step that "
            "could not run as such.")
        fits = "" if study.current_fits else " (does not fit)"
        self.current_text.setText(
            f"<b>This scenario</b> (batch {scenario.batch:,}, {scenario.input_len:,} + {scenario.output_len:,} tokens, "
            f"weights {scenario.weight_precision}, KV {scenario.kv_precision}, TP {scenario.tp} × PP {scenario.pp}): "
            f"{study.current_offload:.0%} of the weights and {study.current_kv_offload:.0%} of the KV cache in "
            f"{tier.name} → inter-token latency {study.current_slowdown:.3g}× that of all in device memory "
            f"({format_time(sweep.baseline_itl_s)}){fits}.{baseline}"
        )
        row = next((r for r in study.claim.tiers if r.tier.id == tier.id), None)
        chosen = ""
        if row is not None:
            at = ", ".join(
                f"{f:.0%} offloaded (a {m:g}× model) {s:.3g}× slower"
                for f, m, s in zip(study.claim.fractions, study.claim.capacity_multiples, row.engine_slowdown[:, 0],
                                   strict=True)
            )
            chosen = (f"<br><b>With {tier.name}</b> at batch {study.claim.batches[0]:,}: {at}; "
                      f"{max(study.claim.slowdowns) - 1:.0%} slower allows {row.largest_fraction:.1%} offloaded "
                      f"({row.capacity_multiple_within:.2f}× the model), and "
                      f"{_capacity_words(row.capacity_multiple_with_tier)}.")
        self.claim_text.setText(
            f"<b>The paper's claim</b> ({_claim_range()}): {html.escape(study.claim.sentence, quote=False)}{chosen}")

    # ---- the tier combo ------------------------------------------------------------------

    def _sync_combo(self) -> None:
        """Entries for the selected accelerator (its own tier first, where it has one)."""
        accelerator = self._combo_accelerator
        own = own_far_tier(self.engine, accelerator) if accelerator is not None else None
        entries = ([(OWN_TIER, f"{own.name} (the device's own)")] if own is not None else [])
        entries += [(tier_id, tier.name) for tier_id, tier in self.far_tiers.items()]
        current = self.resolved_tier(accelerator)[0] if accelerator is not None else self.far_tier
        self.combo.blockSignals(True)
        self.combo.clear()
        for tier_id, text in entries:
            self.combo.addItem(text, tier_id)
        index = self.combo.findData(current)
        self.combo.setCurrentIndex(max(index, 0))
        self.combo.blockSignals(False)

    def _combo_changed(self, index: int) -> None:
        tier_id = self.combo.itemData(index)
        if tier_id is None or tier_id == self.far_tier:
            return
        self.far_tier = tier_id
        self.view_option_changed.emit("far_tier", tier_id)
        self._tier_changed()

    def _tier_changed(self) -> None:
        if self.frame is not None and self.isVisible():
            self.refresh_now()
        # Hidden: showEvent sees the tier differ from the study's and recomputes.


def _glyph(marker: str) -> str:
    return {"o": "●", "s": "■", "t": "▼"}.get(marker, "●")


def _claim_range() -> str:
    low_m, high_m = CLAIM_CAPACITY_MULTIPLES
    low_s, high_s = CLAIM_SLOWDOWNS
    return f"{low_m:g}–{high_m:g}× larger models at {100 * (low_s - 1):.0f}–{100 * (high_s - 1):.0f}% slowdown"


def _short_tier_name(name: str) -> str:
    return name.split(" over ")[0].split(" (")[0]


def _capacity_words(multiple: float) -> str:
    """What the tier's capacity allows, as a multiple of the model that device memory alone holds."""
    if multiple > 0:
        return f"its capacity {multiple:.3g}×"
    return "no capacity multiple: device memory alone holds no weights beside the KV cache and workspace"
