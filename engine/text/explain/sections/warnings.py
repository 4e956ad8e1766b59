"""The engine's warnings for the scenario, one sentence each."""

from __future__ import annotations

from ..context import ExplainContext
from ..words import sentence


def sentences(ctx: ExplainContext) -> list[str]:
    return [sentence(text) for text in ctx.result.warnings]
