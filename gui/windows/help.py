"""Help → Keyboard shortcuts and Help → About."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog, user_data_dir

from .problems import escape


def shortcuts_dialog(parent: QWidget, rows: list[tuple[str, str]]) -> QDialog:
    """A non-modal table of (keys, what they do); shown, and returned so the caller keeps it."""
    dialog = QDialog(parent)
    dialog.setWindowTitle("Keyboard shortcuts")
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["Keys", "Does"])
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    for row, (keys, does) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(keys))
        table.setItem(row, 1, QTableWidgetItem(does))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    # Wide enough for both columns beside the vertical scroll bar: no horizontal one.
    margins = layout.contentsMargins()
    needed = (table.horizontalHeader().length() + table.verticalScrollBar().sizeHint().width()
              + 2 * table.frameWidth() + margins.left() + margins.right())
    dialog.resize(max(560, needed), 620)
    dialog.show()
    return dialog


def show_about(parent: QWidget, catalog: Catalog) -> None:
    QMessageBox.about(
        parent, "About accelscope",
        f"<b>accelscope</b>: LLM inference across AI accelerators — roofline, memory fit, latency, "
        f"throughput and energy from the architecture, computed live.<br><br>"
        f"{len(catalog.accelerators)} accelerators and {len(catalog.models)} models loaded; every catalog "
        f"number carries its source (see <code>accelscope catalog</code>). How close the numbers are to "
        f"published measurements: <code>accelscope validate</code>.<br>Your own accelerators, models and "
        f"presets: {escape(str(user_data_dir()))}",
    )
