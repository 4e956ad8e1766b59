"""The cost of one serving iteration, for a continuous-batching simulator: the twins of
``reference/iteration.py``, reading a scenario's column of ``Engine.iteration_costs``
(``cost``, rows ``layout.COST_ROWS``).

An iteration is one forward step of a replica over the requests the scheduler picked: some
decode steps (one token each) and some prefill chunks. The simulator sums, over those
requests, what :func:`request_positions` returns and passes the sums with the token, prompt
token and sequence counts to :func:`iteration_cost`. Both use the static engine's physics, through the
helpers ``evaluate_many`` uses: the stage pass, the pipeline hand-over, the host time and the
power model.

Both are inlined into a calling kernel (``jit(inline=True)``), so a simulator's loop pays no
reference counting for passing ``cost`` on each call.

Units: seconds, J; positions and tokens are counts (floats).
"""

from __future__ import annotations

import math

from ..jit import jit
from ..layout import *  # the cost rows, generated from their names
from .helpers import (
    attended_positions,
    causal_positions,
    chunked_causal_positions,
    point_to_point,
    power,
    stage_pass,
    stored_positions,
)


@jit(inline=True)
def request_positions(cost, context_before, new_tokens, is_decode):
    """One request's attention work in an iteration, summed over the model's layers:
    (prefill attention positions, decode attention positions, KV positions read).

    - A prefill chunk of ``new_tokens`` tokens after ``context_before`` cached ones: its tokens
      at positions c+1 .. c+n attend causally (capped at the window, or within the attention
      chunk, by layer kind), causal_positions(c + n) − causal_positions(c) per kind; and it
      re-reads the KV cache of the c earlier positions, as far as each layer keeps them (the
      re-read the static prefill counts per chunk).
    - A decode step at ``context_before`` = c: its one token, at position c + 1, attends to
      attended_positions(c + 1) positions and reads their KV cache; ``new_tokens`` is 1.
    """
    n_full = cost[C_N_FULL]
    n_window = cost[C_N_WINDOW]
    window = cost[C_WINDOW]
    n_chunked = cost[C_N_CHUNKED]
    attention_chunk = cost[C_ATTENTION_CHUNK]
    if is_decode:
        attended = attended_positions(n_full, n_window, window, n_chunked, attention_chunk, context_before + 1.0)
        return 0.0, attended, attended
    end = context_before + new_tokens
    positions = n_full * (causal_positions(end, 0) - causal_positions(context_before, 0))
    if n_window != 0.0:
        positions += n_window * (causal_positions(end, int(window)) - causal_positions(context_before, int(window)))
    if n_chunked != 0.0:
        chunk = int(attention_chunk)
        positions += n_chunked * (chunked_causal_positions(end, chunk) - chunked_causal_positions(context_before, chunk))
    kv_read = stored_positions(n_full, n_window, window, n_chunked, attention_chunk, context_before)
    return positions, 0.0, kv_read


@jit(inline=True)
def iteration_cost(cost, tokens, sequences, prefill_attention_positions, decode_attention_positions,
                   kv_read_positions, prefill_tokens):
    """(duration in s, energy in J of all the replica's tp x pp devices) of one iteration that
    carries ``tokens`` new tokens of ``sequences`` requests, ``prefill_tokens`` of them prompt
    tokens, with the sums of their :func:`request_positions`.

    Recurrent layers (DeltaNet, Mamba-2) add their chunked algorithm's FLOPs per prompt token
    and their recurrent step's per decoding token, and each scheduled request reads and writes
    its fixed-size state once.

    - Decode steps only (no prefill positions, one token per sequence): as the static decode
      step, m = min(sequences, pp) micro-batches; pp passes of tokens/m in a row, pp − 1
      hand-overs, and the host's step_overhead + sequences x sequence_overhead.
    - Any prefill chunk: as the static prefill, n = ⌈tokens / prefill_chunk_tokens⌉ passes of
      tokens/n; n + pp − 1 passes in a row, pp − 1 hand-overs, and the host's n x
      step_overhead + sequences x sequence_overhead.
    Energy: devices x min(TDP, max(busy floor, idle + dynamic energy / duration)) x duration.
    An iteration of no tokens costs nothing.
    """
    if tokens <= 0.0:
        return 0.0, 0.0
    attention_flops = (prefill_attention_positions * cost[C_PREFILL_ATTENTION_FLOPS_PER_POSITION]
                       + decode_attention_positions * cost[C_DECODE_ATTENTION_FLOPS_PER_POSITION]) + (
        prefill_tokens * cost[C_PREFILL_RECURRENT_FLOPS_PER_TOKEN]
        + (tokens - prefill_tokens) * cost[C_DECODE_RECURRENT_FLOPS_PER_TOKEN])
    kv_read = kv_read_positions * cost[C_KV_BYTES_PER_POSITION]
    state = sequences * cost[C_STATE_TRAFFIC_PER_SEQUENCE]
    pp = cost[C_PP]
    if prefill_attention_positions > 0.0 or tokens > sequences:
        passes = float(math.ceil(tokens / cost[C_PREFILL_CHUNK_TOKENS]))
        pipeline_passes = passes + pp - 1.0
        host = passes * cost[C_STEP_OVERHEAD] + sequences * cost[C_SEQUENCE_OVERHEAD]
    else:
        passes = min(sequences, pp)
        pipeline_passes = pp
        host = cost[C_STEP_OVERHEAD] + sequences * cost[C_SEQUENCE_OVERHEAD]
    share = 1.0 / passes
    compute = (cost[C_DENSE_FLOPS_PER_TOKEN], cost[C_HEAD_FLOPS_PER_SEQUENCE], cost[C_SECONDS_PER_FLOP],
               cost[C_ENERGY_PER_FLOP], cost[C_OPERATOR_OVERLAP])
    experts = (cost[C_IS_MOE], cost[C_EXPERT_MISS], cost[C_EXPERTS_PER_DEVICE], cost[C_EXPERT_FLOPS_PER_TOKEN],
               cost[C_EXPERT_READ_PER_TOUCHED], cost[C_TOP_K], cost[C_EFFECTIVE_EP], cost[C_Z_EP])
    memory = (cost[C_DENSE_READ], cost[C_KV_WRITE_PER_TOKEN], cost[C_TRAFFIC_PER_TOKEN], cost[C_N_NEAR],
              cost[C_WEIGHT_NEAR0], cost[C_WEIGHT_NEAR1], cost[C_KV_NEAR0], cost[C_KV_NEAR1], cost[C_OFFLOAD],
              cost[C_KV_OFFLOAD], cost[C_SECONDS_PER_BYTE0], cost[C_SECONDS_PER_BYTE1], cost[C_SECONDS_PER_FAR_BYTE],
              cost[C_KV_SECONDS_PER_BYTE], cost[C_ENERGY0], cost[C_ENERGY1], cost[C_FAR_ENERGY], cost[C_STATE_NEAR0],
              cost[C_STATE_NEAR1], cost[C_STATE_SECONDS_PER_BYTE])
    communication = (cost[C_TP], cost[C_ALL_REDUCE_PER_TOKEN], cost[C_ALL_REDUCE_SENT_PER_TOKEN],
                     cost[C_ALL_REDUCE_LATENCY], cost[C_HALVING_LATENCY], cost[C_DOUBLING_STEPS],
                     cost[C_DOUBLING_PER_TOKEN], cost[C_DOUBLING_SENT_PER_TOKEN], cost[C_TP_LATENCY],
                     cost[C_COLLECTIVE_OVERHEAD], cost[C_DISPATCHED_PER_TOKEN], cost[C_EP_BANDWIDTH],
                     cost[C_A2A_LATENCY], cost[C_LAYERS_PER_STAGE], cost[C_MOE_FRACTION], cost[C_LINK_ENERGY])
    pass_tokens = tokens * share
    (_, _, _, _, _, _, communication_time, dynamic, _, _, execution) = stage_pass(
        pass_tokens, sequences * share, attention_flops * share, kv_read * share, state * share,
        compute, experts, memory, communication,
    )
    pass_time = execution + communication_time + cost[C_OVERHEAD_TIME]
    transfer = point_to_point(pass_tokens, pp, cost[C_PP_SECONDS_PER_TOKEN], cost[C_PP_LATENCY],
                              cost[C_COLLECTIVE_OVERHEAD])
    duration = pipeline_passes * pass_time + (pp - 1.0) * transfer + host
    device_power, _ = power(cost[C_IDLE], cost[C_BUSY_FLOOR], cost[C_TDP], passes * dynamic, duration)
    return duration, cost[C_DEVICES_PER_REPLICA] * device_power * duration
