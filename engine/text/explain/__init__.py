"""Why a scenario performs as it does, in plain sentences with the engine's numbers plugged in.

For one scenario on one accelerator this says what bounds prefill and decode and why, e.g.
"each decode step reads 15.0 GB of weights ...; at 3.35 TB/s × 0.85 that takes 5.33 ms, while
its 15.6 GFLOP would take 22.5 µs at 989 TFLOP/s × 0.7 — memory-bound". Every time, size, rate
and count quoted is one the engine computed: its result (``Engine.predict``), the trace of the
reference's steps (``ReferenceModel.evaluate_traced``: the chunks, micro-batches, tier shares,
networks and algorithms behind the result), the crossover study (``studies.crossover``), or a
catalog figure or class constant it used. The sections only choose words and format numbers;
a formula is shown with its factors only where it reproduces the engine's time exactly.

- ``context.py``: what the sections read, built once;
- ``sections/``: one module per heading (scenario, memory, prefill, decode with its experts
  and crossover, throughput and energy, cost, warnings), each ``sentences(ctx) -> list[str]``, and
  the phrases prefill and decode share (how a pass's reads bound it, how its times add up,
  its communication).

Presentation only: no Qt here (the explain panel shows an :class:`Explanation`).
"""

from __future__ import annotations

from ...core.cost import CostSettings, Pricing
from ...core.scenario import Scenario
from ...physics.engine import Engine
from ...studies.cost import result_cost
from ...studies.crossover import (
    CROSSOVER_MAX_BATCH,
    crossovers,
    decode_crossover_batch,
    linear_layers_crossover_batch,
)
from ..context import Context
from .context import ExplainContext
from .explanation import Explanation
from .sections import SECTIONS

__all__ = ["CROSSOVER_MAX_BATCH", "Explanation", "decode_crossover_batch", "explain", "linear_layers_crossover_batch"]


def explain(engine: Engine, scenario: Scenario, cost: CostSettings | None = None) -> Explanation:
    """Sentences saying what bounds prefill and decode of ``scenario`` and why, and what it
    costs with the catalog's price book and the user's ``cost`` settings laid over it."""
    scenario = engine.resolve(scenario)
    result = engine.predict(scenario)
    model = engine.model(scenario.model)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    pricing = Pricing(engine.catalog.prices, cost if cost is not None else CostSettings())
    ctx = ExplainContext.of(Context.of(result, model, accelerator, engine.constants),
                            crossovers(engine, scenario, result), result_cost(result, pricing, engine.catalog))
    sections = tuple((heading, tuple(lines)) for heading, sentences in SECTIONS if (lines := sentences(ctx)))
    return Explanation(f"{model.name} on {result.devices} × {accelerator.name}", sections)
