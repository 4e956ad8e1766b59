"""Presets in the window: open, save, save as, and the recently used files.

:class:`PresetFiles` keeps the preset the window shows (None for an unsaved scenario) and the
workspace as it was last loaded or saved, so the window can mark changes since then. A preset
is applied as one new workspace on the controller, so every control follows it at once and the
scenario is computed once. A bad file changes nothing and says why. A scenario loaded from
anywhere else (a Model vs paper row) is no preset's: Save then asks for a name rather than
overwrite the preset shown before it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QWidget,
)

from accelscope.engine.catalog import user_data_dir
from accelscope.engine.catalog.presets import (
    Preset,
    bundled_preset_files,
    load_preset,
    new_preset,
    save_preset,
    user_preset_path,
    user_presets_dir,
    write_atomically,
)
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.workspace import Workspace

from .controller import Controller
from .session import default_workspace

RECENT_LIMIT = 8
UNSAVED_NAME = "Unsaved scenario"


def ask_about_unsaved(parent: QWidget, name: str, action: str) -> str:
    """Save, discard or cancel, before ``action`` ("loading Brunetta Fig. 4", "quitting") would
    discard the edits of ``name``: returns "save", "discard" or "cancel"."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, "Unsaved changes", f"“{name}” has changes that are not saved. Save them before {action}?",
        buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


@dataclass(frozen=True)
class Shown:
    """What the window shows, as undo and redo put it back: the workspace, the preset it came
    from and that preset's unchanged state (which decide the title and its unsaved mark)."""

    workspace: Workspace
    preset: Preset | None
    baseline: Workspace

    def same_as(self, other: Shown) -> bool:
        """The same scenario (the tab shown is no change) from the same preset."""
        return (self.workspace.with_changes(view=other.workspace.view) == other.workspace
                and self.preset is other.preset and self.baseline == other.baseline)


class SaveDialog(QDialog):
    """Name and description of a preset."""

    def __init__(self, parent: QWidget, name: str, description: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Save preset as")
        self.name = QLineEdit(name)
        self.name.setPlaceholderText("e.g. Qwen3-32B on two MI300X")
        self.description = QPlainTextEdit(description)
        self.description.setPlaceholderText("What this scenario shows and what to look at.")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QFormLayout(self)
        layout.addRow("Name", self.name)
        layout.addRow("Description", self.description)
        layout.addRow(buttons)

    def _accept(self) -> None:
        if self.name.text().strip():
            self.accept()

    def values(self) -> tuple[str, str]:
        return self.name.text().strip(), self.description.toPlainText().strip()


class PresetFiles(QObject):
    current_changed = Signal(object)  # the Preset now shown (its name is the window's title), or None
    modified_changed = Signal(bool)  # whether the scenario differs from the one last loaded or saved
    replacing = Signal(str)  # a whole new scenario is about to be shown: what happened, as "a preset was loaded"
    applied = Signal(object)  # a Preset whose workspace was just applied
    saved = Signal(object)  # the Preset just written (as read back)
    recent_changed = Signal()
    message = Signal(str)  # for the status bar

    def __init__(self, controller: Controller, window: QWidget) -> None:
        super().__init__(window)
        self.controller = controller
        self.window = window  # the parent of dialogs and message boxes
        self.current: Preset | None = None
        self.baseline: Workspace = controller.workspace  # as last loaded or saved
        self.modified = False
        # Asked before edits would be lost (a test answers in its place).
        self.ask_unsaved: Callable[[QWidget, str, str], str] = ask_about_unsaved
        controller.workspace_changed.connect(self._follow_changes)

    @property
    def name(self) -> str:
        return self.current.name if self.current else UNSAVED_NAME

    def _set_current(self, preset: Preset | None, baseline: Workspace | None = None) -> None:
        """``preset`` shown, with ``baseline`` (else the controller's workspace) as its unchanged state."""
        self.current = preset
        self.baseline = baseline if baseline is not None else self.controller.workspace
        self.current_changed.emit(preset)
        self._follow_changes(self.controller.workspace)

    def _follow_changes(self, workspace: Workspace) -> None:
        # The tab shown is kept in a preset, but looking at another tab changes no scenario.
        modified = workspace.with_changes(view=self.baseline.view) != self.baseline
        if modified != self.modified:
            self.modified = modified
            self.modified_changed.emit(modified)

    # -- what is shown, for undo and redo ----------------------------------------------------

    def shown(self) -> Shown:
        return Shown(self.controller.workspace, self.current, self.baseline)

    def show_again(self, shown: Shown) -> None:
        """Put back what :meth:`shown` returned, on the tab shown now."""
        self.current, self.baseline = shown.preset, shown.baseline
        self.controller.set_workspace(shown.workspace.with_changes(view=self.controller.workspace.view))
        self._set_current(shown.preset, shown.baseline)

    # -- edits not saved -------------------------------------------------------------------

    def may_discard(self, action: str) -> bool:
        """Whether ``action`` may go ahead: no unsaved edits, or the user saved or discarded
        them when asked (False: cancelled, or the save failed)."""
        self.controller.throttle.flush()
        if not self.modified:
            return True
        answer = self.ask_unsaved(self.window, self.name, action)
        if answer == "save":
            self.save()
            return not self.modified
        return answer == "discard"

    def revert(self) -> None:
        """Back to the preset as it was last loaded or saved (its edits discarded)."""
        self.controller.set_workspace(self.baseline.with_changes(view=self.controller.workspace.view))

    # -- open ------------------------------------------------------------------------------

    def ask_new(self) -> None:
        """File → New: a new scenario, after asking about unsaved edits."""
        if self.may_discard("starting a new scenario"):
            self.new()

    def ask_open(self, path: str | Path, bundled: bool = False) -> bool:
        """A preset chosen in the dock or the recent list: opened after asking about unsaved edits."""
        if not self.may_discard(f"opening {Path(str(path)).stem}"):
            return False
        return self.open_file(path, bundled)

    def new(self) -> None:
        """An unsaved scenario: the one the app opens on without a session."""
        self.replacing.emit("a new scenario was started")
        self._show(None, default_workspace(self.controller.engine.catalog))

    def adopt(self, workspace: Workspace, origin: str) -> None:
        """Show ``workspace``, which comes from ``origin`` (e.g. "a Model vs paper row"), not
        from a preset file: the preset shown before is not its source any more."""
        self.replacing.emit(f"{origin} was loaded")
        self._show(None, workspace)

    def open_dialog(self) -> None:
        if not self.may_discard("opening another preset"):
            return
        folder = user_presets_dir()
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open a preset", str(folder if folder.is_dir() else Path.home()),
            "Presets (*.json);;All files (*)",
        )
        if path:
            self.open_file(path)

    def open_file(self, path: str | Path, bundled: bool = False) -> bool:
        """Load a preset and apply every field at once; on a bad file say why and change nothing."""
        try:
            preset = load_preset(Path(path), self.controller.engine.catalog, bundled=bundled)
        except AccelscopeError as error:
            QMessageBox.warning(self.window, "Cannot open the preset", str(error))
            return False
        self.apply(preset)
        if not bundled:
            self._remember_recent(Path(path))
        return True

    def apply(self, preset: Preset) -> None:
        self.replacing.emit(f"the preset {preset.name} was loaded")
        if preset.model is not None:
            self.controller.use_models(preset.model)
        self._show(preset, preset.workspace)
        self.applied.emit(preset)

    def _show(self, preset: Preset | None, workspace: Workspace) -> None:
        self.current, self.baseline = preset, workspace  # before the change, so it is not marked as one
        self.controller.set_workspace(workspace)
        self._set_current(preset)

    def restore(self, path: str, bundled: bool = False) -> None:
        """Show the last session's preset as the current one (the session's workspace is already
        shown; where it differs from the file's, it is marked as changed). A bundled preset is
        found by its name among those installed now (the install may have moved)."""
        try:
            if bundled:
                stem = Path(path).stem
                source = next((entry for entry in bundled_preset_files() if entry.name == f"{stem}.json"), None)
                if source is None:
                    raise AccelscopeError(f"no bundled preset {stem}")
                preset = load_preset(source, self.controller.engine.catalog, bundled=True)
            else:
                preset = load_preset(Path(path), self.controller.engine.catalog)
        except AccelscopeError:
            self._set_current(None)
            return
        self._set_current(preset, preset.workspace)

    # -- save ------------------------------------------------------------------------------

    def preset_of_workspace(self, name: str | None = None, description: str | None = None) -> Preset:
        """The current workspace as a preset (embedding the model when it is not bundled)."""
        current = self.current
        workspace = self.controller.workspace
        return new_preset(
            name or self.name,
            description if description is not None else (current.description if current else ""),
            workspace,
            self.controller.engine.model(workspace.scenario.model),
        )

    def save(self) -> None:
        """Write the user preset the scenario came from; any other scenario is saved as a new one."""
        current = self.current
        if current is None or current.bundled or current.source is None:
            self.save_as_dialog()
            return
        self.save_to(current.source, current.name, current.description)

    def save_as_dialog(self) -> None:
        current = self.current
        dialog = SaveDialog(self.window, current.name if current and not current.bundled else "",
                            current.description if current else "")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        name, description = dialog.values()
        path = user_preset_path(name)
        if path.exists() and QMessageBox.question(
            self.window, "Replace the preset?", f"A preset file {path.name} exists. Replace it?"
        ) != QMessageBox.StandardButton.Yes:
            return
        self.save_to(path, name, description)

    def save_to(self, path: Path, name: str, description: str) -> bool:
        self.controller.throttle.flush()
        preset = self.preset_of_workspace(name, description)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_preset(preset, path)
        except (OSError, AccelscopeError, ValueError) as error:
            QMessageBox.warning(self.window, "Cannot save the preset", f"{path}: {error}")
            return False
        self.current = load_preset(path, self.controller.engine.catalog)
        self._remember_recent(path)
        self.saved.emit(self.current)
        self._set_current(self.current)  # what is shown is what was saved
        self.message.emit(f"Saved {path}")
        return True

    # -- recent presets (a small JSON list in the user data folder) ---------------------------

    def recent(self) -> list[Path]:
        try:
            recent = user_data_dir() / "recent.json"
            if not recent.is_file():  # missing, or a pipe or device that would block the start
                return []
            paths = json.loads(recent.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(paths, list):
            return []
        return [Path(p) for p in paths if isinstance(p, str) and Path(p).is_file()][:RECENT_LIMIT]

    def _remember_recent(self, path: Path) -> None:
        recent = [path.resolve()] + [p for p in self.recent() if p.resolve() != path.resolve()]
        paths = [str(p) for p in recent[:RECENT_LIMIT]]
        try:
            write_atomically(user_data_dir() / "recent.json", lambda stream: json.dump(paths, stream))
        except OSError:
            return  # the list is a convenience; never fail a load or save over it
        self.recent_changed.emit()
