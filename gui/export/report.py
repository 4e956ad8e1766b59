"""The headless report: every plot of a preset as PNG and SVG, every table as CSV, without a
window (Qt's offscreen platform), for handouts and CI."""

from __future__ import annotations

import os
from pathlib import Path

from accelscope.engine.catalog.presets import Preset
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.text.explain import explain

REPORT_SIZE = (1400, 900)  # pixels of each panel before scaling


def write_report(preset: Preset, out: str | Path, engine: Engine | None = None, scale: float = 2.0,
                 theme_name: str = "light", *, force: bool = False) -> list[Path]:
    """Render ``preset`` into the new or empty folder ``out`` (with ``force``, over an earlier
    report's files there) in the light or dark theme; returns the files written."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # never a window, even with a display
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QStyleFactory

    app = QApplication.instance() or QApplication(["accelscope-report"])
    from ..look import theme
    from ..look.display import THEMES, dark_palette
    from ..look.style import configure_pyqtgraph
    from ..panels import PANELS, make_panels
    from .files import export_all
    from .headless import quiet_offscreen

    if theme_name not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {theme_name!r}")
    configure_pyqtgraph(theme.for_display(theme_name, presentation=False))
    palette, style = app.palette(), app.style().name()
    if theme_name == "dark":  # the panels' own backgrounds and texts, as the window shows them
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(dark_palette())
    engine = engine or Engine()
    if preset.model is not None:
        engine = engine.with_models(preset.model)
    workspace = preset.workspace
    workspace = workspace.with_changes(scenario=engine.resolve(workspace.scenario))
    engine.warm_up()
    frame = compute_frame(engine, workspace)
    catalog = engine.catalog
    panels = make_panels(catalog, engine)
    with quiet_offscreen():
        try:
            for view, panel in panels.items():
                # Laid out and painted like a shown window, but without one.
                panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
                panel.resize(*REPORT_SIZE)
                panel.show()
                panel.update_frame(frame)
                panel.set_selected(workspace.selected)
                if PANELS[view].analysis:
                    panel.refresh_now()  # its study now, so the layout settles with the events below
            for _ in range(3):  # layout requests post further layout requests (axes sized to labels)
                app.processEvents()
            explanation = explain(engine, workspace.scenario, workspace.cost) if workspace.shown else None
            return export_all(panels, frame, catalog, out, preset, explanation, scale=scale, force=force)
        finally:
            for panel in panels.values():
                panel.close()
                panel.deleteLater()
            app.processEvents()
            if theme_name == "dark":
                app.setStyle(QStyleFactory.create(style))
                app.setPalette(palette)
            configure_pyqtgraph()
