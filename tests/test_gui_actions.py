"""The menus are declared as data (gui/actions.py): every declared action is bound to a window
method, and Help → Keyboard shortcuts lists, from the same table, what the built menus do."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from accelscope.gui.actions import MENUS, Action, Menu, plain, shortcut_rows
from accelscope.gui.panels import PANELS


def declared(items=MENUS) -> list[Action]:
    actions = []
    for item in items:
        if isinstance(item, Menu):
            actions += declared(item.items)
        elif isinstance(item, Action):
            actions.append(item)
    return actions


def test_every_declared_action_is_built_once(window):
    ids = [action.id for action in declared()]
    assert len(ids) == len(set(ids))
    assert set(window.qactions) == set(ids)
    assert {f"view.tab.{view}" for view in PANELS} <= set(ids)  # one View entry per registered tab


def test_the_shortcut_list_is_what_the_menus_do(window):
    built = []

    def walk(menu, path):
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu(), f"{path} → {plain(action.text())}")
            elif not action.shortcut().isEmpty():
                built.append((action.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
                              f"{path} → {plain(action.text())}"))

    for action in window.menuBar().actions():
        walk(action.menu(), plain(action.text()))
    assert shortcut_rows() == built


def test_a_view_shortcut_shows_its_tab(window):
    window.qactions["view.tab.energy"].trigger()
    assert window.tabs.currentWidget() is window.panels["energy"]
    assert window.controller.workspace.view == "energy"


def test_the_compare_action_pins_and_unpins_a(window):
    window.qactions["view.compare"].trigger()
    assert window.comparison.frame is window.controller.last_frame and window.qactions["view.compare"].isChecked()
    window.qactions["view.compare"].trigger()
    assert window.comparison.frame is None and not window.qactions["view.compare"].isChecked()
