"""The Serving tab: what it draws equals the engine's served runs, its settings are the
workspace's serving spec both ways (a refused value puts the control back), it simulates off
the GUI thread and keeps only the newest answer, and the explain panel reads its run.

Screenshots (a person should see): the rate page with output throughput across the top, p99
TTFT and TPOT beneath, each accelerator's curve rising steeply near its capacity (hollow points
once unstable), a dashed red SLO line, a dotted line at the current rate, and capacity bars
down the right named in the curves' colours; the run page with running and waiting requests
over time, the KV cache in use, and TTFT and ITL histograms with p50 and p99 marked.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QComboBox, QScrollArea

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.serving.view import capacity_on, current_run, rate_curve
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.main_window import EXPLAIN_INTERVAL_MS
from accelscope.gui.panels.serving import PENDING_TEXT, RATE_PAGE, RUN_PAGE, ServingPanel

SHOWN = ("h100-sxm", "l40s")
SPEC = ServingSpec(requests=150, rate_rps=3.0, slo_ttft_ms=1500.0, slo_tpot_ms=100.0)

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture(autouse=True)
def _pyqtgraph_options():
    configure_pyqtgraph()


def workspace(engine, spec=SPEC, **scenario) -> Workspace:
    fields = {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "input_len": 512, "output_len": 64}
    fields.update(scenario)
    return Workspace(engine.resolve(Scenario(**fields)), shown=SHOWN, view="serving", serving=spec)


def make_panel(qtbot, engine, ws):
    panel = ServingPanel(engine.catalog, engine)
    qtbot.addWidget(panel)
    panel.resize(1200, 850)
    panel.show()
    qtbot.waitExposed(panel)
    panel.update_frame(compute_frame(engine, ws))
    panel.refresh_now()
    return panel


def test_the_curves_and_bars_are_the_engines_runs(qtbot, engine):
    ws = workspace(engine)
    panel = make_panel(qtbot, engine, ws)
    drawn = panel.plotted()
    for accelerator in SHOWN:
        curve = rate_curve(engine, ws.scenario_on(accelerator), ws.serving)
        np.testing.assert_allclose(drawn[f"{accelerator}.rates"], curve.rates_rps)
        np.testing.assert_allclose(drawn[f"{accelerator}.throughput"], curve.throughput_output_tok_s)
        np.testing.assert_allclose(drawn[f"{accelerator}.ttft"], curve.ttft_p99_s)
        np.testing.assert_allclose(drawn[f"{accelerator}.tpot"], curve.tpot_p99_s * 1e3)
    np.testing.assert_allclose(drawn["capacity_rps"], [capacity_on(engine, ws, a).rate_rps for a in SHOWN])
    run = current_run(engine, ws)
    np.testing.assert_allclose(drawn["timeline.time_s"], run.time_s)
    np.testing.assert_allclose(drawn["timeline.running"], run.running)
    assert panel.tables()["serving"].rows  # the report's serving.csv


def test_the_controls_show_the_spec_and_hide_what_does_not_apply(qtbot, engine):
    panel = make_panel(qtbot, engine, workspace(engine, SPEC.with_changes(arrival="closed", concurrency=6)))
    assert panel.controls["concurrency"].value() == 6
    assert panel.control_boxes["concurrency"].isVisibleTo(panel)
    assert not panel.control_boxes["rate_rps"].isVisibleTo(panel)
    assert not panel.control_boxes["max_num_seqs"].isVisibleTo(panel)  # under More settings
    panel.more_button.setChecked(True)
    assert panel.control_boxes["max_num_seqs"].isVisibleTo(panel)
    assert panel.controls["max_num_seqs"].text() == "default"  # None: the policy's default
    assert panel.controls["slo_ttft_ms"].value() == 1500.0


def test_a_setting_changes_the_workspace_and_a_refused_one_goes_back(qtbot, open_window):
    window = open_window(size=(1400, 900))
    window.show_view("serving")
    panel = window.panels["serving"]
    panel.controls["rate_rps"].setValue(7.5)
    assert window.controller.workspace.serving.rate_rps == 7.5
    combo: QComboBox = panel.controls["policy"]
    combo.setCurrentIndex(combo.findData("trtllm-no-evict"))
    combo.activated.emit(combo.currentIndex())
    assert window.controller.workspace.serving.policy == "trtllm-no-evict"
    # Uniform lengths cannot have a CV above 1/sqrt(3): refused, the status bar says why and the
    # control shows the spec's value again.
    panel.more_button.setChecked(True)
    length = panel.controls["input_distribution"]
    length.setCurrentIndex(length.findData("uniform"))
    length.activated.emit(length.currentIndex())
    assert window.controller.workspace.serving.input_distribution == "uniform"
    panel.controls["length_cv"].setValue(0.9)
    assert window.controller.workspace.serving.length_cv == 0.5
    assert panel.controls["length_cv"].value() == 0.5
    assert "uniform lengths need length_cv at most 0.577" in window.statusBar().currentMessage()


def test_the_run_is_simulated_off_the_gui_thread_and_the_newest_wins(qtbot, open_window):
    window = open_window(size=(1400, 900))
    window.controller.set_workspace(window.controller.workspace.with_changes(
        serving=SPEC, shown=SHOWN))
    window.controller.throttle.flush()
    window.show_view("serving")
    panel: ServingPanel = window.panels["serving"]
    for rate in (1.0, 2.0, 4.0):
        panel.controls["rate_rps"].setValue(rate)
        window.controller.throttle.flush()
    panel.wait_idle()
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.served.spec.rate_rps == 4.0, timeout=20000)
    expected = current_run(window.engine, window.controller.workspace)
    assert panel.run.metrics == expected.metrics
    # The sweep and capacities come once the controls rest.
    qtbot.waitUntil(lambda: panel.study is not None and not panel.busy, timeout=60000)
    assert [c.accelerator for c in panel.study.capacities] == list(SHOWN)


def test_a_changes_run_starts_after_the_window_has_painted_its_frame(qtbot, open_window, monkeypatch):
    """A change on the tab starts its run once the frame it asked for is painted: its Python
    parts, started at once, held the GIL against that paint."""
    from PySide6.QtCore import QEvent, QObject

    window = open_window(size=(1400, 900))
    window.controller.set_workspace(window.controller.workspace.with_changes(serving=SPEC, shown=SHOWN))
    window.controller.throttle.flush()
    window.show_view("serving")
    panel: ServingPanel = window.panels["serving"]
    panel.wait_idle()
    qtbot.wait(50)
    happened: list[str] = []
    submit = panel._executor.submit
    monkeypatch.setattr(panel._executor, "submit", lambda job: (happened.append("run submitted"), submit(job))[1])

    class Paints(QObject):
        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.UpdateRequest and watched is window:
                happened.append("window painted")
            return False

    start_run = panel._start_run
    monkeypatch.setattr(panel, "_start_run", lambda frame: (happened.append("run posted"), start_run(frame))[1])
    paints = Paints()
    window.installEventFilter(paints)
    panel.controls["rate_rps"].setValue(5.0)
    window.controller.throttle.flush()
    assert "run posted" in happened and "run submitted" not in happened
    qtbot.waitUntil(lambda: "run submitted" in happened, timeout=5000)
    window.removeEventFilter(paints)
    posted = happened.index("run posted")
    assert "window painted" in happened[posted:happened.index("run submitted")]
    panel.wait_idle()
    qtbot.waitUntil(lambda: panel.run is not None and panel.run.served.spec.rate_rps == 5.0, timeout=20000)


def test_leaving_the_tab_drops_its_sweep_and_coming_back_starts_it_again(qtbot, open_window):
    window = open_window(size=(1400, 900))
    window.controller.set_workspace(window.controller.workspace.with_changes(serving=SPEC, shown=SHOWN))
    window.controller.throttle.flush()
    window.show_view("serving")
    panel: ServingPanel = window.panels["serving"]
    panel._settled()  # the controls rest: the sweep starts off the GUI thread
    assert panel.busy
    generation = panel._study_generation
    window.show_view("memory")
    assert not panel.busy and panel._study_generation == generation + 1  # its results will be dropped
    panel.wait_idle()
    assert panel.study is None  # nothing of the dropped sweep was taken
    window.show_view("serving")
    qtbot.waitUntil(lambda: panel.study is not None and not panel.busy, timeout=60000)
    assert [c.accelerator for c in panel.study.capacities] == list(SHOWN)


def test_the_explain_panel_reads_the_run_while_the_tab_is_shown(qtbot, open_window):
    window = open_window(size=(1400, 900))
    window.controller.set_workspace(window.controller.workspace.with_changes(serving=SPEC))
    window.controller.throttle.flush()
    window.show_view("serving")
    panel: ServingPanel = window.panels["serving"]
    panel.refresh_now()
    window.update_explanation()
    assert "Serving" in window.explain_panel.text()
    assert "TTFT: median" in window.explain_panel.text()
    window.show_view("memory")
    window.update_explanation()
    assert "TTFT: median" not in window.explain_panel.text()


def test_the_explanation_is_rebuilt_on_a_switch_only_when_the_tabs_sections_differ(qtbot, open_window, monkeypatch):
    window = open_window(size=(1400, 900))
    window.controller.set_workspace(window.controller.workspace.with_changes(serving=SPEC))
    window.controller.throttle.flush()
    window.show_view("serving")
    window.panels["serving"].refresh_now()
    window.flush_explanation()
    assert "TTFT: median" in window.explain_panel.text()
    shown = []
    show_explanation = window.explain_panel.show_explanation
    monkeypatch.setattr(window.explain_panel, "show_explanation", lambda e: (shown.append(e), show_explanation(e)))

    def switch(view: str) -> int:
        before = len(shown)
        qtbot.wait(EXPLAIN_INTERVAL_MS + 50)  # the throttle's interval has passed: a request is due at once
        window.show_view(view)
        window.flush_explanation()
        return len(shown) - before

    assert switch("memory") == 1  # the run's sections go
    assert "TTFT: median" not in window.explain_panel.text()
    assert switch("latency") == 0  # neither tab adds a section: nothing to rebuild
    assert switch("serving") == 1  # its run is still current: its sections come back
    assert "TTFT: median" in window.explain_panel.text()


def test_the_run_page_and_a_model_that_cannot_be_served(qtbot, engine):
    ws = workspace(engine, model="llama-2-70b", accelerator="l4")
    panel = make_panel(qtbot, engine, ws)
    panel.show_page(RUN_PAGE)
    assert panel.run is None and "cannot serve" in panel.run_problem
    assert "Cannot serve" in panel.caption.text()
    assert panel.explanation_sections()[0][1][0].startswith("This scenario cannot be served")


def test_axes_are_drawn_ahead_only_on_the_page_shown(qtbot, engine):
    """Before a paint the panel lays out its plots' axes (``prepare_paint``), but not those of
    the page it does not show: the run page's axes wait until that page is painted."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.axes import axes_of

    panel = make_panel(qtbot, engine, workspace(engine))
    panel.show_page(RATE_PAGE)
    panel.update_frame(compute_frame(engine, workspace(engine, input_len=4096, output_len=512)))
    panel.refresh_now()  # a new study and run: every plot's axes change
    assert panel.run is not None

    def axes_on(page: int) -> list:
        widget = panel.pages.layout().itemAt(page).widget()
        views = [widget] if isinstance(widget, pg.GraphicsView) else widget.findChildren(pg.GraphicsView)
        return [axis for view in views for axis in axes_of(view) if axis.isVisible()]

    assert axes_on(RATE_PAGE) and axes_on(RUN_PAGE)
    assert all(axis.picture is not None for axis in axes_on(RATE_PAGE))
    assert all(axis.picture is None for axis in axes_on(RUN_PAGE))
    panel.show_page(RUN_PAGE)
    panel.grab()
    assert all(axis.picture is not None for axis in axes_on(RUN_PAGE))


def test_a_disaggregated_spec_shows_every_split(qtbot, engine):
    spec = SPEC.with_changes(prefill_replicas=1, decode_replicas=2)
    panel = make_panel(qtbot, engine, workspace(engine, spec))
    assert panel.split is not None and [o.label for o in panel.split.splits] == ["1:2", "2:1"]
    assert "prefill:decode 1:2" in panel.caption.text()
    assert panel.run is not None and panel.run.served.disaggregated
    panel.show_page(RUN_PAGE)  # the run's caption says whose iterations its timelines hold
    assert "(disaggregated: 1 prefill + 2 decode replicas)" in panel.caption.text()


@pytest.mark.parametrize("width", [1200, 640])
def test_capacity_values_and_slo_labels_stay_inside_their_plots(qtbot, engine, width):
    """On a projector the tab is ~650 px wide: each capacity bar's value must still fit beside
    it (a range in shares of the data cut "33.5/s" to "33.5/"), and each SLO line lies inside
    its plot (a range ending at the highest point cut it off above), named in the caption, not
    by a label over the curves (there it lay over them wherever it was put)."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF

    panel = make_panel(qtbot, engine, workspace(engine))
    panel.resize(width, 700)
    qtbot.wait(50)
    view = panel.capacity_plot.getViewBox()
    shown = [text for text in panel.capacity_texts if text.isVisible()]
    assert len(shown) == len(SHOWN)
    inside = view.mapRectToScene(view.boundingRect())
    for text in shown:
        assert inside.contains(text.mapRectToScene(text.boundingRect())), text.toPlainText()
    for name, plot in (("ttft", panel.ttft_plot), ("tpot", panel.tpot_plot)):
        line = panel.slo_lines[name]
        assert line.isVisible()
        box = plot.getViewBox()
        line_y = box.mapViewToScene(QPointF(0.0, line.value())).y()
        assert box.sceneBoundingRect().top() < line_y < box.sceneBoundingRect().bottom(), name
        assert [item for item in plot.items if isinstance(item, pg.TextItem)] == [], name  # no label in the plot
    assert "the dashed red lines are the SLOs" in panel.caption.text()


def test_with_every_accelerator_no_capacity_text_is_cut_by_the_canvas_edge(qtbot, engine, settle_plots):
    """With every catalog accelerator on a narrow tab the plots' least width was more than the
    canvas had: the capacity plot ran past the canvas' right edge ("7.78/s" showed "7.78").
    The canvas asks for its plots' least width (a page then scrolls); given it, every text shows."""
    every = Workspace(engine.resolve(Scenario(model="llama-3.1-8b", accelerator="h100-sxm", input_len=512,
                                              output_len=64)),
                      shown=tuple(engine.catalog.accelerators), view="serving", serving=SPEC)
    panel = make_panel(qtbot, engine, every)
    page = QScrollArea()  # as the window holds each tab: a page that needs more scrolls
    qtbot.addWidget(page)
    page.setWidgetResizable(True)
    page.setWidget(panel)
    page.resize(640, 700)
    page.show()
    canvas = panel.rate_canvas
    try:
        settle_plots(panel)
        shown = [text for text in panel.capacity_texts if text.isVisible()]
        assert len(shown) == len(engine.catalog.accelerators)
        visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        for text in shown:
            assert visible.contains(text.mapRectToScene(text.boundingRect())), (text.toPlainText(), visible)
    finally:
        page.takeWidget()  # the panel is qtbot's to close


def test_rows_not_yet_simulated_hold_their_place_while_a_study_runs(qtbot, engine):
    """A study's results come in one accelerator at a time: every shown accelerator has its row
    from the first result on (the not yet simulated marked PENDING_TEXT), so the names and the
    plots' widths do not move at every result."""
    panel = make_panel(qtbot, engine, workspace(engine))
    done = panel.study
    panel._study_shown = SHOWN
    panel._study_progressed(panel._study_generation, (done.curves[:1], done.capacities[:1]))
    shown = [text.toPlainText() for text in panel.capacity_texts if text.isVisible()]
    assert shown == [panel._capacity_text(done.capacities[0]), PENDING_TEXT]
    assert panel.capacity_plot.getAxis("left").ids == list(SHOWN)
    assert "being simulated" in panel._capacity_tip(1)
    panel._study_arrived(panel._study_generation, (done, None))
    assert PENDING_TEXT not in [text.toPlainText() for text in panel.capacity_texts if text.isVisible()]


def test_a_new_frame_redraws_no_curve_and_a_new_selection_restyles_it(qtbot, engine, monkeypatch):
    """Every control change brings a new frame and the selection with it: the curves are
    redrawn only when the selection moved (redrawing every curve of every accelerator on each
    change cost ~100 ms with the whole catalog shown), and then the selected one is thicker."""
    from accelscope.gui.plotkit.points import LineSet

    ws = workspace(engine)
    panel = make_panel(qtbot, engine, ws)
    panel.set_selected(ws.selected)
    calls = []
    original = LineSet.set_line
    monkeypatch.setattr(LineSet, "set_line", lambda lines, key, *a, **k: (calls.append(key), original(lines, key, *a, **k)))
    panel.update_frame(compute_frame(engine, ws.with_changes(scenario=ws.scenario.with_changes(batch=2))))
    panel.set_selected(ws.selected)
    assert calls == []
    panel.set_selected("l40s")
    # The old selection drawn thinner and the new one thicker; no other curve touched.
    assert set(calls) == {(a, name) for a in SHOWN for name in ("throughput", "ttft", "tpot")}
    ttft = panel.lines["ttft"]
    assert ttft.pen(("l40s", "ttft")).widthF() > ttft.pen(("h100-sxm", "ttft")).widthF()
    assert ttft.z(("l40s", "ttft")) > ttft.z(("h100-sxm", "ttft"))  # drawn over the others


def test_the_cheapest_line_is_written_once_for_its_capacities_and_prices(qtbot, engine, monkeypatch):
    """The rate page's caption names the cheapest accelerator meeting the SLO; a run that the
    current rate brings writes the caption again, but not that line's cost study, which only
    new capacities or new prices change."""
    from accelscope.engine.core.cost import CostSettings
    from accelscope.gui.panels import serving

    ws = workspace(engine)
    panel = make_panel(qtbot, engine, ws)
    assert "Cheapest meeting the SLO, rented" in panel.caption.text()
    studies = []
    original = serving.cheapest_sentences
    monkeypatch.setattr(serving, "cheapest_sentences", lambda *args: (studies.append(args), original(*args))[1])
    before = panel.caption.text()
    panel._take_run(panel.run)  # the current rate's run arrives again
    assert studies == [] and panel.caption.text() == before
    # A rental price set by hand: the line is written anew, with that price.
    cheaper = ws.with_changes(cost=CostSettings().with_price("l40s", rental_usd_per_hour=0.01))
    panel.update_frame(compute_frame(engine, cheaper))
    panel._take_run(panel.run)
    assert len(studies) == 1
    assert "rented: NVIDIA L40S (1 device)" in panel.caption.text()
    assert "($0.01 per device-hour: your own value)" in panel.caption.text()


def test_a_curve_breaks_where_a_point_is_missing(qtbot, engine):
    """A rate whose latency is not finite (nothing finished) leaves a gap in its curve, as
    pyqtgraph's connect="finite" did: the points either side are not joined across it."""
    ws = workspace(engine)
    panel = make_panel(qtbot, engine, ws)
    rates = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    values = np.array([0.5, np.nan, 0.7, 0.9, 1.1])
    key = ("h100-sxm", "ttft")
    panel._set_curve("ttft", key, rates, values, pg.mkPen("k"), selected=False)
    lines = panel.lines["ttft"]
    x, y = lines.original(key)
    np.testing.assert_array_equal(x, [1.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(y, [0.5, 0.7, 0.9, 1.1])
    np.testing.assert_array_equal(lines.connection(key), [False, True, True, False])
    assert lines.is_shown(key)
    drawn = panel.plotted()
    np.testing.assert_array_equal(drawn["h100-sxm.ttft"], values)  # as given, the gap included


def test_while_the_simulator_is_compiled_the_tab_says_so_and_counts_down(qtbot, engine, monkeypatch):
    """On a machine's first start the simulator is compiled in the background: the tab says what
    it waits for and about how long, rather than a bare 'Simulating…'; once ready, it says nothing
    of it."""
    from accelscope.gui.panels import serving

    panel = make_panel(qtbot, engine, workspace(engine))
    monkeypatch.setattr(serving, "simulator_compiled", lambda: False)
    panel.busy = True
    panel._write_caption(done=0)
    text = panel.caption.text()
    assert "Preparing the simulator" in text and "about 40 s" in text and "Simulating" not in text
    panel._preparing_since -= 15.0
    panel._write_caption(done=0)
    assert "about 25 s" in panel.caption.text()
    monkeypatch.setattr(serving, "simulator_compiled", lambda: True)
    panel._write_caption(done=1)
    assert "Preparing" not in panel.caption.text() and "Simulating… 1 of 2" in panel.caption.text()
    assert not panel._preparing_timer.isActive()
