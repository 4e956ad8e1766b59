"""What the app shows: one scenario, evaluated on many accelerators, one of them selected.

A Qt-free, immutable value. The app's controls mirror it, presets store it, and the headless
report computes from it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .scenario import Scenario

VIEWS: tuple[str, ...] = ("roofline", "memory", "latency", "sweep", "energy")


@dataclass(frozen=True)
class Workspace:
    scenario: Scenario  # its accelerator is the selected one
    shown: tuple[str, ...]  # accelerator ids, in display order
    view: str = "roofline"

    @property
    def selected(self) -> str:
        return self.scenario.accelerator

    def scenario_on(self, accelerator_id: str) -> Scenario:
        return self.scenario.with_changes(accelerator=accelerator_id)

    def with_scenario(self, **changes: object) -> Workspace:
        return replace(self, scenario=self.scenario.with_changes(**changes))

    def with_changes(self, **changes: object) -> Workspace:
        return replace(self, **changes)
