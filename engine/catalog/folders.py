"""Where the user's own files live: the platformdirs user data folder, or the folder
``ACCELSCOPE_DATA_DIR`` names (which tests use)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

DATA_DIR_VARIABLE = "ACCELSCOPE_DATA_DIR"


def user_data_dir() -> Path:
    override = os.environ.get(DATA_DIR_VARIABLE)
    return Path(override) if override else Path(platformdirs.user_data_dir("accelscope"))
