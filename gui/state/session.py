"""What the app remembers between runs: the last scenario (as a preset) and the window layout.

Both live in the user data folder. The scenario is an ordinary preset file, read back with the
same validation as any other (a damaged or outdated file is reported and the default scenario
is shown instead); the layout is a small JSON object of Qt's own geometry and dock-state bytes
plus the display options. Neither is ever worth failing a start or a close over.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

from accelscope.engine.catalog import Catalog, user_data_dir
from accelscope.engine.catalog.presets import Preset, load_preset, save_preset, write_atomically
from accelscope.engine.core.errors import AccelscopeError

SESSION_PRESET_NAME = "Last session"
MAX_LAYOUT_BYTES = 64 * 1024  # a layout file is a few kB; anything larger is not ours


def session_preset_path() -> Path:
    return user_data_dir() / "session.preset.json"


def layout_path() -> Path:
    return user_data_dir() / "window.json"


@dataclass(frozen=True)
class WindowLayout:
    geometry: bytes = b""  # QMainWindow.saveGeometry()
    state: bytes = b""  # QMainWindow.saveState(): docks and toolbars
    presentation: bool = False
    theme: str = "light"
    preset_path: str = ""  # the preset file the last scenario came from, if any


def load_session(catalog: Catalog) -> tuple[Preset | None, str | None]:
    """The last session's scenario, or None; the second value says why it could not be read."""
    path = session_preset_path()
    if not path.is_file():
        return None, None
    try:
        return load_preset(path, catalog), None
    except AccelscopeError as error:
        return None, f"The last session could not be restored ({error}); showing the default scenario."


def save_session(preset: Preset) -> str | None:
    """Remember ``preset`` as the last session; returns a problem instead of raising."""
    try:
        save_preset(preset, session_preset_path())
    except (OSError, AccelscopeError, ValueError) as error:
        return f"Could not remember this session: {error}"
    return None


def load_layout() -> WindowLayout:
    """The saved layout; anything unreadable gives the default layout."""
    path = layout_path()
    try:
        if not path.is_file() or path.stat().st_size > MAX_LAYOUT_BYTES:
            return WindowLayout()
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return WindowLayout()
        return WindowLayout(
            geometry=_bytes(data.get("geometry")),
            state=_bytes(data.get("state")),
            presentation=data.get("presentation") is True,
            theme=data["theme"] if data.get("theme") in ("light", "dark") else "light",
            preset_path=data["preset_path"] if isinstance(data.get("preset_path"), str) else "",
        )
    except (OSError, ValueError):
        return WindowLayout()


def save_layout(layout: WindowLayout) -> str | None:
    document = {
        "geometry": base64.b64encode(layout.geometry).decode("ascii"),
        "state": base64.b64encode(layout.state).decode("ascii"),
        "presentation": layout.presentation,
        "theme": layout.theme,
        "preset_path": layout.preset_path,
    }
    try:
        write_atomically(layout_path(), lambda stream: json.dump(document, stream))
    except OSError as error:
        return f"Could not remember the window layout: {error}"
    return None


def _bytes(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return b""
