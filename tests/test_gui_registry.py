"""The tabs are registered once (gui/panels: PANELS), against the engine's view ids: a tab
added in one place and not the other fails here, as do a window, an export or a report that
would list the tabs on their own."""

from __future__ import annotations

from accelscope.engine.core.workspace import ANALYSIS_VIEWS, PLOT_VIEWS, VIEWS
from accelscope.gui.panels import _ENTRIES, PANELS
from accelscope.gui.panels.analysis import AnalysisPanel
from accelscope.gui.panels.base import Panel


def test_every_view_id_has_one_tab_and_every_tab_a_view_id():
    assert tuple(_ENTRIES) and set(_ENTRIES) == set(VIEWS)
    assert tuple(PANELS) == VIEWS  # the tab order is the engine's order of views
    assert all(entry.view == view for view, entry in PANELS.items())


def test_analysis_tabs_are_the_engines_analysis_views_and_run_studies():
    assert tuple(view for view, entry in PANELS.items() if entry.analysis) == ANALYSIS_VIEWS
    for view, entry in PANELS.items():
        assert issubclass(entry.panel, Panel)
        assert issubclass(entry.panel, AnalysisPanel) == (view not in PLOT_VIEWS), view


def test_tab_labels_are_short_and_distinct():
    labels = [entry.label for entry in PANELS.values()]
    assert len(set(labels)) == len(labels)
    assert all(0 < len(label) <= 20 for label in labels)


def test_the_window_shows_the_registered_tabs_in_order(window):
    tabs = window.tabs
    assert [tabs.tabText(i).replace("&&", "&") for i in range(tabs.count())] == [e.label for e in PANELS.values()]
    assert [tabs.tabToolTip(i) for i in range(tabs.count())] == [e.panel.title for e in PANELS.values()]
    assert [type(tabs.widget(i)) for i in range(tabs.count())] == [e.panel for e in PANELS.values()]
    assert list(window.panels) == list(PANELS)
