"""A transparent stand-in for the engine's iteration cost, for tests that work a run's times
out by hand on the reference simulator (the kernel always costs iterations with the engine's
own physics, which the twin tests hold equal to the reference's).

Model: a chunk of ``n`` new tokens after ``c`` cached ones attends to positions ``c+1 .. c+n``
(sum of those positions) and reads ``c`` cached positions; a decode step attends to and reads
``c + 1`` positions. The iteration lasts a fixed host time, a host time per sequence, and the
slower of compute (dense FLOPs per token plus attention FLOPs per position) and memory (weights
once plus KV reads). Power rises linearly from a static floor to the peak with the busy share.
"""

from __future__ import annotations

import numpy as np

# Coefficient indices of the ``cost`` array.
HOST_S = 0  # fixed host time per iteration (scheduling, launches), s
PER_SEQUENCE_S = 1  # host time per scheduled sequence, s
FLOPS_PER_TOKEN = 2  # dense FLOPs per new token (about 2 x parameters), FLOP
ATTENTION_FLOPS_PER_POSITION = 3  # attention FLOPs per (query token, attended position) pair, FLOP
FLOP_RATE = 4  # achievable compute rate, FLOP/s
WEIGHT_BYTES = 5  # bytes of weights read once per iteration, B
KV_BYTES_PER_POSITION = 6  # KV cache bytes read per cached position, B
BYTE_RATE = 7  # achievable memory bandwidth, B/s
STATIC_POWER_W = 8  # power while an iteration runs with its bound unit idle, W
PEAK_POWER_W = 9  # power with the bound unit fully busy, W
COST_SIZE = 10


def make_cost(
    host_s=2.0e-3,
    per_sequence_s=5.0e-6,
    flops_per_token=1.6e10,
    attention_flops_per_position=5.2e5,
    flop_rate=4.0e14,
    weight_bytes=1.6e10,
    kv_bytes_per_position=1.31072e5,
    byte_rate=2.6e12,
    static_power_w=300.0,
    peak_power_w=700.0,
):
    """Coefficient array of the stub. Defaults resemble an 8-billion-parameter model in 16-bit
    weights on one current datacenter GPU."""
    cost = np.zeros(COST_SIZE)
    cost[HOST_S] = host_s
    cost[PER_SEQUENCE_S] = per_sequence_s
    cost[FLOPS_PER_TOKEN] = flops_per_token
    cost[ATTENTION_FLOPS_PER_POSITION] = attention_flops_per_position
    cost[FLOP_RATE] = flop_rate
    cost[WEIGHT_BYTES] = weight_bytes
    cost[KV_BYTES_PER_POSITION] = kv_bytes_per_position
    cost[BYTE_RATE] = byte_rate
    cost[STATIC_POWER_W] = static_power_w
    cost[PEAK_POWER_W] = peak_power_w
    return cost


def request_positions_reference(cost, context_before, new_tokens, is_decode):
    """Attention work of one request: (prefill positions, decode positions, KV-read positions).

    ``context_before`` tokens are cached, ``new_tokens`` are computed now. Positions are counts
    of (query token, attended position) pairs for attention and cached positions for KV reads.
    """
    if is_decode:
        return 0.0, float(context_before + 1), float(context_before + 1)
    # Sum of the positions c+1 .. c+n; an exact integer, converted once.
    prefill = new_tokens * context_before + new_tokens * (new_tokens + 1) // 2
    return float(prefill), 0.0, float(context_before)


def decode_positions_reference(cost, context_before):
    """A run of decode steps from context c: c + 1 positions, one more per step, for ever."""
    return float(context_before + 1), 1.0, 1 << 62


def iteration_cost_reference(
    cost, tokens, sequences, prefill_attention_positions, decode_attention_positions, kv_read_positions,
    prefill_tokens,
):
    """Duration (s) and energy (J) of one iteration from the sums over its scheduled requests
    (the stub's model has no recurrent layers, so the prompt tokens cost as any others)."""
    attention_flops = cost[ATTENTION_FLOPS_PER_POSITION] * (prefill_attention_positions + decode_attention_positions)
    compute_s = (tokens * cost[FLOPS_PER_TOKEN] + attention_flops) / cost[FLOP_RATE]
    memory_s = (cost[WEIGHT_BYTES] + cost[KV_BYTES_PER_POSITION] * kv_read_positions) / cost[BYTE_RATE]
    bound_s = max(compute_s, memory_s)
    duration_s = cost[HOST_S] + cost[PER_SEQUENCE_S] * sequences + bound_s
    busy_share = bound_s / duration_s if duration_s > 0.0 else 0.0
    power_w = cost[STATIC_POWER_W] + (cost[PEAK_POWER_W] - cost[STATIC_POWER_W]) * busy_share
    return duration_s, power_w * duration_s

