"""`accelscope bench` runs (on tiny sizes) and prints every figure the issue asks for. No
figure is asserted against a target: timings belong to the machine, not to the suite.

The quick bench itself is a long run (~20 s: it starts the app twice, once compiling every
kernel into an empty cache), run by ``pytest -m slow``; the default suite times changes as the
bench does and checks how they are counted."""

from __future__ import annotations

import json
import math

import pytest

SEED_WITH_A_SCALING_STUDY = 2  # its first moves change a control the Scaling study depends on
KEYS = {
    "engine_evals_per_s", "reference_evals_per_s", "engine_speedup", "update_ms_p50", "update_ms_p95",
    "update_ms_p99", "startup_warm_s", "startup_cold_s", "peak_rss_mb", "serve_run_1000_ms", "serve_steady_run_ms",
    "serve_speedup", "serve_capacity_shown_s", "serve_long_reply_capacity_s", "serve_cli_dp64_s",
    "serve_cold_compile_s", "serve_cold_compile_mb", "serve_study_shown_s",
}


@pytest.mark.slow
def test_bench_quick_prints_every_figure(capsys):
    from accelscope.cli.main import main
    from accelscope.gui.dev.bench import BENCH_WINDOW_PX

    assert main(["bench", "--quick", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert KEYS <= figures.keys()
    assert all(isinstance(figures[key], float) and math.isfinite(figures[key]) and figures[key] > 0 for key in KEYS)
    assert figures["update_ms_p50"] <= figures["update_ms_p95"] <= figures["update_ms_p99"]
    assert figures["startup_cold_ready_s"] >= figures["startup_cold_s"]
    assert 0 < figures["update_cpu_ms_p50"] <= figures["update_cpu_ms_p95"] <= figures["update_cpu_ms_p99"]
    assert figures["load_average"] >= 0
    assert figures["serve_steady_run_requests"] >= 2000  # a window's worth at least
    # Timed in the window it says, not one fitted to the offscreen platform's 800x600 screen.
    assert (figures["window_width_px"], figures["window_height_px"]) == BENCH_WINDOW_PX
    # The explanation follows the frame: timed on its own, and with the frame.
    assert 0 < figures["explanation_ms_p50"] <= figures["explanation_ms_p95"]
    assert 0 < figures["whole_ms_p50"] <= figures["whole_ms_p95"] <= figures["whole_ms_p99"]
    # Studies of analysis tabs are reported beside the updates, not inside them (zeros when
    # none of the few changes left one due).
    assert figures["analyses_measured"] >= 0
    analysis = [figures[f"analysis_ms_{q}"] for q in ("p50", "p95", "p99", "max")]
    assert all(math.isfinite(value) and value >= 0 for value in analysis)
    assert analysis == sorted(analysis)
    assert figures["analysis_compute_ms_p50"] <= figures["analysis_compute_ms_p95"]


@pytest.mark.slow  # a bench run (~15 s)
def test_a_study_made_due_is_timed_apart_from_the_update(qtbot):
    # Starting on the Scaling tab, a batch change leaves its study due: the update is timed to
    # the repaint of what the tab shows, and the study (run as if the hand rested) on its own.
    from PySide6.QtWidgets import QApplication

    from accelscope.engine.physics.engine import Engine
    from accelscope.gui.dev.bench import _timed_changes
    from accelscope.gui.look.style import configure_pyqtgraph
    from accelscope.gui.main_window import MainWindow

    configure_pyqtgraph()
    window = MainWindow(Engine())
    qtbot.addWidget(window)
    timings = _timed_changes(QApplication.instance(), window, 6, seed=SEED_WITH_A_SCALING_STUDY, first_view="scaling")
    assert len(timings.update_ms) == len(timings.update_cpu_ms) == len(timings.update_where) == 6
    views = set(window.panels)
    assert all(place in views or (place.startswith("switch to ") and place[len("switch to "):] in views)
               for place in timings.update_where)
    assert timings.update_where[0] == "scaling"  # its first move changes a control on the Scaling tab
    assert len(timings.analysis_ms) >= 1
    assert len(timings.analysis_ms) == len(timings.analysis_cpu_ms) == len(timings.analysis_compute_ms)
    assert all(value > 0 for value in timings.analysis_ms + timings.analysis_compute_ms)


def test_changes_are_counted_per_tab_and_per_tab_switched_to():
    """Hand-worked: the places with most changes over the frame budget first, then the most changes."""
    from accelscope.gui.dev.bench import FRAME_BUDGET_MS, updates_by_where

    assert FRAME_BUDGET_MS == 16.0
    update_ms = [5.0, 20.0, 30.0, 10.0, 17.0, 4.0, 6.0, 8.0]
    where = ["roofline", "roofline", "switch to sweep", "roofline", "switch to sweep", "memory", "memory", "memory"]
    assert updates_by_where(update_ms, where) == {
        "switch to sweep": (2, 23.5, 2),
        "roofline": (3, 10.0, 1),
        "memory": (3, 6.0, 0),
    }
