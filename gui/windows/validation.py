"""Model vs paper: every published measurement and claim beside what the model computes.

The report comes from :func:`accelscope.engine.validation.validate` (about a second of engine
work, so it runs on a worker thread with its own Engine; the window says so meanwhile).
Selecting a row asks the main window to load that row's scenario into the controls.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.measurements import METRICS, metric_label
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.units import measured_number, ratio_text
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.validation.report import OFF_FACTOR, ClaimReport, Report, RowReport, validate
from accelscope.engine.validation.text import setup_text

ALL = "All accelerators"
COLUMNS = ("Source", "Accelerator", "Model", "Metric", "Published", "Model (calibrated)", "Ratio",
           "Pure roofline", "Ratio (roofline)", "What it counts / why it differs")
OFF_COLOUR = QColor("#F8D7DA")  # predicted/published beyond OFF_FACTOR either way
CLOSE_COLOUR = QColor("#D4EDDA")  # within 20%: the GPU target
MARKED_TEXT = QColor("#000000")  # on those light backgrounds, in the light and the dark theme
CLOSE_RATIO = 1.2

# The tab that shows a metric best when its row is loaded.
VIEW_OF_METRIC = {
    "ttft_ms": "latency",
    "itl_ms": "latency",
    "e2e_latency_s": "latency",
    "throughput_total_tok_s": "latency",
    "throughput_output_tok_s": "latency",
    "power_w": "energy",
    "tokens_per_joule": "energy",
}


def row_workspace(report: RowReport | ClaimReport, shown_now: tuple[str, ...]) -> Workspace | None:
    """The workspace that shows a row: its first configuration, with every accelerator it uses."""
    spec = report.row.spec if isinstance(report, RowReport) else report.claim.spec
    if spec is None:
        return None
    side = spec.sides[0]
    scenario: Scenario = spec.scenario(spec.cases[0], side, spec.candidates(side)[0])
    accelerators = tuple(dict.fromkeys([*spec.accelerators(), scenario.accelerator]))
    swept = {key for case in spec.cases for key in case}
    view = "sweep" if "batch" in swept else VIEW_OF_METRIC.get(spec.metric, "roofline")
    shown = accelerators if len(accelerators) > 1 else tuple(dict.fromkeys([*accelerators, *shown_now]))
    return Workspace(scenario, shown=shown, view=view)


class _Worker(QObject):
    done = Signal(object)  # Report, or an error message

    def __init__(self, catalog: Catalog) -> None:
        super().__init__()
        self.catalog = catalog

    def run(self) -> None:
        try:
            self.done.emit(validate(Engine(self.catalog)))
        except Exception as error:  # noqa: BLE001 - shown in the window, never lost
            self.done.emit(f"The comparison could not be computed: {error}")


class ValidationWindow(QWidget):
    """A table of the papers' numbers against the model's, filterable by accelerator."""

    workspace_requested = Signal(object)  # Workspace
    report_ready = Signal()

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Model vs paper")
        self.catalog = catalog
        self.report: Report | None = None
        self.shown_now: tuple[str, ...] = ()
        self._entries: list[RowReport | ClaimReport] = []
        self.summary = QLabel("Computing the model for every published configuration…")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setMinimumHeight(self.summary.fontMetrics().lineSpacing() * 4)
        self.filter = QComboBox()
        self.filter.addItem(ALL, None)
        self.filter.setToolTip("Show only the rows that involve one accelerator.")
        # The accelerators' names arrive with the report: grow to the longest, not the first item.
        self.filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.filter.currentIndexChanged.connect(self._fill)
        self.kind = QComboBox()
        for label in ("Measurements and claims", "Measurements", "Claims"):
            self.kind.addItem(label)
        self.kind.currentIndexChanged.connect(self._fill)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.setToolTip("Select a row to load its configuration into the controls.")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Show"))
        bar.addWidget(self.kind)
        bar.addWidget(self.filter)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self.resize(1400, 700)
        self._thread: QThread | None = None

    def start(self, synchronous: bool = False) -> None:
        """Compute the report (once); on a worker thread unless ``synchronous``."""
        if self.report is not None or self._thread is not None:
            return
        worker = _Worker(self.catalog)
        if synchronous:
            worker.done.connect(self._finished)
            worker.run()
            return
        thread = QThread(self)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.done.connect(self._finished)
        worker.done.connect(thread.quit)
        thread.finished.connect(worker.deleteLater)
        self._worker, self._thread = worker, thread
        thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()

    def _finished(self, result: object) -> None:
        if isinstance(result, str):
            self.summary.setText(result)
            return
        self.report = result
        accelerators = sorted({a for r in result.rows for a in r.accelerator_key.split("+")})
        for accelerator_id in accelerators:
            accelerator = self.catalog.accelerators.get(accelerator_id)
            self.filter.addItem(accelerator.name if accelerator else accelerator_id, accelerator_id)
        self.summary.setText(self._summary_text(result))
        self._fill()
        self.report_ready.emit()

    @staticmethod
    def _summary_text(report: Report) -> str:
        def pct(stats: dict) -> str:
            value = stats.get("median_abs_pct_error")
            return "—" if value is None else f"{value:.0f}%"

        measured_calibrated = report.summaries["calibrated"]["measured"]["by_group"]
        measured_ideal = report.summaries["ideal"]["measured"]["by_group"]
        groups = " · ".join(
            f"{group}: median |error| {pct(stats)} calibrated, {pct(measured_ideal.get(group, {}))} pure roofline "
            f"({stats.get('n', 0)} rows)"
            for group, stats in measured_calibrated.items()
        )
        # Escaped: a limit reads "<= 20%", which rich text would take for the start of a tag and
        # swallow with everything after it.
        targets = "; ".join(
            html.escape(f"{t.name}: {t.value} (limit {t.limit}, {'met' if t.met else 'not met'})")
            for t in report.targets
        )
        workloads = "; ".join(
            html.escape(
                f"{w.name}: {w.input_len:,} input, {w.output_len:,} output tokens"
                + (f", a served run of {w.requests:,} requests" if w.requests is not None and w.server is None else "")
                + (f", MLPerf server scenario at its capacity under p99 TTFT ≤ {w.server.ttft_p99_ms:,g} ms and "
                   f"p99 TPOT ≤ {w.server.tpot_p99_ms:,g} ms (Poisson runs of {w.requests:,} requests)"
                   if w.server is not None else "")
                + (f" ({', '.join(w.fixed_batch)} from fixed-batch images)" if w.fixed_batch else "")
            )
            for w in report.table.workloads.values()
        )
        return ("<b>The papers' measurements against the model.</b> " + html.escape(groups)
                + f"<p>Targets — {targets}. Cells beyond {OFF_FACTOR:g}× either way are red and the last "
                "column says why; within 20% green. Select a row to load its configuration into the controls; "
                "hover over a model for the setup computed.</p>"
                f"<p>Workloads assumed (resources/measurements.md) — {workloads}.</p>")

    def _fill(self) -> None:
        if self.report is None:
            return
        wanted = self.filter.currentData()
        kind = self.kind.currentIndex()
        entries: list[RowReport | ClaimReport] = []
        if kind in (0, 1):
            entries += [r for r in self.report.rows if wanted is None or wanted in r.accelerator_key.split("+")]
        if kind in (0, 2):
            entries += [c for c in self.report.claims if wanted is None or (
                c.claim.spec is not None and wanted in c.claim.spec.accelerators())]
        self._entries = entries
        self.table.blockSignals(True)
        self.table.clearContents()
        self.table.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            for column, (text, tip) in enumerate(self._cells(entry)):
                item = QTableWidgetItem(text)
                if tip:
                    item.setToolTip(tip)
                self.table.setItem(row, column, item)
            ratio = entry.ratio("calibrated") if isinstance(entry, RowReport) else None
            if ratio is not None and math.isfinite(ratio) and ratio > 0:
                colour = (OFF_COLOUR if entry.off() else
                          CLOSE_COLOUR if 1 / CLOSE_RATIO <= ratio <= CLOSE_RATIO else None)
                if colour is not None:
                    for column in (5, 6):
                        self.table.item(row, column).setBackground(QBrush(colour))
                        self.table.item(row, column).setForeground(QBrush(MARKED_TEXT))
        self.table.blockSignals(False)
        self.table.resizeColumnsToContents()
        for column in range(len(COLUMNS) - 1):
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), 230))

    def _cells(self, entry: RowReport | ClaimReport) -> list[tuple[str, str]]:
        if isinstance(entry, RowReport):
            row = entry.row
            calibrated, ideal = entry.calibrated, entry.ideal
            why = row.explanation or row.counts or ""
            if row.not_computed:
                why = f"not computed: {row.not_computed}"
            elif calibrated is not None and calibrated.status:
                why = f"{calibrated.status}; {why}" if why else calibrated.status
            setup = f"Computed for: {setup_text(row.spec)}" if row.spec is not None else ""
            return [
                (f"{row.paper} {row.where}", row.quote),
                (self._accelerator_names(entry.accelerator_key), row.devices),
                (self._model_name(row.model), setup),
                (metric_label(row.metric), METRICS[row.metric].description if row.metric in METRICS else ""),
                (f"{row.published.text()} {row.unit}", row.kind),
                (measured_number(calibrated.value if calibrated else None, missing="—"), ""),
                (ratio_text(entry.ratio("calibrated")), "model / published"),
                (measured_number(ideal.value if ideal else None, missing="—"), "all efficiencies 1, overheads 0"),
                (ratio_text(entry.ratio("ideal")), ""),
                (why, why),
            ]
        claim = entry.claim
        calibrated = entry.calibrated
        return [
            (f"{claim.paper} {claim.where} (claim)", claim.quote),
            ("", ""),
            ("", claim.setup),
            (claim.statement, claim.setup),
            (f"{claim.published.text()} {claim.unit}", ""),
            (measured_number(calibrated.value if calibrated else None, missing="—"), ""),
            ("", ""),
            (measured_number(entry.ideal.value if entry.ideal else None, missing="—"), ""),
            ("", ""),
            (entry.verdict(calibrated), entry.computed_as or claim.reason or claim.setup),
        ]

    def _accelerator_names(self, key: str) -> str:
        """The row's accelerators (ids joined by '+') by their catalog names."""
        names = []
        for accelerator_id in key.split("+"):
            accelerator = self.catalog.accelerators.get(accelerator_id)
            names.append(accelerator.name if accelerator is not None else accelerator_id)
        return " + ".join(names)

    def _model_name(self, model_id: str) -> str:
        model = self.catalog.models.get(model_id)
        return model.name if model is not None else model_id

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:  # as a dialog closes
            self.close()
            return
        super().keyPressEvent(event)

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        workspace = row_workspace(self._entries[rows[0].row()], self.shown_now)
        if workspace is not None:
            self.workspace_requested.emit(workspace)
