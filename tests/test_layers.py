"""The folders are layers, and these contracts keep them so (read from the source with ast, so
an import inside a function counts as much as one at the top):

- the engine is Qt-free: no PySide6, pyqtgraph, shiboken6, accelscope.gui or accelscope.cli;
- engine layers import only downward: core < catalog < physics < studies < text | validation
  (text and validation, side by side, do not import each other);
- only engine/physics reads the kernels' integer row layout and the kernels themselves
  (``physics.kernels``, ``physics.layout``); everything else reads outputs by name through
  ``physics.results.Outputs``;
- memory is accounted once, in physics: outside it no two memory outputs are added, subtracted
  or divided (``results._MemoryDerived`` gives the parts, tiers, totals, room and shares).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Repository folders and the installed package each one is (pyproject.toml's package-dir).
PACKAGES = {"engine": "accelscope.engine", "gui": "accelscope.gui", "cli": "accelscope.cli"}
ENGINE_LAYERS = {"core": 0, "catalog": 1, "physics": 2, "studies": 3, "text": 4, "validation": 4}
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6", "accelscope.gui", "accelscope.cli")
PHYSICS_INTERNALS = ("accelscope.engine.physics.kernels", "accelscope.engine.physics.layout")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join((PACKAGES[parts[0]], *parts[1:]))
    return name.removesuffix(".__init__")


def _sources(*folders: str) -> Iterator[tuple[str, Path]]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield _module_name(path), path


def imports(module: str, path: Path) -> set[str]:
    """Every module ``path`` may import, relative imports resolved: for ``from X import y``
    both X and X.y (y may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "engine" and parts[2] in ENGINE_LAYERS else None


def test_the_engine_imports_no_qt_gui_or_cli():
    offences = [
        f"{module} imports {name}"
        for module, path in _sources("engine")
        for name in imports(module, path)
        if _within(name, QT)
    ]
    assert not offences, "\n".join(offences)


def test_engine_layers_import_only_downward():
    offences = []
    for module, path in _sources("engine"):
        layer = _layer(module)
        if layer is None:  # engine/__init__.py: the public façade may gather from every layer
            continue
        for name in imports(module, path):
            other = _layer(name)
            if other is None or other == layer:
                continue
            if ENGINE_LAYERS[other] > ENGINE_LAYERS[layer] or ENGINE_LAYERS[other] == ENGINE_LAYERS[layer]:
                offences.append(f"{module} ({layer}) imports {name} ({other})")
    assert not offences, "\n".join(sorted(offences))


def test_only_physics_reads_the_kernels_and_their_row_layout():
    offences = [
        f"{module} imports {name}"
        for module, path in _sources("engine", "gui", "cli")
        if not _within(module, ("accelscope.engine.physics",))
        for name in imports(module, path)
        if _within(name, PHYSICS_INTERNALS)
    ]
    assert not offences, "\n".join(sorted(offences))


@pytest.mark.parametrize(
    "module, source, expected",
    [
        ("accelscope.engine.studies.scaling", "from ..physics import kernels", "accelscope.engine.physics.kernels"),
        ("accelscope.engine.studies.scaling", "from ..physics.layout import O_ITL", "accelscope.engine.physics.layout"),
        ("accelscope.engine.studies.serving.run", "from . import layout", "accelscope.engine.studies.serving.layout"),
        ("accelscope.gui.panels.memory", "import accelscope.engine.physics.kernels as k",
         "accelscope.engine.physics.kernels"),
        ("accelscope.engine.text", "from .explain import explain", "accelscope.engine.text.explain"),
    ],
)
def test_relative_imports_resolve_to_the_module_they_name(module, source, expected, tmp_path):
    path = tmp_path / ("__init__.py" if module == "accelscope.engine.text" else "module.py")
    path.write_text(source + "\n")
    assert expected in imports(module, path)


def _memory_output(node: ast.AST) -> str | None:
    """The memory output a node reads (``x.memory.kv_cache_bytes``, ``memory.usable_bytes[j]``,
    ``float(...)`` of one), or None."""
    from accelscope.engine.physics.results import MemoryResult, _MemoryDerived

    names = {f.name for f in __import__("dataclasses").fields(MemoryResult)} | {
        name for name, value in vars(_MemoryDerived).items() if isinstance(value, property)}
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args:
            node = node.args[0]
        else:
            break
    return node.attr if isinstance(node, ast.Attribute) and node.attr in names else None


def test_memory_is_accounted_only_in_physics():
    offences = []
    for module, path in _sources("engine", "gui", "cli"):
        if _within(module, ("accelscope.engine.physics",)):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Div):
                left, right = _memory_output(node.left), _memory_output(node.right)
                if left and right:
                    offences.append(f"{module}:{node.lineno}: {left} and {right}")
    assert not offences, "memory arithmetic outside physics:\n" + "\n".join(offences)
