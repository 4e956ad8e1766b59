"""Hidden tabs catch up with the frame once the controls rest, one tab per turn of the event
loop, and never while the controls move. An analysis tab hidden only notes the frame: its study
runs only while it is shown."""

from __future__ import annotations

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario

WINDOW = {"size": (1400, 900)}  # the main window of the tests that take ``window`` (conftest)


def plot_tabs(window) -> list[str]:
    from accelscope.gui.panels import PANELS

    return [view for view in window.panels if not PANELS[view].analysis]


def test_hidden_plot_tabs_catch_up_once_the_controls_rest(window, qtbot, monkeypatch):
    from accelscope.gui.main_window import CATCH_UP_REST_MS

    window.show_view("roofline")
    window.controls.batch_spin.setValue(48)
    window.controller.throttle.flush()
    frame = window.controller.last_frame
    hidden = [view for view in window.panels if view != "roofline"]
    assert hidden and all(window._panel_frames.get(view) is not frame for view in hidden)
    analysis = [panel for view, panel in window.panels.items() if view not in plot_tabs(window)]
    assert analysis
    studies = []
    for panel in analysis:
        monkeypatch.setattr(panel, "refresh_now", lambda panel=panel: studies.append(panel))
    qtbot.waitUntil(lambda: all(window._panel_frames.get(view) is frame for view in hidden),
                    timeout=CATCH_UP_REST_MS * 20)
    # The analysis tabs hold the frame, and their studies wait until they are shown.
    assert all(panel.frame is frame for panel in analysis)
    assert studies == [] and not any(panel.pending() for panel in analysis)
    # The latency tab, never shown, draws the batch of 48 (what it shows when picked).
    drawn = window.panels["latency"].plotted()
    row = list(drawn["accelerators"]).index("h100-sxm")
    expected = window.engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=48))
    assert drawn["itl_ms"][row] == pytest.approx(expected.itl_s * 1e3, rel=1e-9)


def test_no_tab_catches_up_while_the_controls_move(window, qtbot):
    from accelscope.gui.main_window import CATCH_UP_REST_MS

    window.show_view("roofline")
    caught_up = []
    for view in plot_tabs(window):
        panel = window.panels[view]
        original = panel.update_frame
        panel.update_frame = lambda f, view=view, original=original: (caught_up.append(view), original(f))
    # A drag: a change every 40 ms, each well within the rest the catch-up waits for.
    for batch in range(20, 30):
        window.controls.batch_spin.setValue(batch)
        qtbot.wait(max(1, CATCH_UP_REST_MS // 4))
    assert set(caught_up) <= {"roofline"}  # only the tab shown was drawn
    qtbot.waitUntil(lambda: "sweep" in caught_up, timeout=CATCH_UP_REST_MS * 20)


def test_catch_up_now_brings_every_hidden_tab_up_to_date(window):
    window.show_view("roofline")
    before = window.panels["roofline"].plotted()
    window.show_view("sweep")
    window.controls.batch_spin.setValue(window.controls.batch_spin.value() * 8)
    window.controller.throttle.flush()
    frame = window.controller.last_frame
    window.catch_up_now()
    assert all(window._panel_frames.get(view) is frame for view in window.panels)
    assert not window._catch_up_timer.isActive()
    # The hidden roofline drew the new batch: each decode point moved to a higher intensity.
    drawn = window.panels["roofline"].plotted()
    assert list(drawn["accelerators"]) == list(before["accelerators"])
    assert np.all(drawn["decode_x"] > before["decode_x"])
