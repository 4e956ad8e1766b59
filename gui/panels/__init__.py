"""The app's tabs, registered once.

:data:`PANELS` maps each view id to its panel class and tab label, in tab order. The main
window builds its tabs and View menu from it, the export and the headless report their files.

The view ids themselves are the engine's (``engine.core.workspace.VIEWS``): a preset names its
view, and presets are read and checked without Qt (the CLI, the headless report). The registry
follows that vocabulary, and ``tests/test_gui_registry.py`` fails when a tab is added to one
and not the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelscope.engine.catalog import Catalog
from accelscope.engine.core.workspace import ANALYSIS_VIEWS, VIEWS
from accelscope.engine.physics.engine import Engine

from .base import Panel
from .energy import EnergyPanel
from .latency import LatencyPanel
from .memory import MemoryPanel
from .parallelism import ParallelismPanel
from .regimes import RegimesPanel
from .roofline import RooflinePanel
from .scaling import ScalingPanel
from .serving import ServingPanel
from .sweep import SweepPanel
from .tiers import TiersPanel


@dataclass(frozen=True)
class PanelEntry:
    view: str
    panel: type[Panel]
    # The tab's text: short, so that every tab fits beside the docks (the panel's full title is
    # the tab's tool tip and the View menu's entry).
    label: str

    @property
    def analysis(self) -> bool:
        """An analysis tab runs a study of its own (an AnalysisPanel); a plot tab draws the Frame."""
        return self.view in ANALYSIS_VIEWS

    def make(self, catalog: Catalog, engine: Engine) -> Panel:
        return self.panel(catalog, engine) if self.analysis else self.panel(catalog)


_ENTRIES = {entry.view: entry for entry in (
    PanelEntry("roofline", RooflinePanel, "Roofline"),
    PanelEntry("memory", MemoryPanel, "Memory"),
    PanelEntry("latency", LatencyPanel, "Latency & throughput"),
    PanelEntry("sweep", SweepPanel, "Sweep"),
    PanelEntry("energy", EnergyPanel, "Energy"),
    PanelEntry("serving", ServingPanel, "Serving"),
    PanelEntry("scaling", ScalingPanel, "Scaling"),
    PanelEntry("parallelism", ParallelismPanel, "TP/DP · EP/TP"),
    PanelEntry("regimes", RegimesPanel, "Regimes"),
    PanelEntry("tiers", TiersPanel, "Memory tiers"),
)}

PANELS: dict[str, PanelEntry] = {view: _ENTRIES[view] for view in VIEWS}


def make_panels(catalog: Catalog, engine: Engine) -> dict[str, Panel]:
    """A new panel for every tab, in tab order (in the current plot theme)."""
    return {view: entry.make(catalog, engine) for view, entry in PANELS.items()}
