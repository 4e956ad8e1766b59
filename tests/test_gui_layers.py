"""The gui/ tree is layered, and the folders say so: a module imports only from its own layer
or the layers below it. Read from the source (no Qt needed), like test_packaging's Qt-free check.

    main_window, app, actions, dev      assembly, and the tools that drive it
    panels | windows | export           the tabs, the other windows, files (export renders panels)
    plotkit | controls | state          plot blocks, the docks' controls, the workspace and its files
    look                                theme, styles, colours

Below the top (assembly) layer, the packages of one layer do not import one another, except
that export reads panels (it renders them and writes their tables). plotkit
takes arrays, texts and colours: of the engine it may use only number formatting (core.units).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GUI = Path(__file__).resolve().parent.parent / "gui"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"main_window", "app", "actions", "dev"}),
    frozenset({"panels", "windows", "export"}),
    frozenset({"plotkit", "controls", "state"}),
    frozenset({"look"}),
)
SIBLINGS_ALLOWED = {("export", "panels")}  # (importer, imported) within one layer below the top
PLOTKIT_ENGINE = ("accelscope.engine.core.units",)


def part_of(module: str) -> str | None:
    """The gui package (or top-level module) an absolute module name belongs to."""
    parts = module.split(".")
    if parts[:2] != ["accelscope", "gui"] or len(parts) < 3:
        return None
    return parts[2]


def layer_of(part: str) -> int:
    for index, layer in enumerate(LAYERS):
        if part in layer:
            return index
    raise AssertionError(f"gui/{part} is in no layer: add it to LAYERS in {Path(__file__).name}")


def module_name(path: Path) -> str:
    relative = path.relative_to(GUI).with_suffix("")
    parts = [part for part in relative.parts if part != "__init__"]
    return ".".join(["accelscope", "gui", *parts])


def imports_of(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in it (lazy imports
    too), as absolute names."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            if node.module:
                found.append(".".join([*base, node.module]))
            else:  # "from . import bars" imports modules: name each
                found += [".".join([*base, alias.name]) for alias in node.names]
    return found


def imports(path: Path) -> list[str]:
    return imports_of(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def violations(module: str, names: list[str]) -> list[str]:
    """The imports of ``module`` that reach up a layer, or across to a sibling package."""
    importer = part_of(module)
    found = []
    for name in names:
        imported = part_of(name)
        if importer is None or imported is None or imported == importer:
            continue
        if layer_of(imported) < layer_of(importer):
            found.append(f"{name} (a layer above)")
        elif layer_of(imported) == layer_of(importer) > 0 and (importer, imported) not in SIBLINGS_ALLOWED:
            found.append(f"{name} (gui/{importer} and gui/{imported} are one layer)")
    return found


SOURCES = sorted(p for p in GUI.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_gui_package_has_a_layer():
    parts = {part_of(module_name(path)) for path in SOURCES} - {None}
    for part in parts:
        layer_of(part)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(GUI)))
def test_no_gui_module_imports_upward_or_across(path):
    assert violations(module_name(path), imports(path)) == []


@pytest.mark.parametrize("path", sorted((GUI / "plotkit").glob("*.py")), ids=lambda p: p.name)
def test_plotkit_knows_no_physics(path):
    for name in imports(path):
        if name.startswith("accelscope.engine"):
            assert name.startswith(PLOTKIT_ENGINE), f"plotkit/{path.name} imports {name}"


def test_the_contract_finds_upward_and_sideways_imports():
    """The check itself, on a made-up module: what it must find, and what it must let pass."""
    source = ("from ..panels import PANELS\nfrom ..state import controller\nfrom . import theme\n"
              "def later():\n    from accelscope.gui.main_window import MainWindow\n")
    names = imports_of(source, "accelscope.gui.look.probe")
    assert names == ["accelscope.gui.panels", "accelscope.gui.state", "accelscope.gui.look.theme",
                     "accelscope.gui.main_window"]
    assert len(violations("accelscope.gui.look.probe", names)) == 3  # all but look's own theme
    sideways = imports_of("from ..controls.bindings import bind\n", "accelscope.gui.state.probe")
    assert violations("accelscope.gui.state.probe", sideways) == [
        "accelscope.gui.controls.bindings (gui/state and gui/controls are one layer)"]
    assert violations("accelscope.gui.export.probe", ["accelscope.gui.panels"]) == []
