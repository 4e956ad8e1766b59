"""What the app shows: one scenario, evaluated on many accelerators, one of them selected.

A Qt-free, immutable value. The app's controls mirror it, presets store it, and the headless
report computes from it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .scenario import Scenario
from .serving import ServingSpec

# The views a workspace can show: five plots of the Frame, then analysis views with studies of
# their own. Presets name their view, and are read and checked without Qt (the CLI, the headless
# report), so the ids are kept here; the app's tab registry (gui/panels: PANELS) follows them in
# this order, and a test fails when one gains a view the other lacks.
PLOT_VIEWS: tuple[str, ...] = ("roofline", "memory", "latency", "sweep", "energy")
ANALYSIS_VIEWS: tuple[str, ...] = ("serving", "scaling", "parallelism", "regimes", "tiers")
VIEWS: tuple[str, ...] = PLOT_VIEWS + ANALYSIS_VIEWS

# Settings of the analysis tabs that are part of a scenario (saved in presets), with defaults:
#   far_tier       memory-tiers tab: "own" (the device's far tier) or an id of resources/far_tiers.toml
#   device_budget  TP/DP tab: devices in the node that TP x DP splits
#   routing_skew   scaling tab: Zipf-like exponent of expert popularity (0 = uniform routing)
VIEW_OPTION_DEFAULTS: dict[str, object] = {"far_tier": "own", "device_budget": 4, "routing_skew": 0.0}
DEVICE_BUDGETS: tuple[int, ...] = (2, 4, 8, 16)
MAX_ROUTING_SKEW = 4.0


@dataclass(frozen=True)
class Workspace:
    scenario: Scenario  # its accelerator is the selected one
    shown: tuple[str, ...]  # accelerator ids, in display order
    view: str = "roofline"
    options: tuple[tuple[str, object], ...] = ()  # view options that differ from the defaults, sorted
    serving: ServingSpec = ServingSpec()  # traffic, scheduler and objectives of the Serving tab

    @property
    def selected(self) -> str:
        return self.scenario.accelerator

    def scenario_on(self, accelerator_id: str) -> Scenario:
        return self.scenario.with_changes(accelerator=accelerator_id)

    def with_scenario(self, **changes: object) -> Workspace:
        return replace(self, scenario=self.scenario.with_changes(**changes))

    def with_changes(self, **changes: object) -> Workspace:
        return replace(self, **changes)

    def option(self, name: str) -> object:
        return dict(self.options).get(name, VIEW_OPTION_DEFAULTS[name])

    def with_options(self, **changes: object) -> Workspace:
        """Set view options; a value equal to its default is dropped, so equal settings compare equal."""
        unknown = set(changes) - set(VIEW_OPTION_DEFAULTS)
        if unknown:
            raise KeyError(f"unknown view option {min(unknown)!r}")
        merged = {**dict(self.options), **changes}
        kept = tuple(sorted((k, v) for k, v in merged.items() if v != VIEW_OPTION_DEFAULTS[k]))
        return replace(self, options=kept)
