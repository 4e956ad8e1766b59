"""The installed layout: namespaced packages only, none missing, and a Qt-free engine."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_in_pyproject():
    """A sub-package missing from the list is silently left out of the wheel."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    mapping = setuptools["package-dir"]
    on_disk = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            on_disk.add(".".join([package, *relative.parts]))
    assert on_disk == set(setuptools["packages"])


def test_installed_names_are_namespaced():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert all(name.startswith("accelscope.") for name in setuptools["packages"])
    # Installed, the engine is found under its namespaced name and never as a bare "engine".
    assert importlib.util.find_spec("accelscope.engine") is not None
    assert importlib.util.find_spec("engine") is None
    assert importlib.util.find_spec("gui") is None


def test_engine_source_imports_no_qt():
    forbidden = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6", "accelscope.gui")
    for path in (ROOT / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(forbidden), f"{path.name} imports {name}"


def test_engine_runs_without_loading_qt():
    """Importing and running the engine (kernels included) loads no Qt module."""
    code = (
        "import sys\n"
        "from accelscope.engine.api import Engine\n"
        "from accelscope.engine.scenario import Scenario\n"
        "Engine().predict(Scenario('llama-3.1-8b', 'h100-sxm'))\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'PyQt5', 'PyQt6', 'shiboken6')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)


def test_console_command_points_at_the_cli():
    assert PYPROJECT["project"]["scripts"]["accelscope"] == "accelscope.cli.main:main"
