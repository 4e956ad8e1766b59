"""What the app remembers between runs: the last scenario (as a preset) and the window layout;
and the scenario it opens on when there is none.

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
from typing import Protocol

from accelscope.engine.catalog import Catalog, user_data_dir
from accelscope.engine.catalog.presets import Preset, load_preset, save_preset, write_atomically
from accelscope.engine.core.errors import AccelscopeError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine

SESSION_PRESET_NAME = "Last session"
DEFAULT_MODEL = "llama-3.1-8b"
DEFAULT_SELECTED = "h100-sxm"
# Shown at first: a handful that spans what people ask about, not the forty of the catalog
# (the plots of forty rows do not read). Datacenter GPUs of both makers and three generations,
# a desk card, and two unified-memory machines; the list adds any other in one tick.
DEFAULT_SHOWN: tuple[str, ...] = ("a100-80gb", "h100-sxm", "b200", "mi300x", "rtx-4090", "dgx-spark", "m4-max")
MAX_LAYOUT_BYTES = 64 * 1024  # a layout file is a few kB; anything larger is not ours


def default_workspace(catalog: Catalog) -> Workspace:
    """Llama-3.1-8B in BF16, batch 1, 1024 tokens in and 256 out, on :data:`DEFAULT_SHOWN` (in
    catalog order; those the catalog has), or on every GPU where it has none of them."""
    shown = tuple(a for a in catalog.accelerators if a in DEFAULT_SHOWN)
    if not shown:
        shown = tuple(a.id for a in catalog.accelerators.values() if a.architecture_class == "gpu-simt")
    model = DEFAULT_MODEL if DEFAULT_MODEL in catalog.models else next(iter(catalog.models))
    selected = DEFAULT_SELECTED if DEFAULT_SELECTED in shown else (shown or tuple(catalog.accelerators))[0]
    scenario = Scenario(model, selected, batch=1, input_len=1024, output_len=256)
    return Workspace(scenario, shown=shown or (selected,))


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
    preset_bundled: bool = False  # that file is a bundled preset (found again by its name)
    # The available size of the screen the layout was made on (0, 0 where unknown): on another
    # screen the window arranges its docks for that screen instead.
    screen_size: tuple[int, int] = (0, 0)


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
            preset_bundled=data.get("preset_bundled") is True,
            screen_size=_size(data.get("screen_size")),
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
        "preset_bundled": layout.preset_bundled,
        "screen_size": list(layout.screen_size),
    }
    try:
        write_atomically(layout_path(), lambda stream: json.dump(document, stream))
    except OSError as error:
        return f"Could not remember the window layout: {error}"
    return None


def _size(value: object) -> tuple[int, int]:
    if (isinstance(value, list) and len(value) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 < n < 100_000 for n in value)):
        return value[0], value[1]
    return 0, 0


def _bytes(value: object) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return b""


# ---- the main window's side ----------------------------------------------------------------------


class SessionHost(Protocol):
    """What :func:`remember` and :func:`restore` need of the main window (a QMainWindow)."""

    controller: object  # gui.state.controller.Controller
    presets: object  # gui.state.presets.PresetFiles
    display: object  # gui.look.display.Display
    arrangement: object  # gui.windows.arrangement.Arrangement: normal_state() is the layout outside presentation

    def set_presentation(self, on: bool) -> None: ...

    def set_theme(self, name: str) -> None: ...

    def fit_layout_when_shown(self, screen_size: tuple[int, int]) -> None: ...


def restore(window: SessionHost, layout: WindowLayout) -> None:
    """Put the window back as it was: geometry, docks, theme, presentation, its preset's name.
    (The window fits the layout to the screen it is on once it is shown: the screen may have changed.)"""
    if layout.geometry:
        window.restoreGeometry(layout.geometry)
    if layout.state:
        window.restoreState(layout.state)
    if layout.theme != "light":
        window.set_theme(layout.theme)
    if layout.presentation:
        window.set_presentation(True)
    if layout.preset_path:
        window.presets.restore(layout.preset_path, layout.preset_bundled)
    window.fit_layout_when_shown(layout.screen_size)


def remember(window: SessionHost) -> list[str]:
    """Save the window's scenario and layout for the next run; returns any problems (never raises)."""
    window.controller.throttle.flush()
    current, presentation = window.presets.current, window.display.presentation
    geometry, state = window.arrangement.normal_state()  # the layout as it is outside presentation mode
    screen = window.screen().availableGeometry()
    problems = [
        save_session(window.presets.preset_of_workspace(SESSION_PRESET_NAME, "")),
        save_layout(WindowLayout(
            geometry=bytes(geometry.data()), state=bytes(state.data()), presentation=presentation,
            theme=window.display.theme,
            preset_path=str(current.source) if current and current.source else "",
            preset_bundled=bool(current and current.bundled),
            screen_size=(screen.width(), screen.height()),
        )),
    ]
    return [problem for problem in problems if problem]


def resume(engine: Engine) -> tuple[Engine, Workspace | None, str | None]:
    """The last session: an engine that knows its model, its workspace (None when there is none
    to restore), and why it could not be restored (None when it could, or there was none)."""
    restored, problem = load_session(engine.catalog)
    if restored is None:
        return engine, None, problem
    return (engine.with_models(restored.model) if restored.model is not None else engine), restored.workspace, problem
