"""Will it run here? Pick one device and see every model on it: fits or not (and what would run
it), the largest batch at the scenario's context, and one sequence's decode tokens/s.

At the scenario's precisions, input and output lengths, at batch 1 on one device
(``engine.studies.run_here``). The bars are sorted as the study sorts: fits, then runs at a
lower precision on this device, then needs more devices of this kind; the fastest first within
each. A bar's length is the decode tokens/s of what runs (log scale); the text beside it says
what runs and its largest batch. Hover a bar for the numbers; click it (or a row of the table)
to make the model the scenario's. The device defaults to the selected accelerator; the choice is
a view option, so presets keep it.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, QSize, Qt, Signal
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyleOptionComboBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.groups import GROUP_LABELS, grouped
from accelscope.engine.core.precision import PRECISION_LABELS
from accelscope.engine.core.units import compact, count, format_params, gigabytes, milliseconds
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.run_here import ModelRun, RunHere, RunOption

from ..look.palette import FITS_COLOUR, NO_FIT_COLOUR, WAVES_COLOUR
from ..look.style import plot_font, plot_text_colour
from ..plotkit.bars import LogBarPlot, canvas
from ..plotkit.picking import RowPicker
from ..plotkit.text import subtitle_label, swatch, tooltip_html
from .analysis import AnalysisPanel

# A bar's colour says what runs the model: it fits as set; it fits on this device at a lower
# precision; it needs more devices of this kind (hatched: not on this one device).
VERDICT_COLOURS: dict[str, str] = {
    "fits": FITS_COLOUR,
    "lower_precision": WAVES_COLOUR,
    "more_devices": NO_FIT_COLOUR,
    "none": NO_FIT_COLOUR,
}
VERDICT_WORDS: dict[str, str] = {
    "fits": "fits",
    "lower_precision": "fits at a lower precision",
    "more_devices": "needs more devices",
    "none": "runs nowhere",
}
BATCH_TEXT_MIN_PX = 520  # a plot narrower than this leaves the largest batch to the table and hover
TABLE_MIN_PX = 90
MODEL_COLUMN_PX = 200
SPLIT_SIZES = [700, 260]  # chart over table, in proportion until the user drags the handle
COMBO_CHARACTERS = 30
SELECTED_ENTRY = ""  # the combo's first entry: whatever accelerator is selected
COLUMNS: tuple[str, ...] = ("Model", "Runs here?", "Decode tok/s", "Largest batch", "Runs with", "Weights (GB)",
                            "Parameters (B)")
COLUMN_TIPS: tuple[str, ...] = (
    "The model (click a row to use it in the scenario)",
    "Whether it fits one device at the scenario's precisions and context, and if not what runs it",
    "Decode tokens/s of one sequence (batch 1) of what runs it",
    "The largest batch of what runs it at the full context (per replica where it needs more devices)",
    "What runs it: the scenario's settings, a lower precision on this device, or tensor parallelism over more devices",
    "Its weights on one device at the scenario's weight precision",
    "Total parameters, in billions",
)
NUMERIC_COLUMNS = frozenset({2, 3, 5, 6})


def bar_text(row: ModelRun, study: RunHere, with_batch: bool = True) -> str:
    """What is written beside a model's bar: what runs it, its tokens/s and (``with_batch``) its
    largest batch."""
    option = row.option
    if row.fits:
        what, batch = "", row.max_batch
    elif option is None:
        return "runs nowhere (hover: why)"
    elif option.devices > 1:
        what, batch = f"{option.devices:,} devices · ", option.max_batch
    else:
        what, batch = f"{option.label(study.workload)} · ", option.max_batch
    text = f"{what}{compact(row.decode_tok_s)} tok/s"
    return f"{text} · batch ≤ {count(batch)}" if with_batch else text


class RunHerePanel(AnalysisPanel):
    title = "Will it run here?"
    study_view = "run_here"
    model_requested = Signal(object)  # the ModelArch clicked, for the main window to make the scenario's

    def __init__(self, catalog: Catalog, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(catalog, engine, parent)
        self.device = SELECTED_ENTRY  # what the user chose in the combo
        self._workspace_device: object = None  # the workspace's run_here_device last seen
        self._combo_accelerator: str | None = None  # the selected accelerator entry 0 names
        self._current_model: str | None = None
        self.row_ids: tuple[str, ...] = ()

        font = plot_font()
        device_label = QLabel("&Device:")
        device_label.setFont(font)
        self.combo = QComboBox()
        self.combo.setFont(font)
        self.combo.setAccessibleName("Device")
        self.combo.setToolTip("The device every model is tried on; the first entry follows the selected accelerator.")
        self.combo.setMaxVisibleItems(24)
        # At least as wide as a usual name, not the longest: the tab must fit beside both docks on
        # a small screen. Wider where the row has room, up to its longest entry (at its least
        # width "Selected accelerator: NVIDIA H100 SXM5 80GB" showed "... SXM5 8"); the list
        # that drops down is as wide as its entries.
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(COMBO_CHARACTERS)
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        device_label.setBuddy(self.combo)
        self._fill_combo()
        self.combo.currentIndexChanged.connect(self._combo_changed)
        controls = QHBoxLayout()
        controls.setContentsMargins(8, 6, 8, 0)
        controls.addWidget(device_label)
        controls.addWidget(self.combo, 1)  # the row's spare width goes to the combo first, up to its widest
        controls.addStretch(0)

        self.header = subtitle_label("")
        self.legend = subtitle_label(
            swatch(FITS_COLOUR, "fits as set")
            + " &nbsp; " + swatch(WAVES_COLOUR, "fits at a lower precision")
            + " &nbsp; " + swatch(NO_FIT_COLOUR, "needs more devices", hatch=True)
        )
        self.canvas = canvas()
        self.chart = LogBarPlot(self.canvas, 0, title="", x_label="decode tokens/s at batch 1, log scale",
                                x_unit=None, row_labels=True)
        self._batch_texts = True  # the bars' texts give the largest batch (wide enough for it)
        self.canvas.resized.connect(self._resized)
        self.picker = RowPicker(self.canvas, [self.chart.plot], lambda: len(self.row_ids), self._tooltip,
                                self._row_clicked, self)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for column, tip in enumerate(COLUMN_TIPS):
            self.table.horizontalHeaderItem(column).setToolTip(tip)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setAccessibleName("Models on the device")
        self.table.cellClicked.connect(lambda row, _column: self._row_clicked(row))
        self.table.setMinimumHeight(TABLE_MIN_PX)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.canvas)
        self.splitter.addWidget(self.table)
        self.splitter.setCollapsible(0, False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes(SPLIT_SIZES)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(controls)
        layout.addWidget(self.header)
        layout.addWidget(self.legend)
        layout.addWidget(self.splitter, 1)

    # ---- the device combo ----------------------------------------------------------------

    def _fill_combo(self) -> None:
        """The selected accelerator first, then every device under its group's heading."""
        model = QStandardItemModel(self.combo)
        model.appendRow(self._entry(self._selected_entry_text(), SELECTED_ENTRY))
        bold = QFont(self.combo.font())
        bold.setBold(True)
        for group, members in grouped(self.engine.catalog.accelerators.values()):
            heading = QStandardItem(GROUP_LABELS[group])
            heading.setFlags(Qt.ItemFlag.NoItemFlags)  # a heading, not a choice
            heading.setFont(bold)
            model.appendRow(heading)
            for accelerator in members:
                entry = self._entry(f"    {accelerator.name}", accelerator.id)
                entry.setToolTip(f"{accelerator.name} — {accelerator.vendor}, {GROUP_LABELS[group].lower()}")
                model.appendRow(entry)
        self.combo.blockSignals(True)
        self.combo.setModel(model)
        self.combo.view().setMinimumWidth(self.combo.view().sizeHintForColumn(0) + 24)
        self._fit_combo_width()
        index = self.combo.findData(self.device)
        self.combo.setCurrentIndex(max(index, 0))
        self.combo.blockSignals(False)

    def _fit_combo_width(self) -> None:
        """The combo's widest: what its longest entry needs closed (the style's frame and arrow
        around the text)."""
        model = self.combo.model()
        metrics = self.combo.fontMetrics()
        text_px = max(metrics.horizontalAdvance(model.item(row).text()) for row in range(model.rowCount()))
        option = QStyleOptionComboBox()
        self.combo.initStyleOption(option)
        needed = self.combo.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, option,
                                                     QSize(text_px, metrics.height()), self.combo)
        self.combo.setMaximumWidth(max(needed.width(), self.combo.minimumSizeHint().width()))

    @staticmethod
    def _entry(text: str, data: str) -> QStandardItem:
        item = QStandardItem(text)
        item.setData(data, Qt.ItemDataRole.UserRole)
        return item

    def _selected_entry_text(self) -> str:
        accelerator = self.engine.catalog.accelerators.get(self._combo_accelerator or "")
        return f"Selected accelerator: {accelerator.name}" if accelerator is not None else "Selected accelerator"

    def _sync_combo(self) -> None:
        model = self.combo.model()
        model.item(0).setText(self._selected_entry_text())
        self._fit_combo_width()
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(max(self.combo.findData(self.device), 0))
        self.combo.blockSignals(False)

    def _combo_changed(self, index: int) -> None:
        device = self.combo.itemData(index)
        if device is None or device == self.device:
            return
        self.device = device
        self.view_option_changed.emit("run_here_device", device)
        if self.frame is not None and self.isVisible():
            self.refresh_now()
        # Hidden: showEvent sees the device differ from the study's and recomputes.

    def set_device(self, accelerator_id: str) -> None:
        """Choose a device as the combo does ("" for the selected accelerator)."""
        index = self.combo.findData(accelerator_id)
        if index < 0:
            raise ValueError(f"unknown accelerator {accelerator_id!r}")
        self.combo.setCurrentIndex(index)

    # ---- AnalysisPanel -------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        workspace = frame.workspace
        workspace_device = workspace.option("run_here_device")
        if workspace_device != self._workspace_device:
            # A new value from the workspace (a preset): follow it.
            self._workspace_device = workspace_device
            if workspace_device == SELECTED_ENTRY or workspace_device in self.engine.catalog.accelerators:
                self.device = workspace_device
        self.frame = frame
        if workspace.scenario.accelerator != self._combo_accelerator or self.combo.currentData() != self.device:
            self._combo_accelerator = workspace.scenario.accelerator
            self._sync_combo()
        self._current_model = workspace.scenario.model
        super().update_frame(frame)
        self._apply_selection()

    def study_workspace(self, frame: Frame) -> Workspace:
        return frame.workspace.with_options(run_here_device=self.device)

    def show_study(self, study: RunHere) -> None:
        rows = study.rows
        self.row_ids = tuple(row.model for row in rows)
        # Each name whole on one line: a name wrapped onto two lines ran into the next row's
        # ("Llama 3.3 Nemotron Super 49B v1" at 1024 x 768).
        self.chart.row_axis.set_rows([row.name for row in rows], ids=list(self.row_ids))
        self.canvas.settle()  # the plot's width, for the texts beside the bars
        self._draw_bars(study)
        self._show_table(study)
        self._show_header(study)
        self._apply_selection()

    # ---- drawing -------------------------------------------------------------------------

    def _draw_bars(self, study: RunHere) -> None:
        rows = study.rows
        self._batch_texts = self._room_for_batches()
        self.chart.update(
            {"value": np.array([row.decode_tok_s for row in rows], dtype=float)},
            [VERDICT_COLOURS[row.verdict] for row in rows],
            np.array([row.verdict in ("fits", "lower_precision") for row in rows], dtype=bool),
            [bar_text(row, study, self._batch_texts) for row in rows],
        )

    def _room_for_batches(self) -> bool:
        """Whether the plot is wide enough for the largest batch beside each bar (the table and
        hover always give it)."""
        return (self.chart.plot.vb.width() or 0.0) >= BATCH_TEXT_MIN_PX

    def _resized(self) -> None:
        if self.study is not None and self._room_for_batches() != self._batch_texts:
            self._draw_bars(self.study)

    def _show_header(self, study: RunHere) -> None:
        w = study.workload
        fits, lower, more = (study.count(v) for v in ("fits", "lower_precision", "more_devices"))
        nowhere = study.count("none")
        chosen = "" if self.device else " (the selected accelerator)"
        settings = (f"weights {PRECISION_LABELS[w.weight_precision]}, activations "
                    f"{PRECISION_LABELS[w.activation_precision]}, KV cache {PRECISION_LABELS[w.kv_precision]}; "
                    f"{w.input_len:,} + {w.output_len:,} tokens")
        counts = [f"<b>{fits} of {len(study.rows)}</b> models fit"]
        if lower:
            counts.append(f"{lower} more at a lower precision")
        if more:
            counts.append(f"{more} need more devices")
        if nowhere:
            counts.append(f"{nowhere} run nowhere")
        self.header.setText(
            f"<b>{study.accelerator_name}</b>{chosen}: {gigabytes(study.usable_bytes)} usable · {settings} · "
            + ", ".join(counts) + ". Click a model to use it."
        )

    def _show_table(self, study: RunHere) -> None:
        table = self.table
        table.setUpdatesEnabled(False)
        table.clearContents()
        table.setRowCount(len(study.rows))
        for index, row in enumerate(study.rows):
            option = row.option
            runs_with = "as set" if row.fits else (option.label(study.workload) if option is not None else "—")
            cells = (
                row.name,
                VERDICT_WORDS[row.verdict],
                compact(row.decode_tok_s) if row.decode_tok_s > 0 else "—",
                count(row.runs_max_batch) if row.runs_max_batch > 0 else "—",
                runs_with,
                f"{row.weights_bytes / 1e9:,.1f}",
                f"{row.total_params / 1e9:,.1f}",
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, row.model)
                if column in NUMERIC_COLUMNS:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == 1:
                    item.setForeground(plot_text_colour(VERDICT_COLOURS[row.verdict]))
                item.setToolTip(self._tooltip(index))
                table.setItem(index, column, item)
        # The longest model name would take a third of a narrow tab: cut it (hover gives it whole).
        table.setColumnWidth(0, min(table.sizeHintForColumn(0), MODEL_COLUMN_PX))
        table.setUpdatesEnabled(True)

    def _apply_selection(self) -> None:
        """Mark the scenario's model: a band and a bold name on the chart, its table row bold."""
        row = self.row_ids.index(self._current_model) if self._current_model in self.row_ids else None
        self.chart.set_selected_row(row)
        self.chart.row_axis.set_bold_row(row)
        # Each item's new font, told to the table once per row: told per item, the table sized
        # every column to its contents again at each (~0.8 ms an item, fourteen a change).
        model, changed = self.table.model(), set()
        with QSignalBlocker(model):
            for index in range(self.table.rowCount()):
                for column in range(self.table.columnCount()):
                    item = self.table.item(index, column)
                    if item is not None and item.font().bold() != (index == row):
                        font = item.font()
                        font.setBold(index == row)
                        item.setFont(font)
                        changed.add(index)
        for index in sorted(changed):
            model.dataChanged.emit(model.index(index, 0), model.index(index, self.table.columnCount() - 1),
                                   [Qt.ItemDataRole.FontRole])

    # ---- hover, click --------------------------------------------------------------------

    def _row_clicked(self, row: int) -> None:
        if 0 <= row < len(self.row_ids):
            self.model_requested.emit(self.engine.model(self.row_ids[row]))

    def _tooltip(self, index: int) -> str:
        study: RunHere | None = self.study
        if study is None or not 0 <= index < len(study.rows):
            return ""
        row = study.rows[index]
        device = study.accelerator_name
        context = f"{study.context:,} tokens"
        lines = []
        if row.fits:
            lines += [
                f"<b>fits</b> one {device}: weights {gigabytes(row.weights_bytes)} + KV cache "
                f"{gigabytes(row.kv_cache_bytes)} per sequence at {context}, of {gigabytes(row.usable_bytes)} usable",
                f"largest batch: <b>{count(row.max_batch)}</b> sequences at {context}",
                f"decode at batch 1: <b>{compact(1.0 / row.itl_s)} tokens/s</b> (ITL {milliseconds(row.itl_s)})",
            ]
        else:
            lines.append(f"<b>does not fit</b> one {device}: {row.fit_reason} (weights {gigabytes(row.weights_bytes)}, "
                         f"{gigabytes(row.usable_bytes)} usable)")
            if row.lower_precision is None:
                lines.append("no narrower precision fits this device (down to 4-bit weights with an 8-bit KV cache)")
            lines += self._option_lines(row.lower_precision, study, "on this device with")
            lines += self._option_lines(row.more_devices, study, "on")
            if row.more_devices is None:
                lines.append("tensor parallelism up to 65,536 devices does not hold it either")
        # The warnings are those of the scenario's settings on one device: only where those run.
        lines += [f"⚠ {text}" for text in row.warnings] if row.fits else []
        lines.append(f"{format_params(row.total_params)} parameters · click: use it in the scenario")
        return tooltip_html(f"{row.name} on {device}", lines)

    @staticmethod
    def _option_lines(option: RunOption | None, study: RunHere, words: str) -> list[str]:
        if option is None:
            return []
        what = option.label(study.workload)
        if not option.fits:
            return [f"{words} {what}: still does not fit ({option.fit_reason})"]
        batch = f"largest batch {count(option.max_batch)}" + (" per replica" if option.devices > 1 else "")
        return [f"runs {words} <b>{what}</b>: {compact(option.decode_tok_s)} tokens/s at batch 1 "
                f"(ITL {milliseconds(option.itl_s)}), {batch}"]

    def figure_accelerators(self) -> tuple[str, ...]:
        if self.frame is None:
            return ()
        return (self.device or self.frame.workspace.scenario.accelerator,)

    def plotted(self) -> dict[str, np.ndarray]:
        study: RunHere | None = self.study
        rows = study.rows if study is not None else ()
        cells = [[self.table.item(r, c).text() if self.table.item(r, c) is not None else ""
                  for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]
        return {
            "device": np.array([study.accelerator if study is not None else ""], dtype=object),
            "models": np.array(self.chart.row_axis.ids, dtype=object),
            "labels": np.array(self.chart.row_axis.labels, dtype=object),
            "verdicts": np.array([row.verdict for row in rows], dtype=object),
            "decode_tok_s": self.chart.values("value"),
            "hatched": self.chart.hatched_rows(),
            "texts": np.array(self.chart.texts.texts(), dtype=object),
            "bold_row": np.array([-1 if self.chart.row_axis.bold_row is None else self.chart.row_axis.bold_row]),
            "table": np.array(cells, dtype=object).reshape(len(cells), self.table.columnCount()),
        }

