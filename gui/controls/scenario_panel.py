"""The controls panel: model, accelerators shown, workload, precisions and parallel layout.

The panel mirrors a :class:`Workspace`. :meth:`bind_to` joins every control to the app's
controller both ways (see :func:`bindings.bind`): the user's changes set the controller's
workspace, and every workspace the controller emits is shown, without emitting anything.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.groups import GROUP_LABELS, grouped
from accelscope.engine.core.fields import SCENARIO_FIELDS, fields_of
from accelscope.engine.core.model import ModelArch
from accelscope.engine.core.precision import PRECISION_LABELS, PRECISIONS
from accelscope.engine.core.workspace import Workspace

from ..look.palette import colour_for
from ..look.style import plot_colour
from .bindings import ComboBinding, LinearScale, LogScale, SliderSpinBinding, SpinBinding, WorkspaceSource, bind
from .cost_group import CostGroup
from .labels import BuddyLabel

# Slider ranges cover what is usually explored; typed entry accepts more (the slider then pins to its end).
BATCH_SLIDER = (1, 1024)
BATCH_TYPED_MAX = 1_000_000
INPUT_SLIDER = (128, 1_048_576)
INPUT_TYPED_MAX = 10_000_000
OUTPUT_SLIDER = (1, 32_768)
OUTPUT_TYPED_MAX = 1_000_000
PARALLEL_MAX = 4096

# Each log slider's range, for the workload's counts (a new count field needs one: the panel
# raises KeyError otherwise, which the GUI tests would show).
SLIDER_RANGES: dict[str, tuple[int, int]] = {"batch": BATCH_SLIDER, "input_len": INPUT_SLIDER,
                                             "output_len": OUTPUT_SLIDER}
TYPED_MAX: dict[str, int] = {"batch": BATCH_TYPED_MAX, "input_len": INPUT_TYPED_MAX, "output_len": OUTPUT_TYPED_MAX}

TOOLTIPS = {
    **{f.name: f.tooltip for f in SCENARIO_FIELDS if f.tooltip},
    "accelerators": "Accelerators shown on every plot, by group. Each has a fixed "
    "colour; click a bar or point in a plot to select one for the explain panel.",
}


# Item data of the accelerator list: a group's id, and the text the filter looks in (name and vendor).
GROUP_ROLE = Qt.ItemDataRole.UserRole + 1
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2


def _swatch(colour: str) -> QIcon:
    """An accelerator's colour as the plots draw it (in the current plot theme)."""
    pixmap = QPixmap(14, 14)
    pixmap.fill(plot_colour(colour))
    return QIcon(pixmap)


# Narrow enough that the controls fit beside the plots on a 1024 px screen; the typed entry
# beside each slider keeps every value at hand.
LOG_SLIDER_MIN_WIDTH_PX = 60


def _log_slider() -> QSlider:
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setMinimumWidth(LOG_SLIDER_MIN_WIDTH_PX)
    return slider


class ControlsPanel(QWidget):
    shown_changed = Signal(tuple)  # accelerator ids in catalog order
    import_requested = Signal()

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        layout = QVBoxLayout(self)

        # -- model
        # A group box title's underlined letter, with Alt, focuses the box's first control.
        model_box = QGroupBox("&Model")
        self._shortcuts: list[tuple[str, str]] = [("Alt+M", "Focus: Model")]
        model_layout = QVBoxLayout(model_box)
        self.model_combo = QComboBox()
        self.model_combo.setToolTip(TOOLTIPS["model"])
        self.model_combo.setAccessibleName("Model")
        for model in catalog.models.values():
            self.model_combo.addItem(model.name, model.id)
        self.import_button = QPushButton("Import config.json…")
        self.import_button.setToolTip("Add a model from a Hugging Face config.json file on disk.")
        self.import_button.clicked.connect(self.import_requested.emit)
        model_layout.addWidget(self.model_combo)
        model_layout.addWidget(self.import_button)
        layout.addWidget(model_box)

        # -- workload
        workload_box = QGroupBox("Workload")
        form = QFormLayout(workload_box)
        self.bindings: dict[str, object] = {}
        self._convert: dict[str, type] = {}  # what a field's value is made into for the scenario
        for field in fields_of("workload"):
            if field.kind != "count":
                continue
            slider, spin = _log_slider(), QSpinBox()
            spin.setRange(field.low, TYPED_MAX[field.name])
            spin.setGroupSeparatorShown(True)
            spin.setAccessibleName(field.control_name)
            slider.setAccessibleName(f"{field.control_name} slider")
            self.bindings[field.name] = SliderSpinBinding(slider, spin, LogScale(*SLIDER_RANGES[field.name]), parent=self)
            self._convert[field.name] = int
            for widget in (slider, spin):
                widget.setToolTip(TOOLTIPS[field.name])
            form.addRow(self._label(field.label, spin), _row(slider, spin))
            setattr(self, f"{field.name.removesuffix('_len')}_slider", slider)
            setattr(self, f"{field.name.removesuffix('_len')}_spin", spin)
        layout.addWidget(workload_box)

        # -- precision
        precision_box = QGroupBox("Precision")
        form = QFormLayout(precision_box)
        self.precision_combos: dict[str, QComboBox] = {}
        for spec in (f for f in SCENARIO_FIELDS if f.kind == "precision"):
            field, label = spec.name, spec.label
            combo = QComboBox()
            for precision in PRECISIONS:
                combo.addItem(PRECISION_LABELS[precision], precision)
            combo.setToolTip(TOOLTIPS[field])
            combo.setAccessibleName(f"{label.replace('&', '')} precision")
            self.bindings[field] = ComboBinding(combo, parent=self)
            self._convert[field] = str
            self.precision_combos[field] = combo
            form.addRow(self._label(label, combo), combo)
        layout.addWidget(precision_box)

        # -- parallel layout
        layout_box = QGroupBox("Parallel layout")
        form = QFormLayout(layout_box)
        self.parallel_spins: dict[str, QSpinBox] = {}
        for spec in (f for f in fields_of("layout") if f.kind == "count"):
            field, label = spec.name, spec.label
            spin = QSpinBox()
            spin.setRange(1, PARALLEL_MAX)
            spin.setToolTip(TOOLTIPS[field])
            spin.setAccessibleName(label.replace("&", ""))
            self.bindings[field] = SpinBinding(spin, parent=self)
            self._convert[field] = int
            self.parallel_spins[field] = spin
            form.addRow(self._label(label, spin), spin)
        for spec in (f for f in SCENARIO_FIELDS if f.kind == "fraction"):
            field, label, accessible = spec.name, spec.label, spec.control_name
            slider = QSlider(Qt.Orientation.Horizontal)
            spin = QDoubleSpinBox()
            spin.setRange(0.0, 100.0)
            spin.setDecimals(0)
            spin.setSuffix(" %")
            spin.setAccessibleName(accessible)
            self.bindings[field] = SliderSpinBinding(slider, spin, LinearScale(0.0, 1.0), percent=True, parent=self)
            self._convert[field] = float
            for widget in (slider, spin):
                widget.setToolTip(TOOLTIPS[field])
            form.addRow(self._label(label, spin), _row(slider, spin))
            setattr(self, f"{field}_slider", slider)
            setattr(self, f"{field}_spin", spin)
        layout.addWidget(layout_box)

        # -- accelerators
        accelerator_box = QGroupBox("Accelerators &shown")
        self._shortcuts.append(("Alt+S", "Focus: Accelerators shown (type to filter; arrows move, Space ticks one)"))
        accelerator_layout = QVBoxLayout(accelerator_box)
        self.accelerator_filter = QLineEdit()
        self.accelerator_filter.setPlaceholderText("Filter by name or vendor")
        self.accelerator_filter.setClearButtonEnabled(True)
        self.accelerator_filter.setAccessibleName("Filter accelerators")
        self.accelerator_filter.setToolTip("Show only the accelerators whose name or vendor holds every word typed; "
                                           "what is ticked stays ticked.")
        self.accelerator_filter.textChanged.connect(self.filter_accelerators)
        self.accelerator_tree = QTreeWidget()
        self.accelerator_tree.setHeaderHidden(True)
        self.accelerator_tree.setToolTip(TOOLTIPS["accelerators"])
        self.accelerator_tree.setAccessibleName("Accelerators shown")
        self._accelerator_items: dict[str, QTreeWidgetItem] = {}
        self._group_items: dict[str, QTreeWidgetItem] = {}
        for group_id, members in grouped(catalog.accelerators.values()):
            group = QTreeWidgetItem(self.accelerator_tree, [GROUP_LABELS[group_id]])
            group.setData(0, GROUP_ROLE, group_id)
            group.setFlags(group.flags() | Qt.ItemFlag.ItemIsAutoTristate | Qt.ItemFlag.ItemIsUserCheckable)
            for accelerator in members:
                item = QTreeWidgetItem(group, [accelerator.name])
                item.setData(0, Qt.ItemDataRole.UserRole, accelerator.id)
                item.setData(0, FILTER_ROLE, f"{accelerator.name} {accelerator.vendor}".casefold())
                item.setIcon(0, _swatch(colour_for(accelerator.id)))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(0, Qt.CheckState.Unchecked)
                item.setToolTip(0, f"{accelerator.name} ({accelerator.id}), {accelerator.vendor}")
                self._accelerator_items[accelerator.id] = item
            self._group_items[group_id] = group
        self.accelerator_tree.itemChanged.connect(self._accelerators_changed)
        accelerator_layout.addWidget(self.accelerator_filter)
        accelerator_layout.addWidget(self.accelerator_tree)
        layout.addWidget(accelerator_box, stretch=1)

        # -- cost: the selected accelerator's prices and the site's values
        self.cost_group = CostGroup(catalog)
        layout.addWidget(self.cost_group)
        self._model_shown: str | None = None  # the model whose controls set_model_info last set up
        self._shown_followed: tuple[str, ...] | None = None  # the workspace's shown accelerators, last followed

    def restyle_swatches(self) -> None:
        """Paint the accelerators' colour swatches again, in the current plot theme (a new icon
        is an item change to the tree, not a change of what is shown)."""
        self.accelerator_tree.blockSignals(True)
        for accelerator_id, item in self._accelerator_items.items():
            item.setIcon(0, _swatch(colour_for(accelerator_id)))
        self.accelerator_tree.blockSignals(False)

    def _label(self, text: str, buddy: QWidget) -> QLabel:
        """A label whose underlined letter, with Alt, moves the keyboard focus to ``buddy``."""
        label = BuddyLabel(text, buddy)
        letter = text[text.index("&") + 1].upper()
        self._shortcuts.append((f"Alt+{letter}", f"Focus: {text.replace('&', '')}"))
        return label

    def keyboard_shortcuts(self) -> list[tuple[str, str]]:
        return list(self._shortcuts)

    def widget_for(self, control: str) -> QWidget | None:
        """The widget that takes the keyboard for a control a formula term links to (a scenario
        field, "model" or "accelerator"); None for a control the panel does not have."""
        if control == "model":
            return self.model_combo
        if control == "accelerator":
            return self.accelerator_tree
        binding = self.bindings.get(control)
        return getattr(binding, "spin", None) or getattr(binding, "combo", None)

    # -- the controller ⇄ the widgets -----------------------------------------------------

    def bind_to(self, controller: WorkspaceSource) -> None:
        """Show ``controller``'s workspace in every control, now and whenever it changes, and
        send the user's changes to it. A model the list lacks (imported, or a preset's own) is
        added when a workspace shows it."""
        self.model_binding = bind(controller, "model", ComboBinding(
            self.model_combo, parent=self, missing=lambda model_id: controller.engine.model(model_id).name))
        for field, binding in self.bindings.items():
            bind(controller, field, binding, self._convert[field])
        self.cost_group.bind_to(controller)
        self.shown_changed.connect(controller.set_shown)

        def follow(workspace: Workspace) -> None:
            if workspace.scenario.model != self._model_shown:
                self.set_model_info(controller.engine.model(workspace.scenario.model))
            self._show_accelerators(workspace.shown)

        controller.workspace_changed.connect(follow)
        follow(controller.workspace)

    def _show_accelerators(self, shown: tuple[str, ...]) -> None:
        # Most changes leave the shown accelerators alone: reading the tree back costs more than
        # the rest of following a workspace, so an unchanged tuple is not looked at again.
        if shown == self._shown_followed:
            return
        first = self._shown_followed is None
        self._shown_followed = shown
        if not first and set(shown) == set(self.shown()):
            return
        with QSignalBlocker(self.accelerator_tree):
            for accelerator_id, item in self._accelerator_items.items():
                state = Qt.CheckState.Checked if accelerator_id in shown else Qt.CheckState.Unchecked
                item.setCheckState(0, state)
        # A group opens when it holds a shown accelerator; the others start closed, so the list
        # of forty stays short. The user's own opening and closing is left alone after that.
        for group in self._group_items.values():
            holds_shown = any(group.child(i).data(0, Qt.ItemDataRole.UserRole) in shown
                              for i in range(group.childCount()))
            if holds_shown or first:
                group.setExpanded(holds_shown)

    def filter_accelerators(self, text: str) -> None:
        """Show only the accelerators whose name or vendor holds every word of ``text`` (any
        case), every group open; an empty text shows them all. What is ticked stays ticked."""
        words = text.casefold().split()
        with QSignalBlocker(self.accelerator_tree):
            for group in self._group_items.values():
                visible = 0
                for index in range(group.childCount()):
                    child = group.child(index)
                    matches = all(word in child.data(0, FILTER_ROLE) for word in words)
                    child.setHidden(not matches)
                    visible += matches
                group.setHidden(visible == 0)
                # While filtering, a group's box only reports: ticking it would tick hidden members too.
                flags = group.flags()
                if words:
                    group.setFlags(flags & ~Qt.ItemFlag.ItemIsUserCheckable)
                    group.setExpanded(True)
                else:
                    group.setFlags(flags | Qt.ItemFlag.ItemIsUserCheckable)

    def visible_accelerators(self) -> tuple[str, ...]:
        """The accelerators the filter leaves in the list, in list order."""
        return tuple(
            accelerator_id for accelerator_id, item in self._accelerator_items.items()
            if not item.isHidden() and not item.parent().isHidden()
        )

    def accelerator_groups(self) -> dict[str, tuple[str, ...]]:
        """The list's groups (their labels) and the accelerators in each, in list order."""
        return {
            group.text(0): tuple(group.child(i).data(0, Qt.ItemDataRole.UserRole) for i in range(group.childCount()))
            for group in self._group_items.values()
        }

    def set_model_info(self, model: ModelArch) -> None:
        """Enable the controls that make sense for ``model``; say why the others are off."""
        self._model_shown = model.id
        spin = self.parallel_spins["ep"]
        if model.moe is None:
            spin.setEnabled(False)
            spin.setToolTip(f"{TOOLTIPS['ep']}\n\nDisabled: {model.name} is a dense model; expert "
                            "parallelism needs a mixture-of-experts model.")
        else:
            spin.setEnabled(True)
            spin.setToolTip(f"{TOOLTIPS['ep']}\n\n{model.name}: {model.moe.n_routed_experts} routed experts, "
                            f"{model.moe.experts_per_token} per token.")

    # -- widgets → the controller --------------------------------------------------------

    def _accelerators_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if item.data(0, Qt.ItemDataRole.UserRole) is None and item.childCount() == 0:
            return
        self.shown_changed.emit(self.shown())

    def shown(self) -> tuple[str, ...]:
        return tuple(
            accelerator_id
            for accelerator_id in self.catalog.accelerators
            if accelerator_id in self._accelerator_items
            and self._accelerator_items[accelerator_id].checkState(0) == Qt.CheckState.Checked
        )

    def accelerator_item(self, accelerator_id: str) -> QTreeWidgetItem:
        return self._accelerator_items[accelerator_id]


class ControlsScroll(QScrollArea):
    """The controls in a vertical scroll area (the Scenario dock's widget), as wide as they need."""

    def __init__(self, controls: ControlsPanel) -> None:
        super().__init__()
        self.controls = controls
        self.setWidget(controls)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.fit_width()

    def fit_width(self) -> None:
        """Never narrower than every control and its typed entry need, beside a vertical scroll bar."""
        self.controls.adjustSize()
        self.setMinimumWidth(self.controls.minimumSizeHint().width() + self._scroll_bar_width())

    def comfortable_width(self) -> int:
        """The width at which the controls have the room they would like."""
        return self.controls.sizeHint().width() + self._scroll_bar_width()

    def _scroll_bar_width(self) -> int:
        return self.verticalScrollBar().sizeHint().width() + 4


def _row(*widgets: QWidget) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return row
