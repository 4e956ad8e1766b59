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


def cut_numbers(panel) -> list[str]:
    return [f"{t.where}: {t.text!r} (for {t.whole!r}) at {t.box.getRect()}" for t in panel.shown_texts()
            if NUMBER.search(t.whole) and not t.fits]


def _projector_cases():
    """Every size, set and mode; the default suite takes the hardest (the smallest screen, the
    crowded set, presentation mode's large type) and the widest-but-shortest screen as shown at
    start, the other six run with ``-m slow``."""
    default = {((1024, 768), True, True), ((1280, 720), False, False)}
    for presenting in (False, True):
        for crowded in (False, True):
            for size in ((1024, 768), (1280, 720)):
                case_id = f"{'presentation mode' if presenting else 'normal'}-{'crowded' if crowded else 'default'} set-{size}"
                marks = () if (size, crowded, presenting) in default else (pytest.mark.slow,)
                yield pytest.param(size, crowded, presenting, id=case_id, marks=marks)


@pytest.mark.parametrize("size, crowded, presenting", list(_projector_cases()))
def test_no_number_on_any_tab_is_cut_on_a_projector(window_on, qtbot, settle_plots, size, crowded, presenting):
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
        settle_plots(panel)
        found += cut_numbers(panel)
    assert found == [], "\n".join(found)
