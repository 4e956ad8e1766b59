"""File → Export: the current tab, or every tab, as files with the scenario beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QTabWidget, QWidget

from accelscope.engine.catalog.writing import FolderNotEmpty, OutputFolder
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.text.explain import explain

from ..panels.base import Panel
from ..state.controller import Controller
from ..state.presets import PresetFiles
from .files import PNG_SCALES, export_all, export_view, write_sidecar


class ExportHost(Protocol):
    """What an export needs of the main window."""

    controller: Controller
    presets: PresetFiles
    tabs: QTabWidget
    panels: dict[str, Panel]

    def current_view(self) -> str: ...

    def refresh_panel(self, view: str) -> Panel: ...



class Exports(QObject):
    message = Signal(str)  # for the status bar

    def __init__(self, window: QWidget) -> None:
        """``window``: the main window, which has what :class:`ExportHost` lists."""
        super().__init__(window)
        self.window: ExportHost = window
        self.dialog_parent = window

    def export_plot_dialog(self) -> None:
        view = self.window.current_view()
        path, chosen = QFileDialog.getSaveFileName(
            self.dialog_parent, "Export this plot", str(Path.home() / f"accelscope-{view}.png"),
            "PNG image (*.png);;SVG drawing (*.svg);;CSV table (*.csv)",
        )
        if not path:
            return
        scale = 2.0
        if Path(path).suffix.lower() == ".png" or "PNG" in chosen:
            width = self.window.tabs.currentWidget().width()
            labels = [f"{factor:g}× ({round(width * factor)} px wide)" for factor in PNG_SCALES]
            label, accepted = QInputDialog.getItem(self.dialog_parent, "PNG resolution", "Resolution:", labels, 1, False)
            if not accepted:
                return
            scale = PNG_SCALES[labels.index(label)]
        self.export_plot(Path(path), scale)

    def export_plot(self, path: Path, scale: float = 2.0) -> list[Path]:
        """The current tab as PNG, SVG or CSV (by the file's suffix), with a sidecar preset."""
        frame = self.window.controller.last_frame
        view = self.window.current_view()
        suffix = path.suffix.lower().lstrip(".") or "png"
        if frame is None or suffix not in ("png", "svg", "csv"):
            QMessageBox.warning(self.dialog_parent, "Cannot export", "Export to a .png, .svg or .csv file.")
            return []
        panel = self.window.refresh_panel(view)
        preset = self.window.presets.preset_of_workspace()
        try:
            written = export_view(view, panel, frame, self.window.controller.engine.catalog, path.with_suffix(""),
                                  formats=(suffix,), scale=scale, preset=preset)
            written.append(write_sidecar(preset, written[0]))
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", f"{path}: {error}")
            return []
        self.message.emit(f"Exported {written[0]} (scenario in {written[-1].name})")
        return written

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.dialog_parent, "Export every plot and table into a folder",
                                                  str(Path.home()))
        if folder:
            self.export_all_to(Path(folder))

    def export_all_to(self, folder: Path, scale: float = 2.0, *, force: bool = False) -> list[Path]:
        """Every tab into ``folder``: a new or empty one, or one an earlier export wrote (after
        asking); never over anyone else's files."""
        window = self.window
        frame = window.controller.last_frame
        if frame is None:
            return []
        try:
            OutputFolder(folder, force=force).check()
        except FolderNotEmpty as error:
            if not error.has_manifest:
                QMessageBox.warning(self.dialog_parent, "Cannot export",
                                    f"{folder} already holds other files; choose an empty folder or make a new one.")
                return []
            answer = QMessageBox.question(
                self.dialog_parent, "Replace the earlier export?",
                f"{folder} holds an earlier export. Replace its files? (Files accelscope did not write are kept.)",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
            if answer != QMessageBox.StandardButton.Yes:
                return []
            return self.export_all_to(folder, scale, force=True)
        except AccelscopeError as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", str(error))
            return []
        page_size = window.tabs.currentWidget().size()
        for view in window.panels:
            # Hidden tabs may not have been laid out at the current size yet.
            window.refresh_panel(view).resize(page_size)
        engine = window.controller.engine
        explanation = explain(engine, frame.workspace.scenario, frame.workspace.cost) if frame.accelerators else None
        try:
            written = export_all(window.panels, frame, engine.catalog, folder, window.presets.preset_of_workspace(),
                                 explanation, scale=scale, force=force)
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", f"{folder}: {error}")
            return []
        self.message.emit(f"Exported {len(written)} files to {folder}")
        return written
