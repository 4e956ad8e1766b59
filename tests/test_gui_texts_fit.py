"""Texts on the plots show whole: no number cut by an ellipsis or the edge of a plot, no tick
labels run together, and accelerators and models named as the legends name them, not by id.

Each panel lists the texts its plots draw and whether each shows whole (``Panel.shown_texts``);
the window is tried at a desk's size and a classroom projector's.
"""

from __future__ import annotations

import re

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace

# A desk's window, and the window as the app lays it out on a projector's 1024×768 screen (one
# dock, the other tabbed with it). With both docks opened side by side there, the tab is ~390 px
# and names, statuses and "×N" do not all fit: that case is in the note of issue 21, not here.
WINDOW_SIZES = [(1600, 1000), (1024, 768)]
# Rows whose statuses are long: weights that need TP or offload, a KV cache in waves, weights
# offloaded to a far tier, and a model hundreds of thousands of times an SRAM chip's memory.
CROWDED = ("a100-40gb", "h100-sxm", "rtx-4090", "l4", "gh200", "max-1550", "wse-3", "groq-lpu", "mi300x",
           "ryzen-ai-max-395")
NUMBER = re.compile(r"\d")

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def show(window, qtbot, view: str, workspace: Workspace) -> None:
    window.controller.set_workspace(workspace)
    window.controller.throttle.flush()
    window.show_view(view)
    qtbot.wait(30)
    window.panels[view].grab()  # lays the page out, so positions are final


def cut(texts) -> list[str]:
    return [f"{t.text!r} (for {t.whole!r}) at {t.box.getRect()}" for t in texts if NUMBER.search(t.whole)
            and not t.fits]


@pytest.mark.parametrize("size", WINDOW_SIZES)
@pytest.mark.parametrize("scenario", [
    {"model": "llama-3.3-70b", "batch": 64, "input_len": 4096, "output_len": 1024},
    {"model": "deepseek-v3", "batch": 256, "input_len": 8192, "output_len": 1024, "offload": 0.5},
])
def test_no_number_on_the_memory_tab_is_cut(open_window, window_on, qtbot, size, scenario):
    window = open_window(size=size) if size == (1600, 1000) else window_on(size)
    show(window, qtbot, "memory", Workspace(Scenario(accelerator="h100-sxm", **scenario), shown=CROWDED))
    panel = window.panels["memory"]
    texts = panel.shown_texts()
    statuses = [t for t in texts if t.whole in set(panel.plotted()["status_shown"])]
    assert len(statuses) == len(CROWDED)
    assert any(t.text.startswith("×") for t in texts)  # some rows are cut at 200%, with their multiple
    assert cut(texts) == [], (panel.canvas.width(), window.width(), panel.plot.vb.sceneBoundingRect())


def test_a_status_too_wide_for_its_column_is_brief_with_every_number_kept(open_window, qtbot):
    window = open_window(size=(1024, 768))
    show(window, qtbot, "memory", Workspace(Scenario(model="llama-3.3-70b", accelerator="h100-sxm", batch=64,
                                                     input_len=4096, output_len=1024), shown=CROWDED))
    drawn = window.panels["memory"].plotted()
    briefed = [(whole, shown) for whole, shown in zip(drawn["status"], drawn["status_shown"], strict=True)
               if whole != shown]
    assert briefed  # the projector's narrow tab cannot hold "does not fit — needs TP=… or …% offload" whole
    for whole, shown in briefed:
        assert len(shown) < len(whole)
        assert re.findall(r"[\d.,]+", shown) == re.findall(r"[\d.,]+", whole)


@pytest.mark.parametrize("width", [150, 260, 600])
@pytest.mark.parametrize("decades", [(0.0, 7.0), (1.0, 3.5), (0.05, 0.28)])
def test_log_axis_labels_never_run_together_and_a_short_axis_keeps_numbers(qtbot, width, decades):
    """Bars at log10(value) over seven decades in a narrow plot wrote "10100100010k100k1M10M";
    a range inside one decade (1.1 to 1.9) wrote no label at all."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.axes import LogValueAxis
    from accelscope.gui.plotkit.fit import axis_texts

    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(width, 120)
    plot = view.addPlot(axisItems={"bottom": LogValueAxis("bottom")})
    plot.setXRange(*decades, padding=0.0)
    view.show()
    qtbot.waitExposed(view)
    labels = axis_texts(plot.getAxis("bottom"))
    assert len(labels) >= 2, labels
    boxes = sorted((box for _text, box in labels), key=lambda box: box.left())
    assert all(a.right() < b.left() for a, b in zip(boxes, boxes[1:], strict=False)), labels
