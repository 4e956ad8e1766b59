"""Every number every tab draws shows whole on a classroom projector's screen, with the
default accelerators and with a crowded set of long names: no number cut by the edge of its
plot or of the page (a page that needs more than the tab scrolls, so its numbers stay whole),
in normal and presentation mode."""

from __future__ import annotations

import re

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

NUMBER = re.compile(r"\d")
CROWDED = ("a100-40gb", "h100-sxm", "rtx-4090", "l4", "gh200", "max-1550", "wse-3", "groq-lpu", "mi300x",
           "ryzen-ai-max-395")


def settle(qtbot, panel) -> None:
    """Let the page take the size its plots now need (its canvases tell it of their least size
    once their plots are laid out; the page then grows, or scrolls), and lay it out."""
    from accelscope.gui.plotkit.bars import RowCanvas

    def least(canvas: RowCanvas) -> tuple[int, int]:
        # A size the panel sets itself (Scaling shares its width out) wins over the hint, as in a layout.
        hint, set_size = canvas.minimumSizeHint(), canvas.minimumSize()
        return (set_size.width() or hint.width(), set_size.height() or hint.height())

    def canvases_fit() -> bool:
        panel.grab()
        return all(canvas.width() >= least(canvas)[0] and canvas.height() >= least(canvas)[1]
                   for canvas in panel.findChildren(RowCanvas) if canvas.isVisibleTo(panel))

    qtbot.wait(30)
    qtbot.waitUntil(canvases_fit, timeout=2000)
    panel.grab()  # lays the page out, so positions are final


def cut_numbers(panel) -> list[str]:
    return [f"{t.where}: {t.text!r} (for {t.whole!r}) at {t.box.getRect()}" for t in panel.shown_texts()
            if NUMBER.search(t.whole) and not t.fits]


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
@pytest.mark.parametrize("crowded", [False, True], ids=["default set", "crowded set"])
@pytest.mark.parametrize("presenting", [False, True], ids=["normal", "presentation mode"])
def test_no_number_on_any_tab_is_cut_on_a_projector(window_on, qtbot, size, crowded, presenting):
    window = window_on(size)
    if presenting:
        window.set_presentation(True)
    workspace = window.controller.workspace  # the default scenario and accelerators
    if crowded:
        workspace = Workspace(Scenario(model="llama-3.3-70b", accelerator="h100-sxm", batch=64, input_len=4096,
                                       output_len=1024), shown=CROWDED)
    window.controller.set_workspace(workspace)
    window.controller.throttle.flush()
    found = []
    for view, panel in window.panels.items():
        window.show_view(view)
        if hasattr(panel, "refresh_now"):
            panel.refresh_now()
        settle(qtbot, panel)
        found += cut_numbers(panel)
    assert found == [], "\n".join(found)
