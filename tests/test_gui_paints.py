"""A control change paints each plot of the visible tab once, and an analysis tab not at all
until its study runs.

pyqtgraph finishes a view's auto-range, its axes and text placement when the view is about to
paint; what that changes marks the plot dirty again, so without :meth:`Panel.prepare_paint`
Qt painted the whole plot a second time in 70-80% of the changes on the sweep and latency tabs
(the most expensive paints of an update). Painting is counted, not timed, so the check holds on
any machine.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from accelscope.engine.core.precision import PRECISIONS

CHANGES = 12
WINDOW = {"size": (1600, 1000), "every_accelerator": True}  # of the tests that take ``window`` (conftest)


def paints_per_change(window, qtbot, view: str) -> tuple[Counter, list]:
    """Paint events of the tab's plot viewports and of the tab itself over CHANGES control
    changes (each settled and painted as the event loop would), with the viewports."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from accelscope.engine.core.workspace import VIEWS
    from accelscope.gui.panels.analysis import AnalysisPanel

    class PaintCounter(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.paints: Counter = Counter()

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.paints[watched] += 1
            return False

    app = QApplication.instance()
    window.tabs.setCurrentIndex(VIEWS.index(view))
    panel = window.panels[view]
    if isinstance(panel, AnalysisPanel):
        panel.refresh_now()
    # The plots shown: a tab's hidden page (the energy tab's cost page) paints nothing until shown.
    viewports = [graphics.viewport() for graphics in panel.findChildren(pg.GraphicsView)
                 if graphics.isVisibleTo(panel)]
    # The tab's first paints and any layout pass they start are not counted. Wait until the
    # tab has been quiet for a few event-loop turns rather than for a fixed time: on a loaded
    # machine the first paint can come later than any fixed wait.
    settling = PaintCounter()
    for widget in (panel, *viewports):
        widget.installEventFilter(settling)
    quiet_turns = 0
    for _ in range(100):
        before = sum(settling.paints.values())
        qtbot.wait(30)
        quiet_turns = quiet_turns + 1 if sum(settling.paints.values()) == before else 0
        if quiet_turns == 4:
            break
    for widget in (panel, *viewports):
        widget.removeEventFilter(settling)
    assert quiet_turns == 4, f"{view}: the tab kept painting with no change made"

    counter = PaintCounter()
    for viewport in viewports:
        viewport.installEventFilter(counter)
    panel.installEventFilter(counter)
    controls = window.controls
    rng = random.Random(5)
    moves = [
        lambda: controls.batch_slider.setValue(rng.randint(0, controls.batch_slider.maximum())),
        lambda: controls.input_slider.setValue(rng.randint(0, controls.input_slider.maximum())),
        lambda: controls.output_slider.setValue(rng.randint(0, controls.output_slider.maximum())),
        lambda: controls.precision_combos["weight_precision"].setCurrentIndex(rng.randrange(len(PRECISIONS))),
        lambda: controls.parallel_spins["tp"].setValue(rng.choice((1, 2, 4, 8))),
    ]
    for _ in range(CHANGES):
        rng.choice(moves)()
        window.controller.throttle.flush()
        window.flush_explanation()
        if isinstance(panel, AnalysisPanel):
            panel.hold()  # the study waits for the controls to rest; not part of a change
        app.processEvents()
    for viewport in viewports:
        viewport.removeEventFilter(counter)
    panel.removeEventFilter(counter)
    return counter.paints, viewports


def paint_tally():
    """An event filter that counts the paint events of the widgets it is installed on (``paints``)."""
    from PySide6.QtCore import QEvent, QObject

    class PaintTally(QObject):
        paints = 0

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.paints += 1
            return False

    return PaintTally()


@pytest.mark.parametrize("view", ["roofline", "memory", "latency", "sweep", "energy"])
def test_a_change_paints_each_plot_once(window, qtbot, view):
    paints, viewports = paints_per_change(window, qtbot, view)
    assert viewports
    for viewport in viewports:
        # Nearly every change moves the data (a spin box set to its own value does not), so
        # the plot is painted; never twice for one change.
        assert CHANGES // 2 <= paints[viewport] <= CHANGES, f"{view}: {paints[viewport]} paints over {CHANGES} changes"


def test_a_change_paints_the_cost_page_once(window, qtbot):
    window.panels["energy"].show_page("cost")
    paints, viewports = paints_per_change(window, qtbot, "energy")
    assert len(viewports) == 1 and viewports[0] is window.panels["energy"].cost_page.canvas.viewport()
    assert CHANGES // 2 <= paints[viewports[0]] <= CHANGES, f"{paints[viewports[0]]} paints over {CHANGES} changes"


@pytest.mark.parametrize("view", ["scaling", "parallelism", "regimes", "tiers"])
def test_an_analysis_tab_is_not_repainted_while_its_study_waits(window, qtbot, view):
    paints, viewports = paints_per_change(window, qtbot, view)
    # Its content changes only when the study runs once the controls rest, so a change must
    # not repaint the page (a whole-page paint cost 4-9 ms per change).
    assert paints[window.panels[view]] == 0
    if view == "parallelism":
        return  # its EP/TP plot marks the current batch live, a small part of one plot
    for viewport in viewports:
        assert paints[viewport] == 0, f"{view}: {paints[viewport]} plot paints over {CHANGES} changes"


def test_roofs_are_kept_as_a_picture_but_exported_as_lines(window):
    """The roofline's lines change only with the precision, the shown accelerators or the
    view's scale, so they are cached as a device picture; an export (SVG above all) must
    still draw them as lines."""
    from PySide6.QtWidgets import QGraphicsItem

    from accelscope.gui.export.files import _export_mode

    panel = window.refresh_panel("roofline")
    cached = QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert panel.line_set.cacheMode() == cached
    with _export_mode(panel.figure_parts()):
        assert panel.line_set.cacheMode() == QGraphicsItem.CacheMode.NoCache
    assert panel.line_set.cacheMode() == cached
    # The sweep's curves change with nearly every control: drawn directly.
    assert window.refresh_panel("sweep").line_set.cacheMode() == QGraphicsItem.CacheMode.NoCache


def test_a_wrapped_label_answers_heights_as_qlabel_does_and_forgets_them_on_change(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel

    from accelscope.gui.plotkit.text import WrappedLabel

    text = ("<b>ghost: A (pinned)</b> — faint hollow markers are the pinned scenario's operating "
            "points, with a dotted line from each to the current scenario's.")
    label, plain = WrappedLabel(text), QLabel(text)
    plain.setWordWrap(True)
    for widget in (label, plain):
        widget.setTextFormat(Qt.TextFormat.RichText)
        qtbot.addWidget(widget)
    widths = (120, 240, 480, 960)
    assert [label.heightForWidth(w) for w in widths] == [plain.heightForWidth(w) for w in widths]
    narrow = label.heightForWidth(120)
    assert narrow > label.heightForWidth(960)  # the text wraps onto more lines when narrow

    # A longer text, a larger font and wider margins each change the heights: none is kept.
    for change in (lambda w: w.setText(text + " " + text),
                   lambda w: w.setFont(_scaled_font(w, 2.0)),
                   lambda w: w.setContentsMargins(20, 20, 20, 20)):
        before = [label.heightForWidth(w) for w in widths]
        change(label)
        change(plain)
        after = [label.heightForWidth(w) for w in widths]
        assert after == [plain.heightForWidth(w) for w in widths]
        assert after != before


def _scaled_font(widget, factor: float):
    font = widget.font()
    font.setPointSizeF(font.pointSizeF() * factor)
    return font


def test_the_cached_roofs_are_never_stale(window, qtbot):
    """After changes that move the roofs (precision, shown accelerators, selection, a resize)
    and changes that do not, the window shows exactly what drawing the lines afresh shows."""
    from PySide6.QtWidgets import QApplication, QGraphicsItem

    from accelscope.engine.core.workspace import VIEWS

    app = QApplication.instance()
    window.tabs.setCurrentIndex(VIEWS.index("roofline"))
    panel = window.panels["roofline"]
    controls = window.controls
    every = tuple(window.engine.catalog.accelerators)
    changes = [
        lambda: controls.batch_slider.setValue(controls.batch_slider.maximum() // 3),
        lambda: controls.precision_combos["weight_precision"].setCurrentIndex(2),
        lambda: controls.precision_combos["activation_precision"].setCurrentIndex(2),
        lambda: window.controller.set_shown(every[:7]),
        lambda: window.controller.select(every[3]),
        lambda: window.resize(1400, 900),
        lambda: controls.input_slider.setValue(controls.input_slider.maximum()),
    ]
    for change in changes:
        change()
        window.controller.throttle.flush()
        app.processEvents()
        shown = panel.graphics.grab().toImage()
        panel.line_set.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        fresh = panel.graphics.grab().toImage()
        panel.line_set.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        panel.graphics.grab()  # the picture is made again here, before the next change
        # Blending a cached picture rounds antialiased edge pixels by a unit or two, a few more
        # where two segments' ends overlap at a joint (one channel of one pixel by 5 was seen);
        # a stale picture would put whole lines elsewhere.
        assert _largest_channel_difference(shown, fresh) <= 8


def _largest_channel_difference(first, second) -> int:
    import numpy as np

    assert first.size() == second.size()

    def channels(image):
        return np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes()).astype(np.int16)

    return int(np.abs(channels(first) - channels(second)).max())


def test_the_explanation_follows_the_frame(window, qtbot, monkeypatch):
    """The explanation (~4-6 ms) is rebuilt after the window has painted the change's frame,
    not before it: the plots and controls reach the screen first."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from accelscope.engine.core.workspace import VIEWS
    from accelscope.gui.main_window import EXPLAIN_FALLBACK_MS, EXPLAIN_INTERVAL_MS

    window.tabs.setCurrentIndex(VIEWS.index("roofline"))
    qtbot.wait(EXPLAIN_INTERVAL_MS + 50)  # nothing pending; the next request is due at once
    window.flush_explanation()
    events: list[str] = []

    class Order(QObject):
        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                events.append("paint")
            return False

    order = Order()
    viewport = window.panels["roofline"].findChild(pg.GraphicsView).viewport()
    viewport.installEventFilter(order)
    rebuild = window.update_explanation
    monkeypatch.setattr(window, "update_explanation", lambda: (events.append("explanation"), rebuild()))
    before = window.explain_panel.text()
    window.controls.batch_spin.setValue(window.controls.batch_spin.value() * 2)
    assert "explanation" not in events  # asked for, not built inside the change
    # The window's next update request (or, if none comes, the fallback) brings it.
    QApplication.instance().processEvents()
    qtbot.waitUntil(lambda: "explanation" in events, timeout=EXPLAIN_FALLBACK_MS * 20)
    viewport.removeEventFilter(order)
    assert "paint" in events
    assert events.index("paint") < events.index("explanation"), events
    assert window.explain_panel.text() != before  # the new batch is in the text


def test_the_explanation_comes_even_when_nothing_is_painted(window, qtbot):
    """If no paint follows (nothing on screen changed), the explanation comes after a short wait."""
    from accelscope.gui.main_window import EXPLAIN_FALLBACK_MS

    window._explain_after_frame()
    assert window._explanation_due
    qtbot.waitUntil(lambda: not window._explanation_due, timeout=EXPLAIN_FALLBACK_MS * 20)


@pytest.mark.parametrize("view", ["latency", "energy", "sweep"])
def test_a_hidden_tab_brought_up_to_date_has_its_axes_drawn_before_it_is_shown(window, qtbot, view):
    """The hidden tabs catch up while the controls rest; their axes' ticks and labels are laid
    out then too, not in the switch to the tab (~3 ms of a bar tab's switch)."""
    import pyqtgraph as pg

    from accelscope.gui.plotkit.axes import axes_of

    panel = window.panels[view]
    for shown in (panel, window.panels["roofline"]):  # the tab has its size: it was shown before
        window.tabs.setCurrentWidget(shown)
        shown.grab()
        qtbot.wait(20)
    window.controls.model_combo.setCurrentIndex(window.controls.model_combo.currentIndex() + 1)
    window.controller.throttle.flush()
    window.catch_up_now()
    assert not panel.isVisible()
    axes = [axis for graphics in panel.findChildren(pg.GraphicsView) if graphics.isVisibleTo(panel)
            for axis in axes_of(graphics) if axis.isVisible()]
    assert len(axes) >= 2
    assert all(axis.picture is not None for axis in axes)
    laid_out = []

    def counted(axis, original):
        def generate(painter):
            laid_out.append(axis)
            return original(painter)
        return generate

    for axis in axes:
        axis.generateDrawSpecs = counted(axis, axis.generateDrawSpecs)
    window.tabs.setCurrentWidget(panel)
    panel.grab()
    qtbot.wait(20)
    assert laid_out == []


def test_a_change_that_widens_an_axis_paints_the_plot_once(window, qtbot):
    """A new prompt length moves the sweep's range, and its axis labels often take another
    width: the plot is laid out for it and the view's range fitted to the new width (its pixel
    padding) before the paint. Fitted only in the paint, the range moved again there and the
    plot was painted a second time (in 4 of 8 such changes). The left axis keeps the widest
    room its labels have needed, so the test gives it back before each change."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    window.show_view("sweep")
    qtbot.wait(50)
    plot = window.panels["sweep"].plot
    slider = window.controls.input_slider
    counter = paint_tally()
    plot_view = window.panels["sweep"].graphics
    plot_view.viewport().installEventFilter(counter)
    per_change, widened = [], 0
    rng = random.Random(11)
    axis = plot.getAxis("left")
    for _ in range(8):
        axis.textWidth = 0  # its room given back: laid out and painted before the change
        axis._updateWidth()
        app.processEvents()
        app.processEvents()
        before = axis.width()
        counter.paints = 0
        slider.setValue(rng.randint(0, slider.maximum()))
        window.controller.throttle.flush()
        window.flush_explanation()
        app.processEvents()
        app.processEvents()
        per_change.append(counter.paints)
        widened += axis.width() > before
    plot_view.viewport().removeEventFilter(counter)
    assert widened >= 4, "too few changes widened the axis: the check would see little"
    assert max(per_change) == 1, f"paints per change: {per_change}"


@pytest.mark.parametrize("view", ["energy", "sweep"])
def test_a_change_leaves_the_tabs_fixed_texts_unpainted(window, qtbot, view):
    """A change repaints what it changed: the window used to repaint the whole tab at every
    change, every caption and note on it with the plots (~0.3 ms a long caption)."""
    from PySide6.QtWidgets import QApplication

    from accelscope.engine.core.workspace import VIEWS

    app = QApplication.instance()
    window.tabs.setCurrentIndex(VIEWS.index(view))
    panel = window.panels[view]
    fixed = panel.header if view == "energy" else panel.note  # the sweep's note changes with the batch only
    qtbot.wait(200)
    assert fixed.isVisible() and fixed.text()

    counter = paint_tally()
    fixed.installEventFilter(counter)
    text = fixed.text()
    controls = window.controls
    for value in (300, 2000, 800, 5000):
        controls.input_spin.setValue(value)
        window.controller.throttle.flush()
        app.processEvents()
    fixed.removeEventFilter(counter)
    assert fixed.text() == text  # the case: its text did not change
    assert counter.paints == 0


def test_the_energy_verdict_keeps_its_height_whether_it_takes_one_line_or_two(window, qtbot):
    """The verdict names the most efficient accelerator: one line or two as the names go. Each
    change of its height moved the plots below it, and laid out and painted the whole page."""
    panel = window.panels["energy"]
    window.show_view("energy")
    qtbot.wait(100)
    verdict = panel.verdict
    width = verdict.width()
    one_line = verdict.heightForWidth(width)
    verdict.setText("Most tokens per joule: H100.")
    assert verdict.heightForWidth(width) == one_line
    verdict.setText("Most tokens per joule among those that fit: " + "a long accelerator name, " * 6 + "end.")
    two_lines = verdict.heightForWidth(width)
    assert two_lines == one_line  # held at two lines
    verdict.setText("Most tokens per joule among those that fit: " + "a long accelerator name, " * 20 + "end.")
    assert verdict.heightForWidth(width) > two_lines  # more than two still grows


def test_the_sweeps_left_axis_keeps_the_room_its_labels_needed(window, qtbot):
    """The throughput labels change width with the range ("50" to "100k"); the axis keeps the
    widest room it has needed, so the plot does not jump sideways (and is not laid out and
    its axes drawn again) whenever the widest label narrows."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    # GPUs alone, whose throughput range moves with the prompt (with the whole catalog, the
    # LP30's faded points hold the top of the axis at millions whatever the prompt).
    window.controller.set_shown(("a100-80gb", "h100-sxm", "b200", "mi300x", "rtx-4090"))
    window.controller.throttle.flush()
    window.show_view("sweep")
    qtbot.wait(50)
    axis = window.panels["sweep"].plot.getAxis("left")
    slider = window.controls.input_slider

    def widths() -> list[float]:
        rng = random.Random(3)
        seen = []
        for _ in range(10):
            slider.setValue(rng.randint(0, slider.maximum()))
            window.controller.throttle.flush()
            app.processEvents()
            seen.append(axis.width())
        return seen

    assert axis.style["autoReduceTextSpace"] is False
    held = widths()
    assert held == sorted(held)  # never narrower
    axis.setStyle(autoReduceTextSpace=True)  # pyqtgraph's own way, for the case
    axis.textWidth = 0
    given_back = widths()
    assert any(later < earlier for earlier, later in zip(given_back, given_back[1:], strict=False)), (held, given_back)


@pytest.mark.parametrize("view", ["sweep", "roofline", "latency", "memory", "energy", "tiers"])
def test_a_change_applies_the_selection_once_and_a_new_selection_is_drawn(window, qtbot, view):
    """A panel whose update draws the selection is given it before the update and not made to
    apply it again after (it placed the sweep's points and labels twice); one that does not
    gets it after, as before. Either way a selection that comes with the frame is drawn."""
    from PySide6.QtWidgets import QApplication

    window.show_view(view)
    panel = window.panels[view]
    QApplication.processEvents()
    calls = []
    original = panel._apply_selection

    def counted() -> None:
        calls.append(panel.selected)
        original()

    panel._apply_selection = counted
    controls = window.controls
    for batch in (4, 64, 16):
        calls.clear()
        before = panel.frame
        controls.batch_spin.setValue(batch)
        window.controller.throttle.flush()
        QApplication.processEvents()
        assert panel.frame is not before  # the change reached the panel
        if view in ("sweep", "roofline", "latency", "memory"):
            assert calls == [window.controller.workspace.selected]
        else:
            assert calls and calls[-1] == window.controller.workspace.selected
    other = next(a for a in window.controller.workspace.shown if a != window.controller.workspace.selected)
    window.controller.select(other)
    window.controller.throttle.flush()
    QApplication.processEvents()
    assert panel.selected == other
    if view == "sweep":
        lines = panel.lines[other]
        assert panel.line_set.pen(lines.curve).widthF() > panel.line_set.pen(panel.lines[
            next(a for a in panel.lines if a != other and panel.lines[a].visible)].curve).widthF()
    if view == "latency":
        assert panel.ttft.row_axis._bold_row == panel.frame.accelerators.index(other)


@pytest.mark.parametrize("view", ["memory", "latency", "energy"])
def test_a_change_on_a_bar_tab_repaints_one_rectangle(window, qtbot, view):
    """A change moves most rows' bars and texts: repainting the exact region of their many
    small rectangles drew every item under a clip of many rectangles, on Qt's slower path for
    lines and outlines; the bar canvas repaints their bounding rectangle instead."""
    from PySide6.QtCore import QEvent, QObject

    class Regions(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.rect_counts: list[int] = []  # the rectangles of each paint's region

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.rect_counts.append(event.region().rectCount())
            return False

    window.show_view(view)
    qtbot.wait(100)
    viewport = window.panels[view].canvas.viewport()
    regions = Regions()
    viewport.installEventFilter(regions)
    controls, rng = window.controls, random.Random(7)
    for _ in range(6):
        controls.input_slider.setValue(rng.randint(0, controls.input_slider.maximum()))
        window.controller.throttle.flush()
        qtbot.wait(10)
    viewport.removeEventFilter(regions)
    assert regions.rect_counts and set(regions.rect_counts) == {1}, regions.rect_counts
