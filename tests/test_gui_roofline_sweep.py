"""The roofline and batch-sweep panels: what they draw equals what the engine computes, items
are made once and reused, hidden accelerators are hidden, clicks select, and points that do
not fit are drawn and marked rather than dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pictures import assert_shows, picture

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame

SHOTS = Path("/tmp/accelscope-shots")
# The offscreen platform says this when a widget is first shown; nothing of ours is wrong.
shown_on_offscreen = pytest.mark.qt_log_ignore("does not support propagateSizeHints")
EIGHT = ("h100-sxm", "h200", "b200", "mi300x", "gaudi3", "tpu-v7", "wse-3", "groq-lpu")


@pytest.fixture(autouse=True)
def _pyqtgraph(qapp):
    from accelscope.gui.look.style import configure_pyqtgraph

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


class FakeClick:
    """What pyqtgraph hands an item's mouseClickEvent: a button and a position in the item."""

    def __init__(self, pos) -> None:
        self._pos = pos
        self.accepted = False

    def button(self):
        from PySide6.QtCore import Qt

        return Qt.MouseButton.LeftButton

    def pos(self):
        return self._pos

    def accept(self) -> None:
        self.accepted = True

    def ignore(self) -> None:
        self.accepted = False


def click_line(line_set, key) -> None:
    """A left click on the middle of a line (the panel must have been rendered)."""
    from PySide6.QtCore import QPointF

    path = line_set.view_path(key)
    middle = path.elementAt(path.elementCount() // 2)
    click = FakeClick(QPointF(middle.x, middle.y))
    line_set.mouseClickEvent(click)
    assert click.accepted and line_set.key_at(click.pos()) == key


def spot_index(item, accelerator: str, role: str | None = None) -> int:
    """Where an accelerator's spot is among the spots of a merged item (which holds every
    accelerator's spots of one role)."""
    index = item.index_of(accelerator, role)
    assert index is not None, f"no spot of {accelerator} ({role})"
    assert item.points()[index].data().accelerator == accelerator
    return index


def click_spot(item, accelerator: str, role: str | None = None) -> None:
    """A mouse click on an accelerator's spot of a merged item."""
    index = spot_index(item, accelerator, role)
    item.sigClicked.emit(item, item.points()[index : index + 1], None)


def tip_of_spot(item, accelerator: str, role: str | None = None) -> str:
    """The tool tip pyqtgraph shows when hovering an accelerator's spot of a merged item."""
    spot = item.points()[spot_index(item, accelerator, role)]
    return item.opts["tip"](x=spot.pos().x(), y=spot.pos().y(), data=spot.data())


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
    targets_x, targets_y, targets_refs = roofline_panel.targets.shown_spots()
    for accelerator in frame.accelerators:
        roof = frame.roofline(accelerator)
        lines = roofline_panel.lines[accelerator]
        x, y = roofline_panel.line_set.original(lines.roof)
        # Straight in log-log: drawn through its corners, the ridge among them.
        ridge = roof.main_slope.ridge_point(roof.peak_flops)
        np.testing.assert_allclose(x, [0.1, ridge, 1e5], rtol=1e-12)
        expected = np.array([roof.attainable(v) for v in x]) / 1e12
        np.testing.assert_allclose(y, expected, rtol=1e-12)
        # Hover targets along the line carry the accelerator, on the line and spanning it.
        along = [i for i, ref in enumerate(targets_refs) if ref.accelerator == accelerator and ref.role == "roof"]
        assert len(along) > 50
        np.testing.assert_allclose(targets_y[along], [roof.attainable(v) / 1e12 for v in targets_x[along]], rtol=1e-12)
        assert targets_x[along].min() == pytest.approx(0.1) and targets_x[along].max() == pytest.approx(1e5)
        others = [(i, s) for i, s in enumerate(roof.slopes) if s is not roof.main_slope]
        assert others
        for n, (index, slope) in enumerate(others):
            tx, ty = roofline_panel.line_set.original(lines.tier(n))
            np.testing.assert_allclose(ty, slope.bandwidth_Bps * tx / 1e12, rtol=1e-12)
            # Each other tier climbs to the compute ceiling (or the edge of the plot).
            assert tx[-1] == pytest.approx(min(slope.ridge_point(roof.peak_flops), 1e5), rel=1e-9)
            along = [i for i, ref in enumerate(targets_refs)
                     if ref.accelerator == accelerator and ref.role == "tier" and ref.index == index]
            np.testing.assert_allclose(targets_y[along], slope.bandwidth_Bps * targets_x[along] / 1e12, rtol=1e-12)
            assert targets_x[along].min() == pytest.approx(tx[0]) and targets_x[along].max() == pytest.approx(tx[-1])
            # What is drawn is what is read back: the curve holds log10 of the data.
            path = roofline_panel.line_set.view_path(lines.tier(n))
            assert path.elementCount() == len(ty)
            view_y = [path.elementAt(i).y for i in range(path.elementCount())]
            np.testing.assert_allclose(view_y, np.log10(ty), rtol=1e-12)


def test_roofline_title_names_the_compute_precision(engine, catalog, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "a100-80gb"), weight_precision="fp8", activation_precision="fp8")
    roofline_panel.update_frame(frame)
    title = str(roofline_panel.plotted()["title"])
    for roof in frame.rooflines:
        assert roof.compute_precision.upper() in title
    if frame.roofline("a100-80gb").compute_precision != frame.roofline("h100-sxm").compute_precision:
        assert catalog.accelerators["a100-80gb"].name in title and "a100-80gb" not in title


def roofline_scene_items(panel) -> list[int]:
    return [id(panel.line_set), id(panel.targets), id(panel.ridges), *(id(item) for item in panel.points.values())]


def test_roofline_update_reuses_items(engine, roofline_panel):
    shown = ("h100-sxm", "mi300x")
    roofline_panel.update_frame(make_frame(engine, shown, batch=1))
    lines = {a: roofline_panel.lines[a] for a in shown}
    keys = roofline_panel.line_set.line_keys()
    kept = roofline_scene_items(roofline_panel)
    scene_items = len(roofline_panel.plot.items)
    before = roofline_panel.plotted()

    roofline_panel.update_frame(make_frame(engine, shown, batch=64))
    after = roofline_panel.plotted()
    assert np.all(after["decode_x"] > 10 * before["decode_x"])  # weights shared by 64 sequences
    for accelerator in shown:
        assert roofline_panel.lines[accelerator] is lines[accelerator]
    assert roofline_panel.line_set.line_keys() == keys
    assert roofline_scene_items(roofline_panel) == kept
    assert len(roofline_panel.plot.items) == scene_items

    roofline_panel.update_frame(make_frame(engine, shown, model="qwen3-32b", batch=64))
    assert not np.allclose(roofline_panel.plotted()["decode_y"], after["decode_y"])
    assert len(roofline_panel.plot.items) == scene_items


def test_roofline_hides_accelerators_no_longer_shown(engine, roofline_panel):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x", "wse-3")))
    wse = roofline_panel.lines["wse-3"]
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    assert list(roofline_panel.plotted()["accelerators"]) == ["h100-sxm", "mi300x"]
    assert not any(roofline_panel.line_set.is_shown(key) for key in wse.line_keys())
    merged = (roofline_panel.targets, roofline_panel.ridges, *roofline_panel.points.values())
    assert all(item.index_of("wse-3") is None for item in merged)
    assert roofline_panel.legend.labels() == ["H100 SXM5 80GB", "Instinct MI300X"]
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "wse-3")))
    assert roofline_panel.lines["wse-3"] is wse
    assert roofline_panel.line_set.is_shown(wse.roof) and roofline_panel.points["decode"].index_of("wse-3") is not None
    assert not roofline_panel.line_set.is_shown(roofline_panel.lines["mi300x"].roof)
    assert all(item.index_of("mi300x") is None for item in merged)


@shown_on_offscreen
def test_roofline_clicks_select_an_accelerator(engine, roofline_panel, qtbot):
    from PySide6.QtCore import QPointF

    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    render(qtbot, roofline_panel)
    panel = roofline_panel
    for item, role in ((panel.points["decode"], None), (panel.points["prefill"], None), (panel.ridges, None),
                       (panel.targets, "roof"), (panel.targets, "tier")):
        with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
            click_spot(item, "mi300x", role)
        assert blocker.args == ["mi300x"]
    with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
        click_line(panel.line_set, panel.lines["mi300x"].roof)
    assert blocker.args == ["mi300x"]
    # Away from every line, a click is left to the plot.
    assert panel.line_set.key_at(QPointF(-5.0, 8.0)) is None
    legend = roofline_panel.legend
    with qtbot.waitSignal(roofline_panel.accelerator_selected) as blocker:
        click = FakeClick(legend.rows[0].rect.center())
        legend.mouseClickEvent(click)
    assert blocker.args == ["h100-sxm"] and click.accepted
    # Between the rows and the legend's edge, a click is left to the plot.
    beside = FakeClick(legend.rows[-1].rect.bottomRight() + QPointF(0.0, 5.0))
    legend.mouseClickEvent(beside)
    assert not beside.accepted


def test_roofline_selection_highlights(engine, roofline_panel):
    roofline_panel.update_frame(make_frame(engine, ("mi300x", "h100-sxm", "b200")))
    roofline_panel.set_selected("mi300x")
    chosen, other = roofline_panel.lines["mi300x"], roofline_panel.lines["h100-sxm"]
    line_set = roofline_panel.line_set
    assert line_set.pen(chosen.roof).widthF() > line_set.pen(other.roof).widthF()
    assert line_set.z(chosen.roof) > line_set.z(other.roof) > line_set.z(other.tier(0))
    for item in roofline_panel.points.values():
        # Larger, and drawn last (on top of the others' points).
        assert item.spot_style(spot_index(item, "mi300x"), "size") > item.spot_style(spot_index(item, "h100-sxm"), "size")
        assert spot_index(item, "mi300x") == len(item.points()) - 1
    assert roofline_panel.legend.is_bold("mi300x") and not roofline_panel.legend.is_bold("h100-sxm")
    # Another selection: sizes and order follow, the points stay where they were.
    before = roofline_panel.plotted()
    roofline_panel.set_selected("h100-sxm")
    decode = roofline_panel.points["decode"]
    assert spot_index(decode, "h100-sxm") == len(decode.points()) - 1
    assert decode.spot_style(spot_index(decode, "mi300x"), "size") < decode.spot_style(spot_index(decode, "h100-sxm"), "size")
    np.testing.assert_array_equal(roofline_panel.plotted()["decode_x"], before["decode_x"])
    assert line_set.pen(other.roof).widthF() > line_set.pen(chosen.roof).widthF()


def test_roofline_tips_say_phase_intensity_peak_share_and_bound(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"), batch=16)
    roofline_panel.update_frame(frame)
    result = engine.predict(frame.workspace.scenario)
    tip = tip_of_spot(roofline_panel.points["decode"], "h100-sxm")
    assert "NVIDIA H100" in tip and "decode" in tip
    assert f"{result.decode.operational_intensity:.3g} FLOP/byte" in tip
    share = result.decode.achieved_flops_per_s / frame.roofline("h100-sxm").peak_flops
    assert f"{share:.1%} of the BF16 peak" in tip
    assert f"bound: {result.decode.bound}" in tip
    assert "does not fit" not in tip
    prefill_tip = tip_of_spot(roofline_panel.points["prefill"], "h100-sxm")
    assert "prefill" in prefill_tip and f"bound: {result.prefill.bound}" in prefill_tip
    roof_tip = tip_of_spot(roofline_panel.targets, "h100-sxm", "roof")
    assert "HBM3" in roof_tip and "TFLOP/s" in roof_tip and "ridge" in roof_tip
    assert "MI300X" in tip_of_spot(roofline_panel.points["decode"], "mi300x")


def test_roofline_points_that_do_not_fit_are_hollow(engine, roofline_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"), model="llama-3.3-70b", tp=1)
    assert frame.output("h100-sxm").fits == 0 and frame.output("mi300x").fits == 1
    roofline_panel.update_frame(frame)
    drawn = roofline_panel.plotted()
    assert list(drawn["decode_hollow"]) == [True, False]
    assert list(drawn["prefill_hollow"]) == [True, False]
    assert np.all(np.isfinite(drawn["decode_y"]))  # drawn, not dropped
    tip = tip_of_spot(roofline_panel.points["decode"], "h100-sxm")
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
    decode = roofline_panel.points["decode"]
    spot = decode.points()[spot_index(decode, "h100-sxm")]
    view = roofline_panel.graphics
    scene_pos = decode.mapToScene(QPointF(spot.pos()))
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
    assert "does not fit" in tip_of_spot(sweep_panel.points, "h100-sxm")
    # Its dashed line is faded, yet drawn opaque (translucent dashes stroke ~3x slower): the
    # accelerator's colour at FADED_ALPHA over the canvas.
    from PySide6.QtGui import QColor

    from accelscope.gui.look.palette import colour_for
    from accelscope.gui.look.style import plot_colour
    from accelscope.gui.panels.sweep import FADED_ALPHA
    from accelscope.gui.plotkit.axes import opaque_over

    faded = QColor(plot_colour(colour_for("h100-sxm")))
    faded.setAlpha(FADED_ALPHA)
    dashed = sweep_panel.line_set.pen(("h100-sxm", "hypothetical")).color()
    assert dashed.alpha() == 255 and dashed == opaque_over(faded)
    # On an MI300X the weights fit; large batches overflow the KV cache and run in waves.
    waves = frame.sweep_output("mi300x").waves
    assert np.array_equal(drawn["state"][1], np.where(waves > 1, WAVES, FITS))
    assert (drawn["state"][1] == WAVES).any() and (drawn["state"][1] == FITS).any()
    assert drawn["hypothetical_segments"][1] == 0
    _x, _y, refs = sweep_panel.points.shown_spots()
    last = max((ref for ref in refs if ref.accelerator == "mi300x"), key=lambda ref: ref.index)
    assert last.index == len(frame.sweep_batches) - 1
    assert f"runs in {int(waves[-1])} waves" in sweep_panel.tip_for(last)


def test_sweep_tips_name_batch_latency_throughput_itl_ttft(engine, sweep_panel):
    frame = make_frame(engine, ("h100-sxm",), batch=16)
    sweep_panel.update_frame(frame)
    tip = tip_of_spot(sweep_panel.points, "h100-sxm")
    at_1 = engine.predict(frame.workspace.scenario.with_changes(batch=1))
    assert "NVIDIA H100" in tip and "batch 1" in tip
    assert f"{at_1.itl_s * 1e3:.3g} ms" in tip
    assert "end-to-end latency" in tip and "output tokens/s" in tip and "TTFT" in tip
    current = tip_of_spot(sweep_panel.current, "h100-sxm")
    assert "batch 16 (current)" in current


def sweep_scene_items(panel) -> list[int]:
    return [id(panel.line_set), id(panel.points), id(panel.current)]


def test_sweep_update_reuses_items_and_changes_data(engine, sweep_panel):
    shown = ("h100-sxm", "mi300x")
    sweep_panel.update_frame(make_frame(engine, shown, batch=8))
    lines = {a: sweep_panel.lines[a] for a in shown}
    kept = sweep_scene_items(sweep_panel)
    scene_items = len(sweep_panel.plot.items)
    before = sweep_panel.plotted()
    sweep_panel.update_frame(make_frame(engine, shown, batch=128))
    after = sweep_panel.plotted()
    assert np.all(after["current_y"] > before["current_y"])
    np.testing.assert_array_equal(after["y"], before["y"])  # the sweep does not depend on the batch
    sweep_panel.update_frame(make_frame(engine, shown, model="qwen3-32b", batch=128))
    assert not np.allclose(sweep_panel.plotted()["y"], after["y"])
    for accelerator in shown:
        assert sweep_panel.lines[accelerator] is lines[accelerator]
    assert sweep_scene_items(sweep_panel) == kept
    assert len(sweep_panel.plot.items) == scene_items


@shown_on_offscreen
def test_sweep_hides_accelerators_and_clicks_select(engine, sweep_panel, qtbot):
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x", "wse-3")))
    render(qtbot, sweep_panel)
    wse = sweep_panel.lines["wse-3"]
    with qtbot.waitSignal(sweep_panel.accelerator_selected) as blocker:
        click_spot(sweep_panel.points, "wse-3")
    assert blocker.args == ["wse-3"]
    with qtbot.waitSignal(sweep_panel.accelerator_selected) as blocker:
        click_spot(sweep_panel.current, "mi300x")
    assert blocker.args == ["mi300x"]
    with qtbot.waitSignal(sweep_panel.accelerator_selected) as blocker:
        click_line(sweep_panel.line_set, wse.curve)
    assert blocker.args == ["wse-3"]
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x")))
    assert list(sweep_panel.plotted()["accelerators"]) == ["h100-sxm", "mi300x"]
    assert not any(sweep_panel.line_set.is_shown(key) for key in wse.line_keys())
    assert sweep_panel.points.index_of("wse-3") is None and sweep_panel.current.index_of("wse-3") is None


def test_sweep_selection_highlights_and_labels_batches(engine, sweep_panel):
    frame = make_frame(engine, ("h100-sxm", "mi300x"))
    sweep_panel.update_frame(frame)
    sweep_panel.set_selected("mi300x")
    chosen, other = sweep_panel.lines["mi300x"], sweep_panel.lines["h100-sxm"]
    line_set = sweep_panel.line_set
    assert line_set.pen(chosen.curve).widthF() > line_set.pen(other.curve).widthF()
    assert line_set.z(chosen.curve) > line_set.z(other.curve)
    points = sweep_panel.points
    assert points.spot_style(spot_index(points, "mi300x"), "size") > points.spot_style(spot_index(points, "h100-sxm"), "size")
    # The selected accelerator's markers are drawn last, on top of the others'.
    _x, _y, refs = points.shown_spots()
    assert {ref.accelerator for ref in refs[-len(frame.sweep_batches):]} == {"mi300x"}
    assert spot_index(sweep_panel.current, "mi300x") == len(sweep_panel.current.points()) - 1
    label = sweep_panel.batch_labels[64]
    assert label.isVisible()
    column = list(frame.sweep_batches).index(64)
    x = frame.sweep_output("mi300x").e2e_latency_s[column]
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
    image = picture(panel)
    assert image.save(str(SHOTS / f"{which}-8-accelerators.png"))
    assert_shows(image, panel, plots=1, legends=1, accelerators=EIGHT)
    if which == "sweep":
        hard = make_frame(engine, EIGHT, model="llama-3.3-70b", batch=16)
        panel.update_frame(hard)
        panel.grab()
        image = picture(panel)
        assert image.save(str(SHOTS / "sweep-8-accelerators-llama-3.3-70b.png"))
        fitting = [a for a in EIGHT if np.asarray(hard.sweep_output(a).fits).any()]
        assert 0 < len(fitting) < len(EIGHT)  # in their colours only the curves of what fits at some batch
        assert_shows(image, panel, plots=1, legends=1, accelerators=fitting)


def test_panels_take_an_empty_selection(engine, roofline_panel, sweep_panel):
    roofline_panel.update_frame(make_frame(engine, ("h100-sxm",)))
    sweep_panel.update_frame(make_frame(engine, ("h100-sxm",)))
    empty = compute_frame(engine, Workspace(Scenario("llama-3.1-8b", "h100-sxm"), shown=()))
    for panel in (roofline_panel, sweep_panel):
        panel.update_frame(empty)
        assert len(panel.plotted()["accelerators"]) == 0
    assert not roofline_panel.line_set.is_shown(roofline_panel.lines["h100-sxm"].roof)
    assert len(roofline_panel.points["decode"].points()) == 0 and len(roofline_panel.ridges.points()) == 0
    assert not sweep_panel.line_set.is_shown(sweep_panel.lines["h100-sxm"].curve)
    assert len(sweep_panel.points.points()) == 0 and len(sweep_panel.current.points()) == 0
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

    from accelscope.gui.plotkit.points import LineSet

    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    roofline_panel.set_selected("h100-sxm")
    lines = count_calls(monkeypatch, LineSet, "set_line")
    set_together = []  # the lines given to each set_lines
    set_lines = LineSet.set_lines
    monkeypatch.setattr(LineSet, "set_lines", lambda self, many: (set_together.append(list(many)),
                                                                 set_lines(self, many))[1])
    rebuilt = count_calls(monkeypatch, pg.ScatterPlotItem, "setData")
    redrawn = count_calls(monkeypatch, pg.ScatterPlotItem, "invalidate")
    frame = make_frame(engine, EIGHT, batch=9)
    roofline_panel.update_frame(frame)
    roofline_panel.set_selected("h100-sxm")
    assert lines == [] and all(many == [] for many in set_together)  # the roofs and tiers do not depend on the batch
    assert rebuilt == []  # the points keep their styles: moved in place
    assert sorted(map(id, redrawn)) == sorted(map(id, roofline_panel.points.values()))  # not the ridges, targets
    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=9))  # a new frame, same numbers
    roofline_panel.set_selected("h100-sxm")
    assert len(redrawn) == 2 and lines == [] and rebuilt == []
    drawn = roofline_panel.plotted()
    for i, accelerator in enumerate(EIGHT):
        result = engine.predict(frame.workspace.scenario_on(accelerator))
        assert drawn["decode_x"][i] == pytest.approx(result.decode.operational_intensity, rel=1e-12)
        assert drawn["prefill_y"][i] == pytest.approx(result.prefill.achieved_flops_per_s / 1e12, rel=1e-12)
        for item in roofline_panel.points.values():
            assert_spot_is_at_its_data(item, accelerator)


def test_roofline_a_new_precision_redraws_every_roof_with_one_geometry_change(engine, roofline_panel, monkeypatch):
    """A precision or model change moves every roof and tier (~100 lines with every
    accelerator shown): they are set together and tell the scene and the view once, and each
    is drawn through its new roofline's corners, its tiers to their ends."""
    from accelscope.gui.plotkit.points import LineSet

    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    told = count_calls(monkeypatch, LineSet, "informViewBoundsChanged")
    for changes in ({"weight_precision": "fp8", "activation_precision": "fp8"}, {"weight_precision": "fp32",
                                                                               "activation_precision": "fp32"}):
        frame = make_frame(engine, EIGHT, **changes)
        told.clear()
        roofline_panel.update_frame(frame)
        assert len(told) == 1
        for accelerator in EIGHT:
            roof = frame.roofline(accelerator)
            lines = roofline_panel.lines[accelerator]
            x, y = roofline_panel.line_set.original(lines.roof)
            ridge = roof.main_slope.ridge_point(roof.peak_flops)
            np.testing.assert_allclose(x, [0.1, ridge, 1e5] if 0.1 < ridge < 1e5 else [0.1, 1e5], rtol=1e-12)
            np.testing.assert_allclose(y, [roof.attainable(v) / 1e12 for v in x], rtol=1e-12)
            others = [s for s in roof.slopes if s is not roof.main_slope]
            for n, slope in enumerate(others):
                tx, ty = roofline_panel.line_set.original(lines.tier(n))
                assert tx[-1] == pytest.approx(min(slope.ridge_point(roof.peak_flops), 1e5), rel=1e-9)
                np.testing.assert_allclose(ty, slope.bandwidth_Bps * tx / 1e12, rtol=1e-12)
                # the path drawn is the data's, in log10
                path = roofline_panel.line_set.view_path(lines.tier(n))
                np.testing.assert_allclose([path.elementAt(i).y for i in range(path.elementCount())],
                                           np.log10(ty), rtol=1e-12)


def test_roofline_hover_targets_move_in_place_when_the_roofs_change(engine, roofline_panel, monkeypatch):
    """A new precision moves every roof, its ridge and the tiers' ends: the hover targets along
    the lines keep their number and are moved, not made again (thousands of them with every
    accelerator shown), and still lie on their lines."""
    import pyqtgraph as pg

    roofline_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    count = len(roofline_panel.targets.shown_spots()[2])
    rebuilt = count_calls(monkeypatch, pg.ScatterPlotItem, "setData")
    for changes in ({"weight_precision": "fp8", "activation_precision": "fp8"}, {"batch": 1, "input_len": 8},
                    {"batch": 512, "input_len": 100_000}, {"kv_precision": "fp8"}):
        frame = make_frame(engine, EIGHT, **changes)
        roofline_panel.update_frame(frame)
        x, y, refs = roofline_panel.targets.shown_spots()
        assert len(refs) == count
        for accelerator in EIGHT:
            roof = frame.roofline(accelerator)
            along = [i for i, ref in enumerate(refs) if ref.accelerator == accelerator and ref.role == "roof"]
            np.testing.assert_allclose(y[along], [roof.attainable(v) / 1e12 for v in x[along]], rtol=1e-12)
    assert roofline_panel.targets not in rebuilt


def assert_spot_is_at_its_data(item, accelerator: str) -> None:
    """A spot moved in place is shown where its data says (log10 on log axes), carries its
    accelerator, and the view's bounds take it in."""
    index = spot_index(item, accelerator)
    xs, ys, _refs = item.shown_spots()
    x, y = xs[index], ys[index]
    spot = item.points()[index]
    assert (spot.pos().x(), spot.pos().y()) == pytest.approx((np.log10(x), np.log10(y)), rel=1e-12)
    low, high = item.dataBounds(0)
    assert low <= np.log10(x) <= high
    low, high = item.dataBounds(1)
    assert low <= np.log10(y) <= high


def test_sweep_a_batch_drag_leaves_the_curves_alone(engine, sweep_panel, monkeypatch):
    import pyqtgraph as pg

    from accelscope.gui.plotkit.points import LineSet, SpotRef

    sweep_panel.update_frame(make_frame(engine, EIGHT, batch=8))
    curves = count_calls(monkeypatch, LineSet, "set_line")
    set_at_once = []  # the number of lines each set_lines call set
    set_lines = LineSet.set_lines
    monkeypatch.setattr(LineSet, "set_lines", lambda self, lines: set_at_once.append(len(lines)) or set_lines(self, lines))
    line_set_changed = count_calls(monkeypatch, LineSet, "_changed")
    rebuilt = count_calls(monkeypatch, pg.ScatterPlotItem, "setData")
    redrawn = count_calls(monkeypatch, pg.ScatterPlotItem, "invalidate")
    frame = make_frame(engine, EIGHT, batch=9)
    sweep_panel.update_frame(frame)
    # The sweep does not depend on the current batch: no curve set, nor the lines' item touched.
    assert curves == [] and sum(set_at_once) == 0 and line_set_changed == [] and rebuilt == []
    assert redrawn == [sweep_panel.current]  # the current batches moved in place
    for accelerator in EIGHT:
        assert_spot_is_at_its_data(sweep_panel.current, accelerator)
        index = spot_index(sweep_panel.current, accelerator)
        assert sweep_panel.current.shown_spots()[0][index] == frame.output(accelerator).e2e_latency_s
        assert sweep_panel.current.points()[index].data() == SpotRef(accelerator, "current")
    sweep_panel.update_frame(make_frame(engine, EIGHT, model="qwen3-32b", batch=9))
    assert len(curves) + sum(set_at_once) == 2 * len(EIGHT)  # a new model: every curve and its dashed part
    drawn = sweep_panel.plotted()
    for i, accelerator in enumerate(EIGHT):
        scenario = sweep_panel.frame.workspace.scenario_on(accelerator)
        at_256 = engine.predict(scenario.with_changes(batch=256))
        column = list(drawn["batches"]).index(256)
        assert drawn["y"][i, column] == pytest.approx(at_256.throughput_output_tok_s, rel=1e-12)
        assert_spot_is_at_its_data(sweep_panel.points, accelerator)


def test_markers_reuse_their_rendered_symbols(engine, roofline_panel, sweep_panel):
    """Pens and brushes are made once: pyqtgraph renders a symbol once per pen and brush
    object, so new ones on every frame rendered it again and grew its symbol atlas."""
    for batch in range(2, 40):
        for panel in (roofline_panel, sweep_panel):
            panel.update_frame(make_frame(engine, EIGHT, batch=batch))
            panel.set_selected("mi300x" if batch % 2 else "h100-sxm")
    # At most one symbol per accelerator, state (fits, waves, does not fit) and size (selected or not).
    for item in (*roofline_panel.points.values(), sweep_panel.current):
        assert len(item.fragmentAtlas) <= 3 * 2 * len(EIGHT)
        assert len(item.fragmentAtlas) >= len(EIGHT)  # one symbol at least per accelerator: it can fail
    assert len(sweep_panel.points.fragmentAtlas) <= 3 * 2 * len(EIGHT)


@shown_on_offscreen
def test_roofline_hover_over_a_line_shows_its_tip(engine, roofline_panel, qtbot):
    """The hover targets along the lines are not painted, but the mouse still finds them."""
    from PySide6.QtCore import QPointF
    from PySide6.QtTest import QTest

    roofline_panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x"), batch=16))
    render(qtbot, roofline_panel)
    targets = roofline_panel.targets
    along = [i for i, ref in enumerate(targets.shown_spots()[2]) if ref.accelerator == "mi300x" and ref.role == "roof"]
    spot = targets.points()[along[len(along) // 2]]
    view = roofline_panel.graphics
    QTest.mouseMove(view.viewport(), view.mapFromScene(targets.mapToScene(QPointF(spot.pos()))))
    qtbot.waitUntil(lambda: "roofline" in roofline_panel.plot.vb.toolTip(), timeout=2000)
    assert "MI300X" in roofline_panel.plot.vb.toolTip()


def test_sweep_restyles_changed_points_in_place(engine, sweep_panel, monkeypatch):
    """A change that turns points from fitting to not fitting (same number of points)
    restyles those spots in place: the markers drawn say what the engine says."""
    import pyqtgraph as pg

    from accelscope.gui.panels.sweep import FITS, NO_FIT, WAVES

    shown = ("h100-sxm", "mi300x")
    sweep_panel.update_frame(make_frame(engine, shown, model="llama-3.1-8b"))
    rebuilt = count_calls(monkeypatch, pg.ScatterPlotItem, "setData")
    frame = make_frame(engine, shown, model="llama-3.3-70b", tp=1)
    sweep_panel.update_frame(frame)
    assert rebuilt == []  # restyled in place, not rebuilt
    drawn = sweep_panel.plotted()
    for i, accelerator in enumerate(shown):
        fits = frame.sweep_output(accelerator).fits
        waves = frame.sweep_output(accelerator).waves
        expected = np.where(fits == 0, NO_FIT, np.where(waves > 1, WAVES, FITS))
        np.testing.assert_array_equal(drawn["state"][i], expected)
    assert np.all(drawn["state"][0] == NO_FIT) and (drawn["state"][1] == FITS).any()
    # Every restyled spot has its symbol looked up again (pyqtgraph draws from that).
    assert np.all(sweep_panel.points.data["sourceRect"]["w"] > 0)
    for column in (0, len(frame.sweep_batches) - 1):
        index = sweep_panel.points.shown_spots()[2].index(sweep_panel._ref("h100-sxm", "sweep", column))
        assert sweep_panel.points.spot_style(index, "symbol") == "x"


def test_sweep_moves_its_points_in_place_when_only_their_places_change(engine, sweep_panel, monkeypatch):
    """A new prompt length moves every sweep point but changes neither which are drawn nor how:
    the points are moved, not set anew with every spot's style built and compared; a change
    that does restyle some (the weights no longer fit) still sets them."""
    from accelscope.gui.plotkit.points import Spots

    shown = ("h100-sxm", "mi300x")
    sweep_panel.update_frame(make_frame(engine, shown, input_len=1024))
    states_before = sweep_panel.plotted()["state"]
    set_anew = count_calls(monkeypatch, Spots, "set_spots")
    restyled = count_calls(monkeypatch, Spots, "set_styled_spots")
    moved = count_calls(monkeypatch, Spots, "move_spots")
    frame = make_frame(engine, shown, input_len=1040)
    sweep_panel.update_frame(frame)
    drawn = sweep_panel.plotted()
    np.testing.assert_array_equal(drawn["state"], states_before)  # the case: the same states
    assert sweep_panel.points not in set_anew + restyled and moved.count(sweep_panel.points) == 1
    for i, accelerator in enumerate(shown):
        np.testing.assert_allclose(drawn["x"][i], frame.sweep_output(accelerator).e2e_latency_s, rtol=1e-12)
        np.testing.assert_allclose(drawn["y"][i], frame.sweep_output(accelerator).throughput_output_tok_s,
                                   rtol=1e-12)
    sweep_panel.update_frame(make_frame(engine, shown, model="llama-3.3-70b"))  # H100 no longer holds it
    assert sweep_panel.points in restyled


@pytest.mark.parametrize("panel_fixture", ["roofline_panel", "sweep_panel"])
def test_legend_markers_have_their_accelerators_colours(request, panel_fixture, engine):
    from PySide6.QtGui import QColor

    from accelscope.gui.look.palette import colour_for

    panel = request.getfixturevalue(panel_fixture)
    panel.update_frame(make_frame(engine, ("h100-sxm", "mi300x", "b200")))
    legend = panel.legend
    assert [row.accelerator_id for row in legend.rows] == ["h100-sxm", "mi300x", "b200"]
    for row in legend.rows:
        assert row.colour == QColor(colour_for(row.accelerator_id))
        assert row.line_pen.color() == QColor(colour_for(row.accelerator_id))


@shown_on_offscreen
@pytest.mark.parametrize("selected", [None, "h100-sxm", "mi300x"])
def test_roofline_hover_on_a_decode_point_names_its_accelerator(engine, roofline_panel, qtbot, selected):
    """Hovering a decode point gives the point's tip, once, whatever lines or line targets lie
    under it, and the selected accelerator's enlarged point gives its tip too."""
    from PySide6.QtCore import QPointF
    from PySide6.QtTest import QTest

    shown = ("h100-sxm", "mi300x", "a100-80gb", "h200", "gaudi3", "b200")
    roofline_panel.update_frame(make_frame(engine, shown, batch=64))
    roofline_panel.set_selected(selected)
    render(qtbot, roofline_panel)
    decode = roofline_panel.points["decode"]
    view = roofline_panel.graphics
    for accelerator in shown:
        spot = decode.points()[spot_index(decode, accelerator)]
        roofline_panel.plot.vb.setToolTip("")
        QTest.mouseMove(view.viewport(), view.mapFromScene(decode.mapToScene(QPointF(spot.pos()))))
        name = engine.catalog.accelerators[accelerator].name
        qtbot.wait(300)
        print("ACC", accelerator, repr(roofline_panel.plot.vb.toolTip()[:80]))
        tip = roofline_panel.plot.vb.toolTip()
        assert tip.startswith(f"{name} — decode step"), tip  # the point, not a line
        assert "roofline" not in tip  # a line's tip does not win over the point's
        assert len(tip.split("\n\n")) == len(set(tip.split("\n\n")))  # nothing twice


# ---- the range the sweep holds ------------------------------------------------------------


def test_steady_range_holds_while_the_data_stays_inside_and_fills_enough_of_it():
    from accelscope.gui.plotkit.points import STEADY_FILL, STEADY_MIN_ROOM, STEADY_ROOM, steady_range

    assert (STEADY_ROOM, STEADY_MIN_ROOM, STEADY_FILL) == (0.08, 0.1, 0.7)  # the figures worked below
    # Set anew: a span of 2.5 decades gets 0.2 of a decade free on each side.
    assert steady_range(None, 1.0, 3.5) == pytest.approx((0.8, 3.7))
    # A short span gets the least room, a tenth of a decade.
    assert steady_range(None, 1.0, 1.2) == pytest.approx((0.9, 1.3))
    held = (0.8, 3.7)  # 2.9 decades
    assert steady_range(held, 0.9, 3.6) == held  # moved inside it
    assert steady_range(held, 1.0, 3.1) == held  # spans 2.1 of 2.9: 0.72 of it, above 0.7
    assert steady_range(held, 1.0, 3.0) == pytest.approx((0.84, 3.16))  # 2.0 of 2.9: too little, set anew
    assert steady_range(held, 0.7, 3.0) == pytest.approx((0.516, 3.184))  # left it below: set anew


def test_the_sweep_holds_its_range_while_the_curves_move_inside_it(engine, sweep_panel, qtbot):
    """Every point drawn lies within the view, and a change that keeps the curves inside the
    range leaves the range (and so the axes) as they were."""
    render(qtbot, sweep_panel)
    view = sweep_panel.plot.vb

    def assert_every_point_in_view() -> None:
        drawn = sweep_panel.plotted()
        (x_low, x_high), (y_low, y_high) = view.viewRange()
        for x, y in ((drawn["x"], drawn["y"]), (drawn["current_x"], drawn["current_y"])):
            placed = np.isfinite(x) & np.isfinite(y)
            assert placed.any()
            assert np.all((x_low <= np.log10(x[placed])) & (np.log10(x[placed]) <= x_high))
            assert np.all((y_low <= np.log10(y[placed])) & (np.log10(y[placed]) <= y_high))

    ranges = []
    for input_len in (1024, 1100, 1200, 64, 32768):
        sweep_panel.update_frame(make_frame(engine, EIGHT, input_len=input_len))
        sweep_panel.grab()  # the view auto-ranges as it paints
        assert_every_point_in_view()
        ranges.append(view.viewRange())
    assert ranges[1] == ranges[0] and ranges[2] == ranges[0]  # ~7% and ~17% longer prompts move the curves a little
    assert ranges[4] != ranges[0]  # 32x longer: the curves leave the range, which follows them


def test_lines_set_together_change_the_items_geometry_once(sweep_panel, monkeypatch):
    """Many lines set inside ``changes()`` tell the scene and the view once, at the end; the
    bounds then hold every line."""
    from PySide6.QtGui import QPen

    from accelscope.gui.plotkit.points import LineSet

    line_set = LineSet()
    sweep_panel.plot.addItem(line_set)
    told = count_calls(monkeypatch, LineSet, "informViewBoundsChanged")
    with line_set.changes():
        for i in range(10):
            line_set.set_line(i, [1.0, 10.0 ** (i + 1)], [2.0, 3.0], pen=QPen())
        assert told == []
    assert len(told) == 1
    assert line_set.dataBounds(0) == (0.0, 10.0)  # x from 1 to 1e10 on the log axis
    line_set.set_line(3, [1.0, 2.0], [2.0, 3.0])  # one line alone: told at once
    assert len(told) == 2


@pytest.mark.parametrize("connect", [
    [True, True, True, True, False],  # every point joined to the next (built the quicker way)
    [True, True, True, True, True],  # the last flag joins to nothing: the same line
    [True, False, True, True, False],  # a gap after the second point
    [False, True, False, False, False],  # one segment
    "all",
])
def test_a_line_set_path_joins_exactly_the_points_it_is_told_to(connect):
    """Each line's path moves to a point where it is not joined to the one before, and draws
    to it where it is, whichever way the path is built."""
    from PySide6.QtGui import QPainterPath, QPen

    from accelscope.gui.plotkit.points import LineSet

    x, y = np.array([1.0, 2.0, 4.0, 8.0, 16.0]), np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    line_set = LineSet()
    line_set.set_line("line", x, y, connect=np.array(connect) if isinstance(connect, list) else connect, pen=QPen())
    path = line_set.view_path("line")
    joined = [True] * 4 if connect == "all" else connect[:-1]
    elements = [path.elementAt(i) for i in range(path.elementCount())]
    kinds = [e.type for e in elements]
    expected = [QPainterPath.ElementType.MoveToElement] + [
        QPainterPath.ElementType.LineToElement if j else QPainterPath.ElementType.MoveToElement for j in joined]
    assert kinds == expected
    np.testing.assert_allclose([(e.x, e.y) for e in elements], np.column_stack([x, y]))


@shown_on_offscreen
def test_spots_set_by_style_are_the_spots_set_one_by_one(qtbot, monkeypatch):
    """set_styled_spots (a table of ways to draw and an index per spot) gives every spot the
    symbol, size, pen, brush, ref and place set_spots gives it from per-spot lists, and draws
    the same pixels: when the spots are made, restyled in place, and made again in another
    number; each spot's symbol is the atlas's for its style; nothing changed, nothing redrawn."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.points import SpotRef, Spots

    rng = np.random.default_rng(7)
    pens = [pg.mkPen(colour, width=width) for colour, width in (("r", 1), ("b", 2), ("g", 1))]
    brushes = [pg.mkBrush(colour) for colour in ("r", "w", "g")]
    styles = tuple((symbol, size, pens[i], brushes[i]) for size in (9.0, 12.0)
                   for i, symbol in enumerate(("o", "t", "x")))
    widgets, items = [], []
    for _ in range(2):
        widget = pg.PlotWidget()
        qtbot.addWidget(widget)
        widget.resize(300, 220)
        widget.setXRange(0, 1, padding=0.05)
        widget.setYRange(0, 1, padding=0.05)
        widget.hideAxis("left")
        widget.hideAxis("bottom")
        item = Spots(tip=None)
        widget.addItem(item)
        widgets.append(widget)
        items.append(item)
    one_by_one, by_style = items
    remade = count_calls(monkeypatch, pg.ScatterPlotItem, "setData")
    for n, round_ in ((30, "made"), (30, "restyled"), (17, "made again")):
        x, y = rng.uniform(0.05, 0.95, n), rng.uniform(0.05, 0.95, n)
        ids = rng.integers(0, len(styles), n)
        refs = [SpotRef(f"a{i}", "sweep", i) for i in range(n)]
        remade.clear()
        one_by_one.set_spots(x, y, refs, symbols=[styles[i][0] for i in ids], sizes=[styles[i][1] for i in ids],
                             pens=[styles[i][2] for i in ids], brushes=[styles[i][3] for i in ids])
        by_style.set_styled_spots(x, y, refs, ids, styles)
        assert (by_style in remade) == (round_ != "restyled")
        shown, expected = by_style.shown_spots(), one_by_one.shown_spots()
        np.testing.assert_array_equal(shown[0], expected[0])
        np.testing.assert_array_equal(shown[1], expected[1])
        assert all(a is b for a, b in zip(shown[2], expected[2], strict=True)) and len(shown[2]) == n
        assert [spot.data() for spot in by_style.points()] == refs
        for i, way in enumerate(ids):
            assert by_style.spot_style(i, "symbol") == styles[way][0]
            assert by_style.spot_style(i, "size") == styles[way][1]
            assert by_style.spot_style(i, "pen") is styles[way][2] and by_style.spot_style(i, "brush") is styles[way][3]
            assert tuple(by_style.data["sourceRect"][i]) == tuple(by_style.fragmentAtlas[[styles[way]]][0])
        images = [widget.grab().toImage() for widget in widgets]
        assert images[0] == images[1], round_
    redrawn = count_calls(monkeypatch, pg.ScatterPlotItem, "invalidate")
    by_style.set_styled_spots(x, y, refs, ids, styles)  # the same again
    assert redrawn == []
    with pytest.raises(ValueError, match="style ids from"):
        by_style.set_styled_spots(x, y, refs, np.full(len(x), len(styles)), styles)
    with pytest.raises(ValueError, match="one of each a spot"):
        by_style.set_styled_spots(x, y, refs[:-1], ids, styles)


@pytest.mark.parametrize("log", [True, False])
def test_a_line_set_sets_many_lines_as_it_sets_one(sweep_panel, log):
    """set_lines is set_line for many lines at once: each line's data, view points, extent,
    segments and path equal what set_line gives it, for whole, gapped, paired, unjoined, empty,
    one-point and unplaceable lines (NaN; zero on a log axis), on log and linear axes."""
    from PySide6.QtGui import QColor, QPen

    from accelscope.gui.plotkit.points import LineSet

    rng = np.random.default_rng(3)
    x = np.geomspace(1e-2, 1e3, 17)
    gaps = rng.random(17) > 0.3
    with_zero, with_nan = rng.random(17) + 0.1, rng.random(17) + 0.1
    with_zero[4], with_nan[9] = 0.0, np.nan
    entries = [
        ("whole", x, x ** 0.5, "all"),
        ("gapped", x, 3 * x ** 0.4, gaps),
        ("joined by flags", x, x ** 0.3, np.ones(17, dtype=bool)),
        ("unjoined", x, x ** 0.2, np.zeros(17, dtype=bool)),
        ("pairs", x, x ** 0.6, "pairs"),
        ("empty", [], [], "all"),
        ("one point", [2.0], [3.0], "all"),
        ("zero", x, with_zero, "all"),
        ("nan", x, with_nan, gaps),
        ("last", x[:5], x[:5] ** 2, np.array([True, False, True, True, False])),
    ]
    one_by_one, all_at_once = LineSet(), LineSet()
    for line_set in (one_by_one, all_at_once):
        sweep_panel.plot.addItem(line_set)
        line_set.setLogMode(log, log)
        for key, *_ in entries:
            line_set.set_line(key, [5.0, 6.0], [1.0, 2.0], pen=QPen(QColor(10, 20, 30)))  # drawn before
    for key, x_values, y_values, connect in entries:
        one_by_one.set_line(key, x_values, y_values, connect)
    all_at_once.set_lines(entries)
    for key, *_ in entries:
        one, many = one_by_one._lines[key], all_at_once._lines[key]
        np.testing.assert_array_equal(many.x, one.x)
        np.testing.assert_array_equal(many.y, one.y)
        assert many.extent == one.extent, key
        assert (many.path is None) == (one.path is None), key
        assert all_at_once.view_path(key) == one_by_one.view_path(key), key
        if one.extent is not None:
            np.testing.assert_array_equal(many.view_x, one.view_x)
            np.testing.assert_array_equal(many.view_y, one.view_y)
            np.testing.assert_array_equal(many.segments, one.segments)
            assert np.array_equal(many.path_connect, one.path_connect), key
    assert all_at_once.boundingRect() == one_by_one.boundingRect()
    placed = {key for key, *_ in entries if one_by_one._lines[key].extent is not None}
    assert {"whole", "gapped", "pairs", "last"} <= placed and "empty" not in placed and "nan" not in placed
    assert ("zero" in placed) == (not log)


def test_a_line_set_drawn_as_segments_looks_as_its_paths_do(sweep_panel, qtbot, monkeypatch):
    """Opaque lines are drawn as separate segments in device pixels (Qt strokes those ~3x
    faster than a wide polyline); the picture is the one the paths draw, to antialiasing's
    rounding, for solid, gapped, paired and wide lines; a dashed line keeps its dashes (their
    phase along the line may differ); translucent lines (whose overlapping segment ends would
    show) keep their paths."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPen

    from accelscope.gui.plotkit import points
    from accelscope.gui.plotkit.points import LineSet

    def pen(colour, width=2.0, style=Qt.PenStyle.SolidLine):
        made = QPen(QColor(*colour))
        made.setWidthF(width)
        made.setCosmetic(True)
        made.setStyle(style)
        return made

    line_set = LineSet()
    sweep_panel.plot.addItem(line_set)
    x = np.geomspace(1e-3, 10.0, 25)
    line_set.set_line("solid", x, 100 * x ** 0.5, pen=pen((30, 100, 200)))
    line_set.set_line("dashed", x, 50 * x ** 0.7, pen=pen((200, 120, 40), style=Qt.PenStyle.DashLine))
    line_set.set_line("wide", x, 20 * x ** 0.6, pen=pen((20, 150, 60), width=4.5))
    gaps = np.ones(25, dtype=bool)
    gaps[[5, 6, 15]] = False
    line_set.set_line("gapped", x, 10 * x ** 0.4, connect=gaps, pen=pen((120, 40, 160)))
    line_set.set_line("pairs", x, 5 * x ** 0.3, connect="pairs", pen=pen((90, 90, 90)))
    line_set.set_line("faint", x, 2 * x ** 0.5, pen=pen((200, 30, 30, 120)))
    sweep_panel.resize(1100, 800)
    sweep_panel.show()
    qtbot.waitExposed(sweep_panel)

    drawn_as_segments = []
    device_lines = LineSet._device_lines
    monkeypatch.setattr(LineSet, "_device_lines",
                        staticmethod(lambda line, scale: drawn_as_segments.append(line) or device_lines(line, scale)))

    def pictures() -> dict[str, np.ndarray]:
        """The plot with every line, and with the dashed one alone (as the pixels it changes)."""
        every = _channels(sweep_panel.graphics.grab().toImage())
        line_set.set_style("dashed", visible=False)
        without_dashes = _channels(sweep_panel.graphics.grab().toImage())
        line_set.set_style("dashed", visible=True)
        return {"without dashes": without_dashes, "dashes": np.abs(every - without_dashes).max(axis=-1) > 64}

    segmented = pictures()
    # Each opaque line, once a paint; the translucent one by its path.
    assert sorted(line_set.pen(key).color().alpha() for key in line_set.line_keys()) == [120] + [255] * 5
    assert len({id(line) for line in drawn_as_segments}) == 5
    # Whether a pen draws segments is found when the pen is set: a line given a translucent pen is drawn
    # by its path from then on, and by segments again with its opaque pen back.
    opaque = line_set.pen("solid")
    for restyled, segments in ((pen((30, 100, 200, 120)), 4), (opaque, 5)):
        line_set.set_style("solid", pen=restyled)
        drawn_as_segments.clear()
        sweep_panel.graphics.grab()
        assert len({id(line) for line in drawn_as_segments}) == segments
        assert (id(line_set._lines["solid"]) in {id(line) for line in drawn_as_segments}) == (segments == 5)
    drawn_as_segments.clear()
    monkeypatch.setattr(points, "PrimitiveArray", None)  # every line by its path
    drawn_as_segments.clear()
    line_set.update()
    as_paths = pictures()
    assert drawn_as_segments == []
    difference = np.abs(segmented["without dashes"] - as_paths["without dashes"])
    # Where two segments meet, their ends overlap and the antialiased edge pixels there are
    # blended twice (by up to ~60 of 255, a few pixels a joint: not seen at the plot's scale);
    # a misplaced or missing line would differ by ~200 along its whole length.
    joints = sum(len(line_set._lines[key].segments) - 1 for key in ("solid", "wide", "gapped"))
    assert 0 < difference.max() <= 96
    assert np.count_nonzero(difference.max(axis=-1) > 24) <= 6 * joints
    # The dashes: as much ink, along the same line (within a few pixels of the path's dashes).
    ink, path_ink = np.count_nonzero(segmented["dashes"]), np.count_nonzero(as_paths["dashes"])
    assert path_ink > 500 and abs(ink - path_ink) <= 0.15 * path_ink
    rows, columns = np.nonzero(segmented["dashes"])
    path_rows, path_columns = np.nonzero(as_paths["dashes"])
    for column in range(columns.min() + 10, columns.max() - 10, 40):
        near = np.abs(path_columns - column) <= 6
        here = np.abs(columns - column) <= 6
        if here.any() and near.any():
            assert abs(np.median(rows[here]) - np.median(path_rows[near])) <= 4


def _channels(image) -> np.ndarray:
    """An image's pixels, [row, column, channel], as signed integers."""
    return np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes()).astype(np.int16).reshape(
        image.height(), image.bytesPerLine() // 4, 4)


def test_roofline_title_names_accelerators_at_another_precision_as_the_legend_does(engine, catalog, roofline_panel):
    """Few are named (the legend's names, never catalog ids); many are counted, so the title
    stays a line and the plot does not move down at each change to and from FP32."""
    frame = make_frame(engine, ("h100-sxm", "groq-lpu"), weight_precision="fp32")
    roofline_panel.update_frame(frame)
    fallback = [roof.accelerator_id for roof in frame.rooflines if roof.compute_precision != "fp32"]
    assert fallback == ["groq-lpu"]  # no FP32 peak of its own: drawn at BF16
    assert str(roofline_panel.plotted()["title"]) == f"Roofline — FP32 ceilings; BF16 on {catalog.accelerators['groq-lpu'].name}"

    every = tuple(catalog.accelerators)
    frame = make_frame(engine, every, weight_precision="fp32")
    roofline_panel.update_frame(frame)
    fallback = [roof.accelerator_id for roof in frame.rooflines if roof.compute_precision != "fp32"]
    title = str(roofline_panel.plotted()["title"])
    assert len(fallback) > 2 and title == f"Roofline — FP32 ceilings; BF16 on {len(fallback)} accelerators"
    assert not any(accelerator_id in title for accelerator_id in every)
