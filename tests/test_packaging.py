"""The installed layout: namespaced packages only, none missing, and a Qt-free engine."""

from __future__ import annotations

import ast
import configparser
import fnmatch
import importlib.util
import re
import shutil
import struct
import subprocess
import sys
import tomllib
from pathlib import Path
from xml.etree import ElementTree

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """Every folder the installed package is made of, by its dotted name: folders with an
    __init__.py, and data-only folders (catalog TOMLs, icons) inside a mapped package."""
    folders = {}
    for package, folder in SETUPTOOLS["package-dir"].items():
        top = ROOT / folder
        for path in [top, *top.rglob("*")]:
            if not path.is_dir() or path.name == "__pycache__":
                continue
            relative = path.relative_to(top)
            if relative.parts and (ROOT / folder / relative.parts[0]).resolve() in {
                (ROOT / other).resolve() for other in SETUPTOOLS["package-dir"].values()
            }:
                continue  # a sub-package with its own mapping (gui/panels) is listed under its own name
            has_init = (path / "__init__.py").exists()
            has_data = any(entry.is_file() and entry.suffix not in (".py", ".pyc") for entry in path.iterdir())
            if has_init or has_data:
                folders[".".join([package, *relative.parts])] = path
    return folders


def test_every_package_folder_is_listed_in_pyproject():
    """A sub-package or data folder missing from the list is silently left out of the wheel
    (setuptools only warns about a data folder), while the editable install still finds it."""
    assert set(_package_folders()) == set(SETUPTOOLS["packages"])


def test_every_data_file_is_shipped_as_package_data():
    """A non-editable install (pip, pipx, the bundle) has only the files package-data names;
    a catalog TOML or icon that no pattern matches works from the source tree and is missing
    when installed."""
    patterns = SETUPTOOLS["package-data"]
    missing = []
    for package, folder in _package_folders().items():
        for entry in folder.iterdir():
            is_data = entry.is_file() and entry.suffix not in (".py", ".pyc")
            if is_data and not any(fnmatch.fnmatch(entry.name, pattern) for pattern in patterns.get(package, [])):
                missing.append(str(entry.relative_to(ROOT)))
    assert not missing, f"not matched by [tool.setuptools.package-data]: {missing}"


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
        "from accelscope.engine.physics.engine import Engine\n"
        "from accelscope.engine.core.scenario import Scenario\n"
        "Engine().predict(Scenario('llama-3.1-8b', 'h100-sxm'))\n"
        "loaded = [m for m in sys.modules\n"
        "          if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'PyQt5', 'PyQt6', 'shiboken6')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)


def test_console_command_points_at_the_cli():
    assert PYPROJECT["project"]["scripts"]["accelscope"] == "accelscope.cli.main:main"


# ---- the desktop bundle, the desktop entry and the icon ----------------------------------------

ICON_SIZES_PX = (48, 128, 256)


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (signature, then the IHDR chunk)."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert header[12:16] == b"IHDR"
    return struct.unpack(">II", header[16:24])


def _launcher_entry() -> tuple[str, str]:
    """(module, function) the bundle's launcher calls."""
    tree = ast.parse((PACKAGING / "accelscope_launcher.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("accelscope.cli"):
            return node.module, node.names[0].name
    raise AssertionError("the launcher imports no accelscope.cli entry point")


def test_bundle_launcher_runs_the_console_command():
    """The bundle's executable is the same entry point as the installed `accelscope` command."""
    module, function = _launcher_entry()
    assert f"{module}:{function}" == PYPROJECT["project"]["scripts"]["accelscope"]


def test_spec_names_files_and_packages_that_exist():
    spec = (PACKAGING / "accelscope.spec").read_text()
    tree = ast.parse(spec)
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    scripts = [name for name in strings if name.endswith(".py")]
    assert scripts == ["accelscope_launcher.py"]
    assert (PACKAGING / scripts[0]).is_file()
    # The packages it collects, and keeps as source for numba, are real installed names.
    for name in re.findall(r'"(accelscope(?:\.\w+)*)"', spec):
        assert name == "accelscope" or name in SETUPTOOLS["packages"], f"the spec names {name}, not a package"
    assert "accelscope.engine" in re.findall(r'module_collection_mode=\{"([\w.]+)"', spec)


def _script_paths(script: Path) -> set[str]:
    """Repository paths a shell script names (packaging/..., resources/..., docs/...), less
    patterns completed by a shell variable or a wildcard (accelscope-$size.png, accelscope-*.png)."""
    return set(re.findall(r"\b((?:packaging|resources|docs)/[\w./-]++)(?![$*])", script.read_text()))


@pytest.mark.parametrize("script", ["build_bundle.sh", "make_screenshots.sh", "install_desktop_entry.sh"])
def test_scripts_name_files_that_exist(script):
    paths = _script_paths(PACKAGING / script)
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert not missing, f"{script} names {missing}"


@pytest.mark.parametrize("script", ["build_bundle.sh", "make_screenshots.sh"])
def test_scripts_render_bundled_presets(script):
    text = (PACKAGING / script).read_text()
    presets = set(re.findall(r"--preset ([\w-]+)", text)) | set(re.findall(r"^report ([\w-]+)$", text, re.MULTILINE))
    assert presets, f"{script} renders no preset"
    for preset in presets:
        assert (ROOT / "presets" / f"{preset}.json").is_file(), f"{script} uses {preset}, which is not bundled"


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string((PACKAGING / "accelscope.desktop").read_text())
    assert parser.sections() == ["Desktop Entry"]
    return parser["Desktop Entry"]


# The freedesktop menu specification's main categories (Desktop Menu Specification 1.1, appendix A).
MAIN_CATEGORIES = {
    "AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network",
    "Office", "Science", "Settings", "System", "Utility",
}


def test_desktop_entry_has_the_required_keys():
    entry = _desktop_entry()
    for key in ("Type", "Name", "Exec", "Icon", "Categories"):
        assert entry.get(key, "").strip(), f"the desktop entry has no {key}"
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] in PYPROJECT["project"]["scripts"]
    assert entry["Terminal"] == "false"
    categories = entry["Categories"]
    assert categories.endswith(";")
    assert len(set(categories.strip(";").split(";")) & MAIN_CATEGORIES) == 1, "one main category, or it is listed twice"


def test_desktop_entry_icon_is_the_shipped_icon():
    icon = _desktop_entry()["Icon"]
    assert (ROOT / "resources" / "icons" / f"{icon}.svg").is_file()
    for size_px in ICON_SIZES_PX:
        assert (ROOT / "resources" / "icons" / f"{icon}-{size_px}.png").is_file()


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils is not installed")
def test_desktop_entry_passes_desktop_file_validate():
    completed = subprocess.run(
        ["desktop-file-validate", str(PACKAGING / "accelscope.desktop")], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0 and not completed.stdout.strip(), completed.stdout


def test_icon_svg_is_a_square_svg():
    root = ElementTree.parse(ROOT / "resources" / "icons" / "accelscope.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    _, _, width, height = (float(value) for value in root.attrib["viewBox"].split())
    assert width == height


def test_icon_pngs_have_their_sizes():
    """make_icons.py renders the sizes the desktop entry installer copies."""
    spec = importlib.util.spec_from_file_location("make_icons", PACKAGING / "make_icons.py")
    make_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icons)
    assert tuple(make_icons.SIZES_PX) == ICON_SIZES_PX
    for size_px in ICON_SIZES_PX:
        assert _png_size(make_icons.png_path(size_px)) == (size_px, size_px)


def _load_launcher():
    spec = importlib.util.spec_from_file_location("accelscope_launcher", PACKAGING / "accelscope_launcher.py")
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    return launcher


def test_launcher_puts_the_kernel_cache_in_the_user_cache(monkeypatch, tmp_path):
    import platformdirs

    launcher = _load_launcher()
    # Set, then removed: so that undoing the test removes what the launcher sets. (Removing a
    # variable that is not set records nothing to undo, and the launcher's folder, a fresh one
    # under tmp_path, stayed in the environment of every later test: each subprocess after this
    # test compiled every kernel anew into it, ~2 min on two cores.)
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda app: str(tmp_path / app))
    launcher._point_numba_cache_at_user_folder()
    folder = Path(launcher.os.environ["NUMBA_CACHE_DIR"])
    assert folder.parent == tmp_path / "accelscope" / "numba-bundle"
    assert re.fullmatch(r"[0-9a-f]{16}", folder.name)
    # A folder the user chose is kept.
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    launcher._point_numba_cache_at_user_folder()
    assert launcher.os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")


def test_launcher_cache_key_follows_the_engine_source(monkeypatch, tmp_path):
    """Edited kernels get a new cache folder, so a rebuilt bundle never loads old machine code."""
    import accelscope.engine

    launcher = _load_launcher()
    (tmp_path / "kernels.py").write_text("def kernel(x):\n    return x\n")
    monkeypatch.setattr(accelscope.engine, "__path__", [str(tmp_path)])
    before = launcher._engine_source_digest()
    (tmp_path / "kernels.py").write_text("def kernel(x):\n    return 2 * x\n")
    assert launcher._engine_source_digest() != before
