"""The main window: controls change the workspace and the plotted data, selection updates the
explain text, a bad config.json is refused with a message naming the file, and updates are
throttled so the last value always lands."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario

FIXTURES = Path(__file__).parent / "fixtures" / "hf"


def settle(window) -> None:
    """Run any throttled update now (what the timer would do a frame later)."""
    window.controller.throttle.flush()
    window.flush_explanation()


def plotted(window, view: str) -> dict:
    """What a panel draws once it is brought up to date (hidden tabs update when shown)."""
    return window.refresh_panel(view).plotted()


def decode_intensity(window, accelerator: str) -> float:
    plotted_now = plotted(window, "roofline")
    index = list(plotted_now["accelerators"]).index(accelerator)
    return float(plotted_now["decode_x"][index])


def test_opens_on_the_default_scenario(window):
    workspace = window.controller.workspace
    assert workspace.scenario == Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=1024, output_len=256)
    # A few of the forty (not every GPU): datacenter GPUs of both makers, a desk card, unified memory.
    chosen = {"a100-80gb", "h100-sxm", "b200", "mi300x", "rtx-4090", "dgx-spark", "m4-max"}
    shown = tuple(a for a in window.engine.catalog.accelerators if a in chosen)  # in catalog order
    assert workspace.shown == shown and len(shown) == len(chosen)
    assert window.controller.last_frame is not None
    assert list(plotted(window, "roofline")["accelerators"]) == list(shown)
    assert "engine" in window.timing_label.text() and "repaint" in window.timing_label.text()
    assert "Llama 3.1 8B" in window.summary_label.text()


def test_the_status_bar_keeps_its_place_while_the_timings_change(window):
    """The timings' text changes width with nearly every change; laid out to its text, it moved
    the scenario line beside it and the status bar was laid out and repainted each time."""
    timing, summary = window.timing_label, window.summary_label
    sizes = set()
    texts = set()
    for batch in (3, 47, 512, 9, 1000, 2, 128):
        window.controls.batch_spin.setValue(batch)
        settle(window)
        sizes.add((timing.size().toTuple(), summary.size().toTuple()))
        texts.add(timing.text())
    assert len(texts) > 1  # the case: the timings did change
    assert len(sizes) == 1
    assert timing.width() >= timing.fontMetrics().horizontalAdvance(timing.text())  # the text whole


def test_batch_spin_box_changes_scenario_and_plots(window):
    window.controls.batch_spin.setValue(64)
    settle(window)
    assert window.controller.workspace.scenario.batch == 64
    expected = window.engine.predict(Scenario("llama-3.1-8b", "mi300x", batch=64))
    assert decode_intensity(window, "mi300x") == pytest.approx(expected.decode.operational_intensity, rel=1e-9)
    assert window.controls.batch_slider.value() == window.controls.bindings["batch"].scale.tick(64)


def test_log_slider_maps_ticks_to_values(window):
    slider = window.controls.input_slider
    slider.setValue(slider.maximum())
    settle(window)
    assert window.controller.workspace.scenario.input_len == 1_048_576
    slider.setValue(0)
    settle(window)
    assert window.controller.workspace.scenario.input_len == 128
    assert window.controls.input_spin.value() == 128


def test_typed_values_beyond_the_slider_pin_it(window):
    window.controls.batch_spin.setValue(5000)
    settle(window)
    assert window.controller.workspace.scenario.batch == 5000
    assert window.controls.batch_slider.value() == window.controls.batch_slider.maximum()


@pytest.mark.parametrize(
    "field, value",
    [("weight_precision", "fp8"), ("activation_precision", "fp8"), ("kv_precision", "fp8")],
)
def test_precision_combos(window, field, value):
    combo = window.controls.precision_combos[field]
    combo.setCurrentIndex(combo.findData(value))
    settle(window)
    scenario = window.controller.workspace.scenario
    assert getattr(scenario, field) == value
    expected = window.engine.predict(scenario.with_changes(accelerator="h100-sxm"))
    assert decode_intensity(window, "h100-sxm") == pytest.approx(expected.decode.operational_intensity, rel=1e-9)


def test_parallel_layout_and_offload(window):
    window.controls.parallel_spins["tp"].setValue(4)
    window.controls.parallel_spins["dp"].setValue(2)
    window.controls.offload_spin.setValue(25)
    settle(window)
    scenario = window.controller.workspace.scenario
    assert (scenario.tp, scenario.dp, scenario.offload) == (4, 2, 0.25)
    memory = plotted(window, "memory")
    expected = window.engine.predict(scenario.with_changes(accelerator="h100-sxm"))
    assert expected.memory.weights_far_bytes > 0
    assert "h100-sxm" in list(memory["accelerators"])


def test_kv_offload_moves_kv_cache_to_the_far_tier(window):
    window.controls.kv_offload_spin.setValue(40)
    settle(window)
    scenario = window.controller.workspace.scenario
    assert scenario.kv_offload == 0.4
    expected = window.engine.predict(scenario.with_changes(accelerator="h100-sxm"))
    assert expected.memory.kv_cache_far_bytes == pytest.approx(0.4 * expected.memory.kv_cache_bytes, rel=1e-12)
    assert window.controller.last_frame.output("h100-sxm").memory.kv_cache_far_bytes == pytest.approx(expected.memory.kv_cache_far_bytes)
    assert "KV offload 40%" in window.summary_label.text()


def test_model_change_and_ep_enabled_only_for_moe(window):
    ep = window.controls.parallel_spins["ep"]
    assert not ep.isEnabled() and "dense" in ep.toolTip()
    combo = window.controls.model_combo
    combo.setCurrentIndex(combo.findData("mixtral-8x7b"))
    settle(window)
    assert window.controller.workspace.scenario.model == "mixtral-8x7b"
    assert ep.isEnabled() and "8 routed experts" in ep.toolTip()
    expected = window.engine.predict(Scenario("mixtral-8x7b", "b200"))
    assert decode_intensity(window, "b200") == pytest.approx(expected.decode.operational_intensity, rel=1e-9)


def test_a_model_with_its_own_weight_format_starts_in_it(window):
    """Choosing gpt-oss sets the weights to MXFP4 (its published format) and the weight combo
    shows it; the user may change it; going back to a model without a format of its own from
    the format it took returns to BF16."""
    combo, weights = window.controls.model_combo, window.controls.precision_combos["weight_precision"]
    combo.setCurrentIndex(combo.findData("gpt-oss-120b"))
    settle(window)
    assert window.controller.workspace.scenario.weight_precision == "mxfp4"
    assert weights.currentData() == "mxfp4" and weights.currentText() == "MXFP4"
    weights.setCurrentIndex(weights.findData("nvfp4"))
    settle(window)
    assert window.controller.workspace.scenario.weight_precision == "nvfp4"
    combo.setCurrentIndex(combo.findData("deepseek-v3"))
    settle(window)
    assert window.controller.workspace.scenario.weight_precision == "fp8"
    combo.setCurrentIndex(combo.findData("llama-3.1-8b"))
    settle(window)
    assert window.controller.workspace.scenario.weight_precision == "bf16"


def test_accelerator_checklist_changes_what_is_plotted(window):
    from PySide6.QtCore import Qt

    window.controls.accelerator_item("mi300x").setCheckState(0, Qt.CheckState.Unchecked)
    window.controls.accelerator_item("wse-3").setCheckState(0, Qt.CheckState.Checked)
    settle(window)
    shown = window.controller.workspace.shown
    assert "mi300x" not in shown and "wse-3" in shown
    for name in ("roofline", "memory", "latency", "energy"):
        drawn = list(plotted(window, name)["accelerators"])
        assert "wse-3" in drawn and "mi300x" not in drawn, name


def test_selecting_an_accelerator_updates_the_explain_text(window):
    settle(window)
    assert "H100" in window.explain_panel.text()
    window.panels["memory"].accelerator_selected.emit("mi300x")
    settle(window)
    assert window.controller.workspace.selected == "mi300x"
    assert "MI300X" in window.explain_panel.text()
    assert "memory-bound" in window.explain_panel.text()


def test_import_config_json(window):
    assert window.models.import_file(str(FIXTURES / "qwen3-8b" / "config.json"))
    settle(window)
    scenario = window.controller.workspace.scenario
    assert window.controls.model_combo.currentData() == scenario.model
    assert scenario.model in window.engine.model_index


def test_bad_config_is_refused_with_the_file_named(window, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    messages = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: messages.append(text))
    broken = tmp_path / "broken-config.json"
    broken.write_text('{"architectures": ["LlamaForCausalLM"], "hidden_size": "wide"}')
    before = window.controller.workspace
    assert not window.models.import_file(str(broken))
    assert len(messages) == 1 and "broken-config.json" in messages[0]
    assert window.controller.workspace == before


def test_updates_are_throttled_and_the_last_value_lands(window, qtbot):
    calls = []
    window.controller.frame_ready.connect(lambda frame: calls.append(frame.workspace.scenario.batch))
    for batch in range(2, 40):
        window.controls.batch_spin.setValue(batch)
    assert calls == [2]  # the first change answers at once, the rest wait for the interval
    qtbot.waitUntil(lambda: calls[-1] == 39, timeout=1000)
    assert len(calls) == 2


def test_sweep_marks_points_that_do_not_fit(window):
    combo = window.controls.model_combo
    combo.setCurrentIndex(combo.findData("llama-3.3-70b"))
    settle(window)
    sweep = plotted(window, "sweep")
    assert np.isfinite(np.asarray(sweep["x"], dtype=float)).any()
    frame = window.controller.last_frame

    assert frame.output("h100-sxm").fits == 0.0
    assert "does not fit" in window.explain_panel.text() or "Does not fit" in window.explain_panel.text()


def test_hidden_tabs_catch_up_when_shown(window):
    """Only the visible panel redraws on a change; another tab draws the latest frame when
    it is shown."""
    window.tabs.setCurrentIndex(0)  # roofline
    window.controls.batch_spin.setValue(32)
    settle(window)
    latency = window.panels["latency"]
    stale = latency.plotted()
    window.tabs.setCurrentIndex(2)
    fresh = latency.plotted()
    index = list(fresh["accelerators"]).index("h100-sxm")
    expected = window.engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=32))
    assert fresh["itl_ms"][index] == pytest.approx(expected.itl_s * 1e3, rel=1e-9)
    assert not np.array_equal(np.asarray(stale["itl_ms"]), np.asarray(fresh["itl_ms"]))
    assert window.tabs.tabText(2) == "Latency && throughput"  # shown as "Latency & throughput"
