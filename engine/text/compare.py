"""Compare two scenarios: what changed between a pinned scenario A and the current one, B.

Used by the app's compare mode: the plots draw A as ghosts behind B, and the explain panel
opens with the deltas computed here — which inputs differ, and how each output moved, on the
selected accelerator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields

from ..core.scenario import Scenario
from ..core.units import format_bytes, format_power, format_time, significant
from ..core.workspace import Workspace
from ..physics.results import Result
from .explain import Explanation

# (label, how to read it off a Result, how to format it, whether higher is better)
OUTPUTS: tuple[tuple[str, object, object, bool], ...] = (
    ("time to first token", lambda r: r.ttft_s, format_time, False),
    ("inter-token latency", lambda r: r.itl_s, format_time, False),
    ("output tokens/s (system)", lambda r: r.throughput_output_tok_s, lambda v: f"{significant(v)} tokens/s", True),
    ("tokens per joule", lambda r: r.tokens_per_joule, lambda v: f"{significant(v)} tokens/J", True),
    ("power (all devices)", lambda r: r.power_W, format_power, False),
    ("largest batch that fits", lambda r: float(r.memory.max_batch), lambda v: largest_batch_text(v), True),
    ("memory per device", lambda r: r.memory.total_bytes, format_bytes, False),
)


# Beyond this factor either way (+1000 %, or −91 %) B is not A changed a little but another kind
# of scenario: a percentage and a "better" would be a verdict on an accident of the pairing.
FAR_FACTOR = 11.0


@dataclass(frozen=True)
class Delta:
    label: str
    a_text: str
    b_text: str
    ratio: float | None  # B / A; None where A is zero or either is not finite
    better: bool | None  # whether B is better than A on this output; None when equal, unknown or not comparable
    comparable: bool = True  # False: A and B are different models, or ``ratio`` is beyond FAR_FACTOR

    def sentence(self) -> str:
        if self.a_text == self.b_text:
            return f"{self.label}: {self.b_text}, unchanged."
        if self.ratio is None or not self.comparable:
            return f"{self.label}: A {self.a_text}, B {self.b_text}."
        change = self.ratio - 1.0
        if abs(change) < 5e-4:
            return f"{self.label}: {self.b_text}, unchanged."
        verdict = "" if self.better is None else (" (better)" if self.better else " (worse)")
        return f"{self.label}: {self.a_text} → {self.b_text}, {change:+.1%}{verdict}."


def largest_batch_text(max_batch: float) -> str:
    return f"{max_batch:,.0f}" if max_batch > 0 else "none, it does not fit at any batch"


# The scenario fields that hold a catalog id, named for a reader by ``name_of(field, id)``.
NAMED_FIELDS = ("model", "accelerator")


def _as_is(_field: str, value: str) -> str:
    return value


def input_changes(a: Scenario, b: Scenario, name_of: Callable[[str, str], str] = _as_is) -> list[str]:
    """The scenario fields that differ, as "batch 1 → 64"; a model or an accelerator by
    ``name_of(field, id)`` (its catalog name), not by its id."""
    changes = []
    for field in fields(Scenario):
        before, after = getattr(a, field.name), getattr(b, field.name)
        if before != after:
            if field.name in NAMED_FIELDS:
                before, after = name_of(field.name, before), name_of(field.name, after)
            changes.append(f"{field.name.replace('_', ' ')} {_value(before)} → {_value(after)}")
    return changes


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.0%}" if 0.0 <= value <= 1.0 else f"{value:g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def deltas(a: Result, b: Result) -> list[Delta]:
    """B's outputs against A's; no verdict where the two are different models or far apart."""
    same_model = a.scenario.model == b.scenario.model
    out = []
    for label, read, show, higher_is_better in OUTPUTS:
        before, after = float(read(a)), float(read(b))
        ratio = after / before if before > 0 and math.isfinite(before) and math.isfinite(after) else None
        comparable = same_model and (ratio is None or 1.0 / FAR_FACTOR <= ratio <= FAR_FACTOR)
        better = None
        if comparable and ratio is not None and abs(ratio - 1.0) >= 5e-4:
            better = (ratio > 1.0) == higher_is_better
        out.append(Delta(label, show(before), show(after), ratio, better, comparable))
    return out


def comparison(a_workspace: Workspace, a: Result | None, b: Result,
               name_of: Callable[[str, str], str] = _as_is) -> Explanation:
    """A's and B's outputs on one accelerator, as an explanation section placed before B's own;
    models and accelerators named by ``name_of(field, id)``."""
    accelerator = b.scenario.accelerator
    changed = input_changes(a_workspace.scenario_on(accelerator), b.scenario, name_of)
    lines = [("What changed from A: " + "; ".join(changed) + ".") if changed else
             "B has the same inputs as A on this accelerator."]
    if a is None:
        lines.append(f"A did not show {name_of('accelerator', accelerator)}, so there is nothing to compare on it; "
                     "select another.")
    else:
        if a.scenario.model != b.scenario.model:
            lines.append("A and B are different models: their outputs are given side by side, not as changes.")
        if a.fits != b.fits:
            lines.append("A " + ("fits" if a.fits else "does not fit") + "; B " + ("fits." if b.fits else "does not fit."))
        lines.extend(delta.sentence() for delta in deltas(a, b))
    return Explanation(title="Compared with A", sections=(("B against A (pinned)", tuple(lines)),))
