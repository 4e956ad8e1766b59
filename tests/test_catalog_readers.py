"""Every file the engine reads goes through catalog/ under one hostile-input policy (reading.py):
anything but a regular file is refused without being opened for reading, an oversized file is
refused unread, bytes that are not UTF-8 or TOML are refused, and a wrong shape anywhere is a
CatalogError naming the file, never an AttributeError or a TypeError from deep inside."""

from __future__ import annotations

import os
from importlib.resources import files

import pytest

from accelscope.engine.catalog.constants import load_constants
from accelscope.engine.catalog.far_tiers import load_far_tiers
from accelscope.engine.catalog.measurements import load_measurements
from accelscope.engine.catalog.reading import MAX_FILE_BYTES
from accelscope.engine.catalog.regimes import load_regimes
from accelscope.engine.core.errors import CatalogError

# (loader, bundled file name, a document whose top-level shape is wrong)
READERS = [
    pytest.param(load_constants, "efficiency.toml", "classes = 3\n", id="constants"),
    pytest.param(load_constants, "efficiency.toml", "workload = 'chat'\n", id="constants-workload"),
    pytest.param(load_far_tiers, "far_tiers.toml", "tier = 3\n", id="far-tiers"),
    pytest.param(load_far_tiers, "far_tiers.toml", "tier = [3]\n", id="far-tiers-entry"),
    pytest.param(load_regimes, "regimes.toml", "layout = 3\n", id="regimes"),
    pytest.param(load_regimes, "regimes.toml", None, id="regimes-ratings"),
    pytest.param(load_measurements, "measurements.toml", "papers = 3\n", id="measurements"),
    pytest.param(load_measurements, "measurements.toml", "measurement = [3]\n", id="measurements-row"),
]


def _bundled(name: str) -> str:
    return files("accelscope.resources").joinpath(name).read_text(encoding="utf-8")


@pytest.mark.parametrize("loader, name, wrong", READERS)
def test_a_wrong_shape_is_a_catalog_error_naming_the_file(loader, name, wrong, tmp_path):
    path = tmp_path / name
    if wrong is None:  # the bundled regimes with the paper's ratings as a number
        text = _bundled(name)
        wrong = text[: text.index("[paper.ratings")].replace("[paper]\n", "[paper]\nratings = 3\n", 1)
    path.write_text(wrong, encoding="utf-8")
    with pytest.raises(CatalogError, match=name.replace(".", r"\.")):
        loader(path)


@pytest.mark.parametrize("loader, name, wrong", READERS[::2])
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(loader, name, wrong, tmp_path):
    path = tmp_path / name
    os.mkfifo(path)
    with pytest.raises(CatalogError, match="named pipe"):
        loader(path)


@pytest.mark.parametrize("loader, name, wrong", READERS[::2])
def test_an_oversized_or_undecodable_file_is_refused(loader, name, wrong, tmp_path):
    path = tmp_path / name
    path.write_bytes(b"# " + b"x" * MAX_FILE_BYTES + b"\n")
    with pytest.raises(CatalogError, match="larger than"):
        loader(path)
    path.write_bytes(b"id = '\xff'\n")
    with pytest.raises(CatalogError, match="not UTF-8"):
        loader(path)
    path.write_text("not toml [", encoding="utf-8")
    with pytest.raises(CatalogError, match="not valid TOML"):
        loader(path)


@pytest.mark.parametrize("loader, name, wrong", READERS[::2])
def test_the_bundled_files_load(loader, name, wrong):
    assert loader() is not None
