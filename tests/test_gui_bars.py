"""The bar-chart panels (memory fit, latency & throughput, energy): what they draw equals the
engine's results, items are reused across frames, hover and click find the right row.

The PNGs saved to /tmp/accelscope-shots/ show every bundled accelerator; a person looking at them
should see one labelled row per accelerator (no overlapping labels), bars in each
accelerator's colour (memory: four part colours with a coloured outline), hatched bars where a
scenario does not fit, and legends above the plots, not over the data.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from pictures import assert_shows, picture
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage

from accelscope.engine.core import codes
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.units import compact
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.gui.look.palette import colour_for
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.panels.base import accelerator_label
from accelscope.gui.panels.energy import EnergyPanel
from accelscope.gui.panels.latency import LatencyPanel
from accelscope.gui.panels.memory import MemoryPanel, short_reason
from accelscope.gui.plotkit import axes, bars
from accelscope.gui.plotkit.text import _Texts

SHOTS = Path("/tmp/accelscope-shots")
SHOWN = ("h100-sxm", "mi300x", "wse-3", "groq-lpu")
PANELS = (MemoryPanel, LatencyPanel, EnergyPanel)
PLOTS = {MemoryPanel: 1, LatencyPanel: 3, EnergyPanel: 2}  # latency: TTFT, ITL, throughput; energy: per token, power

# Hover shows a QToolTip; the offscreen platform cannot raise its window and says so once.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture(autouse=True)
def _pyqtgraph_options():
    configure_pyqtgraph()


def frame_of(engine, shown=SHOWN, **scenario):
    defaults = {"model": "llama-3.1-8b", "accelerator": shown[0] if shown else "h100-sxm", "batch": 16}
    defaults.update(scenario)
    return compute_frame(engine, Workspace(Scenario(**defaults), shown=tuple(shown)))


def make_panel(qtbot, catalog, cls, frame=None, size=(1200, 800)):
    panel = cls(catalog)
    qtbot.addWidget(panel)
    panel.resize(*size)
    if frame is not None:
        panel.update_frame(frame)
    panel.grab()  # lays the widget out, so scene positions are final
    return panel


def predictions(engine, frame):
    return {a: engine.predict(frame.workspace.scenario_on(a)) for a in frame.accelerators}


def plot_items(panel) -> list:
    plots = [panel.plot] if isinstance(panel, MemoryPanel) else [p.plot for p in panel.plots]
    return [item for plot in plots for item in plot.items]


def row_scene_pos(panel, row: int):
    plot = panel.picker.plots[-1]
    x_low, x_high = plot.vb.viewRange()[0]
    return plot.vb.mapViewToScene(pg.Point(x_low + 0.1 * (x_high - x_low), row))


# ---- memory --------------------------------------------------------------------------------


def test_memory_bars_are_shares_of_usable_memory(qtbot, engine, catalog):
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    drawn = panel.plotted()
    assert list(drawn["accelerators"]) == list(SHOWN)
    assert list(drawn["rows"]) == [accelerator_label(catalog.accelerators[a]) for a in SHOWN]  # as legends name them
    for j, accelerator in enumerate(SHOWN):
        result = predictions(engine, frame)[accelerator]
        memory = result.memory
        if not result.fits:  # groq-lpu: cut at 200%
            continue
        usable = memory.usable_bytes
        near_weights = memory.weights_bytes - memory.weights_far_bytes
        assert drawn["weights_pct"][j] == pytest.approx(near_weights / usable * 100, rel=1e-9)
        assert drawn["kv_pct"][j] == pytest.approx(memory.kv_cache_bytes / usable * 100, rel=1e-9)  # none offloaded
        assert drawn["state_pct"][j] == memory.recurrent_state_bytes == 0.0  # Llama has no recurrent layers
        assert drawn["activations_pct"][j] == pytest.approx(memory.activation_bytes / usable * 100, rel=1e-9)
        assert drawn["overhead_pct"][j] == pytest.approx(memory.overhead_bytes / usable * 100, rel=1e-9)
        assert drawn["physical_pct"][j] == pytest.approx(memory.capacity_bytes / usable * 100, rel=1e-9)
        assert drawn["status"][j] == f"fits · max batch {memory.max_batch:,}"
    h100 = predictions(engine, frame)["h100-sxm"].memory
    assert drawn["weights_pct"][0] == pytest.approx(h100.weights_bytes / h100.usable_bytes * 100, rel=1e-9)


def test_memory_shows_a_hybrids_recurrent_state(qtbot, engine, catalog):
    """Nemotron-H 56B keeps its Mamba layers' fixed-size state beside a small KV cache (10
    attention layers of 118): the state has its own part of each bar, and the hover lists it."""
    frame = frame_of(engine, ("h200", "b200"), model="nemotron-h-56b", batch=8, weight_precision="fp8")
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    drawn = panel.plotted()
    for j, accelerator in enumerate(("h200", "b200")):
        memory = predictions(engine, frame)[accelerator].memory
        assert memory.recurrent_state_bytes == 8 * 912_605_184  # 54 layers' state, test_hybrid_physics
        assert drawn["state_pct"][j] == pytest.approx(memory.recurrent_state_bytes / memory.usable_bytes * 100,
                                                      rel=1e-9)
        total = (memory.weights_bytes - memory.weights_far_bytes + memory.kv_cache_bytes + memory.recurrent_state_bytes
                 + memory.activation_bytes + memory.overhead_bytes)
        assert drawn["total_pct"][j] == pytest.approx(total / memory.usable_bytes * 100, rel=1e-9)
    assert "recurrent state" in panel._tooltip(0)


def test_memory_clips_long_bars_and_writes_the_multiple(qtbot, engine, catalog):
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    drawn = panel.plotted()
    j = SHOWN.index("groq-lpu")
    memory = predictions(engine, frame)["groq-lpu"].memory
    total = (memory.weights_bytes - memory.weights_far_bytes + memory.kv_cache_bytes + memory.activation_bytes
             + memory.overhead_bytes)
    assert drawn["total_pct"][j] == pytest.approx(200.0)
    assert drawn["multiple"][j] == f"×{compact(total / memory.usable_bytes)}"
    assert drawn["multiple"][SHOWN.index("h100-sxm")] == ""


def test_memory_says_what_a_model_that_does_not_fit_needs(qtbot, engine, catalog):
    frame = frame_of(engine, model="llama-3.3-70b", batch=1)
    result = predictions(engine, frame)["h100-sxm"]
    assert not result.fits and result.tp_needed == 2
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    status = panel.plotted()["status"][0]
    assert status.startswith("does not fit — needs TP=2")
    assert f"or {math.ceil(result.offload_needed * 100 - 1e-9)}% offload" in status


def test_memory_warns_of_waves_when_the_kv_cache_overflows(qtbot, engine, catalog):
    frame = frame_of(engine, batch=1024, input_len=8192)
    result = predictions(engine, frame)["h100-sxm"]
    assert result.waves > 1
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    status = panel.plotted()["status"][0]
    assert status == f"KV cache overflows: runs in {result.waves} waves of {result.memory.resident_batch}"


def test_memory_names_a_layout_problem(qtbot, engine, catalog):
    frame = frame_of(engine, tp=2, ep=2)  # expert parallelism on a dense model
    code = int(frame.output("h100-sxm").fit_code)
    assert code == codes.FIT_EP_ON_DENSE_MODEL
    panel = make_panel(qtbot, catalog, MemoryPanel, frame, size=(1600, 800))
    assert panel.plotted()["status"][0] == "does not fit — " + short_reason(codes.FIT_REASONS[code])
    panel.resize(900, 600)  # the text column narrows: the status goes brief, not cut; hover gives it whole
    panel.grab()
    drawn = panel.plotted()["status_shown"][0]
    assert drawn == short_reason(codes.FIT_REASONS[code])
    assert "…" not in "".join(panel.plot.getAxis("right").drawn_labels())
    panel.picker.hover(row_scene_pos(panel, 0))
    assert codes.FIT_REASONS[code] in panel.picker.hover_text


def test_memory_notes_offloaded_weights(qtbot, engine, catalog):
    frame = frame_of(engine, shown=("h100-sxm",), model="llama-3.3-70b", batch=1, offload=0.5)
    far = predictions(engine, frame)["h100-sxm"].memory.weights_far_bytes
    assert far > 0
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    assert f"+ {far / 1e9:.1f} GB in host memory" in panel.plotted()["status"][0]
    panel.picker.hover(row_scene_pos(panel, 0))
    assert "offloaded to Host DDR5" in panel.picker.hover_text


def test_memory_counts_only_the_kv_cache_left_on_the_device(qtbot, engine, catalog):
    """Llama 3.1 8B on a GH200 with half the KV cache in Grace memory: the bar is what the engine
    keeps in device memory (57 of 92.8 GB usable, 61 %), not the whole cache (it drew 103 %)."""
    frame = frame_of(engine, shown=("gh200",), batch=16, input_len=32768, output_len=4096, kv_offload=0.5)
    result = predictions(engine, frame)["gh200"]
    memory = result.memory
    assert result.fits and memory.kv_cache_far_bytes == pytest.approx(memory.kv_cache_bytes / 2, rel=1e-12)
    # By hand from the engine's parts: near = weights + half the KV cache + activations + runtime.
    near = (memory.weights_bytes + memory.kv_cache_bytes / 2 + memory.activation_bytes + memory.overhead_bytes)
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    drawn = panel.plotted()
    total = sum(drawn[f"{part}_pct"][0] for part in ("weights", "kv", "state", "activations", "overhead"))
    assert total == pytest.approx(100 * near / memory.usable_bytes, rel=1e-9)
    assert total < 100.0 and drawn["status"][0].startswith("fits")
    assert drawn["kv_pct"][0] == pytest.approx(100 * memory.kv_cache_bytes / 2 / memory.usable_bytes, rel=1e-9)
    panel.picker.hover(row_scene_pos(panel, 0))
    assert "of KV cache offloaded to" in panel.picker.hover_text


@pytest.mark.parametrize("size", [(1000, 811), (1200, 1000)])
def test_memory_usable_words_stand_whole_above_the_first_row(qtbot, engine, catalog, size):
    """The words over the usable line hang above the first row, inside the plot, however
    many rows share its height (at 1280x720 with both docks a fixed 0.9 of a row cut their top)."""
    frame = frame_of(engine, shown=tuple(catalog.accelerators), model="llama-3.3-70b")
    panel = make_panel(qtbot, catalog, MemoryPanel, frame, size=size)
    view = panel.plot.vb.sceneBoundingRect()
    words = panel.usable_text.sceneBoundingRect()
    first_row_top = panel.plot.vb.mapViewToScene(pg.Point(0.0, -0.5)).y()
    assert view.top() <= words.top() + 1e-6 and words.bottom() <= first_row_top, (view, words, first_row_top)


def test_memory_hover_gives_gigabytes_capacity_and_max_batch(qtbot, engine, catalog):
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, MemoryPanel, frame)
    memory = predictions(engine, frame)["mi300x"].memory
    panel.picker.hover(row_scene_pos(panel, SHOWN.index("mi300x")))
    text = panel.picker.hover_text
    assert catalog.accelerators["mi300x"].name in text  # the name the legends use, not the id
    assert f"KV cache: {memory.kv_cache_bytes / 1e9:.2f} GB" in text
    assert f"usable: {memory.usable_bytes / 1e9:.2f} GB" in text
    assert f"{memory.capacity_bytes / 1e9:.2f} GB physical" in text
    assert f"largest batch that fits: {memory.max_batch:,}" in text


# ---- latency -------------------------------------------------------------------------------


def test_latency_bars_match_the_engine(qtbot, engine, catalog):
    frame = frame_of(engine, model="llama-3.3-70b", batch=8, tp=2)
    panel = make_panel(qtbot, catalog, LatencyPanel, frame)
    drawn = panel.plotted()
    results = predictions(engine, frame)
    for j, accelerator in enumerate(SHOWN):
        result = results[accelerator]
        assert drawn["ttft_ms"][j] == pytest.approx(result.ttft_s * 1e3, rel=1e-9)
        assert drawn["itl_ms"][j] == pytest.approx(result.itl_s * 1e3, rel=1e-9)
        assert drawn["throughput_system_tok_s"][j] == pytest.approx(result.throughput_output_tok_s, rel=1e-9)
        assert drawn["throughput_device_tok_s"][j] == pytest.approx(
            result.throughput_output_tok_s / result.devices, rel=1e-9)
        assert drawn["hatched"][j] == (not result.fits)
    assert results["h100-sxm"].devices == 2
    assert drawn["throughput_text"][0].endswith("/dev")


def test_latency_hover_says_does_not_fit(qtbot, engine, catalog):
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, LatencyPanel, frame)
    row = SHOWN.index("groq-lpu")
    panel.picker.hover(row_scene_pos(panel, row))
    assert "does not fit" in panel.picker.hover_text
    itl_ms = predictions(engine, frame)["groq-lpu"].itl_s * 1e3
    assert f"ITL: {compact(itl_ms)} ms" in panel.picker.hover_text


def test_log_axis_keeps_a_500x_range_readable(qtbot, engine, catalog):
    values = np.array([0.2, 3.0, 100.0])
    base, top = bars.log_base(values)
    widths = bars.log_bar_widths(values, base)
    assert base < math.log10(0.2) - 0.29
    assert np.all(widths > 0.25)  # even the shortest bar is a quarter of a decade long
    # Room for a 60 px text beside a bar in a 300 px plot: the longest bar ends 60 px short.
    right = bars.right_end_for_texts(base, base + widths, np.full(3, 60.0), 300.0)
    assert (top - base) / (right - base) * 300.0 == pytest.approx(240.0)
    axis = axes.LogValueAxis()
    decades = axis.tickValues(base, top, 400)[0][1]
    assert [axis.tickStrings([d], 1.0, 1.0)[0] for d in decades] == ["0.1", "1", "10", "100"]


# ---- energy --------------------------------------------------------------------------------


def test_energy_bars_match_the_engine_and_name_the_power_scope(qtbot, engine, catalog):
    shown = ("h100-sxm", "wse-3", "sn40l")
    frame = frame_of(engine, shown=shown)
    panel = make_panel(qtbot, catalog, EnergyPanel, frame)
    drawn = panel.plotted()
    results = predictions(engine, frame)
    for j, accelerator in enumerate(shown):
        assert drawn["power_W"][j] == pytest.approx(results[accelerator].power_W, rel=1e-9)
        assert drawn["tokens_per_J"][j] == pytest.approx(results[accelerator].tokens_per_joule, rel=1e-9)
    assert list(drawn["rows"]) == [accelerator_label(catalog.accelerators["h100-sxm"]),
                                   accelerator_label(catalog.accelerators["wse-3"]) + " (system)",
                                   accelerator_label(catalog.accelerators["sn40l"]) + " (system)"]
    assert list(drawn["accelerators"]) == list(shown)
    panel.picker.hover(row_scene_pos(panel, 1))
    text = panel.picker.hover_text
    assert "system-level" in text
    wse = results["wse-3"]
    assert f"prefill {wse.prefill.power_per_device_W / 1e3:.3g} kW" in text
    assert "energy per output token" in text
    panel.picker.hover(row_scene_pos(panel, 0))
    assert "device-level" in panel.picker.hover_text


def test_energy_never_shows_a_bar_that_does_not_fit_as_the_winner(qtbot, engine, catalog):
    shown = ("h100-sxm", "groq-lpu", "gc200", "tpu-v7")
    frame = frame_of(engine, shown=shown, batch=1)
    fits = frame.outputs.fits != 0
    tokens_per_joule = frame.outputs.tokens_per_joule
    # The case the panel must not mislead in: one chip of an accelerator that cannot hold the
    # model gives the most tokens per joule of all.
    assert not fits[int(np.argmax(tokens_per_joule))]
    panel = make_panel(qtbot, catalog, EnergyPanel, frame)
    drawn = panel.plotted()
    fitting = [a for a, fit in zip(shown, fits, strict=True) if fit]
    best = max(fitting, key=lambda a: tokens_per_joule[shown.index(a)])
    assert list(drawn["best"]) == [best] and frame.best_that_fits(tokens_per_joule) == best
    assert catalog.accelerators[best].name in panel.verdict.text()
    for j, accelerator in enumerate(shown):
        if fits[j]:
            assert drawn["tokens_per_J_text"][j] != "does not fit" and not drawn["hatched"][j]
            continue
        assert drawn["hatched"][j] and drawn["colours"][j] not in {colour_for(a) for a in shown}  # greyed
        assert drawn["tokens_per_J_text"][j] == drawn["power_text"][j] == "does not fit"
        assert catalog.accelerators[accelerator].name not in panel.verdict.text()
    assert "that do not fit left out" in panel.verdict.text()


def test_energy_names_no_best_when_nothing_fits(qtbot, engine, catalog):
    frame = frame_of(engine, shown=("groq-lpu", "gc200"), batch=1)
    assert not (frame.outputs.fits != 0).any()
    panel = make_panel(qtbot, catalog, EnergyPanel, frame)
    assert len(panel.plotted()["best"]) == 0 and "None of the accelerators shown fits" in panel.verdict.text()


# ---- all panels ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", PANELS)
def test_a_new_frame_changes_the_data_of_the_same_items(qtbot, engine, catalog, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine, batch=1))
    items = plot_items(panel)
    before = panel.plotted()
    panel.update_frame(frame_of(engine, batch=256))
    after = panel.plotted()
    assert [id(item) for item in plot_items(panel)] == [id(item) for item in items]
    changed = [key for key in before if before[key].dtype != object and not np.allclose(before[key], after[key])]
    assert changed


@pytest.mark.parametrize("cls", PANELS)
def test_clicking_a_row_selects_its_accelerator(qtbot, engine, catalog, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine))
    row = SHOWN.index("mi300x")
    scene_pos = row_scene_pos(panel, row)
    assert panel.picker.row_at(scene_pos) == row
    view_pos = panel.canvas.mapFromScene(scene_pos)
    with qtbot.waitSignal(panel.accelerator_selected, timeout=1000) as signal:
        qtbot.mouseClick(panel.canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(view_pos.x(), view_pos.y()))
    assert signal.args == ["mi300x"]


@pytest.mark.parametrize("cls", PANELS)
def test_selection_is_bold_and_outlined(qtbot, engine, catalog, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine))
    panel.set_selected("wse-3")
    row = SHOWN.index("wse-3")
    plot = panel.picker.plots[0]
    assert plot.getAxis("left").bold_row == row
    item = panel.outline if isinstance(panel, MemoryPanel) else next(iter(panel.plots[0].items.values()))
    widths = [pen.widthF() for pen in item.opts["pens"]]
    assert widths[row] == bars.SELECTED_OUTLINE_WIDTH
    assert max(w for i, w in enumerate(widths) if i != row) < bars.SELECTED_OUTLINE_WIDTH
    panel.set_selected(None)
    assert plot.getAxis("left").bold_row is None


@pytest.mark.parametrize("cls", PANELS)
def test_no_accelerators_shown(qtbot, engine, catalog, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine, shown=()))
    assert all(len(values) == 0 for values in panel.plotted().values())
    panel.update_frame(frame_of(engine))
    assert list(panel.plotted()["accelerators"]) == list(SHOWN)


@pytest.mark.parametrize("cls", PANELS)
@pytest.mark.parametrize("size", [(1200, 800), (800, 600)])
def test_texts_beside_bars_stay_inside_their_plot(qtbot, engine, catalog, cls, size):
    """Values (and memory's "×N") are written beside the bars; the axis leaves them room in
    pixels, also after the panel is resized."""
    frame = frame_of(engine, shown=tuple(catalog.accelerators), model="llama-3.3-70b", batch=8, tp=2, dp=2)
    panel = make_panel(qtbot, catalog, cls, frame, size=(1600, 900))
    panel.resize(*size)
    panel.grab()
    pools = [panel.multiples] if isinstance(panel, MemoryPanel) else [p.texts for p in panel.plots]
    checked = 0
    for pool in pools:
        view = pool.plot.vb.sceneBoundingRect()
        for text, box in zip(pool.texts(), pool.scene_boxes(), strict=True):
            if text:
                assert box.right() <= view.right() + 1.0, text
                assert box.left() >= view.left() - 1.0, text
                checked += 1
    assert checked


def test_texts_kept_boxes_follow_the_view(qtbot, engine, catalog):
    """The texts' boxes are kept between the bounds' query and the paint, and made again when
    the view's range moves or the texts change: a kept box never outlives its place."""
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, LatencyPanel, frame)
    panel.grab()
    pool = panel.ttft.texts
    before = [box.left() for box in pool.scene_boxes()]
    low, high = panel.ttft.plot.vb.viewRange()[0]
    panel.ttft.plot.setXRange(low, high + (high - low), padding=0.0)  # twice the span: texts move left
    panel.grab()
    after = [box.left() for box in pool.scene_boxes()]
    view = panel.ttft.plot.vb
    for row, (left, text) in enumerate(zip(after, pool.texts(), strict=True)):
        if text:
            point = view.mapViewToScene(pg.Point(*pool._places[row]))
            assert left == pytest.approx(point.x() - pool.anchor[0] * pool.item.width_px(text), abs=1e-6)
    assert after != before
    pool.set_texts(["a much longer text than before"] + pool.texts()[1:])
    assert pool.scene_boxes()[0].width() > pool.item.width_px("x")
    boxes = pool.scene_boxes()
    boxes[0].translate(100, 0)  # a caller's copy: the kept box is not moved
    assert pool.scene_boxes()[0].left() == pytest.approx(boxes[0].left() - 100)


@pytest.mark.parametrize("cls", (LatencyPanel, EnergyPanel))
def test_value_texts_sit_beside_their_bars(qtbot, engine, catalog, cls):
    """Each row's value is written just right of its longest bar, centred on the row, and
    says the value the engine computed."""
    frame = frame_of(engine)
    panel = make_panel(qtbot, catalog, cls, frame)
    for plot in panel.plots:
        ends = np.max([bars.bar_ends(item) for item in plot.items.values()], axis=0)
        texts, boxes = plot.texts.texts(), plot.texts.scene_boxes()
        assert len(texts) == len(frame.accelerators)
        for row, (text, box) in enumerate(zip(texts, boxes, strict=True)):
            assert text
            end = plot.plot.vb.mapViewToScene(pg.Point(ends[row], row))
            assert end.x() - 0.5 <= box.left() <= end.x() + 2 * bars.TEXT_GAP_PX
            assert box.center().y() == pytest.approx(end.y(), abs=1.0)
    first = panel.ttft if cls is LatencyPanel else panel.power
    value = frame.output(SHOWN[0]).ttft_s * 1e3 if cls is LatencyPanel else frame.output(SHOWN[0]).power_W
    expected = compact(value) if cls is LatencyPanel else f"{value / 1e3:.3g} kW" if value >= 1e3 else f"{value:.3g} W"
    assert first.texts.texts()[0] == expected


def _is_blank(image: QImage) -> bool:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    step = 7
    colours = {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}
    return len(colours) < 8


@pytest.mark.parametrize("cls", PANELS)
def test_panels_render(qtbot, engine, catalog, tmp_path, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine))
    path = tmp_path / f"{cls.__name__}.png"
    assert panel.grab().save(str(path))
    assert not _is_blank(QImage(str(path)))
    assert_shows(picture(panel), panel, plots=PLOTS[cls], accelerators=SHOWN)

    every = tuple(catalog.accelerators)
    assert len(every) >= 19
    frame = frame_of(engine, shown=every, batch=64)
    panel = make_panel(qtbot, catalog, cls, frame)
    panel.set_selected("h100-sxm")
    SHOTS.mkdir(parents=True, exist_ok=True)
    image = panel.grab()
    assert image.save(str(SHOTS / f"{cls.__name__.removesuffix('Panel').lower()}-19-accelerators.png"))
    assert not _is_blank(image.toImage())
    # In its own colour: every bar but the memory bar of the selected row (outlined in the
    # selection's colour) and the energy bars of what does not fit (hatched grey).
    fits = dict(zip(frame.accelerators, frame.outputs.fits != 0, strict=True))
    coloured = [a for a in every
                if not (cls is MemoryPanel and a == "h100-sxm") and (fits[a] or cls is not EnergyPanel)]
    # Besides what does not fit in memory (at most 4 here), the parts with no published compute
    # peak for BF16 (nor a wider format) have no energy to draw.
    no_peak = sum(int(frame.outputs.fit_code[j]) == codes.FIT_COMPUTE_UNPUBLISHED for j in range(len(every)))
    assert len(coloured) >= len(every) - 4 - (no_peak if cls is EnergyPanel else 0)
    assert_shows(picture(panel), panel, plots=PLOTS[cls], accelerators=coloured)


# ---- cost of an update, and the fast grid --------------------------------------------------


def count_calls(monkeypatch, cls, name: str) -> list:
    """Record each call of ``cls.name`` (on any instance) and let it through."""
    calls = []
    original = getattr(cls, name)

    def spy(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls


@pytest.mark.parametrize("cls", PANELS)
def test_a_frame_with_the_same_numbers_touches_nothing(qtbot, engine, catalog, monkeypatch, cls):
    panel = make_panel(qtbot, catalog, cls, frame_of(engine, shown=tuple(catalog.accelerators)))
    panel.set_selected("mi300x")
    before = panel.plotted()
    touched = []
    for item_cls, name in ((pg.BarGraphItem, "setOpts"), (_Texts, "set"), (pg.TextItem, "setText"),
                           (pg.AxisItem, "setTicks"), (pg.ViewBox, "setRange"), (pg.ScatterPlotItem, "setData")):
        touched += count_calls(monkeypatch, item_cls, name)
    panel.update_frame(frame_of(engine, shown=tuple(catalog.accelerators)))  # a new frame, same numbers
    panel.set_selected("mi300x")
    panel.set_selected("mi300x")
    assert touched == []
    after = panel.plotted()
    assert all(np.array_equal(before[key], after[key]) for key in before)


def test_a_new_selection_restyles_only_the_outlines(qtbot, engine, catalog, monkeypatch):
    panel = make_panel(qtbot, catalog, LatencyPanel, frame_of(engine))
    panel.set_selected("h100-sxm")
    changes = count_calls(monkeypatch, pg.BarGraphItem, "setOpts")
    panel.set_selected("wse-3")
    # Each bar item gets new pens, each selection band moves; nothing else.
    assert len(changes) == sum(len(plot.items) + 1 for plot in panel.plots)


def grid_plot(axis_class, size=(640, 420)):
    """A log plot with a grid on both axes (axes of the given class) and a thick red line."""
    widget = pg.GraphicsLayoutWidget()
    plot = widget.addPlot(axisItems={"left": axis_class("left"), "bottom": axis_class("bottom")})
    plot.setLogMode(True, True)
    plot.showGrid(x=True, y=True, alpha=0.25)
    values = np.geomspace(0.01, 5e4, 40)
    plot.plot(values, np.full(40, 10.0), pen=pg.mkPen("#CC3311", width=5))
    plot.setRange(xRange=(-2.3, 4.9), yRange=(-0.2, 2.5), padding=0)
    widget.resize(*size)
    return widget, plot


def test_grid_is_opaque_and_beneath_the_data(qtbot):
    """Grid lines take the opaque colour they would blend to over white, and lie beneath the
    data: where the red line crosses a grid line, the pixel is red."""
    from PySide6.QtGui import QColor

    widget, plot = grid_plot(axes.GridAxis)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    for name in ("left", "bottom"):
        assert plot.getAxis(name).zValue() < plot.vb.zValue()
    image = widget.grab().toImage()
    red = QColor("#CC3311").rgb()
    y = round(plot.vb.mapViewToScene(pg.Point(0.0, 1.0)).y())  # the line at 10 (log10 = 1)
    left = round(plot.vb.mapViewToScene(pg.Point(-2.0, 1.0)).x())  # the line's data: 0.01 …
    right = round(plot.vb.mapViewToScene(pg.Point(4.69, 1.0)).x())  # … 5e4
    inside = range(left + 3, right - 3)
    # Every pixel along the line is red: the vertical grid lines it crosses lie beneath it.
    assert all(image.pixelColor(x, y).rgb() == red for x in inside)
    # Away from the line, grid pixels are opaque greys, never translucent blends of the data.
    assert axes.opaque_over(QColor(0, 0, 0, 64)).alpha() == 255
    assert axes.opaque_over(QColor(0, 0, 0, 64)).red() == round(255 * (1 - 64 / 255))


@pytest.mark.parametrize("cls", PANELS)
def test_a_row_tool_tip_stays_while_the_pointer_rests(qtbot, engine, catalog, cls):
    """The row picker shows a row's tool tip on a mouse move; about a second later the view
    sends its own tool-tip event, which the scene answered by hiding it (no item there has a
    tool tip). The tip must still be shown after that event."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    panel = make_panel(qtbot, catalog, cls, frame_of(engine))
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.wait(50)  # the first turns of the event loop (they hide any tip left from before)
    view = panel.picker.widget
    scene_pos = row_scene_pos(panel, 1)
    panel.picker.hover(scene_pos)
    assert QToolTip.isVisible() and QToolTip.text() == panel.picker.hover_text
    local = view.mapFromScene(scene_pos)
    event = QHelpEvent(QEvent.Type.ToolTip, local, view.viewport().mapToGlobal(local))
    QApplication.sendEvent(view.viewport(), event)
    qtbot.wait(600)  # Qt hides a tip 300 ms after it is told to
    assert QToolTip.isVisible()
    assert QToolTip.text() == panel.picker.hover_text
    assert catalog.accelerators[SHOWN[1]].name in QToolTip.text()
    QToolTip.hideText()


@pytest.mark.parametrize("styles", ["per-bar pens and brushes", "per-bar brushes, no pen", "one pen, per-bar brushes"])
def test_bars_draw_on_the_screen_as_pyqtgraphs_picture_does(qtbot, styles):
    """bars.Bars draws its bars straight onto a raster painter; pyqtgraph records them into a
    picture and plays it. Both must give the same pixels: solid, hatched and outlined bars,
    the selected bar's wider outline, and a bar of zero width."""
    from PySide6.QtGui import QColor, QPainter, QTransform

    configure_pyqtgraph()
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    brushes = [bars.solid(colours[0]), bars.hatched(colours[1]), bars.solid(colours[2], 95),
               bars.hatched_light(colours[3], 95), bars.solid(colours[4])]
    pens = [bars.outline(c, selected=(i == 2)) for i, c in enumerate(colours)]
    options = {"x0": np.zeros(5), "width": np.array([3.0, 1.5, 0.0, 2.25, 4.0]), "y": np.arange(5.0),
               "height": 0.6, "brushes": brushes}
    if styles == "per-bar pens and brushes":
        options["pens"] = pens
    elif styles == "per-bar brushes, no pen":
        options["pen"] = pg.mkPen(None)
    else:
        options["pen"] = pg.mkPen("k", width=2)

    def drawn(item) -> np.ndarray:
        image = QImage(300, 200, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setTransform(QTransform.fromScale(61.3, 33.7) * QTransform.fromTranslate(10.4, 20.7))
        item.paint(painter)
        painter.end()
        return np.frombuffer(image.constBits(), np.uint8).reshape(200, 300, 4).copy()

    ours = drawn(bars.Bars(**options))
    theirs = drawn(pg.BarGraphItem(**options))
    assert (theirs != 255).any()  # something was drawn
    assert np.array_equal(ours, theirs)
