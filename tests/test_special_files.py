"""Named pipes, directories and device files given where a file is expected: every loader
refuses them at once with one line saying "not a regular file" and what the path is; writers
refuse to export onto them. Opening a named pipe for reading waits for a writer forever, so a
loader that opened one would hang the window or the command.

A loader that wrongly opens a pipe is not left hanging here: a helper thread keeps offering the
pipe a writer, which releases the blocked open with an empty file; the loader then says
something else than "not a regular file" and the test fails instead of freezing.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from accelscope.cli.main import main
from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.accelerators import load_accelerator_file
from accelscope.engine.catalog.hf_config import load_hf_config
from accelscope.engine.catalog.models import load_model_file
from accelscope.engine.catalog.presets import load_preset
from accelscope.engine.catalog.reading import read_limited, read_toml_file, special_file_kind
from accelscope.engine.core.errors import AccelscopeError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")

DEVICE = Path("/dev/null")
POLL_SECONDS = 0.01  # how often the helper offers a writer; not a bound on anything


@contextmanager
def released_if_opened(pipe: Path) -> Iterator[list[bool]]:
    """While inside, any reader blocked opening ``pipe`` is released (it reads an empty file);
    the list yielded holds True once that happened."""
    opened: list[bool] = []
    done = threading.Event()

    def offer_a_writer() -> None:
        while not done.is_set():
            try:  # succeeds only while a reader has the pipe open
                descriptor = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                done.wait(POLL_SECONDS)
                continue
            opened.append(True)
            os.close(descriptor)  # the reader now sees an empty file
            return

    helper = threading.Thread(target=offer_a_writer, daemon=True)
    helper.start()
    try:
        yield opened
    finally:
        done.set()
        helper.join()


@pytest.fixture
def pipe(tmp_path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        path = tmp_path / name
        os.mkfifo(path)
        assert stat.S_ISFIFO(path.stat().st_mode)
        return path

    return make


def refusal(load: Callable[[Path], object], path: Path) -> str:
    """The loader's one-line message for ``path``; fails if it opened a named pipe."""
    with released_if_opened(path) if path.is_fifo() else _nothing() as opened, \
            pytest.raises(AccelscopeError) as caught:
        load(path)
    message = str(caught.value)
    assert not opened, f"the loader opened {path}: {message}"
    assert "\n" not in message and message.startswith(str(path)), message
    return message


@contextmanager
def _nothing() -> Iterator[list[bool]]:
    yield []


def loaders(catalog: Catalog) -> dict[str, Callable[[Path], object]]:
    return {
        "preset": lambda path: load_preset(path, catalog),
        "config.json": load_hf_config,
        "model file (catalog)": lambda path: catalog.model(str(path)),
        "model toml": load_model_file,
        "accelerator toml": load_accelerator_file,
        "toml": read_toml_file,
        "bytes": read_limited,
    }


LOADERS = list(loaders(Catalog.load(include_user=False)))
SUFFIX = {"config.json": ".json", "preset": ".json", "model file (catalog)": ".json"}


@pytest.mark.parametrize("loader", LOADERS)
def test_a_named_pipe_is_refused_at_once(loader, pipe, catalog):
    path = pipe("pipe" + SUFFIX.get(loader, ".toml"))
    message = refusal(loaders(catalog)[loader], path)
    assert message.endswith("not a regular file (a named pipe); give the path of a file")


@pytest.mark.parametrize("loader", [name for name in LOADERS if name not in ("config.json", "model file (catalog)")])
def test_a_directory_is_refused(loader, tmp_path, catalog):
    folder = tmp_path / ("folder" + SUFFIX.get(loader, ".toml"))
    folder.mkdir()
    assert refusal(loaders(catalog)[loader], folder).endswith("not a regular file (a directory); give the path of a file")


@pytest.mark.parametrize("loader", ["config.json", "model file (catalog)"])
def test_a_model_folder_without_a_config_is_refused(loader, tmp_path, catalog):
    """A folder is how a downloaded model is given, so it is read as its config.json."""
    folder = tmp_path / "downloaded-model"
    folder.mkdir()
    message = refusal(loaders(catalog)[loader], folder)
    assert message == f"{folder}: not a regular file (a directory) and holds no config.json"


def test_a_model_folder_whose_config_is_a_named_pipe_is_refused(tmp_path, pipe, catalog):
    folder = tmp_path / "downloaded-model"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    with released_if_opened(folder / "config.json") as opened, \
            pytest.raises(AccelscopeError, match="not a regular file \\(a named pipe\\)"):
        catalog.model(str(folder))
    assert not opened


@pytest.mark.skipif(not DEVICE.exists(), reason="no /dev/null")
@pytest.mark.parametrize("loader", LOADERS)
def test_a_device_is_refused(loader, catalog):
    message = refusal(loaders(catalog)[loader], DEVICE)
    assert message == f"{DEVICE}: not a regular file (a character device); give the path of a file"


def test_a_symbolic_link_to_a_pipe_is_refused(tmp_path, pipe, catalog):
    link = tmp_path / "link.json"
    link.symlink_to(pipe("target.json"))
    with released_if_opened(link) as opened, \
            pytest.raises(AccelscopeError, match="not a regular file \\(a named pipe\\)"):
        load_preset(link, catalog)
    assert not opened


def test_regular_files_still_load(tmp_path, catalog):
    """The check refuses special files only: a bundled model copied to disk loads as before."""
    from accelscope.engine.catalog.models import bundled_model_files

    source = bundled_model_files()[0]
    copy = tmp_path / "model.toml"
    copy.write_bytes(source.read_bytes())
    assert load_model_file(copy).id == load_model_file(source).id
    assert special_file_kind(copy) is None and special_file_kind(tmp_path / "missing") is None


def test_a_pipe_in_the_user_folder_is_listed_as_a_problem(tmp_path, pipe, monkeypatch):
    """The catalog reads every file of the user's folder at start-up: a pipe there must not
    stop the app from opening."""
    models = tmp_path / "user" / "models"
    models.mkdir(parents=True)
    os.mkfifo(models / "pipe.json")
    os.mkfifo(models / "pipe.toml")
    (tmp_path / "user" / "accelerators").mkdir()
    os.mkfifo(tmp_path / "user" / "accelerators" / "pipe.toml")
    with released_if_opened(models / "pipe.json") as opened:
        catalog = Catalog.load(tmp_path / "user")
    assert not opened
    assert sorted(catalog.problems) == sorted(
        f"{path}: not a regular file (a named pipe); give the path of a file"
        for path in (models / "pipe.json", models / "pipe.toml", tmp_path / "user" / "accelerators" / "pipe.toml")
    )


@pytest.mark.parametrize("flag", ["--model", "--preset"])
def test_the_command_line_refuses_a_pipe_on_one_line(flag, pipe, tmp_path, capsys):
    path = pipe("pipe.json")
    if flag == "--model":
        args = ["predict", "--model", str(path), "--accelerator", "h100-sxm"]
    else:
        args = ["report", "--preset", str(path), "--out", str(tmp_path / "out")]
    with released_if_opened(path) as opened:
        status = main(args)
    err = capsys.readouterr().err
    assert not opened
    assert status == 2 and len(err.splitlines()) == 1, err
    assert f"{path}: not a regular file (a named pipe)" in err


# ---- in the window -----------------------------------------------------------------------


@pytest.fixture
def warnings(monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    return shown


def test_the_window_refuses_a_pipe_as_preset_or_model(window, warnings, pipe):
    before = window.controller.workspace
    models = dict(window.engine.catalog.models)
    preset, config = pipe("preset.json"), pipe("config.json")
    with released_if_opened(preset) as preset_opened, released_if_opened(config) as config_opened:
        assert not window.presets.open_file(preset)
        assert not window.models.import_file(str(config))
    assert not preset_opened and not config_opened
    assert warnings == [f"{path}: not a regular file (a named pipe); give the path of a file" for path in (preset, config)]
    assert window.controller.workspace == before and window.engine.catalog.models == models


@pytest.mark.parametrize("suffix", [".png", ".svg", ".csv"])
def test_export_onto_a_pipe_is_refused(window, warnings, pipe, suffix):
    target = pipe("plot" + suffix)
    with released_if_opened(target) as opened:
        assert window.exports.export_plot(target, scale=1.0) == []
    assert not opened
    assert warnings == [f"{target}: {target.name} is not a regular file (a named pipe)"]
    assert stat.S_ISFIFO(target.stat().st_mode)  # left as it was


def test_export_all_beside_a_pipe_is_refused(window, warnings, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from accelscope.engine.catalog.writing import MANIFEST_NAME, MANIFEST_SCHEMA

    folder = tmp_path / "export"
    folder.mkdir()
    os.mkfifo(folder / "explain.txt")
    with released_if_opened(folder / "explain.txt") as opened:  # a folder of other files: refused at once
        assert window.exports.export_all_to(folder, scale=1.0) == []
    assert not opened
    assert warnings == [f"{folder} already holds other files; choose an empty folder or make a new one."]
    # Even where an earlier export's manifest names it, and the user agrees to replace that export.
    (folder / MANIFEST_NAME).write_text(json.dumps({"schema": MANIFEST_SCHEMA, "files": ["explain.txt"]}))
    monkeypatch.setattr(QMessageBox, "question", lambda *args: QMessageBox.StandardButton.Yes)
    warnings.clear()
    with released_if_opened(folder / "explain.txt") as opened:
        assert window.exports.export_all_to(folder, scale=1.0) == []
    assert not opened
    assert warnings == [f"{folder}: explain.txt is not a regular file (a named pipe)"]
    assert stat.S_ISFIFO((folder / "explain.txt").stat().st_mode)
    assert sorted(path.name for path in folder.iterdir()) == sorted(["explain.txt", MANIFEST_NAME])
