"""Models the window adds to its engine: a config.json imported from disk, or a synthetic model
made in the scaling tab. The controller then computes with an engine that knows the model, and
the workspace shows it (the controls follow)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.model import ModelArch

from .controller import Controller


class ModelImport(QObject):
    message = Signal(str)  # for the status bar

    def __init__(self, controller: Controller, window: QWidget) -> None:
        super().__init__(window)
        self.controller = controller
        self.window = window  # the parent of dialogs and message boxes

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import a model", "", "Model files (config.json *.json *.toml);;All files (*)"
        )
        if path:
            self.import_file(path)

    def import_file(self, path: str) -> bool:
        try:
            model = self.controller.engine.catalog.model(path)
        except AccelscopeError as error:
            QMessageBox.warning(self.window, "Cannot import the model", str(error))
            return False
        self.use(model)
        self.message.emit(f"Imported {model.name} from {path}")
        return True

    def use(self, model: ModelArch) -> None:
        """Add ``model`` to the engine and show it."""
        self.controller.use_models(model)
        self.controller.set_field("model", model.id)
