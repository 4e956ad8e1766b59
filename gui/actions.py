"""The window's menus and keyboard shortcuts, declared as data (napari's qactions idea).

Each :class:`Action` names the window method it calls, by a dotted path from the window
(``"presets.open_dialog"``), so the menus read as a table, the Help → Keyboard shortcuts list
is made from the same table, and a menu entry is added in one place. :func:`install_menus`
builds the QActions and binds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from .look.display import THEMES
from .panels import PANELS

Shortcut = QKeySequence.StandardKey | str | None


@dataclass(frozen=True)
class Action:
    id: str
    text: str  # "&" marks the mnemonic letter ("&&" is a literal "&")
    call: str  # the window method called, as a dotted path from the window
    shortcut: Shortcut = None
    args: tuple = ()
    checkable: bool = False
    checked: bool = False
    group: str | None = None  # checkable actions of one group exclude one another


@dataclass(frozen=True)
class Menu:
    id: str
    title: str
    items: tuple[Action | Menu | DockToggle | None, ...] = ()  # None: a separator; no items: filled at run time


@dataclass(frozen=True)
class DockToggle:
    """A dock's own show/hide action (Qt makes it), by the window attribute holding the dock."""

    dock: str
    text: str  # the menu entry ("&" marks the mnemonic letter)
    shortcut: Shortcut = None


def no_mnemonic(text: str) -> str:
    """Qt reads "&" in tab and menu texts as a shortcut marker; show it as itself."""
    return text.replace("&", "&&")


def plain(text: str) -> str:
    """A menu text without its mnemonic markers ("&&" is a literal "&")."""
    return re.sub(r"&(.)", r"\1", text)


def _tab_key(index: int) -> str | None:
    """Ctrl+1 ... Ctrl+9 for the first nine tabs, Ctrl+0 for the tenth (as browsers number
    them); later tabs are reached from the View menu."""
    return f"Ctrl+{index % 10}" if index <= 10 else None


def _tab_actions() -> tuple[Action, ...]:
    return tuple(Action(f"view.tab.{view}", no_mnemonic(entry.panel.title), "show_view", _tab_key(index), args=(view,))
                 for index, (view, entry) in enumerate(PANELS.items(), start=1))


def _theme_actions() -> tuple[Action, ...]:
    return tuple(Action(f"view.theme.{name}", name.capitalize(), "set_theme", args=(name,), checkable=True,
                        checked=name == "light", group="theme") for name in THEMES)


MENUS: tuple[Menu, ...] = (
    Menu("file", "&File", (
        Action("file.new", "&New scenario", "presets.ask_new", QKeySequence.StandardKey.New),
        Action("file.open", "&Open preset…", "presets.open_dialog", QKeySequence.StandardKey.Open),
        Menu("file.recent", "Open &recent"),
        Action("file.save", "&Save preset", "presets.save", QKeySequence.StandardKey.Save),
        Action("file.save_as", "Save preset &as…", "presets.save_as_dialog", QKeySequence.StandardKey.SaveAs),
        None,
        Action("file.import", "&Import config.json…", "models.import_dialog", "Ctrl+I"),
        None,
        Action("file.export", "&Export this plot…", "exports.export_plot_dialog", "Ctrl+E"),
        Action("file.export_all", "Export &all plots and tables…", "exports.export_all_dialog", "Ctrl+Shift+E"),
        None,
        Action("file.quit", "&Quit", "quit", "Ctrl+Q"),
    )),
    Menu("edit", "Edit", (  # no Alt letter: E, D, I and T are the controls'
        Action("edit.undo", "&Undo scenario change", "history.undo", "Ctrl+Z"),
        Action("edit.redo", "&Redo scenario change", "history.redo", "Ctrl+Shift+Z"),
    )),
    Menu("view", "&View", (
        *_tab_actions(),
        None,
        Action("view.validation", "&Model vs paper…", "side.show_validation", "Ctrl+M"),
        None,
        Action("view.next", "Select &next accelerator", "controller.select_neighbour", "Ctrl+]", args=(+1,)),
        Action("view.previous", "Select &previous accelerator", "controller.select_neighbour", "Ctrl+[", args=(-1,)),
        None,
        Action("view.compare", "&Compare: pin this scenario as A", "comparison.toggle", "Ctrl+K", checkable=True),
        Action("view.presentation", "P&resentation mode", "toggle_presentation", "F5", checkable=True),
        Menu("view.theme", "&Theme", _theme_actions()),
        None,
        # F6 brings the full controls back in presentation mode, where the dock makes way for the plots.
        DockToggle("controls_dock", "&Scenario: all controls", "F6"),
        DockToggle("presets_dock", "Pr&esets"),
        DockToggle("explain_dock", "E&xplain"),
        Action("view.reset_layout", "Reset &layout", "reset_layout"),
    )),
    Menu("help", "&Help", (
        Action("help.formulas", "&Formulas…", "side.show_formulas", "F1"),
        Action("help.shortcuts", "&Keyboard shortcuts", "side.show_shortcuts", "Ctrl+/"),
        Action("help.problems", "&Loading problems…", "side.show_loading_problems"),
        Action("help.about", "&About accelscope", "side.show_about"),
    )),
)


def _bound(window: Any, call: str) -> Callable:
    target = window
    for name in call.split("."):
        target = getattr(target, name)
    return target


def install_menus(window: QMainWindow) -> tuple[dict[str, QAction], dict[str, QMenu]]:
    """Build :data:`MENUS` in ``window``'s menu bar; returns its actions and menus by id."""
    actions: dict[str, QAction] = {}
    menus: dict[str, QMenu] = {}
    groups: dict[str, QActionGroup] = {}

    def fill(menu: QMenu, items: tuple) -> None:
        for item in items:
            if item is None:
                menu.addSeparator()
            elif isinstance(item, Menu):
                menus[item.id] = submenu = menu.addMenu(item.title)
                fill(submenu, item.items)
            elif isinstance(item, DockToggle):
                action = getattr(window, item.dock).toggleViewAction()
                action.setText(item.text)
                if item.shortcut is not None:
                    action.setShortcut(QKeySequence(item.shortcut))
                menu.addAction(action)
            else:
                actions[item.id] = action = add_action(window, menu, item.text, _bound(window, item.call), item.shortcut,
                                                       item.args)
                if item.checkable:
                    action.setCheckable(True)
                    action.setChecked(item.checked)
                if item.group is not None:
                    groups.setdefault(item.group, QActionGroup(window)).addAction(action)

    for top in MENUS:
        menus[top.id] = menu = window.menuBar().addMenu(top.title)
        fill(menu, top.items)
    return actions, menus


def add_action(parent: QMainWindow, menu: QMenu, text: str, slot: Callable, shortcut: Shortcut = None,
               args: tuple = ()) -> QAction:
    action = QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda checked=False: slot(*args))
    menu.addAction(action)
    return action


def shortcut_rows() -> list[tuple[str, str]]:
    """(keys, where the action is) for every declared action that has a shortcut, in menu order."""
    rows: list[tuple[str, str]] = []

    def walk(items: tuple, path: str) -> None:
        for item in items:
            if isinstance(item, Menu):
                walk(item.items, f"{path} → {plain(item.title)}")
            elif isinstance(item, (Action, DockToggle)) and item.shortcut is not None:
                keys = QKeySequence(item.shortcut).toString(QKeySequence.SequenceFormat.NativeText)
                if keys:  # a standard key this platform has no keys for
                    rows.append((keys, f"{path} → {plain(item.text)}"))

    for top in MENUS:
        walk(top.items, plain(top.title))
    return rows
