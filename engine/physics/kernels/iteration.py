"""The cost of one serving iteration, for a continuous-batching simulator: the twins of
``reference/iteration.py``, reading a scenario's column of ``Engine.iteration_costs``
(``cost``, rows ``layout.COST_ROWS``).

An iteration is one forward step of a replica over the requests the scheduler picked: some
decode steps (one token each) and some prefill chunks. The simulator sums, over those
requests, what :func:`request_positions` returns and passes the sums with the token, prompt
token and sequence counts to :func:`iteration_cost`. Both use the static engine's physics, through the
helpers ``evaluate_many`` uses: the stage pass, the pipeline hand-over, the host time and the
power model.

A simulator that steps the same requests' decodes many times over can take a decode's
positions, their change per further step and how long that change holds from
:func:`decode_positions`, and add instead of summing again; and cost each such iteration with
:func:`decode_iteration_cost` over the terms :func:`decode_iteration_terms` works out once for
its number of requests, to the bit what :func:`iteration_cost` gives.

Each is compiled once, as a function of its own: a simulator calls them once per iteration or
stretch, where a call costs little beside the work, and inlining them into every caller (as
numba's ``inline="always"`` does, before typing) multiplied the simulator's compile time.

Units: seconds, J; positions and tokens are counts (floats).
"""

from __future__ import annotations

import math

from ..jit import jit
from ..layout import *  # the cost rows, generated from their names
from .helpers import (
    attended_positions,
    capped_floor_sum,
    causal_positions,
    chunked_causal_positions,
    execution_time,
    experts_touched_busiest_device,
    group_attended,
    group_index_keys,
    group_prompt_attended,
    group_stored,
    point_to_point,
    power,
    stage_pass,
    stored_positions,
    token_imbalance,
)


@jit
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
        if cost[C_GROUP_LAYERS] == 0.0:
            return 0.0, attended, attended
        group_flops, group_bytes = group_decode_positions(cost, context_before + 1.0)
        return 0.0, attended + group_flops, attended + group_bytes
    end = context_before + new_tokens
    positions = n_full * (causal_positions(end, 0) - causal_positions(context_before, 0))
    if n_window != 0.0:
        positions += n_window * (causal_positions(end, int(window)) - causal_positions(context_before, int(window)))
    if n_chunked != 0.0:
        chunk = int(attention_chunk)
        positions += n_chunked * (chunked_causal_positions(end, chunk) - chunked_causal_positions(context_before, chunk))
    kv_read = stored_positions(n_full, n_window, window, n_chunked, attention_chunk, context_before)
    if cost[C_GROUP_LAYERS] == 0.0:
        return positions, 0.0, kv_read
    group_flops, group_bytes = group_prefill_positions(cost, context_before, end)
    return positions + group_flops, 0.0, kv_read + group_bytes


@jit
def group_decode_positions(cost, position):
    """The attention groups' part of a decode step whose token sits at ``position``, in positions
    of the model's own layers (layout.COST_ROWS' group weights): (FLOP positions, KV-read
    positions). Each group's token reads group_attended entries (the top-k of the compressed ones
    on a sparse layer, plus the window) and its indexer scores every key, as the static decode
    (reference.closed_forms.AttentionGroups.flops, .read_bytes)."""
    flops = 0.0
    read = 0.0
    for slot in range(MAX_ATTENTION_GROUPS):
        row = C_G0_LAYERS + slot * N_COST_GROUP_FIELDS
        if cost[row] == 0.0:
            continue
        entries = group_attended(position, cost[row + 1], cost[row + 2], cost[row + 3])
        keys = group_index_keys(position, cost[row + 4])
        flops += entries * cost[row + 5] + keys * cost[row + 8]
        read += entries * cost[row + 7] + keys * cost[row + 10]
    return flops, read


@jit
def group_prefill_positions(cost, context_before, end):
    """The attention groups' part of a prefill chunk of the tokens after ``context_before`` up to
    ``end``, in positions of the model's own layers: (FLOP positions, KV-read positions). Its
    tokens attend what group_prompt_attended sums (the difference of the prompt's sums at end
    and before) and score every indexer key before them; the chunk re-reads the entries and
    keys the earlier tokens keep (as the static prefill's AttentionGroups.prompt_flops and
    .reread_bytes, chunk by chunk)."""
    flops = 0.0
    read = 0.0
    for slot in range(MAX_ATTENTION_GROUPS):
        row = C_G0_LAYERS + slot * N_COST_GROUP_FIELDS
        if cost[row] == 0.0:
            continue
        ratio = cost[row + 1]
        window = cost[row + 2]
        top_k = cost[row + 3]
        stride = cost[row + 4]
        attended = (group_prompt_attended(end, ratio, window, top_k)
                    - group_prompt_attended(context_before, ratio, window, top_k))
        scored = 0.0
        if stride > 0.0:
            scored = capped_floor_sum(end, stride, 0.0) - capped_floor_sum(context_before, stride, 0.0)
        flops += attended * cost[row + 6] + scored * cost[row + 9]
        read += (group_stored(context_before, ratio, window) * cost[row + 7]
                 + group_index_keys(context_before, stride) * cost[row + 10])
    return flops, read


# decode_positions' step count when no layer's window or attention chunk lies ahead.
UNBOUNDED_STEPS = 1 << 62


@jit
def decode_positions(cost, context_before):
    """A run of decode steps of one request from context c: (positions, increment, steps).

    The step at context c + k attends to (and reads the KV cache of) positions + k x increment
    positions, summed over the layers, for 0 <= k <= steps: what :func:`request_positions`
    gives for (c + k, 1, decode), exactly, since every term is a whole or half-whole number far
    below 2**53 (so sums of them, in any order, are the same float). The increment is one per
    full-attention layer, per window layer while the token's position c + 1 + k stays within
    the window, per chunked layer while it stays within the first attention chunk (a chunked
    layer's step past the first chunk changes the half-chunk mean once, then nothing).
    ``steps`` is UNBOUNDED_STEPS when no such bound lies ahead.
    Only for a model without attention groups (C_GROUP_LAYERS 0): theirs bend and step with
    the context, so the simulator runs no stretches over them (studies.serving.run.Server).
    """
    n_full = cost[C_N_FULL]
    n_window = cost[C_N_WINDOW]
    window = cost[C_WINDOW]
    n_chunked = cost[C_N_CHUNKED]
    attention_chunk = cost[C_ATTENTION_CHUNK]
    position = context_before + 1.0
    positions = attended_positions(n_full, n_window, window, n_chunked, attention_chunk, position)
    increment = n_full
    steps = UNBOUNDED_STEPS
    if n_window != 0.0 and position < window:
        increment += n_window
        steps = min(steps, int(window - position))
    if n_chunked != 0.0:
        if position < attention_chunk:
            increment += n_chunked
            steps = min(steps, int(attention_chunk - position))
        elif position == attention_chunk:
            increment += n_chunked * ((attention_chunk + 1.0) / 2.0 - attention_chunk)
            steps = 1
    return positions, increment, steps


@jit
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


# The terms of an iteration of n decode steps that do not depend on their positions
# (decode_iteration_terms), by index in a row of a float64 array.
DT_SHARE = 0  # 1 / passes
DT_PREFILL_ATTENTION = 1  # the prefill positions' attention FLOPs (none)
DT_DECODE_FLOPS_PER_POSITION = 2
DT_KV_BYTES_PER_POSITION = 3
DT_FLOPS = 4  # a pass's FLOPs but its attention's
DT_KV_WRITE = 5  # a pass's KV bytes written
DT_KV_NEAR0 = 6
DT_KV_OFFLOAD = 7
DT_KV_NEAR1 = 8
DT_TRAFFIC = 9
DT_WEIGHT_NEAR0 = 10  # weight bytes read from near tier 0 in a pass
DT_WEIGHT_FAR = 11
DT_WEIGHT_NEAR1 = 12
DT_N_NEAR = 13
DT_SECONDS_PER_BYTE0 = 14
DT_SECONDS_PER_BYTE1 = 15
DT_SECONDS_PER_FAR_BYTE = 16
DT_ENERGY0 = 17
DT_ENERGY1 = 18
DT_FAR_ENERGY = 19
DT_SECONDS_PER_FLOP = 20
DT_ENERGY_PER_FLOP = 21
DT_COMMUNICATION_ENERGY = 22
DT_KV_SECONDS_PER_BYTE = 23
DT_OVERLAP = 24
DT_COMMUNICATION_TIME = 25
DT_OVERHEAD_TIME = 26
DT_PIPELINE_PASSES = 27
DT_TRANSFERS = 28  # (pp - 1) hand-overs
DT_HOST = 29
DT_PASSES = 30
DT_IDLE = 31
DT_BUSY_FLOOR = 32
DT_TDP = 33
DT_DEVICES = 34
DT_RECURRENT_FLOPS = 35  # the recurrent layers' step FLOPs of the iteration's decoding tokens
DT_STATE_NEAR0 = 36  # recurrent state bytes read and written in near tier 0 in a pass
DT_STATE_NEAR1 = 37
DT_STATE_SECONDS = 38  # the state traffic's time in a pass (the attention's memory time)
DECODE_TERMS = 39


@jit
def decode_iteration_terms(cost, sequences, terms, row):
    """Fill ``terms[row]`` with what :func:`iteration_cost` works out for an iteration of
    ``sequences`` decode steps (``iteration_cost(cost, n, n, 0.0, D, D, 0)``) before it reads the
    steps' positions D: the pass count and shares, the FLOPs and bytes of the weights, the
    routed experts and the communication, the pipeline's hand-overs, the host time.

    The same operations on the same numbers as ``iteration_cost`` and ``helpers.stage_pass``
    (its decode branch), so that :func:`decode_iteration_cost` gives the same floats; the tests
    hold the two equal to the bit. Change them together."""
    pp = cost[C_PP]
    passes = min(sequences, pp)
    share = 1.0 / passes
    pass_tokens = sequences * share
    pass_sequences = sequences * share
    # helpers.stage_pass, up to its attention FLOPs and KV reads.
    top_k = cost[C_TOP_K]
    effective_ep = cost[C_EFFECTIVE_EP]
    z_ep = cost[C_Z_EP]
    expert_flops = 0.0
    expert_read = 0.0
    imbalance = 1.0
    if effective_ep > 1:
        imbalance = token_imbalance(pass_tokens * top_k, effective_ep, z_ep)
    if cost[C_IS_MOE]:
        touch = 1.0 - cost[C_EXPERT_MISS] ** pass_tokens
        touched = experts_touched_busiest_device(cost[C_EXPERTS_PER_DEVICE], touch, effective_ep, z_ep)
        expert_flops = pass_tokens * cost[C_EXPERT_FLOPS_PER_TOKEN] * imbalance
        expert_read = cost[C_EXPERT_READ_PER_TOUCHED] * touched
    terms[row, DT_FLOPS] = (pass_tokens * cost[C_DENSE_FLOPS_PER_TOKEN]
                            + pass_sequences * cost[C_HEAD_FLOPS_PER_SEQUENCE] + expert_flops)
    weight_bytes = cost[C_DENSE_READ] + expert_read
    terms[row, DT_KV_WRITE] = pass_tokens * cost[C_KV_WRITE_PER_TOKEN]
    terms[row, DT_TRAFFIC] = pass_tokens * cost[C_TRAFFIC_PER_TOKEN]
    terms[row, DT_WEIGHT_NEAR0] = weight_bytes * cost[C_WEIGHT_NEAR0]
    terms[row, DT_WEIGHT_FAR] = weight_bytes * cost[C_OFFLOAD]
    terms[row, DT_WEIGHT_NEAR1] = weight_bytes * cost[C_WEIGHT_NEAR1]
    terms[row, DT_KV_NEAR0] = cost[C_KV_NEAR0]
    terms[row, DT_KV_OFFLOAD] = cost[C_KV_OFFLOAD]
    terms[row, DT_KV_NEAR1] = cost[C_KV_NEAR1]
    terms[row, DT_N_NEAR] = cost[C_N_NEAR]
    terms[row, DT_SECONDS_PER_BYTE0] = cost[C_SECONDS_PER_BYTE0]
    terms[row, DT_SECONDS_PER_BYTE1] = cost[C_SECONDS_PER_BYTE1]
    terms[row, DT_SECONDS_PER_FAR_BYTE] = cost[C_SECONDS_PER_FAR_BYTE]
    terms[row, DT_ENERGY0] = cost[C_ENERGY0]
    terms[row, DT_ENERGY1] = cost[C_ENERGY1]
    terms[row, DT_FAR_ENERGY] = cost[C_FAR_ENERGY]
    # The all-reduce and all-to-all of the pass, as stage_pass works them out.
    all_reduce = pass_tokens * cost[C_ALL_REDUCE_PER_TOKEN] + cost[C_ALL_REDUCE_LATENCY]
    all_reduce_sent = pass_tokens * cost[C_ALL_REDUCE_SENT_PER_TOKEN]
    if cost[C_DOUBLING_STEPS] > 0.0:
        all_reduce = min(all_reduce, pass_tokens * cost[C_ALL_REDUCE_PER_TOKEN] + cost[C_HALVING_LATENCY])
        doubling = pass_tokens * cost[C_DOUBLING_PER_TOKEN] + cost[C_DOUBLING_STEPS] * cost[C_TP_LATENCY]
        if doubling < all_reduce:
            all_reduce = doubling
            all_reduce_sent = pass_tokens * cost[C_DOUBLING_SENT_PER_TOKEN]
    if cost[C_TP] > 1:
        all_reduce = all_reduce + cost[C_COLLECTIVE_OVERHEAD]
    dense_layer_time = 2.0 * all_reduce
    dense_layer_sent = 2.0 * all_reduce_sent
    if effective_ep > 1:
        dispatched = pass_tokens * cost[C_DISPATCHED_PER_TOKEN] * imbalance
        a2a = dispatched / cost[C_EP_BANDWIDTH] + cost[C_A2A_LATENCY] + cost[C_COLLECTIVE_OVERHEAD]
        moe_layer_time = all_reduce + 2.0 * a2a
        moe_layer_sent = all_reduce_sent + 2.0 * dispatched
    else:
        moe_layer_time = dense_layer_time
        moe_layer_sent = dense_layer_sent
    moe_fraction = cost[C_MOE_FRACTION]
    dense_fraction = 1.0 - moe_fraction
    layers_per_stage = cost[C_LAYERS_PER_STAGE]
    terms[row, DT_COMMUNICATION_TIME] = layers_per_stage * (dense_fraction * dense_layer_time
                                                            + moe_fraction * moe_layer_time)
    comm_sent = layers_per_stage * (dense_fraction * dense_layer_sent + moe_fraction * moe_layer_sent)
    terms[row, DT_COMMUNICATION_ENERGY] = comm_sent * cost[C_LINK_ENERGY]
    terms[row, DT_SECONDS_PER_FLOP] = cost[C_SECONDS_PER_FLOP]
    terms[row, DT_ENERGY_PER_FLOP] = cost[C_ENERGY_PER_FLOP]
    terms[row, DT_KV_SECONDS_PER_BYTE] = cost[C_KV_SECONDS_PER_BYTE]
    terms[row, DT_OVERLAP] = cost[C_OPERATOR_OVERLAP]
    # iteration_cost around the pass.
    terms[row, DT_SHARE] = share
    terms[row, DT_PREFILL_ATTENTION] = 0.0 * cost[C_PREFILL_ATTENTION_FLOPS_PER_POSITION]
    terms[row, DT_DECODE_FLOPS_PER_POSITION] = cost[C_DECODE_ATTENTION_FLOPS_PER_POSITION]
    terms[row, DT_KV_BYTES_PER_POSITION] = cost[C_KV_BYTES_PER_POSITION]
    terms[row, DT_OVERHEAD_TIME] = cost[C_OVERHEAD_TIME]
    terms[row, DT_PIPELINE_PASSES] = pp
    terms[row, DT_TRANSFERS] = (pp - 1.0) * point_to_point(pass_tokens, pp, cost[C_PP_SECONDS_PER_TOKEN],
                                                          cost[C_PP_LATENCY], cost[C_COLLECTIVE_OVERHEAD])
    terms[row, DT_HOST] = cost[C_STEP_OVERHEAD] + sequences * cost[C_SEQUENCE_OVERHEAD]
    terms[row, DT_PASSES] = passes
    terms[row, DT_IDLE] = cost[C_IDLE]
    terms[row, DT_BUSY_FLOOR] = cost[C_BUSY_FLOOR]
    terms[row, DT_TDP] = cost[C_TDP]
    terms[row, DT_DEVICES] = cost[C_DEVICES_PER_REPLICA]
    # Recurrent layers: (tokens - prefill_tokens) x FLOPs per decoding token with no prompt
    # token, and each sequence's state read and written (iteration_cost, stage_pass).
    terms[row, DT_RECURRENT_FLOPS] = 0.0 * cost[C_PREFILL_RECURRENT_FLOPS_PER_TOKEN] + sequences * cost[
        C_DECODE_RECURRENT_FLOPS_PER_TOKEN]
    state_bytes = sequences * cost[C_STATE_TRAFFIC_PER_SEQUENCE] * share
    terms[row, DT_STATE_NEAR0] = state_bytes * cost[C_STATE_NEAR0]
    terms[row, DT_STATE_NEAR1] = state_bytes * cost[C_STATE_NEAR1]
    terms[row, DT_STATE_SECONDS] = state_bytes * cost[C_STATE_SECONDS_PER_BYTE]


@jit
def decode_iteration_atoms(terms, row, positions):
    """The quantities of an iteration of decode steps that are linear in their positions D (from
    the terms :func:`decode_iteration_terms` put in ``terms[row]``): (compute time, memory time,
    attention compute time, attention memory time, dynamic energy) of one pass, in s and J.
    :func:`decode_iteration_cost` combines them; a decode stretch's closed form
    (:func:`stretch_pieces`) finds where the combination bends from them."""
    share = terms[row, DT_SHARE]
    attention_flops = ((terms[row, DT_PREFILL_ATTENTION] + positions * terms[row, DT_DECODE_FLOPS_PER_POSITION])
                       + terms[row, DT_RECURRENT_FLOPS]) * share
    kv_read = positions * terms[row, DT_KV_BYTES_PER_POSITION] * share
    # helpers.stage_pass, from its attention FLOPs and KV reads on.
    flops = terms[row, DT_FLOPS] + attention_flops
    kv_bytes = kv_read + terms[row, DT_KV_WRITE]
    near0 = terms[row, DT_WEIGHT_NEAR0] + kv_bytes * terms[row, DT_KV_NEAR0] + terms[row, DT_STATE_NEAR0]
    far = terms[row, DT_WEIGHT_FAR] + kv_bytes * terms[row, DT_KV_OFFLOAD]
    if terms[row, DT_N_NEAR] > 1:
        near1 = (terms[row, DT_WEIGHT_NEAR1] + kv_bytes * terms[row, DT_KV_NEAR1] + terms[row, DT_TRAFFIC]
                 + terms[row, DT_STATE_NEAR1])
        memory_time = (near0 * terms[row, DT_SECONDS_PER_BYTE0] + near1 * terms[row, DT_SECONDS_PER_BYTE1]
                       + far * terms[row, DT_SECONDS_PER_FAR_BYTE])
        memory_energy = near0 * terms[row, DT_ENERGY0] + near1 * terms[row, DT_ENERGY1] + far * terms[row, DT_FAR_ENERGY]
    else:
        near0 = near0 + terms[row, DT_TRAFFIC]
        memory_time = near0 * terms[row, DT_SECONDS_PER_BYTE0] + far * terms[row, DT_SECONDS_PER_FAR_BYTE]
        memory_energy = near0 * terms[row, DT_ENERGY0] + far * terms[row, DT_FAR_ENERGY]
    seconds_per_flop = terms[row, DT_SECONDS_PER_FLOP]
    compute_time = flops * seconds_per_flop
    dynamic = flops * terms[row, DT_ENERGY_PER_FLOP] + memory_energy + terms[row, DT_COMMUNICATION_ENERGY]
    attention_memory = kv_bytes * terms[row, DT_KV_SECONDS_PER_BYTE] + terms[row, DT_STATE_SECONDS]
    return compute_time, memory_time, attention_flops * seconds_per_flop, attention_memory, dynamic


@jit
def decode_iteration_duration(terms, row, compute_time, memory_time, attention_compute, attention_memory):
    """The iteration's duration (s) from its :func:`decode_iteration_atoms`."""
    execution = execution_time(compute_time, memory_time, attention_compute, attention_memory, terms[row, DT_OVERLAP])
    # iteration_cost around the pass.
    pass_time = execution + terms[row, DT_COMMUNICATION_TIME] + terms[row, DT_OVERHEAD_TIME]
    return terms[row, DT_PIPELINE_PASSES] * pass_time + terms[row, DT_TRANSFERS] + terms[row, DT_HOST]


@jit
def decode_iteration_cost(terms, row, positions):
    """(duration in s, energy in J) of an iteration of decode steps whose positions sum to
    ``positions``, from the terms :func:`decode_iteration_terms` put in ``terms[row]`` for its
    number of steps: the rest of :func:`iteration_cost`, the same floats to the bit."""
    compute_time, memory_time, attention_compute, attention_memory, dynamic = decode_iteration_atoms(
        terms, row, positions)
    return decode_cost_of_atoms(terms, row, compute_time, memory_time, attention_compute, attention_memory, dynamic)


@jit
def decode_cost_of_atoms(terms, row, compute_time, memory_time, attention_compute, attention_memory, dynamic):
    """(duration in s, energy in J) of an iteration from its :func:`decode_iteration_atoms`."""
    duration = decode_iteration_duration(terms, row, compute_time, memory_time, attention_compute, attention_memory)
    device_power, _ = power(terms[row, DT_IDLE], terms[row, DT_BUSY_FLOOR], terms[row, DT_TDP],
                            terms[row, DT_PASSES] * dynamic, duration)
    return duration, terms[row, DT_DEVICES] * device_power * duration


# -- decode stretches: many decode iterations of the same requests, in closed form ---------------
#
# A stretch is ``steps`` iterations of the same n decode steps, iteration j at positions
# D(j) = first + j x increment (decode_positions says for how long that holds). Every atom of
# decode_iteration_atoms is linear in D, hence in j; the duration bends only where one of the
# execution time's three maxima changes sides, and the energy only where, within those pieces,
# the power model's demand crosses TDP or the busy floor. On each piece both are linear in j, so
# a piece's sum is its step count times the mean of its first and last values, each evaluated
# by decode_iteration_cost itself once, when the stretch is planned. A stretch then costs
# O(pieces), not O(steps), and a sum over any of its first iterations is arithmetic.

# Bends: three of the duration; two of the energy in each of the four duration pieces.
MAX_STRETCH_BENDS = 11
# A stretch's table, float64[pieces, STRETCH_TABLE_SIZE]: each piece's first and last values.
ST_FIRST_DURATION = 0
ST_LAST_DURATION = 1
ST_FIRST_ENERGY = 2
ST_LAST_ENERGY = 3
ST_FIRST_DYNAMIC = 4  # a pass's dynamic energy (decode_iteration_atoms), where the power clamps bend
ST_LAST_DYNAMIC = 5
STRETCH_TABLE_SIZE = 6


@jit(inline=True)
def _bend_after(start_value, end_value, steps):
    """The first step of [1, steps) at which a quantity linear in the step, ``start_value`` at
    step 0 and ``end_value`` at step steps - 1, has changed sign; ``steps`` when it does not."""
    if steps < 2 or start_value == 0.0 or (start_value > 0.0) == (end_value > 0.0) or end_value == 0.0:
        return steps
    root = start_value / (start_value - end_value) * (steps - 1)  # in (0, steps - 1)
    return min(max(int(math.floor(root)) + 1, 1), steps - 1)


@jit
def stretch_pieces(terms, row, first_positions, increment, steps, starts, table):
    """Split a stretch of ``steps`` (>= 1) decode iterations into pieces on which duration and
    energy are linear in the step: writes the pieces' first steps in increasing order to
    ``starts[0 .. count)`` (``starts[0]`` = 0) and ``starts[count]`` = steps, and each piece's
    first and last duration and energy to ``table[piece]`` (``ST_*``); returns count.
    ``starts`` needs MAX_STRETCH_BENDS + 2 entries, ``table`` MAX_STRETCH_BENDS + 1 rows."""
    last = first_positions + (steps - 1) * increment
    c0, m0, a0, b0, _ = decode_iteration_atoms(terms, row, first_positions)
    c1, m1, a1, b1, _ = decode_iteration_atoms(terms, row, last)
    starts[0] = 0
    count = 1
    for bend in (_bend_after(c0 - m0, c1 - m1, steps), _bend_after((c0 - a0) - (m0 - b0), (c1 - a1) - (m1 - b1), steps),
                 _bend_after(a0 - b0, a1 - b1, steps)):
        count = _insert_start(starts, count, bend, steps)
    starts[count] = steps
    # Each duration piece's ends; within it, where the power demand crosses TDP and the busy floor.
    duration_pieces = count
    passes = terms[row, DT_PASSES]
    idle = terms[row, DT_IDLE]
    for piece in range(duration_pieces):
        begin = starts[piece]
        end = starts[piece + 1]
        _fill_ends(terms, row, first_positions, increment, begin, end, table, piece)
        if end - begin < 2:
            continue
        for limit in (terms[row, DT_TDP], terms[row, DT_BUSY_FLOOR]):
            bend = _bend_after(passes * table[piece, ST_FIRST_DYNAMIC] - (limit - idle) * table[piece, ST_FIRST_DURATION],
                               passes * table[piece, ST_LAST_DYNAMIC] - (limit - idle) * table[piece, ST_LAST_DURATION],
                               end - begin)
            if bend < end - begin:
                count = _insert_start(starts, count, begin + bend, steps)
    if count > duration_pieces:
        # The energy split some pieces: every piece's ends anew.
        starts[count] = steps
        for piece in range(count):
            _fill_ends(terms, row, first_positions, increment, starts[piece], starts[piece + 1], table, piece)
    starts[count] = steps
    return count


@jit
def _fill_ends(terms, row, first_positions, increment, begin, end, table, piece):
    """``table[piece]``: the duration, energy and dynamic energy of the piece's first and last
    iterations."""
    for column_shift, step in ((0, begin), (1, end - 1)):
        compute_time, memory_time, attention_compute, attention_memory, dynamic = decode_iteration_atoms(
            terms, row, first_positions + step * increment)
        duration, energy = decode_cost_of_atoms(terms, row, compute_time, memory_time, attention_compute,
                                                attention_memory, dynamic)
        table[piece, ST_FIRST_DURATION + column_shift] = duration
        table[piece, ST_FIRST_ENERGY + column_shift] = energy
        table[piece, ST_FIRST_DYNAMIC + column_shift] = dynamic


@jit(inline=True)
def _insert_start(starts, count, step, steps):
    """Insert ``step`` into the sorted ``starts[0 .. count)`` unless it is there or is ``steps``."""
    if step >= steps:
        return count
    position = count
    while position > 0 and starts[position - 1] > step:
        position -= 1
    if position > 0 and starts[position - 1] == step:
        return count
    for index in range(count, position, -1):
        starts[index] = starts[index - 1]
    starts[position] = step
    return count + 1


@jit
def stretch_sums(starts, table, count, iterations):
    """(duration in s, energy in J) of a stretch's first ``iterations`` iterations, from the
    table of its pieces (:func:`stretch_pieces`): on each piece, its iterations times the mean
    of its first and last; their sum iteration by iteration to rounding."""
    duration_sum = 0.0
    energy_sum = 0.0
    for piece in range(count):
        begin = starts[piece]
        if begin >= iterations:
            break
        length = starts[piece + 1] - begin
        taken = min(length, iterations - begin)
        first_duration = table[piece, ST_FIRST_DURATION]
        first_energy = table[piece, ST_FIRST_ENERGY]
        if taken == length:
            last_duration = table[piece, ST_LAST_DURATION]
            last_energy = table[piece, ST_LAST_ENERGY]
        else:  # part of the piece: its value at the last iteration taken, on the piece's line
            share = (taken - 1) / (length - 1)
            last_duration = first_duration + (table[piece, ST_LAST_DURATION] - first_duration) * share
            last_energy = first_energy + (table[piece, ST_LAST_ENERGY] - first_energy) * share
        duration_sum += taken * (first_duration + last_duration) / 2.0
        energy_sum += taken * (first_energy + last_energy) / 2.0
    return duration_sum, energy_sum
