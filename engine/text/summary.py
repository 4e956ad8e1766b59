"""A scenario in one line: what the status bar shows, and what an exported figure carries beneath
its plots so that a handout says what it was computed for."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.accelerator import Accelerator
from ..core.fields import summary_text
from ..core.scenario import Scenario


def accelerator_short_name(accelerator: Accelerator) -> str:
    """The catalog name without the vendor and parentheses, as legends name an accelerator."""
    name = accelerator.name
    if name.startswith(accelerator.vendor + " "):
        name = name[len(accelerator.vendor) + 1 :]
    name = name.split(" (")[0].strip()
    return name or accelerator.id


def scenario_summary(scenario: Scenario, model_name: str) -> str:
    """Model, batch, tokens, precisions and layout: the scenario shared by every shown accelerator."""
    return f"{model_name} · {summary_text(scenario)}"


NAMED_ACCELERATORS = 8  # more than this are counted, not named: the figure's legend or rows name them


def figure_scenario_line(scenario: Scenario, model_name: str, accelerators: Iterable[Accelerator]) -> str:
    """The summary and the accelerators a figure shows, by the names its legends use."""
    names = [accelerator_short_name(a) for a in accelerators]
    if len(names) > NAMED_ACCELERATORS:
        where = f" · on {len(names)} accelerators"
    else:
        where = f" · on {', '.join(names)}" if names else ""
    return scenario_summary(scenario, model_name) + where
