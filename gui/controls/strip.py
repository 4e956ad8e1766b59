"""The presentation strip: the few controls a lecture needs, in one row above the plots.

In presentation mode the Scenario dock makes way for the plots; the strip keeps the model, the
batch, the input length, the weights' precision and the accelerators shown at hand. Its
controls are bound to the controller as the dock's are (:func:`bindings.bind`), so both always
show the same workspace; the full controls come back with one key (the Scenario dock's).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtGui import QAction, QIcon, QKeySequence, QMouseEvent, QPixmap
from PySide6.QtWidgets import QComboBox, QLabel, QMenu, QSpinBox, QToolBar, QToolButton, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.accelerator import ARCHITECTURE_CLASSES
from accelscope.engine.core.precision import PRECISION_LABELS, PRECISIONS
from accelscope.engine.core.workspace import Workspace

from ..look.palette import CLASS_LABELS, colour_for
from ..look.style import plot_colour
from .bindings import ComboBinding, SpinBinding, WorkspaceSource, bind
from .scenario_panel import BATCH_TYPED_MAX, INPUT_TYPED_MAX, TOOLTIPS

SWATCH_PX = 14
MODEL_NAME_CHARACTERS = 16  # the model box's width, in characters (longer names are elided)


class _StayOpenMenu(QMenu):
    """A menu of check boxes that stays open while they are ticked (several accelerators are
    usually shown or hidden at once); Esc or a click outside closes it."""

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        action = self.activeAction()
        if action is not None and action.isCheckable() and action.isEnabled():
            action.trigger()
            return
        super().mouseReleaseEvent(event)


class PresentationStrip(QToolBar):
    """A tool bar of the lecture's controls (hidden outside presentation mode)."""

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__("Presentation controls", parent)
        self.setObjectName("presentation-strip")
        self.setMovable(False)
        self.setFloatable(False)
        # Not in the tool bar's context menu or the View menu: presentation mode shows and hides it.
        self.toggleViewAction().setVisible(False)
        self.catalog = catalog

        self.model_combo = QComboBox()
        self.model_combo.setAccessibleName("Model")
        self.model_combo.setToolTip(TOOLTIPS["model"])
        # As wide as a usual model name, not the longest: the strip must fit a 1024 px screen.
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setMinimumContentsLength(MODEL_NAME_CHARACTERS)
        for model in catalog.models.values():
            self.model_combo.addItem(model.name, model.id)
        self.batch_spin = self._spin("Batch", BATCH_TYPED_MAX, TOOLTIPS["batch"])
        self.input_spin = self._spin("Input tokens", INPUT_TYPED_MAX, TOOLTIPS["input_len"])
        self.weight_combo = QComboBox()
        self.weight_combo.setAccessibleName("Weights precision")
        self.weight_combo.setToolTip(TOOLTIPS["weight_precision"])
        for precision in PRECISIONS:
            self.weight_combo.addItem(PRECISION_LABELS[precision], precision)

        self.accelerator_menu = _StayOpenMenu(self)
        self.accelerator_button = QToolButton()
        self.accelerator_button.setText("Accelerators")
        self.accelerator_button.setToolTip(TOOLTIPS["accelerators"])
        self.accelerator_button.setAccessibleName("Accelerators shown")
        self.accelerator_button.setMenu(self.accelerator_menu)
        self.accelerator_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._accelerator_actions: dict[str, QAction] = {}
        self._shown_followed: tuple[str, ...] | None = None  # the workspace's shown accelerators, last followed
        for architecture_class in ARCHITECTURE_CLASSES:
            members = [a for a in catalog.accelerators.values() if a.architecture_class == architecture_class]
            if not members:
                continue
            self.accelerator_menu.addSection(CLASS_LABELS[architecture_class])
            for accelerator in members:
                action = self.accelerator_menu.addAction(accelerator.name)
                action.setCheckable(True)
                action.setData(accelerator.id)
                self._accelerator_actions[accelerator.id] = action
        self.restyle_swatches()

        for label, widget in (("Model", self.model_combo), ("Batch", self.batch_spin),
                              ("Input", self.input_spin), ("Weights", self.weight_combo)):
            caption = QLabel(f" {label} ")
            caption.setBuddy(widget)
            self.addWidget(caption)
            self.addWidget(widget)
            self.addSeparator()
        self.addWidget(self.accelerator_button)

    def _spin(self, name: str, maximum: int, tooltip: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(1, maximum)
        spin.setGroupSeparatorShown(True)
        spin.setAccessibleName(name)
        spin.setToolTip(tooltip)
        return spin

    def add_full_controls(self, action: QAction) -> None:
        """A button at the strip's end for ``action`` (the checkable action that shows and hides
        every control), named for what it does here."""
        self.addSeparator()
        self.full_controls_button = QToolButton()
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        self.full_controls_button.setText(f"All controls ({keys})" if keys else "All controls")
        self.full_controls_button.setToolTip("Show or hide every control of the scenario beside the plot.")
        self.full_controls_button.setCheckable(True)
        self.full_controls_button.setChecked(action.isChecked())
        self.full_controls_button.clicked.connect(lambda _checked: action.trigger())
        action.toggled.connect(self.full_controls_button.setChecked)
        self.addWidget(self.full_controls_button)

    def restyle_swatches(self) -> None:
        """The accelerators' colour swatches in the current plot theme."""
        for accelerator_id, action in self._accelerator_actions.items():
            pixmap = QPixmap(SWATCH_PX, SWATCH_PX)
            pixmap.fill(plot_colour(colour_for(accelerator_id)))
            action.setIcon(QIcon(pixmap))

    def bind_to(self, controller: WorkspaceSource) -> None:
        """Show ``controller``'s workspace, now and whenever it changes, and send the user's
        changes to it (as the Scenario dock's controls do)."""
        bind(controller, "model", ComboBinding(
            self.model_combo, parent=self, missing=lambda model_id: controller.engine.model(model_id).name))
        bind(controller, "batch", SpinBinding(self.batch_spin, parent=self), int)
        bind(controller, "input_len", SpinBinding(self.input_spin, parent=self), int)
        bind(controller, "weight_precision", ComboBinding(self.weight_combo, parent=self), str)
        self.accelerator_menu.triggered.connect(lambda _action: controller.set_shown(self.shown()))
        controller.workspace_changed.connect(self._follow)
        self._follow(controller.workspace)

    def shown(self) -> tuple[str, ...]:
        """The ticked accelerators, in catalog order."""
        return tuple(a for a in self.catalog.accelerators
                     if a in self._accelerator_actions and self._accelerator_actions[a].isChecked())

    def _follow(self, workspace: Workspace) -> None:
        if workspace.shown == self._shown_followed:
            return  # most changes leave the accelerators alone
        self._shown_followed = workspace.shown
        shown = set(workspace.shown)
        with QSignalBlocker(self.accelerator_menu):
            for accelerator_id, action in self._accelerator_actions.items():
                action.setChecked(accelerator_id in shown)
        self.accelerator_button.setText(f"Accelerators ({len(shown)})")
