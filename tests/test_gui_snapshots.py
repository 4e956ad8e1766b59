"""A hidden tab's plots are drawn ahead while the controls rest (``plotkit.snapshot``), and the
first paint after the tab is shown copies that picture: the same pixels as drawing the scene,
never a picture of something the plot no longer shows."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


WINDOW = {"size": (1200, 800)}


@pytest.fixture
def window(window, qtbot):
    """The shared window (conftest), with the tabs whose pictures the tests use laid out."""
    for view in ("sweep", "energy", "roofline"):  # each shown once, so each is laid out
        window.show_view(view)
        qtbot.wait(20)
    return window


def snapshots(window, view: str) -> list:
    """The snapshots of the plots the tab's page shows (each of a panel's plots has one)."""
    panel = window.panels[view]
    return [snapshot for plot, snapshot in panel._snapshots.items() if plot.isVisibleTo(panel)]


def change_batch(window, batch: int) -> None:
    window.controls.batch_spin.setValue(batch)
    window.controller.throttle.flush()


def test_a_hidden_tab_is_shown_from_its_picture_drawn_ahead_with_the_same_pixels(window, qtbot):
    change_batch(window, 48)
    window.catch_up_now()
    (sweep,) = snapshots(window, "sweep")
    assert sweep.valid and sweep.used == 0
    drawn_ahead = sweep.pixmap.toImage()
    window.show_view("sweep")
    qtbot.wait(20)
    assert sweep.used == 1 and sweep.pixmap is None  # used once: later paints draw the scene
    # Drawn from the scene now, the plot looks exactly as the picture did.
    assert sweep.view.viewport().grab().toImage() == drawn_ahead


def test_a_change_after_the_picture_was_drawn_is_not_shown_from_it(window, qtbot):
    change_batch(window, 48)
    window.catch_up_now()
    (sweep,) = snapshots(window, "sweep")
    assert sweep.valid
    change_batch(window, 96)  # the sweep tab is behind again; shown before it catches up
    window.show_view("sweep")
    qtbot.wait(20)
    assert sweep.used == 0
    current = window.panels["sweep"].plotted()
    assert window.panels["sweep"].frame is window.controller.last_frame and current


def test_anything_that_changes_a_hidden_scene_drops_its_picture(window, qtbot):
    change_batch(window, 48)
    window.catch_up_now()
    (energy,) = snapshots(window, "energy")
    assert energy.valid
    energy.view.scene().items()[0].update()  # any item repainted
    qtbot.wait(10)
    assert not energy.valid


def test_a_picture_of_another_size_or_zoom_is_not_used(window, qtbot):
    change_batch(window, 48)
    window.catch_up_now()
    (sweep,) = snapshots(window, "sweep")
    assert sweep.valid
    window.set_presentation(True)  # the plots zoomed: the same scene, drawn larger
    qtbot.wait(20)
    assert not sweep.valid
    window.show_view("sweep")
    qtbot.wait(20)
    assert sweep.used == 0


def test_plots_are_drawn_ahead_once_the_controls_rest_and_a_tab_left_is_too(window, qtbot):
    from accelscope.gui.main_window import CATCH_UP_REST_MS

    def drawn_ahead(*views: str) -> bool:
        found = [snapshot for view in views for snapshot in snapshots(window, view)]
        return len(found) == len(views) and all(snapshot.valid for snapshot in found)

    change_batch(window, 48)
    assert not drawn_ahead("sweep", "energy")
    qtbot.waitUntil(lambda: drawn_ahead("sweep", "energy"), timeout=CATCH_UP_REST_MS * 30)
    window.show_view("sweep")  # roofline, left behind, is drawn ahead after the next rest
    assert not drawn_ahead("roofline")
    qtbot.waitUntil(lambda: drawn_ahead("roofline"), timeout=CATCH_UP_REST_MS * 30)


def test_a_scene_that_changes_as_it_is_drawn_is_drawn_ahead_once_a_rest(window, monkeypatch):
    """A picture dropped as soon as it is taken would have the catch-up draw it again at every
    turn of the event loop while the window is idle; it is drawn once a rest."""
    from accelscope.gui.plotkit.snapshot import ViewSnapshot

    taken = []
    original = ViewSnapshot.take

    def take_and_lose(self):
        taken.append(self)
        original(self)
        self.drop()

    monkeypatch.setattr(ViewSnapshot, "take", take_and_lose)
    change_batch(window, 48)
    window.catch_up_now()  # returns: each plot once
    assert taken and len(taken) == len(set(taken))
    window._drawn_ahead.clear()
    for _ in range(len(taken) + 3):
        window._catch_up()
    assert len(taken) == 2 * len(set(taken))
    assert not window._catch_up_timer.isActive() or window._snapshot_due(window._drawn_ahead) is None


def test_an_analysis_tab_is_drawn_ahead_after_a_change_and_its_study_waits_until_shown(window, qtbot):
    """A hidden analysis tab only notes a new frame (its study runs once it is shown), so its
    plots, which show its last study until then, are drawn ahead as a plot tab's are, and a
    switch to it copies them. A tab behind the frame is not drawn ahead: showing it would draw
    it anew and throw the picture away."""
    window.show_view("tiers")
    qtbot.wait(20)
    window.show_view("roofline")
    change_batch(window, 48)
    frame = window.controller.last_frame
    assert not any(snapshot.valid for snapshot in snapshots(window, "tiers"))
    assert window._panel_frames.get("tiers") is not frame
    assert all(snapshot is not window._snapshot_due(set()) for snapshot in snapshots(window, "tiers"))
    window.catch_up_now()
    tiers = window.panels["tiers"]
    assert window._panel_frames.get("tiers") is frame and tiers.study_frame is not frame  # not studied yet
    assert snapshots(window, "tiers") and all(snapshot.valid for snapshot in snapshots(window, "tiers"))
    window.show_view("tiers")
    qtbot.waitUntil(lambda: tiers.study_frame is frame, timeout=10_000)  # the study runs once shown
    assert all(snapshot.used == 1 for snapshot in snapshots(window, "tiers"))  # the switch copied the pictures


def test_a_plot_shown_again_repaints_only_what_a_change_touched(window, qtbot):
    """A listener to a scene's report of a change puts the scene on Qt's older update path, where
    the view repaints the whole of itself at nearly every change. The picture's listener is
    there only while the picture is held: once the tab is shown, a change of the prompt's
    length repaints the curves it moved and their axes, not the legend beside them."""
    from PySide6.QtCore import SIGNAL, QEvent, QObject
    from PySide6.QtGui import QRegion

    def listeners(scene) -> int:
        return scene.receivers(SIGNAL("changed(QList<QRectF>)"))

    window.show_view("roofline")
    change_batch(window, 48)
    window.catch_up_now()
    (sweep,) = snapshots(window, "sweep")
    scene = sweep.view.scene()
    assert sweep.valid and listeners(scene) > 0  # hidden, with its picture: a change must drop it
    window.show_view("sweep")
    qtbot.wait(20)
    assert sweep.used == 1 and listeners(scene) == 0

    class PaintedRegions(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.regions: list[QRegion] = []

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.regions.append(QRegion(event.region()))
            return False

    painted = PaintedRegions()
    sweep.view.viewport().installEventFilter(painted)
    window.controls.input_slider.setValue(window.controls.input_slider.value() // 2)
    window.controller.throttle.flush()
    qtbot.wait(20)
    sweep_panel = window.panels["sweep"]
    assert sweep_panel.frame is window.controller.last_frame and painted.regions  # the change was drawn
    legend = sweep.view.mapFromScene(sweep_panel.legend.sceneBoundingRect()).boundingRect()
    assert not any(region.intersects(legend) for region in painted.regions)


def plot_sizes(window, view: str) -> list[tuple[int, int]]:
    import pyqtgraph as pg

    panel = window.panels[view]
    return [plot.size().toTuple() for plot in panel.findChildren(pg.GraphicsView) if plot.isVisibleTo(panel)]


def test_a_tab_never_shown_is_laid_out_and_drawn_ahead_at_the_size_it_is_shown_at(open_window, qtbot):
    """The tab widget sizes only the page it shows: a tab never shown kept its first 640x480,
    was drawn ahead at no size at all, and its first switch laid the page out and drew it whole
    (~22 ms at 1600x1000, against ~4 for the next). The rest lays hidden pages out first."""
    window = open_window(size=(1200, 800))
    shown = window.tabs.scroll_area(window.tabs.currentIndex())
    latency = window.panels["latency"]
    index = window.tabs.indexOf(latency)
    assert window.tabs.scroll_area(index).size() != shown.size()  # what the stacked layout leaves
    change_batch(window, 48)
    window.catch_up_now()
    assert window.tabs.scroll_area(index).geometry() == shown.geometry()
    assert window.tabs.hidden_page_out_of_size() is None  # every hidden page laid out
    qtbot.wait(20)
    assert window.tabs.hidden_page_out_of_size() is None  # and not due again once the events it posted are handled
    sizes_before = plot_sizes(window, "latency")
    (plot,) = snapshots(window, "latency")
    assert plot.valid and not latency.isVisible()
    drawn_ahead = plot.pixmap.toImage()
    window.show_view("latency")
    qtbot.wait(20)
    assert plot_sizes(window, "latency") == sizes_before  # showing it did not lay it out again
    assert plot.used == 1  # the switch copied the picture
    assert plot.view.viewport().grab().toImage() == drawn_ahead


def test_hidden_tabs_follow_a_resized_window_before_they_are_drawn_ahead(window, qtbot):
    window.show_view("roofline")
    qtbot.wait(20)
    window.resize(1000, 700)
    qtbot.wait(20)
    change_batch(window, 48)
    window.catch_up_now()
    (sweep,) = snapshots(window, "sweep")
    assert sweep.valid
    sizes_before = plot_sizes(window, "sweep")
    window.show_view("sweep")
    qtbot.wait(20)
    assert plot_sizes(window, "sweep") == sizes_before and sweep.used == 1


def test_a_hidden_page_is_laid_out_once_a_rest_whatever_its_layout_asks_next(window, monkeypatch):
    """A page whose layout kept asking for another size would otherwise be laid out at every
    turn of the event loop while the window is idle."""
    from accelscope.gui.windows.pages import PageTabs

    laid_out = []
    monkeypatch.setattr(PageTabs, "hidden_page_out_of_size",
                        lambda tabs, skip=frozenset(): next((i for i in (2, 3) if i not in skip), None))
    monkeypatch.setattr(PageTabs, "lay_out_hidden_page", lambda tabs, index: laid_out.append(index))
    window._rest_then_catch_up()
    for _ in range(6):
        window._catch_up()
    assert laid_out == [2, 3]
