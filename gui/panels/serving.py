"""Serving: every shown accelerator under a stream of requests, simulated as a serving engine
schedules it.

Two pages. **Against the rate**: for each shown accelerator, output throughput and p99 TTFT and
TPOT over request rates from a tenth to one and a half times what its largest static batch
would sustain, the SLO lines, the current rate and each accelerator's capacity at the SLO
(also as bars). **This rate's run**: the selected accelerator at the current rate: running
requests and the queue over time, the KV cache in use, and the TTFT and inter-token latency
distributions. The settings (arrivals, lengths, scheduler and its limits, SLO, disaggregation)
are the workspace's ``serving`` spec, so presets and the session keep them.

The simulations run off the GUI thread, newest first: the current run at every change (a few
milliseconds), the sweep and the capacities once the controls rest (tenths of a second per
accelerator), and only while the tab is shown. Every number is the engine's
(``engine.studies.serving``); this panel only draws them.
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QButtonGroup,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.cost import Pricing
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.serving import (
    ARRIVAL_LABELS,
    ARRIVALS,
    LENGTH_DISTRIBUTIONS,
    LINKS,
    POLICIES,
    POLICY_LABELS,
    ROUTERS,
    ServingSpec,
)
from accelscope.engine.core.units import format_time, significant
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.analysis import ServingStudy
from accelscope.engine.studies.serving.capacity import UNDETERMINED
from accelscope.engine.studies.serving.run import simulator_compiled
from accelscope.engine.studies.serving.split import SplitStudy, split_study
from accelscope.engine.studies.serving.view import (
    Capacity,
    CurrentRun,
    RateCurve,
    current_run,
    each_shown,
)
from accelscope.engine.text.serving import cheapest_sentences, serving_sentences

from ..controls.flow import FlowLayout
from ..look import palette
from ..look.style import (
    PLOT_FONT_POINTS,
    html_text_colour,
    pen,
    plot_brush,
    plot_colour,
    plot_font,
    plot_pen,
    style_plot,
)
from ..plotkit.axes import ROW_LABEL_MAX_PX, GridAxis, RowAxis, log_axes
from ..plotkit.bars import RowCanvas, hold_least_width
from ..plotkit.picking import RowPicker, SpotRefs, spot_tip
from ..plotkit.plot import add_plot
from ..plotkit.points import LineSet, SpotRef, Spots
from ..plotkit.text import WrappedLabel, tooltip_html
from .analysis import AnalysisPanel
from .base import PageStack, accelerator_label

RATE_PAGE, RUN_PAGE = 0, 1
PAGE_NAMES = ("rate", "run")  # by index, as exports name the pages
# The sweep and capacities leave one core to the window, so that a change's repaint never waits
# behind the simulation for a core (on two cores: one simulation thread).
STUDY_THREADS = max(1, (os.cpu_count() or 1) - 1)
MARKER_PX = 8
CAPACITY_MARKER_PX = 15
SLO_COLOUR = "#B2182B"
RATE_LINE_COLOUR = "#555555"
RUNNING_COLOUR = "#4C72B0"
WAITING_COLOUR = "#DD8452"
KV_COLOUR = "#55A868"
TTFT_COLOUR = "#4C72B0"
ITL_COLOUR = "#8172B2"
BAR_HEIGHT = 0.6
SPIN_WIDTH_PX = 92
RATE_MARGIN = 1.25  # the rate axes reach this factor beyond the lowest and highest rate swept
PENDING_TEXT = "…"  # beside a capacity row whose accelerator is still being simulated
CAPACITY_TEXT_GAP_PX = 4  # between a capacity bar's end and its value, and after the value
CAPACITY_RANGE_MIN_SHARE = 1.15  # the capacity axis reaches at least this far beyond the longest bar
# On a plot too narrow for the texts, the longest bar keeps at least this share of the width
# (its text is then cut by the plot's edge rather than the bars shrinking to nothing).
CAPACITY_BAR_LEAST_SHARE = 0.25
SLO_HEADROOM = 2.5  # a latency plot reaches at least this factor above its SLO line (and √ of it below)

# Spin boxes whose 0 stands for "take the policy's default" / "no limit".
DEFAULT_TEXT = "default"
NO_LIMIT_TEXT = "none"
STEADY_TEXT = "steady state"  # the requests of a run sized by time (no count given)
# A cold compile of the simulator on a 2-core machine, first start only (then it loads from the
# on-disk cache in a fraction of a second): what the tab counts down from while it waits.
PREPARING_ESTIMATE_S = 40.0


@dataclass(frozen=True)
class _Setting:
    """One serving setting's control: the spec field, its label and tool tip."""

    field: str
    label: str
    tip: str
    more: bool = False  # under "More settings"


SETTINGS: tuple[_Setting, ...] = (
    _Setting("arrival", "Arrivals", "How requests arrive: Poisson at a rate, bursty (Gamma gaps), all at once, "
                                    "or a closed loop of users each waiting for its reply"),
    _Setting("rate_rps", "Rate", "Requests per second over the whole deployment (Poisson and bursty arrivals)"),
    _Setting("burstiness_cv", "Burst CV", "Coefficient of variation of the gaps between requests (1 = Poisson)"),
    _Setting("concurrency", "Users", "Closed loop: users, each sending its next request when its reply ends"),
    _Setting("think_s", "Think", "Closed loop: mean pause before a user's next request"),
    _Setting("requests", "Requests", "Requests of this rate's run: 'steady state' sizes it by time (a warm-up, then "
             "a window of several end-to-end latencies and 2,000 requests); a number runs exactly that many. The "
             "curves and capacities always size their own runs"),
    _Setting("policy", "Scheduler", "The serving engine's scheduling rules and defaults"),
    _Setting("slo_ttft_ms", "p99 TTFT ≤", "Service-level objective on the 99th-percentile time to first token "
                                         "(none: no limit)"),
    _Setting("slo_tpot_ms", "p99 TPOT ≤", "Service-level objective on the 99th-percentile time per output token "
                                         "(none: no limit)"),
    _Setting("input_distribution", "Prompts", "How prompt lengths spread about the scenario's input length", True),
    _Setting("output_distribution", "Replies", "How reply lengths spread about the scenario's output length", True),
    _Setting("length_cv", "Length CV", "Standard deviation over mean of the uniform and log-normal lengths", True),
    _Setting("max_num_seqs", "Max sequences", "Most requests scheduled in one iteration (default: the policy's "
                                              "for this device)", True),
    _Setting("max_batched_tokens", "Token budget", "Most tokens (prefill chunks and decode tokens) per iteration "
                                                   "(default: the policy's)", True),
    _Setting("memory_fraction", "KV memory", "Share of the device memory the engine plans with (of total for vLLM, "
                                             "of what is free for TensorRT-LLM; default: 90%)", True),
    _Setting("block_size", "Block", "Tokens per KV-cache block (default: the policy's)", True),
    _Setting("prefix_tokens", "Shared prefix", "A system prompt every request shares, cached once (0: none)", True),
    _Setting("router", "Router", "How requests are spread over the data-parallel replicas", True),
    _Setting("prefill_replicas", "Prefill replicas", "Disaggregated serving: replicas (each TP × PP) that only "
                                                     "prefill (0 with 0 decode: aggregated)", True),
    _Setting("decode_replicas", "Decode replicas", "Disaggregated serving: replicas that only decode", True),
    _Setting("link", "KV link", "What carries a prompt's KV cache from prefill to decode", True),
    _Setting("link_bandwidth_GBps", "Link GB/s", "Custom link: bandwidth per direction", True),
    _Setting("link_latency_us", "Link µs", "Custom link: latency", True),
    _Setting("seed", "Seed", "Seed of the drawn arrivals and lengths (the same seed, the same requests)", True),
)

LINK_LABELS = {"scale-out": "scale-out network", "scale-up": "scale-up interconnect", "custom": "custom"}
DISTRIBUTION_LABELS = {"fixed": "fixed", "uniform": "uniform", "exponential": "exponential", "lognormal": "log-normal"}
ROUTER_LABELS = {"round-robin": "round robin", "least-outstanding": "least outstanding"}


def _finite_log(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, np.log10(values), np.nan)


class _Jobs(QObject):
    """Carries results from the simulation thread to the panel (queued to the GUI thread)."""

    run_done = Signal(int, object)  # generation, CurrentRun | str (why it cannot run)
    study_progress = Signal(int, object)  # generation, (curves, capacities) so far
    study_done = Signal(int, object)  # generation, (ServingStudy, SplitStudy | str | None)
    run_posted = Signal(object)  # a run's job, to be submitted from the GUI thread's queue


class ServingPanel(AnalysisPanel):
    title = "Serving under traffic"
    study_view = "serving"
    # What an export of every tab draws (gui.export): both pages (the run page's long timelines are
    # drawn, and exported, at a point or two per pixel).
    main_page = "rate"
    extra_pages: tuple[str, ...] = ("run",)
    serving_changed = Signal(str, object)  # a serving setting the user changed (field, value)
    explanation_changed = Signal()

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        self.spec = ServingSpec()
        self.run: CurrentRun | None = None
        self.run_problem: str | None = None
        self.split: SplitStudy | None = None
        self.split_problem: str | None = None
        self.busy = False
        self._preparing_since: float | None = None  # when the tab first waited for the simulator's compile
        self._preparing_timer = QTimer(self)  # counts the wait down in the caption
        self._preparing_timer.setInterval(1000)
        self._preparing_timer.timeout.connect(self._preparing_tick)
        self._run_inputs: tuple | None = None
        self._curves: dict[str, RateCurve] = {}
        self._capacities: dict[str, Capacity] = {}
        # (capacities, (engine, cost settings), sentences) of the caption's cheapest line, once written
        self._cheapest: tuple[tuple[Capacity, ...], tuple, list[str]] | None = None
        self._styles: dict[str, tuple] = {}  # accelerator -> (point pen, brush, hollow brush), made once
        self._run_generation = 0
        self._run_in_flight = False  # a run submitted and not yet delivered
        self._study_generation = 0
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="accelscope-serving")
        self._retired = threading.Event()
        self._jobs = _Jobs(self)
        self._jobs.run_done.connect(self._run_arrived)
        self._jobs.study_progress.connect(self._study_progressed)
        self._jobs.study_done.connect(self._study_arrived)
        self._jobs.run_posted.connect(self._submit_posted, Qt.ConnectionType.QueuedConnection)
        # Captures the event and the executor, not the panel: a slot must not keep it alive.
        self.destroyed.connect(lambda *_args, retired=self._retired, executor=self._executor: (
            retired.set(), executor.shutdown(wait=False, cancel_futures=True)))

        self._build_settings()
        self.pages = PageStack()
        self.pages.addWidget(self._build_rate_page())
        self.pages.addWidget(self._build_run_page())
        self.caption = WrappedLabel("")
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setFont(plot_font())
        self.caption.setContentsMargins(8, 2, 8, 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.settings)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.caption)
        self.show_settings(self.spec)

    # ---- building ------------------------------------------------------------------------

    def _build_settings(self) -> None:
        font = plot_font()
        self.settings = QWidget()
        self.settings.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        flow = FlowLayout(self.settings, spacing=6)
        flow.setContentsMargins(8, 6, 8, 2)
        self.page_buttons = QButtonGroup(self)
        pages = QWidget()
        pages_layout = QHBoxLayout(pages)
        pages_layout.setContentsMargins(0, 0, 0, 0)
        pages_layout.setSpacing(0)
        for page, text, tip in ((RATE_PAGE, "Against the rate", "Every shown accelerator over a range of rates"),
                                (RUN_PAGE, "This rate's run", "The selected accelerator at the current rate")):
            button = QPushButton(text)
            button.setCheckable(True)
            button.setToolTip(tip)
            button.setFont(font)
            self.page_buttons.addButton(button, page)
            pages_layout.addWidget(button)
        self.page_buttons.button(RATE_PAGE).setChecked(True)
        self.page_buttons.idClicked.connect(self.show_page)
        flow.addWidget(pages)

        self.controls: dict[str, QWidget] = {}
        self.control_boxes: dict[str, QWidget] = {}
        for setting in SETTINGS:
            widget = self._control(setting.field)
            widget.setFont(font)
            widget.setToolTip(setting.tip)
            box = QWidget()
            row = QHBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(4)
            label = QLabel(setting.label)
            label.setFont(font)
            label.setToolTip(setting.tip)
            label.setBuddy(widget)
            row.addWidget(label)
            row.addWidget(widget)
            flow.addWidget(box)
            self.controls[setting.field] = widget
            self.control_boxes[setting.field] = box
        self.more_button = QPushButton("More settings ▸")
        self.more_button.setCheckable(True)
        self.more_button.setFont(font)
        self.more_button.setToolTip("Lengths, scheduler limits, prefix caching, routing, disaggregation, seed")
        self.more_button.toggled.connect(self._toggle_more)
        flow.addWidget(self.more_button)

    def _control(self, name: str) -> QWidget:
        """The widget of one spec field; each reports the user's changes as ``serving_changed``."""
        choices = {
            "arrival": (ARRIVALS, ARRIVAL_LABELS),
            "policy": (POLICIES, POLICY_LABELS),
            "input_distribution": (LENGTH_DISTRIBUTIONS, DISTRIBUTION_LABELS),
            "output_distribution": (LENGTH_DISTRIBUTIONS, DISTRIBUTION_LABELS),
            "router": (ROUTERS, ROUTER_LABELS),
            "link": (LINKS, LINK_LABELS),
        }
        if name in choices:
            values, labels = choices[name]
            combo = QComboBox()
            for value in values:
                combo.addItem(labels[value], value)
            combo.activated.connect(lambda index, c=combo, n=name: self.serving_changed.emit(n, c.itemData(index)))
            return combo
        # (low, high, decimals, suffix, special text for the minimum, step)
        numbers: dict[str, tuple] = {
            "rate_rps": (0.001, 1e6, 3, " req/s", None, 0.5),
            "burstiness_cv": (0.0, 20.0, 2, "", None, 0.5),
            "concurrency": (1, 100_000, 0, "", None, 1),
            "think_s": (0.0, 86_400.0, 2, " s", None, 0.5),
            "requests": (9, 100_000, 0, "", STEADY_TEXT, 100),
            "slo_ttft_ms": (0.0, 86_400_000.0, 0, " ms", NO_LIMIT_TEXT, 100),
            "slo_tpot_ms": (0.0, 86_400_000.0, 0, " ms", NO_LIMIT_TEXT, 10),
            "length_cv": (0.0, 20.0, 2, "", None, 0.1),
            "max_num_seqs": (0, 1_000_000, 0, "", DEFAULT_TEXT, 16),
            "max_batched_tokens": (0, 100_000_000, 0, "", DEFAULT_TEXT, 1024),
            "memory_fraction": (0.0, 100.0, 0, " %", DEFAULT_TEXT, 5),
            "block_size": (0, 4096, 0, "", DEFAULT_TEXT, 16),
            "prefix_tokens": (0, 100_000_000, 0, "", None, 128),
            "prefill_replicas": (0, 64, 0, "", None, 1),
            "decode_replicas": (0, 64, 0, "", None, 1),
            "link_bandwidth_GBps": (0.001, 1e6, 1, "", None, 10),
            "link_latency_us": (0.0, 1e9, 1, "", None, 1),
            "seed": (0, 2**31 - 1, 0, "", None, 1),
        }
        low, high, decimals, suffix, special, step = numbers[name]
        spin: QAbstractSpinBox
        if decimals == 0 and name not in ("slo_ttft_ms", "slo_tpot_ms", "memory_fraction"):
            spin = QSpinBox()
            spin.setRange(int(low), int(high))
        else:
            spin = QDoubleSpinBox()
            spin.setDecimals(decimals)
            spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.setSuffix(suffix)
        if special is not None:
            spin.setSpecialValueText(special)
        spin.setKeyboardTracking(False)  # a typed number counts once it is entered, not per digit
        spin.setAccelerated(True)
        spin.setMinimumWidth(SPIN_WIDTH_PX)
        spin.valueChanged.connect(lambda value, n=name: self.serving_changed.emit(n, self._spec_value(n, value)))
        return spin

    @staticmethod
    def _spec_value(name: str, value: float) -> object:
        """A control's value as the spec field takes it."""
        if name in ("slo_ttft_ms", "slo_tpot_ms"):
            return None if value <= 0 else float(value)
        if name in ("max_num_seqs", "max_batched_tokens", "block_size"):
            return None if value <= 0 else int(value)
        if name == "memory_fraction":
            return None if value <= 0 else float(value) / 100.0
        if name == "requests":
            return None if value < 10 else int(value)
        if name in ("concurrency", "prefix_tokens", "prefill_replicas", "decode_replicas", "seed"):
            return int(value)
        return float(value)

    def _build_rate_page(self) -> QWidget:
        # As wide as the plots' least widths and as tall as the capacity names need, a line apart:
        # the page scrolls rather than cut the capacity texts at the right edge.
        self.rate_canvas = RowCanvas()
        layout = self.rate_canvas.ci
        # The capacity bars name every accelerator in its colour: the curves' legend.
        # Throughput across the top, the two latencies beneath, the capacity bars (a row per
        # accelerator, so as tall as can be) down the right.
        self.throughput_plot = self._log_plot(layout, 0, 0, "Output throughput", "tokens/s", colspan=2)
        # Short titles: a plot is never narrower than its title, and three share the width.
        # Short axis titles too: a rotated title longer than its plot is tall runs into the next
        # plot (the plot titles say what the values are).
        self.ttft_plot = self._log_plot(layout, 1, 0, "p99 TTFT", "TTFT (s)")
        self.tpot_plot = self._log_plot(layout, 1, 1, "p99 TPOT", "TPOT (ms)")
        # One rate range for the three, set from the curves (an x link would align them by their
        # place on screen, which offsets plots side by side).
        self.capacity_plot = add_plot(layout, row=0, col=2, rowspan=2, axisItems={"left": RowAxis("left"),
                                                                               "bottom": GridAxis("bottom")})
        style_plot(self.capacity_plot, title="Capacity", x_label="req/s at the SLO", x_unit=None,
                   y_label="", y_unit=None)
        self.capacity_plot.getAxis("left").setLabel("")
        self.capacity_plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.capacity_plot.getViewBox().invertY(True)
        layout.layout.setColumnStretchFactor(0, 3)
        layout.layout.setColumnStretchFactor(1, 3)
        layout.layout.setColumnStretchFactor(2, 2)
        layout.layout.setRowStretchFactor(0, 2)
        layout.layout.setRowStretchFactor(1, 3)
        for plot in (self.throughput_plot, self.ttft_plot, self.tpot_plot, self.capacity_plot):
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
        self.capacity_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=BAR_HEIGHT)
        self.capacity_plot.addItem(self.capacity_bars)
        self.capacity_texts: list[pg.TextItem] = []
        # The bars' value texts need room in pixels, whatever the plot's width: refit on resize.
        self.capacity_plot.getViewBox().sigResized.connect(self._fit_capacity_range)

        # Every accelerator's curve of a plot in one item (one per plot): with the whole catalog
        # shown, 114 PlotDataItems (a curve and a scatter each) cost ~20 ms a paint of the page.
        self.lines = {name: LineSet() for name in ("throughput", "ttft", "tpot")}
        for name, plot in (("throughput", self.throughput_plot), ("ttft", self.ttft_plot), ("tpot", self.tpot_plot)):
            plot.addItem(self.lines[name])
        self.curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}  # (rates, values) as drawn
        # What each curve was last given (the curve object and its pen width): a curve unchanged
        # since is not given its data again (a study's progress redraws every curve so far once
        # per accelerator).
        self._drawn: dict[tuple[str, str], tuple[RateCurve, float]] = {}
        self._drawn_selection: str | None = None
        self._refs = SpotRefs()
        tip = spot_tip(self._tip_for)
        self.points = {name: Spots(tip=tip, size=MARKER_PX) for name in ("throughput", "ttft", "tpot")}
        self.capacity_marks = Spots(tip=tip, size=CAPACITY_MARKER_PX, symbol="d", pen=plot_pen("k", width=1.5))
        for name, plot in (("throughput", self.throughput_plot), ("ttft", self.ttft_plot), ("tpot", self.tpot_plot)):
            self.points[name].setZValue(10)
            plot.addItem(self.points[name])
            self.points[name].sigClicked.connect(
                lambda _item, points, _event: self.accelerator_selected.emit(points[0].data().accelerator)
                if len(points) else None)
        self.capacity_marks.setZValue(20)
        self.throughput_plot.addItem(self.capacity_marks)
        self.slo_lines = {
            name: pg.InfiniteLine(angle=0, movable=False, pen=plot_pen(SLO_COLOUR, width=2, style=Qt.PenStyle.DashLine))
            for name in ("ttft", "tpot")
        }
        self.ttft_plot.addItem(self.slo_lines["ttft"], ignoreBounds=True)
        self.tpot_plot.addItem(self.slo_lines["tpot"], ignoreBounds=True)
        # The lines are named in the caption: a label inside the plot lay over the curves
        # wherever it was put, and one beside it took a projector's width from the plots.
        self.rate_lines = []
        for plot in (self.throughput_plot, self.ttft_plot, self.tpot_plot):
            line = pg.InfiniteLine(angle=90, movable=False,
                                   pen=plot_pen(RATE_LINE_COLOUR, width=1.5, style=Qt.PenStyle.DotLine))
            plot.addItem(line, ignoreBounds=True)
            self.rate_lines.append(line)
        self.capacity_picker = RowPicker(self.rate_canvas, [self.capacity_plot], lambda: len(self._capacity_rows),
                                         self._capacity_tip, self._capacity_clicked, self)
        self._capacity_rows: list[Capacity] = []
        self._capacity_pending: frozenset[str] = frozenset()  # rows of a study in progress not yet simulated
        self._study_shown: tuple[str, ...] = ()  # the accelerators the running study simulates
        self._capacity_room_rows: tuple[str, ...] = ()  # the rows the capacity plot's least width is for
        self._capacity_room_px = 0  # the least width the capacity texts need
        return self.rate_canvas

    def _log_plot(self, layout: pg.GraphicsLayout, row: int, col: int, title: str, y_label: str,
                  colspan: int = 1) -> pg.PlotItem:
        plot = add_plot(layout, row=row, col=col, colspan=colspan, axisItems=log_axes())
        plot.setLogMode(True, True)
        style_plot(plot, title=title, x_label="request rate", x_unit="req/s", y_label=y_label, y_unit=None)
        return plot

    def _build_run_page(self) -> QWidget:
        self.run_canvas = pg.GraphicsLayoutWidget()
        layout = self.run_canvas.ci
        self.timeline_plot = add_plot(layout, row=0, col=0, colspan=2,
                                            axisItems={"left": GridAxis("left"), "bottom": GridAxis("bottom")})
        style_plot(self.timeline_plot, title="Requests running and waiting", x_label="time", x_unit="s",
                   y_label="requests", y_unit=None)
        self.kv_plot = add_plot(layout, row=1, col=0, colspan=2,
                                      axisItems={"left": GridAxis("left"), "bottom": GridAxis("bottom")})
        style_plot(self.kv_plot, title=None, x_label="time", x_unit="s", y_label="KV cache in use", y_unit="%")
        self.kv_plot.setXLink(self.timeline_plot)
        self.kv_plot.setYRange(0, 100, padding=0.02)
        self.ttft_hist = add_plot(layout, row=2, col=0, axisItems=log_axes())
        self.itl_hist = add_plot(layout, row=2, col=1, axisItems=log_axes())
        for plot, title, x_label in ((self.ttft_hist, "Time to first token", "TTFT"),
                                     (self.itl_hist, "Inter-token latency", "ITL")):
            plot.setLogMode(True, False)
            style_plot(plot, title=title, x_label=x_label, x_unit="s", y_label="share", y_unit="%")
        for plot in (self.timeline_plot, self.kv_plot, self.ttft_hist, self.itl_hist):
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.getAxis("left").enableAutoSIPrefix(False)
        layout.layout.setRowStretchFactor(0, 3)
        layout.layout.setRowStretchFactor(1, 2)
        layout.layout.setRowStretchFactor(2, 3)
        self.timeline_legend = self.timeline_plot.addLegend(offset=(-10, 10), labelTextSize=f"{PLOT_FONT_POINTS}pt")
        self.running_line = self.timeline_plot.plot(pen=pen(RUNNING_COLOUR), name="running")
        self.waiting_line = self.timeline_plot.plot(pen=pen(WAITING_COLOUR), name="waiting")
        self.kv_line = self.kv_plot.plot(pen=pen(KV_COLOUR))
        # A run has a record per iteration (tens of thousands to millions): drawn as each pixel
        # column's lowest and highest value, which keeps every peak and costs a point or two per
        # pixel to draw or export (a whole run made an SVG path longer than Qt reads back).
        for line in (self.running_line, self.waiting_line, self.kv_line):
            line.setDownsampling(auto=True, method="peak")
            line.setClipToView(True)
        self.ttft_bars = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pen(TTFT_COLOUR),
                                         brush=plot_brush((76, 114, 176, 110)))
        self.itl_bars = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pen(ITL_COLOUR),
                                        brush=plot_brush((129, 114, 178, 110)))
        self.ttft_hist.addItem(self.ttft_bars)
        self.itl_hist.addItem(self.itl_bars)
        self.percentile_lines: dict[str, list[pg.InfiniteLine]] = {}
        for name, plot in (("ttft", self.ttft_hist), ("itl", self.itl_hist)):
            lines = []
            for label in ("p50", "p99"):
                line = pg.InfiniteLine(angle=90, movable=False, label=label,
                                       pen=plot_pen("k", width=1.5, style=Qt.PenStyle.DashLine),
                                       labelOpts={"position": 0.92, "color": plot_colour("k")})
                plot.addItem(line, ignoreBounds=True)
                lines.append(line)
            self.percentile_lines[name] = lines
        return self.run_canvas

    # ---- settings --------------------------------------------------------------------------

    @property
    def page(self) -> str:
        return PAGE_NAMES[self.pages.currentIndex()]

    def show_page(self, page: int | str) -> None:
        """Show a page, by its index or its name in PAGE_NAMES."""
        if isinstance(page, str):
            page = PAGE_NAMES.index(page)
        self.pages.setCurrentIndex(page)
        button = self.page_buttons.button(page)
        if not button.isChecked():
            button.setChecked(True)
        self._write_caption()

    def _toggle_more(self, shown: bool) -> None:
        self.more_button.setText("Fewer settings ◂" if shown else "More settings ▸")
        self.show_settings(self.spec)

    def show_settings(self, spec: ServingSpec) -> None:
        """The controls show ``spec``; those that do not apply to it are hidden."""
        self.spec = spec
        more = self.more_button.isChecked()
        applies = {
            "rate_rps": spec.arrival in ("poisson", "gamma"),
            "burstiness_cv": spec.arrival == "gamma",
            "concurrency": spec.arrival == "closed",
            "think_s": spec.arrival == "closed",
            "link": more and spec.disaggregated,
            "link_bandwidth_GBps": more and spec.disaggregated and spec.link == "custom",
            "link_latency_us": more and spec.disaggregated and spec.link == "custom",
            "router": more and (spec.disaggregated or self._replicas() > 1),
        }
        for setting in SETTINGS:
            widget = self.controls[setting.field]
            shown = applies.get(setting.field, more or not setting.more)
            self.control_boxes[setting.field].setVisible(shown)
            value = getattr(spec, setting.field)
            widget.blockSignals(True)
            try:
                if isinstance(widget, QComboBox):
                    widget.setCurrentIndex(max(widget.findData(value), 0))
                elif setting.field == "memory_fraction":
                    widget.setValue(0.0 if value is None else value * 100.0)
                else:
                    widget.setValue(0 if value is None else value)
            finally:
                widget.blockSignals(False)
        self.settings.updateGeometry()

    def _replicas(self) -> int:
        return self.frame.workspace.scenario.dp if self.frame is not None else 1

    # ---- computing -----------------------------------------------------------------------------

    def study_workspace(self, frame: Frame) -> Workspace:
        return frame.workspace

    def _run_key(self, frame: Frame) -> tuple:
        engine = frame.engine if frame.engine is not None else self._engine
        return engine, frame.workspace.scenario, frame.workspace.serving

    def update_frame(self, frame: Frame) -> None:
        if frame.workspace.serving != self.spec:
            self.show_settings(frame.workspace.serving)
        super().update_frame(frame)
        self._write_rate_lines()
        if self.isVisible() and self._run_key(frame) != self._run_inputs:
            self._start_run(frame)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.frame is not None and self._run_key(self.frame) != self._run_inputs:
            self._start_run(self.frame)

    def hideEvent(self, event) -> None:
        # Simulate only while shown: a sweep still running for a tab the user has left is
        # dropped at its next accelerator (its Python parts hold the GIL against other tabs'
        # updates), and a run not yet delivered is dropped; showing the tab starts both anew.
        if self.busy:
            self._study_generation += 1
            self._study_inputs = None
            self.busy = False
        if self._run_in_flight:
            self._run_generation += 1
            self._run_inputs = None
            self._run_in_flight = False
        super().hideEvent(event)

    def _start_run(self, frame: Frame) -> None:
        """Simulate the selected accelerator at the current rate off the GUI thread (a newer
        change makes this one's result moot: it is dropped)."""
        if self._retired.is_set():
            return
        self._run_inputs = self._run_key(frame)
        self._run_generation += 1
        self._run_in_flight = True
        generation = self._run_generation
        engine, workspace = self.engine, frame.workspace

        def job() -> None:
            if self._retired.is_set() or generation != self._run_generation:
                return
            try:
                result: object = current_run(engine, workspace)
            except AccelscopeError as error:
                result = str(error)
            self._deliver(self._jobs.run_done, generation, result)

        self._jobs.run_posted.emit(job)  # submitted once this change's frame is painted

    def _submit_posted(self, job) -> None:
        """Start a run posted by :meth:`_start_run`. The post follows the window's paint request,
        which the change made before it: the run's Python parts, started at once, held the GIL
        against that paint (a third of the Serving tab's changes took over 16 ms; a tenth now)."""
        if not self._retired.is_set():
            self._executor.submit(job)

    def _settled(self) -> None:
        # The sweep and the capacities: off the GUI thread once the controls rest.
        if self.frame is None or not self.isVisible() or self._retired.is_set():
            return
        frame = self.frame
        self._study_inputs = self.study_inputs(frame)
        self._study_generation += 1
        generation = self._study_generation
        engine, workspace = self.engine, frame.workspace
        self._study_shown = workspace.shown
        self.busy = True
        self._write_caption()

        def job() -> None:
            curves: list[RateCurve] = []
            found: list[Capacity] = []
            def cancelled() -> bool:
                return self._retired.is_set() or generation != self._study_generation

            for curve, capacity in each_shown(engine, workspace, threads=STUDY_THREADS, cancelled=cancelled):
                curves.append(curve)
                found.append(capacity)
                self._deliver(self._jobs.study_progress, generation, (tuple(curves), tuple(found)))
            if cancelled():
                return
            split = self._split_for(engine, workspace)
            self._deliver(self._jobs.study_done, generation, (ServingStudy(tuple(curves), tuple(found)), split))

        self._executor.submit(job)

    @staticmethod
    def _split_for(engine: Engine, workspace: Workspace) -> SplitStudy | str | None:
        """With a disaggregated spec: every split of its replicas for the selected accelerator."""
        spec = workspace.serving
        if not spec.disaggregated:
            return None
        try:
            return split_study(engine, workspace.scenario, spec, spec.prefill_replicas + spec.decode_replicas)
        except AccelscopeError as error:
            return str(error)

    def _deliver(self, signal, generation: int, result: object) -> None:
        if self._retired.is_set():
            return
        try:
            signal.emit(generation, result)
        except RuntimeError:  # the panel went away meanwhile (a theme change builds new tabs)
            pass

    def refresh_now(self) -> None:
        """Everything for the latest frame, now and on this thread (exports, reports, tests)."""
        self._timer.stop()
        frame = self.frame
        if frame is None:
            return
        started = time.perf_counter()
        self._study_generation += 1
        self._run_generation += 1
        self._study_inputs = self.study_inputs(frame)
        self.study = self.compute(frame)
        split = self._split_for(self.engine, frame.workspace)
        self.study_seconds = time.perf_counter() - started
        self.study_frame = frame
        self._run_inputs = self._run_key(frame)
        try:
            run: object = current_run(self.engine, frame.workspace)
        except AccelscopeError as error:
            run = str(error)
        self.busy = False
        self._take_split(split)
        self._take_run(run)
        self.show_study(self.study)
        self.prepare_paint()

    def pending(self) -> bool:
        return self._timer.isActive() or self.busy

    def retire(self) -> None:
        """Stop simulating: queued runs are dropped and the one running stops at its next
        accelerator (the window closes, or a theme change replaces the tab)."""
        self._timer.stop()
        self._retired.set()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        """Block until the queued simulations have run (tests), the posted ones submitted first."""
        QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall.value)
        self._executor.submit(lambda: None).result(timeout=timeout_s)

    # ---- results ---------------------------------------------------------------------------

    def _run_arrived(self, generation: int, result: object) -> None:
        if generation != self._run_generation:
            return
        self._run_in_flight = False
        self._take_run(result)

    def _take_run(self, result: object) -> None:
        if isinstance(result, str):
            self.run, self.run_problem = None, result
        else:
            self.run, self.run_problem = result, None
        self._draw_run()
        self._write_caption()
        self.explanation_changed.emit()

    def _study_progressed(self, generation: int, partial: object) -> None:
        if generation != self._study_generation:
            return
        curves, found = partial
        done = {c.accelerator for c in found}
        self._draw_curves(curves, found, pending=tuple(a for a in self._study_shown if a not in done))
        self._write_caption(done=len(curves))

    def _study_arrived(self, generation: int, result: object) -> None:
        if generation != self._study_generation:
            return
        study, split = result
        self.busy = False
        self.study = study
        self.study_frame = self.frame
        self._take_split(split)
        self.show_study(study)

    def _take_split(self, split: SplitStudy | str | None) -> None:
        self.split, self.split_problem = (None, split) if isinstance(split, str) else (split, None)

    def show_study(self, study: object) -> None:
        assert isinstance(study, ServingStudy)
        self._draw_curves(study.curves, study.capacities)
        self._write_caption()

    # ---- drawing ---------------------------------------------------------------------------

    def _label(self, accelerator_id: str) -> str:
        accelerator = self.catalog.accelerators.get(accelerator_id)
        return accelerator_label(accelerator) if accelerator is not None else accelerator_id

    def _draw_curves(self, curves: tuple[RateCurve, ...], found: tuple[Capacity, ...],
                     pending: tuple[str, ...] = ()) -> None:
        """``pending``: the accelerators of a study in progress not yet simulated."""
        self._curves = {curve.accelerator: curve for curve in curves}
        self._capacities = {c.accelerator: c for c in found}
        self._drawn_selection = self.selected
        keys = set()
        spots: dict[str, tuple[list, list, list, list, list]] = {name: ([], [], [], [], [])
                                                                 for name in ("throughput", "ttft", "tpot")}
        marks = ([], [], [])
        for curve in curves:
            if curve.problem is not None or curve.rates_rps.size == 0:
                continue
            colour = plot_colour(palette.colour_for(curve.accelerator))
            width = 4.0 if curve.accelerator == self.selected else 2.0
            series = {"throughput": curve.throughput_output_tok_s, "ttft": curve.ttft_p99_s,
                      "tpot": curve.tpot_p99_s * 1e3}
            for name in ("throughput", "ttft", "tpot"):
                key = (curve.accelerator, name)
                keys.add(key)
                values = np.where(np.isfinite(series[name]) & (series[name] > 0), series[name], np.nan)
                drawn = self._drawn.get(key)
                if drawn is None or drawn[0] is not curve or drawn[1] != width:
                    self._set_curve(name, key, curve.rates_rps, values, pg.mkPen(colour, width=width),
                                    selected=curve.accelerator == self.selected)
                    self._drawn[key] = (curve, width)
                xs, ys, refs, pens, brushes = spots[name]
                point_pen, filled, hollow = self._style(curve.accelerator)
                for index, rate in enumerate(curve.rates_rps):
                    if not math.isfinite(values[index]):
                        continue
                    xs.append(rate)
                    ys.append(values[index])
                    refs.append(self._refs(curve.accelerator, name, index))
                    pens.append(point_pen)
                    brushes.append(hollow if curve.unstable[index] else filled)
            capacity = self._capacities.get(curve.accelerator)
            if capacity is not None and capacity.rate_rps > 0 and math.isfinite(capacity.rate_rps):
                log_rates = np.log10(curve.rates_rps)
                log_throughput = _finite_log(curve.throughput_output_tok_s)
                usable = np.isfinite(log_throughput)
                if usable.any():
                    y = 10.0 ** float(np.interp(math.log10(capacity.rate_rps), log_rates[usable], log_throughput[usable]))
                    marks[0].append(capacity.rate_rps)
                    marks[1].append(y)
                    marks[2].append(self._refs(curve.accelerator, "capacity"))
        for key in list(self.curves):
            if key not in keys:
                self.curves.pop(key)
                self._drawn.pop(key, None)
                self.lines[key[1]].set_style(key, visible=False)
        for name, (xs, ys, refs, pens, brushes) in spots.items():
            self.points[name].set_spots(xs, ys, refs, pens=pens, brushes=brushes)
        rates = [curve.rates_rps for curve in curves if curve.rates_rps.size]
        if rates:
            low, high = min(float(r.min()) for r in rates), max(float(r.max()) for r in rates)
            for plot in (self.throughput_plot, self.ttft_plot, self.tpot_plot):
                plot.setXRange(math.log10(low / RATE_MARGIN), math.log10(high * RATE_MARGIN), padding=0.0)
        self.capacity_marks.set_spots(*marks, brushes=[self._style(ref.accelerator)[1] for ref in marks[2]])
        self._fit_latency_ranges(spots)
        self._draw_capacity_bars(found, pending)
        self._write_slo_lines()
        self._write_rate_lines()

    def _set_curve(self, name: str, key: tuple[str, str], rates: np.ndarray, values: np.ndarray, pen,
                   *, selected: bool) -> None:
        """One accelerator's curve on one plot: its finite points joined where they are
        neighbours (a missing point breaks the line, as pyqtgraph's connect="finite" does)."""
        kept = np.flatnonzero(np.isfinite(values))
        joined = np.append(np.diff(kept) == 1, False)
        lines = self.lines[name]
        lines.set_line(key, rates[kept], values[kept], connect=joined, pen=pen)
        lines.set_style(key, pen=pen, z=1.0 if selected else 0.0, visible=True)
        self.curves[key] = (rates, values)

    def _fit_latency_ranges(self, spots: dict) -> None:
        """Each latency plot spans its points and its SLO line, with room above the line for its
        label (left to itself the range ends at the highest point, and a line there lost its label)."""
        spec = self.spec
        ttft_limit_s = None if spec.slo_ttft_ms is None else spec.slo_ttft_ms / 1e3
        for name, plot, limit in (("ttft", self.ttft_plot, ttft_limit_s), ("tpot", self.tpot_plot, spec.slo_tpot_ms)):
            values = [value for value in spots[name][1] if value > 0 and math.isfinite(value)]
            if limit is not None and limit > 0:
                values += [limit / SLO_HEADROOM ** 0.5, limit * SLO_HEADROOM]
            if not values:
                plot.enableAutoRange(y=True)
                continue
            plot.setYRange(math.log10(min(values)), math.log10(max(values)), padding=0.05)

    def _style(self, accelerator_id: str) -> tuple:
        """(point pen, filled brush, hollow brush) of an accelerator, made once: pyqtgraph caches
        a marker's picture by its pen and brush objects."""
        style = self._styles.get(accelerator_id)
        if style is None:
            colour = plot_colour(palette.colour_for(accelerator_id))
            style = self._styles[accelerator_id] = (pg.mkPen(colour, width=1.5), pg.mkBrush(colour), plot_brush("w"))
        return style

    def _draw_capacity_bars(self, found: tuple[Capacity, ...], pending: tuple[str, ...] = ()) -> None:
        """A row per accelerator: its capacity, or, while a study runs, PENDING_TEXT for those not
        yet simulated. Every row from the study's start: names, rows and the plots' widths hold
        while the results come in (rows added one by one moved the plots at every result and
        laid the page out again)."""
        found = (*found, *(Capacity(accelerator, math.nan, math.nan, 0, problem=None) for accelerator in pending))
        self._capacity_pending = frozenset(pending)
        self._capacity_rows = list(found)
        rates = np.array([c.rate_rps if math.isfinite(c.rate_rps) else 0.0 for c in found], dtype=float)
        colours = [palette.colour_for(c.accelerator) for c in found]
        self.capacity_bars.setOpts(x0=np.zeros(len(found)), y=np.arange(len(found), dtype=float), width=rates,
                                   height=BAR_HEIGHT, brushes=[plot_brush(c) for c in colours],
                                   pens=[plot_pen(c, width=1) for c in colours])
        axis: RowAxis = self.capacity_plot.getAxis("left")
        axis.set_rows([self._label(c.accelerator) for c in found], colours, max_width=ROW_LABEL_MAX_PX,
                      ids=[c.accelerator for c in found])
        axis.set_bold_row(next((i for i, c in enumerate(found) if c.accelerator == self.selected), None))
        while len(self.capacity_texts) < len(found):
            text = pg.TextItem(anchor=(0.0, 0.5), color=plot_colour("k"))
            text.setFont(plot_font())
            self.capacity_plot.addItem(text, ignoreBounds=True)
            self.capacity_texts.append(text)
        for index, text in enumerate(self.capacity_texts):
            if index >= len(found):
                text.setVisible(False)
                continue
            capacity = found[index]
            pending_row = capacity.accelerator in self._capacity_pending
            text.setText(PENDING_TEXT if pending_row else self._capacity_text(capacity))
            text.setVisible(True)
        self._capacity_rates = rates
        # Room for the widest text beside a bar a quarter of the plot long ("cannot serve"
        # beside no bar at all ran past the plot's edge on a projector).
        widest = max((text.boundingRect().width() for text in self.capacity_texts[:len(found)]), default=0.0)
        self._capacity_room_px = math.ceil((widest + 2 * CAPACITY_TEXT_GAP_PX) / (1.0 - CAPACITY_BAR_LEAST_SHARE))
        self._fit_capacity_range()
        self.capacity_plot.setYRange(-0.6, max(len(found), 1) - 0.4, padding=0.0)

    def _fit_capacity_range(self, *_args) -> None:
        """An x range with room, in pixels, for each bar's value text beside it (texts do not
        scale with the plot: a fixed share of the range cut them on a narrow plot)."""
        rates = getattr(self, "_capacity_rates", None)
        if rates is None:
            return
        # Here too, not only when drawn: a plot drawn wide and then narrowed (a smaller window,
        # presentation mode) needs the room it did not need before.
        rows = tuple(c.accelerator for c in self._capacity_rows)
        if hold_least_width(self.capacity_plot.vb, self._capacity_room_px, rows, self._capacity_room_rows):
            self._capacity_room_rows = rows
        width_px = max(float(self.capacity_plot.getViewBox().width()), 1.0)
        high = float(rates.max()) if rates.size and rates.max() > 0 else 1.0
        span = high * CAPACITY_RANGE_MIN_SHARE
        for rate, text in zip(rates, self.capacity_texts, strict=False):
            # A bar's end plus its text's width (and a gap) must lie inside the range: with the
            # text taking share t of the width, the range must be at least rate / (1 - t).
            # (A text item's width in pixels, its document margins included.)
            text_share = (text.boundingRect().width() + 2 * CAPACITY_TEXT_GAP_PX) / width_px
            span = max(span, rate / max(1.0 - text_share, CAPACITY_BAR_LEAST_SHARE))
        gap = CAPACITY_TEXT_GAP_PX * span / width_px
        for row, (rate, text) in enumerate(zip(rates, self.capacity_texts, strict=False)):
            text.setPos(rate + gap, row)
        self.capacity_plot.setXRange(0, span, padding=0.0)

    @staticmethod
    def _capacity_text(capacity: Capacity) -> str:
        if capacity.problem is not None:
            return "cannot serve"
        if capacity.status == UNDETERMINED:
            return "undetermined"
        if capacity.rate_rps <= 0:
            return "misses SLO"
        return f"{significant(capacity.rate_rps)}/s"

    def _write_slo_lines(self) -> None:
        spec = self.spec
        for name, limit_ms, scale in (("ttft", spec.slo_ttft_ms, 1e-3), ("tpot", spec.slo_tpot_ms, 1.0)):
            line = self.slo_lines[name]
            line.setVisible(limit_ms is not None)
            if limit_ms is not None:
                line.setPos(math.log10(limit_ms * scale))

    def _write_rate_lines(self) -> None:
        spec = self.spec
        on = spec.arrival in ("poisson", "gamma")
        for line in self.rate_lines:
            line.setVisible(on)
            if on:
                line.setPos(math.log10(spec.rate_rps))

    def _draw_run(self) -> None:
        run = self.run
        if run is None:
            for item in (self.running_line, self.waiting_line, self.kv_line, self.ttft_bars, self.itl_bars):
                item.setData([], [])
            for lines in self.percentile_lines.values():
                for line in lines:
                    line.setVisible(False)
            return
        self.running_line.setData(run.time_s, run.running)
        self.waiting_line.setData(run.time_s, run.waiting)
        self.kv_line.setData(run.time_s, 100.0 * run.kv_used)
        for item, histogram, name, distribution in (
                (self.ttft_bars, run.ttft, "ttft", run.metrics.ttft_s),
                (self.itl_bars, run.itl, "itl", run.metrics.itl_s)):
            total = histogram.weights.sum()
            if histogram.edges.size and total > 0:
                item.setData(histogram.edges, 100.0 * histogram.weights / total)
            else:
                item.setData([], [])
            for line, value in zip(self.percentile_lines[name], (distribution.p50, distribution.p99), strict=True):
                line.setVisible(math.isfinite(value) and value > 0)
                if math.isfinite(value) and value > 0:
                    line.setPos(math.log10(value))

    def _apply_selection(self) -> None:
        # Called with every new frame: redraw only when the selection moved (the selected
        # accelerator's curves are thicker, its capacity row bold).
        if self._curves and self.selected != self._drawn_selection:
            self._draw_curves(tuple(self._curves.values()), tuple(self._capacities.values()))

    # ---- words -----------------------------------------------------------------------------

    def _slo_text(self) -> str:
        spec = self.spec
        parts = []
        if spec.slo_ttft_ms is not None:
            parts.append(f"p99 TTFT ≤ {format_time(spec.slo_ttft_ms / 1e3, trim=True)}")
        if spec.slo_tpot_ms is not None:
            parts.append(f"p99 TPOT ≤ {format_time(spec.slo_tpot_ms / 1e3, trim=True)}")
        return " and ".join(parts) if parts else "no latency limit (stability only)"

    def _preparing_line(self) -> str | None:
        """While the simulator is being compiled (first start on a machine): what the tab waits
        for, and about how long; None once it is ready."""
        if simulator_compiled():
            self._preparing_timer.stop()
            return None
        if self._preparing_since is None:
            self._preparing_since = time.perf_counter()
        if not self._preparing_timer.isActive():
            self._preparing_timer.start()
        left = max(PREPARING_ESTIMATE_S - (time.perf_counter() - self._preparing_since), 1.0)
        return (f"<i>Preparing the simulator: compiling it for this machine, once (later starts load it), "
                f"about {left:.0f} s</i>")

    def _preparing_tick(self) -> None:
        if self.busy or self.run is None:
            self._write_caption()
        else:
            self._preparing_timer.stop()

    def _write_caption(self, done: int | None = None) -> None:
        lines = []
        if self.pages.currentIndex() == RATE_PAGE:
            if self.busy:
                preparing = self._preparing_line()
                shown = len(self.frame.workspace.shown) if self.frame is not None else 0
                lines.append(preparing or f"<i>Simulating… {done or 0} of {shown} accelerators</i>")
            lines.append(
                f"Capacity: the largest rate meeting {self._slo_text()} with a stable queue, measured on each "
                "rate's steady state (warm-up and drain left out) and found within 3 %. Each accelerator is "
                "swept from a tenth to 1.5× the rate its largest static batch sustains; hollow points: the waiting "
                "queue grew (unstable). ◆ marks the capacity; the dotted line is the current rate; colours as "
                "in the capacity bars; the dashed red lines are the SLOs."
            )
            problems = [f"{self._label(a)}: {c.problem}" for a, c in self._capacities.items()
                        if c.problem is not None]
            if problems:
                lines.append("Cannot serve — " + "; ".join(problems))
            lines.extend(self._split_lines())
            if not self.busy and self.frame is not None and self._capacities:
                lines.extend(self._cheapest_lines())
        else:
            lines.extend(self._run_lines())
        self.caption.setText("<br>".join(lines))

    def _cheapest_lines(self) -> list[str]:
        """The cheapest accelerator meeting the SLO, for the capacities shown. Remembered for
        those capacities and prices: the caption is written again at every run the current rate
        brings (a cost study over every accelerator's capacity, ~3 ms, each time)."""
        capacities = tuple(self._capacities.values())
        key = (self.engine, self.frame.workspace.cost)
        cached = self._cheapest
        if cached is not None and cached[1] == key and len(cached[0]) == len(capacities) and all(
                a is b for a, b in zip(cached[0], capacities, strict=True)):
            return cached[2]
        pricing = Pricing(self.engine.catalog.prices, self.frame.workspace.cost)
        lines = cheapest_sentences(capacities, pricing, self.engine.catalog)
        self._cheapest = (capacities, key, lines)
        return lines

    def _split_lines(self) -> list[str]:
        if self.split_problem is not None:
            return [f"Prefill:decode split: {self.split_problem}"]
        split = self.split
        if split is None:
            return []
        options = ", ".join(f"{o.label} {significant(o.capacity_rps)}/s" for o in split.splits)
        best = split.best_split
        verdict = ("no split meets the SLO" if best is None else
                   f"best {best.label}" + (f", {split.disaggregated_gain - 1:+.0%} against aggregated"
                                           if math.isfinite(split.disaggregated_gain) else ""))
        name = self._label(self.frame.workspace.scenario.accelerator) if self.frame is not None else ""
        return [f"{name}, {split.replicas} replicas of {split.devices_per_replica} device"
                f"{'s' if split.devices_per_replica != 1 else ''}: aggregated "
                f"{significant(split.aggregated.capacity_rps)}/s; prefill:decode {options} — {verdict}."]

    def _run_lines(self) -> list[str]:
        if self.run_problem is not None:
            return [f"Cannot serve: {self.run_problem}"]
        run = self.run
        if run is None:
            return [self._preparing_line() or "<i>Simulating…</i>"]
        m = run.metrics
        name = self._label(run.served.scenario.accelerator)
        spec = run.served.spec
        if run.served.disaggregated:  # the timelines list the prefill pool's iterations, then the decode pool's
            name += (f" (disaggregated: {spec.prefill_replicas} prefill + {spec.decode_replicas} decode "
                     f"replica{'s' if spec.decode_replicas != 1 else ''})")
        stable = "<b>unstable</b>: the waiting queue grew" if m.unstable else "stable"
        rate = run.served.rate_rps
        offered = ("all at once" if math.isinf(rate) else "a closed loop" if math.isnan(rate)
                   else f"{significant(rate)} req/s")
        return [
            f"{name} at {offered}: {m.finished:,} of {m.requests:,} requests finished, output "
            f"{significant(m.output_tokens_per_s)} tokens/s, p50 / p99 TTFT {format_time(m.ttft_s.p50)} / "
            f"{format_time(m.ttft_s.p99)}, p99 TPOT {format_time(m.tpot_s.p99)}, mean batch "
            f"{significant(m.batch_mean)}, {m.preemptions:,} preemptions, {stable}. "
            f"<span style='color:{html_text_colour(RUNNING_COLOUR)}'>running</span>, "
            f"<span style='color:{html_text_colour(WAITING_COLOUR)}'>waiting</span>; dashed lines: p50 and p99."
        ]

    def explanation_sections(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The current run's explanation for the explain panel while this tab is shown."""
        if self.run_problem is not None:
            return (("Serving", (f"This scenario cannot be served: {self.run_problem}",)),)
        if self.run is None:
            return ()
        return (("Serving", tuple(serving_sentences(self.engine, self.run.served))),)

    # ---- hover -----------------------------------------------------------------------------

    def _tip_for(self, ref: SpotRef) -> str:
        curve = self._curves.get(ref.accelerator)
        name = self._label(ref.accelerator)
        if ref.role == "capacity":
            capacity = self._capacities.get(ref.accelerator)
            if capacity is None:
                return name
            return tooltip_html(name, [f"capacity at the SLO: {significant(capacity.rate_rps)} requests/s",
                                       f"misses it at {significant(capacity.failing_rate_rps)} requests/s",
                                       f"{capacity.devices:,} device{'s' if capacity.devices != 1 else ''}"])
        if curve is None:
            return name
        i = ref.index
        lines = [
            f"offered {significant(curve.rates_rps[i])} requests/s",
            f"output {significant(curve.throughput_output_tok_s[i])} tokens/s",
            f"goodput {significant(curve.goodput_rps[i])} requests/s within the SLO",
            f"p99 TTFT {format_time(curve.ttft_p99_s[i])}, p99 TPOT {format_time(curve.tpot_p99_s[i])}",
        ]
        if curve.unstable[i]:
            lines.append("unstable: the waiting queue grew through the measured window")
        return tooltip_html(name, lines)

    def _capacity_tip(self, row: int) -> str:
        capacity = self._capacity_rows[row]
        name = self._label(capacity.accelerator)
        if capacity.accelerator in self._capacity_pending:
            return tooltip_html(name, ["being simulated"])
        if capacity.problem is not None:
            return tooltip_html(name, [f"cannot serve: {capacity.problem}"])
        if capacity.status == UNDETERMINED:
            known = ([f"at least {significant(capacity.rate_rps)} requests/s meet {self._slo_text()}"]
                     if capacity.rate_rps > 0 else [])
            return tooltip_html(name, [f"capacity undetermined: {capacity.reason}", *known])
        if capacity.rate_rps <= 0:
            return tooltip_html(name, [f"misses {self._slo_text()} with every request alone: {capacity.reason}"])
        return tooltip_html(name, [
            f"{significant(capacity.rate_rps)} requests/s meet {self._slo_text()}",
            f"{significant(capacity.failing_rate_rps)} requests/s do not",
            f"on {capacity.devices:,} device{'s' if capacity.devices != 1 else ''}: "
            f"{significant(capacity.rate_rps / capacity.devices)} requests/s per device",
        ])

    def _capacity_clicked(self, row: int) -> None:
        self.accelerator_selected.emit(self._capacity_rows[row].accelerator)

    # ---- for tests -------------------------------------------------------------------------

    def figure_accelerators(self) -> tuple[str, ...]:
        """The rate page draws every shown accelerator; the run page the selected one."""
        if self.frame is None:
            return ()
        if self.pages.currentIndex() == RATE_PAGE:
            return self.frame.accelerators
        return (self.frame.workspace.scenario.accelerator,)

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn, in data units: per accelerator, its rates and series; the capacity
        bars; the current run's timeline."""
        drawn: dict[str, np.ndarray] = {}
        for (accelerator, name), (x, y) in self.curves.items():
            drawn[f"{accelerator}.rates"] = np.asarray(x)
            drawn[f"{accelerator}.{name}"] = np.asarray(y)
        drawn["capacity_rps"] = np.asarray(self.capacity_bars.opts.get("width", []), dtype=float)
        x, y = self.running_line.getOriginalDataset()
        drawn["timeline.time_s"] = np.asarray(x if x is not None else [])
        drawn["timeline.running"] = np.asarray(y if y is not None else [])
        return drawn
