"""The presets list: bundled and user presets with their descriptions, one click to load."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.presets import PresetEntry, list_presets

_ENTRY_ROLE = Qt.ItemDataRole.UserRole


class PresetsPanel(QWidget):
    """Emits ``preset_chosen(entry)`` when the user loads a preset (double-click, Enter or
    the Load button)."""

    preset_chosen = Signal(object)

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.save_as_path = "File → Save preset as…"  # the menu's own words (set_save_as_path), for the hint
        self.list = QListWidget()
        self.list.setAccessibleName("Presets")
        self.list.setToolTip("Bundled presets set up a figure or table of the source papers, or one "
                             "lesson; your own presets are listed below them. Double-click to load.")
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.description.setTextFormat(Qt.TextFormat.PlainText)
        self.description.setMinimumHeight(80)
        self.load_button = QPushButton("Load preset")
        self.load_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, stretch=1)
        layout.addWidget(self.description)
        layout.addWidget(self.load_button)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemActivated.connect(self._activated)
        self.load_button.clicked.connect(lambda: self._activated(self.list.currentItem()))
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        entries = list_presets(self.catalog)
        for heading, bundled in (("Bundled", True), ("Yours", False)):
            group = [entry for entry in entries if entry.bundled == bundled]
            header = QListWidgetItem(heading)
            font = QFont(header.font())
            font.setBold(True)
            header.setFont(font)
            header.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(header)
            if not group and not bundled:
                hint = QListWidgetItem(f"  ({self.save_as_path} adds yours here)")
                hint.setFlags(Qt.ItemFlag.NoItemFlags)
                self.list.addItem(hint)
            for entry in group:
                item = QListWidgetItem(f"  {entry.name}")
                item.setData(_ENTRY_ROLE, entry)
                if entry.problem:
                    item.setForeground(QBrush(QColor("#999999")))
                    item.setToolTip(f"Cannot be loaded: {entry.problem}")
                else:
                    item.setToolTip(entry.description)
                self.list.addItem(item)

    def set_save_as_path(self, path: str) -> None:
        """Name the menu entry that saves a preset, as the menu shows it ("File → Save preset as…")."""
        self.save_as_path = path
        self.refresh()

    def entries(self) -> list[PresetEntry]:
        return [
            self.list.item(row).data(_ENTRY_ROLE)
            for row in range(self.list.count())
            if self.list.item(row).data(_ENTRY_ROLE) is not None
        ]

    def select(self, name: str) -> None:
        for row in range(self.list.count()):
            entry = self.list.item(row).data(_ENTRY_ROLE)
            if entry is not None and entry.name == name:
                self.list.setCurrentRow(row)
                return

    def _current_changed(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        entry = item.data(_ENTRY_ROLE) if item is not None else None
        if entry is None:
            self.description.clear()
            self.load_button.setEnabled(False)
            return
        self.description.setText(f"Cannot be loaded: {entry.problem}" if entry.problem else entry.description)
        self.load_button.setEnabled(not entry.problem)

    def _activated(self, item: QListWidgetItem | None) -> None:
        entry = item.data(_ENTRY_ROLE) if item is not None else None
        if entry is not None and not entry.problem:
            self.preset_chosen.emit(entry)
