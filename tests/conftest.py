"""Test set-up: headless Qt, and a private user-data folder so no test touches the real one."""

from __future__ import annotations

import os
import tempfile

# Qt must be told before it is first imported (pytest-qt imports it early).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# User catalogs and presets go to a throw-away folder for the whole run.
os.environ["ACCELSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="accelscope-test-data-")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def engine():
    from accelscope.engine.api import Engine

    return Engine()


@pytest.fixture(scope="session")
def catalog(engine):
    return engine.catalog
