"""The windows and dialogs beside the main window: Help → Formulas (follows the scenario while
open), View → Model vs paper (a selected row loads its setup), and the Help dialogs."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog, QWidget

from accelscope.engine.physics.frame import Frame

from . import help as help_dialogs
from .formulas import FormulasWindow
from .problems import show_loading_problems
from .validation import ValidationWindow


class SideHost(Protocol):
    """What the side windows need of the main window."""

    controller: object  # gui.state.controller.Controller
    presets: object  # gui.state.presets.PresetFiles
    problems: list[str]  # files that did not load

    def focus_control(self, control: str) -> None: ...

    def shortcut_list(self) -> list[tuple[str, str]]: ...


class SideWindows(QObject):
    def __init__(self, window: QWidget) -> None:
        """``window``: the main window, which has what :class:`SideHost` lists."""
        super().__init__(window)
        self.window: SideHost = window
        self.parent_widget = window
        self.formulas: FormulasWindow | None = None  # made on first use
        self.validation: ValidationWindow | None = None
        self.shortcuts: QDialog | None = None

    def show_formulas(self) -> FormulasWindow:
        """Help → Formulas: a separate window that follows the scenario while it is open."""
        if self.formulas is None:
            self.formulas = FormulasWindow(self.window.controller.engine, self.parent_widget)
            self.formulas.control_requested.connect(self.window.focus_control)
        self.formulas.show()
        self.formulas.raise_()
        self.formulas.activateWindow()
        frame = self.window.controller.last_frame
        self.formulas.update_frame(frame, frame.workspace.selected if frame else "")
        return self.formulas

    def follow(self, frame: Frame | None) -> None:
        """Show ``frame``'s selected scenario in the formulas, if their window is open."""
        if self.formulas is not None and self.formulas.isVisible():
            self.formulas.update_frame(frame, frame.workspace.selected if frame else "")

    def show_validation(self) -> ValidationWindow:
        """The papers' measurements beside the model's numbers; a selected row loads its setup."""
        if self.validation is None:
            self.validation = ValidationWindow(self.window.controller.engine.catalog)
            self.validation.workspace_requested.connect(
                lambda workspace: self.window.presets.adopt(workspace, "a Model vs paper row"))
            self.validation.start()
        self.validation.shown_now = self.window.controller.workspace.shown
        self.validation.show()
        self.validation.raise_()
        return self.validation

    def close(self) -> None:
        if self.validation is not None:
            self.validation.stop()
            self.validation.close()

    def show_shortcuts(self) -> None:
        self.shortcuts = help_dialogs.shortcuts_dialog(self.parent_widget, self.window.shortcut_list())

    def show_loading_problems(self) -> None:
        show_loading_problems(self.parent_widget, self.window.problems)

    def show_about(self) -> None:
        help_dialogs.show_about(self.parent_widget, self.window.controller.engine.catalog)
