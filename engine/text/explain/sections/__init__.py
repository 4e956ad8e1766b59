"""The explanation's sections in the order they are shown, each ``sentences(ctx)``; a section
with nothing to say (no warnings) is left out. ``reads``, ``stage`` and ``communication`` hold
the phrases prefill and decode share."""

from __future__ import annotations

from collections.abc import Callable

from ..context import ExplainContext
from . import cost, decode, memory, prefill, scenario, throughput, warnings

SECTIONS: tuple[tuple[str, Callable[[ExplainContext], list[str]]], ...] = (
    ("Scenario", scenario.sentences),
    ("Memory", memory.sentences),
    ("Prefill", prefill.sentences),
    ("Decode", decode.sentences),
    ("Throughput and energy", throughput.sentences),
    ("Cost", cost.sentences),
    ("Warnings", warnings.sentences),
)
