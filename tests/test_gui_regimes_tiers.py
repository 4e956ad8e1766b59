"""The regimes and memory-tiers analysis tabs: what they draw equals the engine's regime grid
and offload sweeps, hover gives raw values with units, cells and points that do not fit are
marked (not dropped), the far-tier choice changes the curves, and the tables carry units.

Screenshots (a person should see): the regimes tab as a 19 x 8 heatmap, the paper's seven
accelerators first with its letter grades in a small grid to the right and a legend beneath
it; the memory-tiers tab with three rising slowdown curves, stars at the scenario's shares, a
green band at 15-30% and the largest-model bars beside.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from accelscope.engine.catalog.far_tiers import load_far_tiers
from accelscope.engine.catalog.regimes import load_regimes
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.units import grid_value
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.claims import heterogeneous_claim_check
from accelscope.engine.studies.regimes import regime_scores, regimes_table
from accelscope.engine.studies.tiering import (
    FALLBACK_TIER,
    OWN_TIER,
    own_far_tier,
    sweep_offload,
)
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.panels.regimes import RegimesPanel, score_text, zero_word
from accelscope.gui.panels.tiers import TiersPanel

SHOWN = ("h100-sxm", "mi300x", "wse-3", "groq-lpu")

# Hover shows a QToolTip; the offscreen platform cannot raise its window and says so.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


@pytest.fixture(autouse=True)
def _pyqtgraph_options():
    configure_pyqtgraph()


def frame_of(engine, shown=SHOWN, **scenario):
    defaults = {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "batch": 16}
    defaults.update(scenario)
    return compute_frame(engine, Workspace(Scenario(**defaults), shown=tuple(shown)))


def make_panel(qtbot, engine, cls, frame):
    panel = cls(engine.catalog, engine)
    qtbot.addWidget(panel)
    panel.resize(1500, 900)
    panel.show()
    qtbot.waitExposed(panel)
    panel.update_frame(frame)
    panel.refresh_now()
    return panel


# ---- regimes -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def definitions():
    return load_regimes()


@pytest.fixture
def regimes_panel(qtbot, engine):
    return make_panel(qtbot, engine, RegimesPanel, frame_of(engine))


def test_regime_scores_drawn_equal_the_engines(regimes_panel, engine, definitions):
    drawn = regimes_panel.plotted()
    ids = tuple(drawn["accelerators"])
    # Every accelerator of the catalog, the paper's graded seven first in its order.
    graded = tuple(definitions.paper_ratings)
    assert ids[: len(graded)] == graded
    assert sorted(ids) == sorted(engine.catalog.accelerators)
    grid = regime_scores(engine, ids)
    np.testing.assert_array_equal(drawn["scores"], grid.scores)
    np.testing.assert_array_equal(drawn["fits"], grid.fits)
    for a, _ in enumerate(ids):
        for r, _ in enumerate(grid.regimes):
            assert drawn["texts"][a, r] == score_text(grid.scores[a, r], bool(grid.fits[a, r]), grid.values[a, r],
                                                      grid.regimes[r].metric)
    # Each regime has a best at 1.00.
    assert all("1.00" in drawn["texts"][:, r] for r in range(len(grid.regimes)))
    assert tuple(np.array(ids)[drawn["shown"]]) == tuple(a for a in ids if a in SHOWN)


def test_the_papers_grades_are_drawn_beside(regimes_panel, definitions):
    drawn = regimes_panel.plotted()
    regime_ids = [r.id for r in definitions.regimes]
    assert drawn["paper"].shape == (len(definitions.paper_ratings), len(regime_ids))
    for row, accelerator in enumerate(definitions.paper_ratings):
        assert list(drawn["paper"][row]) == [definitions.paper_ratings[accelerator][r] for r in regime_ids]
    assert drawn["paper"][list(definitions.paper_ratings).index("groq-lpu"), regime_ids.index("long_context")] \
        == "Limited"


def hover_cell(qtbot, panel, kind, accelerator, regime_id):
    heatmap = panel.heatmap
    row = panel.row_ids.index(accelerator)
    column = [r.id for r in panel.study.regimes].index(regime_id)
    qtbot.mouseMove(heatmap, heatmap.cell_centre(kind, row, column))
    return heatmap.hover_text


def test_the_note_sets_the_graded_spread_beside_the_papers_claim(regimes_panel, engine):
    """The engine's best-over-worst per regime among the paper's graded accelerators, its
    smallest and largest, beside Sharma's "up to 3.7x"."""
    from accelscope.engine.studies.regimes import architecture_spreads, times_text

    graded = [a for a in regimes_panel.definitions.paper_ratings if a in regimes_panel.study.accelerators]
    spreads = architecture_spreads(regimes_panel.study, graded)
    low = min(spread.ratio for spread in spreads)
    high = max(spread.ratio for spread in spreads)
    note = regimes_panel.note.text()
    assert f"runs from {times_text(low)} (Single stream)" in note
    assert f"to {times_text(high)} (" in note and "up to 3.7×" in note


def test_hover_gives_the_metric_raw_value_unit_and_layout(qtbot, regimes_panel, engine):
    grid = regimes_panel.study
    cell = grid.cell("h100-sxm", "single_stream")
    text = hover_cell(qtbot, regimes_panel, "cell", "h100-sxm", "single_stream")
    assert f"{grid_value(cell.value)} ms" in text
    assert cell.metric_text in text
    assert f"TP {cell.tp} × PP {cell.pp}" in text
    assert f"{cell.score:.3f}" in text
    # The paper's grade where it has one.
    b200 = hover_cell(qtbot, regimes_panel, "cell", "b200", "single_stream")
    assert "paper's grade: Very Good" in b200
    paper = hover_cell(qtbot, regimes_panel, "paper", "groq-lpu", "long_context")
    assert "Limited" in paper and f"{grid.cell('groq-lpu', 'long_context').score:.3f}" in paper


def test_a_cell_that_cannot_run_is_marked_with_its_reason(qtbot, regimes_panel):
    grid = regimes_panel.study
    cell = grid.cell("groq-lpu", "multi_model")
    assert not cell.fits and cell.reason
    drawn = regimes_panel.plotted()
    row = list(drawn["accelerators"]).index("groq-lpu")
    assert drawn["texts"][row, grid.regime_index("multi_model")] == "—"
    assert not drawn["fits"][row, grid.regime_index("multi_model")]
    text = hover_cell(qtbot, regimes_panel, "cell", "groq-lpu", "multi_model")
    assert "cannot run" in text and cell.reason in text


def test_score_text_tells_a_tiny_score_from_a_metric_of_zero():
    assert score_text(0.5, True, 10.0, "ttft") == "0.50"
    assert score_text(0.004, True, 0.1, "peak_output_tokens") == "<0.01"
    assert score_text(0.0, True, 1e-300, "peak_output_tokens") == "<0.01"  # underflowed, but the value is positive
    assert score_text(0.0, True, 0.0, "requests_within_itl") == "slow"
    assert score_text(0.0, True, 0.0, "models_resident") == "full"
    assert score_text(0.0, False, 0.0, "requests_within_itl") == "—"


def test_a_cell_that_runs_with_a_metric_of_zero_says_why(qtbot, regimes_panel):
    """Today mtia-v2 on moderate batch: one device holds Llama 3.1 8B, but its ITL at batch 1 is
    over the 40 ms target, so no batch counts and its requests/s is 0 (not a rounded score)."""
    grid = regimes_panel.study
    drawn = regimes_panel.plotted()
    zeros = [(a, r) for a, row in enumerate(grid.cells) for r, cell in enumerate(row) if cell.fits and cell.value <= 0]
    assert zeros, "the catalog has no regime cell that runs with a metric of 0 (was mtia-v2 on moderate_batch)"
    assert "0" not in drawn["texts"]  # a bare 0 reads as a rounded score
    for a, r in zeros:
        cell, regime = grid.cells[a][r], grid.regimes[r]
        assert cell.reason and cell.score == 0.0
        assert drawn["texts"][a, r] == zero_word(regime.metric)[0]
        assert drawn["fits"][a, r]  # not hatched: it runs
    assert set(regimes_panel.heatmap.content.zero_words) == {zero_word(grid.regimes[r].metric) for _, r in zeros}
    a, r = zeros[0]
    text = hover_cell(qtbot, regimes_panel, "cell", grid.accelerators[a], grid.regimes[r].id)
    assert zero_word(grid.regimes[r].metric)[0] in text and grid.cells[a][r].reason in text


def test_clicking_a_row_selects_its_accelerator(qtbot, regimes_panel):
    heatmap = regimes_panel.heatmap
    row = regimes_panel.row_ids.index("mi300x")
    with qtbot.waitSignal(regimes_panel.accelerator_selected, timeout=1000) as signal:
        qtbot.mouseClick(heatmap, Qt.MouseButton.LeftButton, pos=heatmap.cell_centre("cell", row, 3))
    assert signal.args == ["mi300x"]
    regimes_panel.set_selected("mi300x")
    assert heatmap.selected_row == row


def test_the_grid_is_not_recomputed_for_the_controls(qtbot, regimes_panel, engine):
    study = regimes_panel.study
    regimes_panel.update_frame(frame_of(engine, shown=("b200", "tpu-v7"), batch=64, input_len=4096))
    assert not regimes_panel.pending() and regimes_panel.study is study
    drawn = regimes_panel.plotted()
    assert set(np.array(drawn["accelerators"])[drawn["shown"]]) == {"b200", "tpu-v7"}


def test_the_regimes_table_is_the_engines_with_units(regimes_panel):
    table = regimes_panel.table()
    expected = regimes_table(regimes_panel.study)
    assert table == expected
    assert "single_stream: ttft [ms]" in table.headers
    assert "moe: score [fraction of best]" in table.headers


# ---- memory tiers ----------------------------------------------------------------------------


def panel_fractions(scenario):
    from accelscope.engine.studies.analysis import SWEEP_FRACTIONS

    return tuple(sorted({*SWEEP_FRACTIONS, float(scenario.offload), float(scenario.kv_offload)}))


def engine_sweep(engine, scenario, tier):
    fractions = panel_fractions(scenario)
    return sweep_offload(engine, scenario, tier, weight_fractions=fractions, kv_fractions=fractions)


def test_slowdown_curves_equal_sweep_offload(qtbot, engine):
    frame = frame_of(engine, offload=0.3, kv_offload=0.5)
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    assert panel.options() == {"far_tier": OWN_TIER}
    scenario = frame.workspace.scenario
    sweep = engine_sweep(engine, scenario, own_far_tier(engine, "h100-sxm"))
    drawn = panel.plotted()
    shares = 100.0 * np.array(panel_fractions(scenario))
    n = len(shares)
    for key in ("weights", "kv", "both"):
        np.testing.assert_allclose(drawn[f"{key}_share_pct"], shares, rtol=1e-12)
    np.testing.assert_allclose(drawn["weights_slowdown"], sweep.itl_slowdown[:, 0], rtol=1e-12)
    np.testing.assert_allclose(drawn["kv_slowdown"], sweep.itl_slowdown[0, :], rtol=1e-12)
    np.testing.assert_allclose(drawn["both_slowdown"], sweep.itl_slowdown[np.arange(n), np.arange(n)], rtol=1e-12)
    assert drawn["weights_slowdown"][0] == pytest.approx(1.0)
    assert drawn["weights_slowdown"][-1] > 10.0  # PCIe Gen5 against HBM3
    # The scenario's shares are marked on their curves.
    np.testing.assert_allclose(drawn["current_share_pct"], [30.0, 50.0])
    w, v = list(shares).index(30.0), list(shares).index(50.0)
    np.testing.assert_allclose(drawn["current_slowdown"], [sweep.itl_slowdown[w, 0], sweep.itl_slowdown[0, v]],
                               rtol=1e-12)
    assert f"{sweep.itl_slowdown[w, v]:.3g}×" in panel.current_text.text()


def test_points_that_do_not_fit_are_hollow_not_dropped(qtbot, engine):
    """Llama-2-70B at batch 16 does not fit one H100 until about half its weights are offloaded."""
    frame = frame_of(engine, model="llama-2-70b")
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    sweep = engine_sweep(engine, frame.workspace.scenario, own_far_tier(engine, "h100-sxm"))
    drawn = panel.plotted()
    n = len(sweep.weight_fractions)
    assert not sweep.fits[0, 0] and sweep.fits[-1, 0]
    np.testing.assert_array_equal(drawn["weights_filled"], sweep.fits[:, 0])
    np.testing.assert_array_equal(drawn["kv_filled"], sweep.fits[0, :])
    np.testing.assert_array_equal(drawn["both_filled"], sweep.fits[np.arange(n), np.arange(n)])
    assert len(drawn["kv_slowdown"]) == n  # every point drawn, none dropped
    assert "does not fit" in panel.current_text.text()


def test_changing_the_far_tier_changes_the_curves(qtbot, engine):
    frame = frame_of(engine)
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    before = panel.plotted()["weights_slowdown"]
    index = panel.combo.findData("grace-lpddr5x-c2c")
    assert index >= 0 and panel.combo.itemData(0) == OWN_TIER
    with qtbot.waitSignal(panel.view_option_changed, timeout=1000) as signal:
        panel.combo.setCurrentIndex(index)
    assert signal.args == ["far_tier", "grace-lpddr5x-c2c"]
    assert panel.study.tier_id == "grace-lpddr5x-c2c"
    after = panel.plotted()["weights_slowdown"]
    sweep = engine_sweep(engine, frame.workspace.scenario, load_far_tiers()["grace-lpddr5x-c2c"])
    np.testing.assert_allclose(after, sweep.itl_slowdown[:, 0], rtol=1e-12)
    assert after[-1] < before[-1] / 3  # NVLink-C2C is far faster than PCIe
    assert "Grace LPDDR5X" in panel.plotted()["capacity_rows"][1]
    # Presets: options() round-trips through set_options.
    panel.set_options({"far_tier": "nvme-gen5"})
    assert panel.options() == {"far_tier": "nvme-gen5"} and panel.study.tier_id == "nvme-gen5"
    assert panel.combo.currentData() == "nvme-gen5"
    with pytest.raises(ValueError, match="unknown far tier"):
        panel.set_options({"far_tier": "floppy"})


def test_the_largest_model_and_the_claim_are_the_engines(qtbot, engine):
    frame = frame_of(engine)
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    scenario = frame.workspace.scenario
    own = own_far_tier(engine, "h100-sxm")
    largest = engine_sweep(engine, scenario, own).largest
    drawn = panel.plotted()
    np.testing.assert_allclose(drawn["capacity_billion_params"],
                               [largest.device_only_params / 1e9, largest.with_tier_params / 1e9], rtol=1e-12)
    assert f"(×{largest.capacity_multiple:.3g})" in drawn["capacity_texts"][1]
    check = heterogeneous_claim_check(engine, scenario.model, scenario.accelerator,
                                      tiers=(own, *load_far_tiers().values()), batches=(scenario.batch,),
                                      input_len=scenario.input_len, output_len=scenario.output_len)
    assert check.sentence in panel.claim_text.text()
    assert f"{check.tiers[0].engine_slowdown[0, 0]:.3g}× slower" in panel.claim_text.text()


def test_a_device_without_its_own_far_tier_falls_back(qtbot, engine):
    frame = frame_of(engine, accelerator="tpu-v7")
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    assert own_far_tier(engine, "tpu-v7") is None
    assert panel.study.tier_id == FALLBACK_TIER and panel.options() == {"far_tier": OWN_TIER}
    assert panel.combo.findData(OWN_TIER) == -1 and panel.combo.currentData() == FALLBACK_TIER
    name = engine.catalog.accelerator("tpu-v7").name
    assert f"the {name} has no far tier of its own" in panel.tier_info.text()  # its name, not its id
    assert "tpu-v7" not in panel.tier_info.text()
    sweep = engine_sweep(engine, frame.workspace.scenario, load_far_tiers()[FALLBACK_TIER])
    np.testing.assert_allclose(panel.plotted()["weights_slowdown"], sweep.itl_slowdown[:, 0], rtol=1e-12)


def test_the_study_follows_the_scenario_not_the_shown_accelerators(qtbot, engine):
    panel = make_panel(qtbot, engine, TiersPanel, frame_of(engine))
    study = panel.study
    panel.update_frame(frame_of(engine, shown=("b200",)))
    assert not panel.pending() and panel.study is study
    panel.update_frame(frame_of(engine, batch=64))
    assert panel.pending()
    panel.refresh_now()
    assert panel.study.sweep.scenario.batch == 64


def test_the_workspace_far_tier_is_followed(qtbot, engine):
    if not hasattr(Workspace, "with_options"):
        pytest.skip("the workspace carries no view options")
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", batch=16), shown=SHOWN).with_options(
        far_tier="cxl3-x16")
    panel = make_panel(qtbot, engine, TiersPanel, compute_frame(engine, workspace))
    assert panel.options() == {"far_tier": "cxl3-x16"} and panel.study.tier_id == "cxl3-x16"


def test_the_tiers_table_has_units(qtbot, engine):
    frame = frame_of(engine)
    panel = make_panel(qtbot, engine, TiersPanel, frame)
    table = panel.table()
    assert table.headers[:2] == ("far_tier", "share_offloaded [%]")
    assert "weights_offloaded: itl_slowdown [x]" in table.headers
    assert "kv_offloaded: itl [ms]" in table.headers
    sweep = panel.study.sweep
    column = table.headers.index("weights_offloaded: itl [ms]")
    np.testing.assert_allclose([row[column] for row in table.rows], 1e3 * sweep.itl_s[:, 0], rtol=1e-12)
    assert len(table.rows) == len(sweep.weight_fractions)


def test_hidden_panels_wait_until_shown(qtbot, engine):
    panel = TiersPanel(engine.catalog, engine)
    qtbot.addWidget(panel)
    panel.update_frame(frame_of(engine))
    assert panel.study is None and not panel.pending()
    panel.set_options({"far_tier": "cxl2-expander-x16"})
    assert panel.study is None
    panel.show()
    qtbot.waitUntil(lambda: panel.study is not None, timeout=2000)
    assert panel.study.tier_id == "cxl2-expander-x16"


def test_the_tabs_curves_are_the_studys_curves():
    from accelscope.engine.studies.tiering import OFFLOAD_CURVES
    from accelscope.gui.panels.tiers import CURVES

    assert tuple(key for key, *_ in CURVES) == OFFLOAD_CURVES


def test_every_row_of_the_heatmap_shows_on_a_short_screen(qtbot, engine):
    """A projector in presentation mode left ~400 px for 38 rows and more: the rows past the
    bottom were cut off. The heat map asks for every row at the least row height; its page then
    scrolls rather than cutting rows."""
    from accelscope.gui.panels.regimes import MIN_ROW_PX
    from accelscope.gui.windows.pages import PageScroll

    panel = RegimesPanel(engine.catalog, engine)
    scroll = PageScroll(panel)
    qtbot.addWidget(scroll)
    scroll.resize(900, 500)
    scroll.show()
    qtbot.waitExposed(scroll)
    panel.update_frame(frame_of(engine))
    panel.refresh_now()
    qtbot.wait(20)
    heatmap = panel.heatmap
    geometry = heatmap.geometry_now()
    rows = len(heatmap.content.ids)
    assert rows > 30
    assert heatmap.minimumSizeHint().height() >= geometry.rows_top + rows * MIN_ROW_PX
    assert heatmap.height() >= heatmap.minimumSizeHint().height()
    last_row_bottom = geometry.row_top(rows - 1, heatmap.content.paper_rows) + geometry.row_height
    assert last_row_bottom <= heatmap.height()
    assert scroll.verticalScrollBar().maximum() > 0  # the page scrolls instead


def test_the_painted_heat_map_is_kept_until_what_it_shows_changes(qtbot, regimes_panel, engine):
    """A control change leaves the grid as it is: the heat map is drawn from its kept picture
    (painting ~400 cells took ~30 ms of every switch to the tab); a new selection repaints it."""
    heatmap = regimes_panel.heatmap
    regimes_panel.set_selected("h100-sxm")
    heatmap.repaint()
    kept = heatmap._painted
    assert kept is not None and not kept.isNull()
    regimes_panel.update_frame(frame_of(engine, batch=32))
    regimes_panel.set_selected("h100-sxm")
    heatmap.repaint()
    assert heatmap._painted is kept
    other = next(a for a in heatmap.content.ids if a != "h100-sxm")
    regimes_panel.set_selected(other)
    heatmap.repaint()
    assert heatmap._painted is not kept
    image = heatmap._painted.toImage()
    assert image.width() >= heatmap.width() and len({image.pixel(x, y) for x in range(0, image.width(), 7)
                                                     for y in range(0, image.height(), 7)}) > 20


@pytest.mark.parametrize("width", [1500, 900])
def test_the_claim_bands_name_crosses_no_model_line(qtbot, engine, width):
    """At the plot's right end the band's name lay across the 5x and 10x model lines (their
    dashes ran through its text on a 1280 px screen)."""
    panel = make_panel(qtbot, engine, TiersPanel, frame_of(engine))
    panel.resize(width, 700)
    qtbot.wait(50)
    label = panel.band_label.mapRectToScene(panel.band_label.boundingRect())
    assert label.width() > 0
    for line in panel.claim_lines:
        x = line.mapToScene(line.boundingRect().center()).x()
        assert not label.left() <= x <= label.right(), (line.label.toPlainText(), label, x)


@pytest.mark.parametrize("size", [(1500, 900), (660, 620), (660, 420)])
def test_the_model_lines_name_covers_no_capacity_text(qtbot, engine, size):
    """On a projector the model line's name ("Llama 3.1 8B: 8.03 B", on a white ground) hung
    over the top of the first bar's "37.8 B": the room above the rows was a fixed share of
    a row, less than the name's height on a short plot."""
    panel = make_panel(qtbot, engine, TiersPanel, frame_of(engine))
    panel.resize(*size)
    qtbot.wait(50)
    label = panel.model_line.label
    name = label.mapRectToScene(label.boundingRect())
    assert name.height() > 0 and label.toPlainText().startswith("Llama")
    boxes = [box for box in panel.capacity_texts.scene_boxes() if not box.isEmpty()]
    assert len(boxes) == 2
    for box in boxes:
        assert not name.intersects(box), (label.toPlainText(), name, box)
