"""The roofline and batch-sweep panels: what they draw equals what the engine computes, items
are made once and reused, hidden accelerators are hidden, clicks select, and points that do
not fit are drawn and marked rather than dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from accelscope.engine import kernels as k
from accelscope.engine.frame import compute_frame
from accelscope.engine.scenario import Scenario
from accelscope.engine.workspace import Workspace

SHOTS = Path("/tmp/accelscope-shots")
# The offscreen platform says this when a widget is first shown; nothing of ours is wrong.
shown_on_offscreen = pytest.mark.qt_log_ignore("does not support propagateSizeHints")
EIGHT = ("h100-sxm", "h200", "b200", "mi300x", "gaudi3", "tpu-v7", "wse-3", "groq-lpu")


@pytest.fixture(autouse=True)
def _pyqtgraph(qapp):
    from accelscope.gui.style import configure_pyqtgraph

    configure_pyqtgraph()


def make_frame(engine, shown, model="llama-3.1-8b", **changes):
    scenario = Scenario(model, shown[0], **changes)
    return compute_frame(engine, Workspace(scenario, shown=tuple(shown)))


@pytest.fixture
def roofline_panel(qtbot, catalog):
    from accelscope.gui.panels.roofline import RooflinePanel

    panel = RooflinePanel(catalog)
    qtbot.addWidget(panel)
    panel.resize(1300, 800)
    return panel


@pytest.fixture
def sweep_panel(qtbot, catalog):
    from accelscope.gui.panels.sweep import SweepPanel

    panel = SweepPanel(catalog)
    qtbot.addWidget(panel)
    panel.resize(1300, 800)
    return panel


def click_first_point(item) -> None:
    """What a mouse click on a spot does: the scatter reports the points under the cursor."""
    item.scatter.sigClicked.emit(item.scatter, item.scatter.points()[:1], None)


def tip_of_first_point(item) -> str:
    """The tool tip pyqtgraph shows when hovering the item's first spot."""
    spot = item.scatter.points()[0]
    return item.scatter.opts["tip"](x=spot.pos().x(), y=spot.pos().y(), data=spot.data())


def distinct_colours(widget, path: Path) -> int:
    image = widget.grab().toImage()
    assert image.save(str(path))
    colours = {image.pixel(x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)}
    return len(colours)


def render(qtbot, panel) -> None:
    """Show and let the axes settle (they widen to their tick labels after a first paint)."""
    panel.show()
    qtbot.waitExposed(panel)
    panel.grab()
    qtbot.wait(10)


# ---- roofline ---------------------------------------------------------------------------


def test_roofline_points_and_ridges_equal_the_engine(engine, roofline_panel):
    shown = ("h100-sxm", "mi300x", "wse-3")
    frame = make_frame(engine, shown, batch=16)
    roofline_panel.update_frame(frame)
    drawn = roofline_panel.plotted()
    assert list(drawn["accelerators"]) == list(shown)
    for i, accelerator in enumerate(shown):
        result = engine.predict(frame.workspace.scenario_on(accelerator))
        roof = frame.roofline(accelerator)
        assert drawn["decode_x"][i] == pytest.approx(result.decode.operational_intensity, rel=1e-12)
        assert drawn["decode_y"][i] == pytest.approx(result.decode.achieved_flops_per_s / 1e12, rel=1e-12)
        assert drawn["prefill_x"][i] == pytest.approx(result.prefill.operational_intensity, rel=1e-12)
        assert drawn["prefill_y"][i] == pytest.approx(result.prefill.achieved_flops_per_s / 1e12, rel=1e-12)
        assert drawn["ridge_x"][i] == pytest.approx(result.ridge_point, rel=1e-12)
        assert drawn["ridge_y"][i] == pytest.approx(roof.peak_flops / 1e12, rel=1e-12)
        assert drawn["roof_top_y"][i] == pytest.approx(roof.peak_flops / 1e12, rel=1e-12)
        assert drawn["tiers_drawn"][i] == len(roof.slopes) - 1
    # Decode of an 8B model at batch 16 sits left of every GPU's ridge, prefill right of it.
    assert drawn["decode_x"][0] < drawn["ridge_x"][0] < drawn["prefill_x"][0]
    assert str(drawn["title"]) == "Roofline — BF16 ceilings"


def test_roofline_lines_follow_the_roofline_objects(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"))
    roofline_panel.update_frame(frame)
    for accelerator in frame.accelerators:
        roof = frame.roofline(accelerator)
        items = roofline_panel.items[accelerator]
        x, y = items.roof.getOriginalDataset()
        assert x[0] == pytest.approx(0.1) and x[-1] == pytest.approx(1e5)
        expected = np.array([roof.attainable(v) for v in x]) / 1e12
        np.testing.assert_allclose(y, expected, rtol=1e-12)
        others = [s for s in roof.slopes if s is not roof.main_slope]
        for slope, tier in zip(others, items.tiers, strict=False):
            tx, ty = tier.getOriginalDataset()
            np.testing.assert_allclose(ty, slope.bandwidth_Bps * tx / 1e12, rtol=1e-12)
            # Each other tier climbs to the compute ceiling (or the edge of the plot).
            assert tx[-1] == pytest.approx(min(slope.ridge_point(roof.peak_flops), 1e5), rel=1e-9)


def test_roofline_title_names_the_compute_precision(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "a100-80gb"), weight_precision="fp8", activation_precision="fp8")
    roofline_panel.update_frame(frame)
    title = str(roofline_panel.plotted()["title"])
    for roof in frame.rooflines:
        assert roof.compute_precision.upper() in title
    if frame.roofline("a100-80gb").compute_precision != frame.roofline("h100-sxm").compute_precision:
        assert "a100-80gb" in title


def test_roofline_update_reuses_items(engine, roofline_panel):
    shown = ("h100-sxm", "mi300x")
    roofline_panel.update_frame(make_frame(engine, shown, batch=1))
    items = {a: roofline_panel.items[a] for a in shown}
    kept = {a: [id(item) for item in items[a].all()] for a in shown}
    scene_items = len(roofline_panel.plot.items)
    before = roofline_panel.plotted()

    roofline_panel.update_frame(make_frame(engine, shown, batch=64))
    after = roofline_panel.plotted()
    assert np.all(after["decode_x"] > 10 * before["decode_x"])  # weights shared by 64 sequences
    for accelerator in shown:
        assert roofline_panel.items[accelerator] is items[accelerator]
        assert [id(item) for item in roofline_panel.items[accelerator].all()] == kept[accelerator]
    assert len(roofline_panel.plot.items) == scene_items

    roofline_panel.update_frame(make_frame(engine, shown, model="qwen3-32b", batch=64))
    assert not np.allclose(roofline_panel.plotted()["decode_y"], after["decode_y"])
    assert len(roofline_panel.plot.items) == scene_items


def test_roofline_hides_accelerators_no_longer_shown(engine, roofline_panel):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x", "wse-3")))
    wse = roofline_panel.items["wse-3"]
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    assert list(roofline_panel.plotted()["accelerators"]) == ["h100-sxm", "mi300x"]
    assert not any(item.isVisible() for item in wse.all())
    assert roofline_panel.legend.labels() == ["H100 SXM5 80GB", "Instinct MI300X"]
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "wse-3")))
    assert roofline_panel.items["wse-3"] is wse
    assert wse.roof.isVisible() and wse.decode.isVisible()
    assert not roofline_panel.items["mi300x"].roof.isVisible()


def test_roofline_clicks_select_an_accelerator(engine, roofline_panel, qtbot):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    items = roofline_panel.items["mi300x"]
    for item in (items.decode, items.prefill, items.ridge, items.roof):
        with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
            click_first_point(item)
        assert blocker.args == ["mi300x"]
    with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
        items.roof.curve.sigClicked.emit(items.roof.curve, None)
    assert blocker.args == ["mi300x"]
    sample, _label = roofline_panel.legend.legend.items[0]
    with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
        sample.sigClicked.emit(sample.item)
    assert blocker.args == ["h100-sxm"]


def test_roofline_selection_highlights(engine, roofline_panel):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    roofline_panel.set_selected("mi300x")
    chosen, other = roofline_panel.items["mi300x"], roofline_panel.items["h100-sxm"]
    assert chosen.roof.opts["pen"].widthF() > other.roof.opts["pen"].widthF()
    assert chosen.decode.opts["symbolSize"] > other.decode.opts["symbolSize"]
    assert chosen.decode.zValue() > other.decode.zValue()
    label = dict(zip(["h100-sxm", "mi300x"], [lab for _s, lab in roofline_panel.legend.legend.items], strict=True))
    assert label["mi300x"].opts.get("bold") and not label["h100-sxm"].opts.get("bold")


def test_roofline_tips_say_phase_intensity_peak_share_and_bound(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm",), batch=16)
    roofline_panel.update_frame(frame)
    result = engine.predict(frame.workspace.scenario)
    tip = tip_of_first_point(roofline_panel.items["h100-sxm"].decode)
    assert "NVIDIA H100" in tip and "decode" in tip
    assert f"{result.decode.operational_intensity:.3g} FLOP/byte" in tip
    share = result.decode.achieved_flops_per_s / frame.roofline("h100-sxm").peak_flops
    assert f"{share:.1%} of the BF16 peak" in tip
    assert f"bound: {result.decode.bound}" in tip
    assert "does not fit" not in tip
    prefill_tip = tip_of_first_point(roofline_panel.items["h100-sxm"].prefill)
    assert "prefill" in prefill_tip and f"bound: {result.prefill.bound}" in prefill_tip
    roof_tip = tip_of_first_point(roofline_panel.items["h100-sxm"].roof)
    assert "HBM3" in roof_tip and "TFLOP/s" in roof_tip and "ridge" in roof_tip


def test_roofline_points_that_do_not_fit_are_hollow(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"), model="llama-3.3-70b", tp=1)
    assert frame.value(k.O_FITS, "h100-sxm") == 0 and frame.value(k.O_FITS, "mi300x") == 1
    roofline_panel.update_frame(frame)
    drawn = roofline_panel.plotted()
    assert list(drawn["decode_hollow"]) == [True, False]
    assert list(drawn["prefill_hollow"]) == [True, False]
    assert np.all(np.isfinite(drawn["decode_y"]))  # drawn, not dropped
    tip = tip_of_first_point(roofline_panel.items["h100-sxm"].decode)
    assert "does not fit (hypothetical)" in tip
    # Fitting again fills the same item.
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x"), model="llama-3.1-8b"))
    assert not roofline_panel.plotted()["decode_hollow"].any()


@shown_on_offscreen
def test_roofline_hover_shows_a_tool_tip(engine, roofline_panel, qtbot):
    """A real mouse move over the decode point sets the plot's tool tip."""
    from PySide6.QtCore import QPointF
    from PySide6.QtTest import QTest

    roofline_panel.update_frame(make_frame(engine, ("h100-sxm",), batch=16))
    render(qtbot, roofline_panel)
    spot = roofline_panel.items["h100-sxm"].decode.scatter.points()[0]
    view = roofline_panel.graphics
    scene_pos = roofline_panel.items["h100-sxm"].decode.scatter.mapToScene(QPointF(spot.pos()))
    QTest.mouseMove(view.viewport(), view.mapFromScene(scene_pos))
    qtbot.waitUntil(lambda: "decode" in roofline_panel.plot.vb.toolTip(), timeout=2000)
    assert "NVIDIA H100" in roofline_panel.plot.vb.toolTip()


# ---- batch sweep --------------------------------------------------------------------------


def test_sweep_equals_the_engine(engine, sweep_panel):
    shown = ("h100-sxm", "mi300x", "wse-3")
    frame = make_frame(engine, shown, batch=48)  # 48 is not a sweep column
    sweep_panel.update_frame(frame)
    drawn = sweep_panel.plotted()
    assert list(drawn["accelerators"]) == list(shown)
    column = list(drawn["batches"]).index(64)
    for i, accelerator in enumerate(shown):
        at_64 = engine.predict(frame.workspace.scenario_on(accelerator).with_changes(batch=64))
        assert drawn["y"][i, column] == pytest.approx(at_64.throughput_output_tok_s, rel=1e-12)
        assert drawn["x"][i, column] == pytest.approx(at_64.e2e_latency_s, rel=1e-12)
        current = engine.predict(frame.workspace.scenario_on(accelerator))
        assert drawn["current_x"][i] == pytest.approx(current.e2e_latency_s, rel=1e-12)
        assert drawn["current_y"][i] == pytest.approx(current.throughput_output_tok_s, rel=1e-12)
    assert np.all(np.isfinite(drawn["x"])) and np.all(np.isfinite(drawn["y"]))
    assert "current batch (48)" in sweep_panel.note.text()


def test_sweep_marks_what_does_not_fit(engine, sweep_panel):
    from accelscope.gui.panels.sweep import FITS, NO_FIT, WAVES

    frame = make_frame(engine, ("h100-sxm", "mi300x"), model="llama-3.3-70b", tp=1)
    sweep_panel.update_frame(frame)
    drawn = sweep_panel.plotted()
    # Weights of a 70B model in BF16 do not fit one H100: every batch drawn, as ×, dashed.
    assert np.all(drawn["state"][0] == NO_FIT) and drawn["current_state"][0] == NO_FIT
    assert np.all(np.isfinite(drawn["y"][0]))
    assert drawn["hypothetical_segments"][0] == len(frame.sweep_batches) - 1
    h100 = sweep_panel.items["h100-sxm"]
    assert "does not fit" in sweep_panel.tip_for(h100.curve.opts["data"][0])
    # On an MI300X the weights fit; large batches overflow the KV cache and run in waves.
    waves = frame.sweep_values(k.O_WAVES, "mi300x")
    assert np.array_equal(drawn["state"][1], np.where(waves > 1, WAVES, FITS))
    assert (drawn["state"][1] == WAVES).any() and (drawn["state"][1] == FITS).any()
    assert drawn["hypothetical_segments"][1] == 0
    last = sweep_panel.items["mi300x"].curve.opts["data"][-1]
    assert f"runs in {int(waves[-1])} waves" in sweep_panel.tip_for(last)


def test_sweep_tips_name_batch_latency_throughput_itl_ttft(engine, sweep_panel):
    frame = make_frame(engine, ("h100-sxm",), batch=16)
    sweep_panel.update_frame(frame)
    tip = tip_of_first_point(sweep_panel.items["h100-sxm"].curve)
    at_1 = engine.predict(frame.workspace.scenario.with_changes(batch=1))
    assert "NVIDIA H100" in tip and "batch 1" in tip
    assert f"{at_1.itl_s * 1e3:.3g} ms" in tip
    assert "end-to-end latency" in tip and "output tokens/s" in tip and "TTFT" in tip
    current = tip_of_first_point(sweep_panel.items["h100-sxm"].current)
    assert "batch 16 (current)" in current


def test_sweep_update_reuses_items_and_changes_data(engine, sweep_panel):
    shown = ("h100-sxm", "mi300x")
    sweep_panel.update_frame(make_frame(engine, shown, batch=8))
    items = {a: sweep_panel.items[a] for a in shown}
    kept = {a: [id(item) for item in items[a].all()] for a in shown}
    scene_items = len(sweep_panel.plot.items)
    before = sweep_panel.plotted()
    sweep_panel.update_frame(make_frame(engine, shown, batch=128))
    after = sweep_panel.plotted()
    assert np.all(after["current_y"] > before["current_y"])
    np.testing.assert_array_equal(after["y"], before["y"])  # the sweep does not depend on the batch
    sweep_panel.update_frame(make_frame(engine, shown, model="qwen3-32b", batch=128))
    assert not np.allclose(sweep_panel.plotted()["y"], after["y"])
    for accelerator in shown:
        assert sweep_panel.items[accelerator] is items[accelerator]
        assert [id(item) for item in sweep_panel.items[accelerator].all()] == kept[accelerator]
    assert len(sweep_panel.plot.items) == scene_items


def test_sweep_hides_accelerators_and_clicks_select(engine, sweep_panel, qtbot):
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x", "wse-3")))
    wse = sweep_panel.items["wse-3"]
    with qtbot.waitSignal(sweep_panel.accelerator_selected) as blocker:
        click_first_point(wse.curve)
    assert blocker.args == ["wse-3"]
    with qtbot.waitSignal(sweep_panel.accelerator_selected) as blocker:
        click_first_point(sweep_panel.items["mi300x"].current)
    assert blocker.args == ["mi300x"]
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    assert list(sweep_panel.plotted()["accelerators"]) == ["h100-sxm", "mi300x"]
    assert not any(item.isVisible() for item in wse.all())


def test_sweep_selection_highlights_and_labels_batches(engine, sweep_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"))
    sweep_panel.update_frame(frame)
    sweep_panel.set_selected("mi300x")
    chosen, other = sweep_panel.items["mi300x"], sweep_panel.items["h100-sxm"]
    assert chosen.curve.opts["pen"].widthF() > other.curve.opts["pen"].widthF()
    assert chosen.curve.zValue() > other.curve.zValue()
    label = sweep_panel.batch_labels[64]
    assert label.isVisible()
    column = list(frame.sweep_batches).index(64)
    x = frame.sweep_values(k.O_E2E, "mi300x")[column]
    assert label.pos().x() == pytest.approx(np.log10(x))


# ---- images -----------------------------------------------------------------------------


@shown_on_offscreen
@pytest.mark.parametrize("which", ["roofline", "sweep"])
def test_panels_render(engine, qtbot, tmp_path, roofline_panel, sweep_panel, which):
    """Smoke check: the rendered panel is not blank. A person looking at the PNGs in
    /tmp/accelscope-shots should see eight accelerators in distinct colours, a legend beside
    the plot (not over it), readable tick labels with units on both axes, and the note below."""
    panel = roofline_panel if which == "roofline" else sweep_panel
    frame = make_frame(engine, EIGHT, batch=16)
    panel.update_frame(frame)
    panel.set_selected("h100-sxm")
    render(qtbot, panel)
    assert distinct_colours(panel, tmp_path / f"{which}.png") > 20
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert panel.grab().save(str(SHOTS / f"{which}-8-accelerators.png"))
    if which == "sweep":
        hard = make_frame(engine, EIGHT, model="llama-3.3-70b", batch=16)
        panel.update_frame(hard)
        panel.grab()
        assert panel.grab().save(str(SHOTS / "sweep-8-accelerators-llama-3.3-70b.png"))


def test_panels_take_an_empty_selection(engine, roofline_panel, sweep_panel):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm",)))
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm",)))
    empty = compute_frame(engine, Workspace(Scenario("llama-3.1-8b", "h100-sxm"), shown=()))
    for panel in (roofline_panel, sweep_panel):
        panel.update_frame(empty)
        assert len(panel.plotted()["accelerators"]) == 0
    assert not roofline_panel.items["h100-sxm"].decode.isVisible()
    assert not sweep_panel.items["h100-sxm"].curve.isVisible()
    assert roofline_panel.legend.labels() == []


# ---- cost of an update --------------------------------------------------------------------


def count_calls(monkeypatch, cls, name: str) -> list:
    """Record each call of ``cls.name`` (on any instance) and let it through."""
    calls = []
    original = getattr(cls, name)

    def spy(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls


def test_roofline_a_batch_drag_moves_only_the_points(engine, roofline_panel, monkeypatch):
    import pyqtgraph as pg

    from accelscope.gui.panels.roofline import Marker

    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    roofline_panel.set_selected("h100-sxm")
    lines = count_calls(monkeypatch, pg.PlotDataItem, "setData")
    moves = count_calls(monkeypatch, Marker, "set_point")
    frame = make_frame(engine, EIGHT, batch=9)
    roofline_panel.update_frame(frame)
    roofline_panel.set_selected("h100-sxm")
    assert lines == []  # the roofs, ridges and tiers do not depend on the batch
    assert len(moves) == 2 * len(EIGHT)
    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=9))  # a new frame, same numbers
    roofline_panel.set_selected("h100-sxm")
    assert len(moves) == 2 * len(EIGHT) and lines == []
    drawn = roofline_panel.plotted()
    for i, accelerator in enumerate(EIGHT):
        result = engine.predict(frame.workspace.scenario_on(accelerator))
        assert drawn["decode_x"][i] == pytest.approx(result.decode.operational_intensity, rel=1e-12)
        for marker in (roofline_panel.items[accelerator].prefill, roofline_panel.items[accelerator].decode):
            assert_spot_is_at_its_data(marker)


def assert_spot_is_at_its_data(marker) -> None:
    """A marker moved in place shows its one spot where its data says (log10 on log axes),
    and the view's bounds follow it."""
    (x,), (y,) = marker.getOriginalDataset()
    (spot,) = marker.points()
    assert (spot.pos().x(), spot.pos().y()) == pytest.approx((np.log10(x), np.log10(y)), rel=1e-12)
    low, high = marker.dataBounds(0)
    assert low <= np.log10(x) <= high


def test_sweep_a_batch_drag_leaves_the_curves_alone(engine, sweep_panel, monkeypatch):
    import pyqtgraph as pg

    from accelscope.gui.panels.roofline import Marker, SpotRef

    sweep_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    curves = count_calls(monkeypatch, pg.PlotDataItem, "setData")
    moves = count_calls(monkeypatch, Marker, "set_point")
    frame = make_frame(engine, EIGHT, batch=9)
    sweep_panel.update_frame(frame)
    assert curves == []  # the sweep does not depend on the current batch
    assert len(moves) == len(EIGHT)
    for accelerator in EIGHT:
        current = sweep_panel.items[accelerator].current
        assert_spot_is_at_its_data(current)
        assert current.getOriginalDataset()[0][0] == frame.value(k.O_E2E, accelerator)
        assert current.points()[0].data() == SpotRef(accelerator, "current")
    sweep_panel.update_frame(make_frame(engine, EIGHT, model="qwen3-32b", batch=9))
    assert len(curves) == 2 * len(EIGHT)  # a new model: every curve and its dashed part


def test_markers_reuse_their_rendered_symbols(engine, roofline_panel, sweep_panel):
    """Pens and brushes are made once: pyqtgraph renders a symbol once per pen and brush
    object, so new ones on every frame rendered it again and grew its symbol atlas."""
    for batch in range(2, 40):
        for panel in (roofline_panel, sweep_panel):
            panel.update_frame(make_frame(engine, EIGHT, batch=batch))
            panel.set_selected("mi300x")
    markers = [m for items in roofline_panel.items.values() for m in (items.prefill, items.decode)]
    markers += [items.current for items in sweep_panel.items.values()]
    assert max(len(marker.fragmentAtlas) for marker in markers) <= 3  # fits, waves, does not fit


@shown_on_offscreen
def test_roofline_hover_over_a_line_shows_its_tip(engine, roofline_panel, qtbot):
    """The hover targets along the lines are not painted, but the mouse still finds them."""
    from PySide6.QtCore import QPointF
    from PySide6.QtTest import QTest

    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x"), batch=16))
    render(qtbot, roofline_panel)
    roof = roofline_panel.items["mi300x"].roof
    spot = roof.scatter.points()[len(roof.scatter.points()) // 2]
    view = roofline_panel.graphics
    QTest.mouseMove(view.viewport(), view.mapFromScene(roof.scatter.mapToScene(QPointF(spot.pos()))))
    qtbot.waitUntil(lambda: "roofline" in roofline_panel.plot.vb.toolTip(), timeout=2000)
    assert "MI300X" in roofline_panel.plot.vb.toolTip()
