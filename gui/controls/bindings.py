"""Connectors between widgets and one field of the workspace.

Each binding owns its widgets' mapping (a log-scaled slider's ticks ↔ the value), emits
``changed`` only for changes the user made, and takes values from the state with its
widgets' signals blocked, so no echo loop can form. :func:`bind` joins a binding to a
scenario field of the controller both ways, as echo's ``connect_value`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from PySide6.QtCore import QObject, QSignalBlocker, Signal
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QSlider, QSpinBox, QTabWidget

from accelscope.engine.core.workspace import Workspace


class LogScale:
    """Maps slider ticks 0 … ``ticks`` onto integers ``low`` … ``high`` on a log scale."""

    def __init__(self, low: int, high: int, ticks: int = 1000) -> None:
        if not 0 < low < high:
            raise ValueError("a log scale needs 0 < low < high")
        self.low, self.high, self.ticks = low, high, ticks
        self._span = math.log(high / low)

    def value(self, tick: int) -> int:
        return int(round(self.low * math.exp(self._span * tick / self.ticks)))

    def tick(self, value: float) -> int:
        """The tick nearest ``value``; values outside the range pin to the ends."""
        clamped = min(max(value, self.low), self.high)
        return int(round(self.ticks * math.log(clamped / self.low) / self._span))


class LinearScale:
    def __init__(self, low: float, high: float, ticks: int = 100) -> None:
        self.low, self.high, self.ticks = low, high, ticks

    def value(self, tick: int) -> float:
        return self.low + (self.high - self.low) * tick / self.ticks

    def tick(self, value: float) -> int:
        clamped = min(max(value, self.low), self.high)
        return int(round(self.ticks * (clamped - self.low) / (self.high - self.low)))


class SliderSpinBinding(QObject):
    """A slider and a spin box showing one number. The slider covers ``scale``'s range; the
    spin box may accept a wider one (typed values beyond the slider pin it to its end).

    ``percent`` shows a fraction 0…1 as 0…100 in the spin box."""

    changed = Signal(object)

    def __init__(self, slider: QSlider, spin: QAbstractSpinBox, scale: LogScale | LinearScale,
                 *, percent: bool = False, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.slider, self.spin, self.scale, self.percent = slider, spin, scale, percent
        slider.setRange(0, scale.ticks)
        slider.valueChanged.connect(self._from_slider)
        spin.valueChanged.connect(self._from_spin)
        self._value: float = scale.value(0)
        self._shown = False  # whether set_value has run: until then the widgets show their defaults

    @property
    def value(self) -> float:
        return self._value

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting ``changed``. The value the binding already holds
        changes nothing: echoed back while the user drags, it must not move the slider to the
        value's own tick (several ticks of a log slider give the same whole number)."""
        if self._shown and value == self._value:
            return
        self._shown = True
        self._value = value
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            self.slider.setValue(self.scale.tick(value))
            self.spin.setValue(value * 100.0 if self.percent else value)

    def _from_slider(self, tick: int) -> None:
        value = self.scale.value(tick)
        if value == self._value:
            return
        self._value = value
        with QSignalBlocker(self.spin):
            self.spin.setValue(value * 100.0 if self.percent else value)
        self.changed.emit(value)

    def _from_spin(self, shown: float) -> None:
        value = shown / 100.0 if self.percent else shown
        if value == self._value:
            return
        self._value = value
        with QSignalBlocker(self.slider):
            self.slider.setValue(self.scale.tick(value))
        self.changed.emit(value)


class SpinBinding(QObject):
    changed = Signal(object)

    def __init__(self, spin: QSpinBox, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.spin = spin
        spin.valueChanged.connect(self.changed.emit)

    def set_value(self, value: int) -> None:
        if self.spin.value() == value:
            return  # setting it again would rewrite the text being typed
        with QSignalBlocker(self.spin):
            self.spin.setValue(value)


class ComboBinding(QObject):
    """A combo box whose items carry values (``itemData``); the state stores values, never
    indices. ``missing(value)``, if given, names an item to add for a value not listed (a
    model imported since the list was made); otherwise such a value is not shown."""

    changed = Signal(object)

    def __init__(self, combo: QComboBox, parent: QObject | None = None, *,
                 missing: Callable[[Any], str] | None = None) -> None:
        super().__init__(parent)
        self.combo = combo
        self.missing = missing
        combo.currentIndexChanged.connect(self._from_combo)

    def _from_combo(self, index: int) -> None:
        if index >= 0:
            self.changed.emit(self.combo.itemData(index))

    def set_value(self, value: object) -> None:
        index = self.combo.findData(value)
        if index < 0 and self.missing is not None:
            with QSignalBlocker(self.combo):
                self.combo.addItem(self.missing(value), value)
            index = self.combo.count() - 1
        if index >= 0 and index != self.combo.currentIndex():
            with QSignalBlocker(self.combo):
                self.combo.setCurrentIndex(index)


class WorkspaceSource(Protocol):
    """What the connectors (:func:`bind`, :func:`bind_view`, ControlsPanel.bind_to) need of the
    app's controller, gui.state.controller.Controller."""

    workspace_changed: Any  # a Qt signal emitting each new Workspace
    engine: Any  # an Engine that knows every model a workspace names

    @property
    def workspace(self) -> Workspace: ...

    def set_field(self, field: str, value: object) -> None: ...

    def set_workspace(self, workspace: Workspace) -> None: ...

    def set_shown(self, shown: tuple[str, ...]) -> None: ...


Binding = TypeVar("Binding", SliderSpinBinding, SpinBinding, ComboBinding)


def bind(controller: WorkspaceSource, field: str, binding: Binding,
         convert: Callable[[Any], object] = lambda value: value) -> Binding:
    """Join ``binding`` to the scenario field ``field``, both ways.

    What the user sets in the binding's widgets goes to the controller (``convert``ed, e.g. to
    int), and every workspace the controller emits, whoever made it (a control, a preset, a
    model import, the validation window), is shown in the widgets. No echo loop forms: a
    binding emits only for the user's changes, and shows values with its widgets' signals
    blocked. A preset is one new workspace, so every bound control follows it at once and the
    controller recomputes once."""
    binding.changed.connect(lambda value: controller.set_field(field, convert(value)))

    def show(workspace: Workspace) -> None:
        binding.set_value(getattr(workspace.scenario, field))

    controller.workspace_changed.connect(show)
    show(controller.workspace)
    return binding


def bind_view(controller: WorkspaceSource, tabs: QTabWidget, views: tuple[str, ...],
              shown: Callable[[str], object]) -> None:
    """Join a tab widget (one tab per view id in ``views``) to the workspace's view, both ways.

    A tab the user picks becomes the workspace's view; a view set elsewhere (a preset, the
    validation window) shows its tab. ``shown(view)`` draws a tab as it is shown: at once for
    the user's pick and for a change of the view alone (the last frame is still current); for
    any other change, the frame the change brings draws it."""

    def picked(index: int) -> None:
        controller.set_workspace(controller.workspace.with_changes(view=views[index]))
        shown(views[index])

    followed = [controller.workspace]  # the workspace the tabs last followed

    def follow(workspace: Workspace) -> None:
        previous, followed[0] = followed[0], workspace
        index = views.index(workspace.view)
        if index == tabs.currentIndex():
            return
        with QSignalBlocker(tabs):
            tabs.setCurrentIndex(index)
        if workspace.with_changes(view=previous.view) == previous:
            shown(workspace.view)

    tabs.currentChanged.connect(picked)
    controller.workspace_changed.connect(follow)
