"""The "Will it run here?" tab.

It draws the engine's study (``studies.run_here``) for its device: one bar per model, by
name, in the study's order, hatched where more devices are needed; its table holds the same rows;
the device picker lists every accelerator by name under its group and defaults to the selected
one; hover says the numbers; a click makes the model the scenario's.

Screenshots (a person should see): a device line at the top, a header naming the device and
how many models fit, then green bars (fits), brown ones (fits at a lower precision, "FP8
weights" beside them) and red hatched ones ("8 devices"), the longest (fastest) first in each
colour, the scenario's model in bold on an amber band; a table of the same rows beneath.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, Qt

from accelscope.engine.catalog.groups import GROUP_LABELS, grouped
from accelscope.engine.core.scenario import Scenario, Workload
from accelscope.engine.core.units import compact
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.run_here import run_here
from accelscope.gui.look.style import configure_pyqtgraph
from accelscope.gui.panels.run_here import RunHerePanel

# Hover shows a QToolTip; the offscreen platform cannot raise its window and says so.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")

SHOWN = ("h100-sxm", "rtx-4090", "m4-max")
WINDOW = {"size": (1400, 900)}  # the main window of the tests that take ``window`` (conftest)


@pytest.fixture(autouse=True)
def _pyqtgraph_options():
    configure_pyqtgraph()


def frame_of(engine, **options):
    workspace = Workspace(Scenario("llama-3.1-8b", "h100-sxm", input_len=1024, output_len=256), shown=SHOWN,
                          view="run_here")
    return compute_frame(engine, workspace.with_options(**options) if options else workspace)


def make_panel(qtbot, engine, frame, size=(1200, 900)):
    panel = RunHerePanel(engine.catalog, engine)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    panel.update_frame(frame)
    panel.refresh_now()
    return panel


def row_scene_pos(panel, row: int):
    plot = panel.chart.plot
    x_low, x_high = plot.vb.viewRange()[0]
    return plot.vb.mapViewToScene(pg.Point(x_low + 0.1 * (x_high - x_low), row))


def test_the_bars_are_the_studys_models_by_name_in_its_order(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine))
    study = run_here(engine, "h100-sxm", Workload(input_len=1024, output_len=256))
    drawn = panel.plotted()
    assert drawn["device"][0] == "h100-sxm"
    assert list(drawn["models"]) == [row.model for row in study.rows]
    assert list(drawn["verdicts"]) == [row.verdict for row in study.rows]
    np.testing.assert_allclose(drawn["decode_tok_s"], [row.decode_tok_s for row in study.rows], rtol=1e-9)
    # Names, never ids, whole and on one line: a row may be 13 px high, where a name on two lines
    # ran into the next row's.
    assert list(drawn["labels"]) == [row.name for row in study.rows]
    assert [panel.chart.row_axis.drawn_lines(k) for k in range(len(study.rows))] == [[row.name] for row in study.rows]
    assert "Llama 3.3 Nemotron Super 49B v1" in list(drawn["table"][:, 0])
    # Hatched exactly where the model needs more devices than this one.
    assert list(drawn["hatched"]) == [row.verdict == "more_devices" for row in study.rows]
    llama = list(drawn["models"]).index("llama-3.1-8b")
    assert drawn["texts"][llama] == f"{compact(study.row('llama-3.1-8b').decode_tok_s)} tok/s · batch ≤ " \
                                    f"{study.row('llama-3.1-8b').max_batch:,}"
    assert drawn["bold_row"][0] == llama  # the scenario's model
    qwen = list(drawn["models"]).index("qwen2.5-72b")
    assert drawn["texts"][qwen].startswith("FP8 weights · ")


def test_the_table_holds_the_same_rows_and_numbers(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine, run_here_device="rtx-4090"))
    study = panel.study
    table = panel.plotted()["table"]
    assert list(table[:, 0]) == [row.name for row in study.rows]
    llama = [row.model for row in study.rows].index("llama-3.1-8b")
    assert list(table[llama, 1:5]) == ["fits", compact(study.row("llama-3.1-8b").decode_tok_s), "29", "as set"]
    qwen = [row.model for row in study.rows].index("qwen3-14b")
    assert list(table[qwen, [1, 4]]) == ["fits at a lower precision", "FP8 weights"]
    assert panel.table.item(llama, 0).font().bold() and not panel.table.item(qwen, 0).font().bold()


def test_the_device_picker_lists_every_device_by_name_under_its_group(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine))
    combo = panel.combo
    entries = [(combo.itemText(i), combo.itemData(i), bool(combo.model().item(i).flags() & Qt.ItemFlag.ItemIsEnabled))
               for i in range(combo.count())]
    assert entries[0] == ("Selected accelerator: NVIDIA H100 SXM5 80GB", "", True)
    assert combo.currentIndex() == 0
    expected = [(GROUP_LABELS[group], None, False) for group, _ in grouped(engine.catalog.accelerators.values())]
    assert [entry for entry in entries if not entry[2]] == expected  # headings: not choices
    devices = [(text.strip(), data) for text, data, enabled in entries[1:] if enabled]
    assert devices == [(a.name, a.id) for _, members in grouped(engine.catalog.accelerators.values()) for a in members]


@pytest.mark.parametrize("width", [700, 1200])
def test_the_device_picker_shows_its_choice_whole_where_the_row_has_room(qtbot, engine, width):
    """At its least width (30 characters) the closed picker cut "Selected accelerator: NVIDIA
    H100 SXM5 80GB" to "... SXM5 8", with the rest of its row empty."""
    panel = make_panel(qtbot, engine, frame_of(engine), size=(width, 700))
    combo = panel.combo
    for accelerator in ("", "h100-sxm", "gh200"):  # "": the selected accelerator's entry
        panel.set_device(accelerator)
        qtbot.wait(10)
        text_px = combo.fontMetrics().horizontalAdvance(combo.currentText())
        arrow_px = 24  # the drop-down arrow and the frame take at least this much beside the text
        row_px = combo.parentWidget().width()
        assert combo.width() >= min(text_px + arrow_px, row_px // 2), (combo.currentText(), combo.width(), text_px)


def test_picking_a_device_computes_it_and_tells_the_window(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine))
    with qtbot.waitSignal(panel.view_option_changed, timeout=1000) as signal:
        panel.set_device("m4-max")
    assert signal.args == ["run_here_device", "m4-max"]
    assert panel.plotted()["device"][0] == "m4-max"
    assert "Apple M4 Max" in panel.header.text()
    expected = run_here(engine, "m4-max", Workload(input_len=1024, output_len=256))
    np.testing.assert_allclose(panel.plotted()["decode_tok_s"], [row.decode_tok_s for row in expected.rows])
    # Back to the selected accelerator.
    panel.set_device("")
    assert panel.plotted()["device"][0] == "h100-sxm"


def test_a_presets_device_is_followed(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine, run_here_device="rtx-4090"))
    assert panel.combo.currentData() == "rtx-4090" and panel.device == "rtx-4090"
    assert panel.plotted()["device"][0] == "rtx-4090"
    assert "NVIDIA GeForce RTX 4090" in panel.header.text()
    assert f"of {len(engine.catalog.models)}</b> models" in panel.header.text()


def test_hover_says_the_numbers(qtbot, engine):
    panel = make_panel(qtbot, engine, frame_of(engine, run_here_device="rtx-4090"))
    models = list(panel.plotted()["models"])
    panel.picker.hover(row_scene_pos(panel, models.index("llama-3.1-8b")))
    text = panel.picker.hover_text
    row = panel.study.row("llama-3.1-8b")
    assert "Llama 3.1 8B on NVIDIA GeForce RTX 4090" in text
    assert "largest batch: <b>29</b>" in text and f"{compact(row.decode_tok_s)} tokens/s" in text
    panel.picker.hover(row_scene_pos(panel, models.index("llama-3.3-70b")))
    text = panel.picker.hover_text
    assert "does not fit" in text and "TP 8 (8 devices)" in text and "llama-3.3-70b" not in text


def test_clicking_a_bar_or_a_table_row_makes_the_model_the_scenarios(qtbot, window):
    window.show_view("run_here")
    panel = window.refresh_panel("run_here")
    panel.refresh_now()
    models = list(panel.plotted()["models"])
    row = models.index("qwen3-8b")
    scene_pos = row_scene_pos(panel, row)
    assert panel.picker.row_at(scene_pos) == row
    view_pos = panel.canvas.mapFromScene(scene_pos)
    qtbot.mouseClick(panel.canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(view_pos.x(), view_pos.y()))
    window.controller.throttle.flush()
    assert window.controller.workspace.scenario.model == "qwen3-8b"
    window.refresh_panel("run_here")
    assert panel.plotted()["bold_row"][0] == row
    # The table: a click on a row does the same.
    phi = models.index("phi-4")
    panel.table.scrollTo(panel.table.model().index(phi, 0))
    rect = panel.table.visualRect(panel.table.model().index(phi, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.controller.workspace.scenario.model == "phi-4"


def test_the_picked_device_is_kept_in_the_workspace(window):
    window.show_view("run_here")
    panel = window.refresh_panel("run_here")
    panel.set_device("dgx-spark")
    assert window.controller.workspace.option("run_here_device") == "dgx-spark"


def test_a_new_model_moves_the_bold_row_telling_the_table_once_a_row(qtbot, engine):
    """The scenario's model is the bold row; a new model moves it. The table is told of each
    row whose font changed once (told per item, it sized every column to its contents again
    at each of fourteen items, ~12 ms a model change)."""
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.core.workspace import Workspace

    panel = make_panel(qtbot, engine, frame_of(engine))
    rows = [row.model for row in panel.study.rows]
    told = []
    model = panel.table.model()
    def tell(first, last, _roles) -> None:
        told.append((first.row(), last.row()))

    model.dataChanged.connect(tell)
    workspace = Workspace(Scenario("qwen3-14b", "h100-sxm", input_len=1024, output_len=256), shown=SHOWN,
                          view="run_here")
    panel.update_frame(compute_frame(engine, workspace))  # the table's rows stay: its study is of the device
    model.dataChanged.disconnect(tell)
    llama, qwen = rows.index("llama-3.1-8b"), rows.index("qwen3-14b")
    bold = [index for index in range(panel.table.rowCount()) if panel.table.item(index, 0).font().bold()]
    assert bold == [qwen]
    assert all(panel.table.item(qwen, column).font().bold() for column in range(panel.table.columnCount()))
    assert sorted(told) == [(min(llama, qwen),) * 2, (max(llama, qwen),) * 2]
