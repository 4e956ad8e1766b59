"""Compare mode: every plot panel draws the pinned scenario A as ghosts behind the current
scenario B. The ghosts' data equal A's engine numbers, B's data are what they are without a
pin, unpinning removes every ghost, and an accelerator A did not show has no ghost.

The PNGs saved to /tmp/accelscope-shots/compare-*.png show Llama 3.1 8B at batch 64 (B)
against batch 1 (A, pinned): a person looking at them should see B drawn as usual, and A
clearly secondary — faint hollow points joined to B's by dotted lines on the roofline, faint
long-dashed curves and grey rings on the sweep, faint grey bars ended by black ticks behind the
latency and energy bars, a thin grey bar beneath each memory bar — and a "ghost: A (pinned)"
note under each plot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pictures import assert_shows, picture

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.gui.panels.energy import EnergyPanel
from accelscope.gui.panels.latency import LatencyPanel
from accelscope.gui.panels.memory import MemoryPanel
from accelscope.gui.panels.roofline import RooflinePanel
from accelscope.gui.panels.sweep import SweepPanel

SHOTS = Path("/tmp/accelscope-shots")
B_SHOWN = ("h100-sxm", "mi300x", "b200", "wse-3")
A_SHOWN = ("h100-sxm", "mi300x", "wse-3", "gaudi3")  # without b200; with one B does not show
PANELS = (RooflinePanel, SweepPanel, LatencyPanel, EnergyPanel, MemoryPanel)
# What each panel's picture holds: its plots (latency: TTFT, ITL, throughput; energy: per token
# and power) and the legend beside the log-log plots.
PLOTS = {RooflinePanel: 1, SweepPanel: 1, LatencyPanel: 3, EnergyPanel: 2, MemoryPanel: 1}
LEGENDS = {RooflinePanel: 1, SweepPanel: 1, LatencyPanel: 0, EnergyPanel: 0, MemoryPanel: 0}

# Hover shows a QToolTip; the offscreen platform cannot raise its window and says so once.
pytestmark = [pytest.mark.qt_log_ignore("This plugin does not support raise"),
              pytest.mark.qt_log_ignore("does not support propagateSizeHints")]


@pytest.fixture(autouse=True)
def _pyqtgraph(qapp):
    from accelscope.gui.look.style import configure_pyqtgraph

    configure_pyqtgraph()


def frame_of(engine, shown, **changes):
    scenario = Scenario("llama-3.1-8b", shown[0], **{"batch": 64, **changes})
    return compute_frame(engine, Workspace(scenario, shown=tuple(shown)))


@pytest.fixture
def frames(engine):
    """(A, B): A at batch 1 on A_SHOWN, B at batch 64 on B_SHOWN."""
    return frame_of(engine, A_SHOWN, batch=1), frame_of(engine, B_SHOWN)


def make_panel(qtbot, catalog, cls):
    panel = cls(catalog)
    qtbot.addWidget(panel)
    panel.resize(1300, 850)
    return panel


def results(engine, frame):
    return {a: engine.predict(frame.workspace.scenario_on(a)) for a in frame.accelerators}


def reference_keys(drawn: dict) -> list[str]:
    return [key for key in drawn if key.startswith("reference_")]


def b_data(drawn: dict) -> dict:
    return {key: value for key, value in drawn.items() if not key.startswith("reference_")}


def assert_same_b(with_ghosts: dict, without: dict) -> None:
    """B's data with ghosts drawn equal B's data without (text positions may move, values not)."""
    assert set(with_ghosts) == set(without)
    for key, value in without.items():
        value, other = np.asarray(value), np.asarray(with_ghosts[key])
        if value.dtype.kind in "fc":
            np.testing.assert_allclose(other, value, rtol=1e-12, equal_nan=True, err_msg=key)
        else:
            assert list(other.ravel()) == list(value.ravel()), key


def assert_no_ghosts(drawn: dict) -> None:
    for key in reference_keys(drawn):
        value = np.asarray(drawn[key])
        if value.dtype.kind in "fc":
            assert np.isnan(value).all() or value.size == 0, key
        else:
            assert all(v == "" for v in value.ravel()), key


def pinned(qtbot, catalog, cls, a, b):
    """A panel showing B, then A pinned: (panel, B's data before the pin)."""
    panel = make_panel(qtbot, catalog, cls)
    panel.update_frame(b)
    panel.grab()
    before = panel.plotted()
    assert_no_ghosts(before)
    assert not panel.reference_note.isVisibleTo(panel)
    panel.set_reference(a)
    panel.update_frame(b)
    assert panel.reference_note.isVisibleTo(panel)
    return panel, before


# ---- each panel -------------------------------------------------------------------------------


def test_roofline_ghosts_are_a_operating_points_joined_to_b(qtbot, engine, catalog, frames):
    a, b = frames
    panel, before = pinned(qtbot, catalog, RooflinePanel, a, b)
    drawn = panel.plotted()
    assert_same_b(b_data(drawn), b_data(before))
    a_results = results(engine, a)
    segments = drawn["reference_connectors"]
    for i, accelerator in enumerate(drawn["accelerators"]):
        if accelerator not in a_results:  # b200: B shows it, A did not
            assert np.isnan(drawn["reference_decode_x"][i]) and np.isnan(drawn["reference_prefill_y"][i])
            continue
        result = a_results[accelerator]
        for phase in ("prefill", "decode"):
            phase_result = getattr(result, phase)
            ghost = (drawn[f"reference_{phase}_x"][i], drawn[f"reference_{phase}_y"][i])
            assert ghost[0] == pytest.approx(phase_result.operational_intensity, rel=1e-12)
            assert ghost[1] == pytest.approx(phase_result.achieved_flops_per_s / 1e12, rel=1e-12)
            # A dotted line runs from A's point to B's.
            b_point = (drawn[f"{phase}_x"][i], drawn[f"{phase}_y"][i])
            assert any(np.allclose(segment, [ghost, b_point]) for segment in segments)
    assert len(segments) == 2 * 3  # both phases of the three accelerators both show
    assert not np.isfinite(drawn["reference_roof_top_y"]).any()  # A's ceilings are B's (same precision)
    # A ghost says it is A, with its value.
    spot = panel.reference_points.index_of("h100-sxm", "reference decode")
    tip = panel.tip_for(panel.reference_points.shown_spots()[2][spot])
    expected = a_results["h100-sxm"].decode.achieved_flops_per_s / 1e12
    assert "A: " in tip and "TFLOP/s" in tip and f"{float(f'{expected:.3g}'):g}" in tip.replace(",", "")

    panel.set_reference(None)
    drawn = panel.plotted()
    assert_no_ghosts(drawn)
    assert drawn["reference_connectors"].size == 0
    assert not panel.reference_note.isVisibleTo(panel)


def test_roofline_draws_a_ceilings_where_a_ran_at_another_precision(qtbot, engine, catalog):
    a = frame_of(engine, B_SHOWN)  # BF16
    b = frame_of(engine, B_SHOWN, weight_precision="fp8", activation_precision="fp8")
    panel, _before = pinned(qtbot, catalog, RooflinePanel, a, b)
    drawn = panel.plotted()
    for i, accelerator in enumerate(drawn["accelerators"]):
        a_roof, b_roof = a.roofline(accelerator), b.roofline(accelerator)
        if a_roof == b_roof:  # no FP8 peak of its own: the same ceilings, no ghost roof
            assert np.isnan(drawn["reference_roof_top_y"][i])
        else:
            assert drawn["reference_roof_top_y"][i] == pytest.approx(a_roof.peak_flops / 1e12, rel=1e-12)
            assert drawn["roof_top_y"][i] == pytest.approx(b_roof.peak_flops / 1e12, rel=1e-12)
    assert np.isfinite(drawn["reference_roof_top_y"]).any()
    panel.set_reference(None)
    assert np.isnan(panel.plotted()["reference_roof_top_y"]).all()


def test_sweep_ghosts_are_a_curves_and_a_current_batch(qtbot, engine, catalog):
    # A at a long prompt, so its curves differ from B's (the sweep does not depend on the batch).
    a = frame_of(engine, A_SHOWN, batch=1, input_len=8192)
    b = frame_of(engine, B_SHOWN)
    panel, before = pinned(qtbot, catalog, SweepPanel, a, b)
    drawn = panel.plotted()
    assert_same_b(b_data(drawn), b_data(before))
    for i, accelerator in enumerate(drawn["accelerators"]):
        if accelerator not in a.accelerators:
            assert np.isnan(drawn["reference_x"][i]).all() and np.isnan(drawn["reference_current_x"][i])
            continue
        np.testing.assert_allclose(drawn["reference_x"][i], a.sweep_output(accelerator).e2e_latency_s, rtol=1e-12)
        np.testing.assert_allclose(drawn["reference_y"][i], a.sweep_output(accelerator).throughput_output_tok_s,
                                   rtol=1e-12)
        result = engine.predict(a.workspace.scenario_on(accelerator))
        assert drawn["reference_current_x"][i] == pytest.approx(result.e2e_latency_s, rel=1e-12)
        assert drawn["reference_current_y"][i] == pytest.approx(result.throughput_output_tok_s, rel=1e-12)
    spot = panel.reference_current.index_of("mi300x")
    tip = panel.tip_for(panel.reference_current.shown_spots()[2][spot])
    assert "batch 1" in tip and "A: " in tip and " s end-to-end" in tip

    panel.set_reference(None)
    assert_no_ghosts(panel.plotted())
    assert not any(panel.line_set.is_shown((accelerator, "reference")) for accelerator in B_SHOWN)


@pytest.mark.parametrize("cls", [LatencyPanel, EnergyPanel])
def test_bar_ghosts_are_a_values(qtbot, engine, catalog, frames, cls):
    a, b = frames
    panel, before = pinned(qtbot, catalog, cls, a, b)
    drawn = panel.plotted()
    assert_same_b(b_data(drawn), b_data(before))
    a_results = results(engine, a)

    def expected(result):
        if cls is LatencyPanel:
            return {
                "reference_ttft_ms": result.ttft_s * 1e3,
                "reference_ttft_bar_ms": result.ttft_s * 1e3,
                "reference_itl_ms": result.itl_s * 1e3,
                "reference_throughput_system_tok_s": result.throughput_output_tok_s,
                "reference_throughput_device_tok_s": result.throughput_output_tok_s / result.devices,
                "reference_throughput_device_bar_tok_s": result.throughput_output_tok_s / result.devices,
            }
        return {"reference_power_W": result.power_W, "reference_power_bar_W": result.power_W,
                "reference_tokens_per_J": result.tokens_per_joule}

    assert sorted(reference_keys(drawn)) == sorted(expected(a_results["h100-sxm"]))
    for i, accelerator in enumerate(drawn["accelerators"]):
        if accelerator not in a_results:
            assert all(np.isnan(drawn[key][i]) for key in reference_keys(drawn)), accelerator
            continue
        for key, value in expected(a_results[accelerator]).items():
            assert drawn[key][i] == pytest.approx(value, rel=1e-9), (accelerator, key)
    row = list(drawn["accelerators"]).index("h100-sxm")
    assert "A: " in panel._tooltip(row)
    assert "A: " not in panel._tooltip(list(drawn["accelerators"]).index("b200"))

    panel.set_reference(None)
    assert_no_ghosts(panel.plotted())
    assert not any(plot.reference_ticks.isVisible() or plot.reference_bars.isVisible() for plot in panel.plots)


def test_memory_ghost_is_a_total_and_a_status_where_it_differs(qtbot, engine, catalog):
    a = frame_of(engine, A_SHOWN, batch=1024, input_len=8192)  # the KV cache overflows: runs in waves
    b = frame_of(engine, B_SHOWN)
    panel, before = pinned(qtbot, catalog, MemoryPanel, a, b)
    drawn = panel.plotted()
    assert_same_b(b_data(drawn), b_data(before))
    a_results = results(engine, a)
    for i, accelerator in enumerate(drawn["accelerators"]):
        if accelerator not in a_results:
            assert np.isnan(drawn["reference_total_pct"][i]) and drawn["reference_status"][i] == ""
            continue
        memory = a_results[accelerator].memory
        total = (memory.weights_bytes - memory.weights_far_bytes + memory.kv_cache_bytes
                 + memory.activation_bytes + memory.overhead_bytes)
        share = 100.0 * total / memory.usable_bytes
        assert drawn["reference_total_pct"][i] == pytest.approx(min(share, 200.0), rel=1e-9)
        if a_results[accelerator].waves > 1:
            assert drawn["reference_status"][i].startswith("A: KV cache overflows")
        else:  # A's status is B's: no second line
            assert drawn["reference_status"][i] == ""
    assert any(status.startswith("A: ") for status in drawn["reference_status"])
    assert "A: " in panel._tooltip(list(drawn["accelerators"]).index("mi300x"))

    panel.set_reference(None)
    assert_no_ghosts(panel.plotted())
    assert not panel.reference_total.isVisible()


@pytest.mark.parametrize("cls", PANELS)
def test_ghost_items_are_made_once_and_follow_b(qtbot, engine, catalog, frames, cls):
    """A control change moves B and keeps A's ghosts, with no new plot items."""
    a, b = frames
    panel, _before = pinned(qtbot, catalog, cls, a, b)
    items = {id(item) for item in panel.findChildren(object)}
    plots = [panel.plot] if hasattr(panel, "plot") else [p.plot for p in panel.plots]
    plot_items = [list(plot.items) for plot in plots]
    ghosts = {key: value for key, value in panel.plotted().items() if key.startswith("reference_")
              and key != "reference_connectors"}
    for batch in (2, 8, 32):
        panel.update_frame(frame_of(engine, B_SHOWN, batch=batch))
    assert [list(plot.items) for plot in plots] == plot_items
    assert {id(item) for item in panel.findChildren(object)} == items
    drawn = panel.plotted()
    for key, value in ghosts.items():
        value = np.asarray(value)
        if value.dtype.kind in "fc":
            np.testing.assert_allclose(drawn[key], value, rtol=1e-9, equal_nan=True, err_msg=key)
        else:
            assert list(drawn[key]) == list(value), key


@pytest.mark.parametrize("cls", PANELS)
def test_compare_shots(qtbot, engine, catalog, frames, cls):
    """Saves what a person should look at (see the module's docstring)."""
    a, b = frames
    panel, _before = pinned(qtbot, catalog, cls, a, b)
    panel.resize(1400, 900)
    SHOTS.mkdir(exist_ok=True)
    image = picture(panel)
    assert image.save(str(SHOTS / f"compare-{cls.__name__}.png"))
    assert_shows(image, panel, plots=PLOTS[cls], legends=LEGENDS[cls], accelerators=B_SHOWN)


# ---- the whole window ---------------------------------------------------------------------------


def test_window_compare_draws_a_decode_points_on_the_roofline(qtbot, engine, tmp_path, monkeypatch):
    from accelscope.gui.main_window import MainWindow

    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path))
    window = MainWindow(engine)
    qtbot.addWidget(window)
    window.start(synchronous=True)
    window.controller.set_field("batch", 1)
    window.controller.throttle.flush()
    window.comparison.pin(True)
    a_frame = window.comparison.frame
    window.controller.set_field("batch", 64)
    window.controller.throttle.flush()
    panel = window.refresh_panel("roofline")
    b_frame = window.controller.last_frame
    assert b_frame is not a_frame and b_frame.workspace.scenario.batch == 64
    drawn = panel.plotted()
    assert list(drawn["accelerators"]) == list(b_frame.accelerators)
    for i, accelerator in enumerate(drawn["accelerators"]):
        result = engine.predict(a_frame.workspace.scenario_on(accelerator))
        assert drawn["reference_decode_x"][i] == pytest.approx(result.decode.operational_intensity, rel=1e-12)
        assert drawn["reference_decode_y"][i] == pytest.approx(result.decode.achieved_flops_per_s / 1e12, rel=1e-12)
        b_result = engine.predict(b_frame.workspace.scenario_on(accelerator))
        assert drawn["decode_x"][i] == pytest.approx(b_result.decode.operational_intensity, rel=1e-12)
    window.comparison.pin(False)
    assert np.isnan(panel.plotted()["reference_decode_x"]).all()
    window.close()
