"""File → Export: the current tab, or every tab, as files with the scenario beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox, QTabWidget, QWidget

from accelscope.engine.catalog.writing import FolderNotEmpty, OutputFolder
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.text.explain import explain

from ..look.display import Display
from ..panels.base import Panel
from ..state.compare import Comparison
from ..state.controller import Controller
from ..state.presets import PresetFiles
from .files import PNG_SCALES, export_all, export_view, write_sidecar
from .report import PAGES, document_panels


class ExportHost(Protocol):
    """What an export needs of the main window."""

    controller: Controller
    presets: PresetFiles
    tabs: QTabWidget
    panels: dict[str, Panel]
    display: Display
    comparison: Comparison

    def current_view(self) -> str: ...


# The choices of File → Export all: (label, page, theme). Dark only when asked.
PAGE_CHOICES = (
    ("Handout (1400 × 900, light)", "handout", "light"),
    ("Slide (1600 × 900, light)", "slide", "light"),
    ("Slide (1600 × 900, dark, for dark slides)", "slide", "dark"),
)


class Exports(QObject):
    """File → Export. Every figure is drawn on new tabs laid out at a named page size in the light
    theme (see :func:`.report.document_panels`), never from the window's tabs: what the window
    looks like (its size, the screen, presentation mode, the dark theme) never reaches a file."""

    message = Signal(str)  # for the status bar

    def __init__(self, window: QWidget) -> None:
        """``window``: the main window, which has what :class:`ExportHost` lists."""
        super().__init__(window)
        self.window: ExportHost = window
        self.dialog_parent = window

    def _document(self, views: tuple[str, ...] | None = None, page: str = "handout", theme_name: str = "light"):
        window = self.window
        return document_panels(window.controller.engine, window.controller.last_frame.workspace, page=page,
                               theme_name=theme_name, views=views, font=window.display.page_font(),
                               palette=None if theme_name == "dark" else window.display.page_palette(),
                               reference=window.comparison.frame)

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
            width = PAGES["handout"][0]
            labels = [f"{factor:g}× ({round(width * factor)} px wide)" for factor in PNG_SCALES]
            label, accepted = QInputDialog.getItem(self.dialog_parent, "PNG resolution", "Resolution:", labels, 1, False)
            if not accepted:
                return
            scale = PNG_SCALES[labels.index(label)]
        self.export_plot(Path(path), scale)

    def export_plot(self, path: Path, scale: float = 2.0, *, page: str = "handout",
                    theme_name: str = "light") -> list[Path]:
        """The current tab (the page of it shown) as PNG, SVG or CSV (by the file's suffix) on a
        ``page`` in the ``theme_name`` theme, with a sidecar preset."""
        frame = self.window.controller.last_frame
        view = self.window.current_view()
        suffix = path.suffix.lower().lstrip(".") or "png"
        if frame is None or suffix not in ("png", "svg", "csv"):
            QMessageBox.warning(self.dialog_parent, "Cannot export", "Export to a .png, .svg or .csv file.")
            return []
        preset = self.window.presets.preset_of_workspace()
        shown_page = getattr(self.window.panels[view], "page", None)
        try:
            with self._document((view,), page, theme_name) as (panels, frame):
                panel = panels[view]
                if shown_page is not None and shown_page != getattr(panel, "page", None):
                    panel.show_page(shown_page)  # the energy tab's cost page, the serving tab's run
                    for _ in range(3):
                        QApplication.processEvents()
                written = export_view(view, panel, frame, self.window.controller.engine.catalog,
                                      path.with_suffix(""), formats=(suffix,), scale=scale, preset=preset)
            written.append(write_sidecar(preset, written[0]))
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", f"{path}: {error}")
            return []
        self.message.emit(f"Exported {written[0]} (scenario in {written[-1].name})")
        return written

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.dialog_parent, "Export every plot and table into a folder",
                                                  str(Path.home()))
        if not folder:
            return
        labels = [label for label, _, _ in PAGE_CHOICES]
        label, accepted = QInputDialog.getItem(self.dialog_parent, "Page", "Each figure on a page for:", labels, 0,
                                               False)
        if accepted:
            _, page, theme_name = PAGE_CHOICES[labels.index(label)]
            self.export_all_to(Path(folder), page=page, theme_name=theme_name)

    def export_all_to(self, folder: Path, scale: float = 2.0, *, force: bool = False, page: str = "handout",
                      theme_name: str = "light") -> list[Path]:
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
            return self.export_all_to(folder, scale, force=True, page=page, theme_name=theme_name)
        except AccelscopeError as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", str(error))
            return []
        engine = window.controller.engine
        try:
            with self._document(None, page, theme_name) as (panels, frame):
                explanation = (explain(engine, frame.workspace.scenario, frame.workspace.cost)
                               if frame.accelerators else None)
                written = export_all(panels, frame, engine.catalog, folder, window.presets.preset_of_workspace(),
                                     explanation, scale=scale, force=force)
        except (OSError, AccelscopeError) as error:
            QMessageBox.warning(self.dialog_parent, "Cannot export", f"{folder}: {error}")
            return []
        self.message.emit(f"Exported {len(written)} files to {folder}")
        return written
