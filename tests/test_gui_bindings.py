"""bind(): one call joins a control to a scenario field both ways. The user's change reaches
the controller once, converted; every workspace the controller emits (a preset, an import, the
validation window) shows in the control; and neither direction echoes into the other."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox, QSlider, QSpinBox

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.gui.controls.bindings import ComboBinding, LogScale, SliderSpinBinding, SpinBinding, bind


class FakeController(QObject):
    """The controller's side of bind(): a workspace, its change signal, and set_field."""

    workspace_changed = Signal(object)

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.fields_set: list[tuple[str, object]] = []

    def set_field(self, field: str, value: object) -> None:
        self.fields_set.append((field, value))
        self.workspace = self.workspace.with_scenario(**{field: value})
        self.workspace_changed.emit(self.workspace)

    def show(self, **changes: object) -> None:
        """A workspace made elsewhere (a preset): every field at once, one signal."""
        self.workspace = self.workspace.with_scenario(**changes)
        self.workspace_changed.emit(self.workspace)


@pytest.fixture
def controller():
    return FakeController(Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=8, tp=2), shown=("h100-sxm",)))


def slider_binding(qtbot) -> SliderSpinBinding:
    slider, spin = QSlider(), QSpinBox()
    spin.setRange(1, 1_000_000)
    qtbot.addWidget(slider)
    qtbot.addWidget(spin)
    return SliderSpinBinding(slider, spin, LogScale(1, 1024))


def test_bind_shows_the_current_value_at_once(qtbot, controller):
    binding = bind(controller, "batch", slider_binding(qtbot), int)
    assert binding.spin.value() == 8 and binding.slider.value() == binding.scale.tick(8)
    assert controller.fields_set == []  # showing is not a change


def test_the_users_change_reaches_the_controller_once_converted(qtbot, controller):
    binding = bind(controller, "batch", slider_binding(qtbot), int)
    binding.spin.setValue(48)
    assert controller.fields_set == [("batch", 48)] and isinstance(controller.fields_set[0][1], int)
    assert controller.workspace.scenario.batch == 48
    assert binding.slider.value() == binding.scale.tick(48)


def test_the_controllers_workspace_shows_without_echoing_back(qtbot, controller):
    batch = bind(controller, "batch", slider_binding(qtbot), int)
    tp_spin = QSpinBox()
    tp_spin.setRange(1, 64)
    qtbot.addWidget(tp_spin)
    tp = bind(controller, "tp", SpinBinding(tp_spin), int)
    combo = QComboBox()
    qtbot.addWidget(combo)
    for precision in ("bf16", "fp8"):
        combo.addItem(precision.upper(), precision)
    kv = bind(controller, "kv_precision", ComboBinding(combo))
    controller.show(batch=512, tp=8, kv_precision="fp8")
    assert (batch.spin.value(), tp.spin.value(), kv.combo.currentData()) == (512, 8, "fp8")
    assert batch.slider.value() == batch.scale.tick(512)
    assert controller.fields_set == []  # nothing came back from the widgets


def test_a_dragged_slider_stays_under_the_hand(qtbot, controller):
    """Several ticks of a log slider give one whole number: the echo of that number must not
    move the slider to the number's own tick."""
    binding = bind(controller, "batch", slider_binding(qtbot), int)
    tick = next(t for t in range(1, binding.scale.ticks) if binding.scale.tick(binding.scale.value(t)) != t)
    binding.slider.setValue(tick)
    assert binding.slider.value() == tick
    assert controller.workspace.scenario.batch == binding.scale.value(tick)


def test_a_combo_adds_a_value_it_lacks_when_the_workspace_shows_it(qtbot, controller):
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItem("Llama 3.1 8B", "llama-3.1-8b")
    binding = bind(controller, "model", ComboBinding(combo, missing=lambda model_id: f"imported {model_id}"))
    controller.show(model="my-model")
    assert combo.currentData() == "my-model" and combo.currentText() == "imported my-model"
    assert controller.fields_set == []
    combo.setCurrentIndex(0)
    assert controller.fields_set == [("model", "llama-3.1-8b")]
    assert binding.combo.count() == 2


def test_the_windows_controls_follow_any_new_workspace(window):
    """No one pushes values into the controls: a workspace set on the controller shows in them."""
    workspace = window.controller.workspace
    new = workspace.with_scenario(model="qwen3-32b", batch=48, tp=4, kv_precision="fp8", offload=0.25).with_changes(
        shown=("h100-sxm", "mi300x"), view="latency")
    frames: list = []
    window.controller.frame_ready.connect(frames.append)
    window.controller.set_workspace(new)
    window.controller.throttle.flush()
    controls = window.controls
    assert controls.model_combo.currentData() == "qwen3-32b"
    assert controls.batch_spin.value() == 48 and controls.parallel_spins["tp"].value() == 4
    assert controls.precision_combos["kv_precision"].currentData() == "fp8"
    assert controls.offload_spin.value() == 25
    assert set(controls.shown()) == {"h100-sxm", "mi300x"}
    assert window.tabs.currentWidget() is window.panels["latency"]
    assert len(frames) == 1 and window.controller.workspace == new  # one recompute, nothing echoed


def test_a_control_change_makes_one_workspace_and_one_frame(window):
    changes: list = []
    frames: list = []
    window.controller.workspace_changed.connect(changes.append)
    window.controller.frame_ready.connect(frames.append)
    window.controls.parallel_spins["tp"].setValue(2)
    window.controller.throttle.flush()
    assert [w.scenario.tp for w in changes] == [2] and len(frames) == 1
