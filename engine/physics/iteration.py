"""The physics a compiled serving simulator calls once per iteration: the public face of
``kernels/iteration.py``, for studies that run their own kernels (the kernels themselves stay
the physics layer's own).

- ``request_positions(cost, context_before, new_tokens, is_decode)``: one request's attention
  work in an iteration, summed over the model's layers;
- ``iteration_cost(cost, tokens, sequences, prefill_positions, decode_positions,
  kv_read_positions, prefill_tokens)``: the iteration's duration (s) and energy (J) for one
  replica (``prefill_tokens`` of its ``tokens`` are prompt tokens);
- ``decode_positions``, ``decode_iteration_terms`` and ``decode_iteration_cost``: the same for a
  batch that only decodes, one token per request per step, from terms worked out once for the
  batch (``DECODE_TERMS`` of them) so that a run of such steps costs O(1) each;
  ``UNBOUNDED_STEPS`` marks a run with no end of its own;
- ``stretch_pieces`` and ``stretch_sums``: a stretch of such steps (the same requests, one
  token more of context each) in closed form: its linear pieces (at most ``MAX_STRETCH_BENDS``
  + 1) found and tabled once (``STRETCH_TABLE_SIZE`` columns, ``ST_*``), then any of its sums
  from the table.

``GROUP_LAYERS_ROW`` is the row of ``cost`` that counts the model's layers in attention groups
(sparse, compressed, global): nonzero, its decode steps cost no line in the context and
``decode_positions`` and the stretches do not apply (a simulator runs its iterations one by one).

``cost`` is a column of ``Engine.iteration_costs`` (``ITERATION_COST_ROWS`` rows); the reference twin of the per-iteration
functions is ``Engine.iteration_cost_model``; a stretch's twin is the sum of its iterations.
"""

from __future__ import annotations

from .kernels.iteration import (
    DECODE_TERMS,
    MAX_STRETCH_BENDS,
    ST_FIRST_DURATION,
    ST_LAST_DURATION,
    STRETCH_TABLE_SIZE,
    UNBOUNDED_STEPS,
    decode_iteration_cost,
    decode_iteration_terms,
    decode_positions,
    iteration_cost,
    request_positions,
    stretch_pieces,
    stretch_sums,
)
from .layout import C_GROUP_LAYERS as GROUP_LAYERS_ROW
from .layout import N_COST_ROWS as ITERATION_COST_ROWS

__all__ = ["DECODE_TERMS", "GROUP_LAYERS_ROW", "ITERATION_COST_ROWS", "MAX_STRETCH_BENDS", "STRETCH_TABLE_SIZE", "ST_FIRST_DURATION", "ST_LAST_DURATION",
           "UNBOUNDED_STEPS", "decode_iteration_cost", "decode_iteration_terms",
           "decode_positions", "iteration_cost", "request_positions", "stretch_pieces",
           "stretch_sums"]
