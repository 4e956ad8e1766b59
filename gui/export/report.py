"""Exports are documents, not screenshots: every figure is composed on fresh tabs laid out at a
named page size, in the light theme (dark only when asked) with the plots' own fonts, whatever
the window's size, the screen or presentation mode. The headless report (``accelscope
report``) and File → Export all both draw through :func:`document_panels`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from accelscope.engine.catalog.presets import Preset
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import Frame, compute_frame
from accelscope.engine.text.explain import explain

# Each tab's size on the page, in pixels before --scale: a handout's (about A4 landscape at the
# figure's aspect) and a 16:9 slide's.
PAGES: dict[str, tuple[int, int]] = {"handout": (1400, 900), "slide": (1600, 900)}
REPORT_SIZE = PAGES["handout"]


@contextmanager
def document_panels(engine: Engine, workspace: Workspace, *, page: str = "handout", theme_name: str = "light",
                    views: tuple[str, ...] | None = None, font=None, palette=None,
                    reference: Frame | None = None) -> Iterator[tuple[dict, Frame]]:
    """New tabs (``views``, or all) showing ``workspace``, laid out at ``page``'s size and painted
    like shown tabs without being shown, in the ``theme_name`` plot theme; ``font`` and
    ``palette`` (the window's own, without presentation mode or the dark theme) are given to
    them when the application's current ones are not the page's. Yields them and their frame;
    the plot theme, application palette and style are put back after."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QStyleFactory

    from ..look import theme
    from ..look.display import THEMES, dark_palette
    from ..look.style import configure_pyqtgraph
    from ..panels import PANELS
    from .headless import quiet_offscreen

    if theme_name not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {theme_name!r}")
    if page not in PAGES:
        raise ValueError(f"page must be one of {', '.join(PAGES)}, got {page!r}")
    app = QApplication.instance()
    previous_theme = theme.current()
    configure_pyqtgraph(theme.for_display(theme_name, presentation=False))
    app_palette, style = app.palette(), app.style().name()
    if theme_name == "dark":  # the panels' own backgrounds and texts, as the window shows them
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(dark_palette())
        palette = None
    workspace = workspace.with_changes(scenario=engine.resolve(workspace.scenario))
    engine.warm_up()
    frame = compute_frame(engine, workspace)
    panels = {view: entry.make(engine.catalog, engine) for view, entry in PANELS.items()
              if views is None or view in views}
    try:
        with quiet_offscreen():
            for view, panel in panels.items():
                # Laid out and painted like a shown window, but without one.
                panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
                if font is not None:
                    panel.setFont(font)
                if palette is not None:
                    panel.setPalette(palette)
                panel.resize(*PAGES[page])
                panel.show()
                panel.update_frame(frame)
                panel.set_selected(workspace.selected)
                if reference is not None:
                    panel.set_reference(reference)
                if PANELS[view].analysis:
                    panel.refresh_now()  # its study now, so the layout settles with the events below
            for _ in range(3):  # layout requests post further layout requests (axes sized to labels)
                app.processEvents()
            yield panels, frame
    finally:
        for panel in panels.values():
            panel.close()
            panel.deleteLater()
        app.processEvents()
        if theme_name == "dark":
            app.setStyle(QStyleFactory.create(style))
            app.setPalette(app_palette)
        configure_pyqtgraph(previous_theme)


def write_report(preset: Preset, out: str | Path, engine: Engine | None = None, scale: float = 2.0,
                 theme_name: str = "light", *, page: str = "handout", force: bool = False) -> list[Path]:
    """Render ``preset`` into the new or empty folder ``out`` (with ``force``, over an earlier
    report's files there) at the ``page`` size in the light or dark theme; returns the files written."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # never a window, even with a display
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(["accelscope-report"])  # kept alive while drawing
    from .files import export_all

    engine = engine or Engine()
    if preset.model is not None:
        engine = engine.with_models(preset.model)
    with document_panels(engine, preset.workspace, page=page, theme_name=theme_name) as (panels, frame):
        workspace = frame.workspace
        explanation = explain(engine, workspace.scenario, workspace.cost) if workspace.shown else None
        written = export_all(panels, frame, engine.catalog, out, preset, explanation, scale=scale, force=force)
    del app
    return written
