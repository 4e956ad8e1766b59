"""Scaling strategies: how many devices each parallel layout needs to hold the current model,
and what it then gives — throughput, time to first token, inter-token latency and its spread.

One row per strategy of the engine's ``scaling.STRATEGIES`` (tensor, pipeline, expert
parallelism, weight offload and the hybrids), in that order; strategies that do not apply to
the model (expert parallelism on a dense model) keep their row, labelled. Beside the plots: a
form that builds a synthetic model (a 1T dense or a 1T MoE in one click) and asks the main
window to show it, and, for MoE models, the routing Monte Carlo under expert parallelism with
the first paper's claims next to the computed numbers. Every number is the engine's
(``scaling.compare_strategies``, ``scaling.ep_routing``, ``claims.scaling_claims``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog, synthetic
from accelscope.engine.core.model import ModelArch
from accelscope.engine.core.units import compact, counted, format_params, short_time
from accelscope.engine.core.workspace import MAX_ROUTING_SKEW, VIEW_OPTION_DEFAULTS, Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.analysis import ScalingStudy
from accelscope.engine.studies.claims import ScalingClaims, scaling_claims
from accelscope.engine.studies.scaling import DEFAULT_MAX_DEVICES, STRATEGIES, STRATEGY_LABELS, StrategyResult

from ..look.palette import FITS_COLOUR, NO_FIT_COLOUR
from ..look.style import (
    PLOT_FONT_POINTS,
    html_colour,
    html_text_colour,
    plot_brush,
    plot_font,
    plot_pen,
    plot_text_colour,
    style_plot,
)
from ..plotkit.axes import GridAxis
from ..plotkit.bars import BAR_HEIGHT, LogBarPlot, canvas
from ..plotkit.picking import RowPicker
from ..plotkit.text import WrappedLabel, subtitle_label, swatch, tooltip_html
from .analysis import AnalysisPanel
from .memory import short_reason

STRATEGY_NAMES: dict[str, str] = {
    "tp": "TP",
    "pp": "PP",
    "ep": "EP",
    "offload": "offload",
    "tp-pp": "TP × PP",
    "ep-tp": "EP × TP",
    "pp-offload": "PP + offload",
}
# Paul Tol's muted scheme: related strategies in related hues (tensor blues, pipeline greens,
# expert reds, offloading greys), so the hybrids read as mixtures.
STRATEGY_COLOURS: dict[str, str] = {
    "tp": "#332288",
    "pp": "#117733",
    "ep": "#CC6677",
    "offload": "#777777",
    "tp-pp": "#44AA99",
    "ep-tp": "#AA4499",
    "pp-offload": "#999933",
}
NOT_APPLICABLE_COLOUR = "#888888"
SYSTEM_ALPHA = 255
DEVICE_ALPHA = 95
DEVICE_SWATCH = "#C8C8C8"
P99_ALPHA = 80  # the light extension of an ITL bar, from the expected ITL to its p99
THROUGHPUT_SERIES = (("system", -0.19, 0.36, SYSTEM_ALPHA), ("device", 0.19, 0.36, DEVICE_ALPHA))
ITL_SERIES = (("p99", 0.0, BAR_HEIGHT, P99_ALPHA), ("itl", 0.0, BAR_HEIGHT, 255))
P50_MARK_PX = 20
SIDE_WIDTH_PX = 340  # the synthetic-model form and the routing box, at first
SIDE_MIN_WIDTH_PX = 260
PLOT_MIN_VIEW_PX = 40  # a plot's view, at least
PLOT_SPACING_PX = 6.0  # between the plots
CANVAS_MIN_HEIGHT_PX = 300
NOTES_COLUMN_GAP_PX = 10
# Two lines where a header is much wider than its numbers, so the table fits a narrower tab.
NOTES_HEADERS = ("strategy", "layout", "devices", "output tokens/s<br>system · device", "TTFT",
                 "ITL<br>mean · p50 · p99", "ITL CV")
NOTES_MIN_ROWS = 3  # strategies the numbers table shows at least; on a short window it scrolls
HISTOGRAM_HEIGHT_PX = 230
HISTOGRAM_MAX_BINS = 30
HISTOGRAM_COLOUR = "#CC6677"
P50_COLOUR = "#222222"
P99_COLOUR = "#B2182B"
ENGINE_COLOUR = "#0077BB"
SKEW_STEP = 0.1

def legend_html() -> str:
    """The bars' legend, in the current plot theme."""
    return (swatch("#777777", f"hatched: does not fit within {DEFAULT_MAX_DEVICES:,} devices", hatch=True)
            + " &nbsp; " + swatch("#555555", "whole system") + " &nbsp; "
            + swatch(DEVICE_SWATCH, "per device") + " &nbsp; "
            # A word joiner after the bar: a line may otherwise break between "|" and its words.
            + swatch(P50_COLOUR, "ITL p50", glyph="|\u2060") + " &nbsp; "
            + swatch("#BBBBBB", "light: up to ITL p99"))

# The synthetic form's fields: (key, label, placeholder). Parameters are typed in billions.
FORM_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("total_b", "Total parameters (B)", "e.g. 1000"),
    ("active_b", "Active parameters (B, MoE)", "empty for a dense model"),
    ("experts", "Routed experts", "0 for a dense model"),
    ("experts_per_token", "Experts per token", "0 for a dense model"),
    ("layers", "Layers", "e.g. 61"),
    ("hidden", "Hidden size", "a multiple of 128"),
)
DENSE_1T_FORM = {
    "total_b": "1000", "active_b": "", "experts": "0", "experts_per_token": "0",
    "layers": str(synthetic.DENSE_1T_LAYERS), "hidden": str(synthetic.DENSE_1T_HIDDEN),
}
MOE_1T_FORM = {
    "total_b": f"{synthetic.MOE_1T_TOTAL / 1e9:g}", "active_b": f"{synthetic.MOE_1T_ACTIVE / 1e9:g}",
    "experts": str(synthetic.MOE_1T_EXPERTS), "experts_per_token": str(synthetic.MOE_1T_EXPERTS_PER_TOKEN),
    "layers": str(synthetic.MOE_1T_LAYERS), "hidden": str(synthetic.MOE_1T_HIDDEN),
}
MAX_FORM_TEXT = 40  # characters kept from a stored form value (presets are untrusted)


def _beside_view_px(plot: pg.PlotItem) -> float:
    """The width of a plot's parts beside its view box: its margins and its shown side axes
    (read from their size hints, so it holds before the plot is laid out again)."""
    left, _top, right, _bottom = plot.layout.getContentsMargins()
    axes = [plot.getAxis(name) for name in ("left", "right") if plot.getAxis(name).isVisible()]
    return left + right + sum(axis.effectiveSizeHint(Qt.SizeHint.PreferredSize).width() for axis in axes)


def times_in_one_unit(seconds: Sequence[float]) -> str:
    """Times joined by " · ", the unit written once where they share it ("7.31 · 7.31 · 7.4 ms"),
    else each with its own ("812 ms · 1.02 s"): the numbers table's ITL column repeated "ms"
    three times and was its widest."""
    texts = [short_time(value) for value in seconds]
    numbers, units = zip(*(text.rsplit(" ", 1) for text in texts), strict=True)
    if len(set(units)) == 1:
        return f"{' · '.join(numbers)} {units[0]}"
    return " · ".join(texts)


def _layout_words(entry: StrategyResult) -> str:
    s = entry.scenario
    parts = [f"tp {s.tp}"] if s.tp > 1 else []
    if s.pp > 1:
        parts.append(f"pp {s.pp}")
    if s.ep > 1:
        parts.append(f"ep {s.ep}")
    if s.offload > 0:
        parts.append(f"{s.offload:.0%} offloaded")
    return " · ".join(parts) or "one device"


# ---- the numbers table ---------------------------------------------------------------------------


class StrategyTable(QWidget):
    """The numbers under the plots: one row per strategy, one plain-text label per cell.

    Labels, not a rich-text table: a study changes most cells, and laying out a rich-text
    table (for its size hint, then again to paint) costs about ten times as much as setting
    a grid of one-line labels. A row without numbers shows one message across its cells:
    from the layout column on when the strategy does not apply, after its layout when the
    layout does not fit.
    """

    def __init__(self, strategies: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 4, 8, 2)
        grid.setHorizontalSpacing(NOTES_COLUMN_GAP_PX)
        grid.setVerticalSpacing(1)
        font = self.font()
        font.setPointSize(PLOT_FONT_POINTS)
        self.setFont(font)
        columns = len(NOTES_HEADERS)
        self.headers: list[QLabel] = []
        for column, text in enumerate(NOTES_HEADERS):
            header = self._label(f"<b>{text}</b>", rich=True)
            header.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom)
            grid.addWidget(header, 0, column)
            self.headers.append(header)
        self.names = [STRATEGY_NAMES[name] for name in strategies]
        self.cells: list[list[QLabel]] = []  # per row, the cells after the name
        self.not_applicable: list[QLabel] = []
        self.no_fit: list[QLabel] = []
        for row, name in enumerate(strategies, start=1):
            grid.addWidget(self._label(f"<span style='color:{html_colour(STRATEGY_COLOURS[name])}'>■</span>&nbsp;"
                                       f"{STRATEGY_NAMES[name].replace(' ', '&nbsp;')}", rich=True), row, 0)
            cells = [self._label("") for _ in range(columns - 1)]
            for column, cell in enumerate(cells, start=1):
                grid.addWidget(cell, row, column)
            not_applicable = self._label("", colour=NOT_APPLICABLE_COLOUR)
            no_fit = self._label("", colour=NO_FIT_COLOUR)
            grid.addWidget(not_applicable, row, 1, 1, columns - 1)
            grid.addWidget(no_fit, row, 2, 1, columns - 2)
            self.cells.append(cells)
            self.not_applicable.append(not_applicable)
            self.no_fit.append(no_fit)
        grid.setColumnStretch(columns, 1)  # spare width right of the table

    def height_for_rows(self, rows: int) -> int:
        """The height that shows the header and the first ``rows`` strategies."""
        grid = self.layout()
        margins = grid.contentsMargins()
        heights = [max(label.sizeHint().height() for label in self.headers)]
        heights += [label.sizeHint().height() for label in self.cells[0][:1]] * min(rows, len(self.cells))
        return margins.top() + margins.bottom() + sum(heights) + grid.verticalSpacing() * (len(heights) - 1)

    @staticmethod
    def _label(text: str, *, rich: bool = False, colour: str = "") -> QLabel:
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if colour:
            # The size too: a label with a style sheet of its own does not take the table's font.
            label.setStyleSheet(f"color: {html_text_colour(colour)}; font-size: {PLOT_FONT_POINTS}pt")
            label.hide()
        return label

    def set_numbers(self, row: int, texts: tuple[str, ...]) -> None:
        """A row with numbers: the texts of the cells after the strategy's name."""
        self._show(row, texts, "", "")

    def set_not_applicable(self, row: int, message: str) -> None:
        self._show(row, (), message, "")

    def set_no_fit(self, row: int, layout: str, message: str) -> None:
        self._show(row, (layout,), "", message)

    def _show(self, row: int, texts: tuple[str, ...], not_applicable: str, no_fit: str) -> None:
        for column, cell in enumerate(self.cells[row]):
            shown = column < len(texts)
            if shown and cell.text() != texts[column]:
                cell.setText(texts[column])
            cell.setVisible(shown)
        for label, message in ((self.not_applicable[row], not_applicable), (self.no_fit[row], no_fit)):
            if message and label.text() != message:
                label.setText(message)
            label.setVisible(bool(message))

    def text(self) -> str:
        """The table as shown: a line per strategy, a tab between cells."""
        lines = []
        for row, name in enumerate(self.names):
            labels = [*self.cells[row], self.not_applicable[row], self.no_fit[row]]
            lines.append("\t".join([name, *(label.text() for label in labels if label.isVisibleTo(self))]))
        return "\n".join(lines)


class NotesArea(QScrollArea):
    """The numbers table's scroll area: as tall as the table (and the horizontal scroll bar it
    needs when it is wider than the tab), and, on a short window, as short as a header and
    NOTES_MIN_ROWS strategies, so it never lies over the plots; then it scrolls."""

    def __init__(self, table: StrategyTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.setWidget(table)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def _bar_px(self, width: int) -> int:
        """The horizontal scroll bar's height if the table is wider than ``width``, else 0."""
        return self.horizontalScrollBar().sizeHint().height() if self.table.sizeHint().width() > width else 0

    def _bars(self, width: int) -> tuple[int, int]:
        """Horizontal scroll bars needed at ``width``: showing every row, and showing the least
        (then a vertical scroll bar takes some of the width)."""
        return self._bar_px(width), self._bar_px(width - self.verticalScrollBar().sizeHint().width())

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.table.sizeHint().height() + self._bars(self.width())[0])

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(),
                     self.table.height_for_rows(NOTES_MIN_ROWS) + self._bars(self.width())[1])

    def resizeEvent(self, event) -> None:
        if self._bars(event.size().width()) != self._bars(event.oldSize().width()):
            self.updateGeometry()  # a horizontal scroll bar comes or goes: the heights it needs change
        super().resizeEvent(event)


# ---- the synthetic-model form ------------------------------------------------------------------


class SyntheticModelForm(QGroupBox):
    """Sizes in, a ``ModelArch`` out (``synthetic.synthetic_model``). A request the engine
    refuses leaves everything as it was and says why in one line."""

    model_requested = Signal(object)  # ModelArch

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Synthetic model", parent)
        layout = QVBoxLayout(self)
        quick = QHBoxLayout()
        self.dense_button = QPushButton("1T dense")
        self.dense_button.setToolTip("1 trillion parameters, 128 layers, hidden 25,600 (Llama 3.1 405B grown)")
        self.moe_button = QPushButton("1T MoE (Kimi K2 shape)")
        self.moe_button.setToolTip("1T total, 32B active, 384 experts, 8 per token, 61 layers, hidden 7,168")
        self.dense_button.clicked.connect(lambda: self._fill(DENSE_1T_FORM, "1T dense"))
        self.moe_button.clicked.connect(lambda: self._fill(MOE_1T_FORM, "1T MoE (Kimi K2 shape)"))
        quick.addWidget(self.dense_button)
        quick.addWidget(self.moe_button)
        layout.addLayout(quick)
        form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for key, label, placeholder in FORM_FIELDS:
            edit = QLineEdit()
            edit.setPlaceholderText(placeholder)
            edit.setMaxLength(MAX_FORM_TEXT)
            edit.returnPressed.connect(self.use_model)
            form.addRow(label, edit)
            self.fields[key] = edit
        layout.addLayout(form)
        self.use_button = QPushButton("Use this model")
        self.use_button.setToolTip("Build the model and show it in every tab")
        self.use_button.clicked.connect(self.use_model)
        layout.addWidget(self.use_button)
        self.message = WrappedLabel("")
        layout.addWidget(self.message)
        self._fill(MOE_1T_FORM, None)

    def values(self) -> dict[str, str]:
        return {key: edit.text() for key, edit in self.fields.items()}

    def set_values(self, values: dict[str, object]) -> None:
        """Fill the fields from stored texts; unknown keys and values that are not text or
        numbers are ignored (stored values are untrusted)."""
        for key, edit in self.fields.items():
            value = values.get(key)
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                continue
            edit.setText(str(value)[:MAX_FORM_TEXT])

    def build(self) -> ModelArch:
        """The model the fields describe; ``ValueError`` with a one-line reason if none."""
        texts = self.values()
        total = _parse_billions("total parameters", texts["total_b"], required=True)
        active = _parse_billions("active parameters", texts["active_b"], required=False)
        try:
            return synthetic.synthetic_model(
                total,
                active_params=active,
                n_experts=_parse_whole("routed experts", texts["experts"], default=0),
                experts_per_token=_parse_whole("experts per token", texts["experts_per_token"], default=0),
                n_layers=_parse_whole("layers", texts["layers"], default=None),
                hidden_size=_parse_whole("hidden size", texts["hidden"], default=None),
            )
        except TypeError as error:
            raise ValueError(str(error)) from error

    def use_model(self) -> None:
        try:
            model = self.build()
        except ValueError as error:
            self._say(str(error), NO_FIT_COLOUR)
            return
        active = f", {format_params(model.active_params)} active per token" if model.is_moe else ""
        self._say(f"{model.name}: {format_params(model.total_params)} parameters{active}", FITS_COLOUR)
        self.model_requested.emit(model)

    def _fill(self, values: dict[str, str], name: str | None) -> None:
        self.set_values(values)
        if name is not None:
            self._say(f"{name}: press “Use this model” to show it in every tab", "#333333")

    def _say(self, text: str, colour: str) -> None:
        self.message.setStyleSheet(f"color: {html_text_colour(colour)}")
        self.message.setText(text)


def _parse_billions(what: str, text: str, *, required: bool) -> float | None:
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        if required:
            raise ValueError(f"{what}: type a number of billions, e.g. 1000 for 1T")
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what} must be a number of billions, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number of billions, got {text!r}")
    return value * 1e9


def _parse_whole(what: str, text: str, *, default: int | None) -> int:
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        if default is None:
            raise ValueError(f"{what}: type a whole number")
        return default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be a whole number, got {text!r}") from None


# ---- the panel ----------------------------------------------------------------------------------


class ScalingPanel(AnalysisPanel):
    title = "Scaling"
    study_view = "scaling"
    model_requested = Signal(object)  # a synthetic ModelArch for the main window to register and select

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        # The claims beside the study have fixed setups (a 1T MoE on B200s; a 700B MoE against a
        # 70B dense model on B200s): computed with the first study, once per panel.
        self.claims: ScalingClaims | None = None
        self._strategies: list[str] = list(STRATEGIES)
        self._entries: list[StrategyResult | None] = []

        self.header = subtitle_label("")
        self.canvas = canvas()
        self.canvas.ci.layout.setHorizontalSpacing(PLOT_SPACING_PX)
        # What each plot shows is said by its axis label, not a title: a title's text sets its
        # plot's least width, and the three plots must fit beside the side column even in a
        # window with both docks open.
        self.devices_plot = LogBarPlot(self.canvas, 0, title="", x_label="devices to fit, log scale",
                                            x_unit=None, row_labels=True)
        self.throughput_plot = LogBarPlot(self.canvas, 1, title="", x_label="output tokens/s, log scale",
                                               x_unit=None, row_labels=False, series=THROUGHPUT_SERIES)
        self.itl_plot = LogBarPlot(self.canvas, 2, title="", x_label="ITL, log scale",
                                        x_unit="ms", row_labels=False, series=ITL_SERIES)
        self.plots = (self.devices_plot, self.throughput_plot, self.itl_plot)
        # In a narrow plot an axis title goes on two lines rather than running into its
        # neighbour's; the three axes keep one height so the rows stay level.
        self._title_axes: list = []
        for plot in self.plots:
            plot.plot.getAxis("bottom").fit_title(self._title_axes)
            # The panel shares the canvas' width among the plots, then fits them (_share_width).
            self.canvas.resized.disconnect(plot.fit_x_range)
            plot.keeps_room_for_texts = False
        # Also when presentation mode zooms the scene, which resizes the plots but not the canvas.
        self.canvas.resized.connect(self._canvas_resized)
        self._fit_pending = False
        self.p50_marks = pg.ScatterPlotItem(symbol="|", size=P50_MARK_PX, pen=plot_pen(P50_COLOUR, width=2.5),
                                            brush=None)
        self.p50_marks.setZValue(6)
        self.itl_plot.plot.addItem(self.p50_marks)
        self.picker = RowPicker(self.canvas, [p.plot for p in self.plots], self._strategy_rows,
                                     self._tooltip, self._row_clicked, self)
        self.notes = StrategyTable(self._strategies)

        self.form = SyntheticModelForm()
        self.form.model_requested.connect(self.model_requested)
        self.routing_box = self._routing_box()

        # The least width is what the plots' texts need (_share_width); the page scrolls below it.
        self.canvas.setMinimumHeight(CANVAS_MIN_HEIGHT_PX)
        # The numbers table spans the tab under the plots and the side column, so its columns
        # fit beside each other more often; when they do not, it scrolls.
        self.notes_scroll = NotesArea(self.notes)
        # The legend never changes: a label of its own is laid out once, not with every header.
        self.legend = subtitle_label(legend_html())
        self.header.setContentsMargins(8, 4, 8, 0)
        self.legend.setContentsMargins(8, 0, 8, 2)
        words = QVBoxLayout()
        words.setContentsMargins(0, 0, 0, 0)
        words.setSpacing(0)
        words.addWidget(self.header)
        words.addWidget(self.legend)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 6, 0)
        top.addLayout(words, 1)
        self.side_button = QToolButton()
        self.side_button.setText("Synthetic model · MoE routing")
        self.side_button.setCheckable(True)
        self.side_button.setChecked(True)
        self.side_button.setToolTip("Show or hide the synthetic-model form and the routing simulation")
        self.side_button.toggled.connect(self._show_side)
        self.side_button.clicked.connect(self._side_clicked)
        top.addWidget(self.side_button, 0, Qt.AlignmentFlag.AlignTop)
        side = QVBoxLayout()
        side.setContentsMargins(4, 4, 6, 4)
        side.addWidget(self.form)
        side.addWidget(self.routing_box)
        side.addStretch(1)
        side_widget = QWidget()
        side_widget.setLayout(side)
        side_scroll = self.side = QScrollArea()
        side_scroll.setWidget(side_widget)
        side_scroll.setWidgetResizable(True)
        side_scroll.setFrameShape(QFrame.Shape.NoFrame)
        side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Wide enough for the form beside a vertical scroll bar: once the routing and claims texts
        # run past the bottom, the bar would otherwise take its width from the form and clip it.
        scroll_bar_px = side_scroll.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        side_scroll.setMinimumWidth(max(SIDE_MIN_WIDTH_PX, side_widget.minimumSizeHint().width() + scroll_bar_px))
        # A splitter: on a narrow window the user can give the plots the room of the side column.
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.canvas)
        self.splitter.addWidget(side_scroll)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setCollapsible(0, False)
        self.splitter.setSizes([max(1, 1500 - SIDE_WIDTH_PX), SIDE_WIDTH_PX])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.notes_scroll)
        self._side_chosen = False  # once the user toggles the side column, width no longer decides
        self._watching_room = False

    def _side_clicked(self) -> None:
        self._side_chosen = True

    def _show_side(self, shown: bool) -> None:
        self.side.setVisible(shown)

    def showEvent(self, event) -> None:
        room = self.parentWidget()
        if room is not None and not self._watching_room:
            room.installEventFilter(self)  # the page scrolls: the room is its scroll area's viewport
            self._watching_room = True
        self._fit_side()
        super().showEvent(event)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self._fit_side()
        return super().eventFilter(watched, event)

    def _fit_side(self) -> None:
        """On a tab too narrow for the plots' numbers beside the side column (a projector, both
        docks open) the plots need the whole width: the side column is hidden there, one click
        away, until the user shows or hides it."""
        if self._side_chosen:
            return
        room = self.parentWidget().width() if self.parentWidget() is not None else self.width()
        wide = room >= self.canvas.minimumWidth() + self.side.minimumWidth() + self.splitter.handleWidth()
        if wide != self.side_button.isChecked() or wide != self.side.isVisibleTo(self):
            self.side_button.blockSignals(True)
            self.side_button.setChecked(wide)
            self.side.setVisible(wide)
            self.side_button.blockSignals(False)

    def _routing_box(self) -> QGroupBox:
        box = QGroupBox("MoE routing under expert parallelism")
        layout = QVBoxLayout(box)
        row = QHBoxLayout()
        label = QLabel("Routing skew s:")
        label.setToolTip("Zipf-like expert popularity: the r-th most popular expert has weight 1/r^s; 0 = uniform")
        self.skew = QDoubleSpinBox()
        self.skew.setRange(0.0, MAX_ROUTING_SKEW)
        self.skew.setSingleStep(SKEW_STEP)
        self.skew.setDecimals(2)
        self.skew.setValue(float(VIEW_OPTION_DEFAULTS["routing_skew"]))
        self.skew.setSpecialValueText("0 (uniform)")
        self.skew.setToolTip(label.toolTip())
        self.skew.valueChanged.connect(self._skew_changed)
        row.addWidget(label)
        row.addWidget(self.skew, 1)
        layout.addLayout(row)
        self.histogram = pg.PlotWidget(axisItems={"bottom": GridAxis("bottom")})
        self.histogram.setFixedHeight(HISTOGRAM_HEIGHT_PX)
        hist_plot = self.histogram.getPlotItem()
        # "busiest / mean" kept on one line if the title wraps (no-break spaces).
        style_plot(hist_plot, x_label="busiest\u00a0/\u00a0mean device load", x_unit="×", y_label="layer passes",
                   y_unit="%")
        hist_plot.getAxis("bottom").fit_title()
        hist_plot.getAxis("bottom").enableAutoSIPrefix(False)
        hist_plot.getAxis("left").enableAutoSIPrefix(False)
        hist_plot.setMouseEnabled(x=False, y=False)
        hist_plot.setMenuEnabled(False)
        hist_plot.hideButtons()
        self.histogram_bars = pg.BarGraphItem(x0=[], x1=[], height=[], y0=0, brush=plot_brush(HISTOGRAM_COLOUR),
                                              pen=plot_pen("w", width=1))
        hist_plot.addItem(self.histogram_bars)
        # Each label at a height of its own: any two of the lines can lie close together (p50
        # and the engine's expectation often coincide), and a label is wider than the gap.
        self.p50_line = self._marker_line(hist_plot, P50_COLOUR, "p50", 0.92)
        self.p99_line = self._marker_line(hist_plot, P99_COLOUR, "p99", 0.76)
        self.engine_line = self._marker_line(hist_plot, ENGINE_COLOUR, "engine", 0.6, dashed=True)
        layout.addWidget(self.histogram)
        self.routing_text = WrappedLabel("")
        self.routing_text.setTextFormat(Qt.TextFormat.RichText)
        self.claims_text = WrappedLabel("")
        self.claims_text.setTextFormat(Qt.TextFormat.RichText)
        for text in (self.routing_text, self.claims_text):
            font = text.font()
            font.setPointSize(PLOT_FONT_POINTS)
            text.setFont(font)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(text)
        layout.addStretch(1)
        return box

    @staticmethod
    def _marker_line(plot: pg.PlotItem, colour: str, label: str, height: float,
                     dashed: bool = False) -> pg.InfiniteLine:
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        line = pg.InfiniteLine(angle=90, movable=False, pen=plot_pen(colour, width=2, style=style),
                               label=label, labelOpts={"position": height, "color": plot_text_colour(colour),
                                                       "fill": plot_brush((255, 255, 255, 220))})
        line.label.setFont(plot_font())
        line.setVisible(False)
        plot.addItem(line, ignoreBounds=True)
        return line

    # ---- options (presets) ------------------------------------------------------------------

    def options(self) -> dict:
        return {"routing_skew": float(self.skew.value()), "synthetic": self.form.values()}

    def set_options(self, options: dict) -> None:
        """Apply stored options; values of the wrong type or out of range are ignored."""
        skew = options.get("routing_skew")
        if not isinstance(skew, bool) and isinstance(skew, int | float) and 0.0 <= skew <= MAX_ROUTING_SKEW:
            self.skew.setValue(float(skew))  # recomputes through _skew_changed
        form = options.get("synthetic")
        if isinstance(form, dict):
            self.form.set_values(form)

    def routing_skew(self) -> float:
        return float(self.skew.value())

    # ---- AnalysisPanel ---------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        # The workspace's skew wins when it changes (a preset was loaded); otherwise the
        # control keeps what the user set, even before the main window stores it.
        skew = float(frame.workspace.option("routing_skew"))
        previous = None if self.frame is None else float(self.frame.workspace.option("routing_skew"))
        if skew != previous and skew != self.skew.value():
            self.skew.blockSignals(True)
            self.skew.setValue(skew)
            self.skew.blockSignals(False)
        super().update_frame(frame)

    def study_workspace(self, frame: Frame) -> Workspace:
        return frame.workspace.with_options(routing_skew=self.routing_skew())

    def compute(self, frame: Frame) -> ScalingStudy:
        if self.claims is None:
            self.claims = scaling_claims(self.engine)
        return super().compute(frame)

    def show_study(self, study: ScalingStudy) -> None:
        comparison = study.comparison
        self._entries = []
        if comparison is not None:
            present = {entry.strategy: entry for entry in comparison.strategies}
            self._entries = [present.get(name) for name in self._strategies]
        self._show_header(study)
        self._show_bars(study)
        self._show_notes(study)
        self._show_routing(study)

    # ---- drawing ---------------------------------------------------------------------------

    def _show_header(self, study: ScalingStudy) -> None:
        frame = self.frame
        s = frame.workspace.scenario if frame is not None else None
        if s is None:
            return
        accelerator = self.catalog.accelerators.get(s.accelerator)
        device = accelerator.name if accelerator is not None else s.accelerator
        words = (f"<b>{study.model_name}</b> on <b>{device}</b> · batch {s.batch:,} · {s.input_len:,}-token prompts, "
                 f"{s.output_len:,} generated · weights/activations/KV {s.weight_precision}/"
                 f"{s.activation_precision}/{s.kv_precision}. Each strategy at the fewest devices (1, 2, 4 … "
                 f"{DEFAULT_MAX_DEVICES:,}) that hold its weights.")
        if study.comparison is not None:
            ratio = study.comparison.strategies[0].parameter_to_compute
            words += f" Parameter-to-compute ratio (total / active parameters per token): <b>{ratio:.3g}×</b>."
        else:
            words += f" <span style='color:{html_text_colour(NO_FIT_COLOUR)}'>Cannot compare: {study.problem}</span>"
        self.header.setText(words)

    def _show_bars(self, study: ScalingStudy) -> None:
        names = self._strategies
        n = len(names)
        labels = [STRATEGY_NAMES[name] for name in names]
        self.devices_plot.row_axis.set_rows(labels, ids=names)
        self.canvas.settle()
        colours, fits = [], np.ones(n, bool)
        devices, system, per_device = np.zeros(n), np.zeros(n), np.zeros(n)
        itl, p50, p99 = np.zeros(n), np.zeros(n), np.zeros(n)
        device_texts, throughput_texts, itl_texts = [], [], []
        max_devices = study.comparison.max_devices if study.comparison is not None else DEFAULT_MAX_DEVICES
        for i, (name, entry) in enumerate(zip(names, self._entries or [None] * n, strict=True)):
            if entry is None:
                colours.append(NOT_APPLICABLE_COLOUR)
                why = "n/a: dense" if name in ("ep", "ep-tp") and study.comparison else "—"
                device_texts.append(why)
                throughput_texts.append("")
                itl_texts.append("")
                continue
            colours.append(STRATEGY_COLOURS[name])
            devices[i] = entry.devices
            if not entry.found:
                fits[i] = False
                device_texts.append("does not fit" if name == "offload" else f"does not fit ≤ {max_devices:,}")
                throughput_texts.append("—")
                itl_texts.append("—")
                continue
            device_texts.append(f"{entry.devices:,}")
            system[i] = entry.output_tok_s
            per_device[i] = entry.output_tok_s_per_device
            itl[i] = entry.itl_s * 1e3
            p50[i] = entry.spread.p50_s * 1e3
            p99[i] = entry.spread.p99_s * 1e3
            # System · per device, as the legend and the table's header say ("/dev" made the
            # text too wide for a narrow plot).
            throughput_texts.append(compact(system[i])
                                    + (f" · {compact(per_device[i])}" if entry.devices > 1 else ""))
            itl_texts.append(compact(itl[i]) if p99[i] <= p50[i]
                             else f"{compact(p50[i])}–{compact(p99[i])}")
        self.devices_plot.update({"value": devices}, colours, fits, device_texts)
        self.throughput_plot.update({"system": system, "device": per_device}, colours, fits, throughput_texts)
        self.itl_plot.update({"p99": np.maximum(p99, itl), "itl": itl}, colours, fits, itl_texts)
        if self._share_width():
            self._fit_plots()
        shown = p50 > 0
        with np.errstate(divide="ignore"):
            self.p50_marks.setData(x=np.log10(p50[shown]), y=np.arange(n, dtype=float)[shown])

    def _canvas_resized(self) -> None:
        # No layout pass from inside the canvas' resize: new widths wait for the event loop,
        # else the plots are fitted now.
        if self._share_width():
            if not self._fit_pending:
                self._fit_pending = True
                QTimer.singleShot(0, self, self._fit_plots)
        else:
            for plot in self.plots:
                plot.fit_x_range()

    def _fit_plots(self) -> None:
        """Lay the plots out at the widths they were given, then fit each to its width."""
        self._fit_pending = False
        self.canvas.settle()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)  # inside each plot too
        for plot in self.plots:
            plot.fit_x_range()

    def _share_width(self) -> bool:
        """Give each plot the width its texts need; True if a plot's width changed.

        Each plot needs its axes (the first has the strategy names) and a view in which the
        values beside its bars fit (``LogBarPlot.needed_view_px``) and its axis title shows
        whole, on two lines at most (``needed_width``). Room to spare is shared out evenly.
        The canvas asks for what they need together: below it the page scrolls rather than
        cut a number. (Left to the layout, the plots got about equal widths: the throughput
        values were cut while the devices plot had room to spare.)"""
        plots = [plot.plot for plot in self.plots]
        left, _top, right, _bottom = self.canvas.ci.layout.getContentsMargins()
        around = left + right + PLOT_SPACING_PX * (len(plots) - 1)
        chrome = [_beside_view_px(plot) for plot in plots]
        needs = [max(plot.needed_view_px(), plot.plot.getAxis("bottom").needed_width(), PLOT_MIN_VIEW_PX)
                 for plot in self.plots]
        least = [math.ceil(axes + need) for axes, need in zip(chrome, needs, strict=True)]
        # The plots are laid out in the scene, which presentation mode zooms: scene pixels here.
        scene_px = max(float(self.canvas.range.width()), 1.0)
        zoom = self.canvas.viewport().width() / scene_px
        canvas_least = math.ceil((around + sum(least)) * zoom) + 2 * self.canvas.frameWidth()
        if self.canvas.minimumWidth() != canvas_least:
            self.canvas.setMinimumWidth(canvas_least)
            self._fit_side()
        spare = max(int(scene_px - around) - sum(least), 0) // len(plots)
        changed = False
        for plot, width in zip(plots, (width + spare for width in least), strict=True):
            if plot.minimumWidth() != width or plot.maximumWidth() != width:
                plot.setMinimumWidth(width)
                plot.setMaximumWidth(width)
                changed = True
        return changed

    def _show_notes(self, study: ScalingStudy) -> None:
        self.notes.setVisible(study.comparison is not None)
        if study.comparison is None:
            return
        for row, entry in enumerate(self._entries):
            if entry is None:
                self.notes.set_not_applicable(row, "not applicable: a dense model has no experts to place")
            elif not entry.found:
                self.notes.set_no_fit(row, _layout_words(entry),
                                      f"does not fit: {short_reason(entry.result.fit_reason)}")
            else:
                spread = entry.spread
                waves = f" · {entry.result.waves} KV waves" if entry.result.waves > 1 else ""
                self.notes.set_numbers(row, (
                    f"{_layout_words(entry)}{waves}",
                    f"{entry.devices:,}",
                    f"{compact(entry.output_tok_s)} · {compact(entry.output_tok_s_per_device)}",
                    short_time(entry.ttft_s),
                    times_in_one_unit((entry.itl_s, spread.p50_s, spread.p99_s)),
                    f"{spread.coefficient_of_variation:.2%}" if spread.modelled else "— (no routing)",
                ))
        self.notes_scroll.updateGeometry()  # its height follows the table's

    def _show_routing(self, study: ScalingStudy) -> None:
        self.skew.setEnabled(study.is_moe)
        self.claims_text.setText(self._claims_words(study))
        self.claims_text.setToolTip(self._claims_tooltip(study))
        routing = study.routing
        lines = self.p50_line, self.p99_line, self.engine_line
        self.histogram.setVisible(routing is not None)
        if routing is None:
            self.histogram_bars.setOpts(x0=[], x1=[], height=[])
            for line in lines:
                line.setVisible(False)
            if not study.is_moe:
                self.routing_text.setText("Dense model: every token uses every parameter, so there is no routing "
                                          "to simulate and no spread from it.")
            else:
                self.routing_text.setText("Expert parallelism does not fit for this model and workload: no "
                                          "routing to show.")
            return
        imbalance = routing.imbalance
        edges = self._histogram_edges(imbalance)
        counts, edges = np.histogram(imbalance, bins=edges)
        share = 100.0 * counts / max(1, imbalance.size)
        self.histogram_bars.setOpts(x0=edges[:-1], x1=edges[1:], height=share)
        for line, value in zip(lines, (routing.imbalance_p50, routing.imbalance_p99, routing.engine_imbalance),
                               strict=True):
            line.setPos(value)
            line.setVisible(True)
        plot = self.histogram.getPlotItem()
        low = min(edges[0], routing.engine_imbalance)
        high = max(edges[-1], routing.engine_imbalance)
        pad = 0.05 * max(high - low, 0.05)
        plot.setXRange(low - pad, high + pad, padding=0.0)
        plot.setYRange(0.0, float(share.max()) * 1.25 if share.size else 1.0, padding=0.0)
        ep = study.comparison.strategy("ep")
        setup = routing.setup
        self.routing_text.setText(
            f"EP on {setup.ep} devices, {setup.tokens:,} tokens × {setup.experts_per_token} experts per MoE layer, "
            f"{setup.routing}{f' (s = {setup.skew:g})' if setup.routing == 'skewed' else ''}: the busiest device gets "
            f"<b>{routing.imbalance_p50:.3g}×</b> the mean load (p50), <b>{routing.imbalance_p99:.3g}×</b> (p99); the "
            f"engine expects {routing.engine_imbalance:.3g}×. Decode step (ITL): p50 {short_time(ep.spread.p50_s)}, "
            f"p99 {short_time(ep.spread.p99_s)}, CV {ep.spread.coefficient_of_variation:.2%}."
        )

    @staticmethod
    def _histogram_edges(values: np.ndarray) -> np.ndarray:
        """Bin edges: one bin per distinct value when there are few (loads are whole numbers
        of assignments), else at most HISTOGRAM_MAX_BINS equal bins."""
        distinct = np.unique(values)
        if distinct.size == 1:
            return np.array([distinct[0] - 0.01, distinct[0] + 0.01])
        if distinct.size <= HISTOGRAM_MAX_BINS:
            step = float(np.min(np.diff(distinct)))
            return np.concatenate([distinct - step / 2, [distinct[-1] + step / 2]])
        return np.linspace(float(distinct[0]), float(distinct[-1]), HISTOGRAM_MAX_BINS + 1)

    def _claims_words(self, study: ScalingStudy) -> str:
        words = "<br>".join(part for part in (self._moe_1t_words(study), self._moe_like_dense_words(study)) if part)
        if self.claims.expert_parallel or self.claims.moe_like_dense is not None:
            words += " Hover for each claim's setup and notes."
        return words

    def _moe_1t_words(self, study: ScalingStudy) -> str:
        problem = self.claims.expert_parallel_problem
        if not self.claims.expert_parallel:
            return f"Claims check unavailable: {problem}" if problem else ""
        parts = []
        for claim in self.claims.expert_parallel:
            what = "parameter-to-compute" if "parameter" in claim.claim_id else "EP/TP latency variance"
            parts.append(f"{what}: paper {claim.paper_value:g}{claim.unit}, computed "
                         f"<b>{claim.computed_value:.3g}{claim.unit}</b>")
        current = ""
        comparison = study.comparison
        if comparison is not None and study.is_moe and {"ep", "tp"} <= set(comparison.names):
            ep, tp = comparison.strategy("ep"), comparison.strategy("tp")
            if ep.found and tp.found and tp.spread.variance_s2 > 0:
                current = (f"<br>This model and workload: parameter-to-compute {ep.parameter_to_compute:.3g}×, "
                           f"EP/TP latency variance {ep.spread.variance_s2 / tp.spread.variance_s2:.3g}×.")
        return ("<b>First paper's claims</b> (1T MoE of Kimi K2's shape on B200, FP8, batch 64): "
                + "; ".join(parts) + "." + current)

    def _moe_like_dense_words(self, study: ScalingStudy) -> str:
        claim, problem = self.claims.moe_like_dense, self.claims.moe_like_dense_problem
        if claim is None:
            return f"700B MoE against 70B dense check unavailable: {problem}" if problem else ""
        return (f"<b>700B MoE, 10% of experts active, like a 70B dense model</b>: paper {claim.paper_value:g}"
                f"{claim.unit} (“similar”), computed <b>{claim.computed_value:.3g}{claim.unit}</b>, "
                f"{escape(claim.definition, quote=False)}.")

    def _claims_tooltip(self, study: ScalingStudy) -> str:
        """Each claim in full: the paper's statement, the setup, what was computed and the note."""
        moe_like_dense = self.claims.moe_like_dense
        claims = (*self.claims.expert_parallel, *((moe_like_dense,) if moe_like_dense is not None else ()))
        paragraphs = []
        for claim in claims:
            statement, definition, setup, note = (escape(text, quote=False) for text in (
                claim.statement, claim.definition, claim.setup, claim.note))
            paragraphs.append(
                f"<p style='margin:0 0 6px 0'><b>{statement}</b><br>paper {claim.paper_value:g}{claim.unit}, "
                f"computed {claim.computed_value:.3g}{claim.unit}: {definition}.<br>Setup: {setup}.<br>{note}</p>")
        return "".join(paragraphs)

    # ---- rows, hover ----------------------------------------------------------------------

    def _strategy_rows(self) -> int:
        return len(self._entries)

    def _row_clicked(self, row: int) -> None:
        """Rows are strategies, not accelerators: a click selects nothing."""

    def _tooltip(self, row: int) -> str:
        if not 0 <= row < len(self._entries):
            return ""
        name = self._strategies[row]
        entry = self._entries[row]
        title = f"{STRATEGY_NAMES[name]}: {STRATEGY_LABELS[name]}"
        if entry is None:
            return tooltip_html(title, ["not applicable: expert parallelism needs a mixture-of-experts model"])
        r = entry.result
        spread = entry.spread
        lines = [f"layout: {_layout_words(entry)} · {counted(entry.devices, 'device')}"]
        if not entry.found:
            lines.append(f"<b>does not fit</b> at its largest layout: {r.fit_reason}")
        else:
            lines += [
                (f"output throughput: {compact(entry.output_tok_s)} tokens/s whole system, "
                f"{compact(entry.output_tok_s_per_device)} tokens/s per device"),
                f"TTFT: {short_time(r.ttft_s)} (prefill {r.prefill.bound}-bound)",
                (f"ITL: {short_time(r.itl_s)} expected (decode {r.decode.bound}-bound); p50 {short_time(spread.p50_s)}, "
                f"p99 {short_time(spread.p99_s)}, coefficient of variation {spread.coefficient_of_variation:.3%}"),
                f"spread: {spread.source}",
            ]
            if entry.scenario.pp > 1:
                lines.append(f"pipeline idle: {entry.pipeline_idle_fraction:.0%} of each decode step per stage")
            lines.append(f"weights per device: {r.memory.weights_bytes / 1e9:.3g} GB held, "
                         f"{entry.held_to_read_per_device:.3g}× what a decode pass reads")
            if r.waves > 1:
                lines.append(f"⚠ KV cache holds {r.memory.resident_batch:,} of {r.scenario.batch:,} sequences: "
                             f"{r.waves} waves")
        lines.append(f"parameter-to-compute (total / active parameters per token): {entry.parameter_to_compute:.3g}×")
        lines.extend(f"⚠ {text}" for text in r.warnings)
        return tooltip_html(title, lines)

    # ---- options --------------------------------------------------------------------------

    def _skew_changed(self, value: float) -> None:
        self.view_option_changed.emit("routing_skew", float(value))
        if self.frame is not None:
            self.update_frame(self.frame)  # recomputes once the control rests (if shown)

    def plotted(self) -> dict[str, np.ndarray]:
        heights = np.asarray(self.histogram_bars.opts.get("height"), float)
        x0 = np.asarray(self.histogram_bars.opts.get("x0"), float)
        x1 = np.asarray(self.histogram_bars.opts.get("x1"), float)
        p50_x, p50_y = self.p50_marks.getData()
        return {
            "strategies": np.array(self.devices_plot.row_axis.ids, dtype=object),
            "rows": np.array(self.devices_plot.row_axis.labels, dtype=object),
            "devices": self.devices_plot.values("value"),
            "hatched": self.devices_plot.hatched_rows(),
            "device_text": np.array(self.devices_plot.texts.texts(), dtype=object),
            "throughput_system_tok_s": self.throughput_plot.values("system"),
            "throughput_device_tok_s": self.throughput_plot.values("device"),
            "itl_ms": self.itl_plot.values("itl"),
            "itl_p99_ms": self.itl_plot.values("p99"),
            "itl_p50_ms": 10.0 ** np.asarray(p50_x, float),
            "itl_p50_rows": np.asarray(p50_y, float),
            "histogram_share_pct": heights,
            "histogram_edges": np.concatenate([x0[:1], x1]) if x1.size else np.zeros(0),
            "imbalance_p50": np.array([self.p50_line.value()]) if self.p50_line.isVisible() else np.zeros(0),
            "imbalance_p99": np.array([self.p99_line.value()]) if self.p99_line.isVisible() else np.zeros(0),
        }
